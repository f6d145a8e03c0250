"""``studio-agent``: the edge daemon's command line (runs on the board; no Qt, no torch)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="studio-agent", description="Edge agent: verified bundles served over KServe v2 "
                                "(HTTP, JSON + binary tensors) with ONNX Runtime.")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default loopback; 0.0.0.0 for the network)")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--grpc-port", type=int, default=None,
                   help="also serve KServe v2 over gRPC on this port (same --host and TLS; inference only, "
                        "management stays on HTTP); off by default")
    p.add_argument("--data", required=True, type=Path, help="data folder (bundles, state, uploads)")
    p.add_argument("--trust", required=True, action="append", type=Path,
                   help="trusted public key file or folder of .pub files (repeatable)")
    p.add_argument("--token-file", required=True, type=Path, help="file holding the management token")
    p.add_argument("--allow-trust-push", action="store_true",
                   help="let a studio holding the token add signing keys over POST /agent/trust (kept in "
                        "DATA/trusted); off by default: keys come only from --trust files")
    p.add_argument("--board", default="auto", help="board id of this machine ('auto' detects it, 'any' accepts all)")
    p.add_argument("--max-upload-mb", type=float, default=32768.0,
                   help="largest accepted bundle (MiB, default 32768: a 2B-parameter model in FP32 is 9 GB); an "
                        "upload the data folder's disk cannot hold is refused whatever this says")
    p.add_argument("--max-request-mb", type=float, default=64.0,
                   help="largest inference request body, HTTP and gRPC (MiB; larger: 413 / RESOURCE_EXHAUSTED)")
    p.add_argument("--max-inflate-mb", type=float, default=256.0,
                   help="largest gzip/deflate request body once decompressed (MiB; larger: 413)")
    p.add_argument("--max-inflate-ratio", type=float, default=200.0,
                   help="largest decompressed / compressed size of a request body (larger: 413)")
    p.add_argument("--max-inflight", type=int, default=64,
                   help="requests in flight per model, HTTP and gRPC together (more: 503 with Retry-After)")
    p.add_argument("--max-generations", type=int, default=2,
                   help="generate / generate_stream requests running per model; more answer 503 (default 2)")
    p.add_argument("--read-timeout", type=float, default=30.0,
                   help="seconds a client may take between two chunks of a request body (then 408)")
    p.add_argument("--header-timeout", type=float, default=10.0,
                   help="seconds a client may take to send a request's headers (then 408, connection closed)")
    p.add_argument("--keep-versions", type=int, default=5, help="versions kept per model")
    p.add_argument("--threads", type=int, default=0, help="ONNX Runtime intra-op threads (0 = ORT default)")
    p.add_argument("--workers", type=int, default=4, help="concurrent inference threads")
    p.add_argument("--pre-workers", type=int, default=max(1, (os.cpu_count() or 2) - 1),
                   help="preprocessing threads of the staged pipeline for raw inputs (text, images, audio); "
                        "default: one less than the CPU count, so inference keeps a core")
    p.add_argument("--pipeline-depth", type=int, default=8,
                   help="bound of each staged-pipeline queue (requests beyond it wait: back-pressure)")
    p.add_argument("--otlp-endpoint", default=None,
                   help="export traces and metrics over OTLP/HTTP to this collector, e.g. http://localhost:4318 "
                        "(default: $OTEL_EXPORTER_OTLP_ENDPOINT; nothing is exported when neither is set)")
    p.add_argument("--tls-cert", type=Path, help="serve HTTPS with this certificate (PEM)")
    p.add_argument("--tls-key", type=Path, help="private key of --tls-cert (PEM)")
    p.add_argument("--tls-client-ca", type=Path,
                   help="require client certificates signed by this CA (PEM) on HTTPS and gRPC (mTLS; with --tls-cert)")
    p.add_argument("--infer-token-file", type=Path,
                   help="require 'Authorization: Bearer TOKEN' (this file's token) for inference and model metadata "
                        "on HTTP and gRPC; off by default (health and /metrics stay open)")
    p.add_argument("--require-openssf", action="append", type=Path, default=None, metavar="PEM",
                   help="refuse bundles whose model/ lacks an OpenSSF signature (model.sig) verified by this public "
                        "key or CA certificate (repeatable; `studio package --openssf-key` writes it); needs the "
                        "openssf extra")
    p.add_argument("--require-openssf-identity", default=None, metavar="ID",
                   help="with --require-openssf-issuer: accept Sigstore signatures by this identity (offline check)")
    p.add_argument("--require-openssf-issuer", default=None, metavar="URL", help="the OIDC issuer of that identity")
    p.add_argument("--name", default=None, help="name advertised over mDNS (default: host name)")
    p.add_argument("--no-mdns", action="store_true", help="do not advertise over mDNS")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return p


def _read_token(path: Path) -> str:
    from studio.core.errors import InputError

    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise InputError(f"cannot read token file {path}: {exc.strerror}", offending=str(path),
                         hint="create it, e.g. `python3 -c 'import secrets;print(secrets.token_urlsafe(32))' > FILE`"
                         ) from None
    if len(token) < 16:
        raise InputError(f"token in {path} is too short ({len(token)} characters, need 16 or more)",
                         offending=str(path), hint="use a long random token")
    return token


def main(argv: Sequence[str] | None = None) -> int:
    if "_ARGCOMPLETE" in os.environ:  # a shell's Tab (studio.cli.completion)
        from studio.cli.completion import complete_and_exit

        complete_and_exit("studio-agent")
    args = build_parser().parse_args(argv)
    from studio.core.errors import StudioError

    try:
        return _serve(args)
    except StudioError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code


def _serve(args: argparse.Namespace) -> int:
    import socket

    import uvicorn

    from studio import __version__
    from studio.agent.core import AgentConfig, AgentCore
    from studio.agent.discovery import Advertiser
    from studio.agent.http_protocol import http_protocol_class
    from studio.agent.metrics import AgentMetrics
    from studio.agent.server import create_app
    from studio.core.errors import InputError
    from studio.edge.trust import load_trusted_keys
    from studio.package.boards import detect_board  # the board registry (see test_import_contracts)

    logging.basicConfig(level=getattr(logging, args.log_level.upper()),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("studio.agent")
    trusted = load_trusted_keys(*args.trust)
    if not len(trusted) and not args.allow_trust_push and not any((args.data / "trusted").glob("*.pub")):
        raise InputError("no trusted keys: the agent would refuse every bundle", offending=str(args.trust),
                         hint="pass the studio's public key: `studio keys export-public NAME > studio.pub`")
    if bool(args.tls_cert) != bool(args.tls_key):
        raise InputError("--tls-cert and --tls-key go together", hint="pass both or neither")
    board = detect_board() if args.board == "auto" else args.board
    cfg = AgentConfig(data=args.data, trusted=trusted, token=_read_token(args.token_file), board=board,
                      max_upload_bytes=int(args.max_upload_mb * (1 << 20)), keep_versions=args.keep_versions,
                      threads=args.threads, name=args.name or socket.gethostname(),
                      allow_trust_push=args.allow_trust_push, openssf=_openssf_policy(args))
    core = AgentCore(cfg)
    core.start()
    metrics = AgentMetrics(core)
    metrics.sensors.start_tegrastats() if board == "jetson-orin-nano" else None
    from studio.telemetry.otel import setup_otel

    if args.pre_workers < 1 or args.pipeline_depth < 1:
        raise InputError("--pre-workers and --pipeline-depth must be at least 1",
                         offending=f"{args.pre_workers}/{args.pipeline_depth}", hint="e.g. --pre-workers 2")
    otel = setup_otel("studio-agent", args.otlp_endpoint, attributes={"host.name": cfg.name, "board": board})
    limits = _limits(args)
    if args.tls_client_ca and not args.tls_cert:
        raise InputError("--tls-client-ca needs --tls-cert and --tls-key (client certificates are a TLS feature)",
                         offending=str(args.tls_client_ca), hint="pass the server's certificate and key too")
    infer_token = _read_token(args.infer_token_file) if args.infer_token_file else None
    app = create_app(core, metrics, workers=args.workers, otel=otel, pre_workers=args.pre_workers,
                     pipeline_depth=args.pipeline_depth, limits=limits, infer_token=infer_token)
    if otel is not None:
        log.info("exporting traces and metrics over OTLP to %s", otel.endpoint)
    log.info("studio-agent %s on %s:%d, board %s, trusted keys %s, models: %s", __version__, args.host, args.port,
             board, ", ".join(trusted.ids()), ", ".join(sorted(core.served)) or "none")
    grpc_server = None
    if args.grpc_port is not None:
        if not 0 < args.grpc_port < 65536 or args.grpc_port == args.port:
            raise InputError(f"--grpc-port {args.grpc_port} is not a usable port", offending=str(args.grpc_port),
                             hint="pick a free port other than --port, e.g. 8001")
        from studio.agent.grpc_server import start_grpc_server

        grpc_server = start_grpc_server(core, metrics, app.executor, args.host, args.grpc_port,
                                        tls_cert=args.tls_cert, tls_key=args.tls_key,
                                        handler_threads=max(8, 2 * args.workers),
                                        max_message_bytes=limits.max_body_bytes, gate=app.gate,
                                        infer_token=infer_token, client_ca=args.tls_client_ca)
    adv = None
    if not args.no_mdns:
        adv = Advertiser(cfg.name, args.host, args.port,
                         {"version": __version__, "board": board, "tls": "1" if args.tls_cert else "0",
                          "scheme": "https" if args.tls_cert else "http"})
        adv.start()
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False,
                            ssl_certfile=str(args.tls_cert) if args.tls_cert else None,
                            ssl_keyfile=str(args.tls_key) if args.tls_key else None, timeout_keep_alive=30,
                            ssl_ca_certs=str(args.tls_client_ca) if args.tls_client_ca else None,
                            ssl_cert_reqs=2 if args.tls_client_ca else 0,  # ssl.CERT_REQUIRED / CERT_NONE
                            http=http_protocol_class(args.header_timeout), proxy_headers=False, server_header=False)
    try:
        uvicorn.Server(config).run()
    finally:
        if grpc_server is not None:
            grpc_server.stop(grace=2).wait(5)
        if adv is not None:
            adv.close()
        if otel is not None:
            otel.shutdown()
    return 0


def _openssf_policy(args: argparse.Namespace) -> Any:
    """--require-openssf*: the OpenSSFTrust every bundle's model/ must verify against (None: not required);
    model_signing is loaded now, so a missing extra stops the start rather than the first deploy."""
    if not (args.require_openssf or args.require_openssf_identity or args.require_openssf_issuer):
        return None
    from studio.edge.openssf import OpenSSFTrust, model_signing

    trust = OpenSSFTrust.from_files(args.require_openssf, args.require_openssf_identity, args.require_openssf_issuer,
                                    flag="--require-openssf")
    model_signing()
    logging.getLogger("studio.agent").info("bundles must carry an OpenSSF signature of model/ verified by %s",
                                           trust.describe())
    return trust


def _limits(args: argparse.Namespace) -> Any:
    """The request limits from the flags (studio.agent.limits); a non-positive one is refused by name."""
    from studio.agent.limits import MIB, Limits
    from studio.core.errors import InputError

    for flag in ("max_request_mb", "max_inflate_mb", "max_inflate_ratio", "max_inflight", "read_timeout",
                 "header_timeout", "max_generations"):
        if getattr(args, flag) <= 0:
            raise InputError(f"--{flag.replace('_', '-')} must be positive", offending=str(getattr(args, flag)),
                             hint="the defaults are safe for edge models; raise one for large batches")
    return Limits(max_body_bytes=int(args.max_request_mb * MIB), max_decompressed_bytes=int(args.max_inflate_mb * MIB),
                  max_ratio=args.max_inflate_ratio, read_timeout_s=args.read_timeout, max_inflight=args.max_inflight,
                  max_generations=args.max_generations)


if __name__ == "__main__":
    sys.exit(main())
