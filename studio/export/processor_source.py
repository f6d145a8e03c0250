"""The processor that makes a model's example inputs: the folder's own, or the one transformers maps to its type.

Why: every tensor a client sends comes out of the model's processor (pixel_values and the grid / sizes / masks that
go with them, input_features, the prompt with its image tokens expanded), so the export's example inputs are made
by running that processor on a synthetic image / clip / prompt, never written down per family.

Order: ``AutoProcessor`` on the folder when it holds processor files; else the processor class transformers' auto
mappings give for ``model_type`` (``PROCESSOR_MAPPING_NAMES``), assembled from the folder's sub-processors where it
has them and otherwise from the image processor / feature extractor classes the same mappings name, built offline
with their defaults and the config's own values for the keys they share (patch size, merge size, image size, mel
bins, sampling rate). A folder without a tokenizer gets a placeholder one whose special tokens sit at the config's
ids (studio.export.placeholder_tokenizer). What was derived is listed (``derived``) and the derived sub-processor
files are written beside the export (``files``).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import InputError

PROCESSOR_FILES = ("processor_config.json", "preprocessor_config.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "tokenizer.model", "spiece.model",
                   "sentencepiece.bpe.model", "vocab.txt")
# a processor parameter -> config keys that hold the same value under another name (checked in order)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "merge_size": ("spatial_merge_size", "merge_size"),
    "feature_size": ("num_mel_bins", "input_feat_per_channel", "feature_size", "n_mels"),
    "num_mel_bins": ("num_mel_bins", "n_mels"),
    "image_seq_length": ("image_seq_length", "mm_tokens_per_image", "num_image_tokens"),
    "img_size": ("image_size",),
}


@dataclass
class ProcessorSource:
    """A callable processor plus where it came from."""

    processor: Any
    origin: str  # "folder" | "derived" | "folder+derived"
    classes: dict[str, str] = field(default_factory=dict)  # role -> class name
    derived: list[str] = field(default_factory=list)  # what was built from the config, for the report
    placeholder_tokenizer: bool = False
    sub: dict[str, Any] = field(default_factory=dict)  # role -> sub-processor object (image_processor, ...)
    folder_roles: set[str] = field(default_factory=set)  # the roles loaded from the model folder

    @property
    def name(self) -> str:
        return self.classes.get("processor") or next(iter(self.classes.values()), "no processor")

    def serves(self) -> set[str]:
        """The modalities this processor makes tensors for."""
        out = {"text"} if any("tokenizer" in r for r in self.sub) else set()
        if "image_processor" in self.sub:
            out.add("vision")
        if any(r in self.sub for r in ("feature_extractor", "audio_processor")):
            out.add("audio")
        return out

    def write_derived(self, folder: Path) -> list[Path]:
        """The derived sub-processors' config files (never the placeholder tokenizer) into ``folder``."""
        if self.origin == "folder":
            return []
        written: list[Path] = []
        for role, obj in self.sub.items():
            if "tokenizer" in role or obj is None or role in self.folder_roles:
                continue
            if hasattr(obj, "to_json_file"):
                folder.mkdir(parents=True, exist_ok=True)
                name = "preprocessor_config.json" if role in ("image_processor", "feature_extractor",
                                                              "audio_processor") else f"{role}_config.json"
                if (folder / name).exists():  # both an image processor and a feature extractor: keep apart
                    name = f"{role}_config.json"
                obj.to_json_file(str(folder / name))
                written.append(folder / name)
        return written


def _mapped(table: dict[str, Any], model_type: str) -> str | None:
    value = table.get(model_type)
    if isinstance(value, dict):  # image processors: {"torchvision": ..., "pil": ...}
        backend = "torchvision" if importlib.util.find_spec("torchvision") else "pil"
        return value.get(backend) or value.get("pil") or next((v for v in value.values() if v), None)
    if isinstance(value, (list, tuple)):
        return next((v for v in value if v), None)
    return value


