"""Signing and verification of a ~1 GB bundle against the fastest SHA-256 of the same bytes, in one run.

The floor is the faster of `hashlib.sha256` (OpenSSL's, with SHA-NI where the CPU has it) and `openssl dgst
-sha256` on the same files; coreutils `sha256sum` (no SHA-NI, about 5x slower here) is kept as a second line
for comparison only.

    .venv/bin/python -m bench.bench_signing [--size-mb 1024] [--repeat 3] [--append]

Source: an ONNX model whose weights are a ~1 GB external-data file. Measured (page cache warm for all, best of
--repeat): `sha256sum` of the source files; `sign_directory` (hash every file + Ed25519 over the manifest);
`build_bundle` (hash + write the tar + sign: also writes 1 GB); `sha256sum` of the bundle tar;
`verify_bundle` (read the tar, hash every member, check the signature). Ratio = studio throughput / sha256sum's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _hashlib(paths: list[str]) -> None:
    import hashlib

    for p in paths:
        h = hashlib.sha256()
        with open(p, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)


def _floor(paths: list[str], repeat: int) -> tuple[float, str]:
    """(seconds, which) of the fastest plain SHA-256 here: hashlib in this process, or openssl's CLI."""
    import shutil as sh

    cands = {"`hashlib.sha256`": lambda: _hashlib(paths)}
    if sh.which("openssl"):
        cands["`openssl dgst -sha256`"] = lambda: subprocess.run(["openssl", "dgst", "-sha256", *paths], check=True,
                                                                 capture_output=True)
    times = {name: _best(fn, repeat) for name, fn in cands.items()}
    best = min(times, key=times.get)  # type: ignore[arg-type]
    return times[best], best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=None, help="scratch folder (needs 2x size free)")
    ap.add_argument("--append", action="store_true")
    args = ap.parse_args()

    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from studio.edge.trust import load_trusted_keys
    from studio.edge.verify import verify_bundle
    from studio.package.bundle import build_bundle, sign_directory
    from studio.package.keys import KeyStore

    tmp = Path(tempfile.mkdtemp(prefix="bench-sign-", dir=args.dir))
    try:
        src = tmp / "export"
        src.mkdir()
        n = args.size_mb * (1 << 20) // 4
        w = numpy_helper.from_array(np.random.default_rng(0).random(n, dtype=np.float32), "w")
        g = helper.make_graph([helper.make_node("ReduceSum", ["w"], ["out"], keepdims=0)], "big", [],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [])], [w])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        onnx.save(m, str(src / "model.onnx"), save_as_external_data=True, location="model.onnx.data",
                  size_threshold=0)
        del w, m
        files = sorted(str(p) for p in src.iterdir())
        total = sum(os.path.getsize(f) for f in files)
        ks = KeyStore(tmp / "keys")
        ks.generate("bench", "pw")
        sk = ks.load_signing_key("bench", "pw")
        trusted = load_trusted_keys(ks.public_path("bench"))
        coreutils = lambda paths: subprocess.run(["sha256sum", *paths], check=True, capture_output=True)  # noqa: E731
        coreutils(files)  # warm the page cache
        t_sha_src, floor_src = _floor(files, args.repeat)
        t_coreutils_src = _best(lambda: coreutils(files), args.repeat)
        t_sign = _best(lambda: sign_directory(src, sk, name="big", version="1"), args.repeat)
        for f in ("manifest.json", "manifest.sig"):
            (src / f).unlink()
        out = tmp / "big.tar"
        t_build = _best(lambda: build_bundle(src, "generic-x86_64", sk, out, version="1"), args.repeat)
        t_sha_tar, floor_tar = _floor([str(out)], args.repeat)
        plain = tmp / "plain.tar"  # the package floor: GNU tar writing the same files, then hashing them
        t_tar = _best(lambda: subprocess.run(["tar", "-cf", str(plain), "-C", str(src), "."], check=True), args.repeat)
        plain.unlink()
        t_verify = _best(lambda: verify_bundle(out, trusted), args.repeat)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    mb = total / 1e6

    def row(what: str, t: float, ref: float) -> str:
        return f"| {what} | {t:.2f} | {mb / t:.0f} | {ref / t:.2f}x |"

    text = "\n".join([
        f"## Bundle signing and verification vs the fastest SHA-256 ({time.strftime('%Y-%m-%d')})", "",
        f"Command: `.venv/bin/python -m bench.bench_signing --size-mb {args.size_mb} --repeat {args.repeat}`", "",
        f"{mb:.0f} MB of model files (ONNX + external data), page cache warm, best of {args.repeat}. "
        f"Floor = the faster of `hashlib.sha256` and `openssl dgst -sha256` on the same bytes ({floor_src} on the "
        f"files, {floor_tar} on the tar). Ratio = studio throughput / the floor's (target >= 0.8x).", "",
        "| operation | seconds | MB/s | vs floor |", "|---|---|---|---|",
        row(f"floor: {floor_src} of the model files", t_sha_src, t_sha_src),
        row("coreutils `sha256sum` of the model files (no SHA-NI; for comparison)", t_coreutils_src, t_sha_src),
        row("sign (`sign_directory`: SHA-256 of every file + Ed25519)", t_sign, t_sha_src),
        row("floor for package: GNU `tar -cf` of the files + the hash floor", t_tar + t_sha_src, t_tar + t_sha_src),
        row("package (`build_bundle`: hash + write tar + sign, incl. inspector)", t_build, t_tar + t_sha_src),
        row(f"floor: {floor_tar} of the bundle tar", t_sha_tar, t_sha_tar),
        row("verify (`verify_bundle`: read tar, hash members, check signature)", t_verify, t_sha_tar)])
    print(text)
    if args.append:
        with open(ROOT / "BENCHMARKS.md", "a", encoding="utf-8") as f:
            f.write("\n" + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
