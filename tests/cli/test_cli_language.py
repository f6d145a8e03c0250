"""The CLI in the user's language (studio.core.catalogue): help, the error frame and CLI lines in zh_CN when
asked; --json, the docs and shell completion untouched; English when nothing is asked; one warning for an
unknown code. Real subprocesses of `studio` with the language in their environment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from studio.core import catalogue, language
from studio.core.errors import InputError

CJK = re.compile(r"[\u4e00-\u9fff]")
LOCALE_VARS = (*language.LOCALE_VARS, language.ENV_OVERRIDE)
PLACEHOLDER = r"\{\w*\}|%\(\w+\)s|%%"  # str.format and argparse fields, argparse's escaped %


def _studio(*args: str, lang: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in LOCALE_VARS}
    if lang is not None:
        env[language.ENV_OVERRIDE] = lang
    return subprocess.run([sys.executable, "-m", "studio.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.fixture(scope="module")
def tiny_onnx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    path = tmp_path_factory.mktemp("lang") / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_help_in_chinese_and_english() -> None:
    zh = _studio("--help", lang="zh_CN")
    assert zh.returncode == 0
    assert "将 HuggingFace 模型导出为经过验证的 ONNX" in zh.stdout  # export's line in the command list
    assert "对照加速器目标检查 ONNX 模型" in zh.stdout
    assert "--debug" in zh.stdout and "inspect" in zh.stdout  # flags and command names stay
    en = _studio("--help", lang=None)
    assert "export a HuggingFace model to validated ONNX" in en.stdout and not CJK.search(en.stdout)


def test_subcommand_help_in_chinese() -> None:
    zh = _studio("inspect", "--help", lang="zh_CN")
    assert zh.returncode == 0
    assert "对照加速器目标检查 ONNX 模型" in zh.stdout  # the description
    assert "不在标准错误输出进度行" in zh.stdout  # --quiet's help
    assert "--fail-on" in zh.stdout and "{unsupported,risky,unknown,dynamic}" in zh.stdout


def test_error_frame_in_chinese_same_exit_code() -> None:
    zh = _studio("inspect", "/nonexistent.onnx", lang="zh_CN")
    en = _studio("inspect", "/nonexistent.onnx", lang="en")
    assert en.returncode == zh.returncode == 2
    assert en.stderr.startswith("error: model file not found\n  at: /nonexistent.onnx\n  hint: ")
    assert zh.stderr.startswith("错误：找不到模型文件\n  位置：/nonexistent.onnx\n  提示：")


def test_unknown_command_in_chinese() -> None:
    zh = _studio("no-such-command", lang="zh_CN")
    assert zh.returncode == 2 and "错误：未知命令 'no-such-command'" in zh.stderr


def test_json_output_identical(tiny_onnx: Path) -> None:
    outs = {}
    for lang in ("en", "zh_CN"):
        done = _studio("inspect", str(tiny_onnx), "--format", "json", "--quiet", lang=lang)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        report.pop("timings")  # wall-clock seconds differ between any two runs
        outs[lang] = report
        listing = _studio("targets", "--json", lang=lang)
        outs[lang + "-targets"] = listing.stdout
    assert outs["en"] == outs["zh_CN"]
    assert outs["en-targets"] == outs["zh_CN-targets"] and outs["en-targets"]


def test_unknown_code_warns_once_in_english() -> None:
    done = _studio("inspect", "/nonexistent.onnx", lang="xx_YY")
    assert done.returncode == 2
    assert done.stderr.count("unknown language 'xx_YY'") == 1
    assert done.stderr.startswith("warning: unknown language 'xx_YY' (STUDIO_LANGUAGE)")
    assert "error: model file not found" in done.stderr and not CJK.search(done.stderr)


def test_locale_variables_follow_gettext_order() -> None:
    env = {"LANG": "zh_CN.UTF-8"}
    assert language.resolve(language.SYSTEM, env).code == "zh_CN"
    assert language.resolve(language.SYSTEM, {"LANGUAGE": "en_US:zh_CN", **env}).code == "en"
    assert language.resolve(language.SYSTEM, {"LANG": "fr_FR.UTF-8"}) == language.Choice("en", "locale")
    assert language.resolve(language.SYSTEM, {}).code == "en"  # no Qt here: English
    assert language.resolve("zh_CN", {language.ENV_OVERRIDE: "en"}).source == "setting"


def test_saved_setting_reaches_the_cli(monkeypatch: pytest.MonkeyPatch, english_after: None) -> None:
    from studio.core.settings import Settings

    monkeypatch.delenv(language.ENV_OVERRIDE, raising=False)
    s = Settings()
    language.save_language(s, "zh_CN")
    s.save()
    assert catalogue.init(env={}).source == "setting"
    assert catalogue.current() == "zh_CN" and catalogue._("options") == "选项"


def test_render_translated_str_and_dict_english(english_after: None) -> None:
    exc = InputError("model file not found", offending="/x.onnx", hint="check the path (an .onnx file)")
    catalogue.use("zh_CN")
    assert exc.render() == "错误：找不到模型文件\n  位置：/x.onnx\n  提示：请检查路径（应为 .onnx 文件）"
    assert str(exc) == "model file not found\n  at: /x.onnx\n  hint: check the path (an .onnx file)"
    assert exc.to_dict()["message"] == "model file not found"
    catalogue.use("en")
    assert exc.render().startswith("error: model file not found")


def test_po_complete_and_compiles(tmp_path: Path) -> None:
    po = catalogue.po_path("zh_CN")
    entries = catalogue.parse_po(po.read_text(encoding="utf-8"), po.name)
    body = [e for e in entries if e.msgid]
    assert len(body) >= 150
    assert [e.msgid for e in body if not e.msgstr] == []
    assert [e.msgid for e in entries if "fuzzy" in e.flags] == []
    assert len({e.msgid for e in body}) == len(body)
    for e in body:  # placeholders kept, so .format() cannot fail in Chinese
        assert sorted(re.findall(PLACEHOLDER, e.msgid)) == sorted(re.findall(PLACEHOLDER, e.msgstr))
    mo = tmp_path / "studio.mo"
    assert catalogue.compile_po(po, mo) == len(entries)  # the header entry counts too
    import gettext

    with mo.open("rb") as fh:
        t = gettext.GNUTranslations(fh)
    assert t.gettext("options") == "选项" and t.info()["content-type"].endswith("UTF-8")


def test_broken_po_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "studio.po"
    bad.write_text('msgid "a"\nmsgstr oops\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"studio.po:2"):
        catalogue.compile_po(bad, tmp_path / "studio.mo")


def test_docs_and_completion_stay_english(english_after: None) -> None:
    from studio.cli.completion import program_parser, studio_parser
    from studio.cli.docs import cli_reference

    catalogue.use("zh_CN")
    assert not CJK.search(cli_reference())
    assert not CJK.search(program_parser("multimodal-export").format_help())
    parser = studio_parser(["studio", "inspect"])
    assert not CJK.search(parser.format_help())


def test_every_help_formats_in_chinese(english_after: None) -> None:
    """Every built-in command's help (nested subcommands too) formats with the catalogue on: a translation that
    lost an argparse %-field would raise here, not in a user's terminal."""
    import argparse

    from studio.cli.main import build_command_parser
    from studio.core.commands import COMMANDS, available

    catalogue.use("zh_CN")
    chinese = 0

    def walk(parser: argparse.ArgumentParser) -> None:
        nonlocal chinese
        chinese += bool(CJK.search(parser.format_help()))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    walk(child)

    for name in COMMANDS:
        if available(name):
            walk(build_command_parser(name)[0])
    assert chinese >= len([n for n in COMMANDS if available(n)])


