"""``studio export`` for Whisper (--with-past, the default): the encoder (+ cross K/V) and decoder-with-past graphs,
each checked (onnx.checker, shape inference, ORT load) and compared with PyTorch on several shapes, then generation
parity: greedy ids of the studio's speech runtime (studio.generate.speech, what ``studio generate --audio`` runs)
vs HF ``generate()`` on synthetic clips of different lengths (sweep, noise, tones, a full window), token for token,
with the per-step logits diff. generation.json records the parts, the start / forced / suppressed tokens and the
audio window. The graphs' form is documented in studio.export.seq2seq.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.jobs import ToolLine
from studio.export.contract import Diagnosis, GenerationValidation, InputSpec
from studio.export.stages.run import ExportRun, fail, to_torch
from studio.generate.speech_config import SpeechGenerationConfig, seq2seq_names, write_speech_record

SEQ2SEQ_TYPES = ("whisper",)
PROCESSORS = ["SuppressTokensLogitsProcessor (suppress_tokens, every step)",
              "SuppressTokensAtBeginLogitsProcessor (begin_suppress_tokens, first new token)"]
# generation_config settings HF generate() would apply and the speech runtime does not (key -> neutral value)
NOT_MIRRORED = {"repetition_penalty": 1.0, "no_repeat_ngram_size": 0, "return_timestamps": False,
                "no_speech_threshold": None, "forced_bos_token_id": None, "bad_words_ids": None, "min_new_tokens": 0,
                "min_length": 0, "encoder_repetition_penalty": 1.0}
# (clip name, seconds as a fraction of the window, new tokens): lengths and generation sizes both vary
CLIPS = [("sine sweep 200-1800 Hz", 0.7, 16), ("white noise", 0.3, 24), ("two tones 440 + 660 Hz", 1.0, 8),
         ("AM chirp", 0.45, 31)]
RUNTIME = "studio speech loop (encoder once, decoder with past, session.run), CPUExecutionProvider"
# (batch, sequence, past) of the decoder's single-pass parity cases: traced, prefill, decode, random
DECODER_CASES = [(2, 3, 5), (1, 4, 0), (3, 1, 12), (1, 1, 0), (2, 2, 20)]


def is_seq2seq(config: dict[str, Any]) -> bool:
    return str(config.get("model_type")) in SEQ2SEQ_TYPES


def seq2seq_clash(options: Any) -> str | None:
    """The first given option the encoder + decoder-with-past export cannot honour (None: none)."""
    return ("--exporter" if options.exporter != "torchscript" else
            "--split-modalities" if options.split_modalities else
            "--input-signature" if options.input_signature is not None else
            "--precision" if getattr(options, "precision", None) else None)


def resolve_seq2seq_past(options: Any) -> bool:
    """``options.with_past`` for Whisper: on unless --no-with-past (what ``studio generate --audio``, the agent's
    and Triton's generate take); with the default (None) an option that cannot combine with it falls back to the
    single-pass graph (seq2seq_past_note says why); an explicit --with-past with one is an InputError."""
    from studio.core.errors import InputError

    clash = seq2seq_clash(options)
    if options.with_past is None:
        return clash is None
    if options.with_past and clash:
        why = {"--exporter": "torch.export cannot yet tie the mask length to past + sequence; use --exporter "
                             "torchscript",
               "--split-modalities": "with a KV cache Whisper is always two parts (encoder, decoder with past)",
               "--input-signature": "with a KV cache the signature is the decoder's own",
               "--precision": "the encoder and decoder with past are FP32 for now"}[clash]
        raise InputError(f"--with-past and {clash} do not combine for Whisper", offending=clash,
                         hint=f"{why}; or export with --no-with-past")
    return bool(options.with_past)


def seq2seq_past_note(options: Any) -> str:
    """The report's note for a Whisper export without its KV cache: why, and what it leaves out."""
    clash = seq2seq_clash(options) if options.with_past is not True else None
    why = f"off because {clash} was given" if clash else "off (--no-with-past)"
    return (f"with_past: {why}: Whisper is exported as one pass (input_features + decoder_input_ids -> logits) "
            "without a KV cache; `studio generate --audio` and the generate endpoints need the default export")


def seq2seq_specs(config: dict[str, Any]) -> list[InputSpec]:
    """The report's signature (the model's own input names); the graphs' names are in generation.json."""
    mels = int(config.get("num_mel_bins", 80))
    frames = 2 * int(config.get("max_source_positions", 1500))
    return [InputSpec("audio", "input_features", {0: "batch"}, "float32", [1, mels, frames]),
            InputSpec("text", "decoder_input_ids", {0: "batch", 1: "sequence"}, "int64", [1, 1])]


def clip(kind: int, seconds: float, rate: int) -> np.ndarray:
    """A seeded synthetic waveform: the speech runtime and HF see the same features of it."""
    t = np.arange(max(int(seconds * rate), 1)) / rate
    rng = np.random.default_rng(11 + kind)
    if kind == 0:
        x = np.sin(2 * np.pi * (200 + 800 * t / max(seconds, 1e-3)) * t)
    elif kind == 1:
        x = rng.standard_normal(t.size) * 0.3
    elif kind == 2:
        x = 0.5 * np.sin(2 * np.pi * 440 * t) + 0.3 * np.sin(2 * np.pi * 660 * t)
    else:
        x = (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t)) * np.sin(2 * np.pi * (300 + 2000 * t) * t)
    return x.astype(np.float32)


