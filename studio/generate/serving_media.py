"""Generation kinds that take media (agent and Triton): "vlm" (Qwen2-VL: image + text) and "encoder-decoder" (Whisper).

Listed in :data:`studio.generate.serving.GENERATION_KINDS` (which imports this module; this one imports only
the request checks of studio.generate.requests). The request's ``image`` / ``audio`` field holds
the file's bytes as base64 (PNG/JPEG/... for an image, PCM WAV for audio), the same field Triton's generate
endpoint maps to the BYTES input of that name. Every check the runtime makes on its input (studio.generate.vlm /
speech: unreadable or truncated image, an aspect ratio the processor refuses, a WAV that is not PCM, a clip longer
than the model's window, a prompt beyond the context) runs in ``parse``, before a slot is taken, and its
InputError (which names the CLI flag, ``--image``) becomes a 400 naming the request field (``image``). The image is
decoded and patched there too, so a slot only ever holds ONNX Runtime work; the log-mel features of a clip are
computed in the slot (they are the encoder's first stage).
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import InputError
from studio.generate.requests import (
    GenerateInputError,
    GenerateRequest,
    check_sampling,
    decode_media,
    request_fields,
)

FLAG_FIELDS = {"--image": "image", "--audio": "audio", "--prompt": "text_input", "--prompt-ids": "text_input",
               "--max-new-tokens": "max_new_tokens"}
MAX_IMAGE_PIXELS = 40_000_000  # decoded RGB is 3 bytes a pixel: refuse before PIL allocates it (about 120 MB)


def _field_error(exc: InputError, default: str) -> GenerateInputError:
    """The runtime's InputError (named by its CLI flag) as the request field's 400."""
    flag = str(exc.offending or "")
    name = FLAG_FIELDS.get(flag, default)
    message = exc.message.replace(f"{flag} ", f"'{name}' ", 1) if flag else exc.message
    return GenerateInputError(name, message, exc.hint)


def _image_size_check(data: bytes) -> None:
    """Read the image header alone (no pixels) and refuse a picture too large to decode on an edge box."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            w, h = img.size
    except Exception:  # not an image at all: the runtime's own reader says so, naming the field
        return
    if w * h > MAX_IMAGE_PIXELS:
        raise GenerateInputError("image", f"'image' is {w}x{h} pixels ({w * h / 1e6:.0f} MP), beyond this agent's "
                                          f"limit of {MAX_IMAGE_PIXELS / 1e6:.0f} MP",
                                 hint="downscale the image first: the model resizes it to a few hundred "
                                      "thousand pixels anyway")


class VisionGeneration:
    """A Qwen2-VL export (kind "vlm"): ``image`` (base64 bytes, optional: the runtime answers text-only prompts
    too) and ``text_input``, through studio.generate.vlm's VisionLanguageGenerator."""

    kind = "vlm"
    accepts: tuple[str, ...] = ("image",)

    def __init__(self, folder: Path, raw: dict[str, Any], threads: int | None = 1) -> None:
        from studio.generate.vlm import open_vlm

        self.generator = open_vlm(folder, threads=threads or None)
        self.gen = self.generator.gen
        self.model_type = str(raw.get("model_type") or self.gen.model_type)
        self.session = self.generator.runtime.decoder  # /infer on the bundle's primary graph: the decoder

    @property
    def max_context(self) -> int:
        return int(self.gen.max_context)

    def describe(self) -> dict[str, Any]:
        v = self.generator.runtime.vision_cfg
        return {"kind": self.kind, "model_type": self.model_type, "max_context": self.max_context,
                "accepts": ["text_input", *self.accepts], "runtime": self.generator.runtime_name,
                "image": {"encoding": "base64 file bytes (PNG, JPEG, GIF, BMP, TIFF, WebP)",
                          "resized_to_pixels": [v.min_pixels, v.max_pixels]}}

    def parse(self, body: Any) -> GenerateRequest:
        text, params, media = request_fields(body)
        files = decode_media(media, self.accepts, f"this model ({self.model_type}, a vision-language export)")
        if text is not None and not isinstance(text, str):
            raise GenerateInputError("text_input", "'text_input' must be a string",
                                     hint='send {"text_input": "what is in the picture?", "image": "<base64>"}')
        n, sampling, stop = check_sampling(params)
        image = files.get("image")
        if image is None and not text:
            raise GenerateInputError("text_input", "no 'text_input' and no 'image' given",
                                     hint='send {"text_input": "what is in the picture?", "image": "<base64>"}')
        if image is not None:
            _image_size_check(image)
        try:
            ids, images = self.generator.prepare(text or None, image)
        except InputError as exc:
            raise _field_error(exc, "image" if image is not None else "text_input") from exc
        return GenerateRequest(ids, n, sampling, stop, files, prepared=(text or None, images[0] if images else None))

    def run(self, req: GenerateRequest, on_text: Callable[[str], None], should_stop: Callable[[], bool]) -> Any:
        text, image = req.prepared
        return self.generator.generate(text, image=image, max_new_tokens=req.max_new_tokens, sampling=req.sampling,
                                       on_text=on_text, should_stop=should_stop)

    def warmup(self) -> float:
        """One generation on a small grey image: both graphs run (and allocate) before the first request."""
        from PIL import Image

        v = self.generator.runtime.vision_cfg
        side = max(v.patch_size * v.merge_size, int(v.min_pixels ** 0.5))
        img = self.generator.processor.from_pil(Image.new("RGB", (side, side), (128, 128, 128)))
        t0 = time.perf_counter()
        self.generator.generate("hi", image=img, max_new_tokens=2)
        return time.perf_counter() - t0


