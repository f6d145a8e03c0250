"""Tiny random-weight sample models, built offline from transformers configs (no hub, no network).

Each sample is a real HuggingFace folder: ``config.json`` + weights from ``save_pretrained`` and working
tokenizer / processor files, so ``AutoModel`` / ``AutoTokenizer`` / ``AutoProcessor.from_pretrained(dir)``
load it offline. Weights are seeded, so two writes of the same sample are identical. Everything is small
(hidden 32, 2 layers, 32x32 images) so an export takes about a second.

``tiny-branchy`` is a deliberately awkward custom model type (registered with AutoConfig / AutoModel) whose
forward depends on tensor *values*: the failure-diagnosis demo for data-dependent control flow.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.core.atomic import atomic_path
from studio.core.errors import InputError

SEED = 1234
_WORDS = ("a photo of a cat dog bird on the red blue green grass near two small large house car tree "
          "what is color how many people are there yes no one three picture image of with").split()


@dataclass(frozen=True)
class Sample:
    name: str
    description: str
    modalities: tuple[str, ...]
    build: Callable[[Path], None]
    notes: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------- tokenizers
def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable unicode map (the alphabet of byte-level BPE)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs], strict=True))


def _byte_bpe(specials: list[str], end_of_word: str = "") -> tuple[dict[str, int], list[tuple[str, str]]]:
    """A tiny byte-level BPE vocabulary: every byte, a few merges learnt from the demo words, then specials."""
    alphabet = list(_bytes_to_unicode().values())
    vocab: dict[str, int] = {}
    for ch in alphabet:
        vocab.setdefault(ch, len(vocab))
    if end_of_word:
        for ch in alphabet:
            vocab.setdefault(ch + end_of_word, len(vocab))
    merges: list[tuple[str, str]] = []
    for word in sorted(set(_WORDS)):
        pieces = list(word)
        if end_of_word:
            pieces[-1] += end_of_word
        cur = pieces[0]
        for nxt in pieces[1:]:
            merge = (cur, nxt)
            cur = cur + nxt
            if merge not in merges:
                merges.append(merge)
            vocab.setdefault(cur, len(vocab))
    for tok in specials:
        vocab.setdefault(tok, len(vocab))
    return vocab, merges


def _wordpiece_vocab() -> dict[str, int]:
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    toks = specials + sorted(set(_WORDS)) + list("abcdefghijklmnopqrstuvwxyz0123456789.,?!")
    toks += ["##" + c for c in "abcdefghijklmnopqrstuvwxyz"]
    return {t: i for i, t in enumerate(dict.fromkeys(toks))}


def _sentencepiece_model(path: Path, vocab_size: int = 96) -> None:
    """Train a tiny unigram sentencepiece model in-process (deterministic: one thread, fixed corpus)."""
    import io

    import sentencepiece as spm

    corpus = [" ".join(_WORDS[i:i + 7]) for i in range(0, len(_WORDS))] * 4
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus), model_writer=buf, vocab_size=vocab_size, model_type="unigram",
        num_threads=1, pad_id=0, eos_id=1, unk_id=2, bos_id=-1, pad_piece="<pad>", eos_piece="</s>",
        unk_piece="<unk>", hard_vocab_limit=False, minloglevel=2, character_coverage=1.0,
    )
    path.write_bytes(buf.getvalue())


# --------------------------------------------------------------------------------------------- builders
def _seed() -> None:
    import torch

    torch.manual_seed(SEED)


def _build_clip(out: Path) -> None:
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    specials = ["<|startoftext|>", "<|endoftext|>"]
    vocab, merges = _byte_bpe(specials, end_of_word="</w>")
    tok = CLIPTokenizer(vocab=vocab, merges=merges, model_max_length=32)
    bos, eos = vocab["<|startoftext|>"], vocab["<|endoftext|>"]
    cfg = CLIPConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                         num_attention_heads=4, max_position_embeddings=32, bos_token_id=bos,
                         eos_token_id=eos, pad_token_id=eos),
        vision_config=dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
                           image_size=32, patch_size=8),
        projection_dim=16,
    )
    _seed()
    CLIPModel(cfg).eval().save_pretrained(out)
    image = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=image, tokenizer=tok).save_pretrained(out)


def _build_siglip(out: Path) -> None:
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel, SiglipProcessor, SiglipTokenizer

    spm_path = out / "spiece.model"
    out.mkdir(parents=True, exist_ok=True)
    _sentencepiece_model(spm_path)
    tok = SiglipTokenizer(vocab_file=str(spm_path), model_max_length=16)
    cfg = SiglipConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                         num_attention_heads=4, max_position_embeddings=16, pad_token_id=1, eos_token_id=1,
                         projection_size=32),
        vision_config=dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
                           image_size=32, patch_size=8),
    )
    _seed()
    SiglipModel(cfg).eval().save_pretrained(out)
    image = SiglipImageProcessor(size={"height": 32, "width": 32})
    SiglipProcessor(image_processor=image, tokenizer=tok).save_pretrained(out)


def _build_vilt(out: Path) -> None:
    from transformers import (
        BertTokenizer,
        ViltConfig,
        ViltForQuestionAnswering,
        ViltImageProcessor,
        ViltProcessor,
    )

    vocab = _wordpiece_vocab()
    tok = BertTokenizer(vocab=vocab, model_max_length=24)
    labels = ["yes", "no", "one", "two", "three", "red", "blue", "green"]
    cfg = ViltConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=37, max_position_embeddings=24, image_size=32, patch_size=8,
                     max_image_length=-1, num_labels=len(labels),
                     id2label=dict(enumerate(labels)), label2id={v: i for i, v in enumerate(labels)})
    _seed()
    ViltForQuestionAnswering(cfg).eval().save_pretrained(out)
    image = ViltImageProcessor(size={"shortest_edge": 32}, size_divisor=32, do_pad=True)
    ViltProcessor(image_processor=image, tokenizer=tok).save_pretrained(out)


def _build_whisper(out: Path) -> None:
    from transformers import (
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperProcessor,
        WhisperTokenizer,
    )

    specials = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|translate|>", "<|transcribe|>",
                "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"]
    vocab, merges = _byte_bpe(specials)
    tok = WhisperTokenizer(vocab=vocab, merges=merges, model_max_length=32)
    tok.add_special_tokens({"additional_special_tokens": specials[1:]})  # as Whisper's own: skipped in transcripts
    eot, sot = vocab["<|endoftext|>"], vocab["<|startoftranscript|>"]
    mel, frames = 16, 100  # 1 s of 16 kHz audio at hop 160 -> 100 frames -> 50 encoder positions
    cfg = WhisperConfig(vocab_size=len(vocab), num_mel_bins=mel, d_model=32, encoder_layers=2, decoder_layers=2,
                        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=37,
                        decoder_ffn_dim=37, max_source_positions=frames // 2, max_target_positions=32,
                        pad_token_id=eot, bos_token_id=eot, eos_token_id=eot, decoder_start_token_id=sot,
                        suppress_tokens=[], begin_suppress_tokens=[eot])
    _seed()
    model = WhisperForConditionalGeneration(cfg).eval()
    model.generation_config.decoder_start_token_id = sot
    model.generation_config.pad_token_id = eot
    model.generation_config.eos_token_id = eot
    model.save_pretrained(out)
    fe = WhisperFeatureExtractor(feature_size=mel, sampling_rate=16000, hop_length=160, chunk_length=1, n_fft=400)
    WhisperProcessor(feature_extractor=fe, tokenizer=tok).save_pretrained(out)


def _build_qwen2_vl(out: Path) -> None:
    from transformers import Qwen2Tokenizer, Qwen2VLConfig, Qwen2VLForConditionalGeneration

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                "<|image_pad|>", "<|video_pad|>"]
    vocab, merges = _byte_bpe(specials)
    tok = Qwen2Tokenizer(vocab=vocab, merges=merges, model_max_length=64, errors="replace")
    tok.add_special_tokens({"additional_special_tokens": specials[1:]})
    cfg = Qwen2VLConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                          "mrope_section": [2, 1, 1]},
                         bos_token_id=vocab["<|endoftext|>"], eos_token_id=vocab["<|im_end|>"],
                         pad_token_id=vocab["<|endoftext|>"]),
        vision_config=dict(depth=2, embed_dim=32, hidden_size=32, num_heads=4, mlp_ratio=2, patch_size=4,
                           spatial_merge_size=2, temporal_patch_size=2, in_channels=3),
        image_token_id=vocab["<|image_pad|>"], video_token_id=vocab["<|video_pad|>"],
        vision_start_token_id=vocab["<|vision_start|>"], vision_end_token_id=vocab["<|vision_end|>"],
    )
    _seed()
    Qwen2VLForConditionalGeneration(cfg).eval().save_pretrained(out)
    tok.save_pretrained(out)
    try:  # the image processor: pure PIL fallback, no torchvision needed
        from transformers import Qwen2VLImageProcessor

        image = Qwen2VLImageProcessor(patch_size=4, merge_size=2, temporal_patch_size=2,
                                      min_pixels=16 * 16, max_pixels=32 * 32)
        image.save_pretrained(out)
    except Exception:  # noqa: BLE001 - the tokenizer alone still makes a usable text path
        pass


def _build_qwen2(out: Path) -> None:
    """A decoder-only text LM (Qwen2ForCausalLM, grouped-query attention) for generation with a KV cache."""
    from transformers import Qwen2Config, Qwen2ForCausalLM, Qwen2Tokenizer

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    vocab, merges = _byte_bpe(specials)
    tok = Qwen2Tokenizer(vocab=vocab, merges=merges, model_max_length=128, errors="replace")
    tok.add_special_tokens({"additional_special_tokens": specials[1:]})
    cfg = Qwen2Config(vocab_size=len(vocab), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                      tie_word_embeddings=False, bos_token_id=vocab["<|endoftext|>"],
                      eos_token_id=vocab["<|im_end|>"], pad_token_id=vocab["<|endoftext|>"])
    _seed()
    Qwen2ForCausalLM(cfg).eval().save_pretrained(out)
    tok.save_pretrained(out)


def _build_llava(out: Path) -> None:
    """LLaVA (CLIP vision tower + 2-layer projector + Llama decoder); the processor expands ``<image>`` to the
    tower's 16 patch tokens (32x32 image, patch 8, the CLS token dropped by the "default" strategy)."""
    from transformers import (
        CLIPImageProcessor,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        Qwen2Tokenizer,
    )

    specials = ["<|endoftext|>", "<image>", "<|im_end|>"]
    vocab, merges = _byte_bpe(specials)
    tok = Qwen2Tokenizer(vocab=vocab, merges=merges, model_max_length=128, errors="replace")
    tok.add_special_tokens({"additional_special_tokens": specials[1:]})
    cfg = LlavaConfig(
        vision_config=dict(model_type="clip_vision_model", hidden_size=32, intermediate_size=37,
                           num_hidden_layers=2, num_attention_heads=4, image_size=32, patch_size=8),
        text_config=dict(model_type="llama", vocab_size=len(vocab), hidden_size=32, intermediate_size=37,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=128, bos_token_id=vocab["<|endoftext|>"],
                         eos_token_id=vocab["<|im_end|>"], pad_token_id=vocab["<|endoftext|>"]),
        image_token_index=vocab["<image>"], image_seq_length=16, vision_feature_layer=-2,
        vision_feature_select_strategy="default",
    )
    _seed()
    LlavaForConditionalGeneration(cfg).eval().save_pretrained(out)
    image = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    LlavaProcessor(image_processor=image, tokenizer=tok, patch_size=8, vision_feature_select_strategy="default",
                   num_additional_image_tokens=1).save_pretrained(out)