def speech_record(run: ExportRun, encoder_file: str, feature: dict[str, Any]) -> SpeechGenerationConfig:
    """generation.json's content from config.json, generation_config.json and the feature extractor."""
    from studio.export.seq2seq import whisper_dims
    from studio.generate.config import special_ids

    cfg = run.config
    gen_file = run.options.model_dir / "generation_config.json"
    try:
        g = json.loads(gen_file.read_text(encoding="utf-8")) if gen_file.is_file() else {}
    except ValueError:
        g = {}
        run.report.warnings.append("generation_config.json is not valid JSON: special ids come from config.json")
    d = whisper_dims(cfg)
    for key, default in NOT_MIRRORED.items():
        if g.get(key) not in (None, default):
            run.report.warnings.append(f"generation_config.json sets {key}={g[key]!r}: the studio speech runtime does "
                                       "not apply it (it mirrors suppress_tokens and begin_suppress_tokens); HF "
                                       "generate() does, so the generation parity below may diverge")
    start = g.get("decoder_start_token_id", cfg.get("decoder_start_token_id"))
    if start is None:
        raise ValueError("neither generation_config.json nor config.json names decoder_start_token_id")
    forced = sorted((int(p), int(t)) for p, t in (g.get("forced_decoder_ids") or cfg.get("forced_decoder_ids") or []))
    names = seq2seq_names(d["layers"])
    rate = int(feature.get("sampling_rate", 16000))
    n_samples = int(feature.get("n_samples") or int(feature.get("chunk_length", 30)) * rate)
    ids = special_ids(cfg, g)

    def pick(key: str) -> list[int]:
        value = g.get(key, cfg.get(key))
        return [int(v) for v in value or []]

    return SpeechGenerationConfig(
        model_type=str(cfg.get("model_type")), encoder_file=encoder_file, decoder_file=run.options.output.name,
        layers=d["layers"], heads=d["heads"], head_dim=d["head_dim"], vocab_size=d["vocab"],
        num_mel_bins=d["mels"], encoder_positions=d["encoder_positions"], max_context=d["max_target"],
        decoder_start_token_id=int(start), init_token_ids=[int(start), *(t for _, t in forced)],
        eos_token_ids=ids["eos_token_ids"], pad_token_id=ids["pad_token_id"],
        suppress_tokens=pick("suppress_tokens"), begin_suppress_tokens=pick("begin_suppress_tokens"),
        sampling_rate=rate, window_samples=n_samples, window_s=round(n_samples / rate, 4),
        encoder_inputs=["input_features"], encoder_outputs=["encoder_hidden_states", *names["cross_present"]],
        decoder_inputs=["input_ids", "attention_mask", "position_ids", *names["past"]],
        decoder_outputs=["logits", *names["present"]], logits_processors=list(PROCESSORS),
        source_model_dir=str(Path(run.options.model_dir).resolve()))


def _check_part(run: ExportRun, path: Path) -> Any:
    """checker, shape inference and an ORT session for one part; each failure diagnosed."""
    import onnx

    from studio.export import diagnose as dg
    from studio.export.validate import check_graph, ort_session

    checker, shapes, errors = check_graph(path)
    v = run.report.validation
    v.checker = checker if v.checker in ("not run", "passed") else v.checker
    v.shape_inference = shapes if v.shape_inference in ("not run", "passed") else v.shape_inference
    if checker != "passed" or shapes != "passed":
        stage = "checker" if checker != "passed" else "shape_inference"
        fail(run, dg.diagnose_exception(stage, RuntimeError(f"{path.name}: {errors[-1]}"),
                                        onnx_model=onnx.load(str(path))))
    try:
        session = ort_session(path)
    except Exception as exc:  # noqa: BLE001
        v.ort_load = f"failed: {path.name}: {str(exc).splitlines()[0][:300]}"
        fail(run, dg.diagnose_exception("ort_load", exc, onnx_model=onnx.load(str(path))))
    v.ort_load = "passed"
    return session


