"""The processor that makes a model's example inputs: the folder's own, or the one transformers maps to its type.

Why: every tensor a client sends comes out of the model's processor (pixel_values and the grid / sizes / masks that
go with them, input_features, the prompt with its image tokens expanded), so the export's example inputs are made
by running that processor on a synthetic image / clip / prompt, never written down per family.

Order: ``AutoProcessor`` on the folder when it holds processor files; else the processor class transformers' auto
mappings give for ``model_type`` (``PROCESSOR_MAPPING_NAMES``), assembled from the folder's sub-processors where it
has them and otherwise from the image processor / feature extractor classes the same mappings name, built offline
with their defaults and the config's own values for the keys they share (patch size, merge size, image size, mel
bins, sampling rate; studio.export.processor_settings). Every sub-processor the class declares is built (video
processors too); an ``__init__`` argument no mapping can build (a codec model) is passed as None and named; the
class is constructed offline, and one whose ``__init__`` fetches files falls back to its sub-processors side by side
(studio.export.composed_processor). A folder without a tokenizer gets a placeholder one whose special tokens sit
at the config's ids (studio.export.placeholder_tokenizer). What was derived is listed (``derived``) and the derived
sub-processor files are written beside the export (``files``).
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import InputError
from studio.export.processor_settings import (
    SYNONYMS,
    config_kwargs,
    fill_unset_counts,
    processor_kwargs,
    sub_configs,
)

PROCESSOR_FILES = ("processor_config.json", "preprocessor_config.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "tokenizer.model", "spiece.model",
                   "sentencepiece.bpe.model", "vocab.txt")
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
    unbuilt: list[str] = field(default_factory=list)  # __init__ arguments passed as None (a codec model...)

    @property
    def name(self) -> str:
        return self.classes.get("processor") or next(iter(self.classes.values()), "no processor")

    def serves(self) -> set[str]:
        """The modalities this processor makes tensors for."""
        out = {"text"} if any("tokenizer" in r for r in self.sub) else set()
        if "image_processor" in self.sub or any("video_processor" in r for r in self.sub):
            out.add("vision")  # a video processor's clips are the vision input (VideoPrism, InstructBLIP-Video)
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
    video processor, feature extractor)."""
    from transformers.models.auto.configuration_auto import model_type_to_module_name
    from transformers.models.auto.feature_extraction_auto import FEATURE_EXTRACTOR_MAPPING_NAMES
    from transformers.models.auto.image_processing_auto import IMAGE_PROCESSOR_MAPPING_NAMES
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES
    from transformers.models.auto.video_processing_auto import VIDEO_PROCESSOR_MAPPING_NAMES

    # a sub-model type (qwen2_5_omni_thinker) is mapped under its module's type; a processor's sub-processor not
    # mapped under the type (glm4v_moe's image processor) under the type of the processor class's own module
    keys = list(dict.fromkeys([model_type, model_type_to_module_name(model_type)]))
    out: dict[str, str] = {}
    for role, table in (("processor", PROCESSOR_MAPPING_NAMES), ("image_processor", IMAGE_PROCESSOR_MAPPING_NAMES),
                        ("video_processor", VIDEO_PROCESSOR_MAPPING_NAMES),
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
    from transformers import ProcessorMixin

    try:
        mod = importlib.import_module(f"transformers.models.{module}.processing_{module}")
    except Exception:  # noqa: BLE001 - no such file (or it needs a missing package): no processor from here
        return None
    names = [n for n in getattr(mod, "__all__", []) if isinstance(getattr(mod, n, None), type)
             and issubclass(getattr(mod, n), ProcessorMixin)]
    return names[0] if len(names) == 1 else None


MODALITIES = ("image_processor", "video_processor", "feature_extractor", "audio_processor", "tokenizer")


def modality(role: str) -> str | None:
    """The kind of sub-processor an attribute is (``encoder_image_processor`` -> image_processor), as transformers'
    ProcessorMixin reads attribute names; an audio processor is built from the feature extractor mapping."""
    kind = next((m for m in MODALITIES if m in role), None)
    return "feature_extractor" if kind == "audio_processor" else kind


def _class(name: str) -> Any:
    import transformers

    cls = getattr(transformers, name, None)
    if cls is None:
        raise ImportError(f"transformers has no class {name}")
    return cls


def _build_sub(role: str, class_name: str, config: dict[str, Any]) -> tuple[Any, list[str]]:
    cls = _class(class_name)
    base = cls()
    defaults = base.to_dict() if hasattr(base, "to_dict") else {}
    kwargs, notes = config_kwargs(defaults, config, role)
    if defaults.get("apply_ocr") is True:  # words and boxes come with the prompt (OCR is the client's, if any)
        kwargs["apply_ocr"] = False
        notes.append("apply_ocr=False: the example prompts bring their words and boxes")
    obj = cls(**kwargs) if kwargs else base
    what = f"{role.replace('_', ' ')} {class_name} (transformers' default for this model type"
    return obj, [what + (": " + ", ".join(notes) if notes else "") + ")"]


def layout_tokenizer_class(proc_cls: Any, model_type: Any) -> Any:
    """The tokenizer class transformers maps to the model type, when the processor hands its tokenizer arguments a
    generic tokenizer does not take (LayoutLMv3's ``boxes`` / ``word_labels``); None otherwise."""
    import inspect

    from transformers import PreTrainedTokenizerFast
    from transformers.models.auto.tokenization_auto import TOKENIZER_MAPPING_NAMES

    name = _mapped(dict(TOKENIZER_MAPPING_NAMES), str(model_type))
    if proc_cls is None or not name:
        return None
    try:
        cls = _class(name)
        wants = set(inspect.signature(proc_cls.__call__).parameters)
        takes = set(inspect.signature(cls.__call__).parameters) - set(
            inspect.signature(PreTrainedTokenizerFast.__call__).parameters)
    except (ImportError, TypeError, ValueError):
        return None
    return cls if wants & takes else None


def _has_files(model_dir: Path, names: tuple[str, ...]) -> bool:
    return any((model_dir / n).is_file() for n in names)


def _folder_sub(role: str, model_dir: Path) -> Any:
    from transformers import AutoFeatureExtractor, AutoImageProcessor, AutoTokenizer, AutoVideoProcessor

    kind = modality(role)
    loader = {"image_processor": AutoImageProcessor, "feature_extractor": AutoFeatureExtractor,
              "video_processor": AutoVideoProcessor}.get(kind or "")
    if kind == "video_processor" and not (model_dir / "video_preprocessor_config.json").is_file():
        return None
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
    """Strings a processor hard-codes for its special tokens (``fake_image_token``, ``global_image_tag``...), as
    attributes or as literals in its own code (Ovis2's ``<IMG_ATOM>``)."""
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
            if re.fullmatch(r"\S{3,64}", text) and not text.isalnum() and text[0] in "<[]{|":  # <image>, [IMG]
                out[attr if attr.endswith("_token") else f"{attr}_token"] = text
    from studio.export.placeholder_tokenizer import literal_tokens

    taken = set(out.values())
    out.update({k: v for k, v in literal_tokens(type(proc)).items() if v not in taken})
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
    if not any((modality(r) or r) in mapped or _folder_sub(r, model_dir) is not None for r in roles
               if "tokenizer" not in r):
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
        key = modality(role) or role
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
        tok_cls = layout_tokenizer_class(proc_cls, str(config.get("model_type")))
        tok = build_placeholder_tokenizer(config, tokenizer_class=tok_cls)
        for r in missing_tok:
            sub[r] = tok
    proc: Any = None
    missing: list[str] = []
    if proc_cls is not None:
        own, notes = processor_kwargs(proc_cls, config)
        if notes:
            derived.append(f"processor {proc_cls.__name__}: " + ", ".join(notes))
        unbuilt, missing = _unbuildable(proc_cls, roles)
        derived += [f"{proc_cls.__name__}: {name} passed as None ({why})" for name, why in unbuilt.items()]
        own.update(dict.fromkeys(unbuilt))
        try:
            with offline():
                proc = _construct(proc_cls, sub, own, config, missing_tok, extra)
                if placeholder:  # a second pass: the processor's own hard-coded token strings join the vocabulary
                    extra.update(_processor_tokens(proc))
                    proc = _construct(proc_cls, sub, own, config, missing_tok, extra)
        except ImportError:
            raise  # a library the processor needs: the diagnosis says which to install
        except Exception as exc:  # noqa: BLE001 - e.g. an __init__ that downloads a tokenizer from the hub
            derived.append(f"{proc_cls.__name__} cannot be built offline from config.json ({_cause(exc, proc_cls)}): its "
                           "sub-processors run side by side instead (ComposedProcessor), the model's forward "
                           "judges their outputs")
            proc_cls = None
        if proc is not None:
            derived += fill_unset_counts(proc, config)
    if proc is None:
        from studio.export.composed_processor import ComposedProcessor

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
                           folder_roles, missing)


