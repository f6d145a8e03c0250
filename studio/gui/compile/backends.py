"""The compile backends the Compile page offers: TVM Relax (built in) and each plugin's ``compilers``
contribution with the same contract (``rknn`` from plugins/studio-rknn), with their targets and state; and
which compile target / board an inspector target or a finished compile means.

Qt-free: the page fills its combos from :func:`backends`; the state line comes from the backend itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import StudioError

LISTED_ONLY = ("tvm-relax", "mlc-llm")  # the built-in plugin's own declarations (the page's "tvm" and --mlc-llm)


@dataclass
class Backend:
    id: str  # CompileOptions.backend
    label: str
    targets: list[str] = field(default_factory=list)  # empty: the TVM compile targets (list_targets)
    precisions: list[str] = field(default_factory=list)  # CompileOptions.quantize values ("" first)
    available: bool = True
    reason: str = ""  # why it is not available, or what answers (tool and version)


def backends() -> list[Backend]:
    """TVM first, then every plugin compiler, described by its manifest item: ``title``, ``targets``,
    ``precisions`` and ``status`` ("module:function" -> (usable, tool and version or why not))."""
    from studio.core.catalogue import _ as core_text
    from studio.core.plugins import contributions, import_object

    out = [Backend("tvm", "TVM Relax (built in)")]
    for c in contributions("compilers"):
        if c.name in LISTED_ONLY:
            continue
        meta = c.meta
        ok, reason = True, c.help
        if meta.get("status"):
            try:
                ok, reason = import_object(str(meta["status"]))()
            except Exception as exc:  # a plugin may break in any way: listed, not usable, with its error
                ok, reason = False, f"{type(exc).__name__}: {exc}"
        out.append(Backend(c.name, f"{meta.get('title') or c.name} (plugin {c.plugin.name})",
                           [str(t) for t in meta.get("targets") or []], [str(p) for p in meta.get("precisions") or []],
                           bool(ok), core_text(str(reason))))  # a plugin's words: its catalogue
    return out


INSPECTOR_TO_COMPILE = {"ort-cpu": "llvm", "tvm-relax": "llvm"}


def board_for_report(rep: Any) -> str:
    """The board a compiled module is meant for: its board target, else generic-<its library's CPU arch>."""
    if rep.board:
        return str(rep.board)
    machines = {m for a in rep.artifacts for m in a.machines.values()}
    if len(machines) == 1:
        return f"generic-{next(iter(machines))}"
    if str(rep.target).startswith("aarch64"):
        return "generic-aarch64"
    return f"generic-{str(rep.host).rsplit('-', 1)[-1].lower()}"


def compile_target_for(target: str) -> str:
    """The compile target for an inspector target: this host for ort-cpu / tvm-relax, else a board using it."""
    if target in INSPECTOR_TO_COMPILE:
        return INSPECTOR_TO_COMPILE[target]
    try:
        from studio.package.boards import list_boards

        return next((b.id for b in list_boards() if b.target == target), target)
    except Exception:  # board profiles unreadable: leave the choice to the user
        return target


def default_output(model: str, target_id: str | None, backend_id: str, workspace_root: Path | None) -> Path | None:
    """Where an empty Output field compiles to: WORKSPACE/compiled/<name>-<target> with a workspace, else the
    core default (./compiled/..., never in the model's folder); None without a model or a target."""
    if not model or not target_id:
        return None
    from studio.compile.outputs import COMPILED_DIR, compiled_name

    leaf = str(target_id) if backend_id == "tvm" else f"{target_id}-{backend_id}"
    if workspace_root is not None:
        return Path(workspace_root) / COMPILED_DIR / f"{compiled_name(Path(model))}-{leaf}"
    from studio.compile.api import default_out

    try:
        return default_out(Path(model), leaf)
    except StudioError:
        return None