def _single_pass_parity(run: ExportRun, model: Any, enc_sess: Any, dec_sess: Any) -> None:
    """Each graph vs its torch module on fresh shapes (batch, prefill, decode step, long past)."""
    import torch

    from studio.export.seq2seq import WhisperDecoderWithPast, WhisperEncoderWithCross, whisper_dims
    from studio.export.validate import CaseSpec, run_case

    d = whisper_dims(run.config)
    names = seq2seq_names(d["layers"])
    atol, rtol = run.options.atol, run.options.rtol
    enc, dec = WhisperEncoderWithCross(model).eval(), WhisperDecoderWithPast(model, d["layers"]).eval()
    enc_names = ["encoder_hidden_states", *names["cross_present"]]
    for i, (b, s, p) in enumerate(DECODER_CASES):
        rng = np.random.default_rng(300 + i)
        feats = rng.standard_normal((b, d["mels"], d["frames"])).astype(np.float32)
        with torch.no_grad():
            ref = [t.numpy() for t in enc(to_torch(feats))]
        if i < 3:  # the encoder has one dynamic axis: three batch sizes say it all
            vc, _ = run_case(CaseSpec(f"encoder batch={b}", {"batch": b}, i), "encoder", enc_sess,
                             {"input_features": feats}, dict(zip(enc_names, ref, strict=True)), atol, rtol)
            run.report.validation.cases.append(vc)
        feeds: dict[str, np.ndarray] = {"input_ids": rng.integers(0, d["vocab"], (b, s)).astype(np.int64),
                                        "attention_mask": np.ones((b, p + s), np.int64),
                                        "position_ids": np.tile(np.arange(p, p + s, dtype=np.int64), (b, 1))}
        for li in range(d["layers"]):
            for kind in ("key", "value"):
                feeds[f"past_key_values.{li}.decoder.{kind}"] = \
                    rng.standard_normal((b, d["heads"], p, d["head_dim"])).astype(np.float32)
            feeds[f"past_key_values.{li}.encoder.key"] = ref[1 + 2 * li]
            feeds[f"past_key_values.{li}.encoder.value"] = ref[2 + 2 * li]
        order = ["input_ids", "attention_mask", "position_ids", *names["past"]]
        with torch.no_grad():
            out = [t.numpy() for t in dec(*(to_torch(feeds[n]) for n in order))]
        what = "prefill" if p == 0 else "decode step" if s == 1 else "traced shapes" if i == 0 else "random"
        vc, _ = run_case(CaseSpec(f"decoder {what} (batch={b} sequence={s} past={p})",
                                  {"batch": b, "sequence": s, "past_sequence": p}, i), "decoder", dec_sess,
                         feeds, dict(zip(["logits", *names["present"]], out, strict=True)), atol, rtol)
        run.report.validation.cases.append(vc)
    bad = [c for c in run.report.validation.cases if not c.passed]
    if bad:
        worst = max((o for o in bad[0].outputs if not o.passed), key=lambda o: o.max_abs, default=None)
        fail(run, Diagnosis(stage="parity", error_class="parity_mismatch",
                            message=f"{bad[0].graph} differs from PyTorch on '{bad[0].name}'"
                                    + (f": {worst.output} max abs {worst.max_abs:.3g}" if worst else "")
                                    + (f" ({bad[0].error})" if bad[0].error else ""),
                            fix="a shape the trace froze (tracer warnings in the log); or raise --atol for a "
                                "numerically sensitive model", module=f"{bad[0].graph} graph"))


