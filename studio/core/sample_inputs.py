"""The workspace's sample inputs (WORKSPACE/samples): an image and a short audio clip for test inference.

Written with the standard library only (zlib PNG, wave), deterministic, so a fresh workspace can answer "run
this model on something" without the user hunting for a file; the Devices page offers them to models that
take an image or audio.
"""

from __future__ import annotations

import math
import struct
import wave
import zlib
from pathlib import Path

SAMPLES_DIR = "samples"
IMAGE_NAME = "sample-image.png"
AUDIO_NAME = "sample-audio.wav"


def _png(width: int, height: int) -> bytes:
    """An RGB gradient with a disc in the middle (something a vision model's preprocessing can resize)."""
    rows = []
    cx, cy, r2 = width / 2, height / 2, (min(width, height) / 3) ** 2
    for y in range(height):
        row = bytearray([0])  # filter type 0
        for x in range(width):
            inside = (x - cx) ** 2 + (y - cy) ** 2 <= r2
            row += bytes((230, 120, 40) if inside else (x * 255 // max(1, width - 1), y * 255 // max(1, height - 1), 160))
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) \
        + chunk(b"IEND", b"")


def _wav(path: Path, seconds: float = 1.0, rate: int = 16_000) -> None:
    """A 440 Hz tone with a 660 Hz overtone, 16-bit mono (the rate speech models expect)."""
    n = int(seconds * rate)
    frames = b"".join(struct.pack("<h", int(12_000 * (math.sin(2 * math.pi * 440 * i / rate)
                                                      + 0.3 * math.sin(2 * math.pi * 660 * i / rate)) / 1.3))
                      for i in range(n))
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(frames)


def write_sample_inputs(root: Path | str) -> dict[str, Path]:
    """WORKSPACE/samples/{sample-image.png, sample-audio.wav}, written once (a user's own files are kept)."""
    folder = Path(root) / SAMPLES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    image, audio = folder / IMAGE_NAME, folder / AUDIO_NAME
    if not image.exists():
        tmp = image.with_suffix(".png.tmp")
        tmp.write_bytes(_png(224, 224))
        tmp.replace(image)
    if not audio.exists():
        tmp = audio.with_suffix(".wav.tmp")
        _wav(tmp)
        tmp.replace(audio)
    return {"vision": image, "audio": audio}
