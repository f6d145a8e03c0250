"""The rknn plugin speaks the user's language through its own catalogue (studio_rknn/locale, gettext domain
studio_rknn), registered by its manifest's ``messages`` and loaded by studio.core.catalogue as a fallback of the
studio's: job lines, errors and hints in zh_CN with values, flags and commands kept; --json English; every status
and error site of the plugin has its entry (named by file:line when one is missing); a broken plugin catalogue
leaves the studio's Chinese intact. No toolkit environment is needed (a missing one is what several tests use)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from studio.core import catalogue, language
from studio.core.errors import InputError

PLUGIN = Path(__file__).resolve().parents[2] / "plugins" / "studio-rknn"
CJK = re.compile(r"[\u4e00-\u9fff]")
PLACEHOLDER = r"\{\w*\}"


def _domain() -> catalogue.Domain:
    return next(d for d in catalogue.plugin_domains() if d.plugin == "studio-rknn")


def _tiny_static_onnx(tmp_path: Path) -> Path:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_manifest_registers_the_plugins_catalogue() -> None:
    d = _domain()
    import studio_rknn

    assert d.name == "studio_rknn" and d.sources == Path(studio_rknn.__file__).resolve().parent
    assert catalogue.po_path("zh_CN", d.folder, d.name).is_file()  # shipped in the plugin's package
    assert all(d.folder != catalogue.LOCALE_DIR for d in catalogue.plugin_domains())


def test_plugin_po_complete_and_compiles(tmp_path: Path) -> None:
    d = _domain()
    po = catalogue.po_path("zh_CN", d.folder, d.name)
    entries = [e for e in catalogue.parse_po(po.read_text(encoding="utf-8"), po.name) if e.msgid]
    assert len(entries) >= 60
    assert [e.msgid for e in entries if not e.msgstr or "fuzzy" in e.flags] == []
    assert len({e.msgid for e in entries}) == len(entries)
    for e in entries:  # placeholders kept, Chinese in every entry but the flag-only one
        assert sorted(re.findall(PLACEHOLDER, e.msgid)) == sorted(re.findall(PLACEHOLDER, e.msgstr)), e.msgid
        assert CJK.search(e.msgstr) or e.msgid in ("--target {join}", "rknn-toolkit2 {version}: {reason}"), e.msgid
    assert catalogue.compile_po(po, tmp_path / "studio_rknn.mo") == len(entries) + 1  # and the header


def test_every_plugin_status_and_error_site_is_translated() -> None:
    from studio.core.message_extract import missing

    assert missing("zh_CN", _domain()) == {}


def test_a_plugin_status_line_without_translation_is_named(tmp_path: Path) -> None:
    """The same check, on a copy of the plugin's catalogue lacking one env-creation line: named by file:line."""
    from studio.core.message_extract import missing

    d = _domain()
    text = catalogue.po_path("zh_CN", d.folder, d.name).read_text(encoding="utf-8")
    entry = 'msgid "creating a venv at {env}"\nmsgstr "正在 {env} 创建 venv"\n'
    assert entry in text
    copy = catalogue.po_path("zh_CN", tmp_path, d.name)
    copy.parent.mkdir(parents=True)
    copy.write_text(text.replace(entry, ""), encoding="utf-8")
    lacking = missing("zh_CN", catalogue.Domain(d.name, tmp_path, d.sources, d.plugin))
    assert list(lacking) == ["creating a venv at {env}"]
    assert re.fullmatch(r"studio_rknn/env\.py:\d+", lacking["creating a venv at {env}"])


