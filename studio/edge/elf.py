"""Read the machine an ELF object or shared library was built for, straight from its header.

Used to prove a cross build is what it claims (an aarch64 object says e_machine 183) without running it.
"""

from __future__ import annotations

import struct
import tarfile
from pathlib import Path

MACHINES = {3: "x86", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv"}


def elf_machine(data: bytes) -> int | None:
    """e_machine of an ELF image, or None when ``data`` is not ELF."""
    if len(data) < 20 or data[:4] != b"\x7fELF":
        return None
    endian = "<" if data[5] == 1 else ">"
    return int(struct.unpack_from(endian + "H", data, 18)[0])


def file_machines(path: Path) -> dict[str, str]:
    """{member or file name: machine name} for an ELF file or every ELF member of a .tar."""
    path = Path(path)
    out: dict[str, str] = {}
    if path.suffix == ".tar":
        with tarfile.open(path) as tar:
            for m in tar.getmembers():
                f = tar.extractfile(m) if m.isfile() else None
                if f is not None:
                    em = elf_machine(f.read(64))
                    if em is not None:
                        out[m.name] = MACHINES.get(em, str(em))
        return out
    with path.open("rb") as fh:
        em = elf_machine(fh.read(64))
    if em is not None:
        out[path.name] = MACHINES.get(em, str(em))
    return out


def elf_arches(path: Path) -> set[str]:
    """The machine names of an ELF file or .tar of objects; empty when it is neither (truncated, not ELF)."""
    try:
        return set(file_machines(path).values())
    except Exception:  # noqa: BLE001 (a truncated tar or a non-ELF file: no machine known; callers fall back)
        return set()
