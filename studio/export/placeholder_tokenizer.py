"""A stand-in tokenizer for building example inputs when a model folder has none.

Why it exists: a multimodal processor (image tokens expanded into the prompt, audio tokens, boi / eoi markers) needs
a tokenizer, and a folder holding only config.json and weights has none. The graph's inputs are token ids, so the
tokenizer's only job here is to put the ids the model's forward looks for where the processor puts them: every
special token the config names (``image_token_id`` / ``boi_token_index`` / ``audio_token_id`` / ...) becomes a
string ``<image>`` / ``<boi>`` / ``<audio>`` at exactly that id, exposed as the tokenizer attribute processors read
(``tokenizer.image_token``); ordinary words take ids below them. It is never written beside an export: clients
must bring the real tokenizer, and the report says so.
"""

from __future__ import annotations

import re
from typing import Any

WORDS = ("a photo of the cat dog bird on red blue green grass near two small large house car tree what is color "
         "how many people are there yes no one three picture image with describe transcribe this audio clip").split()
_SPECIAL_KEY = re.compile(r"^(\w+?)_token_(id|index)$")
_STANDARD = ("bos", "eos", "pad", "unk", "sep", "cls", "mask")


def config_special_ids(config: dict[str, Any]) -> dict[str, int]:
    """``name_token -> id`` for every ``<name>_token_id`` / ``<name>_token_index`` the config (or a sub-config)
    sets to an int: the ids the model's own code compares input_ids against."""
    found: dict[str, int] = {}

    def walk(d: dict[str, Any], depth: int) -> None:
        for key, value in d.items():
            if isinstance(value, dict) and depth < 3:
                walk(value, depth + 1)
                continue
            m = _SPECIAL_KEY.match(str(key))
            if m and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                found.setdefault(f"{m.group(1)}_token", int(value))

    walk(config, 0)
    return found


def text_vocab_size(config: dict[str, Any]) -> int:
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    decoder = config.get("decoder") if isinstance(config.get("decoder"), dict) else {}
    for d in (text, config, decoder):
        if isinstance(d.get("vocab_size"), int) and d["vocab_size"] > 0:
            return int(d["vocab_size"])
    return max([*config_special_ids(config).values(), 1000]) + 1


