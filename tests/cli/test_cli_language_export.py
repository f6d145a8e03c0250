"""`studio export`'s summary in the user's language: the example-input prompt form and origin, the parity case
names, the report's warnings (N_ templates, English in the report's JSON), the timings' stage names. zh_CN: Chinese
around the model's names, paths, figures and file:line places; English byte-identical (full lines asserted). A real
`studio export` of the tiny CLIP sample in both languages, and the warning templates through the catalogue."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from studio.core import catalogue, language

CJK = re.compile(r"[\u4e00-\u9fff]")


def _studio(*args: str, lang: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (*language.LOCALE_VARS, language.ENV_OVERRIDE)}
    env[language.ENV_OVERRIDE] = lang
    return subprocess.run([sys.executable, "-m", "studio.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=600)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, dict]:  # type: ignore[type-arg]
    """The tiny CLIP sample exported in zh_CN and in English: (zh stdout, en stdout, the zh run's report JSON)."""
    base = tmp_path_factory.mktemp("export-language")
    made = _studio("sample-model", "tiny-clip", "--out", str(base / "clip"), lang="en")
    assert made.returncode == 0, made.stderr
    zh = _studio("export", str(base / "clip"), "-o", str(base / "zh" / "m.onnx"), "--report",
                 str(base / "zh.json"), lang="zh_CN")
    en = _studio("export", str(base / "clip"), "-o", str(base / "en" / "m.onnx"), lang="en")
    assert zh.returncode == 0 and en.returncode == 0, (zh.stderr[-2000:], en.stderr[-2000:])
    return zh.stdout, en.stdout, json.loads((base / "zh.json").read_text(encoding="utf-8"))


def test_export_summary_in_chinese(exported: tuple[str, str, dict]) -> None:  # type: ignore[type-arg]
    zh, _en, report = exported
    assert "  示例输入：CLIPProcessor（文件夹），提示词不带占位符" in zh
    cases = [line for line in zh.splitlines() if line.startswith("  ok ")]
    assert [line.split("  最大绝对误差")[0].rstrip() for line in cases] == [
        "  ok   model          追踪所用（batch=2）",
        "  ok   model          batch=3，更长的提示词，新图像",
        "  ok   model          batch=1，短提示词"]
    # the figures' column lines up in terminal columns (a CJK character takes two)
    from studio.core.columns import width
    assert len({width(line.split("最大绝对误差")[0]) for line in cases}) == 1
    warning = next(line for line in zh.splitlines() if "追踪器警告" in line)
    assert re.fullmatch(r"  警告：\d+ 条追踪器警告，位于 \S+:\d+(, \S+:\d+)*：追踪在那里固化了一个 Python 值；"
                        r"新形状与填充输入上的一致性检查会验证它", warning), warning
    timings = next(line for line in zh.splitlines() if line.startswith("  耗时："))
    assert re.fullmatch(r"  耗时：输入 [\d.]+s, 加载 [\d.]+s, 导出 [\d.]+s, 检查 [\d.]+s, 一致性 [\d.]+s, "
                        r"写入 [\d.]+s, 合计 [\d.]+s", timings), timings
    peak = next(line for line in zh.splitlines() if line.startswith("  内存峰值："))
    assert re.fullmatch(r"  内存峰值：[\d.]+ GB RSS（出现在阶段“[^a-z“”]+”）", peak), peak
    for english in ("tracer warning", "prompt with", "folder", "traced (", "short prompt", "parity"):
        assert english not in zh
    # the report's JSON keeps English
    assert report["example_inputs"]["prompt"] == "prompt with no placeholder"
    assert report["example_inputs"]["origin"] == "folder"
    assert [c["name"] for c in report["validation"]["cases"]] == [
        "traced (batch=2)", "batch=3, longer prompts, new image", "batch=1, short prompt"]
    assert any("tracer warning(s) at" in w for w in report["warnings"])
    assert "inputs" in report["timings"]


def test_export_summary_english_unchanged(exported: tuple[str, str, dict]) -> None:  # type: ignore[type-arg]
    _zh, en, _report = exported
    assert not CJK.search(en)
    lines = en.splitlines()
    assert "  example inputs: CLIPProcessor (folder), prompt with no placeholder" in lines
    cases = [line for line in lines if line.startswith("  ok ")]
    assert [line.split(" max abs ")[0] for line in cases] == [
        "  ok   model          traced (batch=2)                      ",
        "  ok   model          batch=3, longer prompts, new image    ",
        "  ok   model          batch=1, short prompt                 "]
    warning = next(line for line in lines if "tracer warning" in line)
    assert re.fullmatch(r"  warning: \d+ tracer warning\(s\) at \S+:\d+(, \S+:\d+)*: the trace froze a Python value "
                        r"there; parity on new shapes and padded inputs checks it", warning), warning
    timings = next(line for line in lines if line.startswith("  timings: "))
    assert re.fullmatch(r"  timings: inputs [\d.]+s, load [\d.]+s, export [\d.]+s, check [\d.]+s, parity [\d.]+s, "
                        r"write [\d.]+s, total [\d.]+s", timings), timings
    assert re.fullmatch(r"  peak memory: [\d.]+ GB RSS \(reached in stage '[a-z]+'\)",
                        next(line for line in lines if line.startswith("  peak memory: ")))


@pytest.mark.parametrize(("english", "chinese"), [
    ("prompt with image placeholder '<image>', padding=True", "提示词带图像占位符 '<image>', padding=True"),
    ("media only (no prompt), padding=True", "仅媒体（无提示词）, padding=True"),
    ("chat-template prompt, video placeholder '<video>', clips of 8 frames as videos=",
     "聊天模板提示词, 视频占位符 '<video>', 每段 8 帧的片段，作为 videos="),
    ("prompt with audio placeholder '<|audio|>'", "提示词带音频占位符 '<|audio|>'"),
])
def test_prompt_forms(english: str, chinese: str, english_after: None) -> None:
    from studio.cli.export_cmd import prompt_text

    catalogue.use(language.ENGLISH)
    assert prompt_text(english) == english
    catalogue.use("zh_CN")
    assert prompt_text(english) == chinese


@pytest.mark.parametrize(("english", "chinese"), [
    ("export patch: ViLT visual_embed replaced by a traceable full-grid version (no per-image loop, no multinomial "
     "patch sampling); valid for images filling the processor canvas",
     "导出补丁：ViLT 的 visual_embed 已替换为可追踪的全网格版本（没有逐图像循环，也没有多项式补丁采样）；适用于填满处理器画布的图像"),
    ("with_past: off because --exporter dynamo cannot export the cache yet: the decoder is a single pass over the "
     "whole sequence, without a KV cache; `studio generate` needs --with-past",
     "with_past：关闭，因为 --exporter dynamo 目前还不能导出缓存：解码器对整个序列单次前向，不带 KV 缓存；"
     "`studio generate` 需要 --with-past"),
    ("with_past: off (--no-with-past): the decoder is a single pass over the whole sequence, without a KV cache; "
     "`studio generate` needs --with-past",
     "with_past：关闭（--no-with-past）：解码器对整个序列单次前向，不带 KV 缓存；`studio generate` 需要 --with-past"),
    ("input added: pixel_mask (vision): ViltProcessor makes it with the signature's inputs and "
     "ViltForQuestionAnswering.forward takes it",
     "已添加输入：pixel_mask（vision）：ViltProcessor 用签名中的输入生成它，且 ViltForQuestionAnswering.forward 接受它"),
    ("no tokenizer files in the model folder: clients must bring their own", "模型文件夹中没有分词器文件：客户端须自带分词器"),
    ("random batch=3 sequence=5 past=2", "随机 batch=3 sequence=5 past=2"),
])
def test_export_warnings_and_cases(english: str, chinese: str, english_after: None) -> None:
    catalogue.use("zh_CN")
    assert catalogue._(english) == chinese
