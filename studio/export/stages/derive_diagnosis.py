"""The inputs stage's diagnosis when the processor could not make inputs the model's forward takes: located in the
model's code (studio.export.locate), with a fix that fits the cause read from the attempts and the exception.

Why a module of its own: the causes are many and each is read off the failure, never listed per family: a codec
the processor needs, a chat template, an image-token count, a key the raising model function reads and config.json
lacks, an unset config attribute the model code reads, a forward input the mapped processor class does not make,
an id past an embedding table, layers that disagree on a width, media inputs the forward takes none of.
"""

from __future__ import annotations

import re
import traceback
from typing import Any

from studio.export.contract import Diagnosis
from studio.export.stages.run import ExportRun


def fix_for(exc: Any) -> str:
    text = " ".join(exc.attempts[-3:]).lower()
    everywhere = " ".join(exc.attempts).lower()
    cause = str(exc.cause or "")
    unbuilt = re.search(r"built without ([\w, ]+) \(passed as None\)", str(exc))
    if unbuilt and "processor raised" in text:
        return (f"the processor needs {unbuilt.group(1)}, which config.json does not describe (a codec model): add the "
                "checkpoint's processor_config.json, which names it, and its weights to the folder")
    unset = re.search(r"'(\w+Config)' object has no attribute '(\w+)'", cause)
    if unset:  # the model's own code reads a key its default config class never sets
        return (f"the model's code reads {unset.group(2)}, which {unset.group(1)} leaves unset and config.json does not "
                f"give: add {unset.group(2)} to config.json (the checkpoint's config has it)")
    required = re.search(r"\.forward\(\) missing \d+ required positional argument: '(\w+)'", cause)
    if required and "forward raised" in everywhere:
        return (f"the forward requires {required.group(1)}, which no prompt form made the processor return: its "
                f"feature extractor / image processor makes other inputs (the model type's mapped class is not the "
                f"checkpoint's); add the checkpoint's preprocessor_config.json, which names the class that makes "
                f"{required.group(1)}")
    widths = re.search(r"mat1 and mat2 shapes cannot be multiplied \(\d+x(\d+) and (\d+)x\d+\)", cause)
    if widths and "forward raised" in everywhere:  # inside the model, after the processor's tensors were taken
        return (f"the model's own layers disagree on a width: a matrix product (a Linear, a matmul) made for "
                f"{widths.group(2)} input features gets {widths.group(1)} in every prompt form; config.json's sizes "
                "contradict each other (the checkpoint's config holds the relation between them): fix the sizes of "
                "the failing module's sub-config")
    if isinstance(exc.cause, IndexError) and "index out of range in self" in cause:
        return ("an id past an embedding table: the ids the processor (or one part of the model, for another part) "
                "produces exceed the vocab_size of the sub-config that embeds them; check the vocab_size keys in "
                "config.json against each other and against the tokenizer")
    if "chat_template" in everywhere or "chat template" in everywhere:
        return ("the processor builds its prompts only through the checkpoint's chat template: add chat_template.jinja "
                "(or the processor_config.json holding it) to the folder")
    if "tokens" in text and "features" in text:
        return ("the processor expands each image into a number of placeholder tokens the model's vision tower does "
                "not return: add the checkpoint's processor_config.json (image_seq_length / patch_size / "
                "num_additional_image_tokens) to the folder")
    if "length" in text or "expects" in text:
        return ("the processor's output does not have the length the model expects: add the checkpoint's "
                "preprocessor_config.json to the folder, or set the config's sizes to the processor's")
    return ("add the checkpoint's processor files (preprocessor_config.json / processor_config.json and the "
            "tokenizer) to the folder; the attempts are in the raw log")


def diagnosis(run: ExportRun, error_class: str, exc: BaseException, message: str, fix: str,
               attempts: list[str] | None = None) -> Diagnosis:
    from studio.export.locate import locate_exception

    where = locate_exception(exc)
    log = "\n".join([*(attempts or []), "".join(traceback.format_exception(exc))])[-20000:]
    keys = config_keys_read(where.code, run.config)
    unset = unset_keys_read(exc, where, run.config) if not keys else []
    if keys:
        fix = (f"the failing line reads {', '.join(keys)} from the config: check {' / '.join(keys)} in config.json "
               f"against the weights and the processor; " + fix)
    elif unset:
        fix = (f"{where.function or 'the function'} raised after reading {', '.join(unset)}, which config.json does "
               f"not set (the default config class leaves it to the checkpoint): add {' / '.join(unset)} to "
               "config.json as the checkpoint's config has it")
    return Diagnosis(stage="inputs", error_class=error_class,
                     message=message + (f" (at {where.source}: {where.code})" if where.source else ""),
                     fix=fix, module=where.module, raw_log=log)


