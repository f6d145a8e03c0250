"""The generate-endpoint load generator against a real studio-agent process serving a tiny Qwen2 with its KV
cache: TTFT, inter-token latency and output tokens per window and level, the client's token count equal to the
agent's own counter, SLA tiers judging TTFT and inter-token latency, dashboards series, and bad input."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from studio.core.errors import InputError  # noqa: E402
from studio.core.jobs import JobState  # noqa: E402
from studio.telemetry import samples as S  # noqa: E402
from studio.telemetry.bench import SlaSpec, run_bench  # noqa: E402
from studio.telemetry.genload import GenerateLoadGenerator  # noqa: E402
from studio.telemetry.load_types import GenerationLoad, LoadConfig  # noqa: E402
from studio.telemetry.sla import LatencyBudget  # noqa: E402
from tests.edge.helpers import AgentProcess, dev_keys, make_mlp  # noqa: E402
from tests.serving.generation_export import export_long_context  # noqa: E402


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from studio.package.bundle import build_bundle
    from studio.package.client import deploy_bundle

    root = tmp_path_factory.mktemp("genload")
    export_dir = export_long_context(root)
    dev = dev_keys(root)
    rep = build_bundle(export_dir, "generic-x86_64", dev.signing_key, root / "qwen.tar", name="qwen", version="1")
    a = AgentProcess(root / "data", dev.trust, dev.token, extra=["--max-generations", "4"]).start()
    deploy_bundle(Path(rep.bundle), a.url, dev.token.read_text().strip())
    mlp = build_bundle(make_mlp(root / "mlp" / "tiny.onnx"), "generic-x86_64", dev.signing_key, root / "mlp.tar",
                       name="mlp", version="1")  # a plain model beside it: Generate is not offered for it
    deploy_bundle(Path(mlp.bundle), a.url, dev.token.read_text().strip())
    yield a
    a.stop()


def _counter(url: str, name: str) -> float:
    m = re.search(rf'^{name}_total{{model="qwen"}} (\S+)$', httpx.get(url + "/metrics").text, re.M)
    return float(m.group(1)) if m else 0.0


def _cfg(url: str, **kw: object) -> LoadConfig:
    base = dict(url=url, model="qwen", concurrency=[2], duration_s=1.0, warmup_s=0.3, window_s=0.5, tick_s=0.25,
                stability=False, generation=GenerationLoad(prompts=["hello world", "the quick brown fox"],
                                                           max_tokens=8))
    base.update(kw)
    return LoadConfig(**base)  # type: ignore[arg-type]


def test_closed_loop_measures_ttft_and_inter_token_and_counts_what_the_agent_counts(agent: AgentProcess) -> None:
    before = _counter(agent.url, "studio_agent_generate_output_tokens")
    seen: list = []
    rep = run_bench(_cfg(agent.url), sla=SlaSpec(tier="L1", budget=LatencyBudget(ttft_p95_ms=60_000.0,
                                                                                inter_token_p95_ms=1e-6)),
                    sink=seen.extend, generator=GenerateLoadGenerator)
    (lv,) = rep.levels
    g = lv.generation
    assert lv.successes > 0 and lv.error_count == 0, lv.errors
    assert g is not None and g.token_source == "server usage (completion_tokens)"
    assert g.ttft.count == lv.successes and g.ttft.p50_ms is not None and g.ttft.p50_ms > 0
    assert g.ttft.max_ms <= lv.latency.max_ms + 1e-6  # the first token comes before the last
    assert g.inter_token.count > 0 and g.inter_token.p50_ms > 0
    assert g.output_tokens_per_s > 0 and 1 <= g.tokens_per_request <= 8
    after = _counter(agent.url, "studio_agent_generate_output_tokens")
    # warm-up + measured + still running at the level's end, plus prepare()'s one-token probe
    client_tokens = g.warmup_output_tokens + g.output_tokens + g.late_output_tokens + 1
    assert after - before == client_tokens
    # the tier's TTFT budget (overridden: generous) passes, the inter-token one (1 ns) fails in every window
    checks = {c.name: c for v in rep.verdicts for c in v.checks}
    assert checks["ttft_p95"].status == "pass" and checks["ttft_p95"].value > 0
    assert checks["inter_token_p95"].status == "fail" and checks["inter_token_p95"].limit == 1e-6
    assert rep.sla is not None and rep.sla.failures_by_check.get("inter_token_p95") == len(lv.windows)
    series = {s.series for s in seen}
    assert {S.TTFT_P95, S.ITL_P95, S.OUTPUT_TPS, S.LAT_P95, S.THROUGHPUT} <= series
    assert all(w.generation is not None for w in lv.windows)


def test_open_loop_at_a_rate_and_the_non_streaming_endpoint(agent: AgentProcess) -> None:
    rep = run_bench(_cfg(agent.url, concurrency=[1], rate=6.0), generator=GenerateLoadGenerator)
    (lv,) = rep.levels
    assert lv.mode == "rate" and lv.successes > 0 and lv.error_count == 0
    assert lv.send_delay is not None and lv.send_delay.count >= lv.successes
    assert lv.generation.ttft.count == lv.successes
    plain = _cfg(agent.url, generation=GenerationLoad(prompts=["hello"], max_tokens=4, stream=False))
    rep2 = run_bench(plain, generator=GenerateLoadGenerator)
    g2 = rep2.levels[0].generation
    assert rep2.levels[0].successes > 0 and g2.output_tokens > 0
    assert g2.ttft.count == 0  # not measurable without the stream: reported as absent, never as zero
    assert g2.ttft.p95_ms is None


def test_tiers_without_generation_budgets_leave_the_checks_unjudged(agent: AgentProcess) -> None:
    rep = run_bench(_cfg(agent.url), sla=SlaSpec(tier="L3"), generator=GenerateLoadGenerator)
    checks = {c.name: c for c in rep.verdicts[0].checks}
    assert checks["ttft_p95"].status == "not available" and checks["ttft_p95"].note == "no limit set"
    assert checks["ttft_p95"].value is not None  # measured, just not budgeted


def test_bad_input_names_the_flag_before_any_load(agent: AgentProcess) -> None:
    with pytest.raises(InputError) as e:
        GenerateLoadGenerator(_cfg(agent.url, model="nope")).prepare()
    assert e.value.offending == "--model"
    with pytest.raises(InputError) as e:
        GenerateLoadGenerator(_cfg(agent.url, generation=GenerationLoad(max_tokens=0)))
    assert e.value.offending == "--max-tokens"
    with pytest.raises(InputError) as e:
        GenerateLoadGenerator(_cfg(agent.url, generation=GenerationLoad(prompts=[""])))
    assert e.value.offending == "--prompt"


def test_cancel_ends_the_level_early(agent: AgentProcess) -> None:
    job = JobState(name="genload")
    cfg = _cfg(agent.url, duration_s=30.0)

    def sink(batch: list) -> None:
        job.cancel()

    rep = run_bench(cfg, job, sink=sink, generator=GenerateLoadGenerator)
    assert rep.levels[0].aborted == "cancelled" and rep.levels[0].measured_s < 10


@pytest.mark.gui
@pytest.mark.timeout(180)
def test_dashboards_run_a_generation_workload_and_plot_it(qtbot, agent: AgentProcess,
                                                          artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("PySide6")
    pytest.importorskip("pyqtgraph")
    import gc

    from PySide6.QtCore import QCoreApplication, QEvent

    from studio.gui.jobs_qt import JobRunner
    from studio.gui.pages.dashboards_page import DashboardsPage
    from tests.gui.gui_helpers import shown

    jobs = JobRunner()
    page = shown(qtbot, DashboardsPage(jobs), 1400, 900, exposed=False)
    page.url_edit.setText(agent.url)
    page.model_edit.setText("qwen")
    page.level_edit.setText("2")
    page.duration.setValue(1.5)
    assert not page.workload_fields.prompt_edit.isEnabled()  # inference: no prompt
    page.workload.setCurrentText("generation")
    page.workload_fields.prompt_edit.setText("hello world")
    page.workload_fields.max_tokens.setValue(6)
    page.tier.setCurrentText("L1")
    page.start_runs()
    qtbot.waitUntil(lambda: bool(page.reports), timeout=90_000)
    qtbot.wait(300)
    rep = next(iter(page.reports.values()))
    assert rep.levels[0].generation is not None and rep.levels[0].generation.output_tokens > 0
    drawn = {(pid, s) for (pid, _t, s), n in page.plotted_series().items() if n > 0}
    assert ("generation", S.TTFT_P95) in drawn and ("generation", S.ITL_P95) in drawn
    assert ("tokens", S.OUTPUT_TPS) in drawn  # tok/s on an axis of its own, not the req/s one
    assert "TTFT p95" in page.verdict_label.text() and "output tok/s" in page.verdict_label.text()
    page.grab().save(str(artifacts_dir / "dashboards_generation.png"))
    # an empty prompt is refused in place, naming the field
    problems: list = []
    page.sig_problem.connect(problems.append)
    page.clear_targets()
    page.workload_fields.prompt_edit.setText("")
    page.start_runs()
    assert problems and problems[-1].location == "Prompt" and "prompt" in page.verdict_label.text()
    page.close()
    jobs.shutdown()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


def test_cli_bench_generate_json_text_and_bad_flags(agent: AgentProcess, tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    base = [sys.executable, "-m", "studio.cli.main", "bench", "--url", agent.url, "--model", "qwen",
            "--concurrency", "1", "--duration", "1", "--warmup", "0.2", "--window", "0.5", "--no-stability",
            "--no-collectors", "--quiet"]
    gen = ["--generate", "--prompt", "hello world", "--prompt", "a", "--max-tokens", "4",
           "--generate-param", "temperature=0"]
    out = subprocess.run([*base, *gen, "--json", "--sla", "L1", "--ttft-p95-ms", "60000", "--itl-p95-ms", "60000",
                          "--csv", str(tmp_path / "g.csv")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    g = d["levels"][0]["generation"]
    assert g["output_tokens"] > 0 and g["ttft"]["p95_ms"] > 0 and d["passed"] is True
    assert d["sla"]["budget"]["ttft_p95_ms"] == 60000
    header = (tmp_path / "g.csv").read_text().splitlines()[0].split(",")
    assert header[-5:] == ["ttft_p50_ms", "ttft_p95_ms", "inter_token_p50_ms", "inter_token_p95_ms",
                           "output_tokens_per_s"]
    text = subprocess.run([*base, *gen], capture_output=True, text=True, timeout=120)
    assert text.returncode == 0 and "generate: TTFT p50" in text.stdout and "output tok/s" in text.stdout
    for flags, offending in ((["--prompt", "x"], "--generate"), ([*gen, "--locust"], "--locust"),
                             (["--generate", "--max-tokens", "0"], "--max-tokens"),
                             (["--generate", "--model", "nope"], "--model")):
        bad = subprocess.run([*base, *flags], capture_output=True, text=True, timeout=60)
        assert bad.returncode != 0 and offending in bad.stderr, (flags, bad.stderr)


@pytest.mark.gui
@pytest.mark.timeout(180)
def test_devices_test_panel_streams_the_agents_answer(qtbot, agent: AgentProcess, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("PySide6")
    from studio.core.workspace import Workspace
    from studio.gui.pages.devices_page import DevicesPage
    from studio.triton.generate_client import generate_body, stream_generate
    from tests.gui.gui_helpers import shown

    # the client alone: the streamed pieces join to the agent's whole answer, usage and timings come back
    pieces: list[str] = []
    ans = stream_generate(agent.url, "qwen", generate_body("hello world", max_tokens=6), pieces.append)
    assert ans.text == "".join(pieces) and ans.tokens == ans.usage["completion_tokens"] >= 1
    assert ans.ttft_ms is not None and ans.ttft_ms <= ans.total_ms
    page = shown(qtbot, DevicesPage(), 1366, 768, exposed=False)
    page.set_context(Workspace.create(tmp_path / "ws"), None, None)
    page.timer.setInterval(500)
    page.add_server(agent.url, name="board")
    qtbot.waitUntil(lambda: page.snapshots.get("board") is not None and page.snapshots["board"].connected,
                    timeout=30_000)
    qtbot.waitUntil(lambda: page.infer_model.findText("qwen") >= 0, timeout=15_000)
    page.infer_model.setCurrentText("qwen")
    f = page.inference
    qtbot.waitUntil(f.gen_btn.isEnabled, timeout=15_000)  # the poll read qwen's metadata: a generation model
    page.infer_model.setCurrentText("mlp")
    assert not f.gen_btn.isEnabled() and "'mlp' is not a generation model" in f.gen_btn.toolTip()
    page.infer_model.setCurrentText("qwen")
    assert f.gen_btn.isEnabled()
    f.text.setText("hello world")
    f.max_tokens.setValue(6)
    f.gen_btn.click()
    qtbot.waitUntil(lambda: "tokens/s" in page.infer_out.toPlainText(), timeout=60_000)
    out = page.infer_out.toPlainText()
    assert "TTFT" in out and f"{ans.tokens} tokens" in out
    assert out.startswith(ans.text)  # greedy: the panel's stream is the answer the client got above
    # an image to a text-only model: the agent's 400 names the field, shown in place
    img = tmp_path / "x.png"
    img.write_bytes(b"\x89PNG\r\n\x1a\n")
    f.image.edit.setText(str(img))
    f.gen_btn.click()
    qtbot.waitUntil(lambda: "400" in page.infer_out.toPlainText(), timeout=30_000)
    assert "image" in page.infer_out.toPlainText()
    page.shutdown()
