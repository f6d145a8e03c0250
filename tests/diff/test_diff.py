"""`studio diff` / studio.diff: matching by name and structure, what changed, exit codes, bad input, 100k nodes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import onnx
import onnx.helper as h
import pytest
from diff_samples import chain, conv_net, renamed

from studio.cli.main import main
from studio.diff.api import diff_models
from studio.diff.render import render
from studio.diff.report import DiffReport
from studio.inspect.synthetic import transformer_model


@pytest.fixture()
def transformer(tmp_path: Path) -> Path:
    p = tmp_path / "model.onnx"
    onnx.save(transformer_model(layers=1), str(p))
    return p


@pytest.fixture()
def static_pair(transformer: Path) -> tuple[Path, Path]:
    out = transformer.with_name("model.static.onnx")
    assert main(["fix", str(transformer), "--out", str(out), "--static", "batch=1,sequence=16",
                 "-t", "ort-cpu"]) == 0
    return transformer, out


def _diff_json(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    rc = main(["diff", *argv, "--format", "json", "--quiet"])
    return rc, json.loads(capsys.readouterr().out)


def _dynamic_tensors(path: Path) -> dict[str, list]:
    """Every tensor of the model whose shape ONNX shape inference leaves with a symbolic or unknown dim."""
    m = onnx.shape_inference.infer_shapes(onnx.load(str(path)), data_prop=True)
    out = {}
    for vi in (*m.graph.input, *m.graph.value_info, *m.graph.output):
        dims = vi.type.tensor_type.shape.dim
        if any(not d.HasField("dim_value") for d in dims):
            out[vi.name] = [d.dim_param or None if not d.HasField("dim_value") else d.dim_value for d in dims]
    return out


def test_static_fix_lists_exactly_the_changed_shapes(static_pair: tuple[Path, Path],
                                                     capsys: pytest.CaptureFixture) -> None:
    a, b = static_pair
    rc, d = _diff_json(capsys, str(a), str(b))
    assert rc == 0
    s = d["summary"]
    assert s["matched"] == s["nodes_a"] == s["nodes_b"] and s["matched_by_name"] == s["matched"]
    assert s["added"] == 0 and s["removed"] == 0
    assert s["changed_by_kind"] == {"shape": s["changed"]}  # nothing but shapes
    changed = {c["what"]: (c["a"], c["b"]) for n in d["nodes"] for c in n["changes"]}
    assert all(c["kind"] == "shape" for n in d["nodes"] for c in n["changes"])
    graph_io = {t["name"]: t for t in d["tensors"]}
    assert set(graph_io) == {"input_ids", "last_hidden_state", "pooler_output"}
    assert graph_io["input_ids"]["shape_a"] == ["batch", "sequence"] and graph_io["input_ids"]["shape_b"] == [1, 16]
    # exactly the tensors that were dynamic before and are static now, each listed once (at its producer);
    # a Range's length stays unknown after the fix (ONNX inference does not fold it): not a change
    before, after = _dynamic_tensors(a), _dynamic_tensors(b)
    listed = set(changed) | {n for n, t in graph_io.items() if t["section"] == "input"}
    assert listed == set(before) - set(after)
    assert set(after) == {"embeddings/position_ids_out", "embeddings/position_out"}
    assert all(after[t] == before[t] for t in after)
    assert all(all(isinstance(x, int) for x in new) for _old, new in changed.values())
    assert changed["embeddings/token_out"][1] == [1, 16, 32]


def test_identical_files_report_no_change_exit_0(transformer: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    copy = tmp_path / "copy.onnx"
    copy.write_bytes(transformer.read_bytes())
    rc, d = _diff_json(capsys, str(transformer), str(copy), "--fail-on-change")
    assert rc == 0
    assert d["nodes"] == [] and d["tensors"] == []
    assert d["summary"]["message"].startswith("no changes: 47 of 47 nodes matched (47 by name")
    capsys.readouterr()
    assert main(["diff", str(transformer), str(copy)]) == 0
    assert "no changes" in capsys.readouterr().out


def test_fail_on_change_exits_1(static_pair: tuple[Path, Path], capsys: pytest.CaptureFixture) -> None:
    a, b = static_pair
    assert main(["diff", str(a), str(b), "--fail-on-change", "--quiet"]) == 1
    out, err = capsys.readouterr()
    assert "~ input input_ids: int64 [batch, sequence] -> int64 [1, 16]" in out
    assert "the models differ" in err


def test_target_compares_verdicts(static_pair: tuple[Path, Path]) -> None:
    a, b = static_pair
    rep = diff_models(a, b, target="qnn-htp")
    verdict = {n.a: c for n in rep.nodes for c in n.changes if c.kind == "verdict"}
    assert set(verdict) == {"embeddings/position_ids", "embeddings/position"}
    assert rep.summary.changed_by_kind["verdict"] == 2
    assert all(c.a != c.b for c in verdict.values())


def test_fp16_shows_dtype_changes(transformer: Path, tmp_path: Path) -> None:
    out = tmp_path / "model.fp16.onnx"
    assert main(["fix", str(transformer), "--out", str(out), "--fp16", "-t", "ort-cpu"]) == 0
    rep = diff_models(transformer, out)
    s = rep.summary
    assert s.changed_by_kind.get("dtype", 0) > 10 and "shape" not in s.changed_by_kind
    assert s.removed == 0 and s.added >= 1 and all(n.op_b in ("Cast", "Identity") for n in rep.changes_of("added"))
    dtypes = {(c.a, c.b) for n in rep.nodes for c in n.changes if c.kind == "dtype"}
    assert ("float", "float16") in dtypes
    inits = [t for t in rep.tensors if t.section == "initializer"]
    assert inits and all((t.dtype_a, t.dtype_b) == ("float", "float16") and t.shape_a == t.shape_b for t in inits)
    assert not [t for t in rep.tensors if t.section in ("input", "output")]  # float32 inputs/outputs kept


def test_unrelated_models_say_nothing_matched(transformer: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    other = conv_net(tmp_path / "conv.onnx")
    rc, d = _diff_json(capsys, str(transformer), str(other))
    assert rc == 0
    s = d["summary"]
    assert s["unrelated"] is True
    assert s["message"] == "nothing matched: the models share no node names and no structure (0 of 47 nodes matched)"
    assert s["removed"] == 47 and s["added"] == 6
    capsys.readouterr()
    main(["diff", str(transformer), str(other)])
    assert "nothing matched" in capsys.readouterr().out


def test_structure_matches_a_renamed_export(transformer: Path, tmp_path: Path) -> None:
    """No node name and no inner tensor name in common: the graph inputs and weights anchor the matching."""
    b = tmp_path / "renamed.onnx"
    onnx.save(renamed(onnx.load(str(transformer))), str(b))
    rep = diff_models(transformer, b)
    s = rep.summary
    assert s.matched == 47 and s.matched_by_name == 0 and s.matched_by_structure == 47
    assert s.changed == s.added == s.removed == 0, render(rep)
    pairs = {ka: kb for ka, kb, _how in rep.pairs()}
    # the renamed copy keeps the node order: each node must pair with the one at its own position (Q, K and
    # V projections read the same tensor with the same op: the ambiguous case, settled by the weights)
    expected = {n.name: f"{n.op_type}_{i}" for i, n in enumerate(onnx.load(str(transformer)).graph.node)}
    assert pairs == expected


def test_attribute_and_constant_changes_are_named(transformer: Path, tmp_path: Path) -> None:
    m = onnx.load(str(transformer))
    for node in m.graph.node:
        if node.name == "layers.0/k_transpose":
            perm = next(a for a in node.attribute if a.name == "perm")
            assert list(perm.ints) == [0, 2, 3, 1]
            perm.ints[:] = [0, 2, 1, 3]
    m.graph.node.append(h.make_node("Constant", [], ["unused_c"], name="extra_const",
                                    value=h.make_tensor("v", onnx.TensorProto.FLOAT, [2], [1.0, 2.0])))
    b = tmp_path / "b.onnx"
    onnx.save(m, str(b))
    m2 = onnx.load(str(b))
    m2.graph.node[-1].attribute[0].t.float_data[:] = [1.0, 3.0]
    c = tmp_path / "c.onnx"
    onnx.save(m2, str(c))
    rep = diff_models(transformer, b)
    [perm_change] = [ch for n in rep.nodes for ch in n.changes if ch.kind == "attribute"]
    assert perm_change.what == "perm" and perm_change.a == "[0, 2, 3, 1]" and perm_change.b == "[0, 2, 1, 3]"
    assert [n.b for n in rep.changes_of("added")] == ["extra_const"]
    rep2 = diff_models(b, c)
    [const] = rep2.nodes
    [value] = const.changes
    assert value.kind == "attribute" and value.what == "value" and value.a != value.b
    assert value.a.startswith("float[2] sha1:")


def test_bad_input_exits_2(transformer: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["diff", str(transformer), str(tmp_path / "missing.onnx")]) == 2
    assert "model file not found" in capsys.readouterr().err
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"this is not a protobuf \x00\xff\xfe" * 10)
    assert main(["diff", str(junk), str(transformer)]) == 2
    err = capsys.readouterr().err
    assert "not a readable ONNX model" in err or "not an ONNX model" in err
    assert str(junk) in err
    assert main(["diff", str(transformer), str(transformer), "--target", "no-such-target"]) == 2


def test_html_is_self_contained_and_json_reads_back(static_pair: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = static_pair
    page = tmp_path / "diff.html"
    assert main(["diff", str(a), str(b), "--format", "html", "--output", str(page), "--quiet"]) == 0
    text = page.read_text()
    assert text.startswith("<!doctype html>") and "<style>" in text and "src=" not in text and "href=" not in text
    assert "layers.0/q_split" in text and "class='changed'" in text
    rep = diff_models(a, b)
    back = DiffReport.from_dict(json.loads(rep.to_json()))
    assert back.summary == rep.summary and back.nodes == rep.nodes and back.tensors == rep.tensors


def test_100k_unnamed_nodes_diff_in_bounded_time(tmp_path: Path) -> None:
    """No names at all: matching must stay linear (times go to BENCHMARKS.md; nothing is asserted on them)."""
    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    onnx.save(chain(100_000), str(a))
    onnx.save(chain(100_000, changed=50_001), str(b))
    t = time.perf_counter()
    same = diff_models(a, a)
    t_same = time.perf_counter() - t
    assert not same.has_changes and same.summary.matched == 100_000 and same.summary.matched_by_name == 0
    t = time.perf_counter()
    rep = diff_models(a, b)
    t_one = time.perf_counter() - t
    assert rep.summary.matched == 100_000 and rep.summary.added == rep.summary.removed == 0
    [node] = rep.nodes
    assert (node.a, node.b, node.op_a, node.op_b) == ("Relu_50001", "Sigmoid_50001", "Relu", "Sigmoid")
    assert [c.kind for c in node.changes] == ["op_type"]
    print(f"100k-node diff: self {t_same:.1f} s ({same.timings}), one change {t_one:.1f} s ({rep.timings})")
