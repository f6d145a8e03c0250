"""Shell completion of studio, multimodal-export, multimodal-serve and studio-agent, driven through real shells.

bash: the generated script is sourced into `bash --norc` and its function called the way readline calls it
(COMP_WORDS / COMP_CWORD / COMP_LINE / COMP_POINT), and in an interactive bash under tmux where Tab is pressed
after `studio completion bash --install` (bash-completion's on-demand loading). zsh: an interactive `zsh -f`
under tmux with compinit and the installed `_studio` on fpath. Candidates are compared with the registries
themselves (targets, boards, pages), never with a list written here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studio.cli.completion_cmd import BASH_COMPLETION_SCRIPTS

BIN = Path(sys.executable).parent
STUDIO = BIN / "studio"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMP_", "_ARGCOMPLETE", "BASH_COMPLETION"))}
    env.update(PATH=f"{BIN}:{env.get('PATH', '/usr/bin:/bin')}", HOME=str(tmp_path / "home"),
               XDG_DATA_HOME=str(tmp_path / "home" / ".local" / "share"), TERM="xterm")
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


BASH_DRIVER = r"""
source "$1"
c() {
  COMP_LINE="$2"; COMP_POINT=${#COMP_LINE}; COMP_TYPE=9
  read -ra COMP_WORDS <<< "$COMP_LINE"; [[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
  _python_argcomplete "${COMP_WORDS[0]}" 2>/dev/null
  printf '%s\n' "${COMPREPLY[@]}"
}
c "$@"
"""


def bash_complete(tmp_path: Path, line: str, keep_env: tuple[str, ...] = ()) -> list[str]:
    script = tmp_path / "studio.bash"
    if not script.exists():
        script.write_text(subprocess.run([str(STUDIO), "completion", "bash"], capture_output=True, text=True,
                                         check=True).stdout)
    driver = tmp_path / "driver.sh"
    driver.write_text(BASH_DRIVER)
    env = _env(tmp_path)
    env = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "STUDIO_TEST_BLOCKED_LOG") or k in keep_env}
    proc = subprocess.run(["bash", "--norc", "--noprofile", str(driver), str(script), line], capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [w.strip() for w in proc.stdout.splitlines() if w.strip()]


def test_commands_complete_from_the_command_table(tmp_path: Path) -> None:
    from studio.cli.main import COMMANDS

    assert bash_complete(tmp_path, "studio ins") == ["inspect"]
    every = bash_complete(tmp_path, "studio ")
    assert set(COMMANDS) <= set(every), set(COMMANDS) - set(every)


def test_flag_values_come_from_the_registries(tmp_path: Path) -> None:
    from studio.compile.targets import target_ids
    from studio.gui.page_ids import page_ids
    from studio.inspect.profiles import list_targets
    from studio.package.boards import board_ids

    targets = [p.id for p in list_targets()]
    assert bash_complete(tmp_path, "studio inspect --target ") == [*targets, "all"]
    assert bash_complete(tmp_path, "studio inspect model.onnx -t ") == [*targets, "all"]
    assert bash_complete(tmp_path, "studio diff a.onnx b.onnx --target ") == targets
    assert bash_complete(tmp_path, "studio package --board ") == list(board_ids())
    assert bash_complete(tmp_path, "studio package m.onnx --board rk") == [b for b in board_ids()
                                                                          if b.startswith("rk")]
    assert bash_complete(tmp_path, "studio-agent --board ") == ["auto", "any", *board_ids()]
    assert bash_complete(tmp_path, "studio compile --target ") == target_ids()
    assert bash_complete(tmp_path, "studio gui --page ") == page_ids()
    assert "inspect" in page_ids() and "package" in page_ids()


def test_flags_come_from_the_parsers(tmp_path: Path) -> None:
    """Every long flag of a command's real parser completes (the seed's aliases included)."""
    from studio.cli.main import build_command_parser
    from studio.cli.triton_cmd import serve_alias_parser

    def longs(parser) -> set[str]:  # type: ignore[no-untyped-def]
        return {o for a in parser._actions for o in a.option_strings if o.startswith("--")}

    assert longs(build_command_parser("export")[0]) <= set(bash_complete(tmp_path, "multimodal-export --"))
    assert longs(serve_alias_parser()) <= set(bash_complete(tmp_path, "multimodal-serve --"))
    assert longs(build_command_parser("package")[0]) <= set(bash_complete(tmp_path, "studio package m.onnx --"))
    assert bash_complete(tmp_path, "studio triton build") == ["build-repo"]
    assert bash_complete(tmp_path, "studio-agent --allow") == ["--allow-trust-push"]


def test_a_profile_folder_on_the_line_adds_its_targets(tmp_path: Path) -> None:
    """Values are computed for the line as typed: --profile-dir's own profiles complete too."""
    src = Path(__file__).resolve().parents[2] / "studio" / "resources" / "targets" / "rk3588.yaml"
    text = src.read_text(encoding="utf-8").replace("id: rk3588", "id: my-npu", 1)
    assert "id: my-npu" in text
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "my-npu.yaml").write_text(text, encoding="utf-8")
    got = bash_complete(tmp_path, f"studio inspect --profile-dir {tmp_path / 'profiles'} --target my")
    assert got == ["my-npu"]


BLOCKER = """
import importlib.abc, os, sys
class _Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('torch', 'transformers', 'PySide6'):
            with open(os.environ['STUDIO_TEST_BLOCKED_LOG'], 'a') as f:
                f.write(name + '\\n')
            raise ImportError('blocked import of ' + name)
        return None
sys.meta_path.insert(0, _Block())
"""


def test_completion_imports_neither_torch_nor_qt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every program's Tab, with torch, transformers and PySide6 made unimportable (a sitecustomize on
    PYTHONPATH): the same candidates come back and no import of them was even tried."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER)
    log = tmp_path / "blocked.log"
    lines = ["studio inspect --target ", "studio gui --page ", "studio export --mod", "studio-agent --board ",
             "multimodal-serve --dev", "multimodal-export --exp", "studio ins"]
    expected = {line: bash_complete(tmp_path, line) for line in lines}
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("STUDIO_TEST_BLOCKED_LOG", str(log))
    for line in lines:
        got = bash_complete(tmp_path, line, keep_env=("PYTHONPATH", "STUDIO_TEST_BLOCKED_LOG"))
        assert got and got == expected[line], (line, got)
    assert not log.exists(), log.read_text()


