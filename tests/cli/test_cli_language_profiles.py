"""The target profiles' sentences in the user's language (issue 31): the real `studio inspect` report's
findings around a profile's sentence (INT64, opset, a constraint, a whole-graph host rule) wholly in zh_CN, the
sentence through its catalogue entry (studio.core.message_extract.profile_sentences); English byte for byte as
before. Real subprocesses of `studio` with the language in their environment."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from studio.core import language

LOCALE_VARS = (*language.LOCALE_VARS, language.ENV_OVERRIDE)


def _studio(*args: str, lang: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in LOCALE_VARS}
    env[language.ENV_OVERRIDE] = lang
    return subprocess.run([sys.executable, "-m", "studio.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def _outside_quotes(line: str) -> str:
    """``line`` less its quoted parts (a tool's own output, a tensor name): what must be Chinese."""
    return re.sub(r"\"[^\"]*\"|'[^']*'", "", line)


def test_int64_and_opset_findings_in_chinese(tmp_path: Path) -> None:
    """The INT64 and opset findings wholly in zh_CN: the core's frame and the target profile's sentence (its
    catalogue entry, message_extract.profile_sentences); names, dtypes, versions and quotes kept; English as before."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = tmp_path / "i64.onnx"
    onnx.save(helper.make_model(helper.make_graph([helper.make_node("Cast", ["ids"], ["y"], to=TensorProto.FLOAT)],
                                                  "g", [x], [y]), opset_imports=[helper.make_opsetid("", 7)]), str(model))
    zh = _studio("inspect", str(model), "--quiet", lang="zh_CN")
    en = _studio("inspect", str(model), "--quiet", lang="en")
    assert zh.returncode == en.returncode == 0, zh.stderr
    english = ["  ERROR   unsupported : model opset 7 outside NVIDIA TensorRT 10.15's range 9-24: the onnx-tensorrt parser "
               "covers opsets 9-24",
               "  WARNING risky       ids: INT64 graph inputs/outputs ['ids']: TensorRT computes most INT64 tensors as INT32 "
               "(TRT <= 8.x casts INT64 down)",
               "  WARNING risky       ids: INT64 graph inputs/outputs ['ids']: HTP has no INT64 compute; INT64 tensors are "
               "cast down or the node falls back to the CPU",
               "  tensorrt     does not build: opset: model opset 7 outside NVIDIA TensorRT 10.15's range 9-24: the "
               "onnx-tensorrt parser covers opsets 9-24"]
    chinese = ["  错误    不支持      : 模型 opset 7 超出 NVIDIA TensorRT 10.15 的支持范围 9-24：onnx-tensorrt 解析器支持 opset 9-24",
               "  警告    有风险      ids: INT64 图输入/输出 ['ids']：TensorRT 将大多数 INT64 张量按 INT32 计算（TRT <= 8.x 会把 "
               "INT64 向下转换）",
               "  警告    有风险      ids: INT64 图输入/输出 ['ids']：HTP 没有 INT64 计算能力；INT64 张量会被向下转换，或该节点"
               "回退到 CPU",
               "  tensorrt     无法构建: opset: 模型 opset 7 超出 NVIDIA TensorRT 10.15 的支持范围 9-24：onnx-tensorrt 解析器"
               "支持 opset 9-24"]
    en_lines, zh_lines = en.stdout.splitlines(), zh.stdout.splitlines()
    for line in english:
        assert line in en_lines, (line, en.stdout)
    for line in chinese:
        assert line in zh_lines, (line, zh.stdout)
        assert not re.search(r"\b[a-z]{2,} [a-z]{2,}\b", _outside_quotes(line)), line  # no English phrase left
    out = zh.stdout
    for english_words in ("outside", "graph inputs/outputs", "covers opsets", "has no INT64", "computes most", "cast down"):
        assert english_words not in out, english_words


def test_constraint_and_host_findings_in_chinese(tmp_path: Path) -> None:
    """A constraint's and a whole-graph rule's findings (rk3588): the frame, the profile's sentence and the hint in
    zh_CN; the attribute, its values, node and op names kept; English as before."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    idx = helper.make_tensor_value_info("idx", TensorProto.INT64, [2])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("r", "g")]
    inits = [numpy_helper.from_array(np.ones((10, 4), np.float32), "table"),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    nodes = [helper.make_node("Resize", ["x", "", "scales"], ["r"], mode="cubic", name="resize0"),
             helper.make_node("Gather", ["table", "idx"], ["g"], name="gather0")]
    model = tmp_path / "mix.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x, idx], outs, inits),
                                opset_imports=[helper.make_opsetid("", 17)]), str(model))
    args = ("inspect", str(model), "--target", "rk3588", "--quiet")
    zh, en = _studio(*args, lang="zh_CN"), _studio(*args, lang="en")
    assert zh.returncode == en.returncode, zh.stderr
    assert ("  ERROR   unsupported resize0: Resize: mode='cubic' not in ['nearest', 'linear']: RKNN Resize supports nearest "
            "and bilinear only\n          hint: re-export with mode in ['nearest', 'linear']\n") in en.stdout, en.stdout
    assert "  WARNING risky       gather0: Gather: runs on the host: Gather by an index computed at run time: a lookup " \
           "by an index computed at run time (the token embedding" in en.stdout
    out = zh.stdout
    assert ("  错误    不支持      resize0: Resize: mode='cubic' 不在 ['nearest', 'linear'] 之中：RKNN 的 Resize 仅支持 nearest "
            "和 bilinear\n          提示：重新导出，使 mode 取 ['nearest', 'linear'] 中的值\n") in out, out
    assert "gather0: Gather: 在主机上运行：Gather 使用运行时计算的索引：按运行时计算的索引查找（input_ids 的 token 嵌入" in out
    assert "not in" not in out and "runs on the host" not in out and "a lookup" not in out
