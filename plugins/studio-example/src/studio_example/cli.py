"""`studio example-hello MODEL`: the plugin's command (add_arguments/run, like the studio's own commands)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help="an ONNX model")
    p.add_argument("--json", action="store_true", help="the verifier's result as JSON")


def run(args: argparse.Namespace) -> int:
    from studio.core.errors import InputError
    from studio_example.verifier import ExampleVerifier

    if not args.model.is_file():
        raise InputError(f"no such model file: {args.model}", offending=str(args.model),
                         hint="pass the path of an .onnx file")
    result = ExampleVerifier().verify(args.model)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0 if result.ran else 1
    if not result.ran:
        print(f"example-npu cannot read {args.model.name}: {result.error}")
        return 1
    on_npu = sum(1 for n in result.nodes if n.placement == "accelerator")
    print(f"hello from studio-example: {args.model.name} has {len(result.nodes)} nodes, "
          f"{on_npu} would run on the example NPU ({result.tool})")
    for n in result.nodes:
        if n.verdict != "supported":
            print(f"  {n.node} ({n.op_type}): {n.verdict}, {n.message}")
    return 0
