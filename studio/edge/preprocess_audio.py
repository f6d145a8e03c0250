"""The one audio pre-processing: a WAV file -> the waveform or Whisper's log-mel features the model takes.

Every client reads audio here: the edge agent's raw ``audio`` inputs (studio.edge.preprocess), Triton test
inference and `studio triton infer` (studio.triton.inputs), the Whisper generation runtime (studio.generate.speech)
and the GUI's previews. PCM is scaled as soundfile / librosa / torchaudio read it (int16 / 32768), mixed to mono and
resampled to the processor's rate; the log-mel spectrogram is transformers' ``WhisperFeatureExtractor`` in numpy
(tests/edge/test_preprocess_parity.py: max abs <= 1e-6 against it).
"""

from __future__ import annotations

import io
import wave
from typing import Any

import numpy as np

from studio.core.errors import BundleError
from studio.edge.raw_inputs import RawInputError


def read_wav(data: bytes) -> tuple[np.ndarray, int]:
    """(mono float32 waveform in [-1, 1), sampling rate) of a PCM WAV file (8, 16 or 32-bit, any channels)."""
    try:
        with wave.open(io.BytesIO(data)) as w:
            rate, width, ch = w.getframerate(), w.getsampwidth(), w.getnchannels()
            frames = w.readframes(w.getnframes())
    except (wave.Error, EOFError) as exc:
        raise RawInputError(f"audio input is not a PCM WAV file: {exc}") from None
    if width == 1:
        x = (np.frombuffer(frames, np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width in (2, 4):
        x = np.frombuffer(frames, np.int16 if width == 2 else np.int32).astype(np.float32) / float(2 ** (8 * width - 1))
    else:
        raise RawInputError(f"audio input: {8 * width}-bit samples are not supported (use 16-bit PCM)")
    return x.reshape(-1, ch).mean(axis=1, dtype=np.float32), rate


def waveform(data: bytes, rate: int, normalize: bool = False) -> np.ndarray:
    """A WAV file's mono waveform at ``rate`` (linear resampling), zero-mean unit-variance when ``normalize``."""
    x, src = read_wav(data)
    x = resample_linear(x, src, rate)
    if normalize:
        x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
    return x


def resample_linear(x: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """Linear-interpolation resampling (enough for speech front-ends; no scipy on the board)."""
    if src_rate == dst_rate or x.size == 0:
        return x.astype(np.float32, copy=False)
    n = max(1, int(round(x.shape[-1] * dst_rate / src_rate)))
    t = np.arange(n, dtype=np.float64) * (src_rate / dst_rate)
    return np.interp(t, np.arange(x.shape[-1], dtype=np.float64), x.astype(np.float64)).astype(np.float32)


def _hz_to_mel_slaney(f: np.ndarray) -> np.ndarray:
    f = np.asarray(f, dtype=np.float64)
    lin = 3.0 * f / 200.0
    log = 15.0 + np.log(np.maximum(f, 1e-12) / 1000.0) * (27.0 / np.log(6.4))
    return np.where(f >= 1000.0, log, lin)


def _mel_to_hz_slaney(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    lin = 200.0 * m / 3.0
    log = 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0))
    return np.where(m >= 15.0, log, lin)


def slaney_mel_filters(n_freqs: int, n_mels: int, sampling_rate: int, f_min: float = 0.0,
                       f_max: float = 8000.0) -> np.ndarray:
    """Slaney-scale, area-normalised triangular filters ``[n_freqs, n_mels]`` (as transformers'
    ``mel_filter_bank(norm="slaney", mel_scale="slaney")`` and librosa build them)."""
    mels = np.linspace(_hz_to_mel_slaney(np.float64(f_min)), _hz_to_mel_slaney(np.float64(f_max)), n_mels + 2)
    hz = _mel_to_hz_slaney(mels)
    fft_freqs = np.linspace(0, sampling_rate // 2, n_freqs)
    slopes = hz[None, :] - fft_freqs[:, None]
    diff = np.diff(hz)
    down = -slopes[:, :-2] / diff[:-1]
    up = slopes[:, 2:] / diff[1:]
    filters = np.maximum(0.0, np.minimum(down, up))
    return filters * (2.0 / (hz[2:n_mels + 2] - hz[:n_mels]))[None, :]


class LogMelFeatures:
    """Whisper's log-mel front-end in numpy: pad / truncate to ``n_samples``, centred STFT (reflect padding,
    periodic Hann window), power spectrum, mel filters, log10 clamped at 1e-10, the last frame dropped,
    dynamic range limited to 8 (per clip), then ``(x + 4) / 4``. Matches ``WhisperFeatureExtractor``'s numpy path (the one it takes without torch) to float32 rounding."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        try:
            self.rate = int(cfg.get("sampling_rate", 16000))
            self.n_mels = int(cfg.get("feature_size", cfg.get("n_mels", 80)))
            self.n_fft = int(cfg.get("n_fft", 400))
            self.hop = int(cfg.get("hop_length", 160))
            chunk = cfg.get("chunk_length", 30)
            self.n_samples = int(cfg.get("n_samples") or int(chunk) * self.rate)
            self.pad_value = float(cfg.get("padding_value", 0.0))
            self.normalize = bool(cfg.get("do_normalize", False))
            saved = cfg.get("mel_filters")
            filters = (np.asarray(saved, dtype=np.float64) if saved is not None else
                       slaney_mel_filters(1 + self.n_fft // 2, self.n_mels, self.rate))
        except (TypeError, ValueError) as exc:
            raise BundleError(f"the Whisper feature extractor settings are malformed: {exc}",
                              offending="preprocessor_config.json",
                              hint="re-export the model so its processor files are complete") from None
        if filters.shape == (self.n_mels, 1 + self.n_fft // 2):
            filters = filters.T
        if filters.shape != (1 + self.n_fft // 2, self.n_mels) or self.hop <= 0 or self.n_samples <= 0:
            raise BundleError(f"the Whisper feature extractor settings are inconsistent (mel filters "
                              f"{list(filters.shape)}, n_fft {self.n_fft}, feature_size {self.n_mels})",
                              offending="preprocessor_config.json", hint="re-export the model")
        self.filters = filters
        self.window = np.hanning(self.n_fft + 1)[:-1]  # periodic Hann, as HF's window_function builds it

    @property
    def frames(self) -> int:
        return self.n_samples // self.hop

    def one(self, wave_: np.ndarray) -> np.ndarray:
        """``[n_mels, frames]`` float32 features of one mono waveform at :attr:`rate`."""
        x = np.full(self.n_samples, self.pad_value, dtype=np.float64)
        n = min(len(wave_), self.n_samples)
        x[:n] = wave_[:n]
        if self.normalize and n:
            v = x[:n]
            x[:n] = (v - v.mean()) / np.sqrt(v.var() + 1e-7)
            x[n:] = self.pad_value
        half = self.n_fft // 2
        if len(x) <= half:
            raise RawInputError(f"audio input is shorter than the model's FFT window ({self.n_fft} samples)")
        x = np.pad(x, half, mode="reflect")
        count = 1 + (len(x) - self.n_fft) // self.hop
        idx = np.arange(self.n_fft)[None, :] + self.hop * np.arange(count)[:, None]
        # float64 throughout: within one float32 rounding (1.2e-7) of HF, which keeps the FFT as complex64; that
        # cast and its float64 abs would cost about twice the time for no visible change
        spec = np.fft.rfft(x[idx] * self.window, n=self.n_fft, axis=-1)
        power = spec.real ** 2 + spec.imag ** 2  # [frames + 1, n_freqs]
        mel = power[:-1] @ self.filters  # the last frame dropped, as Whisper does
        log = np.log10(np.maximum(mel, 1e-10)).T
        log = np.maximum(log, log.max() - 8.0)
        return ((log + 4.0) / 4.0).astype(np.float32)
