"""`studio fix` and attention fusion's text reports in the user's language (studio.optimize.render): frames, labels,
verdict words, step lines, the parity line and its inputs' sentence in zh_CN; target ids, paths, numbers, op,
node and tensor names, flags and tool names kept; English byte-for-byte as it was. The real CLI in subprocesses
(tests/cli/test_cli_language.py's helper), the step and sentence templates through the renderer."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from studio.core import catalogue, language
from studio.core.columns import width

CJK = re.compile(r"[\u4e00-\u9fff]")

# English frame words that must not be left in a Chinese fix report (ids, flags and tool names aside)
ENGLISH_FRAMES = ("fixed ", "parity", "PASSED", "FAILED", "random cases", "max|diff|", "tol ", "min cosine",
                  "nodes", "weights", "bytes", "dynamic origins", "resolved", "introduced", "new:", "changed",
                  "inputs/outputs kept", "from --static", "no processor files", "default size", " risky ", " pass ",
                  " fail ", " unknown ", "symbolic", "publishes no", "does not support", "static:", "simplify",
                  "dynamic quantization", "NaN guards", "unfuse attention")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pixel_values [batch,3,32,32] -> Conv -> Resize (cubic) -> NonZero -> Cast; ids [batch,4] -> Cast: dynamic
    inputs, a data-dependent op and a cubic Resize, so targets disagree and a fix resolves or adds findings."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    px = helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, ["batch", 3, 32, 32])
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", 4])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "z")]
    inits = [numpy_helper.from_array(np.ones((8, 3, 3, 3), np.float32), "w"),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    nodes = [helper.make_node("Conv", ["pixel_values", "w"], ["c"], name="conv0"),
             helper.make_node("Resize", ["c", "", "scales"], ["r"], name="resize0", mode="cubic"),
             helper.make_node("NonZero", ["r"], ["nz"], name="nz0"),
             helper.make_node("Cast", ["nz"], ["y"], name="cast0", to=TensorProto.FLOAT),
             helper.make_node("Cast", ["ids"], ["z"], name="cast1", to=TensorProto.FLOAT)]
    path = tmp_path_factory.mktemp("fixlang") / "demo.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [px, ids], outs, inits),
                                opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def _studio(*args: str, lang: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (*language.LOCALE_VARS, language.ENV_OVERRIDE)}
    env[language.ENV_OVERRIDE] = lang
    return subprocess.run([sys.executable, "-m", "studio.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def _fix(model: Path, out: Path, *flags: str, lang: str) -> str:
    done = _studio("fix", str(model), *flags, "--out", str(out), lang=lang)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _no_english_frames(text: str, *paths: Path) -> None:
    """No English frame word in ``text`` once the paths (pytest names tmp folders after the test) are taken out."""
    for p in sorted(map(str, paths), key=len, reverse=True):
        text = text.replace(p, "PATH")
    for word in ENGLISH_FRAMES:
        assert word not in text, (word, text)


def test_fix_fp16_report_in_chinese_and_english(demo: Path, tmp_path: Path) -> None:
    """The report the issue shows (`studio fix MODEL --fp16`): wholly Chinese but for ids, paths, figures and tools;
    English exactly as before."""
    zh = _fix(demo, tmp_path / "zh" / "m.onnx", "--fp16", lang="zh_CN")
    en = _fix(demo, tmp_path / "en" / "m.onnx", "--fp16", lang="en")
    out = tmp_path / "en" / "m.onnx"
    assert en == (f"fixed {demo} -> {out}\n\n"
                  f"[model] {demo} -> {out} (fp16)\n"
                  "  - fp16 (onnxconverter-common, float32 inputs/outputs kept)\n"
                  "  parity (2 random cases, ORT): PASSED  max|diff| 0 (tol 0.05)  min cosine 1.000000 (>= 0.999)\n"
                  "  parity inputs: no --static and no processor files beside the model: parity's default size for "
                  "every symbolic dim\n"
                  "  nodes 5 -> 10   weights 880 -> 448 bytes   dynamic origins 3 -> 3\n"
                  "  tensorrt     risky   -> risky    resolved 0, introduced 0\n"
                  "  openvino     pass    -> pass     resolved 0, introduced 0\n"
                  "  qnn-htp      fail    -> fail     resolved 0, introduced 0\n"
                  "  ascend-310p  risky   -> risky    resolved 0, introduced 0\n"
                  "  rk3588       fail    -> fail     resolved 0, introduced 0\n"
                  "  tvm-relax    pass    -> pass     resolved 0, introduced 0\n"
                  "  ort-cpu      pass    -> pass     resolved 0, introduced 0\n"
                  "  hailo-8      unknown -> unknown  resolved 0, introduced 0\n"
                  "  mlu370       unknown -> unknown  resolved 0, introduced 0\n"), en
    out = tmp_path / "zh" / "m.onnx"
    lines = zh.splitlines()
    assert lines[0] == f"已修复 {demo} -> {out}" and lines[2] == f"[model] {demo} -> {out} (fp16)", zh
    assert lines[3] == "  - fp16（onnxconverter-common，输入/输出保持 float32）"
    assert lines[4] == "  一致性（2 个随机用例，ORT）：通过  最大|差值| 0（容差 0.05）  最小余弦 1.000000（>= 0.999）"
    assert lines[5] == "  一致性输入：未给 --static，模型旁也没有处理器文件：每个符号维度都取一致性检查的默认大小"
    assert lines[6] == "  节点 5 -> 10   权重 880 -> 448 字节   动态来源 3 -> 3"
    assert "  tensorrt     有风险  -> 有风险   已解决 0，新增 0" in lines  # the columns still line up
    assert "  hailo-8      未知    -> 未知     已解决 0，新增 0" in lines
    assert "  openvino     通过    -> 通过     已解决 0，新增 0" in lines and "  rk3588       失败    -> 失败     已解决 0，新增 0" in lines
    _no_english_frames(zh, demo, tmp_path)


def test_fix_static_resolved_lines_in_chinese(demo: Path, tmp_path: Path) -> None:
    """--static --simplify: the step lines, the --static sentence and the resolved findings (the profile's sentence
    through its own entry, the rule id kept); English as before, cut at 140 characters."""
    flags = ("--static", "batch=1", "--simplify", "-t", "tensorrt", "-t", "rk3588")
    zh = _fix(demo, tmp_path / "zh" / "m.onnx", *flags, lang="zh_CN")
    en = _fix(demo, tmp_path / "en" / "m.onnx", *flags, lang="en")
    for line in ("  - static: pixel_values[0]: batch -> 1; ids[0]: batch -> 1",
                 "  - simplify (onnxslim): 5 -> 5 nodes",
                 "  parity (2 random cases, ORT): PASSED  max|diff| 0 (tol 0.0001)  min cosine 1.000000 (>= 0.99999)",
                 "  parity inputs: batch=1 from --static",
                 "  nodes 5 -> 5   weights 880 -> 880 bytes   dynamic origins 3 -> 1",
                 "  tensorrt     risky   -> risky    resolved 2, introduced 0",
                 "      resolved: dynamic-shape: graph input 'ids' axis 0 is symbolic ('batch'); every dynamic input "
                 "needs an optimization profile (min/opt/max) at engine bui",
                 "  rk3588       fail    -> fail     resolved 2, introduced 0"):
        assert line in en.splitlines(), (line, en)
    assert not CJK.search(en)
    lines = zh.splitlines()
    assert "  - 静态维度：pixel_values[0]: batch -> 1; ids[0]: batch -> 1" in lines, zh
    assert "  - 简化（onnxslim）：5 -> 5 个节点" in lines and "  一致性输入：batch=1（来自 --static）" in lines
    assert "  tensorrt     有风险  -> 有风险   已解决 2，新增 0" in lines
    resolved = [x for x in lines if x.startswith("      已解决：  dynamic-shape: 图输入 'ids' 的第 0 轴是符号维度（'batch'）；")]
    assert len(resolved) == 2 and "RKNN 只接受以一组固定形状" in "\n".join(resolved), zh
    assert all(width(x[len("      已解决：  "):]) <= 140 for x in resolved)  # cut by terminal columns, not characters
    _no_english_frames(zh, demo, tmp_path)


def test_fix_int8_new_findings_and_steps_in_chinese(demo: Path, tmp_path: Path) -> None:
    """--int8 with the no-op rewrites: their step lines, and the new findings' messages (an op's reason through its
    template: the op and the target's name kept)."""
    flags = ("--int8", "--drop-nan-guards", "--unfuse-attention", "-t", "tensorrt", "-t", "hailo-8")
    zh = _fix(demo, tmp_path / "zh" / "m.onnx", *flags, lang="zh_CN")
    en = _fix(demo, tmp_path / "en" / "m.onnx", *flags, lang="en")
    for line in ("  - unfuse attention: no studio.fused::FusedAttention node",
                 "  - drop NaN guards: no Where(IsNaN(x), C, x)",
                 "  - int8 dynamic quantization (onnxruntime.quantization, QInt8 weights)",
                 "  tensorrt     risky   -> fail     resolved 0, introduced 2   <- changed",
                 "      new:      op-unsupported: ConvInteger: NVIDIA TensorRT 10.15 does not support ConvInteger",
                 "  hailo-8      unknown -> unknown  resolved 1, introduced 3",
                 "      resolved: op-unknown: Conv: Hailo-8 (Dataflow Compiler) publishes no ONNX op list; support "
                 "unknown"):
        assert line in en.splitlines(), (line, en)
    lines = zh.splitlines()
    assert "  - 拆分融合注意力：没有 studio.fused::FusedAttention 节点" in lines, zh
    assert "  - 移除 NaN 防护：没有 Where(IsNaN(x), C, x)" in lines
    assert "  - int8 动态量化（onnxruntime.quantization，QInt8 权重）" in lines
    assert "  tensorrt     有风险  -> 失败     已解决 0，新增 2   <- 已变化" in lines
    assert "      新增：    op-unsupported: ConvInteger: NVIDIA TensorRT 10.15 不支持 ConvInteger" in lines
    assert "      已解决：  op-unknown: Conv: Hailo-8 (Dataflow Compiler) 未公布 ONNX 算子列表；支持情况未知" in lines
    _no_english_frames(zh, demo, tmp_path)