def test_parse_errors_in_chinese_same_exit_code() -> None:
    zh = _studio("inspect", "m.onnx", "--format", "xml", lang="zh_CN")
    en = _studio("inspect", "m.onnx", "--format", "xml", lang="en")
    assert zh.returncode == en.returncode == 2
    assert zh.stderr.startswith("用法：studio inspect ")
    assert "studio inspect：错误：参数 --format/-f：无效的选项：'xml'" in zh.stderr
    assert en.stderr.startswith("usage: studio inspect ")
    assert en.stderr.endswith("studio inspect: error: argument --format/-f: invalid choice: 'xml' (choose from "
                              "'text', 'json', 'html', 'sarif')\n")
    missing = _studio("package", "x.onnx", lang="zh_CN")
    assert missing.returncode == 2 and "缺少必需的参数：--board, --key, --out" in missing.stderr


def test_every_catalogue_call_has_a_translation() -> None:
    """Every literal text the code passes to the catalogue (``_("...")`` / ``tr("...", ...)`` in a module that
    imports it; the studio's and each plugin's) has its zh_CN entry: a new summary line cannot ship English-only
    by accident."""
    import ast

    def msgids(domain: catalogue.Domain) -> set[str]:
        po = catalogue.po_path("zh_CN", domain.folder, domain.name)
        return {e.msgid for e in catalogue.parse_po(po.read_text(encoding="utf-8"), po.name)}

    studio = catalogue.studio_domain()
    missing: dict[str, str] = {}
    for domain in (studio, *catalogue.plugin_domains()):  # a plugin's: its own catalogue, or the studio's frame
        have = msgids(domain) | msgids(studio)
        root = domain.sources
        for f in sorted(root.rglob("*.py")):
            src = f.read_text(encoding="utf-8")
            if "studio.core.catalogue import" not in src:
                continue
            for n in ast.walk(ast.parse(src)):
                if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("_", "tr")
                        and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)
                        and n.args[0].value not in have):
                    missing.setdefault(n.args[0].value, f"{f.relative_to(root.parent)}:{n.lineno}")
    assert not missing, missing


