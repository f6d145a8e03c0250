"""What a processor's call needs beyond an image, a clip and a prompt: arguments its ``__call__`` requires (read
from its docstring), its chat template around the media items, words with boxes for a document processor.

Why: the example inputs must come out of the processor as a client's request would (studio.export.processor_inputs
tries these forms, the model's forward judging each); each is read off the processor, never listed per family.
"""

from __future__ import annotations

import re
from typing import Any

from studio.export.processor_source import ProcessorSource

_MEDIA_ARGS = {"images", "text", "audio", "videos", "sampling_rate", "return_tensors"}


def required_call_args(processor: Any, given: dict[str, Any]) -> dict[str, Any]:
    """Arguments the processor's ``__call__`` requires besides the media and the prompt (CohereASR's ``language``;
    OneFormer's ``task_inputs``, documented ``*required*`` behind a None default): the first example value its
    docstring gives for the parameter (``(e.g. `"en"`, ...)``, or the first quoted choice of a required one), else
    its first ``Literal`` choice; a required argument with none is left out, and the processor's own error names
    it."""
    import inspect
    import typing

    try:
        params = inspect.signature(type(processor).__call__).parameters
    except (TypeError, ValueError):
        return {}
    doc = inspect.getdoc(type(processor).__call__) or ""
    out: dict[str, Any] = {}
    for name, p in params.items():
        documented = re.search(rf"^\s*{name} \([^\n]*\*required\*", doc, re.M)  # a None default it refuses
        if name in ("self", *given, *_MEDIA_ARGS) or (p.default is not p.empty and not documented) or \
                p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        section = re.search(rf"^\s*{name} \(.*?\n(.*?)(?:\n\s*\w+ \(|\Z)", doc, re.S | re.M)
        example = re.search(r"""e\.g\.[^"'`]*[`]?["']([^"']+)["']""", section.group(1)) if section else None
        if example is None and documented and section:  # "Must be one or more of `"semantic"`, ..."
            example = re.search(r"""`["']([^"'`]+)["']`""", section.group(1))
        choices = typing.get_args(p.annotation) if typing.get_origin(p.annotation) is typing.Literal else ()
        rows = next((len(given[k]) for k in ("images", "text", "videos", "audio") if isinstance(given.get(k), list)),
                    0)
        if example and documented and rows and "list[" in documented.group(0):
            out[name] = [example.group(1)] * rows  # "a list of strings (one per image)" for a batch
        elif example:
            out[name] = example.group(1)
        elif choices:
            out[name] = choices[0]
    return out


def takes_boxes(source: ProcessorSource) -> bool:
    """A document processor whose image processor runs no OCR: its prompts are words, each with a box."""
    import inspect

    image = source.sub.get("image_processor")
    try:
        params = inspect.signature(type(source.processor).__call__).parameters
    except (TypeError, ValueError):
        return False
    return "boxes" in params and getattr(image, "apply_ocr", None) is False


def chat_template(source: ProcessorSource) -> str | None:
    """The chat template the processor renders conversations with (its own, else its tokenizer's)."""
    tok = next((o for r, o in source.sub.items() if "tokenizer" in r), None)
    for obj in (source.processor, tok):
        value = getattr(obj, "chat_template", None)
        if isinstance(value, (str, dict)) and value:
            return str(value)
    return None


def chat_prompt(source: ProcessorSource, prompt: str, modalities: set[str]) -> str:
    """One user turn holding one image / clip per modality and the prompt, rendered by the processor's chat
    template with the generation prompt: the placeholders land where the checkpoint's template puts them."""
    content: list[dict[str, Any]] = [{"type": "image"}] if "vision" in modalities else []
    content += [{"type": "audio"}] if "audio" in modalities else []
    content.append({"type": "text", "text": prompt})
    out = source.processor.apply_chat_template([{"role": "user", "content": content}], tokenize=False,
                                               add_generation_prompt=True)
    return out[0] if isinstance(out, list) else str(out)


_OPEN_CLOSE = (("start", "end"), ("begin", "end"), ("bos", "eos"), ("boi", "eoi"), ("boa", "eoa"))
_MEDIUM = {"vision": re.compile(r"(image|vision|img|boi|eoi)"), "video": re.compile(r"video"),
           "audio": re.compile(r"(audio|speech|boa|eoa)")}


def media_brackets(objects: list[Any], modality: str) -> tuple[str, str] | None:
    """The opening and closing tokens a processor wraps one image / clip placeholder in (HunYuan-VL's
    ``<image_start><image><image_end>``): a ``*_token`` attribute naming the medium and an opening word (start,
    begin, bos, boi, boa) whose closing twin (end, eos, eoi, eoa) the same object has; None when it has none."""
    for obj in objects:
        for attr in dir(obj):
            if attr.startswith("_") or not attr.endswith("_token") or not _MEDIUM[modality].search(attr):
                continue
            for o, c in _OPEN_CLOSE:
                if not re.search(rf"(^|_){o}(_|$)", attr):
                    continue
                close = re.sub(rf"(^|_){o}(_|$)", rf"\g<1>{c}\g<2>", attr, count=1)
                opening, closing = _token_text(obj, attr), _token_text(obj, close)
                if opening and closing and opening != closing:
                    return opening, closing
    return None


def _token_text(obj: Any, attr: str) -> str | None:
    try:
        value = getattr(obj, attr, None)
    except Exception:  # noqa: BLE001 - a property that needs state the processor lacks
        return None
    value = getattr(value, "content", value)
    return value if isinstance(value, str) and value else None


_FRAMES = re.compile(r"^(num_frames|frames_per_clip|num_video_frames|max_frames)$")
DEFAULT_FRAMES = 4  # a clip's frame count when the config names none (the model takes any count)


def video_keyword(source: ProcessorSource) -> str | None:
    """The keyword a processor takes its vision input under when that input is a clip of frames, not a still
    image: ``videos`` for a processor with only a video processor (VideoPrism), ``images`` where the call routes its
    ``images`` to a clip processor (InstructBLIP-Video's ``images: VideoInput``, TVP's image processor whose
    ``preprocess`` takes ``videos``); None when it takes still images."""
    import inspect

    try:
        params = inspect.signature(type(source.processor).__call__).parameters
    except (TypeError, ValueError):
        return None
    image = source.sub.get("image_processor")
    if image is not None:
        try:
            first = next(iter(inspect.signature(image.preprocess).parameters), "")
        except (TypeError, ValueError, AttributeError):
            first = ""
        return ("images" if "images" in params else "videos" if "videos" in params else None) \
            if first == "videos" else None
    if any("video_processor" in r for r in source.sub):
        return "videos" if "videos" in params else "images" if "images" in params else None
    return None


def video_frames(config: dict[str, Any]) -> int:
    """The frames per clip the config fixes (``num_frames`` in it or a sub-config: TVP's 48, VideoPrism's 16),
    else DEFAULT_FRAMES."""
    stack: list[tuple[dict[str, Any], int]] = [(config, 0)]
    while stack:
        d, depth = stack.pop(0)
        for k, v in d.items():
            if isinstance(v, dict) and depth < 3:
                stack.append((v, depth + 1))
            elif _FRAMES.match(str(k)) and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                return v
    return DEFAULT_FRAMES
