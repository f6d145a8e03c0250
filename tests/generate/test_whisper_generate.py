"""Whisper with a KV cache: `studio export` (--with-past is the default for Whisper) writes the encoder (+ cross
K/V) and decoder-with-past graphs, their greedy ids equal HF generate() token for token on several clips and lengths
with per-step logits parity, `studio generate --audio` answers with --json fields, and bad audio is exit 2 naming
--audio.

One tiny Whisper (d_model 32, 2 + 2 layers, a 1 s window, built from its config: no hub), re-initialised with
init_std 0.3 so that its greedy ids depend on the audio (the sample's 0.02 gives one token whatever the clip), and
one suppressed token so the mirrored SuppressTokens processor is exercised, and a multilingual generation config
(one language, no-timestamps token) so the start tokens come from HF's own language detection; exported once.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
import wave
from pathlib import Path

import numpy as np
import onnx
import pytest

from studio.cli.main import main
from studio.core.errors import InputError
from studio.export.api import ExportOptions, ExportReport, export_model, write_sample
from studio.export.stages.past_seq2seq import clip

pytestmark = pytest.mark.export

SUPPRESSED = [38]
INIT = [346, 347, 353]  # <|startoftranscript|>, <|en|> (HF detects it), <|notimestamps|>
ATOL = 1e-4


def wav_bytes(x: np.ndarray, rate: int = 16000, channels: int = 1) -> bytes:
    pcm = (np.clip(x, -1, 1) * 32767).astype(np.int16)
    if channels == 2:
        pcm = np.repeat(pcm[:, None], 2, axis=1)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


@pytest.fixture(scope="module")
def whisper_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from transformers import GenerationConfig, WhisperConfig, WhisperForConditionalGeneration

    d = write_sample("tiny-whisper", tmp_path_factory.mktemp("whisper-src") / "tiny-whisper")
    cfg = WhisperConfig.from_pretrained(d)
    cfg.init_std = 0.3
    torch.manual_seed(0)
    model = WhisperForConditionalGeneration(cfg).eval()
    gcfg = GenerationConfig.from_pretrained(d)
    gcfg.suppress_tokens = list(SUPPRESSED)
    gcfg.is_multilingual, gcfg.lang_to_id, gcfg.task_to_id = True, {"<|en|>": 347}, {"transcribe": 349}
    gcfg.no_timestamps_token_id = 353
    gcfg._from_model_config = False  # else generate() rebuilds it from config.json, without these
    model.generation_config = gcfg
    model.save_pretrained(d)
    return d


@pytest.fixture(scope="module")
def speech_export(whisper_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ExportReport]:
    out = tmp_path_factory.mktemp("whisper-out") / "model.onnx"
    report = export_model(ExportOptions(model_dir=whisper_dir, output=out,  # with past: the default
                                        report=out.parent / "report.json"))
    assert report.status == "succeeded", report.diagnosis
    return out.parent, report


@pytest.fixture(scope="module")
def hf_whisper(whisper_dir: Path):  # type: ignore[no-untyped-def]
    from studio.generate.speech_parity import load_whisper

    return load_whisper(whisper_dir)


def _dims(vi: onnx.ValueInfoProto) -> list[str | int]:
    return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]


def test_parts_have_named_dynamic_cache(speech_export: tuple[Path, ExportReport]) -> None:
    folder, report = speech_export
    enc = onnx.load(str(folder / "model_encoder.onnx"), load_external_data=False).graph
    dec = onnx.load(str(folder / "model.onnx"), load_external_data=False).graph
    assert {i.name: _dims(i) for i in enc.input} == {"input_features": ["batch", 16, 100]}
    enc_out = {o.name: _dims(o) for o in enc.output}
    assert enc_out["encoder_hidden_states"] == ["batch", 50, 32]
    ins = {i.name: _dims(i) for i in dec.input}
    outs = {o.name: _dims(o) for o in dec.output}
    assert list(ins)[:3] == ["input_ids", "attention_mask", "position_ids"]
    assert ins["input_ids"] == ["batch", "sequence"] and ins["attention_mask"] == ["batch", "total_sequence"]
    for i in range(2):
        for kind in ("key", "value"):
            assert enc_out[f"present.{i}.encoder.{kind}"] == ["batch", 4, 50, 8]
            assert ins[f"past_key_values.{i}.encoder.{kind}"] == ["batch", 4, 50, 8]
            assert ins[f"past_key_values.{i}.decoder.{kind}"] == ["batch", 4, "past_sequence", 8]
            assert outs[f"present.{i}.decoder.{kind}"] == ["batch", 4, "total_sequence", 8]
    assert outs["logits"] == ["batch", "sequence", 354]
    assert "encoder_hidden_states" not in ins  # the cross K/V come from the encoder graph, once
    assert set(report.parts) == {"encoder", "decoder"}
    assert report.parts["decoder"]["inputs"]["input_ids"] == ["batch", "sequence"]
    from studio.cli.export_cmd import render_summary

    summary = render_summary(report)  # what `studio export` prints
    assert "part encoder" in summary and "generation vs HF generate(): passed" in summary
    assert report.validation.passed and {c.graph for c in report.validation.cases} == {"encoder", "decoder"}


def test_export_records_generation_parity(speech_export: tuple[Path, ExportReport]) -> None:
    folder, report = speech_export
    g = report.generation
    assert g is not None and g.status == "passed" and report.options["with_past"] is True
    assert len(g.prompts) >= 3 and len({p["seconds"] for p in g.prompts}) >= 2
    assert len({p["max_new_tokens"] for p in g.prompts}) >= 2
    assert all(p["match"] and p["onnx_ids"] == p["hf_ids"] for p in g.prompts)
    assert len({tuple(p["hf_ids"]) for p in g.prompts}) >= 2  # the ids depend on the audio
    assert not any(set(p["onnx_ids"]) & set(SUPPRESSED) for p in g.prompts)
    assert g.logits_max_abs is not None and g.logits_max_abs < ATOL
    rec = json.loads((folder / "generation.json").read_text())
    assert rec["kind"] == "encoder-decoder" and rec["encoder_file"] == "model_encoder.onnx"
    assert rec["decoder_file"] == "model.onnx" and rec["decoder_start_token_id"] == 346
    assert rec["init_token_ids"] == INIT and rec["eos_token_ids"] == [345]
    assert rec["init_tokens_source"].startswith("HF generate()")
    assert rec["suppress_tokens"] == SUPPRESSED and rec["begin_suppress_tokens"] == [345]
    assert rec["window_s"] == 1.0 and rec["window_samples"] == 16000 and rec["max_context"] == 32
    assert rec["validation"]["status"] == "passed" and {"torch", "transformers", "onnxruntime"} <= \
        set(rec["validation"]["versions"])
    assert len(rec["validation"]["clips"]) == len(g.prompts) and all(c["match"] for c in rec["validation"]["clips"])
    assert "transformers" in g.runtime and "onnxruntime" in g.runtime
    kinds = {Path(o.path).name: o.kind for o in report.outputs}
    assert kinds["model.onnx"] == "model" and kinds["model_encoder.onnx"] == "part"
    assert kinds["generation.json"] == "config" and kinds["processor_config.json"] == "processor"
    assert not list(folder.glob(".*.tmp"))


@pytest.mark.parametrize(("kind", "seconds", "new"), [(0, 0.25, 10), (1, 0.6, 20), (2, 1.0, 31), (3, 0.8, 6)])
def test_runtime_token_exact_with_hf_generate(speech_export: tuple[Path, ExportReport], hf_whisper, kind: int,
                                              seconds: float, new: int) -> None:  # type: ignore[no-untyped-def]
    from studio.generate.parity import compare_steps
    from studio.generate.speech import SpeechGenerator
    from studio.generate.speech_parity import hf_whisper_greedy

    gen = SpeechGenerator(speech_export[0])
    new = min(new, gen.gen.max_context - len(INIT))  # HF refuses more than the decoder's positions
    feats = gen.features(wav_bytes(clip(kind, seconds, 16000)))
    got = gen.runtime.generate(feats, new, record_logits=True)
    ref = hf_whisper_greedy(hf_whisper, feats, new, gen.gen)
    step = compare_steps(got.token_ids, got.step_logits, ref, len(INIT), new)
    assert got.token_ids == ref.token_ids, step
    assert step.logits_max_abs < ATOL and len(got.step_logits) == len(ref.step_logits)
    assert got.finish_reason in ("length", "stop", "max_context")


def test_studio_features_give_hf_pipelines_ids(speech_export: tuple[Path, ExportReport], hf_whisper,
                                               whisper_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """The WAV through the studio's front end and the graphs = HF's WhisperFeatureExtractor + generate()."""
    from transformers import WhisperFeatureExtractor

    from studio.generate.speech import SpeechGenerator
    from studio.generate.speech_parity import hf_whisper_greedy

    gen = SpeechGenerator(speech_export[0])
    wave_ = clip(0, 0.7, 16000)
    hf_feats = WhisperFeatureExtractor.from_pretrained(whisper_dir)(wave_, sampling_rate=16000,
                                                                   return_tensors="np").input_features
    ours = gen.generate(wave_, max_new_tokens=12)
    assert ours.token_ids == hf_whisper_greedy(hf_whisper, hf_feats, 12, gen.gen).token_ids


def test_cli_json_fields(speech_export: tuple[Path, ExportReport], tmp_path: Path,
                         capsys: pytest.CaptureFixture[str]) -> None:
    wav = tmp_path / "clip.wav"
    wav.write_bytes(wav_bytes(clip(1, 0.5, 16000), rate=8000, channels=2))  # resampled and mixed to mono
    assert main(["generate", str(speech_export[0]), "--audio", str(wav), "--max-new-tokens", "12", "--json",
                 "--hf-parity"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"text", "token_ids", "prompt_token_ids", "ttft_ms", "tokens_per_s", "finish_reason", "hf_parity",
            "audio", "runtime"} <= set(data)
    assert data["prompt_token_ids"] == INIT and 1 <= len(data["token_ids"]) <= 12
    assert data["ttft_ms"] > 0 and data["tokens_per_s"] > 0 and isinstance(data["text"], str)
    assert data["hf_parity"]["export_validation"]["status"] == "passed"
    assert data["hf_parity"]["this_clip"]["match"] is True
    assert main(["generate", str(speech_export[0]), "--audio", str(wav), "--max-new-tokens", "5"]) == 0
    assert "tokens" in capsys.readouterr().err


def test_cli_default_export_then_generate(whisper_dir: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """What a user types: `studio export` with no flag writes the cache-carrying parts, `studio generate --audio`
    answers from them."""
    out = tmp_path / "w"
    assert main(["export", str(whisper_dir), "-o", str(out / "model.onnx"), "--cases", "2"]) == 0
    capsys.readouterr()
    assert {"model.onnx", "model_encoder.onnx", "generation.json"} <= {p.name for p in out.iterdir()}
    wav = tmp_path / "clip.wav"
    wav.write_bytes(wav_bytes(clip(2, 0.6, 16000)))
    assert main(["generate", str(out), "--audio", str(wav), "--max-new-tokens", "8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["prompt_token_ids"] == INIT and 1 <= len(data["token_ids"]) <= 8 and isinstance(data["text"], str)


def test_python_api_and_seeded_sampling(speech_export: tuple[Path, ExportReport]) -> None:
    from studio.generate.api import TextGenerator
    from studio.generate.speech import generate_speech

    raw = wav_bytes(clip(3, 0.9, 16000))
    runs = [generate_speech(speech_export[0], raw, max_new_tokens=16, temperature=0.9, top_k=20, seed=4)
            for _ in range(2)]
    assert runs[0].token_ids == runs[1].token_ids and runs[0].sampling["mode"] == "sampling"
    pieces: list[str] = []
    streamed = generate_speech(speech_export[0], raw, max_new_tokens=16, on_text=pieces.append)
    assert pieces and streamed.text.startswith("".join(pieces))
    # the most new tokens the decoder's context allows (32 positions, three start tokens)
    long = generate_speech(speech_export[0], raw, max_new_tokens=100)
    assert long.finish_reason in ("max_context", "stop") and len(long.token_ids) <= 32 - len(INIT)
    with pytest.raises(InputError) as exc:
        TextGenerator(speech_export[0])
    assert exc.value.offending == "--prompt" and "--audio" in str(exc.value.hint)


def test_api_generate_dispatches_by_kind(speech_export: tuple[Path, ExportReport],
                                         exported: tuple[Path, ExportReport]) -> None:
    from studio.generate.api import generate

    raw = wav_bytes(clip(0, 0.7, 16000))
    got = generate(speech_export[0], audio=raw, max_new_tokens=12)
    ref = speech_export[1].generation.prompts[0]  # type: ignore[union-attr]  # the same clip at export
    assert got.prompt_token_ids == INIT and got.token_ids == ref["hf_ids"][:12]
    for kw, flag in (({"prompt": "hello", "audio": raw}, "--prompt"), ({}, "--audio")):
        with pytest.raises(InputError) as exc:
            generate(speech_export[0], **kw)  # type: ignore[arg-type]
        assert exc.value.offending == flag
    with pytest.raises(InputError) as exc:
        generate(exported[0], "a cat", audio=raw)
    assert exc.value.offending == "--audio" and "text only" in str(exc.value)


def test_folder_without_feature_extractor_gets_it_derived(whisper_dir: Path, tmp_path: Path) -> None:
    """No feature extractor settings in the folder (config + weights + tokenizer): transformers' default Whisper
    feature extractor, its mel bins and window from config.json, is written beside the export and named in the
    report; generation parity passes with it (it used to fail after the export with a hint to re-export)."""
    import shutil

    src = tmp_path / "no-processor"
    shutil.copytree(whisper_dir, src)
    (src / "processor_config.json").unlink()
    out = tmp_path / "out" / "model.onnx"
    report = export_model(ExportOptions(model_dir=src, output=out, with_past=True, validation_cases=1))
    assert report.status == "succeeded", report.diagnosis
    assert report.generation is not None and report.generation.status == "passed"
    fe = json.loads((out.parent / "preprocessor_config.json").read_text())
    cfg = json.loads((src / "config.json").read_text())
    assert fe["feature_size"] == cfg["num_mel_bins"]
    assert fe["nb_max_frames"] == 2 * cfg["max_source_positions"]
    assert any(o.path.endswith("preprocessor_config.json") and o.kind == "processor" for o in report.outputs)
    assert any("num_mel_bins" in w and w.startswith("derived:") for w in report.warnings)


@pytest.mark.parametrize(("make", "flag", "words"), [
    ("long", "--audio", "window is 1 s"), ("text", "--audio", "not a PCM WAV"), ("missing", "--audio", "does not exist"),
    ("empty", "--audio", "no samples"), ("prompt", "--prompt", "speech model"), ("none", "--audio", "no --audio"),
    ("zero", "--max-new-tokens", ">= 1"), ("genai", "--runtime", "not available"),
])
def test_bad_input_exits_2_naming_the_flag(speech_export: tuple[Path, ExportReport], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str], make: str, flag: str,
                                           words: str) -> None:
    good = tmp_path / "ok.wav"
    good.write_bytes(wav_bytes(clip(0, 0.5, 16000)))
    files = {"long": wav_bytes(clip(0, 1.5, 16000)), "text": b"this is not audio", "empty": wav_bytes(np.zeros(0))}
    audio = tmp_path / f"{make}.wav"
    if make in files:
        audio.write_bytes(files[make])
    extra = {"prompt": ["--audio", str(good), "--prompt", "hello"], "none": [],
             "zero": ["--audio", str(good), "--max-new-tokens", "0"],
             "genai": ["--audio", str(good), "--runtime", "genai"]}.get(make, ["--audio", str(audio)])
    assert main(["generate", str(speech_export[0]), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and flag in err and words in err and "Traceback" not in err


def test_audio_on_a_text_only_export(exported: tuple[Path, ExportReport], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    wav = tmp_path / "a.wav"
    wav.write_bytes(wav_bytes(clip(0, 0.5, 16000)))
    assert main(["generate", str(exported[0]), "--prompt", "hi", "--audio", str(wav)]) == 2
    err = capsys.readouterr().err
    assert "--audio" in err and "text only" in err


def test_with_past_options_for_whisper(whisper_dir: Path, tmp_path: Path) -> None:
    """On by default; with the default an option the cache cannot combine with falls back to the single-pass
    graph with a note naming it; an explicit --with-past with one is an InputError naming the flag."""
    from studio.export.stages.options import check_options, open_report

    out = tmp_path / "m.onnx"
    default = ExportOptions(model_dir=whisper_dir, output=out)
    check_options(default)
    assert default.with_past is True and default.attn_implementation == "eager"
    clashes = (({"exporter": "dynamo"}, "--exporter"), ({"split_modalities": True}, "--split-modalities"),
               ({"input_signature": "audio:input_features,text:decoder_input_ids"}, "--input-signature"),
               ({"precision": "model=fp16"}, "--precision"))
    for kw, flag in clashes:
        report, _, specs = open_report(ExportOptions(model_dir=whisper_dir, output=out, **kw))  # type: ignore[arg-type]
        assert report.options["with_past"] is False and not any(s.name.startswith("past_") for s in specs)
        assert [w for w in report.warnings if w.startswith(f"with_past: off because {flag} was given")], flag
        explicit = ExportOptions(model_dir=whisper_dir, output=out, with_past=True, **kw)  # type: ignore[arg-type]
        with pytest.raises(InputError) as exc:
            check_options(explicit)
        assert exc.value.offending == flag and "--no-with-past" in str(exc.value.hint)
    report, _, specs = open_report(ExportOptions(model_dir=whisper_dir, output=out, with_past=False))
    assert [s.name for s in specs] == ["input_features", "decoder_input_ids"]
    assert any(w.startswith("with_past: off (--no-with-past)") for w in report.warnings)


def test_unmirrored_generation_settings_warn(whisper_dir: Path, tmp_path: Path) -> None:
    """A generation_config setting HF applies and the speech runtime does not is named before the parity runs."""
    import shutil

    from studio.export.stages.options import prepare_run
    from studio.export.stages.past_seq2seq import speech_record

    src = tmp_path / "src"
    shutil.copytree(whisper_dir, src)
    g = json.loads((src / "generation_config.json").read_text())
    (src / "generation_config.json").write_text(json.dumps({**g, "repetition_penalty": 1.3}))
    run = prepare_run(ExportOptions(model_dir=src, output=tmp_path / "out" / "model.onnx", with_past=True),
                      tmp_path / "work")
    rec = speech_record(run, "model_encoder.onnx", {"sampling_rate": 16000, "chunk_length": 1})
    assert rec.window_samples == 16000 and rec.suppress_tokens == SUPPRESSED
    assert any("repetition_penalty=1.3" in w for w in run.report.warnings)


def test_speech_generate_runs_without_torch(speech_export: tuple[Path, ExportReport], tmp_path: Path) -> None:
    wav = tmp_path / "a.wav"
    wav.write_bytes(wav_bytes(clip(2, 0.4, 16000)))
    code = textwrap.dedent(f"""
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in {{'torch', 'transformers', 'PySide6'}}:
                    raise ImportError('blocked import of ' + name)
        sys.meta_path.insert(0, Block())
        from studio.cli.main import main
        rc = main(["generate", {str(speech_export[0])!r}, "--audio", {str(wav)!r}, "--max-new-tokens", "4",
                   "--json"])
        assert rc == 0, rc
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["prompt_token_ids"] == INIT
