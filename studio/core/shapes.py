"""Shape specs: the one syntax and parser for concrete input shapes given as text.

Used by ``--shape`` of ``studio inspect``, ``profile``, ``compile`` and ``bench`` and by the GUI's shape fields
(the Compile page's "Shapes", the Inspector's Verify tab "Static shapes").

The syntax (canonical)::

    NAME=D,D,...            e.g.  pixel_values=1,3,224,224

one spec per ``--shape`` (repeat the flag for several inputs); in one value or a GUI field several specs are
separated by ``;`` (whitespace between specs works too): ``pixel_values=1,3,224,224; input_ids=1,64``.
Sizes are whole numbers >= 0: ONNX allows zero-size dims, so the rule is ``>= 0`` unless the caller needs
data to exist and passes ``min_size=1`` (compile, bench). ``-1`` or a symbol is never a size here: a shape
spec is what a dynamic dim becomes.

Old spellings are still read, each with a ``StudioDeprecationWarning`` (or a note, for the GUI) that names the
canonical form: ``NAME=1x3x224x224``, ``NAME=[1,3,224,224]`` (or parentheses), ``NAME=1 3 224 224`` and bench's
``NAME:1,64``. Every error is an InputError naming the field, the spec as written, the input and the axis.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from studio.core.errors import InputError, StudioDeprecationWarning

SYNTAX = "NAME=D,D,..."
EXAMPLE = "pixel_values=1,3,224,224"

# a new spec starts after ';' or after whitespace followed by "NAME=" / "NAME:" (so "x=1, 3" stays one spec)
_SPEC_BREAK = re.compile(r"\s*;\s*|\s+(?=[^\s;,=:\[\]()]+\s*[=:])")
_INT = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class ShapeSpec:
    """One input's concrete shape: ``name`` -> ``dims``, with the text the user wrote.

    ``old`` names the old spelling the text used (None when it is canonical)."""

    name: str
    dims: tuple[int, ...]
    text: str = ""
    old: str | None = None

    def canonical(self) -> str:
        return format_spec(self.name, self.dims)

    def note(self, field: str = "--shape") -> str | None:
        """The warning for an old spelling: ``--shape 'x:1,64' is an old spelling; write x=1,64``."""
        if self.old is None:
            return None
        return f"{field} '{self.text}' is an old spelling; write {self.canonical()}"


@dataclass
class ParsedShapes:
    """Specs in the order given; ``shapes`` is what the core calls take, ``notes`` one line per old spelling."""

    specs: list[ShapeSpec] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def shapes(self) -> dict[str, list[int]]:
        return {s.name: list(s.dims) for s in self.specs}


def format_spec(name: str, dims: Sequence[int]) -> str:
    return f"{name}={','.join(str(int(d)) for d in dims)}"


def format_shapes(shapes: Mapping[str, Sequence[int]]) -> str:
    """The text a GUI field shows for ``shapes``: ``a=1,2; b=3``."""
    return "; ".join(format_spec(n, d) for n, d in shapes.items())


def split_specs(text: str) -> list[str]:
    """``"a=1,2; b=3 c=4"`` -> ``["a=1,2", "b=3", "c=4"]``; empty pieces dropped."""
    return [p for p in _SPEC_BREAK.split(text.strip()) if p.strip()]


def _bad(message: str, text: str, field: str, name: str | None = None, axis: int | None = None,
         hint: str | None = None) -> InputError:
    return InputError(f"{field} '{text}': {message}", offending=text,
                      hint=hint or f"write {name or 'NAME'}=D,D,... with one whole number per axis, e.g. {EXAMPLE}",
                      details={"field": field, "input": name, "axis": axis})


def parse_spec(text: str, *, field: str = "--shape", min_size: int = 0) -> ShapeSpec:
    """One spec (see the module doc) -> ShapeSpec; InputError naming ``field``, the input and the axis."""
    raw = text.strip()
    old: list[str] = []
    if "=" in raw:
        name, _, dims = raw.partition("=")
    elif ":" in raw:  # bench's NAME:D; the last ':' so a name like "input:0" survives
        name, _, dims = raw.rpartition(":")
        old.append("NAME:D")
    else:
        raise _bad("no '=' between the input name and its sizes", raw, field,
                   hint=f"write {raw or 'NAME'}=D,D,..., e.g. {EXAMPLE}" if "," not in raw else None)
    name, dims = name.strip(), dims.strip()
    if not name:
        raise _bad("names no input before the sizes", raw, field)
    if dims[:1] in ("[", "(") and dims[-1:] in ("]", ")"):
        dims = dims[1:-1].strip()
        old.append("brackets")
    if "," in dims:
        parts = [p.strip() for p in dims.split(",")]
    elif "x" in dims.lower():
        parts = [p.strip() for p in re.split(r"[xX]", dims)]
        old.append("x")
    elif len(dims.split()) > 1:
        parts = dims.split()
        old.append("spaces")
    else:
        parts = [dims] if dims else []
    if not parts:
        raise _bad(f"gives no sizes for input '{name}'", raw, field, name)
    values: list[int] = []
    for axis, p in enumerate(parts):
        template = ",".join("<size>" if i == axis else q for i, q in enumerate(parts))
        hint = f"write {name}={template} with a whole number >= {min_size} for axis {axis}"
        if not p:
            raise _bad(f"axis {axis} of input '{name}' has no size", raw, field, name, axis, hint)
        if not _INT.fullmatch(p):
            raise _bad(f"axis {axis} of input '{name}' is '{p}', not a whole number", raw, field, name, axis, hint)
        v = int(p)
        if v < min_size:
            why = ("sizes are >= 0 (a dynamic dim needs a concrete size here, e.g. 1)" if v < 0 else
                   f"sizes here must be >= {min_size} (a zero-size tensor has no data)")
            raise _bad(f"axis {axis} of input '{name}' is {v}; {why}", raw, field, name, axis, hint)
        values.append(v)
    return ShapeSpec(name, tuple(values), raw, "+".join(old) or None)


def read_shapes(items: str | Sequence[str] | None, *, field: str = "--shape", min_size: int = 0) -> ParsedShapes:
    """Every spec of ``items`` (one string, e.g. a GUI field, or the values of a repeated flag; each may hold
    several specs separated by ';'), without warning: old spellings come back as ``notes`` (the GUI shows them).

    An empty ``items`` is no shapes; an empty value among several, or an input named twice, is an InputError."""
    if items is None:
        return ParsedShapes()
    values = [items] if isinstance(items, str) else list(items)
    out = ParsedShapes()
    seen: dict[str, ShapeSpec] = {}
    for value in values:
        pieces = split_specs(value)
        if not pieces and not isinstance(items, str):
            raise InputError(f"{field} is empty", offending=f"{field} '{value}'",
                             hint=f"write {SYNTAX}, e.g. {field} {EXAMPLE}" if field.startswith("--")
                             else f"write {SYNTAX}, e.g. {EXAMPLE}", details={"field": field})
        for piece in pieces:
            spec = parse_spec(piece, field=field, min_size=min_size)
            if spec.name in seen:
                raise _bad(f"input '{spec.name}' has a shape already ('{seen[spec.name].text}')", spec.text,
                           field, spec.name, hint=f"give each input one shape; keep one of the {spec.name}=... specs")
            seen[spec.name] = spec
            out.specs.append(spec)
            note = spec.note(field)
            if note is not None and note not in out.notes:
                out.notes.append(note)
    return out


def parse_shapes(items: str | Sequence[str] | None, *, field: str = "--shape", min_size: int = 0
                 ) -> dict[str, list[int]]:
    """``["input_ids=1,64", "pixel_values=1,3,224,224"]`` -> {name: dims}; a StudioDeprecationWarning per old
    spelling (the CLI prints it as ``warning: ...``), InputError for a bad spec (see ``read_shapes``)."""
    parsed = read_shapes(items, field=field, min_size=min_size)
    for note in parsed.notes:
        warnings.warn(note, StudioDeprecationWarning, stacklevel=2)
    return parsed.shapes


def _fmt(dims: Sequence[int | str | None]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


def check_against(shapes: Mapping[str, Sequence[int]], inputs: Mapping[str, Sequence[int | str | None] | None],
                  *, field: str = "--shape") -> None:
    """Shapes against a model's inputs (name -> declared dims: ints fixed, str/None dynamic; None = rank unknown).

    InputError for a name the model does not have, a rank that differs, or a size the model fixes otherwise."""
    for name, dims in shapes.items():
        if name not in inputs:
            raise InputError(f"{field} names an input the model does not have: '{name}'", offending=name,
                             hint=f"the model's inputs: {', '.join(inputs)}", details={"field": field, "input": name})
        declared = inputs[name]
        if declared is None:
            continue
        example = ",".join(str(d) if isinstance(d, int) and d >= 0 else "1" for d in declared)
        if len(dims) != len(declared):
            raise InputError(f"{field} {name}: rank {len(dims)} but the model's input has rank {len(declared)}",
                             offending=name, hint=f"the model declares {name} as {_fmt(declared)}; give one size "
                             f"per axis, e.g. {name}={example}", details={"field": field, "input": name})
        for axis, (want, have) in enumerate(zip(dims, declared, strict=True)):
            if isinstance(have, int) and have != want:
                raise InputError(f"{field} {name}: axis {axis} is fixed to {have}, not {want}", offending=name,
                                 hint=f"the model declares {name} as {_fmt(declared)}",
                                 details={"field": field, "input": name, "axis": axis})
