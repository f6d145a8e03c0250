"""Stage "generation" for a Qwen2-VL export with its KV cache: the vision graph is exported beside the decoder, then
the studio's VLM runtime (studio.generate.vlm, what ``studio generate --image`` runs) on both graphs must give HF
``generate()``'s greedy ids token for token on several prompt / image pairs (random images of two sizes, short
and long generations), with the per-step logits diff. generation.json records kind "vlm", the parts, the image
token id and the processor's patch / merge size and pixel limits, and who answered (versions).
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
from studio.generate.config import GenerationConfig

# (prompt text, image (width, height) or None, new tokens): two image sizes, a text-only prompt, short / long runs
VLM_PROMPTS = [("describe the image", (20, 20), 12), ("what is the color of the car near the house?", (40, 24), 20),
               ("two", (20, 20), 6), ("how many people are there?", (32, 32), 16), ("a text-only question", None, 8)]
RUNTIME = "studio VLM loop (vision graph + decoder with past, session.run), CPUExecutionProvider"


def vision_settings(run: ExportRun) -> dict[str, Any]:
    from studio.core.processor_files import read_processor

    cfg, v = run.config, run.config.get("vision_config") or {}
    try:
        proc = read_processor(run.options.model_dir, "image_processor")
    except (OSError, ValueError):
        proc = {}
    size = proc.get("size") or {}
    merge = int(proc.get("merge_size") or v.get("spatial_merge_size", 2))
    patch = int(proc.get("patch_size") or v.get("patch_size", 14))
    return {"image_token_id": int(cfg["image_token_id"]), "vision_start_token_id": cfg.get("vision_start_token_id"),
            "vision_end_token_id": cfg.get("vision_end_token_id"), "patch_size": patch, "merge_size": merge,
            "temporal_patch_size": int(proc.get("temporal_patch_size") or v.get("temporal_patch_size", 2)),
            "min_pixels": int(proc.get("min_pixels") or size.get("shortest_edge") or 56 * 56),
            "max_pixels": int(proc.get("max_pixels") or size.get("longest_edge") or 28 * 28 * 1280)}


def vlm_generation_config(run: ExportRun) -> GenerationConfig:
    from studio.export.qwen2_vl_past import VISION_FILE
    from studio.export.stages.generation import generation_config

    gen = generation_config(run)
    gen.kind = "vlm"
    gen.parts = {"vision": VISION_FILE, "decoder": gen.model_file}
    gen.vision = vision_settings(run)
    gen.graphs = ("vision graph (pixel_values, image_grid_thw -> image_embeds) + one decoder graph with past inputs "
                  "(prefill = zero-length past; M-RoPE positions computed by the runtime with numpy)")
    return gen


def _versions() -> dict[str, str]:
    import onnxruntime
    import torch
    import transformers

    return {"onnxruntime": onnxruntime.__version__, "torch": torch.__version__,
            "transformers": transformers.__version__}


def _generate_both(run: ExportRun, model: Any, gen: GenerationConfig,
                   progress: Callable[[float], None] | None) -> list[Any]:
    from PIL import Image

    from studio.generate.parity import compare_steps
    from studio.generate.vlm import VisionLanguageRuntime
    from studio.generate.vlm import vision_settings as runtime_vision
    from studio.generate.vlm_image import ImageProcessor, VisionSettings, image_prompt
    from studio.generate.vlm_parity import hf_vlm_greedy

    proc = ImageProcessor(run.options.model_dir, VisionSettings(**gen.vision))
    try:
        from studio.generate.tokenizer import TextTokenizer

        tok: Any = TextTokenizer(run.options.model_dir)
    except Exception:  # noqa: BLE001 - no tokenizer.json: seeded ids test the graphs as well
        tok = None
    rng = np.random.default_rng(11)
    cases, n = [], len(VLM_PROMPTS)  # HF first, then PyTorch's weights go, then ONNX Runtime's loop
    for i, (text, size, new) in enumerate(VLM_PROMPTS):
        run.job.check_cancelled()
        ids = tok.encode(text) if tok is not None else [int(t) for t in rng.integers(0, 200, size=len(text) // 3)]
        images = [] if size is None else \
            [proc.from_pil(Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)))]
        prompt = image_prompt(runtime_vision(gen), images, ids)[: gen.max_context - 2]
        new = min(new, gen.max_context - len(prompt) - 1)
        ref = hf_vlm_greedy(model, prompt, images, new, gen.eos_token_ids, gen.pad_token_id)
        cases.append((size, images, prompt, new, ref))
        if progress is not None:
            progress((i + 1) / (2 * n))
    del model
    run.release_torch("the generation check has HF's answers")
    rt = VisionLanguageRuntime(run.tmp, gen)
    results = []
    for i, (size, images, prompt, new, ref) in enumerate(cases):
        run.job.check_cancelled()
        got = rt.generate(prompt, images, new, stop_ids=set(gen.eos_token_ids), record_logits=True)
        r = asdict(compare_steps(got.token_ids, got.step_logits, ref, len(prompt), new))
        r["image"] = None if size is None else {"size": list(size), "grid_thw": images[0].grid_thw[0].tolist()}
        results.append(r)
        if progress is not None:
            progress((n + i + 1) / (2 * n))
    return results


def validate_vlm_generation(run: ExportRun, model: Any, progress: Callable[[float], None] | None = None
                            ) -> list[tuple[Path, str, str | None]]:
    """Export the vision graph, then greedy generation parity with HF generate; writes generation.json."""
    from studio.export import diagnose as dg
    from studio.export.qwen2_vl_past import VISION_FILE, export_vision
    from studio.generate.config import write_files

    report, job = run.report, run.job
    try:
        export_vision(model, run.tmp / VISION_FILE, int(run.options.opset))
        report.parts["vision"] = {"path": str(run.tmp / VISION_FILE), "modality": "vision",
                                  "inputs": {"pixel_values": ["patches", "patch_dim"], "image_grid_thw": ["images", 3]},
                                  "outputs": {"image_embeds": ["image_tokens", "hidden"]}, "standalone": False,
                                  "boundary": "image_embeds -> the decoder's image_embeds input"}
        job.log(f"vision graph: {VISION_FILE} (pixel_values [patches, dim], image_grid_thw [images, 3] -> "
                "image_embeds [image_tokens, hidden])")
        gen = vlm_generation_config(run)
        check = GenerationValidation(cache={**asdict(gen.cache), "max_context": gen.max_context,
                                            "bos_token_id": gen.bos_token_id, "eos_token_ids": gen.eos_token_ids,
                                            "pad_token_id": gen.pad_token_id, "graphs": gen.graphs,
                                            "inputs": gen.inputs, "outputs": gen.outputs, "kind": gen.kind,
                                            "vision": gen.vision}, runtime=RUNTIME)
        report.generation = check
        results = _generate_both(run, model, gen, progress)
    except JobCancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the loop is a diagnosis, not a traceback
        if report.generation is not None:
            report.generation.status = "failed"
        diag = dg.diagnose_exception("generation", exc)
        if diag.error_class in ("unknown", "exporter_error"):
            diag.error_class = "generation_error"
            diag.fix = ("the decoder passed single-pass parity but the vision graph or the generation loop failed; "
                        "the raw log has the error")
        fail(run, diag)
    check.prompts = results
    check.logits_max_abs = max((r["logits_max_abs"] for r in results), default=0.0)
    for r in results:
        job.log(f"generation [{r['prompt_tokens']} prompt + {r['max_new_tokens']} new, image "
                f"{(r['image'] or {}).get('size')}]: {'match' if r['match'] else 'MISMATCH'} "
                f"({len(r['onnx_ids'])} tokens, logits max abs {r['logits_max_abs']:.2g})")
    bad = [r for r in results if not r["match"] and not r["near_tie"]]
    for r in results:
        if not r["match"] and r["near_tie"]:
            report.warnings.append(f"generation: greedy ids diverge at step {r['first_divergence']} of a "
                                   f"{r['prompt_tokens']}-token prompt at a near tie of HF's two best logits")
    if bad:
        check.status = "failed"
        r, step = bad[0], bad[0]["first_divergence"] or 0
        fail(run, Diagnosis(
            stage="generation", error_class="generation_mismatch",
            message=(f"greedy ids diverge from HF generate() at step {step} of a {r['prompt_tokens']}-token prompt "
                     f"(image {(r['image'] or {}).get('size')}): ONNX {r['onnx_ids'][step:step + 3]} vs HF "
                     f"{r['hf_ids'][step:step + 3]} ({len(bad)} of {len(results)} prompts differ)"),
            fix=("check the M-RoPE positions (prefill from rope_index, decode at past + rope_delta) and the image "
                 "placeholder count; or export with --no-with-past"),
            raw_log=json.dumps(results, default=str)[-20000:]))
    check.status = "passed"
    gen.validation = {"status": "passed", "prompts": len(results), "logits_max_abs": check.logits_max_abs,
                      "images": sorted({tuple(r["image"]["size"]) for r in results if r["image"]}),
                      "reference": "transformers generate(do_sample=False, use_cache=True)",
                      "runtime": RUNTIME, "versions": _versions()}
    files = write_files(gen, run.tmp / "generation")
    check.files = [VISION_FILE, *(p.name for p in files)]
    return [(run.tmp / VISION_FILE, "part", "vision"), *((p, "config", None) for p in files)]
