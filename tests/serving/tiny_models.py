"""Tiny ONNX models built with onnx.helper (no hub, no torch): an MLP and a split text/vision export."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WORDS = ["[PAD]", "[UNK]", "a", "photo", "of", "cat", "dog", "the", "on", "mat", "red", "blue"]


def _save(graph: onnx.GraphProto, path: Path, opset: int = 17) -> Path:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    onnx.checker.check_model(model, full_check=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def mlp(path: Path, seed: int = 0, d_in: int = 16, d_out: int = 8, batch: str | int = "batch") -> Path:
    """x[batch,16] -> relu(x W1 + b1) W2 -> y[batch,8]; ``seed`` changes the weights (a new version)."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(rng.standard_normal((d_in, 32)).astype(np.float32), "W1"),
             numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "b1"),
             numpy_helper.from_array(rng.standard_normal((32, d_out)).astype(np.float32), "W2")]
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "W2"], ["y"])]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, d_in])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, d_out])], inits)
    return _save(g, path)


def text_encoder(path: Path, seed: int = 1, dim: int = 8) -> Path:
    """input_ids, attention_mask [batch, seq] int64 -> masked mean of embeddings -> text_embeds [batch, dim]."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(rng.standard_normal((len(WORDS), dim)).astype(np.float32), "E"),
             numpy_helper.from_array(np.array([-1], np.int64), "last"),
             numpy_helper.from_array(np.array([1], np.int64), "seq_axis"),
             numpy_helper.from_array(np.array([1e-6], np.float32), "eps")]
    nodes = [helper.make_node("Gather", ["E", "input_ids"], ["emb"]),
             helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
             helper.make_node("Unsqueeze", ["m", "last"], ["m3"]),
             helper.make_node("Mul", ["emb", "m3"], ["me"]),
             helper.make_node("ReduceSum", ["me", "seq_axis"], ["s"], keepdims=0),
             helper.make_node("ReduceSum", ["m3", "seq_axis"], ["n"], keepdims=0),
             helper.make_node("Add", ["n", "eps"], ["n2"]),
             helper.make_node("Div", ["s", "n2"], ["text_embeds"])]
    g = helper.make_graph(nodes, "text_encoder",
                          [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
                           helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"])],
                          [helper.make_tensor_value_info("text_embeds", TensorProto.FLOAT, ["batch", dim])], inits)
    return _save(g, path)


def vision_encoder(path: Path, seed: int = 2, dim: int = 8, size: int = 8) -> Path:
    """pixel_values [batch, 3, 8, 8] -> channel means -> linear -> image_embeds [batch, dim]."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(rng.standard_normal((3, dim)).astype(np.float32), "P")]
    nodes = [helper.make_node("ReduceMean", ["pixel_values"], ["c"], axes=[2, 3], keepdims=0),
             helper.make_node("MatMul", ["c", "P"], ["image_embeds"])]
    g = helper.make_graph(nodes, "vision_encoder",
                          [helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, ["batch", 3, size, size])],
                          [helper.make_tensor_value_info("image_embeds", TensorProto.FLOAT, ["batch", dim])], inits)
    return _save(g, path)


def tokenizer_json(path: Path) -> Path:
    """A word-level fast tokenizer over WORDS, saved as tokenizer.json."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(path))
    return path


def split_export(folder: Path) -> Path:
    """A split-modality export folder: text/vision parts, tokenizer and processor config, report with parts."""
    folder.mkdir(parents=True, exist_ok=True)
    text_encoder(folder / "text_encoder.onnx")
    vision_encoder(folder / "vision_encoder.onnx")
    tokenizer_json(folder / "tokenizer.json")
    (folder / "preprocessor_config.json").write_text(json.dumps(
        {"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "size": {"height": 8, "width": 8}}))
    (folder / "export_report.json").write_text(json.dumps({"schema_version": 1, "status": "succeeded", "parts": {
        "text": {"path": "text_encoder.onnx", "modality": "text", "inputs": ["input_ids", "attention_mask"],
                 "outputs": ["text_embeds"]},
        "vision": {"path": "vision_encoder.onnx", "modality": "vision", "inputs": ["pixel_values"],
                   "outputs": ["image_embeds"]}}}))
    return folder


def tokenize(text: str) -> tuple[np.ndarray, np.ndarray]:
    ids = [WORDS.index(w) if w in WORDS else 1 for w in text.split()]
    return np.array([ids], np.int64), np.ones((1, len(ids)), np.int64)