def mapped_classes(model_type: str) -> dict[str, str]:
    """role -> class name transformers' auto mappings give for a model type (processor, image processor,
    feature extractor)."""
    from transformers.models.auto.configuration_auto import model_type_to_module_name
    from transformers.models.auto.feature_extraction_auto import FEATURE_EXTRACTOR_MAPPING_NAMES
    from transformers.models.auto.image_processing_auto import IMAGE_PROCESSOR_MAPPING_NAMES
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

    # a sub-model type (qwen2_5_omni_thinker) is mapped under its module's type; a processor's sub-processor not
    # mapped under the type (glm4v_moe's image processor) under the type of the processor class's own module
    keys = list(dict.fromkeys([model_type, model_type_to_module_name(model_type)]))
    out: dict[str, str] = {}
    for role, table in (("processor", PROCESSOR_MAPPING_NAMES), ("image_processor", IMAGE_PROCESSOR_MAPPING_NAMES),
                        ("feature_extractor", FEATURE_EXTRACTOR_MAPPING_NAMES)):
        if role == "image_processor" and "processor" in out:
            keys = list(dict.fromkeys([*keys, _class(out["processor"]).__module__.split(".")[-2]]))
        name = next((n for k in keys if (n := _mapped(dict(table), k))), None) or \
            (_module_processor(keys[-1]) if role == "processor" else None)
        if name:
            out[role] = name
    return out


def _module_processor(module: str) -> str | None:
    """The processor class a model's own module defines (``processing_<module>.py``) when the auto mappings list
    none for its type (Kosmos-2's ``Kosmos2Processor`` under the type ``kosmos-2``)."""
    import importlib

    from transformers import ProcessorMixin

    try:
        mod = importlib.import_module(f"transformers.models.{module}.processing_{module}")
    except Exception:  # noqa: BLE001 - no such file (or it needs a missing package): no processor from here
        return None
    names = [n for n in getattr(mod, "__all__", []) if isinstance(getattr(mod, n, None), type)
             and issubclass(getattr(mod, n), ProcessorMixin)]
    return names[0] if len(names) == 1 else None


def _class(name: str) -> Any:
    import transformers

    cls = getattr(transformers, name, None)
    if cls is None:
        raise ImportError(f"transformers has no class {name}")
    return cls


def _sub_configs(config: dict[str, Any], role: str) -> list[dict[str, Any]]:
    """Where a sub-processor's values live in the config: its modality's sub-config first, then the root."""
    keys = {"image_processor": ("vision_config", "encoder"), "video_processor": ("vision_config",),
            "feature_extractor": ("audio_config", "encoder_config", "encoder"),
            "audio_processor": ("audio_config", "encoder_config", "encoder")}.get(role, ())
    found = [config[k] for k in keys if isinstance(config.get(k), dict)]
    nested = [v for f in found for v in f.values() if isinstance(v, dict)]  # an audio config's ASR encoder
    return [*found, *nested, config]


