"""The schema of a board profile (studio/resources/boards/*.yaml) as a pydantic model, and the reader the board
registry (``studio.package.boards``) uses: a malformed file is a TargetError naming the file, line and field.

One file per board, named after its id. The packaging side reads the accelerator, runtime and sensors; the
``compile`` section is what `studio compile --target BOARD` builds for (``studio.compile.targets``).
Old spellings the compile reader used to take (top-level ``tvm_target``, ``arch``, ``mcpu``, ``description``,
``cpu: {arch, mcpu}``) are moved to their place with a RenamedKeyWarning. `studio schema boards` prints the
JSON Schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import ConfigDict, Field, StrictStr

from studio.core.errors import TargetError
from studio.core.resource_schema import ResourceModel, apply_renames, resource_error, validate

if TYPE_CHECKING:
    from studio.package.board_model import BoardProfile

WHAT = "board profile"
HINT = ("compare with studio/resources/boards/generic-x86_64.yaml (`studio schema boards` prints the JSON Schema "
        "to check it with)")

# old spelling -> its place now
RENAMES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("arch",): ("cpu_arch",),
    ("cpu", "arch"): ("cpu_arch",),
    ("cpu", "mcpu"): ("compile", "mcpu"),
    ("mcpu",): ("compile", "mcpu"),
    ("tvm_target",): ("compile", "tvm_target"),
    ("description",): ("compile", "description"),
}

Name = Annotated[StrictStr, Field(min_length=1)]


class Accelerator(ResourceModel):
    name: str = ""
    target: Name = Field(description="the inspector target id of the board's accelerator (studio targets)")
    optional_targets: list[str] = Field(default_factory=list, description="add-on accelerators (inspector ids)")


class Runtime(ResourceModel):
    name: str = Field("onnxruntime", description="the agent runtime that serves the board's models")
    execution_providers: list[str] | None = Field(None, description="ONNX Runtime providers, in order of preference")


class Sensor(ResourceModel):
    """Where the agent reads power or temperature; further keys are kept for the agent's readers."""

    model_config = ConfigDict(extra="allow")

    kind: str = Field("none", description="hwmon, thermal_zone, rapl, ina3221, npu-smi, pmic, none, ...")
    source: str = ""
    paths: list[str] = Field(default_factory=list, description="sysfs globs")
    command: str | None = None


class TvmTarget(ResourceModel):
    """A TVM target JSON dict, as ``tvm.target.Target(...)`` takes it; further TVM keys are passed through."""

    model_config = ConfigDict(extra="allow")

    kind: Name = Field(description="llvm, opencl, vulkan, cuda, ...")
    mtriple: str | None = None
    mcpu: str | None = None
    mattr: list[str] | None = None
    host: dict[str, Any] | None = None


class Compile(ResourceModel):
    """What `studio compile --target BOARD` builds for: ``tvm_target``, or an LLVM CPU target derived from
    ``cpu_arch`` and ``mcpu`` (else the Cortex core named in ``cpu``)."""

    tvm_target: TvmTarget | None = None
    mcpu: str | None = Field(None, description="the LLVM CPU name (cortex-a76, ...)")
    description: str | None = Field(None, description="the target's one-line description (default: name)")
    notes: list[str] = Field(default_factory=list, description="shown with every compile for the board")


class BoardFile(ResourceModel):
    """A board profile: what a bundle is built for and what the agent runs it with."""

    id: Name = Field(description="the board id; the file is named <id>.yaml")
    name: str | None = Field(None, description="display name (default: the id)")
    cpu_arch: Name = Field(description="aarch64 or x86_64")
    cpu: str = ""
    accelerator: Accelerator
    memory_mb: int = 0
    runtime: Runtime | None = None
    power_sensor: Sensor | None = None
    temperature_sensor: Sensor | None = None
    compile: Compile | None = None


def read_board(path: Path) -> BoardProfile:
    """One board file: YAML, old spellings moved (with a warning), validated, its id checked against its name."""
    import yaml

    from studio.core import yamlio

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TargetError(f"cannot read board profile: {exc}", offending=str(path), hint=HINT) from None
    try:
        data = yamlio.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise TargetError(f"board profile {path.name} is not valid YAML: {exc}",
                          offending=f"{path}:{mark.line + 1}" if mark is not None else str(path),
                          hint="fix the YAML syntax of the board profile") from None
    board = parse(data, path, text)
    if board.id != path.stem:
        raise resource_error(TargetError, WHAT, path, ("id",), f"the id '{board.id}' is not the file's name "
                             f"'{path.stem}' (boards are found by file name)", text=text, hint=HINT)
    return board


def parse(data: Any, path: Path | str, text: str | None = None) -> BoardProfile:
    """Validate one board mapping (``text``: its YAML, for line numbers) and build the BoardProfile."""
    from studio.package.board_model import BoardCompile, BoardProfile

    data = apply_renames(data, RENAMES, path=path, text=text, what=WHAT, kind="boards")
    f = validate(BoardFile, data, path=path, text=text, error_cls=TargetError, what=WHAT, hint=HINT)
    rt = f.runtime or Runtime()
    c = f.compile or Compile()

    def sensor(s: Sensor | None) -> dict[str, Any]:
        return s.model_dump(exclude_unset=True) if s is not None else {}

    return BoardProfile(
        id=f.id, name=f.name or f.id, cpu_arch=f.cpu_arch, target=f.accelerator.target,
        accelerator=f.accelerator.name, cpu=f.cpu, memory_mb=f.memory_mb, runtime=rt.name,
        execution_providers=list(rt.execution_providers or ["CPUExecutionProvider"]),
        power_sensor=sensor(f.power_sensor), temperature_sensor=sensor(f.temperature_sensor),
        optional_targets=list(f.accelerator.optional_targets),
        compile=BoardCompile(tvm_target=c.tvm_target.model_dump(exclude_none=True) if c.tvm_target else None,
                             mcpu=c.mcpu, description=c.description, notes=list(c.notes)))
