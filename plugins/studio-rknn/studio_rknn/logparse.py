"""Reading rknn-toolkit2 2.5.0's verbose log: per-layer placement, node lineage, CPU fallbacks, errors.

The toolkit has no API that returns op placement, but its verbose build prints a "Network Layer Information
Table" (one row per compiled layer: OpType, Target NPU/CPU, FullName "OpType:node"), ``fuse_ops`` prints which
ONNX nodes each rewrite removed and added, and ``init_runtime`` prints "No lowering found for: NODE, node type
= OP, use CustomOperatorLower instead" for a layer the simulator runs as a CPU custom op. This module turns that
text into data; it runs in the studio process and needs no toolkit (tests feed it saved logs).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TS = re.compile(r"^(?P<lvl>[DIWE]) RKNN: \[\d\d:\d\d:\d\d\.\d+\] ?")
_FUSE = re.compile(r"^D\s+(?P<rule>[\w.]+): remove node = (?P<rm>\[.*?\])(?:, add node = (?P<add>\[.*\]))?\s*$")
_EXC = re.compile(r"^[A-Za-z_][\w.]*: ")  # "ValueError: ...", "onnxruntime...NotImplemented: ..."
_FOLD = re.compile(r"^D fold_constant remove nodes = (?P<rm>\[.*\])\s*$")
_LOWER = re.compile(r"No lowering found for: (?P<node>.+?), node type = (?P<op>\S+?), use CustomOperatorLower")
# lines the toolkit prints as errors on every successful build too: not a verdict
NOISE = ("Unkown op target: 0", "rknn-toolkit2 version:", "dataconvert type -1 is unsupport")
# The toolkit refuses a model in its own words: an "E stage: <words>" line, raised as a ValueError by its logger
# (rknn_log.RKNNLog.e). Any other exception out of its code (a TypeError in fold_constant, onnxruntime failing in
# the session its fold pass runs) is a fault of the toolkit, not a verdict on the model.
REFUSAL_FRAME = "rknn_log.RKNNLog.e"


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text).replace("\r", "\n")


@dataclass
class Layer:
    """One row of the Network Layer Information Table."""

    index: int
    op_type: str
    dtype: str
    target: str  # "NPU" | "CPU" (| "GPU" on boards with one)
    name: str = ""  # the node name from FullName ("Conv:mm1#2" -> "mm1#2"); "" for anonymous layers
    full_name: str = ""


@dataclass
class Rewrite:
    """One ``fuse_ops`` line: a rule replaced ``removed`` nodes with ``added`` ones."""

    rule: str
    removed: list[str]
    added: list[str]


@dataclass
class Trace:
    """A Python traceback the toolkit logged: the stage it printed it in, its text, its closing exception line."""

    stage: str
    text: str
    exception: str

    @property
    def internal(self) -> bool:
        """A fault of the toolkit's own code (TypeError, an onnxruntime error in its fold pass, ...), not a
        refusal its logger raised."""
        return REFUSAL_FRAME not in self.text


@dataclass
class ToolkitLog:
    """Everything a check needs from one log."""

    layers: list[Layer] = field(default_factory=list)
    rewrites: list[Rewrite] = field(default_factory=list)
    fallbacks: dict[str, tuple[str, str]] = field(default_factory=dict)  # node -> (op type, the toolkit's line)
    folded: set[str] = field(default_factory=set)  # nodes fold_constant turned into constants
    errors: list[str] = field(default_factory=list)  # E lines in order, noise and tracebacks left out
    warnings: list[str] = field(default_factory=list)
    traces: list[Trace] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)  # E lines in the toolkit's own words (no traceback)

    def first_error(self) -> str:
        return self.errors[0] if self.errors else ""

    def crash(self) -> Trace | None:
        """The toolkit's own code failed: an internal exception with no refusal of its own before it."""
        first = next(iter(self.traces), None)
        if first is None or not first.internal:
            return None
        said = [r for r in self.refusals if r.startswith(first.stage + ":")]
        return None if said else first


def _clean(line: str) -> tuple[str, str]:
    """(level, message) of a log line: 'E build: msg' -> ('E', 'build: msg'); C++ lines lose their timestamp."""
    m = _TS.match(line)
    if m:
        return m.group("lvl"), line[m.end():].strip()
    if len(line) > 2 and line[0] in "DIWE" and line[1] == " ":
        return line[0], line[2:].strip()
    return "", line.strip()


