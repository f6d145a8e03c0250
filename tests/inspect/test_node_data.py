"""Model Explorer node data: verdicts / heat / divergence written keyed as its ONNX adapter names nodes, read back,
validated (a corrupted file names the file and the field), and checked against Model Explorer's own classes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnx.helper as h
import pytest
from onnx import TensorProto as T
from onnx import numpy_helper

from studio.cli.main import main
from studio.core.errors import InputError
from studio.inspect.api import inspect_model, load_structure
from studio.inspect.node_data import (
    VERDICT_COLORS,
    explorer_ids,
    heat_overlay,
    load_node_data,
    read_node_data,
    to_node_data,
    verdict_overlay,
    write_node_data,
)
from studio.inspect.synthetic import transformer_model


def _control_flow_model(path: Path) -> Path:
    """Named, unnamed and duplicate node names, an If with unnamed branch nodes and a Loop body."""
    then_g = h.make_graph([h.make_node("Relu", ["a"], ["t1"]), h.make_node("Neg", ["t1"], ["t_out"], name="neg")],
                          "then", [], [h.make_tensor_value_info("t_out", T.FLOAT, [2])])
    else_g = h.make_graph([h.make_node("Abs", ["a"], ["e_out"])], "else", [],
                          [h.make_tensor_value_info("e_out", T.FLOAT, [2])])
    body = h.make_graph([h.make_node("Add", ["lc_in", "a"], ["lc_out"]),
                         h.make_node("Identity", ["cond_in"], ["cond_out"], name="id")], "body",
                        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
                         h.make_tensor_value_info("lc_in", T.FLOAT, [2])],
                        [h.make_tensor_value_info("cond_out", T.BOOL, []),
                         h.make_tensor_value_info("lc_out", T.FLOAT, [2])])
    nodes = [h.make_node("Relu", ["x"], ["a"]), h.make_node("Relu", ["a"], ["b"], name="r"),
             h.make_node("Relu", ["b"], ["c"], name="r"), h.make_node("Relu", ["c"], ["d"]),
             h.make_node("Relu", ["d"], ["e"], name="node_1"),
             h.make_node("If", ["cond"], ["f"], then_branch=then_g, else_branch=else_g),
             h.make_node("Loop", ["trip", "cond", "f"], ["g"], name="loop", body=body),
             h.make_node("Add", ["e", "g"], ["y"], name="out")]
    g = h.make_graph(nodes, "main_g", [h.make_tensor_value_info("x", T.FLOAT, [2]),
                                       h.make_tensor_value_info("cond", T.BOOL, [])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])],
                     [numpy_helper.from_array(np.array(3, np.int64), "trip")])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), str(path))
    return path


@pytest.fixture()
def transformer(tmp_path: Path) -> Path:
    p = tmp_path / "model.onnx"
    onnx.save(transformer_model(layers=1), str(p))
    return p


def test_ids_follow_the_onnx_adapter_rules(tmp_path: Path) -> None:
    lm = load_structure(_control_flow_model(tmp_path / "cf.onnx"))
    assert explorer_ids(lm) == {
        "Relu_0": ("main_g", "node"), "r": ("main_g", "r"), "r#2": ("main_g", "r_1"),
        "Relu_3": ("main_g", "node_1"), "node_1": ("main_g", "node_1_1"), "If_5": ("main_g", "node_2"),
        "If_5/then_branch/Relu_0": ("main_g", "node_2/then_branch/node"),
        "If_5/then_branch/neg": ("main_g", "node_2/then_branch/neg"),
        "If_5/else_branch/Abs_0": ("main_g", "node_2/else_branch/node"),
        "loop": ("main_g", "loop"), "loop/body/Add_0": ("loop/body", "node"), "loop/body/id": ("loop/body", "id"),
        "out": ("main_g", "out")}


def test_verdicts_round_trip_through_the_cli(transformer: Path, tmp_path: Path) -> None:
    out = tmp_path / "verdicts.json"
    assert main(["inspect", str(transformer), "-t", "qnn-htp", "--node-data", str(out), "-q"]) in (0, 1)
    data = json.loads(out.read_text())
    assert list(data) == ["tiny_transformer"]  # the graph's name: the adapter's graph id
    g = data["tiny_transformer"]
    assert g["name"] == "qnn-htp verdicts" and g["showExpandedSummaryOnGroupNode"] is True
    assert g["results"]["embeddings/position_ids"] == {"value": "unsupported", "bgColor": VERDICT_COLORS["unsupported"]}
    lm = load_structure(transformer)
    rep = inspect_model(transformer, ["qnn-htp"])
    back = read_node_data(out, lm)
    assert back.values == {ref.key: rep.verdict_of("qnn-htp", ref.key) for ref in lm.nodes}
    assert back.colors == {k: VERDICT_COLORS[v] for k, v in back.values.items()} and back.unknown == []
    assert back.name == "qnn-htp verdicts" and back.labels


def test_several_overlays_go_beside_the_named_file(transformer: Path, tmp_path: Path) -> None:
    out = tmp_path / "nd.json"
    prof = tmp_path / "profile.json"
    assert main(["profile", str(transformer), "--shape", "input_ids=1,8", "--runs", "2", "--warmup", "1",
                 "--no-torch", "--save", str(prof), "-q"]) == 0
    assert main(["inspect", str(transformer), "-t", "rk3588", "-t", "ort-cpu", "--node-data", str(out),
                 "--node-data-heat", str(prof), "-q"]) in (0, 1)
    assert not out.exists()
    written = sorted(p.name for p in tmp_path.glob("nd.*.json"))
    assert written == ["nd.heat.json", "nd.ort-cpu.json", "nd.rk3588.json"]
    heat = load_node_data(tmp_path / "nd.heat.json")["tiny_transformer"]
    assert heat["gradient"][0]["stop"] == 0 and heat["gradient"][-1]["stop"] == 1
    assert all(isinstance(r["value"], float) and "bgColor" not in r for r in heat["results"].values())
    from studio.profiling.report import ProfileReport

    lm = load_structure(transformer)
    assert read_node_data(tmp_path / "nd.heat.json", lm).values == heat_overlay(ProfileReport.load(prof)).values


def test_one_graph_form_reads_back_as_the_main_graph(tmp_path: Path) -> None:
    lm = load_structure(_control_flow_model(tmp_path / "cf.onnx"))
    f = tmp_path / "one.json"
    f.write_text(json.dumps({"results": {"r_1": {"value": 3}, "out": {"value": 1.5}, "ghost": {"value": 0}},
                             "thresholds": [{"value": 2, "bgColor": "red"}]}))
    ov = read_node_data(f, lm)
    assert ov.values == {"r#2": 3, "out": 1.5} and ov.unknown == ["ghost"]
    assert ov.thresholds == [{"value": 2, "bgColor": "red"}] and ov.name == "one"


@pytest.mark.parametrize(("content", "field"), [
    ("{not json", None),
    ('[1, 2]', "(top level)"),
    ('{"g": {"results": {"n": {"bgColor": "red"}}}}', '["g"].results["n"].value'),
    ('{"g": {"results": {"n": {"value": null}}}}', '["g"].results["n"].value'),
    ('{"g": {"results": {"n": {"value": 1, "bgColor": 7}}}}', '["g"].results["n"].bgColor'),
    ('{"g": {"results": [1, 2]}}', '["g"].results'),
    ('{"g": {"nodes": {}}}', '["g"].results'),
    ('{"results": {"n": {"value": 1}}, "gradient": [{"stop": 0.5, "bgColor": "red"}]}', "gradient"),
    ('{"results": {"n": {"value": 1}}, "gradient": [{"stop": 2}, {"stop": 0}]}', "gradient[0].stop"),
    ('{"results": {"n": {"value": 1}}, "thresholds": [{"value": 1}]}', "thresholds[0].bgColor"),
    ('{"results": {"n": {"value": 1}}, "hideAggregatedStats": ["median"]}', "hideAggregatedStats"),
])
def test_a_corrupted_file_names_the_file_and_the_field(tmp_path: Path, content: str, field: str | None) -> None:
    f = tmp_path / "broken.json"
    f.write_text(content)
    with pytest.raises(InputError) as e:
        load_node_data(f)
    assert str(f) in (e.value.offending or "")
    if field is None:
        assert "not valid JSON" in e.value.message
    else:
        assert e.value.offending == f"{f} [{field}]", e.value.offending
        assert field in e.value.message
    assert e.value.hint and "node data" in e.value.hint


def test_cli_reports_a_bad_heat_file(transformer: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "p.json"
    bad.write_text("{}")
    assert main(["inspect", str(transformer), "-t", "rk3588", "--node-data", str(tmp_path / "o.json"),
                 "--node-data-heat", str(bad), "-q"]) == 2
    assert "not a profile report" in capsys.readouterr().err
    assert main(["inspect", str(transformer), "-t", "rk3588", "--node-data-heat", str(bad), "-q"]) == 2
    assert "need --node-data" in capsys.readouterr().err


def test_colours_are_the_graph_views(transformer: Path) -> None:
    from studio.gui.graph import palette  # Qt-free module

    assert VERDICT_COLORS == {k: v[0] for k, v in palette.verdict_colors("light").items() if k != "none"}


# -- against Model Explorer itself (ai-edge-model-explorer, model-explorer-onnx), when installed ---------------

def _explorer() -> tuple[object, object]:
    ndb = pytest.importorskip("model_explorer.node_data_builder",
                              reason="ai-edge-model-explorer is not installed (pip install --no-deps "
                                     "ai-edge-model-explorer model-explorer-onnx; flask portpicker termcolor "
                                     "watchdog dacite)")
    adapter = pytest.importorskip("model_explorer_onnx.main", reason="model-explorer-onnx is not installed")
    return ndb, adapter


def test_model_explorer_builder_and_adapter_accept_the_files(transformer: Path, tmp_path: Path) -> None:
    ndb, adapter = _explorer()
    dacite = pytest.importorskip("dacite", reason="dacite (a Model Explorer dependency) is not installed")
    for model in (transformer, _control_flow_model(tmp_path / "cf.onnx")):
        lm = load_structure(model)
        rep = inspect_model(model, ["rk3588"])
        data = to_node_data(verdict_overlay(rep, "rk3588", lm), lm)
        # the ONNX adapter's own graphs hold every node id we wrote, in the graph we wrote it for
        graphs = adapter.ONNXAdapter().convert(str(model), {})["graphs"]
        ids = {g.id: {n.id for n in g.nodes} for g in graphs}
        for gid, g in data.items():
            assert set(g["results"]) <= ids[gid], set(g["results"]) - ids[gid]
        assert sum(len(g["results"]) for g in data.values()) == len(lm.nodes)
        # Model Explorer's builder classes: the same JSON comes out of ModelNodeData built from ours
        built = ndb.ModelNodeData(graphsData={
            gid: dacite.from_dict(ndb.GraphNodeData, g, config=dacite.Config(check_types=False))
            for gid, g in data.items()})
        assert json.loads(built.to_json_string()) == {
            gid: {"hideInAggregatedStatsTable": False, "hideInChildrenStatsTable": False,
                  "thresholds": [], "gradient": [], **g} for gid, g in data.items()}
    # numbers pass its type checks as they are (strict: value is a number there)
    heat = {"results": {"layers.0/q_proj": {"value": 0.25}}, "gradient": [{"stop": 0, "bgColor": "#e3eefa"},
                                                                           {"stop": 1, "bgColor": "#d6332e"}]}
    gnd = dacite.from_dict(ndb.GraphNodeData, heat, config=dacite.Config(strict=True))
    path = tmp_path / "heat.json"
    gnd.save_to_file(str(path))
    lm = load_structure(transformer)
    assert read_node_data(path, lm).values == {"layers.0/q_proj": 0.25}


def test_write_node_data_is_atomic_and_readable(transformer: Path, tmp_path: Path) -> None:
    lm = load_structure(transformer)
    rep = inspect_model(transformer, ["ort-cpu"])
    path = write_node_data(verdict_overlay(rep, "ort-cpu", lm), lm, tmp_path / "sub" / "v.json")
    assert path.exists() and not list(path.parent.glob("*.tmp*"))
    assert set(read_node_data(path, lm).values.values()) <= set(VERDICT_COLORS)


def test_divergence_from_a_compile_report(transformer: Path, tmp_path: Path) -> None:
    report = tmp_path / "compile_report.json"
    report.write_text(json.dumps({"layer_errors": [
        {"tensor": "layers.0/q_proj_out_mm_tp_sw", "entire_cos": 0.9, "single_cos": 0.99},
        {"tensor": "layers.0/fc2_out", "entire_cos": 0.5, "single_cos": 0.7}]}))
    out = tmp_path / "div.json"
    assert main(["inspect", str(transformer), "-t", "ort-cpu", "--node-data", str(out),
                 "--node-data-divergence", str(report), "-q"]) in (0, 1)
    lm = load_structure(transformer)
    back = read_node_data(tmp_path / "div.divergence.json", lm)
    assert back.values == pytest.approx({"layers.0/q_proj": 0.1, "layers.0/fc2": 0.5})
    assert back.gradient and not back.colors
    empty = tmp_path / "empty.json"
    empty.write_text('{"layer_errors": []}')
    with pytest.raises(InputError, match="no per-layer errors"):
        from studio.inspect.node_data import export_overlays

        export_overlays(inspect_model(transformer, ["ort-cpu"]), transformer, out, divergence=empty)
