"""Speech-to-text generation from a Whisper export: a WAV in, transcript tokens and text out, ONNX Runtime only.

The loop: the WAV read and turned into log-mel features by the shared front end (studio.edge.preprocess_audio,
the one feature extractor the studio has), the encoder graph once (hidden states and every layer's cross K/V),
then the decoder graph from the init tokens (decoder_start + forced ids, one prefill on a zero-length self
past) and one step per new token, the self cache growing and the cross K/V fed unchanged. HF generate()'s
Whisper logits processors are mirrored: ``suppress_tokens`` at every step, ``begin_suppress_tokens`` at the
first new token. Greedy or the text path's SamplingOptions. No torch unless ``hf_parity`` asks for HF.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import InputError
from studio.generate.runtime import GenerationOutput, session_options, token_loop
from studio.generate.sampling import Sampler, SamplingOptions
from studio.generate.speech_config import SpeechGenerationConfig, read_speech_record


class SpeechRuntime:
    """The two ORT sessions of a speech export and the loop that drives them (batch 1)."""

    def __init__(self, folder: Path, gen: SpeechGenerationConfig, threads: int | None = 1) -> None:
        from studio.core.runner import ort_session

        self.gen = gen
        opts = session_options(threads)
        self.encoder = ort_session(folder / gen.encoder_file, opts, error=None)
        self.decoder = ort_session(folder / gen.decoder_file, opts, error=None)
        names = gen.names
        self.cross_out, self.cross_in = names["cross_present"], names["cross_past"]
        self.self_past, self.present = names["self_past"], names["present"]
        self.suppress = np.asarray(sorted(set(gen.suppress_tokens)), dtype=np.int64)
        self.begin_suppress = np.asarray(sorted(set(gen.begin_suppress_tokens)), dtype=np.int64)

    def encode(self, features: np.ndarray) -> dict[str, np.ndarray]:
        """``[1, mels, frames]`` features -> the decoder's cross K/V feeds (computed once per clip)."""
        got = self.encoder.run(self.cross_out, {"input_features": features.astype(np.float32, copy=False)})
        return dict(zip(self.cross_in, got, strict=True))

    def process(self, logits: np.ndarray, step: int) -> np.ndarray:
        """HF Whisper's processors: SuppressTokens at every step, SuppressTokensAtBegin at the first new one."""
        if not self.suppress.size and not (step == 0 and self.begin_suppress.size):
            return logits
        x = np.array(logits, dtype=np.float32, copy=True)
        if self.suppress.size:
            x[self.suppress] = -np.inf
        if step == 0 and self.begin_suppress.size:
            x[self.begin_suppress] = -np.inf
        return x

    def generate(self, features: np.ndarray, max_new_tokens: int, sampling: SamplingOptions | None = None,
                 stop_ids: set[int] | None = None, on_token: Callable[[int], None] | None = None,
                 record_logits: bool = False, should_stop: Callable[[], bool] | None = None) -> GenerationOutput:
        """Encoder once, then the decode loop until a stop id, ``max_new_tokens`` or the decoder's context
        (max_target_positions: init tokens + new tokens, HF generate()'s own limit) ends it. ``should_stop`` (the
        serving agent's cancel hook) is asked after each token: True ends it "cancelled"."""
        sampler = Sampler(sampling or SamplingOptions())
        stops = set(self.gen.eos_token_ids if stop_ids is None else stop_ids)
        heads, hd = self.gen.heads, self.gen.head_dim
        t0 = time.perf_counter()
        cross = self.encode(features)
        cache = [np.zeros((1, heads, 0, hd), np.float32) for _ in self.self_past]
        outputs = ["logits", *self.present]

        def step(new: list[int], past: int) -> np.ndarray:
            nonlocal cache
            n = len(new)
            feeds: dict[str, np.ndarray] = {"input_ids": np.asarray([new], dtype=np.int64),
                                            "attention_mask": np.ones((1, past + n), dtype=np.int64),
                                            "position_ids": np.arange(past, past + n, dtype=np.int64)[None]}
            feeds.update(zip(self.self_past, cache, strict=True))
            feeds.update(cross)
            got = self.decoder.run(outputs, feeds)
            cache = got[1:]
            return got[0][0, -1]

        tokens, reason, ttft, recorded = token_loop(step, list(self.gen.init_token_ids), sampler, stops,
                                                    max_new_tokens, self.gen.max_context, t0, on_token,
                                                    should_stop, record_logits, process=self.process)
        return GenerationOutput(tokens, reason, len(self.gen.init_token_ids), ttft, time.perf_counter() - t0,
                                recorded)


