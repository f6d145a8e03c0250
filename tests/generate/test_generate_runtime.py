"""The studio runtime on the exported tiny Qwen2: greedy ids equal HF generate() for several prompts and lengths,
per-step logits agree, IO binding and the plain loop agree, seeded sampling repeats, stop tokens and the context
limit end a generation, and the Python API's checks name the bad flag."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from studio.core.errors import InputError
from studio.export.api import ExportReport
from studio.generate.api import GenerationResult, TextGenerator, generate
from studio.generate.parity import hf_greedy
from studio.generate.sampling import Sampler, SamplingOptions

pytestmark = pytest.mark.export

PROMPTS = [("two", 5), ("a photo of a cat", 20), ("what is the color of the car near the house?", 33),
           ("how many people are there in the picture of the red house with a green tree and a blue car", 48)]


@pytest.fixture(scope="module")
def gen(exported: tuple[Path, ExportReport]) -> TextGenerator:
    return TextGenerator(exported[0])


@pytest.mark.parametrize(("prompt", "new"), PROMPTS)
def test_greedy_ids_equal_hf_generate(gen: TextGenerator, hf_model, prompt: str, new: int) -> None:  # type: ignore[no-untyped-def]
    ids = gen.tokenizer.encode(prompt)
    out = gen.runtime.generate(ids, new, stop_ids=set(gen.gen.eos_token_ids), record_logits=True)
    ref = hf_greedy(hf_model, ids, new, gen.gen.eos_token_ids, gen.gen.pad_token_id)
    assert out.token_ids == ref.token_ids
    assert len(out.step_logits) == len(ref.step_logits) == len(out.token_ids)
    worst = max(float(np.abs(a - b).max()) for a, b in zip(out.step_logits, ref.step_logits, strict=True))
    assert worst < 1e-4


def test_tokenizer_matches_hf(gen: TextGenerator, qwen2_dir: Path) -> None:
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(str(qwen2_dir))
    for text, _ in PROMPTS:
        ids = gen.tokenizer.encode(text)
        assert ids == hf(text)["input_ids"]
        assert gen.tokenizer.decode(ids) == hf.decode(ids, skip_special_tokens=True)


def test_io_binding_and_plain_loop_agree(exported: tuple[Path, ExportReport], gen: TextGenerator) -> None:
    bound = TextGenerator(exported[0], io_binding=True)
    ids = gen.tokenizer.encode("a photo of a cat")
    a = bound.runtime.generate(ids, 30, record_logits=True)
    b = gen.runtime.generate(ids, 30, record_logits=True)
    assert a.token_ids == b.token_ids
    assert max(float(np.abs(x - y).max()) for x, y in zip(a.step_logits, b.step_logits, strict=True)) < 1e-5
    # buffers sized for a longer generation serve a shorter one, and the reverse grows them
    assert bound.runtime.generate(ids, 3).token_ids == a.token_ids[:3]
    assert bound.runtime.generate(ids, 60).token_ids[:30] == a.token_ids
    assert bound.generate(prompt_ids=ids, max_new_tokens=4).runtime.endswith("(IO binding, preallocated cache)")


def test_api_result_fields(exported: tuple[Path, ExportReport]) -> None:
    r = generate(exported[0], "a photo of a cat", max_new_tokens=12)
    assert isinstance(r, GenerationResult)
    assert len(r.token_ids) == 12 and r.finish_reason == "length" and r.prompt_token_ids
    assert r.ttft_ms > 0 and r.tokens_per_s > 0 and r.total_ms >= r.ttft_ms
    assert r.sampling["mode"] == "greedy" and isinstance(r.text, str)
    assert r.hf_parity["export_validation"]["status"] == "passed"
    assert "not checked" in r.hf_parity["this_prompt"]


def test_api_hf_parity_on_this_prompt(exported: tuple[Path, ExportReport]) -> None:
    r = generate(exported[0], "what is the color of the car near the house?", max_new_tokens=10, hf_parity=True)
    assert r.hf_parity["this_prompt"]["match"] is True
    assert r.hf_parity["this_prompt"]["hf_token_ids"] == r.token_ids
    s = generate(exported[0], "two", max_new_tokens=4, temperature=0.8, seed=1, hf_parity=True)
    assert "not comparable" in s.hf_parity["this_prompt"]


def test_sampling_is_reproducible_with_a_seed(gen: TextGenerator) -> None:
    opts = SamplingOptions(temperature=1.5, top_k=50, top_p=0.95, seed=7)
    runs = [gen.generate("a photo of a cat", max_new_tokens=24, sampling=opts).token_ids for _ in range(2)]
    assert runs[0] == runs[1]
    other = gen.generate("a photo of a cat", max_new_tokens=24,
                         sampling=SamplingOptions(temperature=1.5, top_k=50, top_p=0.95, seed=8)).token_ids
    greedy = gen.generate("a photo of a cat", max_new_tokens=24).token_ids
    assert other != runs[0] and greedy != runs[0]
    # top-k 1 is greedy whatever the temperature and seed
    top1 = gen.generate("a photo of a cat", max_new_tokens=24,
                        sampling=SamplingOptions(temperature=2.0, top_k=1, seed=3)).token_ids
    assert top1 == greedy


def test_sampler_semantics() -> None:
    logits = np.array([0.0, 3.0, 2.9, -5.0, 1.0])
    assert Sampler(SamplingOptions())(logits) == 1
    picks = {Sampler(SamplingOptions(temperature=1.0, top_k=2, seed=s))(logits) for s in range(40)}
    assert picks == {1, 2}
    nucleus = {Sampler(SamplingOptions(temperature=1.0, top_p=0.4, seed=s))(logits) for s in range(40)}
    assert nucleus == {1}  # the most likely token alone (p = 0.48) covers 40% of the probability
    nucleus = {Sampler(SamplingOptions(temperature=1.0, top_p=0.5, seed=s))(logits) for s in range(40)}
    assert nucleus == {1, 2}
    a = Sampler(SamplingOptions(temperature=1.0, seed=11))
    b = Sampler(SamplingOptions(temperature=1.0, seed=11))
    assert [a(logits) for _ in range(20)] == [b(logits) for _ in range(20)]


def test_stop_tokens_end_the_generation(gen: TextGenerator, hf_model) -> None:  # type: ignore[no-untyped-def]
    ids = gen.tokenizer.encode("a photo of a cat")
    full = gen.generate(prompt_ids=ids, max_new_tokens=20).token_ids
    stop = full[4]
    cut = full.index(stop)  # the first time it appears
    r = gen.generate(prompt_ids=ids, max_new_tokens=20, stop_token_ids=[stop])
    assert r.token_ids == full[:cut + 1] and r.finish_reason == "stop"
    ref = hf_greedy(hf_model, ids, 20, [stop], gen.gen.pad_token_id)
    assert ref.token_ids == r.token_ids  # HF stops at the same id and keeps it too
    r2 = gen.generate(prompt_ids=ids, max_new_tokens=20, stop_token_ids=[])
    assert r2.token_ids == full and r2.finish_reason == "length"


def test_context_limit_ends_the_generation(gen: TextGenerator) -> None:
    ids = [int(i) for i in np.random.default_rng(0).integers(0, 300, size=120)]
    r = gen.generate(prompt_ids=ids, max_new_tokens=50, stop_token_ids=[])
    assert r.finish_reason == "max_context" and len(ids) + len(r.token_ids) == 128
    with pytest.raises(InputError, match="maximum context is 128") as e:
        gen.generate(prompt_ids=[5] * 128, max_new_tokens=1)
    assert e.value.offending == "--prompt-ids"


@pytest.mark.parametrize(("kw", "flag"), [
    ({"max_new_tokens": 0}, "--max-new-tokens"), ({"max_new_tokens": -3}, "--max-new-tokens"),
    ({"temperature": -0.1}, "--temperature"), ({"top_p": 0.0}, "--top-p"), ({"top_p": 1.5}, "--top-p"),
    ({"top_k": -1}, "--top-k"), ({"prompt": ""}, "--prompt"), ({"prompt": "cat " * 70}, "--prompt"),
])
def test_api_bad_input_names_the_flag(exported: tuple[Path, ExportReport], kw: dict, flag: str) -> None:
    args = {"prompt": "a cat", **kw}
    with pytest.raises(InputError) as e:
        generate(exported[0], **args)
    assert e.value.offending == flag


def test_api_refuses_a_folder_without_generation_json(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="generation.json"):
        generate(tmp_path, "a cat")


def test_genai_runtime_matches_the_studio_loop(exported: tuple[Path, ExportReport], gen: TextGenerator) -> None:
    pytest.importorskip("onnxruntime_genai")
    genai = TextGenerator(exported[0], runtime="genai")
    for text, new in PROMPTS[:3]:
        a = genai.generate(text, max_new_tokens=new)
        b = gen.generate(text, max_new_tokens=new)
        assert a.token_ids == b.token_ids and a.finish_reason == b.finish_reason and a.runtime == "onnxruntime-genai"
    opts = SamplingOptions(temperature=1.2, top_k=40, seed=3)
    assert genai.generate("two", max_new_tokens=12, sampling=opts).token_ids == \
        genai.generate("two", max_new_tokens=12, sampling=opts).token_ids
    stop = b.token_ids[2]
    cut = genai.generate(PROMPTS[2][0], max_new_tokens=PROMPTS[2][1], stop_token_ids=[stop])
    assert cut.token_ids == b.token_ids[: b.token_ids.index(stop) + 1] and cut.finish_reason == "stop"
    with pytest.raises(InputError, match="unknown runtime"):
        TextGenerator(exported[0], runtime="tensorrt")
