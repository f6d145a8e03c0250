"""The table of `studio`'s subcommands (name -> module, one-line help) and the commands plugins contribute.

Below the CLI because the GUI's Plugins dialog lists plugin commands (and marks those that would shadow a
built-in one) without importing studio.cli. Module names are strings: nothing here imports a command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studio.core.plugins import Contribution

# name -> (module, one-line help). Subcommand modules expose ``add_arguments(parser)`` and ``run(args)``.
COMMANDS: dict[str, tuple[str, str]] = {
    "export": ("studio.cli.export_cmd", "export a HuggingFace model to validated ONNX"),
    "sample-model": ("studio.cli.sample_cmd", "write a tiny random-weight sample model (no network)"),
    "generate": ("studio.cli.generate_cmd", "generate text from an exported decoder (KV cache, ONNX Runtime)"),
    "inspect": ("studio.cli.inspect_cmd", "check an ONNX model against accelerator targets"),
    "targets": ("studio.cli.targets_cmd", "list target profiles"),
    "schema": ("studio.cli.schema_cmd", "print the JSON Schema of target, board or SLA tier files"),
    "fix": ("studio.cli.fix_cmd", "make dims static, simplify, convert precision"),
    "triton": ("studio.cli.triton_cmd", "build, check and serve Triton model repositories"),
    "keys": ("studio.cli.keys_cmd", "manage Ed25519 signing keys"),
    "package": ("studio.cli.package_cmd", "build a signed edge bundle for a board"),
    "verify": ("studio.cli.verify_cmd", "verify a signed edge bundle offline"),
    "deploy": ("studio.cli.deploy_cmd", "deploy a bundle to an edge agent"),
    "agent": ("studio.cli.agent_cmd", "query or roll back an edge agent"),
    "fleet": ("studio.cli.fleet_cmd", "fleets of edge agents: staged rollouts gated by an SLA tier"),
    "bench": ("studio.cli.bench_cmd", "drive load against a KServe v2 server and judge SLAs"),
    "report": ("studio.cli.report_cmd", "render a telemetry recording"),
    "compile": ("studio.cli.compile_cmd", "compile ONNX with TVM Relax for an edge target"),
    "optimize": ("studio.cli.optimize_cmd", "search fixes and precisions for a target: the variant its own tool "
                                            "builds within an accuracy budget"),
    "profile": ("studio.cli.profile_cmd", "per-operator profile of an ONNX model"),
    "diff": ("studio.cli.diff_cmd", "diff two ONNX models: added, removed and changed nodes"),
    "plugins": ("studio.cli.plugins_cmd", "list plugins and their state"),
    "workspace": ("studio.cli.workspace_cmd", "create or show a workspace"),
    "gui": ("studio.cli.gui_cmd", "open the studio window"),
    "completion": ("studio.cli.completion_cmd", "print or install shell completion (bash, zsh)"),
}


def available(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(COMMANDS[name][0]) is not None
    except ModuleNotFoundError:
        return False


def plugin_commands() -> dict[str, Contribution]:
    """Commands contributed by plugins (manifest ``provides.cli``), without importing them.

    A plugin command whose name is a built-in one is refused (recorded as its error) unless it is that
    built-in command itself (a built-in plugin declaring its own command through the same manifest)."""
    from studio.core.plugins import discover

    out: dict[str, Contribution] = {}
    for plugin in discover():
        if not plugin.ok:
            continue
        for c in plugin.contributions:
            if c.kind != "cli" or c.error is not None:
                continue
            if c.name in COMMANDS:
                if c.module != COMMANDS[c.name][0]:
                    c.fail(f"'{c.name}' is a built-in command of studio; the plugin must use another name")
                continue
            out[c.name] = c
    return out