def generation_parity(run: ExportRun, model: Any, gen: SpeechGenerationConfig,
                      progress: Callable[[float], None] | None = None) -> GenerationValidation:
    """The speech runtime on the temp folder vs HF generate() on every synthetic clip (same features)."""
    from studio.generate.parity import compare_steps
    from studio.generate.speech import SpeechRuntime, audio_front_end
    from studio.generate.speech_parity import hf_init_tokens, hf_whisper_greedy

    front = audio_front_end(run.tmp / "companions")
    first = front.log_mel.one(clip(0, CLIPS[0][1] * gen.window_s, gen.sampling_rate))[None]
    start = hf_init_tokens(model, first)
    if start != gen.init_token_ids:  # language / task / no-timestamps tokens HF adds on its own
        run.job.log(f"HF generate() starts the decoder with {start}, not {gen.init_token_ids}: recorded")
        gen.init_token_ids = start
        gen.init_tokens_source = ("HF generate() on the first validation clip (its language / task / "
                                  "no-timestamps tokens)")
    record = {k: v for k, v in asdict(gen).items() if k != "validation"}
    check = GenerationValidation(cache={**record, "kv_heads": gen.heads}, runtime=RUNTIME)
    run.report.generation = check
    rt = SpeechRuntime(run.tmp, gen)
    room = gen.max_context - len(gen.init_token_ids)
    results = []
    for i, (name, frac, new) in enumerate(CLIPS):
        new = min(new, room)
        wave_ = clip(i, frac * gen.window_s, gen.sampling_rate)
        feats = front.log_mel.one(wave_)[None]
        got = rt.generate(feats, new, record_logits=True)
        ref = hf_whisper_greedy(model, feats, new, gen)
        r = asdict(compare_steps(got.token_ids, got.step_logits, ref, len(gen.init_token_ids), new))
        r.update(clip=name, seconds=round(wave_.size / gen.sampling_rate, 3))
        results.append(r)
        if progress is not None:
            progress((i + 1) / len(CLIPS))
    check.prompts = results
    check.logits_max_abs = max((r["logits_max_abs"] for r in results), default=0.0)
    return check


def export_speech(run: ExportRun, model: Any, begin: Callable[[str, str], None],
                  within: Callable[[str, float], None]) -> list[tuple[Path, str, str | None]]:
    """Export, check, parity and generation for Whisper; the files to move into place (decoder = the model)."""
    from studio.export import diagnose as dg
    from studio.export.seq2seq import export_parts
    from studio.export.stages.run import timed
    from studio.export.stages.write import copy_companions

    report, options = run.report, run.options
    enc_path = run.tmp / f"{options.output.stem}_encoder.onnx"
    begin("export", "exporting the encoder (+ cross K/V) and the decoder with past (torchscript)")
    with timed(report, "export"):
        try:
            results = export_parts(model, run.config, enc_path, run.model_path, options.opset)
        except Exception as exc:  # noqa: BLE001 - any exporter failure is a diagnosis
            fail(run, dg.diagnose_exception("export", exc, model=model, exporter="torchscript",
                                            opset=options.opset))
    for r in results:
        for line in r.log[-20:]:
            run.job.log(ToolLine(line))
    from studio.export.dims import written_opset

    report.opset = written_opset(run.model_path)
    begin("check", "onnx.checker, shape inference, ONNX Runtime load (both graphs)")
    with timed(report, "check"):
        enc_sess, dec_sess = _check_part(run, enc_path), _check_part(run, run.model_path)
    begin("parity", f"parity on {len(DECODER_CASES) + 3} inputs")
    with timed(report, "parity"):
        _single_pass_parity(run, model, enc_sess, dec_sess)
    begin("generation", "greedy generation vs HF generate() on synthetic clips")
    with timed(report, "generation"):
        try:
            companions = copy_companions(options.model_dir, run.tmp, options.output)  # the front end's settings
            del companions
            derived = derive_feature_extractor(run, run.tmp / "companions")
            gen = speech_record(run, enc_path.name, _feature_settings(run.tmp / "companions"))
            check = generation_parity(run, model, gen, progress=lambda f: within("generation", f))
        except Exception as exc:  # noqa: BLE001 - a failing loop is a diagnosis, not a traceback
            if report.generation is not None:
                report.generation.status = "failed"
            diag = dg.diagnose_exception("generation", exc)
            diag.error_class = "generation_error" if diag.error_class in ("unknown", "exporter_error") else \
                diag.error_class
            diag.fix = diag.fix if diag.error_class != "generation_error" else \
                "the graphs passed single-pass parity but the speech generation loop failed; the raw log has it"
            fail(run, diag)
        _verdict(run, check)
        versions = _versions()
        check.runtime = (f"{RUNTIME} (onnxruntime {versions['onnxruntime']}); reference: transformers "
                         f"{versions['transformers']} WhisperForConditionalGeneration.generate(do_sample=False)")
        gen.validation = {"status": "passed", "clips": [{k: r[k] for k in ("clip", "seconds", "max_new_tokens",
                                                                           "match", "near_tie", "logits_max_abs")}
                                                        for r in check.prompts],
                          "logits_max_abs": check.logits_max_abs, "runtime": RUNTIME,
                          "reference": "transformers WhisperForConditionalGeneration.generate(do_sample=False)",
                          "versions": versions}
        path = write_speech_record(gen, run.tmp / "generation")
        check.files = [path.name]
        report.parts = {"encoder": _part_info(enc_path, enc_sess, "audio"),
                        "decoder": _part_info(run.model_path, dec_sess, "text")}
    return [(enc_path, "part", "audio"), (path, "config", None), *((p, "processor", "audio") for p in derived)]