@contextmanager
def offline() -> Iterator[None]:
    """The hub unreachable for the duration: a derived processor is built from config.json alone, and one whose
    ``__init__`` fetches files (MGP-STR's GPT-2 and BERT tokenizers) fails at once instead of timing out."""
    import huggingface_hub.constants as hub

    before = hub.HF_HUB_OFFLINE
    hub.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        hub.HF_HUB_OFFLINE = before


def _cause(exc: BaseException, cls: Any) -> str:
    """``Type: first line at file:line in function`` of an exception, located in the processor class's own file
    (its deepest frame there), else where studio.export.locate puts it."""
    import inspect
    import traceback

    from studio.export.locate import locate_exception

    try:
        own = inspect.getfile(cls)
    except (TypeError, OSError):
        own = ""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == own]
    where = f"{Path(own).name}:{frames[-1].lineno} in {frames[-1].name}" if frames else locate_exception(exc).source
    first = (str(exc).strip().splitlines() or [""])[0][:200]
    return f"{type(exc).__name__}: {first}" + (f" at {where}" if where else "")


def _unbuildable(proc_cls: Any, roles: list[str]) -> tuple[dict[str, str], list[str]]:
    """``__init__`` parameters without a default that are not sub-processors the mappings can build (DiaProcessor's
    ``audio_tokenizer``, a DAC codec model): name -> why, passed as None; and the names, for the diagnosis when
    the processor then needs one."""
    import inspect

    from transformers.processing_utils import MODALITY_TO_BASE_CLASS_MAPPING

    out: dict[str, str] = {}
    for name, p in inspect.signature(proc_cls.__init__).parameters.items():
        if name == "self" or name in roles or p.default is not p.empty or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        kinds = MODALITY_TO_BASE_CLASS_MAPPING.get(name)
        kinds = ", ".join(kinds) if isinstance(kinds, tuple) else kinds
        out[name] = f"a model ({kinds}) that config.json does not describe" if kinds else \
            "no class for it in transformers' processor mappings"
    return out, list(out)


def _construct(proc_cls: Any, sub: dict[str, Any], own: dict[str, Any], config: dict[str, Any],
               missing_tok: list[str], extra: dict[str, str]) -> Any:
    """The processor; with a placeholder tokenizer, each special-token attribute the processor reads from it
    (``tokenizer.image_boundary_token``...) is added as ``<name>`` and construction tried again."""
    import re

    from studio.export.placeholder_tokenizer import build_placeholder_tokenizer

    for _ in range(12):
        if missing_tok:
            tok = build_placeholder_tokenizer(config, extra, layout_tokenizer_class(proc_cls, config.get("model_type")))
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
        sizes = [s.get("image_size") for s in sub_configs(config, "image_processor")
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
        mels = next((s.get(k) for s in sub_configs(config, "feature_extractor") for k in SYNONYMS["feature_size"]
                     if isinstance(s.get(k), int)), None)
        size = getattr(fe, "feature_size", None)
        if mels and isinstance(size, int) and size > 1 and size != mels:
            raise InputError(f"{where} makes {size} mel bins per frame but config.json's model takes {mels}",
                             offending=str(model_dir / where),
                             hint="the processor files belong to another checkpoint: copy the ones saved with this "
                                  "model, or delete them to let the studio derive them from config.json")
