"""Where in the model's own code a failure happened, read from the exception itself.

Why: "the exporter failed" helps nobody; "modeling_moonshine.py:227 in model.encoder.layers.0.self_attn" does.
Three sources, most precise first: the TorchScript node being converted when a symbolic function raised (its
scope is the module path, its source range the model's line), the deepest traceback frame in a model's code
(``transformers/models/<type>/modeling_*.py``, a remote-code module, or any file outside torch, the studio and
the standard library), and ``File "...", line N`` frames in the message text (torch.export prints the user's).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

_LIBS = ("/torch/", "/studio/", "/onnx/", "/onnxruntime/", "/onnxscript/", "/numpy/", "/transformers/utils/",
         "/transformers/modeling_utils.py", "/transformers/integrations/", "/transformers/masking_utils.py",
         "/transformers/processing_utils.py", "/transformers/image_processing", "/transformers/feature_extraction",
         "/transformers/tokenization_utils", "<frozen", "<string>", "/contextlib.py", "/functools.py")


@dataclass
class Location:
    """A failure's place: the model file and line, its code, the module path (``model.layers.0.attn``)."""

    file: str | None = None
    line: int | None = None
    code: str | None = None
    module: str | None = None
    function: str | None = None

    @property
    def source(self) -> str | None:
        if not self.file:
            return None
        where = f"{Path(self.file).name}:{self.line}"
        return f"{where} in {self.function}" if self.function else where


def _is_model_code(filename: str) -> bool:
    stdlib = str(Path(sys.prefix) / "lib")
    if any(x in filename for x in _LIBS) or filename.startswith(stdlib) and "site-packages" not in filename:
        return False
    return "/transformers/models/" in filename or "site-packages" not in filename or "modeling" in filename


def _frames(tb: TracebackType | None) -> list[Any]:
    out = []
    while tb is not None:
        out.append(tb)
        tb = tb.tb_next
    return out


def _torchscript_node(frames: list[Any]) -> Location | None:
    """The node a TorchScript symbolic function was converting when it raised (scope + source range)."""
    for tb in reversed(frames):
        ctx = tb.tb_frame.f_locals.get("graph_context") or tb.tb_frame.f_locals.get("g")
        node = getattr(ctx, "original_node", None)
        if node is None:
            continue
        try:
            scope = node.scopeName()
            src = str(node.sourceRange())
        except Exception:  # noqa: BLE001 - a node without source information
            continue
        from studio.export.diagnose import scope_to_module

        m = re.search(r"([^\s(]+\.py)\((\d+)\)", src) or re.search(r"([^\s:]+\.py):(\d+)", src)
        loc = Location(module=scope_to_module(scope), function=node.kind())
        if m:
            loc.file, loc.line = m.group(1), int(m.group(2))
            loc.code = _code(loc.file, loc.line)
        return loc
    return None


def _code(file: str, line: int) -> str | None:
    try:
        return Path(file).read_text(encoding="utf-8", errors="replace").splitlines()[line - 1].strip()[:200]
    except (OSError, IndexError):
        return None


def locate_exception(exc: BaseException, model: Any = None) -> Location:
    """The model-code place of ``exc`` (or of the exceptions it was raised from); an empty Location if none."""
    from studio.export.diagnose import module_at

    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in chain:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    for e in chain:
        frames = _frames(e.__traceback__)
        node = _torchscript_node(frames)
        if node is not None and (node.file or node.module):
            return node
    for e in chain:
        for tb in reversed(_frames(e.__traceback__)):
            filename = tb.tb_frame.f_code.co_filename
            if _is_model_code(filename):
                line = tb.tb_lineno
                loc = Location(filename, line, _code(filename, line), None, tb.tb_frame.f_code.co_name)
                loc.module = module_at(model, filename, line) if model is not None else _self_module(tb)
                return loc
    text = "\n".join(str(e) for e in chain)
    for f, n in reversed(re.findall(r'File "([^"]+)", line (\d+)', text)):
        if _is_model_code(f):
            return Location(f, int(n), _code(f, int(n)), module_at(model, f, int(n)) if model is not None else None)
    return Location()


def _self_module(tb: Any) -> str | None:
    """The class of ``self`` in the failing frame (a module path needs the model; its class name does not)."""
    obj = tb.tb_frame.f_locals.get("self")
    return type(obj).__name__ if obj is not None else None
