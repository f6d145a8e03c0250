"""Random-weight models at the dimensions of public checkpoints, built offline from transformers' config classes.

    .venv/bin/python -m bench.real_models NAME OUT_DIR      (NAME: clip-vit-b32, siglip-base, whisper-base,
                                                              qwen2-vl-3gb, qwen2-vl-2b)

The graphs, memory and time of an export depend on the sizes, not on trained values, so these stand in for the
checkpoints a user brings (no download). Tokenizers and processors are the tiny samples' (studio.export.samples:
ids stay far below the real vocabularies, which the models keep at full size). ``qwen2-vl-3gb`` is Qwen2-VL-2B's
widths (hidden 1536, vision 1280, vocab 151,936) with 8 vision and 8 text layers (801M parameters, 3.2 GB FP32);
``qwen2-vl-2b`` is the whole of it (28 text layers, 32 vision blocks: 2.2B parameters, 8.8 GB FP32).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from studio.export import samples as s

QWEN2_VL_TEXT = dict(vocab_size=151936, hidden_size=1536, intermediate_size=8960, num_attention_heads=12,
                     num_key_value_heads=2, max_position_embeddings=32768, tie_word_embeddings=True,
                     rope_parameters={"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [16, 24, 24]})
QWEN2_VL_VISION = dict(embed_dim=1280, hidden_size=1536, num_heads=16, mlp_ratio=4, patch_size=14,
                       spatial_merge_size=2, temporal_patch_size=2, in_channels=3)


def _clip(out: Path) -> None:
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    vocab, merges = s._byte_bpe(["<|startoftext|>", "<|endoftext|>"], end_of_word="</w>")
    tok = CLIPTokenizer(vocab=vocab, merges=merges, model_max_length=77)
    eos = vocab["<|endoftext|>"]
    cfg = CLIPConfig(text_config=dict(vocab_size=49408, hidden_size=512, intermediate_size=2048, num_hidden_layers=12,
                                      num_attention_heads=8, max_position_embeddings=77,
                                      bos_token_id=vocab["<|startoftext|>"], eos_token_id=eos, pad_token_id=eos),
                     vision_config=dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                                        num_attention_heads=12, image_size=224, patch_size=32),
                     projection_dim=512)
    s._seed()
    CLIPModel(cfg).eval().save_pretrained(out)
    CLIPProcessor(image_processor=CLIPImageProcessor(), tokenizer=tok).save_pretrained(out)


def _siglip(out: Path) -> None:
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel, SiglipProcessor, SiglipTokenizer

    out.mkdir(parents=True, exist_ok=True)
    s._sentencepiece_model(out / "spiece.model")
    tok = SiglipTokenizer(vocab_file=str(out / "spiece.model"), model_max_length=64)
    cfg = SiglipConfig(text_config=dict(vocab_size=32000, hidden_size=768, intermediate_size=3072,
                                        num_hidden_layers=12, num_attention_heads=12, max_position_embeddings=64,
                                        pad_token_id=1, eos_token_id=1, projection_size=768),
                       vision_config=dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                                          num_attention_heads=12, image_size=224, patch_size=16))
    s._seed()
    SiglipModel(cfg).eval().save_pretrained(out)
    SiglipProcessor(image_processor=SiglipImageProcessor(size={"height": 224, "width": 224}),
                    tokenizer=tok).save_pretrained(out)


def _whisper(out: Path) -> None:
    from transformers import (
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperProcessor,
        WhisperTokenizer,
    )

    specials = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|translate|>", "<|transcribe|>",
                "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"]
    vocab, merges = s._byte_bpe(specials)
    tok = WhisperTokenizer(vocab=vocab, merges=merges, model_max_length=448)
    tok.add_special_tokens({"additional_special_tokens": specials[1:]})
    eot, sot = vocab["<|endoftext|>"], vocab["<|startoftranscript|>"]
    cfg = WhisperConfig(vocab_size=51865, num_mel_bins=80, d_model=512, encoder_layers=6, decoder_layers=6,
                        encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=2048,
                        decoder_ffn_dim=2048, max_source_positions=1500, max_target_positions=448,
                        pad_token_id=eot, bos_token_id=eot, eos_token_id=eot, decoder_start_token_id=sot,
                        suppress_tokens=[], begin_suppress_tokens=[eot])
    s._seed()
    model = WhisperForConditionalGeneration(cfg).eval()
    model.generation_config.decoder_start_token_id = sot
    model.generation_config.pad_token_id = eot
    model.generation_config.eos_token_id = eot
    model.save_pretrained(out)
    fe = WhisperFeatureExtractor(feature_size=80, sampling_rate=16000, hop_length=160, chunk_length=30, n_fft=400)
    WhisperProcessor(feature_extractor=fe, tokenizer=tok).save_pretrained(out)


def _clip_past_2gb(out: Path) -> None:
    """The tiny CLIP sample with a 1.06M-token text vocabulary at width 512: 2.2 GB of weights, nearly all in one
    embedding table a few rows of which any input reads (the check of issue 29: cheap past protobuf's 2 GB)."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    vocab, merges = s._byte_bpe(["<|startoftext|>", "<|endoftext|>"], end_of_word="</w>")
    tok = CLIPTokenizer(vocab=vocab, merges=merges, model_max_length=32)
    eos = vocab["<|endoftext|>"]
    import torch

    rows = 1_060_000
    cfg = CLIPConfig(text_config=dict(vocab_size=8192, hidden_size=512, intermediate_size=64,
                                      num_hidden_layers=1, num_attention_heads=4, max_position_embeddings=32,
                                      bos_token_id=vocab["<|startoftext|>"], eos_token_id=eos, pad_token_id=eos),
                     vision_config=dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                                        num_attention_heads=4, image_size=32, patch_size=8),
                     projection_dim=16)
    s._seed()
    model = CLIPModel(cfg).eval()
    # the big table repeats the initialised 8192 rows (a normal draw of 543M values takes 6 s here, a copy 1 s)
    small = model.text_model.embeddings.token_embedding.weight.data
    big = small.repeat(-(-rows // small.shape[0]), 1)[:rows].contiguous()
    model.text_model.embeddings.token_embedding = torch.nn.Embedding.from_pretrained(big, freeze=False)
    model.config.text_config.vocab_size = rows
    model.save_pretrained(out)
    image = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=image, tokenizer=tok).save_pretrained(out)


def _qwen2_vl(text_layers: int, vision_depth: int) -> Callable[[Path], None]:
    def build(out: Path) -> None:
        from transformers import (
            Qwen2Tokenizer,
            Qwen2VLConfig,
            Qwen2VLForConditionalGeneration,
            Qwen2VLImageProcessor,
        )

        specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                    "<|image_pad|>", "<|video_pad|>"]
        vocab, merges = s._byte_bpe(specials)
        tok = Qwen2Tokenizer(vocab=vocab, merges=merges, model_max_length=32768, errors="replace")
        tok.add_special_tokens({"additional_special_tokens": specials[1:]})
        cfg = Qwen2VLConfig(
            text_config=dict(QWEN2_VL_TEXT, num_hidden_layers=text_layers, bos_token_id=vocab["<|endoftext|>"],
                             eos_token_id=vocab["<|im_end|>"], pad_token_id=vocab["<|endoftext|>"]),
            vision_config=dict(QWEN2_VL_VISION, depth=vision_depth),
            image_token_id=vocab["<|image_pad|>"], video_token_id=vocab["<|video_pad|>"],
            vision_start_token_id=vocab["<|vision_start|>"], vision_end_token_id=vocab["<|vision_end|>"],
            tie_word_embeddings=True)
        s._seed()
        Qwen2VLForConditionalGeneration(cfg).eval().save_pretrained(out)
        tok.save_pretrained(out)
        Qwen2VLImageProcessor(patch_size=14, merge_size=2, temporal_patch_size=2, min_pixels=56 * 56,
                              max_pixels=224 * 224).save_pretrained(out)
    return build


MODELS: dict[str, Callable[[Path], None]] = {
    "clip-vit-b32": _clip, "siglip-base": _siglip, "whisper-base": _whisper, "clip-past-2gb": _clip_past_2gb,
    "qwen2-vl-3gb": _qwen2_vl(8, 8), "qwen2-vl-2b": _qwen2_vl(28, 32),
}


def build(name: str, out: Path | str) -> Path:
    """Write model ``name`` into ``out`` (kept when it is already there: the build takes a minute at 2B)."""
    out = Path(out)
    if (out / "config.json").exists():
        return out
    s._quiet_transformers()
    from studio.core.atomic import atomic_path

    with atomic_path(out, is_dir=True) as tmp:
        tmp.mkdir(parents=True, exist_ok=True)
        MODELS[name](tmp)
        (tmp / "studio_sample.json").write_text(json.dumps({"sample": name, "real_dimensions": True}) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", choices=sorted(MODELS))
    ap.add_argument("out")
    args = ap.parse_args(argv)
    print(build(args.name, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