# ------------------------------------------------------------------------------------------------- audio in
def audio_front_end(folder: Path) -> Any:
    """The shared AudioPreprocessor (studio.edge) on the export's processor file (WAV decode, resampling, Whisper
    log-mel), the one the agent and Triton test inference use."""
    from studio.core.processor_files import PROCESSOR_FILES
    from studio.edge.preprocess import AudioPreprocessor

    files = {name: folder / name for name in PROCESSOR_FILES if (folder / name).is_file()}
    if not files:
        raise InputError(f"{folder} has no processor file ({', '.join(PROCESSOR_FILES)}): the audio cannot be "
                         "turned into features", offending=str(folder),
                         hint="re-export: `studio export` copies the feature extractor's settings beside the model")
    pre = AudioPreprocessor(files, ["input_features"])
    if pre.log_mel is None:
        raise InputError("the export's feature extractor is not Whisper's log-mel front end", offending=str(folder),
                         hint="re-export a Whisper model folder with its processor_config.json")
    return pre


def read_wave(pre: Any, gen: SpeechGenerationConfig, audio: Path | str | bytes | np.ndarray) -> np.ndarray:
    """A mono float waveform at the model's rate from a WAV path, WAV bytes or samples; InputError naming
    --audio for a missing file, a file that is not PCM WAV, or a clip longer than the model's window."""
    from studio.edge.preprocess import RawInputError

    if audio is None:
        raise InputError("no --audio given: this export transcribes speech", offending="--audio",
                         hint="pass --audio FILE.wav (PCM WAV, at most the model's window long)")
    if isinstance(audio, np.ndarray):
        wave_ = np.asarray(audio, dtype=np.float32).reshape(-1)
    else:
        if isinstance(audio, (str, Path)):
            path = Path(audio)
            if not path.is_file():
                raise InputError(f"--audio {path} does not exist", offending="--audio",
                                 hint="give the path of a PCM WAV file")
            raw = path.read_bytes()
        else:
            raw = bytes(audio)
        try:
            wave_ = pre.one(raw)
        except RawInputError as exc:
            raise InputError(f"--audio could not be read: {exc}", offending="--audio",
                             hint="give a PCM WAV file (8/16/32-bit, any rate, mono or stereo), e.g. "
                                  "`ffmpeg -i clip.mp3 -ar 16000 -ac 1 clip.wav`") from None
    if wave_.size == 0:
        raise InputError("--audio holds no samples", offending="--audio", hint="give a non-empty WAV clip")
    if wave_.size > gen.window_samples:
        seconds = wave_.size / gen.sampling_rate
        raise InputError(f"--audio is {seconds:.2f} s long, but the model's window is {gen.window_s:g} s "
                         f"({gen.window_samples} samples at {gen.sampling_rate} Hz)", offending="--audio",
                         hint=f"trim or split the clip into pieces of at most {gen.window_s:g} s")
    return wave_