def _build_branchy(out: Path) -> None:
    from studio.export.custom_models import BranchyConfig, BranchyModel

    vocab = _wordpiece_vocab()
    from transformers import BertTokenizer

    tok = BertTokenizer(vocab=vocab, model_max_length=32)
    cfg = BranchyConfig(vocab_size=len(vocab), hidden_size=32)
    _seed()
    BranchyModel(cfg).eval().save_pretrained(out)
    tok.save_pretrained(out)


SAMPLES: dict[str, Sample] = {s.name: s for s in (
    Sample("tiny-clip", "CLIP dual encoder (text + vision, contrastive projection)", ("text", "vision"), _build_clip),
    Sample("tiny-vilt", "ViLT single-stream vision-language VQA model", ("text", "vision"), _build_vilt),
    Sample("tiny-siglip", "SigLIP dual encoder with a sentencepiece tokenizer", ("text", "vision"), _build_siglip),
    Sample("tiny-whisper", "Whisper speech encoder-decoder (audio)", ("audio", "text"), _build_whisper),
    Sample("tiny-qwen2-vl", "Qwen2-VL vision-language model with a causal decoder", ("text", "vision"),
           _build_qwen2_vl, notes=(
               "AutoProcessor needs torchvision for Qwen2-VL (its video processor); without it load "
               "AutoImageProcessor + AutoTokenizer from the folder (pixel_values, image_grid_thw, input_ids)",)),
    Sample("tiny-qwen2", "Qwen2 decoder-only text LM (generation with a KV cache)", ("text",), _build_qwen2),
    Sample("tiny-llava", "LLaVA vision-language model (CLIP tower + projector + Llama decoder)", ("text", "vision"),
           _build_llava),
    Sample("tiny-branchy", "custom model whose forward depends on tensor values (diagnosis demo)", ("text",),
           _build_branchy),
)}


def write_sample(name: str, out: Path) -> Path:
    """Write sample ``name`` into folder ``out`` atomically (the folder appears complete or not at all)."""
    if name not in SAMPLES:
        raise InputError(f"unknown sample model '{name}'", offending=name,
                         hint=f"choose one of: {', '.join(sorted(SAMPLES))}")
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        if not (out / "config.json").exists():
            raise InputError(f"output folder {out} exists and is not empty", offending=str(out),
                             hint="choose a new folder or remove it first")
        shutil.rmtree(out)
    _quiet_transformers()
    with atomic_path(out, is_dir=True) as tmp:
        tmp.mkdir(parents=True, exist_ok=True)
        SAMPLES[name].build(tmp)
        meta = {"sample": name, "description": SAMPLES[name].description,
                "modalities": list(SAMPLES[name].modalities), "seed": SEED, "notes": list(SAMPLES[name].notes)}
        (tmp / "studio_sample.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return out


def _quiet_transformers() -> None:
    from transformers.utils import logging

    logging.set_verbosity_error()
    logging.disable_progress_bar()


def sample_info(name: str) -> dict[str, Any]:
    s = SAMPLES[name]
    return {"name": s.name, "description": s.description, "modalities": list(s.modalities), "notes": list(s.notes)}
