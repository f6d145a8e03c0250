"""The user guide's screenshots (docs/images/PAGE.png), made by `studio gui --screenshot` on the demo workspace.

    python tools/docs_screenshots.py [--out docs/images] [--size 1366x768] [--page inspect ...]

`make docs-screenshots` runs it. Each page is rendered offscreen by its own `studio gui` process on a fresh demo
workspace in a temporary HOME (the user's settings and recent workspaces are never touched), with the tiny CLIP
sample exported first so Inspect, Compile, Triton and Package show a real model. Needs the `gui` and `export`
extras; without torch the pages are taken with no exported model (said on stderr). Look at every picture
before committing it: a page that changed is the reason to run this again.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("export", "inspect", "diff", "compile", "triton", "package", "devices", "fleet", "dashboards")
# pages shown with the exported model opened (the others show the demo workspace as it opens)
WITH_MODEL = ("inspect", "compile", "triton", "package")


def _studio() -> list[str]:
    exe = shutil.which("studio", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "studio.cli.main"]


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)


def _static_fix(studio: list[str], env: dict[str, str], ws: Path, model: Path) -> None:
    """A static-dims fix of the export, recorded in the workspace as the Inspect page's Fix buttons record it
    (the fix's output current, ``fix_source`` its original), so the Diff page opens on A and B."""
    fixed = model.with_name("model.static.onnx")
    r = _run([*studio, "fix", str(model), "--static", "batch=1,sequence=16", "--out", str(fixed)], env)
    if r.returncode != 0:
        print(f"note: the static fix failed (exit {r.returncode}); Diff is shown empty", file=sys.stderr)
        return
    sys.path.insert(0, str(ROOT))
    from studio.core.workspace import Workspace

    w = Workspace.open(ws)
    w.add_model(model.parent, name="tiny-clip-onnx", kind="onnx", source="export of tiny-clip", make_current=False)
    entry = w.add_model(fixed, name="tiny-clip-static", kind="onnx", source="static fix of tiny-clip-onnx")
    entry.artifacts["fix_source"] = w.relative(model)
    w.save()


def _diff_shot(ws: Path, a: Path, b: Path, out: Path, size: str) -> int:
    """The Diff page after Compare (run in its own process by ``--diff-shot``): `studio gui --screenshot` shows a
    page as it opens, and the Diff page compares only when asked (its "Compare with…" payload does)."""
    from PySide6.QtWidgets import QApplication

    from studio.cli.main import build_command_parser
    from studio.gui.app import build_window
    from studio.gui.screenshot import take_screenshot

    args = build_command_parser("gui")[0].parse_args(["--demo", str(ws), "--screenshot", str(out), "--page",
                                                      "diff", "--size", size])
    app = QApplication.instance() or QApplication(sys.argv[:1])
    win = build_window(args)
    win.page("diff").open_payload({"a": str(a), "b": str(b), "a_why": "before: the export",
                                   "b_why": "after: its static-dims fix (batch=1, sequence=16)"})
    w, h = (int(x) for x in size.split("x"))
    take_screenshot(win, out, "diff", (w, h))
    win.close()
    del app
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(ROOT / "docs" / "images"), help="folder of the PNGs (default docs/images)")
    p.add_argument("--size", default="1366x768", help="window size WxH (default 1366x768)")
    p.add_argument("--page", action="append", choices=PAGES, help="only these pages (repeat); default all")
    p.add_argument("--diff-shot", nargs=4, metavar=("WS", "A", "B", "OUT"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.diff_shot:
        ws_, a, b, png = (Path(x) for x in args.diff_shot)
        return _diff_shot(ws_, a, b, png, args.size)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # a fixed folder, so the paths the pages show are the same at every run
    tmp = Path(tempfile.gettempdir()) / "studio-docs"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        home = tmp / "home"
        home.mkdir()
        ws = tmp / "demo-workspace"
        env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
               "XDG_DATA_HOME": str(home / ".local/share"), "QT_QPA_PLATFORM": "offscreen",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
        studio = _studio()
        done = _run([*studio, "workspace", "init", str(ws), "--demo"], env)
        if done.returncode != 0:  # an older CLI without --demo: the first gui run writes the samples
            _run([*studio, "gui", "--demo", str(ws), "--screenshot", str(tmp / "warm.png")], env)
        model = ws / "exports" / "tiny-clip" / "model.onnx"
        exp = _run([*studio, "export", str(ws / "models" / "tiny-clip"), "--output", str(model)], env)
        if exp.returncode != 0:
            print(f"note: the tiny-clip export failed (exit {exp.returncode}); pages are shown without a model\n"
                  f"{exp.stderr.strip()[-800:]}", file=sys.stderr)
        else:
            _static_fix(studio, env, ws, model)
        failed = 0
        for page in args.page or PAGES:
            target = out / f"{page}.png"
            paths = [str(model)] if page in WITH_MODEL and model.is_file() else []
            fixed = model.with_name("model.static.onnx")
            if page == "diff" and fixed.is_file():
                r = _run([sys.executable, __file__, "--size", args.size, "--diff-shot", str(ws), str(model),
                          str(fixed), str(target)], env)
            else:
                r = _run([*studio, "gui", *paths, "--demo", str(ws), "--screenshot", str(target), "--page", page,
                          "--size", args.size], env)
            if r.returncode != 0:
                failed += 1
                print(f"error: {page}: exit {r.returncode}\n{r.stderr.strip()[-800:]}", file=sys.stderr)
            else:
                print(f"wrote {target} ({target.stat().st_size // 1024} KiB)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