def test_env_creation_and_compile_lines_in_chinese(english_after: None) -> None:
    """The env setup's progress lines and the compile stages as the CLI's progress shows them (ToolLine: pip's
    own line, as it came)."""
    from studio_rknn import env as envmod

    from studio.cli.progress import ProgressBar
    from studio.core.jobs import JobState, ToolLine

    def lines(code: str) -> list[str]:
        catalogue.use(code)
        out, job = io.StringIO(), JobState()
        ProgressBar(job, stream=out)
        say = envmod._reporter(job)
        say("creating a venv at /tmp/rknn/venv", 2)
        say(ToolLine("Collecting rknn-toolkit2==2.5.0"), 6)
        say("rknn-toolkit2 environment ready in 81.5 s, 1.31 GiB", 100)
        job.set_status("rknn-toolkit2 2.5.0: building m.onnx for rk3588 (int8)")
        job.set_status("compile succeeded")
        return [line.split("] ", 1)[1] for line in out.getvalue().splitlines()]

    assert lines("zh_CN") == ["正在 /tmp/rknn/venv 创建 venv", "Collecting rknn-toolkit2==2.5.0",
                              "rknn-toolkit2 环境已就绪，耗时 81.5 秒，占用 1.31 GiB",
                              "rknn-toolkit2 2.5.0：正在为 rk3588 构建 m.onnx（int8）", "编译成功"]
    assert lines("en")[0] == "creating a venv at /tmp/rknn/venv"


def test_compile_without_its_environment_errs_in_chinese(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         english_after: None) -> None:
    """A real `compile --backend rknn` with no toolkit environment: the error and its nested reason in Chinese,
    the path and the fix command kept; the exception's own text English."""
    from studio_rknn.compile import compile_rknn

    from studio.compile.api import CompileOptions

    env = tmp_path / "no-env"
    monkeypatch.setenv("STUDIO_RKNN_ENV", str(env))
    with pytest.raises(InputError) as info:
        compile_rknn(CompileOptions(model=_tiny_static_onnx(tmp_path), target="rk3588", out=tmp_path / "out"))
    assert str(info.value).startswith("rknn-toolkit2's environment is not usable: rknn-toolkit2 environment at")
    catalogue.use("zh_CN")
    zh = info.value.render().splitlines()
    assert zh[0] == f"错误：rknn-toolkit2 的环境不可用：{env} 处的 rknn-toolkit2 环境不存在（首次使用时创建，约 1.4 GB）；" \
                    "请运行：studio-rknn-env create", zh
    assert zh[-1] == "  提示：请用 `studio-rknn-env create`（或 `make rknn-env`）创建一次"


def test_env_cli_in_chinese_json_english(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in (*language.LOCALE_VARS, language.ENV_OVERRIDE)}
    env["PYTHONPATH"] = os.pathsep.join([str(PLUGIN), *sys.path])
    missing = tmp_path / "nothing"

    def run(*args: str, lang: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "studio_rknn.env_cli", "check", "--env", str(missing), *args],
                              capture_output=True, text=True, env={**env, language.ENV_OVERRIDE: lang}, timeout=120)

    zh = run(lang="zh_CN")
    assert zh.returncode == 1
    assert zh.stdout.strip() == f"不可用：{missing} 处的 rknn-toolkit2 环境不存在（首次使用时创建，约 1.4 GB）；请运行：" \
                                "studio-rknn-env create"
    as_json = json.loads(run("--json", lang="zh_CN").stdout)
    assert as_json["reason"].startswith(f"rknn-toolkit2 environment at {missing} is missing") and not as_json["ok"]


def test_a_broken_plugin_catalogue_keeps_the_studios_chinese(tmp_path: Path, english_after: None) -> None:
    d = _domain()
    bad = catalogue.po_path("zh_CN", tmp_path, d.name)
    bad.parent.mkdir(parents=True)
    bad.write_text('msgid "compile succeeded"\nmsgstr oops\n', encoding="utf-8")
    message = catalogue.use("zh_CN", plugins=[catalogue.Domain(d.name, tmp_path, d.sources, d.plugin)])
    assert message is not None and "plugin studio-rknn" in message and "studio_rknn.po:2" in message
    assert catalogue.current() == "zh_CN" and catalogue._("options") == "选项"  # the studio's own catalogue
    assert catalogue.job_text("creating a venv at /x") == "creating a venv at /x"  # that plugin's: English


