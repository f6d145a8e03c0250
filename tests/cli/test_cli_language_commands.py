"""The other commands' human output in the user's language: `studio diff`, `profile`, `targets`, `keys`,
`triton build-repo` / `check` and `optimize`'s report (its warnings and table). zh_CN: their labels, summaries and
words in Chinese, ids, paths, names, flags and figures kept; English as it was. Real subprocesses of `studio`
(optimize: its renderer, a search takes too long here)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from studio.core import catalogue, language

CJK = re.compile(r"[\u4e00-\u9fff]")


def _studio(*args: str, lang: str, cwd: Path | None = None, **env_extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (*language.LOCALE_VARS, language.ENV_OVERRIDE)}
    env.update({language.ENV_OVERRIDE: lang, **env_extra})
    return subprocess.run([sys.executable, "-m", "studio.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=300, cwd=cwd)


def _both(*args: str, ok: tuple[int, ...] = (0,), **kw: object) -> tuple[subprocess.CompletedProcess[str], ...]:
    zh, en = _studio(*args, lang="zh_CN", **kw), _studio(*args, lang="en", **kw)  # type: ignore[arg-type]
    assert zh.returncode == en.returncode and en.returncode in ok, (zh.stderr, en.stderr)
    assert not CJK.search(en.stdout + en.stderr)
    return zh, en


def _model(path: Path, batch: int | str) -> Path:
    """pixel_values [B,3,8,8] -> Conv -> Relu; ids [B,4] -> Cast: ``batch`` symbolic or fixed."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    px = helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, [batch, 3, 8, 8])
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [batch, 4])
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, None)]
    nodes = [helper.make_node("Conv", ["pixel_values", "w"], ["c"], name="conv0"),
             helper.make_node("Relu", ["c"], ["y"], name="relu0"),
             helper.make_node("Cast", ["ids"], ["z"], name="cast0", to=TensorProto.FLOAT)]
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [px, ids], outs, [w]),
                                opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("cmdlang")
    return _model(d / "dyn.onnx", "batch"), _model(d / "static.onnx", 1)


def test_diff_summary_in_chinese(models: tuple[Path, Path], tmp_path: Path) -> None:
    dyn, static = models
    zh, en = _both("diff", str(dyn), str(static), "--target", "rk3588")
    assert en.stdout.splitlines()[:6] == [
        f"A: {dyn} (3 nodes)", f"B: {static} (3 nodes)", "verdicts for target: rk3588",
        "3 changed (0 in op, attributes or wiring, 3 in shapes only), 0 added, 0 removed; 3 of 3 nodes matched "
        "(3 by name, 0 by structure); changed 2 graph inputs, 2 graph outputs",
        "  matched 3 (name 3); unchanged 0, changed 3 (0 op / attribute / wiring, 3 shapes only), added 0 (in B only), "
        "removed 0 (in A only)", "  changed by kind: shape 3"], en.stdout
    assert "\ngraph inputs, outputs and initializers:\n" in en.stdout and "\nnodes:\n" in en.stdout
    lines = zh.stdout.splitlines()
    assert lines[:6] == [
        f"A: {dyn}（3 个节点）", f"B: {static}（3 个节点）", "比较目标 rk3588 的结论",
        "3 个已变化（0 个在算子、属性或连接上，3 个仅形状不同），0 个新增，0 个移除；3 个节点中匹配了 3 个（按名称 3 个，按结构 0 个）；"
        "已变化：2 个图输入, 2 个图输出",
        "  已匹配 3（名称 3）；未变化 0，已变化 3（算子/属性/连接 0，仅形状 3），新增 0（仅在 B 中），移除 0（仅在 A 中）",
        "  按变化类型：shape 3"], zh.stdout
    assert "\n图输入、输出和初始化器：\n" in zh.stdout and "\n节点：\n" in zh.stdout
    assert "  ~ input pixel_values: float [batch, 3, 8, 8] -> float [1, 3, 8, 8]" in lines  # names and shapes kept
    same_zh, same_en = _both("diff", str(dyn), str(dyn))
    assert same_en.stdout.splitlines()[2] == "no changes: 3 of 3 nodes matched (3 by name, 0 by structure)"
    assert same_zh.stdout.splitlines()[2] == "没有变化：3 个节点中匹配了 3 个（按名称 3 个，按结构 0 个）"
    out_zh, out_en = _both("diff", str(dyn), str(static), "-o", str(tmp_path / "d.txt"), "--quiet",
                           "--fail-on-change", ok=(1,))
    assert out_en.stderr.endswith("; changed 2 graph inputs, 2 graph outputs\ndiff: the models differ; exit 1\n")
    assert out_zh.stderr.startswith(f"已将 text 格式的差异写入 {tmp_path / 'd.txt'}：3 个已变化")
    assert out_zh.stderr.endswith("diff：两个模型不同；退出码 1\n") and "changed" not in out_zh.stderr