def build_placeholder_tokenizer(config: dict[str, Any], extra_tokens: dict[str, str] | None = None,
                                tokenizer_class: Any = None) -> Any:
    """A PreTrainedTokenizerFast whose special tokens sit at the config's ids (see the module docstring).

    ``extra_tokens``: attribute name -> string of tokens a processor hard-codes (``<fake_token_around_image>``);
    each gets the config id of the same name when there is one, else a free id. ``tokenizer_class``: the model
    type's own tokenizer class, built on the same vocabulary, where the processor calls it with arguments of its
    own (LayoutLMv3's word boxes); the generic one when that class cannot be built so."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab_size = text_vocab_size(config)
    specials = config_special_ids(config)
    taken = set(specials.values())
    free = (i for i in range(vocab_size) if i not in taken)
    strings: dict[str, str] = {}  # attribute -> string
    vocab: dict[str, int] = {}
    for name, idx in sorted(specials.items(), key=lambda kv: kv[1]):
        if idx >= vocab_size:
            continue  # an id past the embedding table: the model cannot take it either
        text = f"<{name.removesuffix('_token')}>"
        if text in vocab:
            continue
        vocab[text] = idx
        strings[name] = text
    for name, text in (extra_tokens or {}).items():
        if text in vocab:
            strings.setdefault(name, text)
            continue
        idx = specials.get(name)
        if idx is not None and idx < vocab_size:
            # the processor hard-codes its own string for a token the config names: that string takes the
            # config's id in place of the default "<name>" (two strings on one id made the tokenizer give the
            # hard-coded one a new id: GLM-ASR's "<|pad|>" counted 0 audio tokens), and the attribute follows
            default = strings.get(name)
            if default is not None and vocab.get(default) == idx:
                del vocab[default]
            vocab[text] = idx
            strings[name] = text
            continue
        idx = next(free, None)
        if idx is None:
            continue
        taken.add(idx)
        vocab[text] = idx
        strings[name] = text
    unk = next(free)
    vocab["[UNK]"] = unk
    for w in WORDS:
        nxt = next(free, None)
        if nxt is None:
            break
        vocab[w] = nxt
    model = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    model.pre_tokenizer = pre_tokenizers.Whitespace()
    standard = {f"{s}_token": strings.pop(f"{s}_token") for s in _STANDARD if f"{s}_token" in strings}
    if "pad_token" not in standard:
        standard["pad_token"] = standard.get("eos_token", "[UNK]")
    tok = _own_class(tokenizer_class, vocab, strings, standard) if tokenizer_class is not None else None
    tok = tok or PreTrainedTokenizerFast(tokenizer_object=model, unk_token="[UNK]", extra_special_tokens=strings,
                                         **standard)
    for name, text in strings.items():  # processors read both tokenizer.image_token and .image_token.content
        tok.__dict__[name] = TokenText(text)
    tok.studio_placeholder = True  # read by the report: the ids are right, the words are not
    return tok


def _own_class(cls: Any, vocab: dict[str, int], strings: dict[str, str], standard: dict[str, str]) -> Any:
    """``cls(vocab=..., merges=[])`` with the placeholder's special tokens (sep / cls / mask from eos / bos / unk
    where it has those roles); a class whose vocabulary is a Unigram model's ``[(piece, score), ...]`` list (UDOP,
    T5-like) gets the same pieces at the same ids, the ids between them filled with unused pieces; None when the
    class is built neither way."""
    import inspect

    params = inspect.signature(cls.__init__).parameters
    kw: dict[str, Any] = {"vocab": dict(vocab), "unk_token": "[UNK]", **standard}
    for role, like in (("sep_token", "eos_token"), ("cls_token", "bos_token"), ("mask_token", "unk_token")):
        if role in params:
            kw.setdefault(role, kw.get(like, "[UNK]"))
    if "merges" in params:
        kw["merges"] = []
    try:
        return cls(**kw, extra_special_tokens=strings)
    except Exception:  # noqa: BLE001 - a Unigram vocabulary, or a class built from files only
        pass
    by_id = {i: t for t, i in vocab.items()}
    kw["vocab"] = [(by_id.get(i, f"<unused_{i}>"), 0.0 if i in by_id else -100.0) for i in range(max(by_id) + 1)]
    try:
        return cls(**kw, extra_special_tokens=strings)
    except Exception:  # noqa: BLE001 - a class built from files only: the generic placeholder serves
        return None


_LITERAL = re.compile(r"<\|?[A-Za-z][\w:]{1,40}\|?>|\[[A-Z][A-Z_]{1,40}\]")


def literal_tokens(cls: Any) -> dict[str, str]:
    """Bracketed token strings a processor class writes as literals in its own methods (Ovis2 expands an image into
    ``<IMG_START><IMG_ATOM>...<IMG_END>`` in ``replace_image_token``): ``name_token -> string``, so the placeholder
    gives each an id of its own (unknown, every one was the unknown token, which is also the padding one, and the
    model counted 0 image tokens). Read with ``ast`` from the class's source (f-string parts included)."""
    import ast
    import inspect
    import textwrap

    trees = []
    for klass in cls.__mro__:  # the studio's tolerant subclass has no source: the model's own class has
        if not klass.__module__.startswith("transformers.models."):
            continue
        try:
            trees.append(ast.parse(textwrap.dedent(inspect.getsource(klass))))
        except (OSError, TypeError, SyntaxError):
            continue
    out: dict[str, str] = {}
    for node in (n for tree in trees for n in ast.walk(tree)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for text in _LITERAL.findall(node.value):
                name = re.sub(r"\W+", "_", text).strip("_").lower()
                out.setdefault(f"{name}_literal_token", text)
    return out


class TokenText(str):
    """A special token's text that also answers ``.content`` (what an AddedToken has): some processors read one,
    some the other."""

    @property
    def content(self) -> str:
        return str(self)