def _tmux(tmp_path: Path, shell_cmd: list[str], steps: list[tuple[str, str]], expect: str) -> str:
    """Run an interactive shell in tmux, type each (keys, wait-for) step, and return the screen once ``expect``
    shows (or after 30 s)."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (Debian package tmux)")
    sock = str(tmp_path / f"tmux{len(list(tmp_path.glob('tmux*.sock')))}.sock")  # a new server each time
    env = _env(tmp_path)
    subprocess.run(["tmux", "-S", sock, "new-session", "-d", "-x", "200", "-y", "40", *shell_cmd], env=env,
                   check=True, timeout=30)
    try:
        screen = ""
        for keys, wait_for in [*steps, ("", expect)]:
            if keys:
                subprocess.run(["tmux", "-S", sock, "send-keys", *keys.split("\x00")], check=True, timeout=10)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                screen = subprocess.run(["tmux", "-S", sock, "capture-pane", "-p"], capture_output=True, text=True,
                                        timeout=10).stdout
                if wait_for in screen:
                    break
                time.sleep(0.2)
        return screen
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True, timeout=10)


def test_installed_bash_completion_loads_on_the_first_tab(tmp_path: Path) -> None:
    """`studio completion bash --install` into bash-completion's per-user folder; a fresh interactive bash
    completes `studio ins<Tab>` and `studio package --board rk<Tab>` with nothing else set up."""
    loader = next((p for p in BASH_COMPLETION_SCRIPTS if p.is_file()), None)
    if loader is None:
        pytest.skip("bash-completion is not installed (Debian package bash-completion; `make desktop-deps`)")
    env = _env(tmp_path)
    out = subprocess.run([str(STUDIO), "completion", "bash", "--install"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    folder = Path(env["XDG_DATA_HOME"]) / "bash-completion" / "completions"
    assert sorted(p.name for p in folder.iterdir()) == sorted(["studio", "multimodal-export", "multimodal-serve",
                                                              "studio-agent"])
    assert "then:" not in out.stdout  # nothing left to do by hand
    rc = tmp_path / "bashrc"
    rc.write_text(f"PS1='$ '\nsource {loader}\n")
    screen = _tmux(tmp_path, ["bash", "--noprofile", "--rcfile", str(rc), "-i"],
                   [("studio ins\x00Tab", "studio inspect")], "studio inspect")
    assert "$ studio inspect" in screen, screen
    screen = _tmux(tmp_path, ["bash", "--noprofile", "--rcfile", str(rc), "-i"],
                   [("studio package m.onnx --board rk\x00Tab", "rk3588")], "rk3588")
    assert "--board rk3588" in screen, screen
    removed = subprocess.run([str(STUDIO), "completion", "bash", "--uninstall"], capture_output=True, text=True,
                             env=env, timeout=60)
    assert removed.returncode == 0 and not any(folder.iterdir()), removed.stdout


def test_zsh_completes_through_compinit(tmp_path: Path) -> None:
    if shutil.which("zsh") is None:
        pytest.skip("zsh is not installed (Debian package zsh; `make desktop-deps` installs it as root)")
    env = _env(tmp_path)
    out = subprocess.run([str(STUDIO), "completion", "zsh", "--install"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    folder = Path(env["XDG_DATA_HOME"]) / "zsh" / "site-functions"
    assert (folder / "_studio").read_text().startswith("#compdef studio multimodal-export multimodal-serve "
                                                       "studio-agent")
    assert f"fpath=({folder} $fpath)" in out.stdout  # the one line the user adds
    zdot = tmp_path / "zdot"
    zdot.mkdir()
    (zdot / ".zshrc").write_text(f"PS1='%% '\nfpath=({folder} $fpath)\nautoload -Uz compinit && compinit -u\n")
    zenv_cmd = ["env", f"ZDOTDIR={zdot}", "zsh", "-i"]
    screen = _tmux(tmp_path, zenv_cmd, [("studio ins\x00Tab", "studio inspect")], "studio inspect")
    assert "% studio inspect" in screen, screen
    screen = _tmux(tmp_path, zenv_cmd, [("studio inspect m.onnx --target rk\x00Tab", "rk3588")], "rk3588")
    assert "--target rk3588" in screen, screen
    screen = _tmux(tmp_path, zenv_cmd, [("studio-agent --board jet\x00Tab", "jetson")], "jetson-orin-nano")
    assert "--board jetson-orin-nano" in screen, screen


def test_bad_input(tmp_path: Path) -> None:
    env = {**_env(tmp_path), "SHELL": "/bin/fish"}
    proc = subprocess.run([str(STUDIO), "completion"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2 and "SHELL" in proc.stderr and "studio completion bash" in proc.stderr
    proc = subprocess.run([str(STUDIO), "completion", "bash", "--dir", str(tmp_path)], capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 2 and "--install" in proc.stderr
    blocked = tmp_path / "file"
    blocked.write_text("x")
    proc = subprocess.run([str(STUDIO), "completion", "bash", "--install", "--dir", str(blocked / "sub")],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2 and str(blocked / "sub") in proc.stderr