def test_domain_summaries_in_chinese(english_after: None) -> None:
    """The deploy and bundle-verify summaries speak the catalogue's language; names, numbers and paths stay."""
    from studio.edge.verify import VerifyReport
    from studio.package.client import DeployReport

    dep = DeployReport(agent="http://board:8080", bundle="b.tar", name="clip", version="2", previous="1",
                       warmup_ms=12.5, upload_bytes=3_000_000, upload_s=0.5, total_s=0.7, served_models=["clip"])
    ver = VerifyReport(bundle="b.tar", name="clip", version="2", board="rk3588", target="rk3588",
                       signer_key_id="abc123", created="2026-12-05", files=4, total_bytes=2_000_000, seconds=0.25)
    english = dep.render(), ver.render()
    assert english[0].startswith("deployed clip 2 (was 1) to http://board:8080: 3.0 MB")
    catalogue.use("zh_CN")
    zh = dep.render(), ver.render()
    catalogue.use("en")
    assert zh[0].startswith("已部署 clip 2（原为 1） 到 http://board:8080：3.0 MB") and "预热 12.5 毫秒" in zh[0]
    assert "签名者 abc123" in zh[1] and "rk3588" in zh[1] and not CJK.search(english[1])
    assert (dep.render(), ver.render()) == english  # back to English


def test_every_error_template_has_a_translation(capsys: pytest.CaptureFixture[str]) -> None:
    """Every message and hint the core raises and every status and log line a core job reports (literal or
    f-string, studio.core.message_templates) has its zh_CN entry; the command that lists what is missing is the
    one a translator runs."""
    from studio.core.message_extract import main

    assert main(["zh_CN"]) == 0, capsys.readouterr().out[:3000]


