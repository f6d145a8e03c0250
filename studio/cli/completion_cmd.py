"""`studio completion [bash|zsh] [--install | --uninstall] [--dir DIR]`: shell completion of the four programs.

Without a flag the script is printed (`eval "$(studio completion bash)"` in an rc file works too); ``--install``
writes it where the shell loads completions per user: bash-completion's on-demand folder
(``$BASH_COMPLETION_USER_DIR`` or ``$XDG_DATA_HOME/bash-completion/completions``, one file per program name) or
a zsh function folder (``$XDG_DATA_HOME/zsh/site-functions/_studio``) that the next steps put on ``fpath``.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path

BASH_COMPLETION_SCRIPTS = (Path("/usr/share/bash-completion/bash_completion"), Path("/etc/bash_completion"))


def add_arguments(p: argparse.ArgumentParser) -> None:
    from studio.cli.completion import SHELLS

    p.add_argument("shell", nargs="?", choices=SHELLS, help="the shell (default: the one $SHELL names)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--install", action="store_true", help="write the script into the shell's per-user completion "
                                                          "folder and say what else (if anything) to do")
    g.add_argument("--uninstall", action="store_true", help="remove what --install wrote")
    p.add_argument("--dir", type=Path, default=None, metavar="DIR",
                   help="with --install/--uninstall: this folder instead of the per-user one")


def _data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def default_dir(shell: str) -> Path:
    if shell == "bash":
        user = os.environ.get("BASH_COMPLETION_USER_DIR")
        return (Path(user) if user else _data_home() / "bash-completion") / "completions"
    return _data_home() / "zsh" / "site-functions"


def file_names(shell: str) -> list[str]:
    """bash-completion loads ``completions/<command>`` on a command's first Tab: one file per program;
    zsh's ``_studio`` names all four on its ``#compdef`` line."""
    from studio.cli.completion import PROGRAMS

    return list(PROGRAMS) if shell == "bash" else ["_studio"]


@dataclass
class Installed:
    shell: str
    folder: Path
    files: list[Path] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)

    def render(self) -> str:
        text = f"wrote {self.shell} completion for studio, multimodal-export, multimodal-serve, studio-agent:\n"
        text += "".join(f"  {f}\n" for f in self.files)
        if self.next_steps:
            text += "then:\n" + "".join(f"  {s}\n" for s in self.next_steps)
        else:
            text += "open a new shell and press Tab after `studio `\n"
        return text.rstrip("\n")


def _shell_from_env() -> str:
    from studio.cli.completion import SHELLS
    from studio.core.errors import InputError

    name = Path(os.environ.get("SHELL", "")).name
    if name in SHELLS:
        return name
    raise InputError(f"cannot tell the shell from $SHELL ('{os.environ.get('SHELL', '')}')", offending="SHELL",
                     hint="name it: `studio completion bash` or `studio completion zsh`")


def _next_steps(shell: str, folder: Path, custom: bool) -> list[str]:
    if shell == "bash":
        on_demand = default_dir("bash")
        if not custom and folder == on_demand and any(p.is_file() for p in BASH_COMPLETION_SCRIPTS):
            return []  # bash-completion loads completions/<command> on the first Tab
        steps = [f"add to ~/.bashrc: source {folder / 'studio'}"]
        if not any(p.is_file() for p in BASH_COMPLETION_SCRIPTS):
            steps.append("(or install bash-completion, e.g. `sudo apt-get install bash-completion`, which loads it "
                         "on the first Tab)")
        return steps
    zshrc = Path(os.environ.get("ZDOTDIR") or Path.home()) / ".zshrc"
    try:
        rc = zshrc.read_text(encoding="utf-8")
    except OSError:
        rc = ""
    if str(folder) in rc or (str(folder).replace(str(Path.home()), "~") in rc):
        return ["open a new zsh (the folder is already on fpath in ~/.zshrc)"]
    return [f"add to {zshrc}, before `compinit`: fpath=({folder} $fpath)",
            "and, if it is not there yet: autoload -Uz compinit && compinit"]


def install(shell: str, folder: Path | None = None) -> Installed:
    """Write the script (atomically, each file) and say what the user still has to do."""
    from studio.cli.completion import script
    from studio.core.atomic import write_text_atomic
    from studio.core.errors import InputError

    text = script(shell)
    target = folder or default_dir(shell)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the completion folder {target}: {exc.strerror}", offending=str(target),
                         hint="pass a writable folder with --dir") from None
    out = Installed(shell, target)
    for name in file_names(shell):
        out.files.append(write_text_atomic(target / name, text))
    out.next_steps = _next_steps(shell, target, folder is not None)
    return out


def uninstall(shell: str, folder: Path | None = None) -> list[Path]:
    target = folder or default_dir(shell)
    removed = []
    for name in file_names(shell):
        p = target / name
        if p.is_file() and "Deployment Studio: completion" in p.read_text(encoding="utf-8", errors="replace"):
            p.unlink()
            removed.append(p)
    return removed


def run(args: argparse.Namespace) -> int:
    from studio.cli.completion import script

    shell = args.shell or _shell_from_env()
    if args.install:
        print(install(shell, args.dir).render())
    elif args.uninstall:
        removed = uninstall(shell, args.dir)
        print("\n".join(f"removed {p}" for p in removed) if removed else
              f"no studio {shell} completion in {args.dir or default_dir(shell)}")
    else:
        if args.dir is not None:
            from studio.core.errors import InputError

            raise InputError("--dir goes with --install or --uninstall", offending="--dir",
                             hint=f"studio completion {shell} --install --dir {args.dir}")
        print(script(shell), end="")
    return 0
