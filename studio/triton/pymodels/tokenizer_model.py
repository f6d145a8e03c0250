"""Triton Python-backend preprocessing model: a BYTES text input tokenised with the model's tokenizer.json.

Outputs are the token tensors the text model takes (``input_ids``, ``attention_mask``, optionally
``token_type_ids``), padded to the longest text of the batch.
"""

import json
import os
import sys


def _extend_sys_path():
    """The stub runs the system python: append the site-packages listed in studio_env.json."""
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(os.path.dirname(here), "studio_env.json"), os.path.join(here, "studio_env.json")):
        if os.path.isfile(cand):
            with open(cand, encoding="utf-8") as f:
                for p in json.load(f).get("site_packages", []):
                    if os.path.isdir(p) and p not in sys.path:
                        sys.path.append(p)
            return


_extend_sys_path()

import numpy as np  # noqa: E402

_NP = {"TYPE_INT64": np.int64, "TYPE_INT32": np.int32, "TYPE_FP32": np.float32}


def _param(cfg, key, default=None):
    return cfg.get("parameters", {}).get(key, {}).get("string_value", default)


class TritonPythonModel:
    def initialize(self, args):
        import triton_python_backend_utils as pb_utils
        from tokenizers import Tokenizer

        self.pb = pb_utils
        cfg = json.loads(args["model_config"])
        folder = os.path.join(args["model_repository"], args["model_version"])
        self.tokenizer = Tokenizer.from_file(os.path.join(folder, _param(cfg, "tokenizer_file", "tokenizer.json")))
        max_len = int(_param(cfg, "max_length", "0") or 0)
        if max_len:
            self.tokenizer.enable_truncation(max_len)
        pad_id = int(_param(cfg, "pad_id", "0") or 0)
        self.tokenizer.enable_padding(pad_id=pad_id)
        self.text_input = cfg["input"][0]["name"]
        self.outputs = {o["name"]: _NP.get(o["data_type"], np.int64) for o in cfg.get("output", [])}

    def execute(self, requests):
        responses = []
        for r in requests:
            try:
                raw = self.pb.get_input_tensor_by_name(r, self.text_input).as_numpy().reshape(-1)
                texts = [t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in raw]
                enc = self.tokenizer.encode_batch(texts)
                cols = {"input_ids": [e.ids for e in enc], "attention_mask": [e.attention_mask for e in enc],
                        "token_type_ids": [e.type_ids for e in enc]}
                tensors = [self.pb.Tensor(n, np.asarray(cols[n], dtype=dt)) for n, dt in self.outputs.items()
                           if n in cols]
                responses.append(self.pb.InferenceResponse(output_tensors=tensors))
            except Exception as exc:
                responses.append(self.pb.InferenceResponse(output_tensors=[], error=self.pb.TritonError(str(exc))))
        return responses
