"""The studio as a desktop application, per user (`studio gui --install-desktop` / `--uninstall-desktop` /
`--desktop-status`): a freedesktop ``.desktop`` entry in ``$XDG_DATA_HOME/applications``, the icon in the
hicolor theme (SVG + the PNG sizes of studio.desktop.icons), an ``application/x-onnx`` MIME type for ``*.onnx``
(shared-mime-info XML in ``$XDG_DATA_HOME/mime/packages``) and the studio as its default application
(``xdg-mime default``), so double-clicking an .onnx file opens it in the Inspector of the running studio.

The entry starts this installation's ``studio`` by absolute path (``Exec`` and ``TryExec``); when that file is
gone (the venv moved or was deleted) :func:`status` says so with the command that reinstalls it. Installing
writes every file to a temporary name first and puts back what was there when a step fails: nothing is left
half-installed. Qt-free.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from studio.core.errors import InstallError
from studio.desktop.icons import APP_ID, SIZES, png_path, svg_path

DESKTOP_FILE = f"{APP_ID}.desktop"
MIME_TYPE = "application/x-onnx"
MIME_XML = f"""<?xml version="1.0" encoding="UTF-8"?>
<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">
  <mime-type type="{MIME_TYPE}">
    <comment>ONNX model</comment>
    <icon name="{APP_ID}"/>
    <glob pattern="*.onnx"/>
  </mime-type>
</mime-info>
"""


def data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def config_home() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def entry_path() -> Path:
    return data_home() / "applications" / DESKTOP_FILE


def mime_package_path() -> Path:
    return data_home() / "mime" / "packages" / f"{APP_ID}.xml"


def icon_paths() -> dict[Path, Path]:
    """Installed icon -> shipped file, in the per-user hicolor theme."""
    theme = data_home() / "icons" / "hicolor"
    out = {theme / "scalable" / "apps" / f"{APP_ID}.svg": svg_path()}
    for size in SIZES:
        out[theme / f"{size}x{size}" / "apps" / f"{APP_ID}.png"] = png_path(size)
    return out


def studio_executable() -> Path:
    """This installation's `studio` console script (beside the running interpreter, else on PATH)."""
    beside = Path(sys.executable).parent / "studio"
    if beside.is_file():
        return beside
    found = shutil.which("studio")
    if found:
        return Path(found).resolve()
    raise InstallError("cannot find this installation's `studio` command", offending=str(beside),
                       hint="install the studio into a venv (pip install deployment-studio) and run its "
                            "bin/studio gui --install-desktop")


def _exec_arg(arg: str) -> str:
    """Quote an Exec argument as the Desktop Entry spec says (double quotes; \\ " ` $ escaped)."""
    if arg and not any(c in arg for c in " \t\n\"'\\><~|&;$*?#()`"):
        return arg
    escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg)
    return f'"{escaped}"'


def _string(value: str) -> str:
    """A value of the spec's string type: a backslash is written as two."""
    return value.replace("\\", "\\\\")


def entry_text(executable: Path) -> str:
    exe = str(executable)
    return "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.0",
        "Name=Deployment Studio",
        "GenericName=ML Deployment Studio",
        "Comment=Export models to ONNX, check them for accelerators, serve them and package them for edge boards",
        f"TryExec={_string(exe)}",
        f"Exec={_string(_exec_arg(exe))} gui %F",
        f"Icon={APP_ID}",
        "Terminal=false",
        "StartupNotify=true",
        "Categories=Development;ArtificialIntelligence;",
        f"MimeType={MIME_TYPE};",
        "Keywords=ONNX;Triton;inference;accelerator;NPU;edge;",
        "",
    ])


def _entry_fields(path: Path) -> dict[str, str]:
    fields: dict[str, str] = {}
    section = ""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[Desktop Entry]" and "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            fields[k.strip()] = v.strip().replace("\\\\", "\\")
    return fields


