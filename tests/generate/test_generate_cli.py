"""`studio generate`: the answer, --json fields, bad input as exit 2 naming the flag, and the command running with
torch and transformers blocked (the run-time path imports neither)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from studio.cli.main import main
from studio.export.api import ExportReport

pytestmark = pytest.mark.export


def test_prints_the_answer(exported: tuple[Path, ExportReport], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", str(exported[0]), "--prompt", "a photo of a cat", "--max-new-tokens", "8"]) == 0
    out, err = capsys.readouterr()
    assert out.endswith("\n")
    assert "8 tokens, length" in err and "tokens/s" in err


def test_summary_line_in_chinese(exported: tuple[Path, ExportReport], capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch, english_after: None) -> None:
    """The closing line on stderr in the user's language; the finish reason (an API value) and figures kept."""
    import re

    monkeypatch.setenv("STUDIO_LANGUAGE", "zh_CN")
    assert main(["generate", str(exported[0]), "--prompt", "a photo of a cat", "--max-new-tokens", "8"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"\[8 个 token，length；首 token 延迟 [0-9.]+ ms，\d+ token/s\]", err), err
    monkeypatch.setenv("STUDIO_LANGUAGE", "en")
    assert main(["generate", str(exported[0]), "--prompt", "a photo of a cat", "--max-new-tokens", "8"]) == 0
    assert re.search(r"\[8 tokens, length; ttft [0-9.]+ ms, \d+ tokens/s\]", capsys.readouterr().err)


def test_json_output(exported: tuple[Path, ExportReport], capsys: pytest.CaptureFixture[str]) -> None:
    folder, report = exported
    first = report.generation.prompts[0]  # type: ignore[union-attr]
    rc = main(["generate", str(folder), "--prompt", "a photo of a cat", "--max-new-tokens",
               str(first["max_new_tokens"]), "--json", "--hf-parity"])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert data["token_ids"] == first["hf_ids"]
    assert {"text", "token_ids", "ttft_ms", "tokens_per_s", "finish_reason", "hf_parity"} <= set(data)
    assert data["ttft_ms"] > 0 and data["tokens_per_s"] > 0
    assert data["hf_parity"]["export_validation"]["status"] == "passed"
    assert data["hf_parity"]["this_prompt"]["match"] is True


def test_sampling_flags_and_seed(exported: tuple[Path, ExportReport], capsys: pytest.CaptureFixture[str]) -> None:
    args = ["generate", str(exported[0]), "--prompt", "two", "--max-new-tokens", "16", "--temperature", "1.2",
            "--top-k", "40", "--top-p", "0.9", "--seed", "5", "--json"]
    runs = []
    for _ in range(2):
        assert main(args) == 0
        runs.append(json.loads(capsys.readouterr().out))
    assert runs[0]["token_ids"] == runs[1]["token_ids"]
    assert runs[0]["sampling"] == {"temperature": 1.2, "top_k": 40, "top_p": 0.9, "seed": 5, "mode": "sampling"}


def test_stream_and_stop_token(exported: tuple[Path, ExportReport], capsys: pytest.CaptureFixture[str]) -> None:
    folder = str(exported[0])
    assert main(["generate", folder, "--prompt", "two", "--max-new-tokens", "6", "--json"]) == 0
    ids = json.loads(capsys.readouterr().out)["token_ids"]
    assert main(["generate", folder, "--prompt", "two", "--max-new-tokens", "6", "--json",
                 "--stop-token-id", str(ids[1])]) == 0
    cut = json.loads(capsys.readouterr().out)
    assert cut["token_ids"] == ids[: ids.index(ids[1]) + 1] and cut["finish_reason"] == "stop"
    assert main(["generate", folder, "--prompt", "two", "--max-new-tokens", "6", "--stream"]) == 0
    assert "6 tokens" in capsys.readouterr().err


@pytest.mark.parametrize(("extra", "flag"), [
    (["--max-new-tokens", "0"], "--max-new-tokens"), (["--max-new-tokens", "-2"], "--max-new-tokens"),
    (["--image", "cat.png"], "--image"), (["--audio", "a.wav"], "--audio"), (["--temperature", "-1"], "--temperature"),
    (["--top-p", "2"], "--top-p"), (["--prompt-ids", "1,2", "--prompt", "x"], "--prompt-ids"),
    (["--prompt-ids", "99999"], "--prompt-ids"),
])
def test_bad_input_exits_2_naming_the_flag(exported: tuple[Path, ExportReport], capsys: pytest.CaptureFixture[str],
                                           extra: list[str], flag: str) -> None:
    argv = ["generate", str(exported[0])] + (["--prompt", "a cat"] if "--prompt" not in extra
                                              and "--prompt-ids" not in extra else []) + extra
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and flag in err and "Traceback" not in err
    if flag in ("--image", "--audio"):
        assert "this model takes text only" in err


def test_prompt_longer_than_the_context(exported: tuple[Path, ExportReport],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", str(exported[0]), "--prompt", "cat " * 80]) == 2
    err = capsys.readouterr().err
    assert "--prompt" in err and "maximum context is 128" in err


def test_not_an_export_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", str(tmp_path), "--prompt", "x"]) == 2
    assert "generation.json" in capsys.readouterr().err


def test_generate_runs_without_torch(exported: tuple[Path, ExportReport]) -> None:
    code = textwrap.dedent(f"""
        import importlib.abc, json, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in {{'torch', 'transformers', 'PySide6'}}:
                    raise ImportError('blocked import of ' + name)
        sys.meta_path.insert(0, Block())
        from studio.cli.main import main
        rc = main(["generate", {str(exported[0])!r}, "--prompt", "a photo of a cat", "--max-new-tokens", "5",
                   "--temperature", "0.7", "--seed", "1", "--json"])
        assert rc == 0, rc
        assert 'torch' not in sys.modules and 'transformers' not in sys.modules
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(json.loads(proc.stdout)["token_ids"]) == 5