def test_a_status_line_without_translation_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A job status call site whose template the catalogue lacks fails the check above, named by file and line."""
    from studio.core.message_extract import main

    po = catalogue.po_path("zh_CN")
    text = po.read_text(encoding="utf-8")
    entry = 'msgid "profiled {len} nodes over {runs} runs"\nmsgstr "已在 {runs} 次运行中分析 {len} 个节点"\n'
    assert entry in text
    copy = catalogue.po_path("zh_CN", tmp_path)
    copy.parent.mkdir(parents=True)
    copy.write_text(text.replace(entry, ""), encoding="utf-8")
    monkeypatch.setattr(catalogue, "LOCALE_DIR", tmp_path)
    assert main(["zh_CN"]) == 1
    out = capsys.readouterr()
    assert re.search(r'#: studio/profiling/ort\.py:\d+\nmsgid "profiled \{len\} nodes over \{runs\} runs"', out.out)
    assert out.out.count("msgid") == 1 and "1 template(s) missing" in out.err


def test_f_string_errors_render_in_chinese(english_after: None) -> None:
    """A message made with an f-string is translated through its template, its values kept."""
    path = "/etc/agent.token"
    exc = InputError(f"token in {path} is too short ({5} characters, need 16 or more)", offending=path,
                     hint="use a long random token")
    catalogue.use("zh_CN")
    zh = exc.render()
    catalogue.use("en")
    assert zh.splitlines()[0] == "错误：/etc/agent.token 中的令牌太短（5 个字符，至少需要 16 个）", zh
    assert zh.splitlines()[2].startswith("  提示：") and CJK.search(zh.splitlines()[2])
    assert exc.render().startswith("error: token in /etc/agent.token is too short")


def test_cli_progress_lines_in_chinese(english_after: None) -> None:
    """The CLI's progress lines (studio.cli.progress, piped) say a job's status in the user's language, its values
    kept; a tool's own line (ToolLine) as it came; English as the core said it."""
    import io

    from studio.cli.progress import ProgressBar
    from studio.core.jobs import JobState, ToolLine

    def lines(code: str) -> list[str]:
        catalogue.use(code)
        out, job = io.StringIO(), JobState()
        ProgressBar(job, stream=out)
        job.set_status("profiled 10 nodes over 20 runs")
        job.set_status(ToolLine("writing model.onnx"))
        return [line.split("] ", 1)[1] for line in out.getvalue().splitlines()]

    assert lines("zh_CN") == ["已在 20 次运行中分析 10 个节点", "writing model.onnx"]
    assert lines("en") == ["profiled 10 nodes over 20 runs", "writing model.onnx"]


def test_status_words_inside_sentences_in_chinese(english_after: None) -> None:
    """A status word or a reason interpolated into a translated line ({status} / {reason},
    message_templates.NESTED; _() in a summary) is Chinese too; the report's own fields stay English."""
    from studio.package.package_report import PackageReport

    catalogue.use("zh_CN")
    assert catalogue.job_text("rollout rolled_back: the gate broke at ring canary") == \
        "发布已回滚：发布环 canary 未通过 SLA 把关"
    assert catalogue.job_text("rollout aborted: aborted") == "发布已中止：已中止"
    assert catalogue.job_text("compile failed") == "编译失败" and catalogue.job_text("export cancelled") == "导出已取消"
    rep = PackageReport(bundle="b.tar", name="clip", version="2", board="rk3588", target="rk3588", verdict="risky",
                        forced=True, files=3, total_bytes=1_000_000, seconds=0.5, signer_key_id="abc",
                        served_models=["clip"], runtime="rknn",
                        compiled={"runtime": "rknn", "toolkit": "rknn-toolkit2", "toolkit_version": "2.5.0",
                                  "model": "model.rknn", "platform": "rk3588", "dtype": "fp16",
                                  "parity": {"status": "passed", "mode": "simulator", "max_abs": 0.01}})
    zh = rep.render()
    assert "（目标 rk3588：有风险, 强制）" in zh, zh
    assert "一致性（simulator）：通过" in zh, zh
    assert not re.search(r"\b(passed|failed|risky|succeeded)\b", zh), zh
    assert rep.to_dict()["verdict"] == "risky" and rep.to_dict()["compiled"]["parity"]["status"] == "passed"
    catalogue.use("en")
    assert "parity vs ONNX Runtime (simulator): passed" in rep.render()


