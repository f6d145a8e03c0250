"""Triton Python-backend (BLS) router over a split-modality export.

Each modality part (text / vision / audio encoder) is its own model; a request runs only the parts whose
inputs it carries, so a text-only request never reaches the vision encoder (its statistics stay still).
Routes come from the ``routes`` parameter: {modality: {"model", "inputs", "optional", "outputs": {ours: theirs}}}.
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


def _param(cfg, key, default=None):
    return cfg.get("parameters", {}).get(key, {}).get("string_value", default)


class TritonPythonModel:
    def initialize(self, args):
        import triton_python_backend_utils as pb_utils

        self.pb = pb_utils
        cfg = json.loads(args["model_config"])
        self.routes = json.loads(_param(cfg, "routes", "{}"))

    def _route(self, request, route):
        import numpy as np

        tensors, missing = [], []
        for name in route["inputs"]:
            t = self.pb.get_input_tensor_by_name(request, name)
            if t is None:
                if name in route.get("optional", []):
                    missing.append(name)
                    continue
                return None
            tensors.append(t)
        if not tensors:
            return None
        ids = self.pb.get_input_tensor_by_name(request, "input_ids")
        for name in missing:  # a text request without mask / type ids: the usual defaults
            if ids is not None and name in ("attention_mask", "token_type_ids"):
                a = ids.as_numpy()
                fill = np.ones_like(a) if name == "attention_mask" else np.zeros_like(a)
                tensors.append(self.pb.Tensor(name, fill))
        wanted = list(route["outputs"].values())
        sub = self.pb.InferenceRequest(model_name=route["model"], requested_output_names=wanted, inputs=tensors)
        resp = sub.exec()
        if resp.has_error():
            raise RuntimeError(f"{route['model']}: {resp.error().message()}")
        out = []
        for ours, theirs in route["outputs"].items():
            t = self.pb.get_output_tensor_by_name(resp, theirs)
            if t is not None:
                out.append(self.pb.Tensor(ours, t.as_numpy()))
        return out

    def execute(self, requests):
        responses = []
        for r in requests:
            try:
                tensors = []
                for route in self.routes.values():
                    got = self._route(r, route)
                    if got:
                        tensors.extend(got)
                if not tensors:
                    raise ValueError("the request carries no complete input set for any modality: "
                                     + "; ".join(f"{m}: {', '.join(rt['inputs'])}" for m, rt in self.routes.items()))
                # Outputs of modalities the request did not carry are left out (a client that asks for
                # all outputs, the default, gets those that were computed).
                wanted = set(r.requested_output_names())
                if wanted:
                    tensors = [t for t in tensors if t.name() in wanted]
                responses.append(self.pb.InferenceResponse(output_tensors=tensors))
            except Exception as exc:
                responses.append(self.pb.InferenceResponse(output_tensors=[], error=self.pb.TritonError(str(exc))))
        return responses
