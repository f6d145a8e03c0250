"""Triton Python-backend decoupled model: text generation from a studio KV-cache export (generation.json).

Serves Triton's own ``/v2/models/NAME/generate`` and ``generate_stream``. Inputs: ``text_input`` (BYTES) and the
optional ``max_tokens`` / ``max_new_tokens``, ``temperature``, ``top_k``, ``top_p``, ``seed``, ``stop``, ``stream``,
``image``, ``audio``; the same keys are read from the request's ``parameters`` too (``"parameters": {...}`` in a
generate body). ``image`` / ``audio`` (a VLM / Whisper export) are BYTES holding the file's bytes: base64 text
(what a generate body's JSON string becomes) or the raw file (tritonclient), told apart by a strict base64 decode.
Output ``text_output`` (BYTES). With ``stream`` true each text piece is its own response (what
``generate_stream`` shows as one event each); otherwise one response holds the whole answer (what ``generate``
returns). ``request.is_cancelled()`` is checked after every token: a cancelled request stops there.

Why it imports the studio: the generation loop, sampling and request checks are the ones the agent runs
(``studio.generate.api.TextGenerator``, ``studio.generate.serving``), so both servers answer the same text and
the same errors. The stub runs the system interpreter without PYTHONPATH, so the venv's site-packages and the
studio's folder are appended from ``studio_env.json`` first (as the other pymodels do). One request at a time
per instance (``instance_group`` count sets the concurrency).
"""

import base64
import binascii
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


_extend_sys_path()

import numpy as np  # noqa: E402

SCALARS = ("max_tokens", "max_new_tokens", "temperature", "top_k", "top_p", "seed", "stream")
MEDIA = ("image", "audio")


def _media_text(value):
    """BYTES of a media input as the base64 text the agent's request checks take: kept when it is base64
    already, encoded when it is the raw file (a PNG, JPEG or WAV is never valid strict base64)."""
    try:
        base64.b64decode(value, validate=True)
        return value.decode("ascii")
    except (binascii.Error, ValueError):
        return base64.b64encode(value).decode("ascii")


def _param(cfg, key, default=None):
    return cfg.get("parameters", {}).get(key, {}).get("string_value", default)


def _verify_signature(cfg, model_dir, version_dir):
    """Refuse to load a version whose files do not match its signed manifest (studio.edge bundle format)."""
    if _param(cfg, "studio_verify", "") != "manifest":
        return
    from studio.edge.verify import verify_directory

    trust = _param(cfg, "studio_trusted_keys", "trusted_keys")
    trust = trust if os.path.isabs(trust) else os.path.join(model_dir, trust)
    try:
        verify_directory(version_dir, trust, allow_extra=["__pycache__/*"])
    except Exception as exc:  # Triton reports this text as the model's load error
        raise RuntimeError(f"studio: refusing to load {version_dir}: signature check failed: {exc}") from exc


class TritonPythonModel:
    def initialize(self, args):
        import triton_python_backend_utils as pb_utils

        from studio.generate.serving import load_generation

        self.pb = pb_utils
        cfg = json.loads(args["model_config"])
        version_dir = os.path.join(args["model_repository"], args["model_version"])
        _verify_signature(cfg, args["model_repository"], version_dir)
        threads = int(_param(cfg, "intra_op_threads", "1") or 0) or None
        self.model = load_generation(__import__("pathlib").Path(version_dir), threads=threads)

    def _fields(self, request):
        """The request as a generate body: inputs first, then ``parameters`` (which must agree)."""
        body = {}
        for name in ("text_input", "stop", "image", "audio", *SCALARS):
            t = self.pb.get_input_tensor_by_name(request, name)
            if t is None:
                continue
            arr = t.as_numpy().reshape(-1)
            if name in MEDIA:
                body[name] = _media_text(bytes(arr[0])) if arr.size else None
                continue
            vals = [v.decode("utf-8", "replace") if isinstance(v, bytes) else v.item() for v in arr]
            body[name] = vals if name == "stop" else (vals[0] if vals else None)
        raw = request.parameters()
        params = json.loads(raw) if raw else {}
        stream = params.pop("stream", None)
        if stream is not None and "stream" not in body:
            body["stream"] = stream
        if params:
            body["parameters"] = params
        return body

    def _send_error(self, sender, exc, code):
        err = self.pb.TritonError(str(exc), code) if code is not None else self.pb.TritonError(str(exc))
        sender.send(self.pb.InferenceResponse(output_tensors=[], error=err),
                    flags=self.pb.TRITONSERVER_RESPONSE_COMPLETE_FINAL)

    def _text(self, text):
        return self.pb.InferenceResponse(
            output_tensors=[self.pb.Tensor("text_output", np.array([text.encode("utf-8")], dtype=np.object_))])

    def execute(self, requests):
        from studio.generate.requests import GenerateInputError, StopStrings

        final = self.pb.TRITONSERVER_RESPONSE_COMPLETE_FINAL
        invalid = getattr(self.pb.TritonError, "INVALID_ARG", None)
        for request in requests:
            sender = request.get_response_sender()
            try:
                body = self._fields(request)
                stream = bool(body.get("stream"))
                req = self.model.parse(body)
            except GenerateInputError as exc:
                self._send_error(sender, f"{exc.message} (field '{exc.field}'; {exc.hint})", invalid)
                continue
            except Exception as exc:
                self._send_error(sender, exc, invalid)
                continue
            stops = StopStrings(req.stop)
            shown, raw = [], []

            def on_text(piece, stops=stops, shown=shown, raw=raw, sender=sender, stream=stream):
                raw.append(piece)
                out = stops.feed(piece)
                if out:
                    shown.append(out)
                    if stream:
                        sender.send(self._text(out))

            def should_stop(request=request, stops=stops):
                return stops.hit or request.is_cancelled()

            try:
                result = self.model.run(req, on_text, should_stop)
            except Exception as exc:
                self._send_error(sender, f"generation failed: {exc}", None)
                continue
            if result.finish_reason == "cancelled" and not stops.hit:  # the client cancelled: nobody listens
                self.pb.Logger.log_info(f"studio generate: request cancelled after {len(result.token_ids)} tokens")
                try:
                    sender.send(flags=final)
                except Exception:  # the server may already have dropped the cancelled request
                    pass
                continue
            sofar = "".join(raw)
            rest = result.text[len(sofar):] if result.text.startswith(sofar) else ""
            tail = ("" if stops.hit else stops.feed(rest)) + stops.flush()
            if stream:
                if tail:
                    sender.send(self._text(tail))
                sender.send(flags=final)
            else:
                resp = self._text("".join(shown) + tail)
                sender.send(resp, flags=final)
        return None

    def finalize(self):
        self.model = None
