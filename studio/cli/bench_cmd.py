"""`studio bench --url URL --model NAME [--concurrency 1,2,4,8 | --rate R] ... [--sla L1] [--json]`.

Exit status: 0 when the run completed (and the SLA, if asked, passed); 1 when the SLA failed or could not be
judged, or no request succeeded; 2 for bad input or an unreachable server.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _levels(text: str) -> list[int]:
    try:
        vals = [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers like 1,2,4,8, got {text!r}") from exc
    if not vals or any(v < 1 for v in vals):
        raise argparse.ArgumentTypeError(f"concurrency levels must be >= 1, got {text!r}")
    return vals


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", required=True, help="KServe v2 HTTP endpoint (Triton :8000 or the edge agent)")
    p.add_argument("--model", required=True, help="model name on the server")
    p.add_argument("--model-version", default="", help="model version (default: the server's choice)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--concurrency", type=_levels, default=None,
                      help="closed-loop sweep: concurrent requests per level, e.g. 1,2,4,8 (default 1)")
    mode.add_argument("--rate", type=float, default=None,
                      help="open loop: requests per second, latency measured from each request's due time")
    p.add_argument("--distribution", choices=["constant", "poisson"], default="constant",
                   help="open-loop arrivals (default constant)")
    p.add_argument("--duration", type=float, default=10.0, help="minimum measured seconds per level (default 10)")
    p.add_argument("--warmup", type=float, default=2.0, help="warm-up seconds per level, not measured (default 2)")
    p.add_argument("--window", type=float, default=2.0, help="measurement window in seconds (default 2)")
    p.add_argument("--stability-pct", type=float, default=10.0,
                   help="stable when the last 3 windows' throughput, p50 and p99 are within +-PCT (default 10)")
    p.add_argument("--max-windows", type=int, default=0,
                   help="give up waiting for stability after this many windows (default: minimum + 10)")
    p.add_argument("--no-stability", action="store_true", help="measure exactly --duration, no stability check")
    p.add_argument("--max-connections", type=int, default=32, help="open-loop connection pool size (default 32)")
    p.add_argument("--timeout", type=float, default=30.0, help="per-request timeout in seconds (default 30)")
    p.add_argument("--input-data", type=Path, default=None,
                   help="JSON file: a KServe v2 request body, a list of them, or perf_analyzer's {\"data\": [...]}"
                        " (default: random data from the model's metadata)")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=DIMS",
                   help="concrete shape for a dynamic input, NAME=D,D,... with sizes >= 1, e.g. input_ids=1,16 "
                        "(repeatable)")
    p.add_argument("--sla", default=None, help="judge every window against this tier (L1, L2, L3)")
    p.add_argument("--tiers", type=Path, default=None, help="tier definitions (default: the shipped studio/resources/sla/tiers.yaml)")
    p.add_argument("--p95-ms", type=float, default=None, help="latency budget: p95 in ms for this model")
    p.add_argument("--p99-ms", type=float, default=None, help="latency budget: p99 in ms for this model")
    p.add_argument("--required-pct", type=float, default=100.0,
                   help="compliance (%% of windows passing) the run needs to pass (default 100)")
    p.add_argument("--metrics-url", default=None,
                   help="Prometheus metrics of the server (Triton: http://HOST:8002/metrics); "
                        "default: try URL/metrics")
    p.add_argument("--server-pid", type=int, default=None, help="watch this local server process with psutil")
    p.add_argument("--no-collectors", action="store_true", help="client-side measurements only")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("--csv", type=Path, default=None, help="write one row per level to this CSV file")
    p.add_argument("--output", type=Path, default=None, help="write the JSON report to this file")
    p.add_argument("--record", type=Path, default=None, help="record the run to this SQLite file")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--locust", action="store_true",
                   help="drive the same workload through Locust: one master and --locust-workers worker processes "
                        "on loopback (the 'locust' extra); results merged into the same report and SLA verdicts")
    p.add_argument("--locust-workers", type=int, default=2, help="local Locust worker processes (default 2)")
    p.add_argument("--locust-hosts", default="", metavar="HOST[,HOST]",
                   help="lab hosts that each run one worker (`python -m studio.telemetry.locustfile --master-host "
                        "THIS_HOST --master-port PORT`, or `locust -f .../studio/telemetry/locustfile.py --worker "
                        "--master-host THIS_HOST`); the master then binds 0.0.0.0 and sends them the workload")
    p.add_argument("--locust-port", type=int, default=None,
                   help="the Locust master's port (default 5557 with --locust-hosts, a free port otherwise)")
    g = p.add_argument_group("generate endpoints (KServe v2 / Triton generate extension)")
    g.add_argument("--generate", action="store_true",
                   help="drive /v2/models/MODEL/generate_stream instead of /infer: time to first token, inter-token "
                        "latency, output tokens/s and request latency per window (genai-perf's measures)")
    g.add_argument("--prompt", action="append", default=[], metavar="TEXT",
                   help="a prompt (repeat for several, sent in turn; default: one short question)")
    g.add_argument("--prompts-file", type=Path, default=None, help="prompts, one per line")
    g.add_argument("--max-tokens", type=int, default=16, help="new tokens per request (default 16)")
    g.add_argument("--generate-param", action="append", default=[], metavar="KEY=VALUE",
                   help="another sampling parameter sent in 'parameters' (temperature=0.7, seed=1; JSON values)")
    g.add_argument("--no-stream", action="store_true",
                   help="use /generate (one JSON answer): request latency and tokens only, no TTFT")
    g.add_argument("--ttft-p95-ms", type=float, default=None, help="budget: time to first token p95 (with --sla)")
    g.add_argument("--itl-p95-ms", type=float, default=None, help="budget: inter-token latency p95 (with --sla)")
    p.add_argument("--otlp-endpoint", default=None,
                   help="export a client span per request (send/receive children, traceparent sent to the server) "
                        "and latency metrics over OTLP/HTTP, e.g. http://localhost:4318 "
                        "(default: $OTEL_EXPORTER_OTLP_ENDPOINT; nothing is exported when neither is set)")


def run(args: argparse.Namespace) -> int:
    from studio.cli.progress import job_progress
    from studio.core.atomic import write_text_atomic
    from studio.core.errors import InputError
    from studio.core.shapes import parse_shapes
    from studio.telemetry.bench import SlaSpec, default_collectors, format_report, run_bench
    from studio.telemetry.loadgen import LoadConfig
    from studio.telemetry.sla import LatencyBudget, get_tier

    if args.input_data is not None and not args.input_data.is_file():
        raise InputError(f"input data file not found: {args.input_data}", offending=str(args.input_data))
    if args.record is not None and args.record.suffix not in (".sqlite", ".sqlite3", ".db"):
        raise InputError("a recording is a SQLite file", offending=str(args.record),
                         hint="name it with .sqlite, e.g. --record run.sqlite")
    sla = None
    if args.sla:
        get_tier(args.sla, args.tiers)  # unknown tier -> InputError before any load is sent
        sla = SlaSpec(tier=args.sla, budget=LatencyBudget(args.p95_ms, args.p99_ms, args.ttft_p95_ms,
                                                          args.itl_p95_ms), tiers_file=args.tiers,
                      required_pct=args.required_pct)
    elif any(v is not None for v in (args.p95_ms, args.p99_ms, args.ttft_p95_ms, args.itl_p95_ms)):
        raise InputError("latency budgets are judged within an SLA tier",
                         offending="--p95-ms/--p99-ms/--ttft-p95-ms/--itl-p95-ms", hint="add --sla L1 (or L2, L3)")
    cfg = LoadConfig(url=args.url, model=args.model, concurrency=args.concurrency or [1], rate=args.rate,
                     duration_s=args.duration, warmup_s=args.warmup, window_s=args.window,
                     stability=not args.no_stability, stability_pct=args.stability_pct,
                     max_windows=args.max_windows, distribution=args.distribution,
                     max_connections=args.max_connections, timeout_s=args.timeout, input_data=args.input_data,
                     shapes=parse_shapes(args.shape, min_size=1), model_version=args.model_version,
                     generation=_generation(args))
    cfg.validate()
    from studio.telemetry.otel import setup_otel

    otel = setup_otel("studio-bench", args.otlp_endpoint)
    try:
        with job_progress("bench", enabled=not args.quiet) as job:
            collectors = [] if args.no_collectors else default_collectors(cfg, args.metrics_url, args.server_pid)
            rep = run_bench(cfg, job, sla=sla, collectors=collectors, record=args.record, otel=otel,
                            **(_locust(args) or _generate_driver(args)))
    finally:
        if otel is not None:
            otel.shutdown()
    if args.csv:
        write_text_atomic(args.csv, rep.to_csv())
    if args.output:
        rep.save(args.output)
    if args.json:
        import json

        d = rep.to_dict()
        d["passed"] = rep.passed
        print(json.dumps(d, indent=2))
    else:
        print(format_report(rep))
    if sla is not None and rep.passed is not True:
        why = "could not be judged" if rep.passed is None else "failed"
        print(f"SLA {sla.tier} {why}", file=sys.stderr)
        return 1
    if rep.levels and all(lv.successes == 0 for lv in rep.levels):
        print("no request succeeded", file=sys.stderr)
        return 1
    return 0


def _locust(args: argparse.Namespace) -> dict:
    """run_bench's generator for --locust (nothing without it)."""
    if not args.locust:
        return {}
    from functools import partial

    from studio.telemetry.locust_run import LocustGenerator, LocustOptions

    hosts = [h for h in args.locust_hosts.split(",") if h.strip()]
    port = args.locust_port if args.locust_port is not None else (5557 if hosts else 0)
    opts = LocustOptions(workers=args.locust_workers, hosts=hosts, bind_host="0.0.0.0" if hosts else "127.0.0.1",
                         port=port)
    opts.validate()
    return {"generator": partial(LocustGenerator, options=opts)}


