"""`studio export` of a decoder with its KV cache: the graph's names and dims, the report's generation fields,
generation.json / genai_config.json, the options that turn it on or off, and failures that end as diagnoses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from studio.core.errors import InputError
from studio.export.api import ExportOptions, ExportReport, export_model, write_sample
from studio.export.stages.options import check_options, prepare_run
from studio.export.stages.run import StageFailed

pytestmark = pytest.mark.export


def _dims(vi: onnx.ValueInfoProto) -> list[str | int]:
    return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]


def test_graph_has_named_dynamic_cache(exported: tuple[Path, ExportReport]) -> None:
    folder, _ = exported
    g = onnx.load(str(folder / "model.onnx"), load_external_data=False).graph
    ins = {i.name: _dims(i) for i in g.input}
    outs = {o.name: _dims(o) for o in g.output}
    assert list(ins)[:3] == ["input_ids", "attention_mask", "position_ids"]
    assert ins["input_ids"] == ["batch", "sequence"]
    assert ins["attention_mask"] == ["batch", "total_sequence"]
    for i in range(2):
        for kind in ("key", "value"):
            assert ins[f"past_key_values.{i}.{kind}"] == ["batch", 2, "past_sequence", 8]
            assert outs[f"present.{i}.{kind}"] == ["batch", 2, "total_sequence", 8]
    assert outs["logits"] == ["batch", "sequence", 348]


def test_report_records_layout_and_generation_parity(exported: tuple[Path, ExportReport]) -> None:
    folder, report = exported
    g = report.generation
    assert g is not None and g.status == "passed"
    assert report.options["with_past"] is True
    assert {k: g.cache[k] for k in ("layers", "kv_heads", "head_dim", "dtype", "max_context")} == \
        {"layers": 2, "kv_heads": 2, "head_dim": 8, "dtype": "float32", "max_context": 128}
    assert g.cache["eos_token_ids"] == [347] and g.cache["bos_token_id"] == 345 and g.cache["pad_token_id"] == 345
    assert len(g.prompts) >= 3 and len({p["prompt_tokens"] for p in g.prompts}) >= 3
    assert len({p["max_new_tokens"] for p in g.prompts}) >= 3
    assert all(p["match"] and p["onnx_ids"] == p["hf_ids"] for p in g.prompts)
    assert g.logits_max_abs is not None and g.logits_max_abs < 1e-4
    names = [c.name for c in report.validation.cases]
    assert any("prefill" in n and "past=0" in n for n in names) and any("decode step" in n for n in names)
    assert report.validation.passed and "generation" in report.timings
    saved = json.loads((folder / "report.json").read_text())
    assert saved["generation"]["status"] == "passed" and saved["generation"]["cache"]["layers"] == 2
    kinds = {Path(o.path).name: o.kind for o in report.outputs}
    assert kinds["generation.json"] == "config" and kinds["genai_config.json"] == "config"


def test_generation_files(exported: tuple[Path, ExportReport], qwen2_dir: Path) -> None:
    folder, _ = exported
    gen = json.loads((folder / "generation.json").read_text())
    assert gen["model_file"] == "model.onnx" and gen["max_context"] == 128
    assert gen["source_model_dir"] == str(qwen2_dir.resolve())
    assert gen["validation"]["status"] == "passed"
    genai = json.loads((folder / "genai_config.json").read_text())
    dec = genai["model"]["decoder"]
    assert dec["inputs"]["past_key_names"] == "past_key_values.%d.key"
    assert dec["outputs"]["present_value_names"] == "present.%d.value"
    assert (dec["num_hidden_layers"], dec["num_key_value_heads"], dec["head_size"]) == (2, 2, 8)
    assert genai["search"]["past_present_share_buffer"] is False
    assert (folder / "tokenizer.json").is_file()


def test_onnxruntime_genai_loads_the_export(exported: tuple[Path, ExportReport]) -> None:
    og = pytest.importorskip("onnxruntime_genai")
    folder, report = exported
    first = report.generation.prompts[0]  # type: ignore[union-attr]
    model = og.Model(str(folder))
    tok = og.Tokenizer(model)
    from studio.generate.tokenizer import TextTokenizer

    ids = TextTokenizer(folder).encode("a photo of a cat")
    assert list(tok.encode("a photo of a cat")) == ids and len(ids) == first["prompt_tokens"]
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(ids) + first["max_new_tokens"], do_sample=False)
    gen = og.Generator(model, params)
    gen.append_tokens(np.asarray([ids], dtype=np.int32))
    got: list[int] = []
    while not gen.is_done():
        gen.generate_next_token()
        got.append(int(gen.get_next_tokens()[0]))
    assert got == first["hf_ids"]


def test_with_past_options(qwen2_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.onnx"
    opts = ExportOptions(model_dir=qwen2_dir, output=out)
    _, specs = check_options(opts)
    assert opts.with_past is True and opts.attn_implementation == "eager"
    assert [s.name for s in specs][3:] == [f"past_key_values.{i}.{k}" for i in range(2) for k in ("key", "value")]
    off = ExportOptions(model_dir=qwen2_dir, output=out, with_past=False)
    _, specs = check_options(off)
    assert [s.name for s in specs] == ["input_ids", "attention_mask"]
    with pytest.raises(InputError, match="--exporter torchscript") as e:
        check_options(ExportOptions(model_dir=qwen2_dir, output=out, with_past=True, exporter="dynamo"))
    assert e.value.offending == "--exporter"
    with pytest.raises(InputError, match="--input-signature"):
        check_options(ExportOptions(model_dir=qwen2_dir, output=out, with_past=True,
                                    input_signature="text:input_ids"))
    auto_dynamo = ExportOptions(model_dir=qwen2_dir, output=out, exporter="dynamo")
    check_options(auto_dynamo)
    assert auto_dynamo.with_past is False


def test_with_past_refused_for_a_non_decoder(tmp_path: Path) -> None:
    clip = write_sample("tiny-clip", tmp_path / "clip")
    with pytest.raises(InputError, match="--with-past is not available") as e:
        check_options(ExportOptions(model_dir=clip, output=tmp_path / "m.onnx", with_past=True))
    assert e.value.offending == "--with-past"
    opts = ExportOptions(model_dir=clip, output=tmp_path / "m.onnx")
    check_options(opts)
    assert opts.with_past is False


def test_no_with_past_exports_one_pass(qwen2_dir: Path, tmp_path: Path) -> None:
    report = export_model(ExportOptions(model_dir=qwen2_dir, output=tmp_path / "model.onnx", with_past=False,
                                        validation_cases=2))
    assert report.status == "succeeded", report.diagnosis
    assert report.generation is None and not (tmp_path / "generation.json").exists()
    names = [i.name for i in onnx.load(str(tmp_path / "model.onnx")).graph.input]
    assert names == ["input_ids", "attention_mask"]
    assert any("without a KV cache" in w for w in report.warnings)


def _generation_run(qwen2_dir: Path, exported: tuple[Path, ExportReport], tmp_path: Path):  # type: ignore[no-untyped-def]
    tmp = tmp_path / "work"
    tmp.mkdir()
    run = prepare_run(ExportOptions(model_dir=qwen2_dir, output=tmp_path / "out" / "model.onnx"), tmp)
    return run


def test_generation_mismatch_is_a_diagnosis(qwen2_dir: Path, exported: tuple[Path, ExportReport],
                                            tmp_path: Path) -> None:
    """The graph is right but the reference model's head is perturbed: greedy ids diverge, and the stage ends in a
    Diagnosis (stage, class, message naming the step, fix), never a traceback."""
    import shutil

    import torch

    from studio.export.stages.generation import validate_generation
    from studio.generate.parity import load_causal_lm

    run = _generation_run(qwen2_dir, exported, tmp_path)
    shutil.copy(exported[0] / "model.onnx", run.model_path)
    model = load_causal_lm(qwen2_dir)
    with torch.no_grad():
        model.lm_head.weight.add_(torch.randn_like(model.lm_head.weight))
    with pytest.raises(StageFailed):
        validate_generation(run, model)
    d = run.report.diagnosis
    assert d is not None and d.stage == "generation" and d.error_class == "generation_mismatch"
    assert "diverge" in d.message and "step" in d.message and d.fix and d.raw_log
    assert run.report.generation is not None and run.report.generation.status == "failed"


def test_generation_loop_failure_is_a_diagnosis(qwen2_dir: Path, exported: tuple[Path, ExportReport],
                                                tmp_path: Path, hf_model) -> None:  # type: ignore[no-untyped-def]
    from studio.export.stages.generation import validate_generation

    run = _generation_run(qwen2_dir, exported, tmp_path)
    run.model_path.write_bytes(b"not an onnx model")
    with pytest.raises(StageFailed):
        validate_generation(run, hf_model)
    d = run.report.diagnosis
    assert d is not None and d.stage == "generation" and d.fix and "Traceback" in d.raw_log


def _tiny_llava(folder: Path, image_token_index: int) -> Path:
    import torch
    from transformers import CLIPVisionConfig, LlamaConfig, LlavaConfig, LlavaForConditionalGeneration

    cfg = LlavaConfig(vision_config=CLIPVisionConfig(hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                                                     num_attention_heads=4, image_size=32, patch_size=8),
                      text_config=LlamaConfig(vocab_size=120, hidden_size=32, intermediate_size=37,
                                              num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64),
                      image_token_index=image_token_index)
    torch.manual_seed(0)
    LlavaForConditionalGeneration(cfg).eval().save_pretrained(folder)
    return folder


def test_an_unforeseen_failure_is_a_diagnosis(tmp_path: Path) -> None:
    """The issue's case, a tiny LLaVA built from its config, exports now (example inputs carry the image tokens
    the tower's features need). An image token id outside the text vocabulary would fail inside the HF forward
    on every prompt: the inputs stage names the config key, its value and the vocabulary, and nothing is
    written."""
    ok = export_model(ExportOptions(model_dir=_tiny_llava(tmp_path / "llava", 100), output=tmp_path / "ok" / "m.onnx"))
    assert ok.status == "succeeded", ok.diagnosis
    report = export_model(ExportOptions(model_dir=_tiny_llava(tmp_path / "bad", 500),
                                        output=tmp_path / "out" / "model.onnx"))
    assert report.status == "failed" and report.outputs == []
    d = report.diagnosis
    assert d is not None and d.error_class == "token_id_out_of_vocab" and d.stage == "inputs"
    assert "image_token" in d.message and "500" in d.message and "120" in d.message and "vocab_size" in d.fix
    assert not (tmp_path / "out" / "model.onnx").exists()


def test_a_second_family_llama_without_tokenizer(tmp_path: Path) -> None:
    """LlamaForCausalLM from a config (multi-head attention, tied embeddings, no tokenizer files): the same stages
    export and validate it (seeded ids as prompts), and `studio generate` takes --prompt-ids."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from studio.generate.api import generate

    cfg = LlamaConfig(vocab_size=200, hidden_size=48, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=96,
                      tie_word_embeddings=True, bos_token_id=1, eos_token_id=2, pad_token_id=0)
    torch.manual_seed(0)
    LlamaForCausalLM(cfg).eval().save_pretrained(tmp_path / "llama")
    out = tmp_path / "out" / "model.onnx"
    report = export_model(ExportOptions(model_dir=tmp_path / "llama", output=out, validation_cases=2))
    assert report.status == "succeeded", report.diagnosis
    g = report.generation
    assert g is not None and g.status == "passed" and all(p["match"] for p in g.prompts)
    assert (g.cache["kv_heads"], g.cache["head_dim"], g.cache["max_context"]) == (4, 12, 96)
    r = generate(out.parent, prompt_ids=[1, 5, 9, 33], max_new_tokens=6, hf_parity=True)
    assert r.hf_parity["this_prompt"]["match"] is True and len(r.token_ids) == 6
    with pytest.raises(InputError, match="tokenizer.json"):
        generate(out.parent, "hello")


def test_whisper_with_past_is_the_default(tmp_path: Path) -> None:
    """Whisper takes the encoder + decoder-with-past path by default, as the decoder families do
    (tests/generate/test_whisper_generate.py); --no-with-past keeps the single-pass graph, with a note saying so."""
    from studio.export.stages.options import open_report

    whisper = write_sample("tiny-whisper", tmp_path / "whisper")
    opts = ExportOptions(model_dir=whisper, output=tmp_path / "m.onnx")
    _, specs = check_options(opts)
    assert opts.with_past is True and [s.name for s in specs] == ["input_features", "decoder_input_ids"]
    report, _, _ = open_report(ExportOptions(model_dir=whisper, output=tmp_path / "m.onnx", with_past=False))
    assert report.options["with_past"] is False
    assert any(w.startswith("with_past: off (--no-with-past): Whisper") for w in report.warnings)