def test_fuse_attention_report_in_chinese(tmp_path: Path) -> None:
    """`studio fix --fuse-attention`: the fusion's frame, its site line, the parity line (the runtime's words
    translated, ORT and onnxruntime-extensions kept) and the targets' new findings; English as before."""
    import onnx

    spec = importlib.util.spec_from_file_location("attention_models",
                                                  Path(__file__).parents[1] / "optimize" / "attention_models.py")
    assert spec is not None and spec.loader is not None
    builders = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builders)
    model = tmp_path / "att.onnx"
    onnx.save(builders.attention_model(), str(model))
    flags = ("--fuse-attention", "-t", "rk3588", "-t", "ort-cpu")
    zh = _fix(model, tmp_path / "zh" / "m.onnx", *flags, lang="zh_CN")
    en = _fix(model, tmp_path / "en" / "m.onnx", *flags, lang="en")
    out = tmp_path / "en" / "m.onnx"
    assert en.splitlines()[:4] == [
        f"fused attention {model} -> {out}", "  1 subgraph(s) -> studio.fused::FusedAttention; nodes 18 -> 13",
        "  - /encoder/layers.0/self_attn/FusedAttention  (6 nodes, key BHSd, scale 0.5, heads 2, mask)",
        "  parity vs unfused (2 random cases, ORT + onnxruntime-extensions Python custom op): PASSED  max|diff| "
        "2.38e-07 (tol 0.0001)  min cosine 1.000000"], en
    assert en.splitlines()[4:] == [
        "  rk3588       risky   -> fail      <- changed",
        "      new: domain-unsupported: FusedAttention: domain 'studio.fused' is not handled by Rockchip RK3588 NPU "
        "(rknn-toolkit2 2.5.0)",
        "  ort-cpu      pass    -> risky     <- changed",
        "      new: op-risky: FusedAttention: loads only with the studio.fused kernels registered: "
        "onnxruntime-extensions' Python op (studio.optimize.custom_ops"], en
    lines = zh.splitlines()
    assert lines[0] == f"已融合注意力 {model} -> {tmp_path / 'zh' / 'm.onnx'}", zh
    assert lines[1] == "  1 个子图 -> studio.fused::FusedAttention；节点 18 -> 13"
    assert lines[2] == "  - /encoder/layers.0/self_attn/FusedAttention  （6 个节点，键布局 BHSd，缩放 0.5，头数 2，带掩码）"
    assert lines[3].startswith("  与未融合版本的一致性（2 个随机用例，ORT + onnxruntime-extensions 的 Python 自定义算子）：通过  ")
    assert lines[4] == "  rk3588       有风险  -> 失败      <- 已变化"
    assert lines[5] == ("      新增： domain-unsupported: FusedAttention: Rockchip RK3588 NPU (rknn-toolkit2 2.5.0) "
                        "不处理域 'studio.fused'")
    assert lines[7].startswith("      新增： op-risky: FusedAttention: 仅在注册了 studio.fused 内核时才能加载：")
    _no_english_frames(zh, model, tmp_path)
    assert "subgraph" not in zh and "heads" not in zh and "custom op" not in zh