class SpeechGeneration:
    """A Whisper export (kind "encoder-decoder"): ``audio`` (base64 PCM WAV, at most the model's window long)
    through studio.generate.speech's SpeechGenerator. The runtime takes no text prompt (the start tokens come
    from the export's generation config): ``text_input`` may be absent or empty."""

    kind = "encoder-decoder"
    accepts: tuple[str, ...] = ("audio",)

    def __init__(self, folder: Path, raw: dict[str, Any], threads: int | None = 1) -> None:
        from studio.generate.speech import SpeechGenerator

        self.generator = SpeechGenerator(folder, threads=threads or None)
        self.gen = self.generator.gen
        self.model_type = str(raw.get("model_type") or self.gen.model_type)
        self.session = self.generator.runtime.decoder

    @property
    def max_context(self) -> int:
        return int(self.gen.max_context)

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "model_type": self.model_type, "max_context": self.max_context,
                "accepts": ["audio"], "runtime": "studio ORT loop (encoder once + decoder with past, session.run)",
                "audio": {"encoding": "base64 PCM WAV (8/16/32-bit, any rate, mono or stereo)",
                          "window_s": self.gen.window_s, "sampling_rate": self.gen.sampling_rate}}

    def parse(self, body: Any) -> GenerateRequest:
        from studio.generate.speech import read_wave

        text, params, media = request_fields(body)
        files = decode_media(media, self.accepts, f"this model ({self.model_type}, a speech-to-text export)",
                             send="audio")
        if text not in (None, ""):
            raise GenerateInputError("text_input", "'text_input' given, but this speech model takes no text prompt "
                                                   "(its start tokens come from the export's generation config)",
                                     hint='send {"audio": "<base64 WAV>"} with text_input empty or absent')
        n, sampling, stop = check_sampling(params)
        if "audio" not in files:
            raise GenerateInputError("audio", "no 'audio' given: this model transcribes speech",
                                     hint='send {"audio": "<base64 of a PCM WAV file>"}')
        try:
            samples = read_wave(self.generator.front, self.gen, files["audio"])
        except InputError as exc:
            raise _field_error(exc, "audio") from exc
        return GenerateRequest(list(self.gen.init_token_ids), n, sampling, stop, files, prepared=samples)

    def run(self, req: GenerateRequest, on_text: Callable[[str], None], should_stop: Callable[[], bool]) -> Any:
        return self.generator.generate(req.prepared, max_new_tokens=req.max_new_tokens, sampling=req.sampling,
                                       on_text=on_text, should_stop=should_stop)

    def warmup(self) -> float:
        """One transcription of a tenth of a window of silence: encoder and decoder run before the first request."""
        t0 = time.perf_counter()
        self.generator.generate(np.zeros(max(1, self.gen.window_samples // 10), np.float32), max_new_tokens=2)
        return time.perf_counter() - t0

