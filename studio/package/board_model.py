"""What a board is, as data (studio/resources/boards/*.yaml): the dataclasses the board registry (``boards``) and
its schema (``board_schema``) share, apart from both so that neither imports the other in a circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class BoardCompile:
    """The board file's ``compile`` section: what TVM builds for (``studio.compile.targets``)."""

    tvm_target: dict[str, Any] | None = None  # an explicit TVM target JSON dict
    mcpu: str | None = None  # the LLVM CPU (else the Cortex core named in ``cpu``)
    description: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class BoardProfile:
    id: str
    name: str
    cpu_arch: str
    target: str  # the inspector target id of the board's accelerator
    accelerator: str = ""
    cpu: str = ""
    memory_mb: int = 0
    runtime: str = "onnxruntime"
    execution_providers: list[str] = field(default_factory=lambda: ["CPUExecutionProvider"])
    power_sensor: dict[str, Any] = field(default_factory=dict)
    temperature_sensor: dict[str, Any] = field(default_factory=dict)
    optional_targets: list[str] = field(default_factory=list)
    compile: BoardCompile = field(default_factory=BoardCompile)

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)
