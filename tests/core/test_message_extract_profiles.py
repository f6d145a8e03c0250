"""The target profiles' sentences in the catalogue (studio.core.message_extract.profile_sentences): which keys of a
profile are collected, that the shipped ones all have a zh_CN translation, and that a finding's {reason} is then
translated with them; a user's own profile stays as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core import catalogue, message_extract
from studio.core.message_extract import missing, profile_sentences
from studio.inspect.profiles import builtin_dir, load_profile_file

USER_PROFILE = """\
schema: 1
id: my-npu
name: My NPU
source: my notes
date_read: 2026-01-01
notes: a note that no view shows
rules:
  dynamic_shapes: risky
  dynamic_reason: my NPU wants static shapes
  int64: risky
  opset: [9, 17]
  opset_reason: >-
    my converter stops
    above opset 17
supported:
  ai.onnx: [Relu, Resize, Gather]
risky:
  Relu: my Relu is slow
cpu_fallback:
  Gather: my Gather runs on the CPU
constraints:
  Resize:
    - {kind: attr, name: mode, allowed: [nearest], reason: my Resize is nearest only}
graph:
  source: my build logs
  fold_reason: folding as the build does
  host_dtypes: [bool]
  host_dtypes_reason: booleans run on the host
  accelerated:
    Gather: {const_inputs: [1], reason: a constant index stays on the NPU}
"""


def test_the_keys_that_reach_a_finding(tmp_path: Path) -> None:
    """Rules' reasons, risky / cpu_fallback reasons, constraints' and the whole-graph rules' reasons; not the notes,
    the sources or graph.fold_reason (no finding, hint or view shows them). A folded scalar is the parsed string."""
    (tmp_path / "my-npu.yaml").write_text(USER_PROFILE, encoding="utf-8")
    load_profile_file(tmp_path / "my-npu.yaml")  # a valid profile
    found = profile_sentences(tmp_path)
    assert set(found) == {"my NPU wants static shapes", "my converter stops above opset 17", "my Relu is slow",
                          "my Gather runs on the CPU", "my Resize is nearest only", "booleans run on the host",
                          "a constant index stays on the NPU"}
    assert found["my Resize is nearest only"][1] == ("constraints", "Resize", 0, "reason")


def test_every_shipped_profile_sentence_is_translated() -> None:
    """Every user-visible sentence of studio/resources/targets/*.yaml has a non-empty zh_CN entry."""
    shipped = profile_sentences()
    assert len(shipped) >= 150 and {f.parent for f, _loc in shipped.values()} == {builtin_dir()}
    folded = next(t for t in shipped if t.startswith("the layer table places integer and boolean work"))
    assert "\n" not in folded and "  " not in folded  # rk3588's `>-` text, one line as YAML folds it
    lacking = missing("zh_CN", catalogue.studio_domain())
    assert [t for t in lacking if t in shipped] == [], lacking
    assert lacking == {}


def test_a_missing_sentence_is_named_at_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    po = catalogue.po_path("zh_CN")
    entry = 'msgid "HTP has no DOUBLE support"\nmsgstr "HTP 不支持 DOUBLE"\n'
    text = po.read_text(encoding="utf-8")
    assert entry in text
    copy = catalogue.po_path("zh_CN", tmp_path)
    copy.parent.mkdir(parents=True)
    copy.write_text(text.replace(entry, ""), encoding="utf-8")
    monkeypatch.setattr(catalogue, "LOCALE_DIR", tmp_path)
    monkeypatch.setattr(message_extract, "templates", lambda root: {})  # the code's templates: checked above
    lacking = missing("zh_CN", catalogue.studio_domain())
    assert list(lacking) == ["HTP has no DOUBLE support"]
    assert lacking["HTP has no DOUBLE support"] == "studio/resources/targets/qnn-htp.yaml:18"


def test_profile_sentences_inside_findings(english_after: None) -> None:
    """The frames' {reason} / {why} values translated through the sentences' entries; a sentence the catalogue
    does not hold (a user's profile) stays as written, inside the translated frame."""
    from studio.inspect.render import _op_text

    catalogue.use("zh_CN")
    assert catalogue._("INT64 graph inputs/outputs ['ids']: DOUBLE is cast to FLOAT") == \
        "INT64 图输入/输出 ['ids']：DOUBLE 会被转换为 FLOAT"
    assert _op_text("TopK", "TopK: input 1 ('k') must be a constant: TopK k must be a constant") == \
        "TopK: 输入 1（'k'）必须是常量：TopK 的 k 必须是常量"
    assert _op_text("Loop", "Loop: scan-output length cannot be dynamic in TensorRT") == \
        "Loop: 在 TensorRT 中 scan 输出的长度不能是动态的"
    assert catalogue._("runs on the CPU, not the accelerator: rknn-toolkit2 runs Cast on the CPU, not the NPU") == \
        "在 CPU 而非加速器上运行：rknn-toolkit2 在 CPU 而非 NPU 上运行 Cast"
    assert catalogue._("INT64 graph inputs/outputs ['ids']: my NPU has no int64") == \
        "INT64 图输入/输出 ['ids']：my NPU has no int64"
    catalogue.use("en")
    assert catalogue._("INT64 graph inputs/outputs ['ids']: DOUBLE is cast to FLOAT") == \
        "INT64 graph inputs/outputs ['ids']: DOUBLE is cast to FLOAT"