def _unquote_first(value: str) -> str:
    """The program of an Exec / TryExec value (quoted or not)."""
    if value.startswith('"'):
        out, i = [], 1
        while i < len(value) and value[i] != '"':
            if value[i] == "\\" and i + 1 < len(value):
                i += 1
            out.append(value[i])
            i += 1
        return "".join(out)
    return value.split()[0] if value.split() else ""


@dataclass
class DesktopStatus:
    entry: str
    installed: bool
    target: str = ""  # the program the installed entry starts
    target_exists: bool = False
    this_install: str = ""  # the `studio` of the installation asking
    mime_default: str = ""  # what `xdg-mime query default application/x-onnx` answers ("" unknown)
    problems: list[str] = field(default_factory=list)
    fix: str = ""

    def render(self) -> str:
        if not self.installed:
            return f"no desktop entry at {self.entry}; install it: {self.fix}"
        lines = [f"desktop entry {self.entry}", f"  starts {self.target}"
                 + ("" if self.target_exists else "  (MISSING)"),
                 f"  .onnx files open with: {self.mime_default or 'unknown (xdg-mime not installed)'}"]
        lines += [f"  problem: {p}" for p in self.problems]
        if self.problems:
            lines.append(f"  fix: {self.fix}")
        return "\n".join(lines)


def reinstall_command() -> str:
    try:
        return f"{_exec_arg(str(studio_executable()))} gui --install-desktop"
    except InstallError:
        return "studio gui --install-desktop"


def _tool(name: str) -> str | None:
    return shutil.which(name)