def test_compile_summary_of_a_failed_rknn_build_in_chinese(english_after: None) -> None:
    """`studio compile`'s summary (CompileReport.summary): the status, the plugin's diagnosis (N_-marked, from
    its own catalogue) and the core's frame in Chinese; the figures, commands and flags kept."""
    from studio.compile.contract import CompileDiagnosis, CompileReport

    rep = CompileReport(status="failed", model="/m/model.onnx", target="rk3588",
                        toolchain={"name": "rknn-toolkit2", "version": "2.5.0", "platform": "rk3588",
                                   "dtype": "int8"},
                        diagnosis=CompileDiagnosis(
                            stage="verify", error_class="parity",
                            message="the simulator's outputs differ from ONNX Runtime's (worst cosine 0.9012, "
                                    "needed 0.98; atol 0.5, rtol 0.5)",
                            hint="a calibration set of real inputs (--calibration DIR), or fp16 (no --quantize "
                                 "int8); the per-layer error is in the report (layer_errors)"),
                        warnings=["accuracy_analysis did not run: worker stopped"])
    english = rep.summary()
    assert english.startswith("compile model.onnx for rk3588: failed\n")
    catalogue.use("zh_CN")
    zh = rep.summary().splitlines()
    assert zh[0] == "为 rk3588 编译 model.onnx：失败"
    assert zh[1] == "  工具链 rknn-toolkit2 2.5.0，平台 rk3588，int8"
    assert zh[2] == "  在 verify 阶段失败：模拟器的输出与 ONNX Runtime 的不一致（最差余弦 0.9012，要求 0.98；atol 0.5，rtol 0.5）"
    assert zh[3].startswith("  提示：请使用真实输入的校准集（--calibration DIR）") and "layer_errors" in zh[3]
    assert zh[4] == "  警告：accuracy_analysis 未运行：worker stopped"
    catalogue.use("en")
    assert rep.summary() == english


