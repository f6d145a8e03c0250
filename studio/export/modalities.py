"""Which modalities a model declares, and whether an exported graph really consumes each one.

Why: a graph traced with the image in the signature can still lose the vision tower (an input the trace never
read is dropped, or kept but cut off from every output); the export must say so or refuse, never "succeed"
with less. Declared modalities come from the config's own sub-configs (``vision_config``, ``audio_config``...),
and the graph is checked by walking back from its outputs to its inputs.
"""

from __future__ import annotations

import re
from typing import Any

from studio.core.errors import InputError

_KIND = (("vision", re.compile(r"(vision|image|visual|vit|siglip|clip|pixel|patch)")),
         ("audio", re.compile(r"(audio|speech|whisper|wav|acoustic|mel)")),
         ("text", re.compile(r"(text|language|llm|lm_|decoder|qformer|bert)")))


def declared_modalities(config: dict[str, Any]) -> dict[str, str]:
    """modality -> the config key that declares it (``vision_config`` -> vision, ``audio_config`` -> audio...)."""
    out: dict[str, str] = {}
    for key, value in config.items():
        if not key.endswith("_config") or not isinstance(value, dict):
            continue
        stem = key[: -len("_config")].lower()
        sub_type = str(value.get("model_type") or "").lower()
        for modality, pattern in _KIND:
            if pattern.search(stem) or (stem in ("encoder", "backbone") and pattern.search(sub_type)):
                out.setdefault(modality, key)
                break
    return out


def consumed_inputs(onnx_model: Any) -> set[str]:
    """Graph inputs some output depends on (a backwards walk over the nodes, subgraphs counted as one node)."""
    graph = onnx_model.graph
    producer: dict[str, Any] = {}
    for node in graph.node:
        for out in node.output:
            producer[out] = node
    needed = [o.name for o in graph.output]
    seen: set[str] = set()
    inputs = {i.name for i in graph.input}
    reached: set[str] = set()
    while needed:
        name = needed.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in inputs:
            reached.add(name)
        node = producer.get(name)
        if node is None:
            continue
        needed.extend(node.input)
        for attr in node.attribute:  # If / Loop / Scan bodies read outer names
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                needed.extend(_outer_names(sub))
    return reached


def _outer_names(graph: Any) -> list[str]:
    names = []
    for node in graph.node:
        names.extend(node.input)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                names.extend(_outer_names(sub))
    return names


def lost_modalities(onnx_model: Any, specs: list[Any], wanted: set[str]) -> dict[str, list[str]]:
    """Wanted modalities none of whose signature inputs reach an output: modality -> its inputs."""
    reached = consumed_inputs(onnx_model)
    lost: dict[str, list[str]] = {}
    for modality in sorted(wanted):
        names = [s.name for s in specs if s.modality == modality]
        if names and not any(n in reached for n in names):
            lost[modality] = names
    return lost


def check_known_model_type(config: dict[str, Any], config_path: str) -> None:
    """A model type transformers does not know is bad input (exit 2), named with the file it came from."""
    from transformers import CONFIG_MAPPING

    import studio.export.custom_models  # noqa: F401 - registers the studio's sample types

    model_type = str(config.get("model_type"))
    if model_type not in CONFIG_MAPPING:
        close = sorted(k for k in CONFIG_MAPPING if k.replace("_", "").replace("-", "")
                       == model_type.replace("_", "").replace("-", ""))
        import transformers

        raise InputError(f"config.json names model_type '{model_type}', which transformers {transformers.__version__} "
                         "does not know", offending=config_path,
                         hint=(f"did you mean '{close[0]}'? " if close else "") +
                              "fix model_type in config.json, or upgrade transformers to a version that has it")
