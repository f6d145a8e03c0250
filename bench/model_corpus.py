"""The whole-model corpus of the model-level agreement benchmark: every sample the studio ships and tiny
random-weight models built from transformers config classes (no hub), exported by the studio's own exporter,
plus their static / fp16 / int8 variants made by the studio's own fixes (``studio fix``).

    .venv/bin/python -m bench.model_corpus --work DIR [--only NAME ...]

Resumable: a model already in DIR/manifest.json is kept. An export or fix that fails is recorded with its
reason (never silently left out). Each entry names its file, family, variant and the static shapes the
verifiers build at (batch 1, sequence 8, ... for the model's symbolic dims).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

# symbolic dim name -> the size verifiers build at (rknn-toolkit2 builds static graphs only)
DIM_DEFAULTS = {"batch": 1, "images": 1, "sequence": 8, "decoder_sequence": 4, "past_sequence": 4,
                "total_sequence": 12, "samples": 1600, "patches": 16, "height": 32, "width": 32}
DEFAULT_DIM = 8
# the exporter names an audio model's attention_mask axis "sequence" although it masks the samples: the same
# length for both, or the graph is built at shapes no processor would give it
AUDIO_FAMILIES = ("wav2vec2", "hubert", "wavlm", "data2vec-audio")
FAMILY_DIMS = {f: {"sequence": DIM_DEFAULTS["samples"]} for f in AUDIO_FAMILIES}
# an audio model's other symbolic axes are samples too (the exporter may name input_values' axis after the input:
# at DEFAULT_DIM = 8 samples the feature extractor's first Conv kernel is longer than the input)
FAMILY_DEFAULT_DIM = {f: DIM_DEFAULTS["samples"] for f in AUDIO_FAMILIES}


def _text(**kw: Any) -> dict[str, Any]:
    base = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4, vocab_size=99,
                max_position_embeddings=64)
    return {**base, **kw}


def _vision(**kw: Any) -> dict[str, Any]:
    base = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4, image_size=32,
                patch_size=8)
    return {**base, **kw}


def _audio(**kw: Any) -> dict[str, Any]:
    base = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4, conv_dim=(16, 16),
                conv_stride=(5, 4), conv_kernel=(10, 8), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2,
                vocab_size=32)
    return {**base, **kw}


def _models() -> dict[str, tuple[Callable[[], Any], str]]:
    """name -> (a tiny model built from its config class, the exporter's input signature or "" for its default)."""
    import transformers as T

    ids = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2)
    return {
        "owlvit": (lambda: T.OwlViTModel(T.OwlViTConfig(text_config=_text(max_position_embeddings=16, **ids),
                                                        vision_config=_vision(), projection_dim=16)), ""),
        "chinese-clip": (lambda: T.ChineseCLIPModel(T.ChineseCLIPConfig(
            text_config=_text(type_vocab_size=2), vision_config=_vision(), projection_dim=16)), ""),
        "blip": (lambda: T.BlipModel(T.BlipConfig(text_config=_text(**ids), vision_config=_vision(),
                                                  projection_dim=16)), ""),
        "altclip": (lambda: T.AltCLIPModel(T.AltCLIPConfig(
            text_config=_text(project_dim=16, type_vocab_size=1), vision_config=_vision(), projection_dim=16)), ""),
        "groupvit": (lambda: T.GroupViTModel(T.GroupViTConfig(
            text_config=_text(**ids), projection_dim=16, projection_intermediate_dim=16,
            vision_config=dict(hidden_size=32, intermediate_size=37, depths=[2, 2], num_attention_heads=4,
                               image_size=32, patch_size=8, num_group_tokens=[8, 0], num_output_groups=[4, 4]))),
                     ""),
        "vit": (lambda: T.ViTModel(T.ViTConfig(**_vision())), "vision:pixel_values"),
        "deit": (lambda: T.DeiTModel(T.DeiTConfig(**_vision())), "vision:pixel_values"),
        "beit": (lambda: T.BeitModel(T.BeitConfig(**_vision(), vocab_size=64)), "vision:pixel_values"),
        "dinov2": (lambda: T.Dinov2Model(T.Dinov2Config(**{**_vision(), "mlp_ratio": 1})), "vision:pixel_values"),
        "convnext": (lambda: T.ConvNextModel(T.ConvNextConfig(hidden_sizes=[8, 16], depths=[1, 1], num_stages=2,
                                                              image_size=32)), "vision:pixel_values"),
        "resnet": (lambda: T.ResNetModel(T.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                                                        layer_type="basic")), "vision:pixel_values"),
        # initializer_range 0.2: at the default 0.02 the random activations vanish through 17 ReLU6 blocks (outputs
        # ~1e-26 whatever the input) and rknn-toolkit2 refuses the model as "All outputs ... are constants"
        "mobilenet-v2": (lambda: T.MobileNetV2Model(T.MobileNetV2Config(image_size=32, depth_multiplier=0.25,
                                                                        initializer_range=0.2)),
                         "vision:pixel_values"),
        "segformer": (lambda: T.SegformerModel(T.SegformerConfig(
            num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[8, 16], num_attention_heads=[1, 2],
            patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[2, 2])), "vision:pixel_values"),
        "swin": (lambda: T.SwinModel(T.SwinConfig(image_size=32, patch_size=4, embed_dim=8, depths=[1, 1],
                                                  num_heads=[1, 2], window_size=4)), "vision:pixel_values"),
        "bert": (lambda: T.BertModel(T.BertConfig(**_text())), ""),
        "distilbert": (lambda: T.DistilBertModel(T.DistilBertConfig(dim=32, hidden_dim=37, n_layers=2, n_heads=4,
                                                                    vocab_size=99)), ""),
        "roberta": (lambda: T.RobertaModel(T.RobertaConfig(**_text(), pad_token_id=1)), ""),
        "electra": (lambda: T.ElectraModel(T.ElectraConfig(**_text(), embedding_size=16)), ""),
        "wav2vec2": (lambda: T.Wav2Vec2Model(T.Wav2Vec2Config(**_audio())), ""),
        "hubert": (lambda: T.HubertModel(T.HubertConfig(**_audio())), ""),
        "wavlm": (lambda: T.WavLMModel(T.WavLMConfig(**_audio(), num_buckets=8, max_bucket_distance=16)), ""),
        "data2vec-audio": (lambda: T.Data2VecAudioModel(T.Data2VecAudioConfig(**_audio())), ""),
    }