def _generation(args: argparse.Namespace) -> object:
    """The --generate workload (prompts, token budget, parameters), or None for /infer."""
    import json

    from studio.core.errors import InputError
    from studio.telemetry.load_types import GenerationLoad

    gen_flags = args.prompt or args.prompts_file or args.generate_param or args.no_stream
    if not args.generate:
        if gen_flags or args.ttft_p95_ms is not None or args.itl_p95_ms is not None:
            raise InputError("prompts, token budgets and TTFT/inter-token budgets belong to the generate workload",
                             offending="--generate", hint="add --generate")
        return None
    if args.locust:
        raise InputError("--locust drives /infer only", offending="--locust",
                         hint="drop --locust for the generate endpoints (one process measures tokens exactly)")
    if args.input_data is not None or args.shape:
        raise InputError("--input-data/--shape describe /infer tensors", offending="--input-data/--shape",
                         hint="give the generate workload its text with --prompt or --prompts-file")
    prompts = list(args.prompt)
    if args.prompts_file is not None:
        try:
            prompts += [ln for ln in args.prompts_file.read_text(encoding="utf-8").splitlines() if ln.strip()]
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read prompts from {args.prompts_file}: {exc}", offending="--prompts-file",
                             hint="a UTF-8 text file, one prompt per line") from exc
        if not prompts:
            raise InputError(f"{args.prompts_file} holds no prompt", offending="--prompts-file",
                             hint="one prompt per line")
    params: dict[str, object] = {}
    for item in args.generate_param:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"cannot read --generate-param {item!r}", offending="--generate-param",
                             hint="KEY=VALUE, for example temperature=0.7")
        try:
            params[key.strip()] = json.loads(value)
        except ValueError:
            params[key.strip()] = value
    load = GenerationLoad(max_tokens=args.max_tokens, stream=not args.no_stream, parameters=params)
    if prompts:
        load.prompts = prompts
    return load


def _generate_driver(args: argparse.Namespace) -> dict:
    if not args.generate:
        return {}
    from studio.telemetry.genload import GenerateLoadGenerator

    return {"generator": GenerateLoadGenerator}