def test_profile_report_in_chinese(models: tuple[Path, Path], tmp_path: Path) -> None:
    dyn, _static = models
    saved = tmp_path / "p.json"
    args = ("profile", str(dyn), "--runs", "2", "--warmup", "1", "--quiet")
    zh, en = _both(*args, "--save", str(saved))
    assert re.match(rf"profile of {re.escape(str(dyn))}  \(onnxruntime \S+ CPUExecutionProvider, optimization all\)\n"
                    r"  inputs pixel_values=\[1, 3, 8, 8\], ids=\[1, 4\]; 2 runs after 1 warm-up\n"
                    r"  run \d+\.\d{3} ms mean, \d+\.\d{3} ms p95; node time \d+\.\d{3} ms\n"
                    r"  nodes: \d+ measured.*\n\n    mean ms    p95 ms  share  op / node\n", en.stdout), en.stdout
    assert en.stderr == f"saved profile to {saved}\n"
    assert re.match(rf"{re.escape(str(dyn))} 的性能分析（onnxruntime \S+ CPUExecutionProvider，优化级别 all）\n"
                    r"  输入 pixel_values=\[1, 3, 8, 8\], ids=\[1, 4\]；预热 1 次后测量 2 次\n"
                    r"  单次运行：平均 \d+\.\d{3} 毫秒，p95 \d+\.\d{3} 毫秒；节点总耗时 \d+\.\d{3} 毫秒\n"
                    r"  节点：\d+ 已测量.*\n\n   平均毫秒  p95 毫秒   占比  算子 / 节点\n", zh.stdout), zh.stdout
    assert zh.stderr == f"已将性能分析保存到 {saved}\n"
    cmp_zh, cmp_en = _both(*args, "--compare", str(saved))
    assert f"\ncompare {dyn} -> {dyn}\n" in cmp_en.stdout and "\n  by scope:      before     after     delta\n" in \
        cmp_en.stdout and "\n  by node:\n" in cmp_en.stdout and " node(s) gone, 0 new\n" in cmp_en.stdout
    assert f"\n比较 {dyn} -> {dyn}\n" in cmp_zh.stdout and "\n  按作用域：        之前      之后      差值\n" in cmp_zh.stdout
    assert "\n  按节点：\n" in cmp_zh.stdout and "个节点消失，0 个新增\n" in cmp_zh.stdout
    assert not re.search(r"\b(profile|inputs|runs|mean|nodes|measured|compare|scope|node time|gone)\b", cmp_zh.stdout)


def test_targets_listing_in_chinese() -> None:
    zh, en = _both("targets")
    assert en.stdout.startswith("id             kind       ops  dynamic     opset     name\n"
                                "tensorrt       list       158  risky       9-24      NVIDIA TensorRT")
    assert "\n               source: https://github.com/onnx/onnx-tensorrt/" in en.stdout
    assert "\nhailo-8        none         -  unknown     -         Hailo-8 (Dataflow Compiler)\n" in en.stdout
    assert zh.stdout.startswith("ID             类型      算子  动态形状    opset     名称\n"
                                "tensorrt       列表       158  有风险      9-24      NVIDIA TensorRT"), zh.stdout
    assert "\n               来源：https://github.com/onnx/onnx-tensorrt/" in zh.stdout  # the citation kept
    assert "\nhailo-8        无           -  未知        -         Hailo-8 (Dataflow Compiler)\n" in zh.stdout
    assert "整图规则（" in zh.stdout and "whole-graph rules" not in zh.stdout and "source:" not in zh.stdout