class SpeechGenerator:
    """A speech export loaded once (sessions, front end, tokenizer) for many clips."""

    def __init__(self, export_dir: Path | str, threads: int | None = 1) -> None:
        self.gen = read_speech_record(export_dir)
        path = Path(export_dir)
        self.folder = path.parent if path.suffix == ".onnx" else path
        self.front = audio_front_end(self.folder)
        self.runtime = SpeechRuntime(self.folder, self.gen, threads=threads)
        self._tokenizer: Any = None

    def features(self, audio: Path | str | bytes | np.ndarray) -> np.ndarray:
        return self.front.log_mel.one(read_wave(self.front, self.gen, audio))[None]

    def decode(self, ids: list[int]) -> str:
        if self._tokenizer is None:
            from studio.generate.tokenizer import TextTokenizer

            try:
                self._tokenizer = TextTokenizer(self.folder)
            except InputError:
                self._tokenizer = False
        if not self._tokenizer:
            return ""
        return str(self._tokenizer.decode([i for i in ids if i not in self.gen.eos_token_ids]))

    def generate(self, audio: Path | str | bytes | np.ndarray, *, max_new_tokens: int = 16,
                 sampling: SamplingOptions | None = None, stop_token_ids: list[int] | None = None,
                 hf_parity: bool = False, on_text: Callable[[str], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> Any:
        """``should_stop``: asked after each token (the serving agent's cancel hook); True ends it "cancelled"."""
        from studio.generate.result import GenerationResult, text_streamer

        sampling = (sampling or SamplingOptions()).check()
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or not 1 <= max_new_tokens:
            raise InputError(f"--max-new-tokens must be >= 1, got {max_new_tokens}", offending="--max-new-tokens",
                             hint="for example --max-new-tokens 16")
        t0 = time.perf_counter()
        feats = self.features(audio)  # encode_ms: the WAV read and its log-mel features (TTFT starts after)
        encode_ms = (time.perf_counter() - t0) * 1e3
        stops = set(self.gen.eos_token_ids if stop_token_ids is None else stop_token_ids)
        out = self.runtime.generate(feats, max_new_tokens, sampling, stops,
                                    on_token=None if on_text is None else text_streamer(self.decode, on_text),
                                    should_stop=should_stop)
        result = GenerationResult(
            text=self.decode(out.token_ids), token_ids=out.token_ids,
            prompt_token_ids=list(self.gen.init_token_ids), finish_reason=out.finish_reason,
            ttft_ms=round(out.ttft_s * 1e3, 4), tokens_per_s=round(out.tokens_per_s, 2),
            decode_tokens_per_s=None if out.decode_tokens_per_s is None else round(out.decode_tokens_per_s, 2),
            total_ms=round(out.total_s * 1e3, 4), encode_ms=round(encode_ms, 4), sampling=sampling.to_dict(),
            export_dir=str(self.folder), runtime="studio ORT loop (encoder once + decoder with past, session.run)")
        result.hf_parity = self._parity(feats, out.token_ids, max_new_tokens, sampling, hf_parity)
        return result

    def _parity(self, feats: np.ndarray, got: list[int], max_new: int, sampling: SamplingOptions,
                run_hf: bool) -> dict[str, Any]:
        source = self.gen.source_model_dir
        out: dict[str, Any] = {"source_model_dir": source, "export_validation": self.gen.validation or None}
        if not run_hf:
            out["this_clip"] = "not checked (pass --hf-parity to run HF generate() on it)"
        elif not sampling.greedy:
            out["this_clip"] = "not comparable: sampling (HF parity is checked for greedy decoding)"
        elif not source or not (Path(source) / "config.json").is_file():
            out["this_clip"] = f"not checked: the source HF folder {source!r} is not here"
        else:
            from studio.generate.speech_parity import hf_whisper_greedy, load_whisper

            room = self.gen.max_context - len(self.gen.init_token_ids)  # HF refuses more than this
            ref = hf_whisper_greedy(load_whisper(source), feats, min(max_new, room), self.gen)
            out["this_clip"] = {"match": ref.token_ids == got, "hf_token_ids": ref.token_ids,
                                "reference": "transformers WhisperForConditionalGeneration.generate(do_sample=False)"}
        return out


def speech_request(export_dir: Path | str, audio: Any, *, prompt: str | None, prompt_ids: list[int] | None,
                   image: Any, max_new_tokens: int, sampling: SamplingOptions, stop_token_ids: list[int] | None,
                   hf_parity: bool, threads: int | None, on_text: Callable[[str], None] | None) -> Any:
    """studio.generate.api.generate on a speech export: the text and image inputs are an InputError naming them."""
    for flag, value in (("--prompt", prompt), ("--prompt-ids", prompt_ids), ("--image", image)):
        if value is not None:
            raise InputError(f"{flag} given, but this is a speech model: it takes an audio clip", offending=flag,
                             hint="pass --audio FILE.wav")
    return SpeechGenerator(export_dir, threads=threads).generate(
        audio, max_new_tokens=max_new_tokens, sampling=sampling, stop_token_ids=stop_token_ids,
        hf_parity=hf_parity, on_text=on_text)


def generate_speech(export_dir: Path | str, audio: Path | str | bytes | np.ndarray, *, max_new_tokens: int = 16,
                    temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0, seed: int | None = None,
                    stop_token_ids: list[int] | None = None, hf_parity: bool = False,
                    threads: int | None = 1, on_text: Callable[[str], None] | None = None) -> Any:
    """Transcribe one clip with a Whisper export written by ``studio export --with-past``."""
    sampling = SamplingOptions(float(temperature), int(top_k), float(top_p), seed).check()
    return SpeechGenerator(export_dir, threads=threads).generate(
        audio, max_new_tokens=max_new_tokens, sampling=sampling, stop_token_ids=stop_token_ids, hf_parity=hf_parity,
        on_text=on_text)
