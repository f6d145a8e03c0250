"""Stage "inputs" for a decoder exported with its KV cache (``--with-past``): which models get one, their signature
(ids, mask over past + new positions, positions, one key and one value per layer) and the parity cases.

One graph with past inputs serves prefill (a zero-length past) and the decode steps: onnxruntime-genai loads that
form as it is, the weights are stored once, and the prefill through an empty past costs no more than a graph
without one (BENCHMARKS.md). TorchScript only for now: torch.export cannot yet express the mask's length as
past + sequence with a past that may be empty.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from studio.core.catalogue import N_
from studio.core.errors import InputError
from studio.export.contract import ExportOptions, InputSpec
from studio.export.signatures import is_decoder_only
from studio.export.stages.inputs import ExampleInputs, axis_limits
from studio.export.stages.run import ExportRun, fail, to_torch
from studio.export.validate import CaseSpec, _id_limit
from studio.generate.config import CacheLayout, layout_from_config

TRACE = {"batch": 2, "sequence": 3, "past_sequence": 5}
NOT_YET: dict[str, str] = {}  # decoder families without a cache yet (Whisper has its own: stages/past_seq2seq.py)
VLM_WITH_PAST = ("qwen2_vl",)  # vision graph + M-RoPE decoder with past (studio.export.qwen2_vl_past)


def resolve_with_past(options: ExportOptions, config: dict[str, Any]) -> tuple[bool, str | None]:
    """``options.with_past`` as a bool (None: on for decoder-only models); a note when the default is off for a
    decoder this step does not cover yet. An explicit ``--with-past`` that cannot be honoured is an InputError."""
    mt = str(config.get("model_type"))
    want = options.with_past
    decoder = is_decoder_only(config) or mt in VLM_WITH_PAST
    if want and options.input_signature is not None:
        raise InputError("--with-past and --input-signature do not combine", offending="--input-signature",
                         hint="with a KV cache the signature is the decoder's own (ids, mask, positions, cache); "
                              "drop --input-signature, or add --no-with-past")
    if want is None:
        if decoder and options.exporter == "torchscript" and not options.split_modalities \
                and options.input_signature is None:
            return True, None
        if mt in NOT_YET:
            return False, (f"with_past: {NOT_YET[mt]} is exported without a KV cache for now (a single pass over "
                           "the whole sequence); --with-past covers decoder-only *ForCausalLM models")
        if decoder:
            return False, (N_("with_past: off because --exporter dynamo cannot export the cache yet")
                           if options.exporter != "torchscript" else
                           N_("with_past: off because --split-modalities was given") if options.split_modalities
                           else N_("with_past: off because --input-signature was given"))
        return False, None
    if not want:
        return False, None
    if not decoder:
        what = NOT_YET.get(mt, f"model type '{mt}' ({(config.get('architectures') or ['?'])[0]})")
        raise InputError(f"--with-past is not available for {what}", offending="--with-past",
                         hint="it covers decoder-only models (Qwen2ForCausalLM, LlamaForCausalLM, ...); "
                              "export with --no-with-past")
    if options.exporter != "torchscript":
        raise InputError("--with-past needs --exporter torchscript", offending="--exporter",
                         hint="torch.export cannot yet tie the mask length to past + sequence; use --exporter "
                              "torchscript, or --no-with-past")
    if options.split_modalities:
        raise InputError("--with-past and --split-modalities do not combine", offending="--split-modalities",
                         hint="with --with-past a Qwen2-VL export writes its vision graph and decoder itself; drop "
                              "--split-modalities" if mt in VLM_WITH_PAST else
                              "a decoder-only model has one part; drop --split-modalities")
    return True, None


def past_notes(options: ExportOptions, config: dict[str, Any]) -> list[str]:
    """Report warnings: why a decoder goes without a cache, or how the cache-carrying one is loaded."""
    if options.with_past:
        return [N_("with_past: the decoder is loaded with attn_implementation='eager' (the same math as SDPA, and a "
                "trace that keeps the causal + padding mask as graph ops)")] \
            if options.attn_implementation == "eager" else []
    mt = str(config.get("model_type"))
    if mt == "whisper":  # on by default (studio.export.stages.past_seq2seq)
        from studio.export.stages.past_seq2seq import seq2seq_past_note

        return [seq2seq_past_note(options)]
    if mt in NOT_YET:
        family = NOT_YET[mt]
        return [N_(f"with_past: {family} is exported without a KV cache for now (a single pass over the whole "
                   "sequence); --with-past covers decoder-only *ForCausalLM models")]
    if is_decoder_only(config) or mt in VLM_WITH_PAST:
        _, why = resolve_with_past(ExportOptions(options.model_dir, options.output, options.input_signature,
                                                 exporter=options.exporter,
                                                 split_modalities=options.split_modalities), config)
        why = why or N_("with_past: off (--no-with-past)")
        return [N_(f"{why}: the decoder is a single pass over the whole sequence, without a KV cache; `studio "
                   "generate` needs --with-past")]
    return []


def decoder_specs(config: dict[str, Any], layout: CacheLayout | None = None) -> list[InputSpec]:
    """input_ids, attention_mask (batch, total_sequence = past + sequence), position_ids, then the cache."""
    if config.get("model_type") in VLM_WITH_PAST:
        from studio.export.qwen2_vl_past import vlm_decoder_specs

        return vlm_decoder_specs(config, layout)
    c = layout or layout_from_config(config)
    b, s, p = TRACE["batch"], TRACE["sequence"], TRACE["past_sequence"]
    specs = [InputSpec("text", "input_ids", {0: "batch", 1: "sequence"}, "int64", [b, s]),
             InputSpec("text", "attention_mask", {0: "batch", 1: "total_sequence"}, "int64", [b, p + s]),
             InputSpec("text", "position_ids", {0: "batch", 1: "sequence"}, "int64", [b, s])]
    specs += [InputSpec("text", name, {0: "batch", 2: "past_sequence"}, c.dtype, [b, c.kv_heads, p, c.head_dim])
              for name in c.past_names()]
    return specs


def past_cases(count: int) -> list[CaseSpec]:
    """Traced sizes, a prefill (empty past), a decode step (one new token on a long past), a left-padded prefill,
    then random sizes."""
    cases = [CaseSpec(N_("traced shapes (batch=2 sequence=3 past=5)"), dict(TRACE), 0),
             CaseSpec(N_("prefill (batch=1 sequence=9 past=0)"), {"batch": 1, "sequence": 9, "past_sequence": 0}, 1),
             CaseSpec(N_("decode step (batch=3 sequence=1 past=12)"), {"batch": 3, "sequence": 1, "past_sequence": 12}, 2),
             CaseSpec(N_("left-padded prefill (batch=2 sequence=7 past=0)"),
                      {"batch": 2, "sequence": 7, "past_sequence": 0}, 3, padded=True)]
    rng = np.random.default_rng(77)
    while len(cases) < count:
        sizes = {"batch": int(rng.integers(1, 4)), "sequence": int(rng.integers(1, 8)),
                 "past_sequence": int(rng.integers(0, 16))}
        batch, sequence, past = sizes["batch"], sizes["sequence"], sizes["past_sequence"]
        cases.append(CaseSpec(N_(f"random batch={batch} sequence={sequence} past={past}"), sizes, len(cases)))
    return cases[:max(count, 3)]


def past_feeds(layout: CacheLayout, config: dict[str, Any], case: CaseSpec) -> dict[str, np.ndarray]:
    """Seeded inputs of one case: random ids and cache, a mask over past + new, positions as HF computes them
    (the cumulative mask minus one, so a left-padded row starts at 0 where its tokens start)."""
    rng = np.random.default_rng(2000 + case.seed)
    b, s, p = case.sizes["batch"], case.sizes["sequence"], case.sizes["past_sequence"]
    mask = np.ones((b, p + s), dtype=np.int64)
    if case.padded and b > 1:
        mask[-1, : max(1, (p + s) // 3)] = 0
    positions = np.clip(np.cumsum(mask, axis=1) - 1, 0, None)[:, p:].astype(np.int64)
    feeds = {"input_ids": rng.integers(0, _id_limit(config), size=(b, s)).astype(np.int64),
             "attention_mask": mask, "position_ids": positions}
    dtype = np.float16 if layout.dtype == "float16" else np.float32
    for name in layout.past_names():
        feeds[name] = rng.standard_normal((b, layout.kv_heads, p, layout.head_dim)).astype(dtype)
    return feeds


def build_past_inputs(run: ExportRun, model: Any) -> ExampleInputs:
    """The cache-carrying module to trace, checked against the cache the model really returns, and its cases."""
    from studio.export import diagnose as dg
    from studio.export.decoder import DecoderWithPast, probe_cache

    if run.config.get("model_type") in VLM_WITH_PAST:

        return build_vlm_past_inputs(run, model)
    layout = layout_from_config(run.config)
    try:
        shapes = probe_cache(model)
    except Exception as exc:  # noqa: BLE001 - a model whose cache is not per-layer key/value tensors
        diag = dg.diagnose_exception("export", exc, model=model)
        diag.error_class = "cache_layout_unsupported"
        diag.fix = ("this model's cache is not one key and one value tensor per layer; export with --no-with-past "
                    "(a single pass without a cache)")
        fail(run, diag)
    want = [(1, layout.kv_heads, 3, layout.head_dim)] * (2 * layout.layers)
    if [tuple(s) for s in shapes] != want:
        from studio.export.contract import Diagnosis

        fail(run, Diagnosis(stage="export", error_class="cache_layout_mismatch",
                            message=f"the model's cache has shapes {shapes[:2]}... ({len(shapes)} tensors) but the "
                                    f"config implies {len(want)} tensors of {want[0]} ({layout.layout})",
                            fix="check num_key_value_heads / head_dim in config.json, or export with --no-with-past"))
    if "position_ids" not in _forward_params(model):
        fail(run, _no_positions(model))
    wrapper = DecoderWithPast(model, layout.layers).eval()
    input_names = run.input_names
    output_names = ["logits", *layout.present_names()]
    cases = past_cases(max(3, int(run.options.validation_cases) + 1))
    feeds0 = past_feeds(layout, run.config, cases[0])
    output_axes = {"logits": {0: "batch", 1: "sequence"},
                   **{n: {0: "batch", 2: "total_sequence"} for n in layout.present_names()}}
    ex = ExampleInputs(input_names, output_names, wrapper, wrapper, cases, feeds0,
                       tuple(to_torch(feeds0[n]) for n in input_names),
                       {s.name: dict(s.dynamic_axes) for s in run.specs}, axis_limits(run.config),
                       output_axes=output_axes, make_feeds=lambda case: past_feeds(layout, run.config, case))
    run.job.log(f"with past: {layout.layers} layers x (key, value) of ({layout.layout}) = "
                f"(batch, {layout.kv_heads}, past_sequence, {layout.head_dim}) {layout.dtype}")
    return ex


def _forward_params(model: Any) -> set[str]:
    import inspect

    return set(inspect.signature(type(model).forward).parameters)


def _no_positions(model: Any) -> Any:
    from studio.export.contract import Diagnosis

    return Diagnosis(stage="export", error_class="cache_layout_unsupported",
                     message=f"{type(model).__name__}.forward takes no position_ids: the decode steps could not "
                             "tell the model where the new token stands", fix="export with --no-with-past")


def build_vlm_past_inputs(run: Any, model: Any) -> Any:
    """The cache-carrying Qwen2-VL decoder to trace (the vision graph is exported in the generation stage)."""
    from studio.export.qwen2_vl_past import Qwen2VLDecoderWithPast, vlm_cases, vlm_feeds

    layout = layout_from_config(run.config)
    wrapper = Qwen2VLDecoderWithPast(model, layout.layers).eval()
    cases = vlm_cases(max(3, int(run.options.validation_cases) + 1))
    feeds0 = vlm_feeds(layout, run.config, cases[0])
    names = run.input_names
    output_axes = {"logits": {0: "batch", 1: "sequence"},
                   **{n: {0: "batch", 2: "total_sequence"} for n in layout.present_names()}}
    run.job.log(f"with past (Qwen2-VL): {layout.layers} layers x (key, value) of (batch, {layout.kv_heads}, "
                f"past_sequence, {layout.head_dim}); M-RoPE positions (3, batch, sequence) from the runtime")
    return ExampleInputs(names, ["logits", *layout.present_names()], wrapper, wrapper, cases, feeds0,
                         tuple(to_torch(feeds0[n]) for n in names), {s.name: dict(s.dynamic_axes) for s in run.specs},
                         axis_limits(run.config), output_axes=output_axes,
                         make_feeds=lambda case: vlm_feeds(layout, run.config, case))