def test_inspect_text_report_in_chinese(tmp_path: Path) -> None:
    """The real `studio inspect` text report on a model with a dynamic input and a data-dependent op: headings,
    verdict and severity words, the whole-model verdicts and the core's hints in zh_CN; target ids, node and op
    names, flags and numbers kept; English as before."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu0"), helper.make_node("NonZero", ["r"], ["nz"], name="nz0"),
             helper.make_node("Cast", ["nz"], ["y"], to=TensorProto.FLOAT, name="cast0")]
    model = tmp_path / "dyn.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)]),
              str(model))
    zh = _studio("inspect", str(model), "--quiet", lang="zh_CN")
    en = _studio("inspect", str(model), "--quiet", lang="en")
    assert zh.returncode == en.returncode == 0, zh.stderr
    assert en.stdout.startswith(f"model: {model}\n") and "\nwhole model (static:" in en.stdout
    assert "\ntarget         verdict  supported  risky unsupp. unknown  name\n" in en.stdout
    assert not CJK.search(en.stdout)
    out = zh.stdout
    assert out.startswith(f"模型：{model}\n") and "整个模型（静态" in out and "动态维度：" in out
    assert "\n目标           结论          支持 有风险  不支持    未知  名称\n" in out, out  # columns still line up
    assert re.search(r"\nrk3588 +失败 +1 +1 +1 +0  Rockchip RK3588 NPU", out), out
    assert "无法构建: nz0 (NonZero)" in out and "完全在加速器上运行" in out
    assert "提示：修复方法：studio fix MODEL --static batch=N" in out  # the flag and the symbol kept
    assert "nz0: NonZero: 输出形状依赖数据；" in out and "\nrk3588 (失败):\n" in out
    # a dynamic input's finding: the core's frame and the profile's sentence (its catalogue entry) in Chinese
    assert ("  警告    有风险      x: 图输入 'x' 的第 0 轴是符号维度（'batch'）；RKNN 只接受以一组固定形状（不超过最大形状）"
            "给出的动态输入（dynamic_input）（影响 4 个张量）\n") in out, out
    assert "  错误    不支持      nz0: NonZero: 输出形状依赖数据；QNN EP 要求形状固定，因此无法编译依赖数据的输出大小\n" in out
    assert "graph input" not in out and "reaches" not in out and "RKNN accepts" not in out
    assert ("  WARNING risky       x: graph input 'x' axis 0 is symbolic ('batch'); RKNN accepts dynamic inputs only as a "
            "fixed set of shapes up to a max shape (dynamic_input) (reaches 4 tensors)\n") in en.stdout
    assert ("  ERROR   unsupported nz0: NonZero: output shape is data-dependent; the QNN EP requires fixed shapes, so "
            "data-dependent output sizes cannot be compiled\n") in en.stdout
    for english in ("model:", "whole model", "\ndynamic dims:", " verdict ", "hint:", "does not build", "runs fully",
                    " PASS ", " FAIL ", " RISKY ", "  ERROR ", "  WARNING ", "  NOTE ", "verifiers installed", "(fail)"):
        assert english not in out, english


def test_fleet_status_table_in_chinese(english_after: None) -> None:
    """`studio fleet rollout status`'s table (studio.fleet.render): headings, state and gate words, notes and the
    timeline in zh_CN, the columns still lined up; agent names, versions, numbers and flags kept; English as before."""
    from studio.fleet.render import status_text
    from studio.fleet.rollout_state import AgentRow, FleetEvent, RingRecord, RolloutState

    gate = {"verdict": "fail", "requests": 40, "error_pct": 5.0, "p95_ms": 12.25}
    st = RolloutState(fleet="lab", fleet_path="lab.yaml", bundle="b.tar", bundle_name="clip", bundle_version="2",
                      plan="canary:1,100%", tier="standard", watch_s=30, status="blocked",
                      rings=[RingRecord(0, "canary", ["a1"]), RingRecord(1, "100%", ["a2"])],
                      agents={"a1": AgentRow("a1", "http://a1:8765", 0, state="rolled_back", version="1", previous="1",
                                             gate=gate),
                              "a2": AgentRow("a2", "http://a2:8765", 1, state="pending"),
                              "a3": AgentRow("a3", "http://a3:8765", 1, state="skipped",
                                             reason="down: model file not found")},
                      notes=["the plan stops at 1 of 2 agents"],
                      events=[FleetEvent(0.0, "paused", "paused at ring canary; `studio fleet resume` goes on")])
    english = status_text(st, where=" (interrupted: the studio running it is gone; `studio fleet resume`)")
    catalogue.use("zh_CN")
    zh = status_text(st, where=" (interrupted: the studio running it is gone; `studio fleet resume`)")
    catalogue.use("en")
    assert english.startswith("rollout of clip 2 to fleet lab: blocked (interrupted:")
    assert "\n  agent                ring       state            version    was      gate\n" in english
    assert "rolled_back      1          1        fail: 40 req, err 5.00%, p95 12.2 ms" in english
    assert zh.startswith("clip 2 向集群 lab 的发布：已阻塞（已中断：") and "`studio fleet resume`" in zh, zh
    assert "\n  代理                 发布环     状态             版本       原版本   把关\n" in zh, zh
    assert "a1                   canary     已回滚           1          1        失败：40 个请求，错误率 5.00%，p95 12.2 毫秒" in zh
    assert "a2                   100%       等待中" in zh and "注意：计划在 2 个代理中的第 1 个处停止" in zh
    assert "a3                   100%       已跳过" in zh and "(离线：找不到模型文件)" in zh, zh
    assert "时间线：" in zh and "已在环 canary 暂停；`studio fleet resume` 继续" in zh and not re.search(r"\b(agent|ring|state|gate|pending|rolled_back|blocked|fail|req|note|"
                                               r"timeline|down|skipped)\b", zh), zh


def test_optimize_candidate_line_in_chinese(english_after: None) -> None:
    """The optimize search's line per candidate (studio.tune.search) says its status word in zh_CN through the
    job-line path the CLI and the GUI use; the part, the candidate id, its label and the figures kept."""
    from studio.tune.search import _status_line

    built = _status_line("encoder", "c3", "fp16 + fuse", "built", " (pass), accuracy 0.991")
    failed = _status_line("decoder", "c7", "int8", "failed", ": ORT refused the model")
    assert built == "[encoder] c3 fp16 + fuse: built (pass), accuracy 0.991"
    catalogue.use("zh_CN")
    assert catalogue.job_text(built) == "[encoder] c3 fp16 + fuse：已构建 (pass), accuracy 0.991"
    assert catalogue.job_text(failed).startswith("[decoder] c7 int8：失败: ")
    assert catalogue.job_text(_status_line("p", "c1", "x", "pruned", "")) == "[p] c1 x：已剪除"
    catalogue.use("en")
    assert catalogue.job_text(failed) == "[decoder] c7 int8: failed: ORT refused the model"


def test_inspect_verify_section_in_chinese(tmp_path: Path) -> None:
    """`studio inspect --verify` with the real ONNX Runtime verifier on a model with an undeclared custom op:
    the verification section (who says what, the verifier's note), the domain-policy finding and its hint in
    zh_CN; the tool's own error, node, op, domain and flag kept; English as before."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu0"),
             helper.make_node("Fancy", ["r"], ["y"], domain="custom.x", name="fancy0")]
    model = tmp_path / "custom.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("custom.x", 1)]), str(model))
    args = ("inspect", str(model), "--verify", "--target", "ort-cpu", "--quiet")
    zh, en = _studio(*args, lang="zh_CN"), _studio(*args, lang="en")
    assert zh.returncode == en.returncode, zh.stderr
    assert "\nverification with the real toolchains" in en.stdout and "refuses the model; agrees with" in en.stdout
    assert "note: session failed; each node was then built alone" in en.stdout and not CJK.search(en.stdout)
    out = zh.stdout
    assert "\n用真实工具链验证（" in out and "拒绝该模型；与配置文件 '" in out, out
    assert "注意：会话创建失败；随后每个节点都在单节点会话中单独构建" in out
    assert "fancy0 (Fancy): 两者都拒绝它；工具：" in out and "custom.x:Fancy" in out  # ORT's words as it said them
    assert "1 个节点位于未声明的域 'custom.x'" in out and "请用 --custom-domain custom.x 声明它" in out
    for english in ("verification with", "refuses the model", "agrees with", "note:", "both refuse", "[verified] does",
                    "node(s) in domain", "declare it with"):
        assert english not in out, english
    ov = _studio("inspect", str(model), "--verify", "--target", "openvino", "--quiet", lang="zh_CN").stdout
    # the OpenVINO plugin's notes through its own catalogue (studio_openvino), its query_model call kept
    assert "注意：read_model 失败（OpConversionFailure）；convert_partially 转换了其余部分" in ov, ov
    assert "注意：NPU：未查询（query_model(..., 'NPU')" in ov and "OpenVINO 的 ONNX 前端没有 Fancy 的转换规则" in ov