# the same config exported with fewer inputs (--input-signature): wav2vec2 without its attention mask
SIGNATURE_VARIANTS = {"wav2vec2": ("no-mask", "audio:input_values"), "bert": ("ids-only", "text:input_ids")}
SAMPLE_NAMES = ("tiny-clip", "tiny-vilt", "tiny-siglip", "tiny-whisper", "tiny-qwen2-vl", "tiny-qwen2", "tiny-llava",
                "tiny-branchy")
VARIANT_BASES = ("tiny-clip", "owlvit", "chinese-clip", "tiny-siglip", "tiny-vilt", "blip", "vit", "wav2vec2",
                 "bert", "convnext", "tiny-whisper")
VARIANTS = ("static", "fp16", "int8")


def _dims(family: str) -> dict[str, int]:
    return {**DIM_DEFAULTS, **FAMILY_DIMS.get(family, {})}


def default_shapes(model: Path, family: str = "") -> dict[str, list[int]]:
    """Static shapes for the model's inputs: its own static dims, DIM_DEFAULTS for its symbolic ones."""
    from studio.inspect.api import load_structure

    lm = load_structure(model)
    dims = _dims(family)
    out: dict[str, list[int]] = {}
    for name in lm.graph_inputs:
        info = lm.tensors.get(name)
        if info is None or info.shape is None:
            continue
        other = FAMILY_DEFAULT_DIM.get(family, DEFAULT_DIM)
        out[name] = [d if isinstance(d, int) and d > 0 else dims.get(str(d), 1 if ax == 0 else other)
                     for ax, d in enumerate(info.shape)]
    return out


def _symbols(model: Path, family: str) -> dict[str, int]:
    from studio.inspect.api import load_structure

    lm = load_structure(model)
    dims = _dims(family)
    out: dict[str, int] = {}
    for name in lm.graph_inputs:
        info = lm.tensors.get(name)
        for ax, d in enumerate((info.shape or []) if info else []):
            if isinstance(d, str) and d:
                out.setdefault(d, dims.get(d, 1 if ax == 0 else FAMILY_DEFAULT_DIM.get(family, DEFAULT_DIM)))
    return out