@pytest.mark.parametrize("messages", ["studio_bad:locale", {"domain": "bad"}, {"domain": "bad", "locale": "/abs"}])
def test_a_bad_messages_entry_is_the_plugins_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   messages: object) -> None:
    """A manifest whose ``messages`` is not {domain, 'package:folder'}: the plugin is listed with that error (as
    any broken manifest) and registers no catalogue."""
    from importlib.metadata import EntryPoint

    from studio.core import plugins

    (tmp_path / "studio_bad_manifest.py").write_text(
        f"def manifest():\n    return {{'name': 'studio-bad', 'messages': {messages!r}}}\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    p = plugins._from_entry_point(EntryPoint("studio-bad", "studio_bad_manifest:manifest", plugins.GROUP))
    assert p.error == "TypeError: manifest 'messages' must be {'domain': NAME, 'locale': 'package:folder'}"
    assert p.messages == {}


def test_compile_page_backend_state_in_chinese(english_after: None) -> None:
    """The Compile page's state line for the rknn backend (its manifest's status hook, worded by the plugin) reads
    Chinese whether the toolkit's environment is there or not."""
    pytest.importorskip("PySide6")
    from studio.gui.compile.backends import backends

    catalogue.use("zh_CN")
    rknn = next(b for b in backends() if b.id == "rknn")
    assert CJK.search(rknn.reason) and "rknn-toolkit2" in rknn.reason, rknn.reason
    catalogue.use("en")
    assert not CJK.search(next(b for b in backends() if b.id == "rknn").reason)


def _stand_in_env(tmp_path: Path, script: str) -> Path:
    """A toolkit environment folder whose python is a shell script (a worker that hangs or answers nothing)."""
    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    py = env / "bin" / "python"
    py.write_text("#!/bin/sh\n" + script + "\n", encoding="utf-8")
    py.chmod(0o755)
    return env


def test_worker_and_client_errors_in_chinese(tmp_path: Path, english_after: None) -> None:
    """The client's errors when the worker hangs, answers nothing or cannot start (real subprocesses), and the
    lines that carry them (the compile diagnosis, the verifier's error, the parity note), in zh_CN through the
    plugin's catalogue; the action, the seconds, the exit code, paths and commands kept."""
    from studio_rknn import client

    errors = {}
    for name, script, timeout in (("hang", "exec sleep 30", 1), ("silent", "exit 3", 30)):
        with pytest.raises(client.WorkerError) as caught:
            client.call("version", env=_stand_in_env(tmp_path / name, script), timeout=timeout)
        errors[name] = str(caught.value)
    with pytest.raises(client.WorkerError) as caught:
        client.call("version", env=tmp_path / "absent", timeout=30)
    errors["absent"] = str(caught.value)
    assert errors["hang"] == "rknn worker 'version' did not finish within 1 s"
    assert errors["silent"].startswith("rknn worker 'version' failed: the rknn worker answered nothing (exit 3)")
    catalogue.use("zh_CN")
    zh = {k: catalogue.job_text(v) for k, v in errors.items()}
    build = catalogue.job_text(f"rknn-toolkit2 2.5.0: {errors['hang']}")
    env_error = catalogue.job_text(f"the toolkit environment at /e did not run: {errors['hang']}; rebuild it: "
                                   "studio-rknn-env create --force")
    note = catalogue.job_text("parity in rknn-toolkit2's x86 simulator (fp16), not on the NPU: the board's runtime "
                              "runs the same model.rknn; passed = cosine >= 0.999 and within atol 0.05 / rtol 0.05")
    catalogue.use("en")
    assert zh["hang"] == "rknn 工作进程 'version' 未在 1 秒内完成"
    assert zh["silent"].startswith("rknn 工作进程 'version' 失败：rknn 工作进程没有任何应答（退出码 3）")
    assert zh["absent"].startswith("rknn 工作进程 'version' 失败：") and str(tmp_path / "absent") in zh["absent"]
    assert build == "rknn-toolkit2 2.5.0：rknn 工作进程 'version' 未在 1 秒内完成"
    assert env_error == "位于 /e 的工具包环境无法运行：rknn 工作进程 'version' 未在 1 秒内完成；请重建：studio-rknn-env create --force"
    assert note.startswith("一致性在 rknn-toolkit2 的 x86 模拟器中测得（fp16），而非在 NPU 上") and "atol 0.05 / rtol 0.05" in note


def test_env_cli_help_in_chinese() -> None:
    """`studio-rknn-env --help`: its description and every option's help in zh_CN (argparse's own words the
    studio's catalogue's); the command names, flags and the variable kept; English without a catalogue."""
    env = {k: v for k, v in os.environ.items() if k not in (*language.LOCALE_VARS, language.ENV_OVERRIDE)}
    env["PYTHONPATH"] = os.pathsep.join([str(PLUGIN), *sys.path])

    def run(lang: str) -> str:
        done = subprocess.run([sys.executable, "-m", "studio_rknn.env_cli", "--help"], capture_output=True, text=True,
                              env={**env, language.ENV_OVERRIDE: lang}, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    zh, en = run("zh_CN"), run("en")
    assert zh.startswith("用法：studio-rknn-env ") and "创建、检查或定位 rknn-toolkit2 环境" in zh
    assert "--env ENV            环境文件夹（默认：$STUDIO_RKNN_ENV 或缓存目录）" in zh
    assert "--json               check：以 JSON 打印状态" in zh and "{create,check,path}" in zh
    assert not re.search(r"\b(make|remake|import|print|environment folder)\b", zh), zh
    assert en.startswith("usage: studio-rknn-env ") and "check: print the status as JSON" in en and not CJK.search(en)