def test_keys_in_chinese(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    pw = {"STUDIO_KEY_PASSPHRASE": "a-long-test-passphrase"}
    made = _studio("keys", "--keys-dir", str(keys), "generate", "alpha", lang="zh_CN", **pw)
    assert made.returncode == 0, made.stderr
    key_id = re.search(r"已创建密钥 alpha（id ([0-9a-f]+)）\n", made.stdout).group(1)  # type: ignore[union-attr]
    assert f"\n  私钥：{keys / 'alpha.key'}（已加密，权限 0600）\n  公钥：{keys / 'alpha.pub'}\n" in made.stdout
    made_en = _studio("keys", "--keys-dir", str(keys), "generate", "beta", lang="en", **pw)
    assert re.fullmatch(rf"created key beta \(id [0-9a-f]+\)\n  private: {re.escape(str(keys / 'beta.key'))} "
                        rf"\(encrypted, mode 0600\)\n  public:  {re.escape(str(keys / 'beta.pub'))}\n", made_en.stdout)
    zh, en = _both("keys", "--keys-dir", str(keys), "list")
    assert re.search(rf"^alpha {{16}}{key_id}  private\+public {{2}}\S+$", en.stdout, re.M), en.stdout
    assert re.search(rf"^alpha {{16}}{key_id}  私钥\+公钥 {{7}}\S+$", zh.stdout, re.M), zh.stdout
    none_zh, none_en = _both("keys", "--keys-dir", str(tmp_path / "none"), "list")
    assert none_en.stdout == f"no keys in {tmp_path / 'none'} (create one with `studio keys generate NAME`)\n"
    assert none_zh.stdout == f"{tmp_path / 'none'} 中没有密钥（用 `studio keys generate NAME` 创建）\n"


def test_triton_build_and_check_in_chinese(models: tuple[Path, Path], tmp_path: Path) -> None:
    _dyn, static = models
    zh = _studio("triton", "build-repo", str(static), "--repo", str(tmp_path / "zh"), "--name", "demo", lang="zh_CN")
    en = _studio("triton", "build-repo", str(static), "--repo", str(tmp_path / "en"), "--name", "demo", lang="en")
    assert zh.returncode == en.returncode == 0, zh.stderr
    assert en.stdout == (f"  demo                         onnx      onnxruntime  version 1  {tmp_path / 'en' / 'demo'}\n"
                         "  warning: max_batch_size 0: no dynamic batch dim on pixel_values (dims [1, 3, 8, 8]), ids "
                         "(dims [1, 4]), y (dims []), z (dims [])\n"
                         f"repository {tmp_path / 'en'}: call model 'demo'\n"), en.stdout
    assert zh.stdout == (f"  demo                         onnx      onnxruntime  版本 1  {tmp_path / 'zh' / 'demo'}\n"
                         "  警告：max_batch_size 0：以下张量没有动态批次维度：pixel_values (dims [1, 3, 8, 8]), ids "
                         "(dims [1, 4]), y (dims []), z (dims [])\n"
                         f"仓库 {tmp_path / 'zh'}：请调用模型 'demo'\n"), zh.stdout
    ok_zh, ok_en = _both("triton", "check", "--repo", str(tmp_path / "en"))
    assert ok_en.stdout.endswith(f"OK: 0 error(s), 0 warning(s) in {tmp_path / 'en'}\n")
    assert ok_zh.stdout.endswith(f"通过：{tmp_path / 'en'} 中有 0 个错误、0 个警告\n")
    bad = tmp_path / "bad" / "x"
    bad.mkdir(parents=True)
    (bad / "config.pbtxt").write_text('name: "x"\nplatform: "onnxruntime_onnx"\nmax_batch_size: -1\n')
    bad_zh, bad_en = _both("triton", "check", "--repo", str(bad.parent), ok=(1,))
    assert (f"error   {bad / 'config.pbtxt'} [max_batch_size]: max_batch_size is negative\n        hint: use 0 or more\n"
            in bad_en.stdout) and bad_en.stdout.endswith(f"FAILED: 2 error(s), 0 warning(s) in {bad.parent}\n")
    # the checker's messages and hints are templates: Chinese around the names and paths, none half-translated
    assert (f"错误    {bad / 'config.pbtxt'} [max_batch_size]: max_batch_size 为负数\n        提示：使用 0 或更大的值\n"
            in bad_zh.stdout) and bad_zh.stdout.endswith(f"失败：{bad.parent} 中有 2 个错误、0 个警告\n"), bad_zh.stdout
    assert (f"error   {bad} [version folders]: model 'x' has no version folder\n        hint: put the model file in "
            f"{bad}/1/\n" in bad_en.stdout)
    assert (f"错误    {bad} [version folders]: 模型 'x' 没有版本文件夹\n        提示：把模型文件放到 {bad}/1/\n"
            in bad_zh.stdout), bad_zh.stdout
    (bad / "config.pbtxt").write_text('name: "y"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 0\n'
                                      'instance_group [{ count: -1 }]\n')
    (bad / "1").mkdir()
    (bad / "old").mkdir()
    more_zh, more_en = _both("triton", "check", "--repo", str(bad.parent), ok=(1,))
    assert (f"error   {bad / 'config.pbtxt'} [name]: config name 'y' differs from folder name 'x'\n"
            '        hint: set name: "x" or rename the folder\n' in more_en.stdout), more_en.stdout
    assert (f"error   {bad / 'config.pbtxt'} [instance_group[0].count]: negative instance count\n" in more_en.stdout)
    assert (f"warning {bad / 'old'} [version folders]: folder 'old' is not a version number; Triton ignores it\n"
            "        hint: version folders are named 1, 2, 3, ...\n" in more_en.stdout), more_en.stdout
    assert (f"错误    {bad / 'config.pbtxt'} [name]: 配置名 'y' 与文件夹名 'x' 不一致\n"
            '        提示：设置 name: "x"，或重命名文件夹\n' in more_zh.stdout), more_zh.stdout
    assert f"错误    {bad / 'config.pbtxt'} [instance_group[0].count]: 实例数为负数\n" in more_zh.stdout
    assert (f"警告    {bad / 'old'} [version folders]: 文件夹 'old' 不是版本号；Triton 会忽略它\n"
            "        提示：版本文件夹应命名为 1、2、3……\n" in more_zh.stdout), more_zh.stdout
    assert not re.search(r"[\u4e00-\u9fff][a-z]+ [a-z]+ [a-z]+", more_zh.stdout.replace(str(bad.parent), ""))


def test_optimize_report_warnings_and_table_in_chinese() -> None:
    from studio.tune.report import Candidate, PartResult, TuneReport, render_text

    part = PartResult(part="model", source="/m/model.onnx", met=True, chosen="c1", candidates=[
        Candidate("c1", "model", "simplify | fp32", {}, "structure", status="built", chosen=True),
        Candidate("c2", "model", "int8", {}, "precision", status="crashed")],
        warnings=["the chosen variant takes only these input sizes (the samples'): batch=1; no dynamic variant met "
                  "the budget"])
    rep = TuneReport(model="/m/model.onnx", target="rk3588", budget="cosine>=0.99", objective="npu-coverage",
                     status="met", out="/o", seconds=6.4, parts=[part], calibration_source="6 texts from /c",
                     warnings=["no --calibration: 6 seeded synthetic images and texts stand in for real inputs; the "
                               "accuracy figures say little about real data"],
                     notes=["cached result 8e4877a45f8c (same model, samples, options and tool versions): nothing "
                            "rebuilt"])
    english = render_text(rep)
    try:
        catalogue.use("zh_CN")
        zh = render_text(rep)
    finally:
        catalogue.use(language.ENGLISH)
    assert render_text(rep) == english
    assert ("\n     id   recipe                                                     status  tool verdict     npu     "
            "cosine       size   host lat.\n") in english
    assert "\n  *  c1   simplify | fp32" in english and " built   " in english and " crashed " in english
    assert english.endswith("\n\nbudget met: /o  (6.4 s)\n")
    assert "\nwarning: no --calibration: 6 seeded synthetic images" in english
    assert ("\n     ID   方案                                                       状态    工具结论         npu     "
            "cosine       大小    主机延迟\n") in zh, zh
    assert " 已构建  " in zh and " 已崩溃  " in zh
    assert "\n  警告：所选变体只接受这些输入大小（样本的大小）：batch=1；没有动态形状的变体满足预算\n" in zh
    assert "\n警告：未给 --calibration：用 6 个固定种子合成的图像和文本代替真实输入" in zh
    assert "\n注：缓存的结果 8e4877a45f8c（模型、样本、选项和工具版本都相同）：未重新构建\n" in zh
    assert zh.endswith("\n\n满足预算：/o（6.4 秒）\n")


def test_triton_model_rows_in_chinese(monkeypatch: pytest.MonkeyPatch, english_after: None) -> None:
    """`studio triton status` / `models` rows: "not loaded" in the user's language, the columns kept."""
    from types import SimpleNamespace

    from studio.cli.triton_cmd import _model_row

    m = SimpleNamespace(name="clip", version="", state="", reason="")
    assert _model_row(m) == f"{'clip':28} v-    not loaded "
    monkeypatch.setenv("STUDIO_LANGUAGE", "zh_CN")
    assert _model_row(m) == f"{'clip':28} v-    未加载     "  # 3 CJK characters take 6 of the 10 columns
