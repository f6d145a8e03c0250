"""The floor of an export: plain ``torch.onnx.export`` + full checker + ORT parity, on the studio's own module and inputs.

    .venv/bin/python -m bench.plain_export MODEL_DIR OUT.onnx [--with-past | --no-with-past]

What an engineer writes by hand, on exactly what `studio export` traces: the same wrapper module, example inputs,
dynamic axes, opset 17, TorchScript exporter (the studio's example-input stage builds them, so the two runs
export the same graph), then ``onnx.checker.check_model(path, full_check=True)``, one ONNX Runtime session and
the same parity cases as the studio (each case: the torch reference, ORT, allclose at the studio's tolerances).
Nothing else: no shape inference by data propagation, no generation check, no companions. Past 2 GB torch writes
one file per tensor beside the graph (its own layout), which ORT and the checker take by path.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--with-past", action=argparse.BooleanOptionalAction, default=False)
    args = ap.parse_args(argv)

    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch

    from studio.export.api import ExportOptions
    from studio.export.stages.derive import derive_example_inputs
    from studio.export.stages.inputs import build_example_inputs
    from studio.export.stages.load import load_source
    from studio.export.stages.options import prepare_run
    from studio.export.stages.past import build_past_inputs
    from studio.export.validate import make_inputs

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    options = ExportOptions(model_dir=Path(args.model_dir), output=out, with_past=args.with_past)
    run = prepare_run(options, Path(tempfile.mkdtemp()))
    model = load_source(run)
    # generic inputs (what a user writes by hand costs the floor nothing); the processor's (the studio's derive
    # stage) only where generic ones cannot feed the model (Qwen2-VL's grid), so the floor stays the cheapest way
    if options.with_past:
        ex = build_past_inputs(run, model)
    else:
        from studio.export.stages.run import StageFailed

        try:
            ex = build_example_inputs(run, model)
        except StageFailed:
            run.report.diagnosis = None
            ex = derive_example_inputs(run, model)
    print(f"[{time.perf_counter() - t0:6.1f}s] loaded; exporting", flush=True)
    axes = {k: v for k, v in {**ex.dynamic_axes, **(ex.output_axes or {})}.items() if v}
    with torch.no_grad():
        torch.onnx.export(ex.export_wrapper, ex.args0, str(out), input_names=ex.input_names,
                          output_names=ex.output_names, dynamic_axes=axes or None, opset_version=17,
                          do_constant_folding=True, dynamo=False)
    print(f"[{time.perf_counter() - t0:6.1f}s] exported; checker", flush=True)
    onnx.checker.check_model(str(out), full_check=True)
    print(f"[{time.perf_counter() - t0:6.1f}s] ORT session", flush=True)
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    wanted = {i.name for i in sess.get_inputs()}
    for i, case in enumerate(ex.cases):
        feeds = ex.feeds0 if i == 0 else (ex.make_feeds(case) if ex.make_feeds is not None
                                          else make_inputs(run.specs, run.config, case))
        with torch.no_grad():
            ref = ex.wrapper(*[torch.from_numpy(np.ascontiguousarray(feeds[n])) for n in ex.input_names])
        got = sess.run(None, {k: v for k, v in feeds.items() if k in wanted})
        for name, g, r in zip(ex.output_names, got, ref, strict=False):
            r = r.detach().float().numpy() if r.is_floating_point() else r.detach().numpy()
            if not np.allclose(g, r, atol=options.atol, rtol=options.rtol):
                print(f"parity FAILED on {case.name}: {name} max abs {np.abs(g - r).max():.3g}", flush=True)
                return 1
        print(f"[{time.perf_counter() - t0:6.1f}s] parity {case.name}: ok", flush=True)
    print(f"plain export done in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