def derive_feature_extractor(run: ExportRun, folder: Path) -> list[Path]:
    """A folder without preprocessor_config.json: the feature extractor transformers maps to the type, built from
    the config (mel bins from num_mel_bins), written beside the export and named in the report."""
    from studio.core.processor_files import PROCESSOR_FILES
    from studio.export.processor_source import load_processor

    if any((folder / n).is_file() for n in PROCESSOR_FILES):
        return []
    source = load_processor(run.options.model_dir, run.config)
    if source is None:
        return []
    written = source.write_derived(folder)
    for note in source.derived:
        run.report.warnings.append(f"derived: {note}")
    if written:
        run.report.warnings.append("derived: " + ", ".join(p.name for p in written) + " written beside the export "
                                   "(the folder has none; built from config.json)")
        run.report.example_inputs = {"processor": source.name, "origin": source.origin, "derived": source.derived,
                                     "files": [p.name for p in written]}
    return written


def _part_info(path: Path, session: Any, modality: str) -> dict[str, Any]:
    """A part as report.parts lists them (the split stage's form): its graph's names and dims."""
    from studio.export.dims import written_opset

    return {"path": str(path), "modality": modality, "standalone": False, "opset": written_opset(path),
            "inputs": {x.name: list(x.shape) for x in session.get_inputs()},
            "outputs": {x.name: list(x.shape) for x in session.get_outputs()},
            "checker": "passed", "shape_inference": "passed", "ort_load": "passed"}


def _verdict(run: ExportRun, check: GenerationValidation) -> None:
    for r in check.prompts:
        run.job.log(f"generation [{r['clip']}, {r['seconds']} s, {r['max_new_tokens']} new]: "
                    f"{'match' if r['match'] else 'near tie' if r['near_tie'] else 'MISMATCH'} "
                    f"({len(r['onnx_ids'])} tokens, logits max abs {r['logits_max_abs']:.2g})")
        if not r["match"] and r["near_tie"]:
            run.report.warnings.append(f"generation: greedy ids diverge at step {r['first_divergence']} on "
                                       f"'{r['clip']}' where HF's two best logits are within the logits error: "
                                       "a near tie, not a bug")
    bad = [r for r in check.prompts if not r["match"] and not r["near_tie"]]
    if bad:
        check.status = "failed"
        r, step = bad[0], bad[0]["first_divergence"] or 0
        fail(run, Diagnosis(
            stage="generation", error_class="generation_mismatch",
            message=(f"greedy ids diverge from HF generate() at step {step} on '{r['clip']}': ONNX "
                     f"{r['onnx_ids'][step:step + 3]} vs HF {r['hf_ids'][step:step + 3]} (logits max abs "
                     f"{r['logits_max_abs']:.3g}; {len(bad)} of {len(check.prompts)} clips differ)"),
            fix=("single-pass parity passed, so the loop differs from HF's: the start / forced / suppressed "
                 "tokens in generation_config.json (the runtime mirrors suppress_tokens and begin_suppress_tokens "
                 "only), or the self cache carried wrong between steps; or export with --no-with-past"),
            raw_log=json.dumps(check.prompts, default=str)[-20000:]))
    check.status = "passed"


def _feature_settings(folder: Path) -> dict[str, Any]:
    from studio.core.processor_files import PROCESSOR_FILES
    from studio.edge.raw_inputs import processor_config

    return processor_config({n: folder / n for n in PROCESSOR_FILES if (folder / n).is_file()}, "feature_extractor")


def _versions() -> dict[str, str]:
    import onnxruntime
    import torch
    import transformers

    return {"torch": torch.__version__, "transformers": transformers.__version__,
            "onnxruntime": onnxruntime.__version__}
