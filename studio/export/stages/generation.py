"""Stage "generation" (``--with-past`` exports): the exported decoder generates, and its greedy ids must equal HF
``generate()`` (``do_sample=False``, ``use_cache=True``) token for token on several prompts and lengths, with the
per-step logits diff reported. It runs the studio's own runtime (studio.generate.runtime, its default loop) on the
graph in the temp folder, so what is validated is what ``studio generate`` runs. Then generation.json and
genai_config.json (onnxruntime-genai's form of the same layout) are written beside the model.

A divergence at a step where HF's two best logits are closer than the logits' error is a near tie (float
rounding picks either): reported as a warning, not a failure. Any other divergence is a diagnosed failure.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import JobCancelled
from studio.export.api import Diagnosis, GenerationValidation
from studio.export.stages.run import ExportRun, fail
from studio.generate.config import GenerationConfig, layout_from_config, special_ids, text_config, write_files

# (prompt text, new tokens): short / medium / long prompts, short / long generations
PROMPTS = [("a photo of a cat", 16), ("what is the color of the car near the house?", 24), ("two", 8),
           ("how many people are there in the picture of the red house with a green tree and a blue car", 12)]
RUNTIME = "studio ORT loop (session.run), CPUExecutionProvider"


def generation_config(run: ExportRun) -> GenerationConfig:
    """The record ``studio generate`` reads: cache layout, special ids, max context, the source folder."""
    cfg = run.config
    gen_file = run.options.model_dir / "generation_config.json"
    try:
        gcfg = json.loads(gen_file.read_text(encoding="utf-8")) if gen_file.is_file() else {}
    except ValueError:
        gcfg = {}
        run.report.warnings.append("generation_config.json is not valid JSON: special ids come from config.json")
    t = text_config(cfg)
    max_context = int(t.get("max_position_embeddings") or t.get("n_positions") or 2048)
    cache = layout_from_config(cfg)
    from studio.export.stages.precision import cache_dtype_of  # the graph's cache type (--kv-cache-dtype)

    cache.dtype = cache_dtype_of(run.model_path) or cache.dtype
    return GenerationConfig(model_file=run.options.output.name, model_type=str(cfg.get("model_type")),
                            cache=cache, max_context=max_context,
                            inputs=list(run.input_names), outputs=["logits", *layout_from_config(cfg).present_names()],
                            source_model_dir=str(Path(run.options.model_dir).resolve()),
                            **special_ids(cfg, gcfg))


def _generate_both(run: ExportRun, model: Any, progress: Callable[[float], None] | None
                   ) -> tuple[GenerationConfig, GenerationValidation, list[Any]]:
    """The studio runtime and HF generate() on every validation prompt; the per-prompt comparisons."""
    from studio.generate.parity import compare_steps, hf_greedy
    from studio.generate.runtime import DecoderRuntime

    gen = generation_config(run)
    check = GenerationValidation(cache={**asdict(gen.cache), "max_context": gen.max_context,
                                        "bos_token_id": gen.bos_token_id, "eos_token_ids": gen.eos_token_ids,
                                        "pad_token_id": gen.pad_token_id, "graphs": gen.graphs,
                                        "inputs": gen.inputs, "outputs": gen.outputs},
                                 runtime=RUNTIME)
    run.report.generation = check
    prompts = [(ids[: gen.max_context - 1], min(new, gen.max_context - len(ids[: gen.max_context - 1])))
               for ids, new in prompt_ids(run, gen.cache.vocab_size)]
    refs = []  # HF first, then PyTorch's weights go (the last stage that needs them), then ONNX Runtime's loop
    for i, (ids, new) in enumerate(prompts):
        refs.append(hf_greedy(model, ids, new, gen.eos_token_ids, gen.pad_token_id))
        if progress is not None:
            progress((i + 1) / (2 * len(prompts)))
    del model
    run.release_torch("the generation check has HF's answers")
    rt = DecoderRuntime(run.model_path, gen, config=run.config)  # what `studio generate` runs: fused attention
    check.runtime = f"{RUNTIME}; fused attention {rt.fused_note}"
    results = []
    for i, ((ids, new), ref) in enumerate(zip(prompts, refs, strict=True)):
        got = rt.generate(ids, new, stop_ids=set(gen.eos_token_ids), record_logits=True)
        results.append(compare_steps(got.token_ids, got.step_logits, ref, len(ids), new))
        if progress is not None:
            progress((len(prompts) + i + 1) / (2 * len(prompts)))
    return gen, check, results


def prompt_ids(run: ExportRun, vocab: int) -> list[tuple[list[int], int]]:
    """The validation prompts as ids: the folder's tokenizer when it has tokenizer.json, else seeded ids."""
    from studio.generate.tokenizer import TextTokenizer

    try:
        tok: Any = TextTokenizer(run.options.model_dir)
    except Exception:  # noqa: BLE001 - no fast tokenizer: seeded ids say the same about the graph
        tok = None
    rng = np.random.default_rng(5)
    out: list[tuple[list[int], int]] = []
    for text, new in PROMPTS:
        ids = tok.encode(text) if tok is not None else []
        if not ids:
            ids = [int(i) for i in rng.integers(0, vocab, size=max(2, len(text) // 3))]
        out.append((ids, new))
    return out


def validate_generation(run: ExportRun, model: Any, progress: Callable[[float], None] | None = None
                        ) -> list[tuple[Path, str, str | None]]:
    """Greedy generation parity with HF generate; writes the generation files into the temp folder."""
    from studio.export import diagnose as dg
    from studio.export.stages.past import VLM_WITH_PAST

    if run.config.get("model_type") in VLM_WITH_PAST:
        from studio.export.stages.vlm_generation import validate_vlm_generation

        return validate_vlm_generation(run, model, progress)
    report, job = run.report, run.job
    try:
        gen, check, results = _generate_both(run, model, progress)
    except JobCancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the loop is a diagnosis, not a traceback
        if report.generation is not None:
            report.generation.status = "failed"
        diag = dg.diagnose_exception("generation", exc)
        diag.error_class = "generation_error" if diag.error_class in ("unknown", "exporter_error") else \
            diag.error_class
        diag.fix = diag.fix if diag.error_class != "generation_error" else \
            "the graph passed single-pass parity but the generation loop failed on it; the raw log has the error"
        fail(run, diag)
    check.prompts = [asdict(r) for r in results]
    check.logits_max_abs = max((r.logits_max_abs for r in results), default=0.0)
    for r in results:
        job.log(f"generation [{r.prompt_tokens} prompt + {r.max_new_tokens} new]: "
                f"{'match' if r.match else 'near tie' if r.near_tie else 'MISMATCH'} "
                f"({len(r.onnx_ids)} tokens, logits max abs {r.logits_max_abs:.2g})")
    bad = [r for r in results if not r.match and not r.near_tie]
    for r in results:
        if not r.match and r.near_tie:
            report.warnings.append(f"generation: greedy ids diverge at step {r.first_divergence} of a "
                                   f"{r.prompt_tokens}-token prompt where HF's two best logits are within the "
                                   f"logits error ({r.logits_max_abs:.2g}): a near tie, not a bug")
    if bad:
        check.status = "failed"
        r = bad[0]
        step = r.first_divergence or 0
        fail(run, Diagnosis(
            stage="generation", error_class="generation_mismatch",
            message=(f"greedy ids diverge from HF generate() at step {step} of a {r.prompt_tokens}-token prompt: "
                     f"ONNX {r.onnx_ids[step:step + 3]} vs HF {r.hf_ids[step:step + 3]} (per-step logits max abs "
                     f"{r.logits_max_abs:.3g}; {len(bad)} of {len(results)} prompts differ)"),
            fix=("single-pass parity passed, so the cache is carried wrong between steps: check the position ids "
                 "and the cache layout (a sliding-window or hybrid cache needs its own export); or export with "
                 "--no-with-past"),
            raw_log=json.dumps(check.prompts, default=str)[-20000:]))
    check.status = "passed"
    gen.validation = {"status": check.status, "prompts": len(results), "logits_max_abs": check.logits_max_abs,
                      "reference": "transformers generate(do_sample=False, use_cache=True)"}
    files = write_files(gen, run.tmp / "generation")
    check.files = [p.name for p in files]
    return [(p, "config", None) for p in files]
