"""Image processor / feature extractor + tokenizer run side by side where transformers maps no processor class (or
the mapped class cannot be built offline): each gets its own modality's argument, the outputs are merged."""

from __future__ import annotations

from typing import Any

import numpy as np


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
                 padding: bool | str | None = None, **_: Any) -> dict[str, Any]:
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
            kw: dict[str, Any] = {"sampling_rate": sampling_rate} if sampling_rate else {}
            if padding is not None:  # clips of different lengths into one tensor
                kw["padding"] = padding
            out.update(fe(audio, return_tensors=return_tensors, **kw))
        return out