def query_default() -> str:
    """The desktop file `xdg-mime` says opens .onnx files ("" without xdg-mime)."""
    tool = _tool("xdg-mime")
    if tool is None:
        return ""
    out = subprocess.run([tool, "query", "default", MIME_TYPE], capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


def status() -> DesktopStatus:
    path = entry_path()
    st = DesktopStatus(entry=str(path), installed=path.is_file(), fix=reinstall_command())
    try:
        st.this_install = str(studio_executable())
    except InstallError:
        pass
    if not st.installed:
        return st
    fields = _entry_fields(path)
    st.target = _unquote_first(fields.get("TryExec") or fields.get("Exec", ""))
    st.target_exists = bool(st.target) and os.access(st.target, os.X_OK)
    st.mime_default = query_default()
    if not st.target_exists:
        st.problems.append(f"the entry starts {st.target or '(nothing)'}, which no longer exists (was the venv "
                           "moved or deleted?): the menu item and .onnx double-clicks do nothing")
    if st.mime_default and st.mime_default != DESKTOP_FILE:
        st.problems.append(f".onnx files open with {st.mime_default}, not the studio")
    return st


def stale_entry_warning() -> str | None:
    """One line for `studio gui` to print when the installed entry starts a program that is gone."""
    path = entry_path()
    if not path.is_file():
        return None
    target = _unquote_first(_entry_fields(path).get("TryExec", ""))
    if target and not os.access(target, os.X_OK):
        return (f"warning: the desktop entry {path} starts {target}, which no longer exists (was the venv moved?); "
                f"reinstall it: {reinstall_command()}")
    return None


class _Transaction:
    """Files written under temporary names, renamed into place together; a failure puts the old ones back."""

    def __init__(self) -> None:
        self.done: list[tuple[Path, bytes | None]] = []

    def write(self, path: Path, data: bytes) -> None:
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            old = path.read_bytes() if path.is_file() else None
            tmp.write_bytes(data)
            os.replace(tmp, path)
        except OSError as exc:
            if tmp.parent.is_dir():
                tmp.unlink(missing_ok=True)
            raise InstallError(f"cannot write {path}: {exc.strerror or exc}", offending=str(exc.filename or path),
                               hint="make that folder writable (or remove what is in its way) and install again; "
                                    "nothing was left half-installed") from None
        self.done.append((path, old))

    def rollback(self) -> None:
        for path, old in reversed(self.done):
            if old is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(old)


def _run(cmd: list[str], what: str) -> None:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise InstallError(f"{what} failed: {(out.stderr or out.stdout).strip()[:600]}", offending=" ".join(cmd),
                           hint="fix what it says and install again (nothing was left half-installed)")


def validate(path: Path) -> str | None:
    """`desktop-file-validate`'s errors for ``path`` (None: valid, or the tool is not installed)."""
    tool = _tool("desktop-file-validate")
    if tool is None:
        return None
    out = subprocess.run([tool, str(path)], capture_output=True, text=True, timeout=60)
    errors = [ln for ln in (out.stdout + out.stderr).splitlines() if "error:" in ln]
    return "\n".join(errors) if out.returncode != 0 or errors else None


def _set_default_in_mimeapps(desktop_file: str | None) -> None:
    """Without xdg-mime: the [Default Applications] line of $XDG_CONFIG_HOME/mimeapps.list, set or removed."""
    path = config_home() / "mimeapps.list"
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    out, section = [], ""
    for line in lines:
        if line.strip().startswith("["):
            section = line.strip()
        elif section == "[Default Applications]" and line.split("=", 1)[0].strip() == MIME_TYPE:
            continue
        out.append(line)
    if desktop_file:
        if "[Default Applications]" not in (ln.strip() for ln in out):
            out.append("[Default Applications]")
        at = [ln.strip() for ln in out].index("[Default Applications]") + 1
        out.insert(at, f"{MIME_TYPE}={desktop_file}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


@dataclass
class Installed:
    files: list[str]
    notes: list[str]

    def render(self) -> str:
        return "\n".join(["installed the desktop entry, icon and .onnx association:",
                          *[f"  {f}" for f in self.files], *[f"note: {n}" for n in self.notes]])


def install() -> Installed:
    """Write the entry, icons and MIME type, refresh the caches, make the studio open .onnx files."""
    exe = studio_executable()
    text = entry_text(exe).encode()
    tx = _Transaction()
    notes: list[str] = [] if _tool("desktop-file-validate") else [
        "desktop-file-validate (desktop-file-utils) is not installed: the entry was not validated"]
    try:
        tx.write(entry_path(), text)
        errors = validate(entry_path())
        if errors:
            raise InstallError(f"desktop-file-validate refused the entry: {errors}", offending=str(entry_path()),
                               hint="report it: the entry the studio writes must validate")
        for dest, src in icon_paths().items():
            tx.write(dest, src.read_bytes())
        tx.write(mime_package_path(), MIME_XML.encode())
        if (tool := _tool("update-mime-database")) is not None:
            _run([tool, str(data_home() / "mime")], "update-mime-database")
        else:
            notes.append("update-mime-database (shared-mime-info) is not installed: .onnx files get their type "
                         "once it runs")
        if (tool := _tool("update-desktop-database")) is not None:
            _run([tool, str(entry_path().parent)], "update-desktop-database")
        if (tool := _tool("xdg-mime")) is not None:
            _run([tool, "default", DESKTOP_FILE, MIME_TYPE], "xdg-mime default")
        else:
            _set_default_in_mimeapps(DESKTOP_FILE)
            notes.append(f"xdg-mime (xdg-utils) is not installed: wrote the default into {config_home()}/mimeapps.list")
    except BaseException:
        tx.rollback()
        raise
    return Installed([str(p) for p, _ in tx.done], notes)


def uninstall() -> list[str]:
    """Remove what :func:`install` wrote (and the .onnx default when it is the studio)."""
    removed = []
    for path in [entry_path(), mime_package_path(), *icon_paths()]:
        if path.is_file():
            path.unlink()
            removed.append(str(path))
    if (tool := _tool("update-mime-database")) is not None and (data_home() / "mime").is_dir():
        subprocess.run([tool, str(data_home() / "mime")], capture_output=True, timeout=120)
    if (tool := _tool("update-desktop-database")) is not None and entry_path().parent.is_dir():
        subprocess.run([tool, str(entry_path().parent)], capture_output=True, timeout=120)
    mimeapps = config_home() / "mimeapps.list"
    if mimeapps.is_file() and f"{MIME_TYPE}={DESKTOP_FILE}" in mimeapps.read_text(encoding="utf-8"):
        _set_default_in_mimeapps(None)
    return removed
