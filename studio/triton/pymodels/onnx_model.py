"""Triton Python-backend model: runs the version folder's ONNX file with ONNX Runtime on CPU.

For servers without the onnxruntime backend. Requests gathered by dynamic batching are concatenated
along the batch dim and run as one batch when their shapes agree.
"""

import json
import os
import sys


def _extend_sys_path():
    """The stub runs the system python: append the site-packages (and studio) listed in studio_env.json."""
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(os.path.dirname(here), "studio_env.json"), os.path.join(here, "studio_env.json")):
        if os.path.isfile(cand):
            with open(cand, encoding="utf-8") as f:
                env = json.load(f)
            for p in env.get("site_packages", []) + [env.get("studio_path") or ""]:
                if p and os.path.isdir(p) and p not in sys.path:
                    sys.path.append(p)
            return


def _verify_signature(cfg, model_dir, version_dir):
    """Refuse to load a version whose files do not match its signed manifest (studio.edge bundle format)."""
    if _param(cfg, "studio_verify", "") != "manifest":
        return
    from studio.edge.verify import verify_directory

    trust = _param(cfg, "studio_trusted_keys", "trusted_keys")
    trust = trust if os.path.isabs(trust) else os.path.join(model_dir, trust)
    try:
        verify_directory(version_dir, trust, allow_extra=["model.py", "__pycache__/*"])
    except Exception as exc:  # Triton reports this text as the model's load error
        raise RuntimeError(f"studio: refusing to load {version_dir}: signature check failed: {exc}") from exc


_extend_sys_path()

import numpy as np  # noqa: E402


def _param(cfg, key, default=None):
    return cfg.get("parameters", {}).get(key, {}).get("string_value", default)


class TritonPythonModel:
    def initialize(self, args):
        import onnxruntime as ort
        import triton_python_backend_utils as pb_utils

        self.pb = pb_utils
        cfg = json.loads(args["model_config"])
        self.max_batch = int(cfg.get("max_batch_size", 0))
        onnx_file = _param(cfg, "onnx_file", "model.onnx")
        version_dir = os.path.join(args["model_repository"], args["model_version"])
        _verify_signature(cfg, args["model_repository"], version_dir)
        path = os.path.join(version_dir, onnx_file)
        opts = ort.SessionOptions()
        threads = int(_param(cfg, "intra_op_threads", "0") or 0)
        if threads:
            opts.intra_op_num_threads = threads
        self.session = ort.InferenceSession(path, sess_options=opts, providers=["CPUExecutionProvider"])
        self.input_names = [i["name"] for i in cfg.get("input", [])]
        self.output_names = [o["name"] for o in cfg.get("output", [])] or \
            [o.name for o in self.session.get_outputs()]

    def _feeds(self, request):
        feed = {}
        for name in self.input_names:
            t = self.pb.get_input_tensor_by_name(request, name)
            if t is not None:
                feed[name] = t.as_numpy()
        return feed

    def _respond(self, outputs, request):
        wanted = request.requested_output_names() or self.output_names
        tensors = [self.pb.Tensor(n, np.ascontiguousarray(outputs[n])) for n in wanted if n in outputs]
        return self.pb.InferenceResponse(output_tensors=tensors)

    def _run(self, feed):
        return dict(zip(self.output_names, self.session.run(self.output_names, feed), strict=True))

    def execute(self, requests):
        feeds = []
        for r in requests:
            try:
                feeds.append(self._feeds(r))
            except Exception as exc:
                feeds.append(exc)
        batchable = (self.max_batch > 0 and len(requests) > 1 and all(isinstance(f, dict) for f in feeds)
                     and all(set(f) == set(feeds[0]) for f in feeds)
                     and all(f[k].shape[1:] == feeds[0][k].shape[1:] for f in feeds for k in f))
        if batchable:
            try:
                sizes = [next(iter(f.values())).shape[0] for f in feeds]
                out = self._run({k: np.concatenate([f[k] for f in feeds]) for k in feeds[0]})
                bounds = np.cumsum([0] + sizes)
                return [self._respond({k: v[bounds[i]:bounds[i + 1]] for k, v in out.items()}, r)
                        for i, r in enumerate(requests)]
            except Exception:  # fall back to one run per request, each with its own error
                pass
        responses = []
        for feed, r in zip(feeds, requests, strict=True):
            try:
                if isinstance(feed, Exception):
                    raise feed
                responses.append(self._respond(self._run(feed), r))
            except Exception as exc:
                responses.append(self.pb.InferenceResponse(output_tensors=[], error=self.pb.TritonError(str(exc))))
        return responses

    def finalize(self):
        self.session = None
