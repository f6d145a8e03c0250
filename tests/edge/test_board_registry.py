"""One board registry: the board files in the resources are the only list of boards. Packaging, the agent's
board checks and `studio compile --target BOARD` all take them from it; a board file added to a resources
override is a board everywhere; old spellings still work with a warning; a bad file names its line and field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from studio.compile import plugin as compile_plugin
from studio.compile.targets import GENERIC, board_target, resolve_target, target_ids
from studio.core.errors import TargetError
from studio.core.paths import resources_dir
from studio.core.resource_schema import RenamedKeyWarning
from studio.package import boards
from studio.package.boards import board_accepts, board_arch, board_ids, list_boards, load_board

NEW_BOARD = """\
id: my-board
name: My Board
cpu_arch: aarch64
cpu: 4x Cortex-A55
accelerator: {name: none, target: ort-cpu}
compile:
  description: my board's CPU
  notes: [a note]
"""


@pytest.fixture()
def resources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shipped resources, used through STUDIO_RESOURCES."""
    copy = tmp_path / "resources"
    shutil.copytree(resources_dir(), copy)
    monkeypatch.setenv("STUDIO_RESOURCES", str(copy))
    return copy


def test_every_board_id_comes_from_the_registry() -> None:
    ids = board_ids()
    assert ids == tuple(sorted(p.stem for p in (resources_dir() / "boards").glob("*.yaml")))
    assert boards.BOARD_IDS == ids == tuple(b.id for b in list_boards())
    assert target_ids() == list(GENERIC) + list(ids)
    assert compile_plugin.manifest()["provides"]["compile_targets"] == list(GENERIC) + list(ids)
    for b in list_boards():
        t = resolve_target(b.id)
        assert t == board_target(load_board(b.id)) or t.cross_cc  # the same objects, plus the host's cross cc
        assert t.board == b.id and t.description == (b.compile.description or b.name)


def test_shipped_compile_targets_unchanged() -> None:
    rk = resolve_target("rk3588")
    assert rk.tvm == {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a76", "mattr": ["+neon"]}
    assert rk.notes and "opencl" in rk.notes[0]
    assert resolve_target("jetson-orin-nano").tvm["mcpu"] == "cortex-a78"
    assert "mcpu" not in resolve_target("atlas-310p").tvm
    assert resolve_target("generic-x86_64").tvm == {"kind": "llvm", "mtriple": "x86_64-linux-gnu"}


def test_a_board_file_added_is_a_board_everywhere(resources: Path) -> None:
    (resources / "boards" / "my-board.yaml").write_text(NEW_BOARD)
    assert "my-board" in board_ids() and "my-board" in boards.BOARD_IDS
    assert load_board("my-board").target == "ort-cpu" and board_arch("my-board") == "aarch64"
    assert board_accepts("my-board", "generic-aarch64") and not board_accepts("my-board", "generic-x86_64")
    assert "my-board" in target_ids()
    t = resolve_target("my-board")
    assert t.tvm["mcpu"] == "cortex-a55" and t.description == "my board's CPU" and t.notes == ["a note"]
    (resources / "boards" / "my-board.yaml").unlink()
    assert "my-board" not in board_ids()
    with pytest.raises(TargetError, match="unknown board"):
        load_board("my-board")


def test_old_spellings_still_work_with_a_warning(resources: Path) -> None:
    f = resources / "boards" / "old-board.yaml"
    f.write_text("id: old-board\narch: aarch64\naccelerator: {target: ort-cpu}\n"
                 "tvm_target: {kind: llvm, mtriple: aarch64-linux-gnu, mcpu: cortex-a72}\n"
                 "description: an old board\n")
    with pytest.warns(RenamedKeyWarning) as got:
        board = load_board("old-board")
        t = resolve_target("old-board")
    said = {(Path(w.filename), w.lineno, str(w.message).split(" in a ")[0]) for w in got}
    assert (f, 2, f"{f}:2: 'arch' is the old spelling of 'cpu_arch'") in said, said
    assert (f, 4, f"{f}:4: 'tvm_target' is the old spelling of 'compile.tvm_target'") in said, said
    assert (f, 5, f"{f}:5: 'description' is the old spelling of 'compile.description'") in said, said
    assert board.cpu_arch == "aarch64" and board.name == "old-board"
    assert t.tvm["mcpu"] == "cortex-a72" and t.description == "an old board"

    f.write_text("id: old-board\ncpu: {arch: aarch64, mcpu: cortex-a53}\naccelerator: {target: ort-cpu}\n")
    with pytest.warns(RenamedKeyWarning) as got:
        assert resolve_target("old-board").tvm["mcpu"] == "cortex-a53"
        assert load_board("old-board").cpu == ""  # the emptied mapping is dropped
    assert {str(w.message).split(" in a ")[0] for w in got} == {f"{f}:2: 'cpu.arch' is the old spelling of 'cpu_arch'",
                                                               f"{f}:2: 'cpu.mcpu' is the old spelling of 'compile.mcpu'"}


@pytest.mark.parametrize("text,line,field", [
    ("id: bad\ncpu_arch: aarch64\n", 1, "accelerator"),
    ("id: bad\ncpu_arch: aarch64\naccelerator: {target: ort-cpu}\nmemory_mb: lots\n", 4, "memory_mb"),
    ("id: bad\ncpu_arch: aarch64\naccelerator:\n  target: ort-cpu\n  nmae: x\n", 5, "accelerator"),
    ("id: other\ncpu_arch: aarch64\naccelerator: {target: ort-cpu}\n", 1, "id"),
    ("id: bad\ncpu_arch: aarch64\naccelerator: {target: ort-cpu}\ncompile:\n  tvm_target: {mtriple: x}\n", 5,
     "compile.tvm_target.kind"),
])
def test_a_bad_board_file_names_file_line_and_field(resources: Path, text: str, line: int, field: str) -> None:
    f = resources / "boards" / "bad.yaml"
    f.write_text(text)
    with pytest.raises(TargetError) as ei:
        load_board("bad")
    assert ei.value.offending == f"{f}:{line}: {field}", ei.value.offending
    assert "studio schema boards" in (ei.value.hint or "")
    with pytest.raises(TargetError):  # listing every board reads it too
        list_boards()