def test_step_lines_and_parity_sentences_through_the_renderer(english_after: None) -> None:
    """Every step line a fix records and the parity-input sentences (their N_ templates), the host graph and the
    calibration lines and a failed parity: Chinese through studio.optimize.render; the report's data stays English."""
    from studio.core.parity import ParityCase
    from studio.optimize.api import AnalysisDiff, FixedFile, FixParity, FixReport, TargetDiff
    from studio.optimize.host_split import SplitInfo
    from studio.optimize.render import render_fix_text

    split = SplitInfo(host_nodes=["embed", "mask_cast"], crossing=[{"name": "e", "dtype": "float32", "shape": [1, 8]}],
                      one_hot=["pick"], left=["argmax0"])
    steps = [*split.steps(), "fp16 (onnxconverter-common, float32 inputs/outputs kept; 2 node(s) kept float32)",
             "int8 static QDQ (MatMul, Gemm, Conv) calibrated on 4 sample(s): 4 .npz samples from cal; 1 node(s) "
             "kept float", "dropped 2 NaN guard(s) Where(IsNaN(x), C, x) -> x: w1, w2",
             "unfused 1 studio.fused::FusedAttention node(s) into MatMul / Softmax / MatMul",
             "host split for rk3588: no host-placed node at the inputs, nothing moved", "static: no matching dims",
             "weights converted tensor by tensor from the data files (the model never wholly in memory)"]
    parity = FixParity(atol=0.05, min_cosine=0.999, cases=[ParityCase({}, error="ORT refused the feed")],
                       dims_source="batch=1 from --static; samples=16000 from the processor files in /m on the "
                                   "studio's sample audio (input_values)")
    diff = AnalysisDiff(targets={"rk3588": TargetDiff("risky", "pass", resolved=[
        "host-placement: Gather: runs on the host: Gather by an index computed at run time: x"])})
    rep = FixReport(model="/m/model.onnx", output="/o/model.onnx", files=[FixedFile(
        "model", "/m/model.onnx", "/o/model.onnx", steps, "fp16", parity, diff, host="/o/model.host.onnx",
        calibration="/o/model.calibration")])
    before = json.dumps(rep.to_dict(), sort_keys=True)
    english = render_fix_text(rep)
    catalogue.use("zh_CN")
    zh = render_fix_text(rep)
    catalogue.use("en")
    assert render_fix_text(rep) == english and json.dumps(rep.to_dict(), sort_keys=True) == before
    assert "  - host split: 2 input-preparation node(s) moved to the host graph (embed, mask_cast); 1 tensor(s) " \
           "cross: e float32[1, 8]\n" in english
    assert ("  parity (1 random cases, ORT): FAILED  max|diff| 0 (tol 0.05)  min cosine 1.000000 (>= 0.999)  "
            "errors: ['ORT refused the feed']\n") in english
    for line in ("  - 主机拆分：2 个输入预处理节点已移到主机图（embed, mask_cast）；1 个张量跨越两图：e float32[1, 8]",
                 "  - 按运行时索引的 Gather 改为 one-hot MatMul：pick",
                 "  - 留在设备图中的主机节点（不属于输入预处理）：argmax0",
                 "  - fp16（onnxconverter-common，输入/输出保持 float32；2 个节点保持 float32）",
                 "  - int8 静态 QDQ（MatMul, Gemm, Conv），用 4 个样本校准：4 .npz samples from cal；1 个节点保持浮点",
                 "  - 已移除 2 个 NaN 防护 Where(IsNaN(x), C, x) -> x：w1, w2",
                 "  - 已将 1 个 studio.fused::FusedAttention 节点拆回 MatMul / Softmax / MatMul",
                 "  - rk3588 的主机拆分：输入处没有放在主机上的节点，未移动任何节点",
                 "  - 静态维度：没有匹配的维度",
                 "  - 权重从数据文件逐张量转换（模型从不整体载入内存）",
                 "  主机图（在主机上先于它运行）：/o/model.host.onnx",
                 "  作为其输入的校准样本：/o/model.calibration",
                 "  一致性（1 个随机用例，ORT）：失败  最大|差值| 0（容差 0.05）  最小余弦 1.000000（>= 0.999）  错误：['ORT refused "
                 "the feed']",
                 "  一致性输入：batch=1（来自 --static）；samples=16000：/m 中的处理器文件处理 studio 示例音频所得（input_values）",
                 "  rk3588       有风险  -> 通过     已解决 1，新增 0   <- 已变化",
                 "      已解决：  host-placement: Gather: 在主机上运行：Gather 使用运行时计算的索引：x"):
        assert line in zh.splitlines(), (line, zh)
    # the calibration source sentence (studio.optimize.calibration) stays as it was said: data, not a template
    assert not re.search(r"\b(host split|node\(s\)|kept|moved|graph|samples as|inputs:|errors:)\b", zh), zh