def config_kwargs(obj_defaults: dict[str, Any], config: dict[str, Any], role: str) -> tuple[dict[str, Any], list[str]]:
    """A sub-processor's settings the config pins: same-named keys of the same type, the SYNONYMS, and the image
    size (``vision_config.image_size``) for processors that resize to a fixed size. Returns kwargs and notes."""
    kwargs: dict[str, Any] = {}
    notes: list[str] = []
    sources = _sub_configs(config, role)
    for key, default in obj_defaults.items():
        unset_synonym = default is None and key in SYNONYMS  # e.g. image_seq_length left None by the default
        if not unset_synonym and (isinstance(default, bool) or not isinstance(default, (int, float))):
            continue
        for cfg_key in SYNONYMS.get(key, (key,)):
            kind = int if default is None else type(default)
            src = next((s for s in sources if isinstance(s.get(cfg_key), kind)
                        and not isinstance(s.get(cfg_key), bool)), None)
            if src is not None:
                if src[cfg_key] != default:
                    kwargs[key] = src[cfg_key]
                    notes.append(f"{key}={src[cfg_key]} from the config's {cfg_key}")
                break
    positions = next((s.get("max_source_positions") for s in sources if isinstance(s.get("max_source_positions"), int)),
                     None)
    hop, rate = obj_defaults.get("hop_length"), obj_defaults.get("sampling_rate")
    if role == "feature_extractor" and positions and isinstance(hop, int) and isinstance(rate, int) \
            and "chunk_length" in obj_defaults:
        # a log-mel window for an encoder of max_source_positions: its stride-2 convolution halves 2x that many
        seconds = 2 * positions * hop / rate
        if seconds == int(seconds) and int(seconds) != obj_defaults.get("chunk_length"):
            kwargs["chunk_length"] = int(seconds)
            notes.append(f"chunk_length={int(seconds)} s ({2 * positions} frames) from the config's "
                         "max_source_positions")
    from studio.export.processor_sizes import config_image_size, size_kwargs

    image_size = config_image_size(sources)
    patch = config_image_size([{"image_size": s.get("patch_size")} for s in sources])
    if role == "image_processor" and "image_seq_length" in obj_defaults and obj_defaults["image_seq_length"] is None \
            and "image_seq_length" not in kwargs and image_size and patch:
        kwargs["image_seq_length"] = (image_size // patch) ** 2  # one token per patch of the vision tower's grid
        notes.append(f"image_seq_length={kwargs['image_seq_length']} from the config's image_size / patch_size")
    if role == "image_processor":
        more, why = size_kwargs(obj_defaults, image_size)
        kwargs.update(more)
        notes += why
    return kwargs, notes


def processor_kwargs(cls: Any, config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The processor class's own settings the config pins (``patch_size``, ``vision_feature_select_strategy``,
    ``image_seq_length``...): each ``__init__`` parameter that is not a sub-processor, looked up by name (and
    SYNONYMS) in the vision / audio / text sub-configs and the root."""
    import inspect

    attrs = set(cls.get_attributes())
    modal = ("vision_config", "audio_config", "text_config")
    sources = [config, *(config[k] for k in modal if isinstance(config.get(k), dict))]
    encoder = config.get("encoder")  # an encoder-decoder's multimodal encoder (T5Gemma2's mm_tokens_per_image)
    if isinstance(encoder, dict):
        sources += [encoder, *(encoder[k] for k in modal if isinstance(encoder.get(k), dict))]
    kwargs: dict[str, Any] = {}
    notes: list[str] = []
    for name, p in inspect.signature(cls.__init__).parameters.items():
        if name in attrs or name in ("self", "chat_template") or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        default = None if p.default is inspect.Parameter.empty else p.default
        for key in SYNONYMS.get(name, (name,)):
            src = next((s for s in sources if s.get(key) is not None and not isinstance(s.get(key), dict)
                        and (default is None or isinstance(s.get(key), type(default)))), None)
            if src is not None:
                if src[key] != default:
                    kwargs[name] = src[key]
                    notes.append(f"{name}={src[key]!r} from the config's {key}")
                break
    return kwargs, notes


def _build_sub(role: str, class_name: str, config: dict[str, Any]) -> tuple[Any, list[str]]:
    cls = _class(class_name)
    base = cls()
    defaults = base.to_dict() if hasattr(base, "to_dict") else {}
    kwargs, notes = config_kwargs(defaults, config, role)
    obj = cls(**kwargs) if kwargs else base
    what = f"{role.replace('_', ' ')} {class_name} (transformers' default for this model type"
    return obj, [what + (": " + ", ".join(notes) if notes else "") + ")"]


def _has_files(model_dir: Path, names: tuple[str, ...]) -> bool:
    return any((model_dir / n).is_file() for n in names)


def _folder_sub(role: str, model_dir: Path) -> Any:
    from transformers import AutoFeatureExtractor, AutoImageProcessor, AutoTokenizer

    loader = {"image_processor": AutoImageProcessor, "feature_extractor": AutoFeatureExtractor,
              "audio_processor": AutoFeatureExtractor}.get(role)
    if "tokenizer" in role:
        return AutoTokenizer.from_pretrained(str(model_dir)) if _has_files(model_dir, TOKENIZER_FILES) else None
    if loader is None or not _has_files(model_dir, PROCESSOR_FILES):
        return None
    return loader.from_pretrained(str(model_dir))


def _tolerant(cls: Any) -> Any:
    """The processor class accepting None for a sub-processor it cannot have here (a video processor needs
    torchvision); calls never pass that modality, so nothing reads it."""
    def check(self: Any, name: str, argument: Any) -> Any:
        return None if argument is None else cls.check_argument_for_proper_class(self, name, argument)

    return type(cls.__name__, (cls,), {"check_argument_for_proper_class": check})


def _processor_tokens(proc: Any) -> dict[str, str]:
    """Strings a processor hard-codes for its special tokens (``fake_image_token``, ``global_image_tag``...)."""
    out: dict[str, str] = {}
    for attr in dir(proc):
        if attr.startswith("_") or not ("token" in attr or "tag" in attr):
            continue
        try:
            value = getattr(proc, attr)
        except Exception:  # noqa: BLE001 - a property that needs state the stand-in lacks
            continue
        text = str(getattr(value, "content", value)) if value is not None else ""
        if isinstance(value, (str,)) or type(value).__name__ == "AddedToken":
            if text.startswith("<") and text.endswith(">") and len(text) < 64:
                out[attr if attr.endswith("_token") else f"{attr}_token"] = text
    return out


def load_processor(model_dir: Path, config: dict[str, Any]) -> ProcessorSource | None:
    """The processor for a model folder (see the module docstring); None when neither the folder nor the
    mappings give one. A folder processor that fails to load falls back to the derived one, noted."""
    model_dir = Path(model_dir)
    model_type = str(config.get("model_type"))
    notes: list[str] = []
    if _has_files(model_dir, PROCESSOR_FILES):
        try:
            from transformers import AutoProcessor

            proc = AutoProcessor.from_pretrained(str(model_dir))
            if not callable(proc):
                raise TypeError(f"{type(proc).__name__} is not callable")
            return _from_folder(proc)
        except Exception as exc:  # noqa: BLE001 - e.g. a video processor that needs torchvision: assemble
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            notes.append(f"AutoProcessor on the folder failed ({first}): assembled from its parts")
    mapped = mapped_classes(model_type)
    encoder = config.get("encoder") if isinstance(config.get("encoder"), dict) else {}
    if not mapped and encoder.get("model_type"):  # a speech / vision encoder-decoder: its encoder's sub-processors
        mapped = {r: c for r, c in mapped_classes(str(encoder["model_type"])).items() if r != "processor"}
    source = _assemble(model_dir, config, mapped)
    if source is not None:
        source.derived[:0] = notes
    return source


def _from_folder(proc: Any) -> ProcessorSource:
    sub: dict[str, Any] = {}
    from transformers import ProcessorMixin

    if isinstance(proc, ProcessorMixin):
        for role in type(proc).get_attributes():
            if getattr(proc, role, None) is not None:
                sub[role] = getattr(proc, role)
    else:
        role = "image_processor" if "Image" in type(proc).__name__ else \
            "tokenizer" if "Tokenizer" in type(proc).__name__ else "feature_extractor"
        sub[role] = proc
    classes = {"processor": type(proc).__name__, **{r: type(o).__name__ for r, o in sub.items()}}
    return ProcessorSource(proc, "folder", classes, [], False, sub, set(sub))


def _assemble(model_dir: Path, config: dict[str, Any], mapped: dict[str, str]) -> ProcessorSource | None:
    """The mapped processor class built from the folder's sub-processors and derived ones."""
    roles: list[str]
    proc_cls = _class(mapped["processor"]) if "processor" in mapped else None
    if proc_cls is not None:
        roles = list(proc_cls.get_attributes())
    else:
        roles = [r for r in ("image_processor", "feature_extractor") if r in mapped] + ["tokenizer"]
    mapped_role = {"audio_processor": "feature_extractor"}  # an audio role is mapped as a feature extractor
    if not any(mapped_role.get(r, r) in mapped or _folder_sub(r, model_dir) is not None for r in roles if "tok" not in r):
        return None
    sub: dict[str, Any] = {}
    derived: list[str] = []
    folder_roles: set[str] = set()
    placeholder = False
    for role in roles:
        obj = _folder_sub(role, model_dir)
        if obj is not None:
            sub[role] = obj
            folder_roles.add(role)
            continue
        if "tokenizer" in role:
            continue  # after the others: the placeholder needs the processor's token strings
        key = "feature_extractor" if role == "audio_processor" else role
        if key in mapped:
            sub[role], notes = _build_sub(role, mapped[key], config)
            derived += notes
        else:
            sub[role] = None
    missing_tok = [r for r in roles if "tokenizer" in r and r not in sub]
    extra: dict[str, str] = {}
    if missing_tok:
        from studio.export.placeholder_tokenizer import build_placeholder_tokenizer

        placeholder = True
        tok = build_placeholder_tokenizer(config)
        for r in missing_tok:
            sub[r] = tok
    proc: Any
    if proc_cls is not None:
        own, notes = processor_kwargs(proc_cls, config)
        if notes:
            derived.append(f"processor {proc_cls.__name__}: " + ", ".join(notes))
        proc = _construct(proc_cls, sub, own, config, missing_tok, extra)
        if placeholder:  # a second pass: the processor's own hard-coded token strings join the vocabulary
            extra.update(_processor_tokens(proc))
            proc = _construct(proc_cls, sub, own, config, missing_tok, extra)
        from studio.export.processor_sizes import fill_unset_counts

        derived += fill_unset_counts(proc, _sub_configs(config, "image_processor"))
    else:
        proc = ComposedProcessor(sub)
    if placeholder:
        derived.append("tokenizer: none in the folder; a placeholder puts the config's special token ids where the "
                       "processor puts them (example inputs only, not written; clients bring the real tokenizer)")
    classes = {"processor": type(proc).__name__ if proc_cls is not None else "",
               **{r: type(o).__name__ for r, o in sub.items() if o is not None}}
    classes = {k: v for k, v in classes.items() if v}
    origin = "folder+derived" if folder_roles and derived else ("folder" if folder_roles and not derived else
                                                                 "derived")
    return ProcessorSource(proc, origin, classes, derived, placeholder, {k: v for k, v in sub.items() if v is not None},
                           folder_roles)


def _construct(proc_cls: Any, sub: dict[str, Any], own: dict[str, Any], config: dict[str, Any],
               missing_tok: list[str], extra: dict[str, str]) -> Any:
    """The processor; with a placeholder tokenizer, each special-token attribute the processor reads from it
    (``tokenizer.image_boundary_token``...) is added as ``<name>`` and construction tried again."""
    import re

    from studio.export.placeholder_tokenizer import build_placeholder_tokenizer

    for _ in range(12):
        if missing_tok:
            tok = build_placeholder_tokenizer(config, extra)
            for r in missing_tok:
                sub[r] = tok
        try:
            return _tolerant(proc_cls)(**sub, **own)
        except (AttributeError, ValueError) as exc:  # "has no attribute" / "is missing required attribute"
            m = re.search(r"(?:has no|missing required) attribute '?(\w+_token)'?", str(exc))
            if not missing_tok or not m or m.group(1) in extra:
                raise
            extra[m.group(1)] = f"<{m.group(1).removesuffix('_token')}>"
    return _tolerant(proc_cls)(**sub, **own)


class ComposedProcessor:
    """Image processor / feature extractor + tokenizer where transformers maps no processor class: each gets its
    own modality's argument, the outputs are merged.

    A processor class would expand each image's placeholder token into the count the model's tower returns; here
    the count comes from the image processor's own outputs where they say it (``image_grid_thw`` with the
    processor's ``merge_size``: patches / merge^2, the grid processors' rule), else from ``image_seq_length``,
    which the example-input search calibrates from the model's "tokens: X, features: Y" check. With text and
    images it also returns ``mm_token_type_ids`` (1 on image tokens), dropped when the forward does not take it."""

    def __init__(self, sub: dict[str, Any]) -> None:
        self.sub = {k: v for k, v in sub.items() if v is not None}
        tok = next((o for r, o in self.sub.items() if "tokenizer" in r), None)
        token = getattr(tok, "image_token", None)
        self.image_token = str(getattr(token, "content", token)) if token else None
        self.image_seq_length = 1

    def image_counts(self, image_out: dict[str, Any], images: int) -> list[int]:
        """Placeholder tokens per image, in the order the images were given."""
        grid = image_out.get("image_grid_thw")
        merge = getattr(self.sub.get("image_processor"), "merge_size", None)
        if grid is not None and isinstance(merge, int) and merge > 0:
            return [int(t) * int(h) * int(w) // (merge * merge) for t, h, w in np.asarray(grid).tolist()]
        return [self.image_seq_length] * images

    def _expand(self, text: list[str], counts: list[int]) -> list[str]:
        it = iter(counts)
        out = []
        for row in text:
            parts = row.split(self.image_token)
            out.append(parts[0] + "".join(self.image_token * next(it, 1) + rest for rest in parts[1:]))
        return out

    def __call__(self, images: Any = None, text: Any = None, audio: Any = None, return_tensors: str = "pt",
                 sampling_rate: int | None = None, text_kwargs: dict[str, Any] | None = None,
                 padding: Any = None, **_: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        image_out: dict[str, Any] = {}
        if images is not None and "image_processor" in self.sub:
            image_out = dict(self.sub["image_processor"](images, return_tensors=return_tensors))
        if text is not None and "tokenizer" in self.sub:
            rows = [text] if isinstance(text, str) else list(text)
            if image_out and self.image_token and any(self.image_token in r for r in rows):
                flat = [im for group in images for im in (group if isinstance(group, list) else [group])]
                rows = self._expand(rows, self.image_counts(image_out, len(flat)))
            out.update(self.sub["tokenizer"](rows, return_tensors=return_tensors, **(text_kwargs or {})))
            if image_out and self.image_token:  # what transformers' processors return on request (image = 1);
                ids = self.sub["tokenizer"].convert_tokens_to_ids(self.image_token)  # an M-RoPE forward needs it
                out["mm_token_type_ids"] = (out["input_ids"] == ids).long() if return_tensors == "pt" else \
                    (np.asarray(out["input_ids"]) == ids).astype(np.int64)
        out.update(image_out)
        fe = self.sub.get("feature_extractor") or self.sub.get("audio_processor")
        if audio is not None and fe is not None:
            kw = {"sampling_rate": sampling_rate} if sampling_rate else {}
            out.update(fe(audio, return_tensors=return_tensors, **kw, **({"padding": padding} if padding else {})))
        return out


def _hw(size: Any) -> tuple[int, int] | None:
    """(height, width) of a processor size (a dict or transformers' SizeDict); None when it is not a fixed size."""
    get = size.get if isinstance(size, dict) else (lambda k: getattr(size, k, None))
    h, w = get("height"), get("width")
    return (int(h), int(w)) if isinstance(h, int) and isinstance(w, int) else None


def check_folder_processor(source: ProcessorSource, config: dict[str, Any], model_dir: Path) -> None:
    """A folder processor that contradicts the config (image size, mel bins, image token id) is bad input:
    InputError naming the file and the key, before any export work."""
    if not source.folder_roles:
        return
    image = source.sub.get("image_processor")
    files = [n for n in PROCESSOR_FILES if (model_dir / n).is_file()]
    where = files[0] if files else "the processor files"
    if image is not None and "image_processor" in source.folder_roles:
        sizes = [s.get("image_size") for s in _sub_configs(config, "image_processor")
                 if isinstance(s.get("image_size"), int)]
        size = _hw(getattr(image, "crop_size", None) if getattr(image, "do_center_crop", False) else
                   getattr(image, "size", None))
        if sizes and size and size != (sizes[0], sizes[0]):
            raise InputError(f"{where} resizes images to {size[0]}x{size[1]} but config.json's "
                             f"vision image_size is {sizes[0]}", offending=str(model_dir / where),
                             hint="the processor files belong to another checkpoint: copy the ones saved with this "
                                  "model, or delete them to let the studio derive them from config.json")
    fe = source.sub.get("feature_extractor")
    if fe is not None and "feature_extractor" in source.folder_roles:
        mels = next((s.get(k) for s in _sub_configs(config, "feature_extractor") for k in SYNONYMS["feature_size"]
                     if isinstance(s.get(k), int)), None)
        size = getattr(fe, "feature_size", None)
        if mels and isinstance(size, int) and size > 1 and size != mels:
            raise InputError(f"{where} makes {size} mel bins per frame but config.json's model takes {mels}",
                             offending=str(model_dir / where),
                             hint="the processor files belong to another checkpoint: copy the ones saved with this "
                                  "model, or delete them to let the studio derive them from config.json")
