"""Whisper with a KV cache as two graphs: an encoder that also computes every decoder layer's cross-attention
keys and values once, and one decoder graph with past inputs (prefill = a zero-length self-attention past).

Why this form and not optimum's decoder / decoder_with_past pair: the cross K/V depend on the audio alone, so the
encoder graph owns the decoder's cross-attention ``k_proj`` / ``v_proj`` (a few small matmuls) and the decoder
graph never sees ``encoder_hidden_states``; one decoder graph serves the first step and every later one, so the
decoder weights are stored once (the pair stores them twice) and the runtime drives one session per part. The
decoder keeps ``attention_mask`` (batch, total_sequence) and ``position_ids`` as inputs, as the text path does:
the trace then takes the causal mask's and the positions' lengths from tensors, not from Python ints.

Names: encoder ``input_features`` -> ``encoder_hidden_states``, ``present.{i}.encoder.key/value``; decoder
``input_ids, attention_mask, position_ids, past_key_values.{i}.decoder.key/value, past_key_values.{i}.encoder.
key/value`` -> ``logits, present.{i}.decoder.key/value`` (batch, heads, sequence, head_dim).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from studio.generate.speech_config import seq2seq_names


class WhisperEncoderWithCross(nn.Module):
    """input_features -> encoder_hidden_states plus each decoder layer's cross-attention key and value."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_features: torch.Tensor) -> tuple[torch.Tensor, ...]:
        m = self.model.model
        hidden = m.encoder(input_features=input_features).last_hidden_state
        out: list[torch.Tensor] = [hidden]
        for layer in m.decoder.layers:
            attn = layer.encoder_attn
            shape = (hidden.shape[0], -1, attn.num_heads, attn.head_dim)
            out += [attn.k_proj(hidden).view(shape).transpose(1, 2).contiguous(),
                    attn.v_proj(hidden).view(shape).transpose(1, 2).contiguous()]
        return tuple(out)


class WhisperDecoderWithPast(nn.Module):
    """(ids, mask, positions, self past, cross K/V) -> (logits, self present): the HF decoder on an
    ``EncoderDecoderCache`` rebuilt from the tensors, its cross half marked as already computed."""

    def __init__(self, model: nn.Module, layers: int) -> None:
        super().__init__()
        self.model = model
        self.layers = layers

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, position_ids: torch.Tensor,
                *past: torch.Tensor) -> tuple[torch.Tensor, ...]:
        from transformers.cache_utils import DynamicCache, EncoderDecoderCache

        n = self.layers
        if len(past) != 4 * n:
            raise ValueError(f"expected {4 * n} past tensors, got {len(past)}")
        self_kv = [(past[4 * i], past[4 * i + 1]) for i in range(n)]
        cross_kv = [(past[4 * i + 2], past[4 * i + 3]) for i in range(n)]
        cache = EncoderDecoderCache(DynamicCache(ddp_cache_data=self_kv), DynamicCache(ddp_cache_data=cross_kv))
        for i in range(n):
            cache.is_updated[i] = True
        m = self.model.model
        # the cross layers read their K/V from the cache; encoder_hidden_states only has to be "not None"
        enc = past[2][:, 0, :1, :1].expand(input_ids.shape[0], 1, 1)
        kw = {_cache_arg(m.decoder): cache}
        out = m.decoder(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                        encoder_hidden_states=enc, use_cache=True, **kw)
        logits = self.model.proj_out(out.last_hidden_state)
        cache_out = getattr(out, "cache", None) or out.past_key_values
        present: list[torch.Tensor] = []
        for layer in cache_out.self_attention_cache.layers:
            present += [layer.keys, layer.values]
        return (logits, *present)


def _cache_arg(module: nn.Module) -> str:
    from studio.export.decoder import cache_argument

    return cache_argument(module)


def whisper_dims(config: dict[str, Any]) -> dict[str, int]:
    """Layers, heads, head size, mel bins, frames and vocabulary of a Whisper config."""
    d_model = int(config["d_model"])
    heads = int(config["decoder_attention_heads"])
    return {"layers": int(config["decoder_layers"]), "heads": heads, "head_dim": d_model // heads,
            "d_model": d_model, "mels": int(config.get("num_mel_bins", 80)),
            "frames": 2 * int(config.get("max_source_positions", 1500)),
            "encoder_positions": int(config.get("max_source_positions", 1500)),
            "max_target": int(config.get("max_target_positions", 448)), "vocab": int(config["vocab_size"])}


def export_parts(model: nn.Module, config: dict[str, Any], encoder_path: Any, decoder_path: Any, opset: int
                 ) -> list[Any]:
    """Trace both graphs (TorchScript) with named dynamic axes; returns the two ExportResults."""
    from studio.export.exporters import export_onnx

    d = whisper_dims(config)
    names = seq2seq_names(d["layers"])
    feats = torch.randn(2, d["mels"], d["frames"])
    enc = WhisperEncoderWithCross(model).eval()
    cross_axes = {n: {0: "batch"} for n in names["cross_present"]}
    r1 = export_onnx(enc, (feats,), encoder_path, input_names=["input_features"],
                     output_names=["encoder_hidden_states", *names["cross_present"]],
                     dynamic_axes={"input_features": {0: "batch"}}, opset=opset, exporter="torchscript",
                     output_axes={"encoder_hidden_states": {0: "batch"}, **cross_axes})
    b, s, p, e = 2, 3, 5, d["encoder_positions"]
    args: list[torch.Tensor] = [torch.randint(0, d["vocab"], (b, s)), torch.ones(b, p + s, dtype=torch.long),
                                torch.arange(p, p + s).repeat(b, 1)]
    axes: dict[str, dict[int, str]] = {"input_ids": {0: "batch", 1: "sequence"},
                                       "attention_mask": {0: "batch", 1: "total_sequence"},
                                       "position_ids": {0: "batch", 1: "sequence"}}
    for name in names["past"]:
        cross = ".encoder." in name
        args.append(torch.randn(b, d["heads"], e if cross else p, d["head_dim"]))
        axes[name] = {0: "batch"} if cross else {0: "batch", 2: "past_sequence"}
    dec = WhisperDecoderWithPast(model, d["layers"]).eval()
    out_axes = {"logits": {0: "batch", 1: "sequence"},
                **{n: {0: "batch", 2: "total_sequence"} for n in names["present"]}}
    r2 = export_onnx(dec, tuple(args), decoder_path, input_names=["input_ids", "attention_mask", "position_ids",
                                                                  *names["past"]],
                     output_names=["logits", *names["present"]], dynamic_axes=axes, opset=opset,
                     exporter="torchscript", output_axes=out_axes)
    return [r1, r2]