class Corpus:
    """DIR/manifest.json: id -> {path, family, variant, shapes, source} or {error}."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.file = work / "manifest.json"
        self.entries: dict[str, dict[str, Any]] = json.loads(self.file.read_text()) if self.file.exists() else {}

    def save(self) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        self.file.write_text(json.dumps(self.entries, indent=1))

    def add(self, mid: str, path: Path, family: str, variant: str, source: str) -> None:
        self.entries[mid] = {"path": str(path), "family": family, "variant": variant, "source": source,
                             "shapes": default_shapes(path, family)}
        self.save()

    def fail(self, mid: str, family: str, variant: str, why: str) -> None:
        self.entries[mid] = {"family": family, "variant": variant, "error": why[:600]}
        self.save()

    def models(self) -> list[tuple[str, dict[str, Any]]]:
        return [(k, v) for k, v in self.entries.items() if "path" in v]


def _export(hf: Path, out: Path, signature: str) -> tuple[list[Path], str]:
    """The studio's export of ``hf``; (every graph file written, "" or why it failed)."""
    from studio.export.api import ExportOptions, export_model
    from studio.export.signatures import parse_signature

    opts = ExportOptions(model_dir=hf, output=out / "model.onnx",
                         input_signature=parse_signature(signature, hf) if signature else None)
    rep = export_model(opts)
    if rep.status != "succeeded":
        d = rep.diagnosis
        return [], f"{d.stage}: {d.message}" if d is not None else rep.status
    variants = {f"model.{v}.onnx" for v in VARIANTS}  # written beside it by variants(): not the export's graphs
    return sorted(p for p in out.glob("*.onnx") if p.name not in variants), ""


def build(work: Path, only: list[str] | None = None, log: Any = sys.stderr) -> Corpus:
    """Write every sample and config model, export them, then the variants of VARIANT_BASES."""
    import torch

    from studio.export.samples import write_sample

    corpus = Corpus(work)
    t0 = time.perf_counter()
    jobs: list[tuple[str, str, Callable[[Path], None], str]] = []
    for name in SAMPLE_NAMES:
        jobs.append((name, "sample", lambda d, n=name: write_sample(n, d), ""))
    for name, (make, sig) in _models().items():
        def write(d: Path, make: Callable[[], Any] = make) -> None:
            torch.manual_seed(0)
            make().eval().save_pretrained(d)
        jobs.append((name, "config", write, sig))
    for name, source, write, sig in jobs:
        if only and name not in only:
            continue
        if any(v.get("family") == name and v.get("variant") == "base" for v in corpus.entries.values()):
            continue
        hf, out = work / "hf" / name, work / "onnx" / name
        try:
            if not (hf / "config.json").exists():
                write(hf)
            files, why = _export(hf, out, sig)
        except Exception as exc:  # a model the exporter cannot take is recorded, the corpus goes on
            files, why = [], f"{type(exc).__name__}: {exc}"
            traceback.print_exc(file=log)
        if not files:
            corpus.fail(name, name, "base", why)
            print(f"{name}: export failed: {why[:200]}", file=log)
            continue
        for f in files:
            part = f.stem.removeprefix("model").strip(".") or ""
            corpus.add(name + (f".{part}" if part else ""), f, name, "base", source)
        print(f"{name}: {len(files)} graph(s), {time.perf_counter() - t0:.0f} s", file=log, flush=True)
    for name, (variant, sig) in SIGNATURE_VARIANTS.items():
        mid = f"{name}@{variant}"
        if (only and name not in only) or mid in corpus.entries or not (work / "hf" / name).exists():
            continue
        files, why = _export(work / "hf" / name, work / "onnx" / mid, sig)
        if files:
            corpus.add(mid, files[0], name, variant, f"studio export --input-signature {sig}")
        else:
            corpus.fail(mid, name, variant, why)
    variants(corpus, only, log)
    return corpus


def variants(corpus: Corpus, only: list[str] | None, log: Any) -> None:
    """static / fp16 / int8 of each base model of VARIANT_BASES (its main graph), by the studio's fix."""
    from studio.optimize.api import fix_model

    for base in VARIANT_BASES:
        if only and base not in only:
            continue
        src = corpus.entries.get(base)
        if src is None or "path" not in src:
            continue
        for variant in VARIANTS:
            mid = f"{base}@{variant}"
            if mid in corpus.entries:
                continue
            path = Path(src["path"])
            out = corpus.work / "onnx" / base / f"model.{variant}.onnx"
            kw: dict[str, Any] = {"static": _symbols(path, base) or None} if variant == "static" else {variant: True}
            if variant == "static" and not kw["static"]:
                continue
            try:
                fix_model(path, out, targets=["ort-cpu"], **kw)
                corpus.add(mid, out, base, variant, f"studio fix --{variant}")
                print(f"{mid}: ok", file=log, flush=True)
            except Exception as exc:
                corpus.fail(mid, base, variant, f"{type(exc).__name__}: {exc}")
                print(f"{mid}: failed: {exc}", file=log, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args(argv)
    from studio.export.samples import _quiet_transformers

    _quiet_transformers()
    corpus = build(args.work, args.only)
    ok = corpus.models()
    bad = [(k, v["error"]) for k, v in corpus.entries.items() if "error" in v]
    print(f"{len(ok)} models, {len(bad)} failed")
    for k, why in bad:
        print(f"  {k}: {why[:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