def parse_layer_rows(lines: list[str]) -> list[Layer]:
    """The rows of the last Network Layer Information Table in ``lines`` (already cleaned of timestamps)."""
    starts = [i for i, ln in enumerate(lines) if "Network Layer Information Table" in ln]
    if not starts:
        return []
    layers: list[Layer] = []
    for ln in lines[starts[-1] + 1:]:
        if ln.startswith("ID ") or set(ln) <= {"-", " "}:
            if layers and set(ln) <= {"-", " "} and ln.strip():
                break  # the closing rule
            continue
        parts = ln.split()
        if len(parts) < 8 or not parts[0].isdigit():
            break
        full = parts[8] if len(parts) > 8 else ""
        name = full.split(":", 1)[1] if ":" in full else ""
        name = name.removesuffix("_" + parts[1])  # the compiler's fusions append it: "mm#2_ConvAdd"
        layers.append(Layer(int(parts[0]), parts[1], parts[2], parts[3], name, full))
    return layers


def parse_log(text: str) -> ToolkitLog:
    out = ToolkitLog()
    cleaned: list[str] = []
    in_traceback = False
    trace: list[str] = []
    stage = ""
    for raw in strip_ansi(text).split("\n"):
        lvl, msg = _clean(raw)
        cleaned.append(msg if lvl else raw.strip())
        if in_traceback and not lvl:
            trace.append(raw.rstrip())
        fold = _FOLD.match(raw.strip()) if raw.startswith("D fold_constant remove") else None
        if fold:
            try:
                out.folded |= {str(x) for x in ast.literal_eval(fold.group("rm"))}
            except (ValueError, SyntaxError):
                pass
            continue
        fm = _FUSE.match(raw.strip()) if raw.startswith("D ") else None
        if fm:
            try:
                removed = list(ast.literal_eval(fm.group("rm")))
                added = list(ast.literal_eval(fm.group("add"))) if fm.group("add") else []
                out.rewrites.append(Rewrite(fm.group("rule"), [str(x) for x in removed], [str(x) for x in added]))
            except (ValueError, SyntaxError):
                pass
            continue
        lm = _LOWER.search(raw)
        if lm:
            out.fallbacks[lm.group("node").strip()] = (lm.group("op"), lm.group(0).strip() + " instead.")
            continue
        if in_traceback and not lvl and _EXC.match(raw.strip()):
            out.errors.append(raw.strip())  # the exception line closing a toolkit traceback: its real words
            out.traces.append(Trace(stage, "\n".join(trace), raw.strip()))
            in_traceback = False
            continue
        if lvl == "E":
            if msg.endswith("Traceback (most recent call last):"):
                in_traceback, trace = True, [msg]
                stage = msg.split(":", 1)[0] if ":" in msg else ""
                continue
            if any(n in msg for n in NOISE) or msg.startswith("rknn-toolkit2 version"):
                continue
            out.errors.append(msg)
            out.refusals.append(msg)
            in_traceback = False
        elif lvl == "W" and not in_traceback and "=====" not in msg:
            out.warnings.append(msg)
        elif lvl in ("I", "D"):
            in_traceback = False
    out.layers = parse_layer_rows(cleaned)
    return out


def lineage(rewrites: list[Rewrite], names: list[str]) -> dict[str, set[str]]:
    """For each original node name, the set of node names it became after all rewrites (itself if untouched).

    A rule that removes nodes and adds others passes every removed node's identity to every added node; a rule
    that only removes (a fused transpose) leaves that node with no descendants: absorbed by its neighbours.
    """
    current: dict[str, set[str]] = {n: {n} for n in names}
    for rw in rewrites:
        removed = set(rw.removed)
        if not removed:  # pure insertions (reshapes to 4-D) belong to no original node
            continue
        for _orig, now in current.items():
            hit = now & removed
            if hit:
                now -= hit
                now |= set(rw.added)
    return current


def parse_accuracy(text: str) -> list[dict[str, object]]:
    """Rows of accuracy_analysis' error_analysis.txt: layer type, tensor name, entire/single cosine and euclid."""
    rows: list[dict[str, object]] = []
    pat = re.compile(r"^\[(?P<op>[^\]]+)\]\s+(?P<name>\S+)\s+(?P<ec>[-\d.]+)\s*\|\s*(?P<ee>[-\d.e+]+)\s+"
                     r"(?P<sc>[-\d.]+)\s*\|\s*(?P<se>[-\d.e+]+)")
    for line in text.splitlines():
        m = pat.match(line.strip())
        if m:
            rows.append({"op_type": m.group("op"), "tensor": m.group("name"),
                         "entire_cos": float(m.group("ec")), "entire_euc": float(m.group("ee")),
                         "single_cos": float(m.group("sc")), "single_euc": float(m.group("se"))})
    return rows