def unset_keys_read(exc: BaseException, where: Any, config: dict[str, Any]) -> list[str]:
    """Keys a model function that raised by itself (its failing line is a ``raise``) reads by name before that line
    (``params.get("mrope_section", [])``, ``config["key"]``) and the config does not hold at any depth: a
    default config class leaving a key to the checkpoint (HunYuan-VL's M-RoPE sections)."""
    import inspect

    if not (where.code or "").lstrip().startswith("raise") or not where.file:
        return []
    frame = next((t.tb_frame for t in _tb_frames(exc) if t.tb_frame.f_code.co_filename == where.file
                  and t.tb_lineno == where.line), None)
    if frame is None:
        return []
    try:
        lines, start = inspect.getsourcelines(frame.f_code)
    except (OSError, TypeError):
        return []
    before = "".join(lines[: max(where.line - start, 0)])
    names = re.findall(r"""(?:\.get\(|\[)\s*["']([a-z][a-z0-9_]{2,})["']""", before)
    held: set[str] = set()
    stack = [config]
    while stack:
        d = stack.pop()
        held |= set(d)
        stack += [v for v in d.values() if isinstance(v, dict)]
    return [n for n in dict.fromkeys(names) if n not in held]


def _tb_frames(exc: BaseException) -> list[Any]:
    out, tb = [], exc.__traceback__
    while tb is not None:
        out.append(tb)
        tb = tb.tb_next
    return out


def config_keys_read(code: str | None, config: dict[str, Any]) -> list[str]:
    """Config keys a line of model code reads: ``config.<key>``, or a name on the line that is a key of the config
    or one of its sub-configs (``hidden_states[vision_feature_layer]``), a keyword argument's name aside (GLM-Image's
    ``.to(dtype=torch.float32)`` blamed the config's ``dtype``)."""
    import re

    keys: set[str] = set()
    stack = [config]
    while stack:
        d = stack.pop()
        for k, v in d.items():
            keys.add(k)
            if isinstance(v, dict):
                stack.append(v)
    text = code or ""
    own = re.findall(r"config\.(\w+)", text)
    # a bare name counts unless it is only a keyword argument (``.to(dtype=torch.float32)`` reads no config's dtype)
    bare = [n for n in re.findall(r"\b([a-z_][a-z0-9_]{3,})\b", text)
            if re.search(rf"(?<![\w.]){n}\b(?!\s*=[^=])", text)]
    return [n for n in dict.fromkeys(own + bare) if n in keys and n not in ("self", "return", "config")]


_MEDIA_ROLES = {"vision": ("image_processor", "video_processor"), "audio": ("feature_extractor", "audio_processor")}


def media_not_taken(source: Any, media: set[str], params: list[str]) -> list[tuple[str, str, list[str]]]:
    """(modality, sub-processor classes, their inputs) for each media modality none of whose sub-processors' inputs
    (masks aside) the forward takes: Kyutai's ``input_values`` (its forward takes audio codes as ``input_ids``),
    Wav2Vec2-BERT's mapped extractor's ``input_values`` (its forward takes ``input_features``)."""
    out = []
    for modality in sorted(media):
        names: list[str] = []
        classes: list[str] = []
        for role, obj in source.sub.items():
            if any(r in role for r in _MEDIA_ROLES.get(modality, ())):
                names += [n for n in getattr(obj, "model_input_names", None) or [] if "mask" not in n]
                classes.append(type(obj).__name__)
        if names and not set(names) & set(params):
            out.append((modality, ", ".join(classes), names))
    return out


def not_taken_fix(model_class: str, untaken: list[tuple[str, str, list[str]]]) -> str:
    modality, classes, names = untaken[0]
    return (f"{model_class}.forward takes none of the {modality} inputs {classes} makes ({', '.join(names)}): when the "
            f"checkpoint's preprocessor_config.json names another {modality} processor, add it to the folder; else "
            f"the {modality} reaches the model outside forward (a codec or encoder in generate()), and this forward "
            f"cannot be exported with its {modality}")
