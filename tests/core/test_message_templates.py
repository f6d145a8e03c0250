"""f-string messages translated through their templates (studio.core.message_templates): the extractor reads the
raise sites, the matcher turns a rendered message back into its template's values."""

from __future__ import annotations

import ast
from pathlib import Path

from studio.core.message_extract import source_templates, status_templates
from studio.core.message_templates import TemplateMatcher, template_of, translatable


def _t(code: str) -> str | None:
    return template_of(ast.parse(code, mode="eval").body)


def test_templates_of_literals_and_f_strings() -> None:
    assert _t('"plain"') == "plain"
    assert _t('f"model {path} has {len(nodes)} nodes"') == "model {path} has {len} nodes"
    assert _t('f"{a.name} vs {b.name}"') == "{name} vs {name_}"  # two values, two names
    assert _t('f"{x!r:>8} in {{braces}}"') is None  # literal braces would read as placeholders
    assert _t("42") is None
    assert translatable("no model named '{name}'") and not translatable("{a}: {b} ({c})")


def test_matcher_formats_the_translation_with_the_values() -> None:
    m = TemplateMatcher([("no model named '{name}' in the workspace", "工作区中没有名为“{name}”的模型"),
                         ("{what} is missing", "缺少 {what}"),
                         ("model file {path} is missing", "模型文件 {path} 不存在"),
                         ("{a}: {b}", "{a}：{b}")])  # words-free: never a rule
    assert len(m) == 3
    assert m.translate("no model named 'clip' in the workspace") == "工作区中没有名为“clip”的模型"
    assert m.translate("model file /x y.onnx is missing") == "模型文件 /x y.onnx 不存在"  # the specific one wins
    assert m.translate("the key is missing") == "缺少 the key"
    assert m.translate("something else entirely") is None


def test_extractor_reads_raise_sites(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "gui").mkdir(parents=True)
    (pkg / "a.py").write_text('raise InputError(f"no model {name}", hint="pass --model DIR")\n'
                              'raise Other(f"not ours {x}")\nraise InputError(f"{a}: {b}")\n', encoding="utf-8")
    (pkg / "gui" / "b.py").write_text('raise InputError("a GUI text goes through Qt")\n', encoding="utf-8")
    assert source_templates(pkg, ["InputError"]) == {"no model {name}": "pkg/a.py:1", "pass --model DIR": "pkg/a.py:1"}


def test_extractor_reads_job_status_and_log_sites(tmp_path: Path) -> None:
    """set_status / log / step / Stages.begin texts become templates ("+"-built ones too); a relayed variable
    (tool output) and the GUI's own texts do not."""
    pkg = tmp_path / "pkg"
    (pkg / "gui").mkdir(parents=True)
    (pkg / "a.py").write_text(
        'job.set_status(f"profiled {len(nodes)} nodes over {runs} runs")\n'
        'job.log("dims: " + ", ".join(names))\n'
        'job.step(i, n, f"writing sample {name}")\n'
        'stages.begin("load", status=f"reading {path.name}")\n'
        'job.log(line)\nnp.log(x)\njob.set_status(f"{a}: {b}")\n', encoding="utf-8")
    (pkg / "gui" / "b.py").write_text('job.set_status("a GUI text goes through Qt")\n', encoding="utf-8")
    assert status_templates(pkg) == {"profiled {len} nodes over {runs} runs": "pkg/a.py:1",
                                     "dims: {join}": "pkg/a.py:2", "writing sample {name}": "pkg/a.py:3",
                                     "reading {name}": "pkg/a.py:4"}


def test_matcher_takes_an_empty_value() -> None:
    """An optional tail ("; fallback: ..." or nothing) still matches its template."""
    m = TemplateMatcher([("rollout {status}: {reason}{tail}", "发布 {status}：{reason}{tail}")])
    assert m.translate("rollout done: every ring passed") == "发布 done：every ring passed"
