"""`studio triton build-repo|check|serve-local|status|models|load|unload|reload|upload-version|config|stats|metrics|infer`.

Also the seed's alias `multimodal-serve --model X.onnx --device cpu|cuda:N [--enable-trt] --max-batch-size 8`
(serve_alias_main; the GPU side lives in studio.triton.gpu). Heavy imports (onnx, tritonclient) happen inside
the handlers only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from studio.core.catalogue import _, tr


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.replace(",", " ").split()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def _server_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", required=True, help="http://host:8000, https://..., grpc://host:8001 or grpcs://...")
    p.add_argument("--protocol", choices=["http", "grpc"], help="override the protocol the URL implies")
    p.add_argument("--ssl", action="store_true", default=None, help="use TLS (implied by https:// and grpcs://)")
    p.add_argument("--header", action="append", default=[], metavar="KEY=VALUE", help="extra request header")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds before a call gives up (default 5)")
    p.add_argument("--metrics-url", help="Prometheus endpoint (default: host:8002/metrics)")
    p.add_argument("--json", action="store_true", help="print JSON")


def _serve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--http-port", type=int, help="default: a free port")
    p.add_argument("--grpc-port", type=int, help="default: a free port")
    p.add_argument("--metrics-port", type=int, help="default: a free port")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--log-verbose", type=int, default=0)


def _gpu_args(p: argparse.ArgumentParser, device_help: str) -> None:
    p.add_argument("--device", default=None, metavar="cpu|cuda:N", help=device_help)
    p.add_argument("--enable-trt", action="store_true",
                   help="ONNX Runtime's TensorRT execution accelerator (optimization.execution_accelerators); "
                        "needs a cuda device")
    p.add_argument("--trt-precision", choices=["FP16", "FP32"], default="FP16",
                   help="TensorRT precision_mode (default FP16: half-precision kernels, FP32 where needed)")
    p.add_argument("--trt-workspace-bytes", type=int, default=1 << 30,
                   help="TensorRT max_workspace_size_bytes (default 1 GiB)")


def _gpu_options(args: argparse.Namespace, kind: str | None, gpus: list[int]) -> dict[str, Any]:
    """BuildOptions fields for --device / --enable-trt (and --instance-kind / --gpus when given)."""
    from studio.core.errors import InputError
    from studio.triton.gpu import parse_device

    device = parse_device(args.device) if args.device else None
    if device is not None:
        want = "gpu" if device.is_gpu else "cpu"
        if kind not in (None, want) or (gpus and (not device.is_gpu or gpus != [device.index])):
            raise InputError(f"--device {device} conflicts with --instance-kind {kind} / --gpus {gpus}",
                             offending="--device", hint="give --device alone (cuda:N means KIND_GPU, gpus [N])")
        kind, gpus = want, [device.index] if device.is_gpu else []
    if args.enable_trt and (kind or "cpu") != "gpu":
        raise _trt_on_cpu()
    return {"instance_kind": kind or "cpu", "gpus": gpus, "tensorrt": args.enable_trt,
            "trt_precision": args.trt_precision, "trt_workspace_bytes": args.trt_workspace_bytes}


def _trt_on_cpu() -> Exception:
    from studio.core.errors import InputError

    return InputError("--enable-trt needs a GPU: TensorRT does not run on --device cpu", offending="--enable-trt",
                      hint="use --device cuda:N --enable-trt, or drop --enable-trt")


def _signing_key(args: argparse.Namespace) -> Any:
    from studio.core.errors import InputError

    if not args.sign:
        if args.trust:
            raise InputError("--trust without --sign: the versions would carry no manifest to verify",
                             offending="--trust", hint="add --sign KEY (see `studio keys list`)")
        return None
    from studio.package.keys import KeyStore

    return KeyStore(args.keys_dir).load_signing_key(args.sign)


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True)
    b = sub.add_parser("build-repo", help="add a model (a new version) to a Triton model repository")
    b.add_argument("model", help="an .onnx file, or an export folder (model.onnx or <modality>_encoder parts)")
    b.add_argument("--repo", required=True, help="repository folder (created if missing)")
    b.add_argument("--name", required=True, help="model name in the repository")
    b.add_argument("--flavor", choices=["onnxruntime", "python"], default="onnxruntime",
                   help="onnxruntime: platform onnxruntime_onnx; python: Python backend running ONNX Runtime")
    b.add_argument("--max-batch-size", type=int, help="default: 8 when the batch dim is dynamic, else 0")
    b.add_argument("--dynamic-batching", action="store_true", help="enable the dynamic batcher")
    b.add_argument("--preferred-batch-size", type=_ints, action="extend", default=[], metavar="N[,N]",
                   help="preferred batch sizes (implies --dynamic-batching)")
    b.add_argument("--max-queue-delay-us", type=int, default=0, help="dynamic batcher queue delay (microseconds)")
    b.add_argument("--instance-kind", choices=["cpu", "gpu", "auto", "model"], default=None,
                   help="instance group kind (default cpu, or gpu with --device cuda:N)")
    b.add_argument("--instance-count", type=int, default=1)
    b.add_argument("--gpus", type=_ints, default=[], metavar="0,1", help="GPU ids for --instance-kind gpu")
    _gpu_args(b, "instance group on CPU, or KIND_GPU with gpus [N] (the GPU need not be on this machine)")
    b.add_argument("--warmup", action="store_true", help="add a batch-1 warmup request to the config")
    b.add_argument("--version", type=int, help="version number (default: one past the highest; older are kept)")
    b.add_argument("--version-policy", default="latest:1", help="latest:N | all | specific:1,2")
    b.add_argument("--tokenizer", help="tokenizer.json (or folder): adds NAME_tokenizer and the NAME_pipeline ensemble")
    b.add_argument("--processor", help="preprocessor_config.json (or folder), copied for clients")
    b.add_argument("--json", action="store_true", help="print the build report as JSON")
    b.add_argument("--sign", metavar="KEY", help="sign each model version with this key (name or .key file); "
                   "passphrase from STUDIO_KEY_PASSPHRASE or prompted")
    b.add_argument("--trust", action="append", default=[], metavar="PUBKEY",
                   help="public key(s) the Python-backend model verifies its version against before loading")
    b.add_argument("--keys-dir", type=Path, default=None, help="key folder (default: CONFIG/keys)")

    c = sub.add_parser("check", help="check a repository's configs against its ONNX models")
    c.add_argument("--repo", required=True)
    c.add_argument("--json", action="store_true")

    s = sub.add_parser("serve-local", help="run the bundled CPU tritonserver on a repository")
    s.add_argument("--repo", required=True)
    _serve_args(s)
    s.add_argument("--model-control-mode", choices=["explicit", "poll"], default="explicit")
    s.add_argument("--repository-poll-secs", type=int, default=2)
    s.add_argument("--load-model", action="append", default=[], metavar="NAME",
                   help="model to load at start (explicit mode; default: all)")

    for name, help_ in (("status", "liveness, readiness, metadata, extensions and models of a server"),
                        ("models", "the repository index with each model's state"),
                        ("metrics", "CPU/GPU memory, GPU power/utilisation and per-model counters")):
        _server_args(sub.add_parser(name, help=help_))
    for name, help_ in (("load", "load a model"), ("unload", "unload a model"),
                        ("reload", "reload a model (picks up new versions)"), ("config", "show a model's config"),
                        ("stats", "per-model statistics")):
        q = sub.add_parser(name, help=help_)
        q.add_argument("model", nargs="?" if name == "stats" else None)
        _server_args(q)
    u = sub.add_parser("upload-version", help="hot-load a local model folder as a new version (explicit mode)")
    u.add_argument("model")
    u.add_argument("--model-dir", required=True, help="model folder with config.pbtxt and a version folder")
    u.add_argument("--version", type=int, required=True)
    _server_args(u)
    i = sub.add_parser("infer", help="send one request built from an image, text, audio file or .npy arrays")
    i.add_argument("model")
    i.add_argument("--image")
    i.add_argument("--text")
    i.add_argument("--audio")
    i.add_argument("--tokenizer", help="tokenizer.json for models that take token ids")
    i.add_argument("--processor", help="preprocessor_config.json for image mean/std")
    i.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    i.add_argument("--output", action="append", default=[], metavar="NAME")
    _server_args(i)
    from studio.cli import kserve_cmd

    kserve_cmd.add_arguments(sub.add_parser("export-kserve", help="KServe ServingRuntime + InferenceService "
                                            "manifests for a repository (resources and autoscaling from a tier)"))


# -- handlers ----------------------------------------------------------------------------------------------


def _client(args: argparse.Namespace) -> Any:
    from studio.core.errors import InputError
    from studio.triton.client import TritonClient

    headers = {}
    for h in args.header:
        if "=" not in h:
            raise InputError(f"header {h!r} is not KEY=VALUE", offending="--header")
        k, v = h.split("=", 1)
        headers[k.strip()] = v.strip()
    return TritonClient(args.url, protocol=args.protocol, ssl=args.ssl, headers=headers, timeout=args.timeout,
                        metrics_url=args.metrics_url)


def _print_json(obj: Any) -> None:
    from studio.core.reports import to_jsonable

    print(json.dumps(to_jsonable(obj), indent=2))


def _build(args: argparse.Namespace) -> int:
    from studio.cli.progress import job_progress
    from studio.triton.repo_builder import BuildOptions, build_repo

    opts = BuildOptions(model=Path(args.model), repo=Path(args.repo), name=args.name, flavor=args.flavor,
                        max_batch_size=args.max_batch_size, dynamic_batching=args.dynamic_batching,
                        preferred_batch_sizes=args.preferred_batch_size, max_queue_delay_us=args.max_queue_delay_us,
                        instance_count=args.instance_count, **_gpu_options(args, args.instance_kind, args.gpus),
                        warmup=args.warmup, version=args.version, version_policy=args.version_policy,
                        tokenizer=Path(args.tokenizer) if args.tokenizer else None,
                        processor=Path(args.processor) if args.processor else None,
                        sign_key=_signing_key(args), trust=list(args.trust))
    with job_progress("build-repo", enabled=not args.json) as job:
        report = build_repo(opts, job)
    from studio.triton.render import build_text

    sys.stdout.write(report.to_json() + "\n" if args.json else build_text(report))
    return 0


def _check(args: argparse.Namespace) -> int:
    from studio.triton.render import check_text
    from studio.triton.repo_check import check_repo

    report = check_repo(args.repo)
    sys.stdout.write(report.to_json() + "\n" if args.json else check_text(report))
    return 0 if report.ok else 1


def _serve(server: Any, announce: str = "") -> int:
    """Start, print URLs, block until SIGINT/SIGTERM, stop cleanly."""
    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.start()
        if server.converted:
            print(tr("note: this CPU server has no ONNX Runtime backend; serving {models} through a generated "
                     "Python-backend copy (same ONNX file, run by onnxruntime)", models=", ".join(server.converted)))
        if announce:
            print(announce)
        print(tr("tritonserver ready ({mode} mode), repository {repo}", mode=server.mode, repo=server.source_repo))
        print(f"  HTTP     {server.http_url}")
        print(f"  gRPC     {server.grpc_url}")
        print(f"  metrics  {server.metrics_url}")
        print(_("press Ctrl+C to stop"), flush=True)
        while not stop.wait(0.5):
            if not server.is_running():
                print(_("error: tritonserver exited unexpectedly; last log lines:") + "\n" + server.log_tail(20),
                      file=sys.stderr)
                return 1
        print(_("stopping tritonserver ..."), flush=True)
        return 0
    finally:
        rc = server.stop()
        server.cleanup()
        for s, h in old.items():
            signal.signal(s, h)
        if stop.is_set():
            print(tr("stopped (exit code {rc})", rc=rc), flush=True)


def _serve_local(args: argparse.Namespace) -> int:
    from studio.triton.repo_builder import repo_models
    from studio.triton.server import LocalTritonServer

    loads = args.load_model
    if args.model_control_mode == "explicit" and not loads:
        loads = repo_models(args.repo)
    server = LocalTritonServer(args.repo, http_port=args.http_port, grpc_port=args.grpc_port,
                               metrics_port=args.metrics_port, host=args.host,
                               model_control_mode=args.model_control_mode, load_models=loads,
                               repository_poll_secs=args.repository_poll_secs, log_verbose=args.log_verbose)
    return _serve(server)


def _status(args: argparse.Namespace) -> int:
    c = _client(args)
    info = c.info()
    models = c.repository_index()
    if args.json:
        _print_json({"server": info, "models": models})
        return 0
    print(f"{args.url}: live={info.live} ready={info.ready}  {info.name} {info.version}")
    print(tr("  extensions: {extensions}", extensions=", ".join(info.extensions)))
    for m in models:
        print(f"  {_model_row(m)}")
    return 0


def _model_row(m: Any) -> str:
    """A repository index row: name, version, state ("not loaded" in the user's language), the server's reason."""
    from studio.core.columns import cell

    return f"{m.name:28} v{m.version or '-':4} {cell(m.state or _('not loaded'), 10)} {m.reason}"


def _models(args: argparse.Namespace) -> int:
    models = _client(args).repository_index()
    if args.json:
        _print_json(models)
    else:
        for m in models:
            print(_model_row(m))
    return 0


def _control(args: argparse.Namespace) -> int:
    c = _client(args)
    getattr(c, args.action)(args.model)
    print(tr("{action} {model}: done", action=args.action, model=args.model))
    return 0


def _upload(args: argparse.Namespace) -> int:
    c = _client(args)
    c.upload_version(args.model, args.version, Path(args.model_dir))
    print(tr("uploaded {folder} as version {version} of {model}; the server now serves it", folder=args.model_dir,
             version=args.version, model=args.model))
    return 0


def _config(args: argparse.Namespace) -> int:
    print(json.dumps(_client(args).model_config(args.model), indent=2))
    return 0


def _stats(args: argparse.Namespace) -> int:
    stats = _client(args).statistics(args.model or "")
    if args.json:
        _print_json(stats)
        return 0
    print(f"{'model':28} {'ver':>4} {'infer':>7} {'exec':>7} {'fail':>5} {'queue us':>9} {'in us':>8} "
          f"{'infer us':>9} {'out us':>8}  batches")
    for s in stats:
        print(f"{s.name:28} {s.version:>4} {s.inference_count:7} {s.execution_count:7} {s.fail_count:5} "
              f"{s.avg_queue_us:9.1f} {s.avg_compute_input_us:8.1f} {s.avg_compute_infer_us:9.1f} "
              f"{s.avg_compute_output_us:8.1f}  {s.batch_sizes}")
    return 0


def _metrics(args: argparse.Namespace) -> int:
    snap = _client(args).metrics()
    if args.json:
        print(snap.to_json())
        return 0
    for k, v in snap.describe().items():
        print(f"{k:18} {v}")
    for m in snap.models:
        print(f"  {m.model:28} v{m.version:3} success {m.success:.0f} failure {m.failure:.0f} "
              f"exec {m.exec_count:.0f} avg request "
              + (f"{m.avg_request_us:.0f} us" if m.avg_request_us is not None else "-"))
    return 0


def _infer(args: argparse.Namespace) -> int:
    import numpy as np

    from studio.core.errors import InputError
    from studio.triton.inputs import prepare_inputs

    c = _client(args)
    arrays = {}
    for item in args.input:
        if "=" not in item:
            raise InputError(f"--input {item!r} is not NAME=FILE.npy", offending="--input")
        n, f = item.split("=", 1)
        try:
            arrays[n] = np.load(f, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read {f}: {exc}", offending=f, hint="save arrays with numpy.save") from exc
    feed = prepare_inputs(c.model_config(args.model), image=args.image, text=args.text, audio=args.audio,
                          tokenizer=args.tokenizer, processor=args.processor, arrays=arrays)
    out = c.infer(args.model, feed, outputs=args.output or None)
    if args.json:
        print(json.dumps({k: v.tolist() for k, v in out.items()}))
    else:
        for k, v in out.items():
            print(f"{k}: shape {list(v.shape)} dtype {v.dtype}\n{np.array2string(v, threshold=40, precision=4)}")
    return 0


HANDLERS = {"build-repo": _build, "check": _check, "serve-local": _serve_local, "status": _status,
            "models": _models, "load": _control, "unload": _control, "reload": _control,
            "upload-version": _upload, "config": _config, "stats": _stats, "metrics": _metrics, "infer": _infer,
            "export-kserve": lambda args: _kserve_run(args)}


def _kserve_run(args: argparse.Namespace) -> int:
    from studio.cli import kserve_cmd

    return kserve_cmd.run(args)


def run(args: argparse.Namespace) -> int:
    return HANDLERS[args.action](args)


# -- the seed's alias ---------------------------------------------------------------------------------------


def serve_alias_main(argv: Sequence[str] | None = None) -> int:
    """`multimodal-serve --model X.onnx --device cpu|cuda:N [--enable-trt] --max-batch-size 8`.

    cpu: a temporary Python-backend repository on the bundled CPU tritonserver (LocalTritonServer).
    cuda:N: an onnxruntime_onnx repository for KIND_GPU (persistent, --repo) served by a real GPU tritonserver;
    without one it exits 2 naming the repository and the docker line that serves it on a GPU host.
    """
    from studio.core.entry import guarded

    if "_ARGCOMPLETE" in os.environ:  # a shell's Tab (studio.cli.completion)
        from studio.cli.completion import complete_and_exit

        complete_and_exit("multimodal-serve")
    p = serve_alias_parser()
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    return guarded(lambda: _serve_alias(args), debug=args.debug)


def serve_alias_parser() -> argparse.ArgumentParser:
    """multimodal-serve's flags (also what its shell completion offers)."""
    p = argparse.ArgumentParser(prog="multimodal-serve", description="serve one ONNX model on Triton")
    p.add_argument("--model", required=True, help="an .onnx file or export folder")
    _gpu_args(p, "cpu (default): the bundled CPU tritonserver; cuda:N: a GPU repository for a GPU tritonserver")
    p.add_argument("--max-batch-size", type=int, default=None)
    p.add_argument("--name", help="model name (default: the file's stem)")
    p.add_argument("--dynamic-batching", action="store_true", help="(always on for cuda when batching is possible)")
    p.add_argument("--repo", default=None, help="repository folder to write (default: a temporary one for cpu, "
                   "./multimodal-serve-repo for cuda)")
    p.add_argument("--server", default=None, metavar="PATH",
                   help="a GPU tritonserver binary for cuda (default: tritonserver on PATH)")
    p.add_argument("--debug", action="store_true")
    _serve_args(p)
    return p


def _serve_alias(args: argparse.Namespace) -> int:
    from studio.triton.gpu import parse_device

    device = parse_device(args.device or "cpu")
    model = Path(args.model)
    name = args.name or (model.stem if model.is_file() else model.name)
    if device.is_gpu:
        return _serve_alias_gpu(args, device, model, name)
    if args.enable_trt:
        raise _trt_on_cpu()
    if args.server:
        from studio.core.errors import InputError

        raise InputError("--server is for --device cuda:N (the CPU path runs the bundled tritonserver)",
                         offending="--server", hint="drop --server, or pass --device cuda:N")
    import tempfile

    from studio.triton.repo_builder import BuildOptions, build_repo, repo_models
    from studio.triton.server import LocalTritonServer

    with tempfile.TemporaryDirectory(prefix="multimodal-serve-") as tmp:
        report = build_repo(BuildOptions(model=model, repo=Path(args.repo) if args.repo else Path(tmp) / "repo",
                                         name=name, flavor="python", max_batch_size=args.max_batch_size,
                                         dynamic_batching=args.dynamic_batching))
        server = LocalTritonServer(report.repo, http_port=args.http_port, grpc_port=args.grpc_port,
                                   metrics_port=args.metrics_port, host=args.host,
                                   load_models=repo_models(report.repo), log_verbose=args.log_verbose)
        return _serve(server, announce=f"serving model '{report.entry_model}' from {model}")


def _serve_alias_gpu(args: argparse.Namespace, device: Any, model: Path, name: str) -> int:
    from studio.core.errors import DependencyMissing
    from studio.triton import gpu
    from studio.triton.repo_builder import BuildOptions, build_repo

    gpu.check_device(device)
    binary = gpu.find_gpu_server(args.server)  # a bad --server fails here, before anything is written
    batched = gpu.planned_max_batch(model, args.max_batch_size) > 0
    repo = Path(args.repo or gpu.DEFAULT_REPO).resolve()
    report = build_repo(BuildOptions(
        model=model, repo=repo, name=name, flavor="onnxruntime", max_batch_size=args.max_batch_size,
        dynamic_batching=args.dynamic_batching or batched, instance_kind="gpu", gpus=[device.index],
        tensorrt=args.enable_trt, trt_precision=args.trt_precision, trt_workspace_bytes=args.trt_workspace_bytes))
    from studio.triton.render import built_model_line

    for m in report.models:
        print(built_model_line(m))
    python_models = [m.name for m in report.models if m.flavor == "python"]
    if python_models:
        print(tr("note: {models} run on Triton's Python backend: the server's Python needs numpy, onnxruntime and "
                 "tokenizers (studio_env.json lists this machine's site-packages)", models=", ".join(python_models)))
    print(f"GPU repository for {device}{' with TensorRT ' + args.trt_precision if args.enable_trt else ''}: {repo}",
          flush=True)
    if binary is None:
        raise DependencyMissing(
            "no GPU tritonserver here (none on PATH, no --server; the one in nvidia-pytriton is CPU-only): the "
            "repository is written but not served", offending=str(repo),
            hint=f"serve it on a GPU host (copy the folder there and adjust -v): {gpu.docker_command(repo)}   "
                 "(or, where a GPU tritonserver is installed: --server /path/to/tritonserver)")
    server = gpu.GpuTritonServer(repo, binary, http_port=args.http_port, grpc_port=args.grpc_port,
                                 metrics_port=args.metrics_port, host=args.host,
                                 load_models=sorted({m.name for m in report.models}),
                                 log_verbose=args.log_verbose, startup_timeout=900.0 if args.enable_trt else 180.0)
    return _serve(server, announce=f"serving model '{report.entry_model}' from {model} on {device} ({binary})")
