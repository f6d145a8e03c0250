"""Example inputs made by the model's processor on a synthetic image, clip and prompt, and the signature read off
them: every tensor the processor returns that the model's forward takes is a graph input, with the dtype and
shape the processor gave it and the axes that changed between runs declared dynamic (``studio.export.input_axes``).

The runs (``MEDIA_CASES``) differ in batch size, prompt length and image size / clip length. An encoder-decoder
whose processor
makes no ``decoder_input_ids`` gets them from the tokenizer: the decoder start id, then the prompt's ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from studio.core.catalogue import N_
from studio.export.processor_source import ProcessorSource
from studio.export.prompt_forms import (
    chat_prompt,
    chat_template,
    media_brackets,
    required_call_args,
    takes_boxes,
    video_frames,
    video_keyword,
)

DROP = {"labels", "return_loss", "output_attentions", "output_hidden_states", "return_dict", "use_cache"}


@dataclass(frozen=True)
class MediaCase:
    """One processor run: rows, their prompts, one image (width, height) and one clip (seconds) per row."""

    name: str
    prompts: tuple[str, ...]
    image: tuple[int, int]
    seconds: tuple[float, ...]
    decoder_tokens: int
    seed: int

    @property
    def batch(self) -> int:
        return len(self.prompts)


MEDIA_CASES = (
    MediaCase(N_("traced (batch=2)"), ("a photo of a cat", "what is the color of the car near the house"), (64, 48),
              (1.0, 0.6), 4, 0),
    MediaCase(N_("batch=3, longer prompts, new image"), (
        "how many people are there in the picture", "two", "describe the red house with a green tree and a blue car"),
        (80, 56), (0.8, 0.5, 1.2), 6, 1),
    MediaCase(N_("batch=1, short prompt"), ("yes",), (56, 56), (0.4,), 3, 2),
)


@dataclass
class Placeholders:
    """The prompt prefix that asks the processor for one image / one clip per row ("" when it adds them)."""

    image: str = ""
    audio: str = ""
    nested_images: bool = False  # the processor wants [[img], [img]] for a batch of prompts
    send_text: bool = True
    pad_all: bool = False  # padding=True for every modality (clips of different lengths into one tensor)
    id_map: dict[int, int] = field(default_factory=dict)  # placeholder-tokenizer ids rebound (token_rebind)
    chat: bool = False  # each prompt rendered by the processor's chat template around its image / clip items
    words: bool = False  # each prompt as its words with one box each (a document processor without OCR)
    video: str = ""  # the keyword the vision input goes under as clips of ``frames`` frames (prompt_forms.video_keyword)
    frames: int = 0


@dataclass
class ProcessorRun:
    """What one run of the processor gave, numpy only."""

    case: MediaCase
    tensors: dict[str, np.ndarray]
    modality: dict[str, str] = field(default_factory=dict)


def synthetic_image(case: MediaCase, row: int, frame: int = 0) -> Any:
    """A seeded RGB image with structure (a gradient plus noise), so resizing and normalising do real work; a clip's
    frames differ by their noise."""
    from PIL import Image

    w, h = case.image
    rng = np.random.default_rng(100 * case.seed + row + 1000 * frame)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 / max(w - 1, 1), y * 255 / max(h - 1, 1), (x + y) * 127 / max(w + h - 2, 1)], -1)
    img = np.clip(base + rng.normal(0, 20, base.shape), 0, 255).astype(np.uint8)
    return Image.fromarray(img, "RGB")


def synthetic_clip(case: MediaCase, row: int, rate: int) -> np.ndarray:
    """A seeded clip: a sweep plus a little noise, ``case.seconds[row]`` long."""
    seconds = case.seconds[row % len(case.seconds)]
    t = np.arange(max(int(seconds * rate), 1)) / rate
    rng = np.random.default_rng(200 * case.seed + row)
    wave = 0.4 * np.sin(2 * np.pi * (220 + 600 * t / max(seconds, 1e-3)) * t) + rng.normal(0, 0.02, t.size)
    return wave.astype(np.float32)


def sampling_rate(source: ProcessorSource) -> int:
    fe = source.sub.get("feature_extractor") or source.sub.get("audio_processor")
    return int(getattr(fe, "sampling_rate", 16000) or 16000)


def placeholder_candidates(source: ProcessorSource, modality: str) -> list[str]:
    """The strings a processor may want in the prompt for one image / clip: its own declared tokens, the first of
    them wrapped in the processor's opening / closing tokens for the medium (prompt_forms.media_brackets), then
    none."""
    tok = next((o for r, o in source.sub.items() if "tokenizer" in r), None)
    attrs = {"vision": ("image_token", "boi_token", "image_placeholder"), "video": ("video_token", "video_placeholder"),
             "audio": ("audio_token", "boa_token", "audio_placeholder")}[modality]
    found: list[str] = []
    for obj in (source.processor, tok):
        for a in attrs:
            try:
                v = getattr(obj, a, None)
            except Exception:  # noqa: BLE001
                v = None
            v = getattr(v, "content", v)
            if isinstance(v, str) and v and v not in found:
                found.append(v)
    brackets = media_brackets([source.processor, tok], modality)
    if brackets and found and brackets[0] not in found[0]:
        found.append(f"{brackets[0]}{found[0]}{brackets[1]}")
    return [*found, ""]


def fit_prompt(source: ProcessorSource, prompt: str, limit: int | None, extra: int = 0) -> str:
    """The prompt cut (whole words) to half the model's text positions (plus ``extra``: each case's own, so cut
    prompts still differ in length): a tiny config's 16 positions hold it."""
    tok = next((o for r, o in source.sub.items() if "tokenizer" in r), None)
    if not limit or tok is None:
        return prompt
    words = prompt.split()
    budget = min(limit // 2 + extra, limit - 2)
    while len(words) > 1 and _count(tok, words) > budget:
        words = words[:-1]
    return " ".join(words)


def _count(tok: Any, words: list[str]) -> int:
    """Token ids for a prompt; a word-level (layout) tokenizer that takes no plain string counts one per word."""
    try:
        return len(tok(" ".join(words), add_special_tokens=True)["input_ids"])
    except (ValueError, TypeError):
        return len(words) + 2


def text_positions(config: dict[str, Any]) -> int | None:
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    value = text.get("max_position_embeddings") or text.get("n_positions") or text.get("max_target_positions")
    return int(value) if isinstance(value, int) and value > 0 else None


def run_processor(source: ProcessorSource, case: MediaCase, modalities: set[str], ph: Placeholders,
                  limit: int | None = None, params: list[str] | None = None) -> dict[str, Any]:
    """The processor on one case's prompts, images and clips; raw outputs (torch or numpy tensors, lists).
    ``params``: the forward's inputs; one that transformers' processors make on request (``mm_token_type_ids``,
    which an M-RoPE forward needs) is requested."""
    from transformers import ProcessorMixin

    kw: dict[str, Any] = {}
    if "mm_token_type_ids" in (params or []) and isinstance(source.processor, ProcessorMixin):
        kw["return_mm_token_type_ids"] = True
    if "vision" in modalities and ph.video:
        kw[ph.video] = [[synthetic_image(case, r, f) for f in range(ph.frames)] for r in range(case.batch)]
    elif "vision" in modalities:
        images = [synthetic_image(case, r) for r in range(case.batch)]
        kw["images"] = [[im] for im in images] if ph.nested_images else images
    if "audio" in modalities:
        rate = sampling_rate(source)
        kw["audio"] = [synthetic_clip(case, r, rate) for r in range(case.batch)]
        kw["sampling_rate"] = rate
    if ph.send_text and any("tokenizer" in r for r in source.sub):
        prompts = [fit_prompt(source, p, limit, case.seed) for p in case.prompts]
        kw["text"] = [chat_prompt(source, p, modalities) if ph.chat else f"{ph.image}{ph.audio}{p}" for p in prompts]
        kw["text_kwargs"] = {"padding": True}  # rows of different lengths; the audio keeps its own padding
        if ph.words:
            kw["text"] = [p.split() for p in prompts]
            kw["boxes"] = [[[40 * i, 10, 40 * i + 30, 30] for i in range(len(w))] for w in kw["text"]]
    if ph.pad_all:
        kw["padding"] = True
        kw.pop("text_kwargs", None)
    kw.update(required_call_args(source.processor, kw))
    try:
        out = source.processor(return_tensors="pt", **kw)
    except TypeError as exc:  # a processor that takes no text_kwargs / padding (SAM 3) pads text its own way
        if not re.search(r"unexpected keyword argument '(text_kwargs|padding)'", str(exc)):
            raise
        kw.pop("text_kwargs", None)
        kw.pop("padding", None)
        out = source.processor(return_tensors="pt", **kw)
    out = dict(out.items()) if hasattr(out, "items") else dict(out)
    ids = out.get("input_ids")
    if case.batch > 1 and getattr(ids, "ndim", 0) == 2 and ids.shape[0] == 1 and isinstance(kw.get("text"), list) \
            and all(isinstance(t, str) for t in kw["text"]):
        # the processor read the prompts as one row's labels (a zero-shot detector's "a cat. a dog."): one list of
        # labels per row, as its batched call takes them
        kw["text"] = [[t] for t in kw["text"]]
        out = dict(source.processor(return_tensors="pt", **kw).items())
    return out


def to_numpy(value: Any) -> np.ndarray | None:
    """A processor output as a numpy array (None for lists of ragged items, strings and other non-tensors)."""
    try:
        import torch

        if isinstance(value, torch.Tensor):
            if value.dtype == torch.bfloat16:
                value = value.float()
            return value.detach().cpu().numpy()
    except ImportError:  # pragma: no cover - torch is there whenever a model is exported
        pass
    if isinstance(value, np.ndarray):
        return value
    return None


def modality_of_key(source: ProcessorSource, key: str, asked: set[str], keys: set[str] | None = None) -> str:
    """Which sub-processor makes a tensor: its ``model_input_names`` say, else the name does. An
    ``attention_mask`` beside no ``input_ids`` (``keys``: the run's tensors) masks the one media input (a speech
    encoder's frames: SpeechT5, CohereASR)."""
    from studio.export.signatures import modality_of

    media = asked - {"text"}
    if key == "attention_mask" and keys is not None and "input_ids" not in keys and len(media) == 1:
        return next(iter(media))

    for role, obj in source.sub.items():
        names = list(getattr(obj, "model_input_names", []) or [])
        if key in names:
            if "tokenizer" in role and "text" in asked | {"text"}:
                return "text"
            if role == "image_processor":
                return "vision"
            if role in ("feature_extractor", "audio_processor"):
                return "audio" if not (key == "attention_mask" and "tokenizer" in str(source.sub)) else "text"
    guess = modality_of(key)
    return guess if guess in asked | {"text"} else "text"


def decoder_ids(source: ProcessorSource, config: dict[str, Any], case: MediaCase) -> np.ndarray:
    """``decoder_input_ids`` for an encoder-decoder: the start id, then the prompt's ids (padded by repetition so
    every row has ``case.decoder_tokens`` ids; the graph's sequence axis is what varies)."""
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    decoder = config.get("decoder") if isinstance(config.get("decoder"), dict) else {}
    start = next((d.get(k) for d in (config, text, decoder) for k in ("decoder_start_token_id", "bos_token_id",
                                                                      "pad_token_id") if isinstance(d.get(k), int)), 0)
    tok = next((o for r, o in source.sub.items() if "tokenizer" in r), None)
    vocab = next((d.get("vocab_size") for d in (text, decoder, config) if isinstance(d.get("vocab_size"), int)), 100)
    rows = []
    for p in case.prompts:
        ids = _prompt_ids(tok, p) if tok is not None else []
        ids = [i for i in ids if 0 <= i < vocab] or [min(5, vocab - 1)]
        ids = (ids * case.decoder_tokens)[: case.decoder_tokens - 1]
        rows.append([int(start), *ids])
    return np.asarray(rows, dtype=np.int64)


def _prompt_ids(tok: Any, prompt: str) -> list[int]:
    """A prompt's ids; a word-level (layout) tokenizer that takes no plain string gets its words, each with a box."""
    try:
        return list(tok(prompt, add_special_tokens=False)["input_ids"])
    except (ValueError, TypeError):
        words = prompt.split()
        return list(tok(words, boxes=[[0, 0, 0, 0]] * len(words), add_special_tokens=False)["input_ids"])


# ------------------------------------------------------------------------------------------------ derivation

_MISMATCH = re.compile(r"tokens:?\s*(\d+),?\s*features:?\s*(\d+)", re.I)
_COUNT_ATTRS = re.compile(r"^(num_additional_image_tokens|image_seq_length|num_image_tokens|image_seq_len|"
                          r"tokens_per_image|num_query_tokens|audio_seq_length)$")


MAX_ATTEMPTS = 14  # prompt forms tried before the diagnosis (each runs the processor and the model once)


class ExampleInputError(Exception):
    """The processor could not make inputs the model's forward takes: names the input, the processor, the cause."""

    def __init__(self, message: str, attempts: list[str], cause: BaseException | None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.cause = cause


@dataclass
class Derivation:
    """How the example inputs were made, and the runs themselves."""

    placeholders: Placeholders
    runs: list[ProcessorRun]
    notes: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # processor outputs the forward does not take
    static: str = ""  # "batch": the forward runs only at batch 1 (studio.export.batch_one)
    feature_splits: int | None = None  # per-image feature splits the judging forward made (None: not counted)


def attempts(source: ProcessorSource, modalities: set[str], config: dict[str, Any] | None = None) -> list[Placeholders]:
    """Prompt forms to try, most specific first: each of the processor's own placeholder tokens (an image and / or
    a clip per row), a flat then a nested image list, then the prompt without placeholders, then no text. A
    processor whose vision input is a clip of frames (prompt_forms.video_keyword) gets one clip per row instead of
    an image, with its video placeholder tokens."""
    video = video_keyword(source) if "vision" in modalities else None
    frames = video_frames(config or {}) if video else 0
    images = placeholder_candidates(source, "video" if video else "vision") if "vision" in modalities else [""]
    clips = placeholder_candidates(source, "audio") if "audio" in modalities else [""]
    chat = [Placeholders(chat=True), Placeholders(chat=True, pad_all=True), Placeholders(nested_images=True, chat=True)] \
        if chat_template(source) and modalities else []
    words = [Placeholders(words=True), Placeholders(words=True, pad_all=True)] if takes_boxes(source) else []
    out = chat + words + [Placeholders(i, a, nested, True, pad, video=video or "", frames=frames) for i in images
                          for a in clips for nested in ((False,) if video else (False, True)) for pad in (False, True)]
    if any("tokenizer" in r for r in source.sub) and modalities:
        out += [Placeholders(send_text=False, video=video or "", frames=frames),
                Placeholders(send_text=False, pad_all=True, video=video or "", frames=frames)]
    seen: set[tuple[Any, ...]] = set()
    unique = []
    for p in out:
        key = (p.image, p.audio, p.nested_images, p.send_text, p.pad_all, p.chat, p.words, p.video)
        if key not in seen and not (p.nested_images and "vision" not in modalities):
            seen.add(key)
            unique.append(p)
    return unique


def case_tensors(source: ProcessorSource, config: dict[str, Any], case: MediaCase, modalities: set[str],
                 ph: Placeholders, params: list[str]) -> tuple[dict[str, np.ndarray], list[str]]:
    """One case's graph inputs (numpy) and the processor outputs the forward does not take."""
    raw = run_processor(source, case, modalities, ph, text_positions(config), params)
    tensors: dict[str, np.ndarray] = {}
    dropped: list[str] = []
    for key, value in raw.items():
        arr = to_numpy(value)
        if key in params and key not in DROP and arr is not None:
            tensors[key] = arr
        elif key not in DROP:
            dropped.append(key)
    if "decoder_input_ids" in params and "decoder_input_ids" not in tensors and is_encoder_decoder(config):
        tensors["decoder_input_ids"] = decoder_ids(source, config, case)
    from studio.export.token_rebind import apply

    return apply(tensors, ph.id_map), dropped


def text_width(config: dict[str, Any]) -> int:
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    return int(text.get("hidden_size") or text.get("d_model") or 0)


def is_encoder_decoder(config: dict[str, Any]) -> bool:
    return bool(config.get("is_encoder_decoder") or isinstance(config.get("decoder"), dict)
                or isinstance(config.get("decoder_config"), dict))


def _calibrate(source: ProcessorSource, message: str, images: int, hidden: int) -> str | None:
    """transformers' shared check ("tokens: X, features: Y") says the processor expanded one image into a count the
    model's tower does not return: move the processor's own count setting by the difference (per image). Some
    versions of the check print the features' element count: divided by the text width when it is a multiple."""
    m = _MISMATCH.search(message)
    if not m or images < 1:
        return None
    tokens, features = int(m.group(1)), int(m.group(2))
    if hidden > 1 and features > 4 * tokens and features % hidden == 0:
        features //= hidden
    tokens, features = tokens // images, features // images
    if tokens == features:
        return None
    found = [(obj, attr, getattr(obj, attr, None)) for obj in (source.processor, source.sub.get("image_processor"))
             for attr in dir(obj) if _COUNT_ATTRS.match(attr)]
    found = [f for f in found if isinstance(f[2], int) and not isinstance(f[2], bool)]
    # a count equal to the tokens made is the one that made them; an "additional" count only when none is
    for obj, attr, value in sorted(found, key=lambda f: f[2] != tokens):
        # per image, or per tile when an image is split into k tiles of ``value`` tokens each
        k = tokens // value if 0 < value < tokens and tokens % value == 0 else 0
        k = k if k and features % k == 0 else 0
        if value != tokens and "additional" not in attr and not k:
            continue
        new = features if value == tokens else value + (features - tokens) if "additional" in attr else features // k
        if new >= 0:
            setattr(obj, attr, new)
            return f"{type(obj).__name__}.{attr} {value} -> {new}: the model's tower returns {features} features " \
                   f"per image where the processor made {tokens} placeholder tokens"
    return None


def derive_inputs(model: Any, source: ProcessorSource, config: dict[str, Any], modalities: set[str],
                  params: list[str], at_batch_one: Any = None) -> Derivation:
    """Find the prompt form the model's forward accepts (it is the judge), then run every MEDIA_CASE with it;
    ``at_batch_one`` (batch_one.runs_at_batch_one) when every form fails at batch 2. Else ExampleInputError."""
    import torch

    from studio.export.features_split import features_split_whole

    tried: list[str] = []
    in_forward: list[tuple[str, BaseException]] = []  # the processor ran, the model refused: the telling ones
    refused: list[Placeholders] = []  # their forms, tried again at batch 1 when none runs at batch 2
    first: tuple[str, BaseException] | None = None
    notes: list[str] = []
    for ph in attempts(source, modalities, config)[:MAX_ATTEMPTS]:
        for _ in range(3):  # a count calibration re-runs the same form
            step = "processor"
            try:
                tensors, dropped = case_tensors(source, config, MEDIA_CASES[0], modalities, ph, params)
                step = "forward"
                with torch.no_grad(), features_split_whole(model, whole=False) as splits:
                    model(**{k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in tensors.items()})
            except Exception as exc:  # noqa: BLE001 - the next form is tried; all failing is the diagnosis
                fixed = _calibrate(source, str(exc), MEDIA_CASES[0].batch, text_width(config))
                if not fixed and step == "forward" and source.placeholder_tokenizer:
                    from studio.export.token_rebind import rebind

                    tok = next((o for r, o in source.sub.items() if "tokenizer" in r), None)
                    fixed = rebind(str(exc), tensors, config, tok, ph.id_map)
                if fixed:
                    notes.append(fixed if fixed.startswith("image token") else f"token count calibrated: {fixed}")
                    continue
                line = f"{describe(ph)}: {step} raised {type(exc).__name__}: {str(exc).strip()[:240]}"
                tried.append(line)
                first = first or (line, exc)
                if step == "forward" and (ph.send_text or not in_forward):
                    in_forward.append((line, exc))
                refused += [ph] if step == "forward" else []
                break
            runs = [ProcessorRun(MEDIA_CASES[0], tensors)]
            for case in MEDIA_CASES[1:]:
                more, _ = case_tensors(source, config, case, modalities, ph, params)
                runs.append(ProcessorRun(case, more))
            for r in runs:
                r.modality = {k: modality_of_key(source, k, modalities, set(r.tensors)) for k in r.tensors}
            notes += [f"{source.name}.__call__ requires {k}: {v!r} (the example its docstring or signature gives)"
                      for k, v in required_call_args(source.processor, {}).items()]
            return Derivation(ph, runs, notes, dropped, feature_splits=len(splits))
    line, cause = in_forward[0] if in_forward else first or ("", None)  # type: ignore[assignment]
    single = at_batch_one and MEDIA_CASES[0].batch > 1 and at_batch_one(model, source, config, modalities, refused, params)
    if single:
        why = f"batch 1: {type(model).__name__}.forward refuses every prompt form at batch 2 ({line}); every case " \
              "is made at batch 1 and the graph's batch axis is static"
        return Derivation(single[0], single[1], [*notes, why], single[2], "batch")
    unbuilt = f"; built without {', '.join(source.unbuilt)} (passed as None)" if source.unbuilt else ""
    raise ExampleInputError(f"{source.name} could not make inputs {type(model).__name__}.forward takes "
                            f"({len(tried)} prompt forms tried; the telling one: {line}{unbuilt})", tried, cause)


def describe(ph: Placeholders) -> str:
    """The prompt form in words, kept in the report's JSON in English; each piece is an ``N_`` template, so the
    export summary shows it in the user's language (studio.cli.export_cmd.prompt_text)."""
    token, audio, frames, video = ph.image, ph.audio, ph.frames, ph.video
    parts = [(N_(f"video placeholder {token!r}") if ph.video else N_(f"image placeholder {token!r}")) if ph.image
             else "", N_(f"audio placeholder {audio!r}") if ph.audio else "",
             N_("nested image lists") if ph.nested_images else "", "padding=True" if ph.pad_all else "",
             N_(f"clips of {frames} frames as {video}=") if ph.video else ""]
    if not ph.send_text:
        return ", ".join([N_("media only (no prompt)"), *(p for p in parts[3:] if p)])
    if ph.chat or ph.words:
        return ", ".join([N_("chat-template prompt") if ph.chat else N_("words with boxes"), *(p for p in parts if p)])
    return "prompt with " + (", ".join(p for p in parts if p) or N_("no placeholder"))
