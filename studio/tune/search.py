"""`studio optimize`: search the studio's fixes and the target's build options for the variant of each part that
builds with the target's own tool, keeps the accuracy budget against the FP32 original on the calibration
samples, and is best on the objective.

    rep = optimize_for_target(TuneOptions(Path("export"), "rk3588", parse_budget("cosine>=0.99")), job)

Rounds (studio.tune.candidates): the graph changes the findings ask for, then precisions on the best structure,
then block lists grown from the per-layer error. Candidates are judged two at a time in worker processes
(studio.tune.pool); the static verdict prunes before any build. The chosen variants, the recipe and the report
go to --out (written whole or not at all); the result is cached by model, samples, options and tool versions.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.core.errors import JobCancelled
from studio.core.jobs import JobState
from studio.tune import candidates as cands
from studio.tune.options import TuneOptions, check_options
from studio.tune.pool import Pool, TimeUp
from studio.tune.recipe import Recipe
from studio.tune.report import Candidate, PartResult, TuneReport
from studio.tune.source import Part, PartInfo


class _Search:
    """The state of one run: parts, their candidates, the pool, the clock."""

    def __init__(self, options: TuneOptions, job: JobState, work: Path, calibration: Path) -> None:
        self.o, self.job, self.work, self.calibration = options, job, work, calibration
        self.deadline = time.monotonic() + options.time_limit_min * 60
        self.pool = Pool(options.workers)
        self.parts: dict[str, tuple[Part, PartInfo, PartResult]] = {}
        self.ids = 0
        self.timed_out = False
        self.expected = 1
        self.done = 0

    # -- candidates ---------------------------------------------------------------------------------------
    def _candidate(self, part: str, recipe: Recipe, round_: str, layer_errors: bool = False) -> tuple[Candidate, Any]:
        from studio.tune.judge import Task

        p, _info, res = self.parts[part]
        if any(c.recipe == recipe.to_dict() for c in res.candidates):
            return None, None  # type: ignore[return-value]
        self.ids += 1
        cid = f"c{self.ids}"
        c = Candidate(id=cid, part=part, label=recipe.label(), recipe=recipe.to_dict(), round=round_)
        res.candidates.append(c)
        task = Task(id=cid, part=part, source=str(p.path), processor_dir=str(p.processor_dir), target=self.o.target,
                    recipe=recipe.to_dict(), calibration=str(self.calibration),
                    reference=str(self.work / part / "reference"), work=str(self.work / part / cid),
                    profile_dirs=[str(d) for d in self.o.profile_dirs] if self.o.profile_dirs else None,
                    layer_errors=layer_errors)
        return c, task

    def _on_done(self, j: Any) -> None:
        part = self.parts[j.part][2]
        c = next(c for c in part.candidates if c.id == j.id)
        c.judged, c.status = asdict(j), j.status
        c.meets_budget = c.status == "built" and self.o.budget.met(c.accuracy_value(self.o.budget.metric))
        self.done += 1
        self.job.set_partial("candidate", c)
        self.job.set_progress(90.0 * self.done / max(self.expected, self.done + 1))
        acc = c.accuracy_value(self.o.budget.metric)
        verdict = (c.judged.get("verdict") or {}).get("verdict")
        # a status line per candidate: the CLI prints each as it comes, the GUI shows the latest
        rest = ((f" ({verdict})" if verdict else "")
                + (f", {self.o.budget.metric} {acc:.6g}" if acc is not None else "")
                + (f": {c.judged.get('error', '')[:120]}" if c.status != "built" else ""))
        self.job.set_status(_status_line(c.part, c.id, c.label, c.status, rest))

    def run_round(self, pairs: list[tuple[Candidate, Any]], name: str) -> None:
        pairs = [(c, t) for c, t in pairs if c is not None]
        if not pairs:
            return
        if self.timed_out or time.monotonic() > self.deadline:
            self.timed_out = True
            for c, _t in pairs:
                c.status = "skipped"
                c.judged = {"error": "the time limit passed before it was judged"}
            return
        self.expected = self.done + len(pairs) + 2
        self.job.set_status(f"{name}: judging {len(pairs)} candidate(s) with {self.o.target}'s tool")
        try:
            self.pool.run([t for _c, t in pairs], self.job, self.deadline, self._on_done)
        except TimeUp:
            self.timed_out = True
            for c, _t in pairs:
                if c.status == "queued":
                    c.status = "skipped"
                    c.judged = {"error": "stopped at the time limit"}

    # -- rounds -------------------------------------------------------------------------------------------
    def structures(self) -> None:
        pairs = []
        for name, (_p, info, _res) in self.parts.items():
            first = cands.allowed(self.o.target, self.o.precisions)[0]
            for r in cands.structures(info, self.o.target):
                r = cands.apply_precision(r, self.o.target, first)
                # a reduced precision forced from the start: its per-layer error names the blocking layers
                pairs.append(self._candidate(name, r, "structure", layer_errors=r.precision != "fp32"))
        self.run_round(pairs, "graph changes")

    def _best_structure(self, res: PartResult) -> Candidate | None:
        """The structure the precisions are tried on: the one the final choice would rank first at this precision."""
        from studio.tune.output import rank_key

        built = [c for c in res.candidates if c.status == "built" and c.round == "structure"]
        if not built:
            return None
        objective = "npu-coverage" if self.o.objective == "host-latency" else self.o.objective  # not timed yet
        return max(built, key=lambda c: rank_key(c, objective, self.o.budget, res.static_needed))

    def precisions(self) -> None:
        pairs = []
        for name, (_p, _info, res) in self.parts.items():
            best = self._best_structure(res)
            if best is None:
                continue
            base = Recipe.from_dict(best.recipe)
            for prec in cands.allowed(self.o.target, self.o.precisions)[1:]:
                r = cands.apply_precision(base, self.o.target, prec)
                pairs.append(self._candidate(name, r, "precision", layer_errors=r.precision != "fp32"))
        self.run_round(pairs, "precisions")

    def block_lists(self) -> None:
        floats = {"fp32", "fp16"} & set(cands.allowed(self.o.target, self.o.precisions))
        if not floats:
            return  # only int8 allowed: no layer may stay float
        pairs = []
        for name, (_p, _info, res) in self.parts.items():
            for c in [c for c in res.candidates if c.round == "precision" and c.status == "built"
                      and not c.meets_budget]:
                r = Recipe.from_dict(c.recipe)
                if r.precision == "int8":
                    continue  # ORT's dynamic int8 has no block list: keep_fp32 is fp16's and int8-static's
                if r.build == "int8":
                    for th in cands.hybrid_thresholds(self.o.budget):
                        pairs.append(self._candidate(name, replace(r, auto_hybrid=th, notes=(
                            f"rknn-toolkit2 auto_hybrid: layers under cosine {th:g} kept fp16",)), "block-list"))
                    continue
                rows = c.judged.get("layer_errors") or []
                for step in sorted({max(1, len(rows) // 4), max(1, len(rows) // 2), len(rows)}):
                    grown = cands.grow_block_list(r, rows, step)
                    if grown is not None:
                        pairs.append(self._candidate(name, grown, "block-list"))
        self.run_round(pairs, "block lists")


def optimize_for_target(options: TuneOptions, job: JobState | None = None) -> TuneReport:
    """The search as a job (progress, cancel, partial results: ``job.partial["candidate"]``)."""
    from studio.tune import cache, output
    from studio.tune.evaluate_api import get_evaluator
    from studio.tune.source import find_parts, part_info, reference, sample_dims, synthetic_calibration

    job = job or JobState(name="optimize")
    t_all = time.perf_counter()
    check_options(options)
    parts = find_parts(options.model, options.parts)
    out = output.resolve_out(options)
    evaluator = get_evaluator(options.target)
    tool = evaluator.available()[1]
    tools = cache.tool_versions(tool)
    key = cache.cache_key(parts, options.calibration, options.to_key(), tools)
    if options.use_cache:
        hit = cache.lookup(key)
        if hit is not None:
            job.set_status("the same model, samples, options and tools were optimized before: cached result")
            return output.restore(hit, out, key)
    work = Path(tempfile.mkdtemp(prefix="studio-optimize-"))
    try:
        rep = TuneReport(model=str(options.model), target=options.target, budget=str(options.budget),
                         objective=options.objective, time_limit_min=options.time_limit_min, out=str(out),
                         tools={"judge": tool, "reference": "", **{k: v for k, v in tools.items() if k != "evaluator"}},
                         cache_key=key)
        if options.calibration is None:
            calibration = synthetic_calibration(work / "calibration-samples")
            rep.warnings.append(N_("no --calibration: 6 seeded synthetic images and texts stand in for real inputs; "
                                   "the accuracy figures say little about real data"))
        else:
            calibration = Path(options.calibration).resolve()
        rep.calibration = str(calibration)
        search = _Search(options, job, work, calibration)
        job.set_status("reading the calibration samples and the FP32 original's outputs")
        sources = []
        for p in parts:
            from studio.core.errors import InputError
            from studio.optimize.calibration import calibration_feeds

            try:
                cal = calibration_feeds(calibration, p.path, processor_dir=p.processor_dir)
            except InputError as exc:
                if options.parts or len(parts) == 1:
                    raise
                # a part fed by the others' outputs (a split export's fusion head): no raw sample makes its inputs
                name, reason = p.name, exc.message
                rep.warnings.append(N_(f"part '{name}' not optimized: {reason} (name it with --part and give .npz "
                                       "samples of its inputs to optimize it)"))
                continue
            dims = sample_dims(p.path, cal.feeds)
            rep.tools["reference"] = reference(p, cal.feeds, work / p.name / "reference")
            info = part_info(p, options.target, dims, options.profile_dirs)
            res = PartResult(part=p.name, source=str(p.path), dims=dims, findings=info.findings,
                             reference_by=rep.tools["reference"],
                             static_needed=options.target in cands.NEEDS_STATIC or info.dynamic_risky)
            rep.parts.append(res)
            search.parts[p.name] = (p, info, res)
            sources.append(cal.source)
        if not rep.parts:
            from studio.core.errors import InputError

            raise InputError(f"no part of {options.model} can be fed from {calibration}", offending=str(calibration),
                             hint="give images / texts / .wav the model's processor reads, or .npz samples named "
                                  "like its inputs")
        rep.calibration_source = "; ".join(dict.fromkeys(sources))
        t0 = time.perf_counter()
        try:
            search.structures()
            search.precisions()
            search.block_lists()
        except BaseException:  # a cancel, Ctrl+C, a bug: the workers (own process groups) and their tools go too
            search.pool.stop()
            raise
        search.pool.close()
        rep.timings["search"] = round(time.perf_counter() - t0, 2)
        if search.timed_out:
            minutes = f"{options.time_limit_min:g}"
            rep.warnings.append(N_(f"the time limit ({minutes} min) passed: candidates not judged are marked "
                                   "skipped; the result is the best of those judged"))
        output.finish(rep, search.parts, options, evaluator, calibration, job)
        rep.seconds = round(time.perf_counter() - t_all, 2)
        output.write(rep, search.parts, out, options, calibration, job)
        cache.store(key, out)
        return rep
    except JobCancelled:
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _status_line(part: str, cid: str, label: str, status: str, rest: str) -> str:
    """``[part] id label: status...``, one template per status word (studio.core.catalogue.N_), so the
    catalogue has a word to match and a zh_CN line says the status in Chinese; ids and labels as they are."""
    lines = {"built": N_(f"[{part}] {cid} {label}: built{rest}"),
             "pruned": N_(f"[{part}] {cid} {label}: pruned{rest}"),
             "failed": N_(f"[{part}] {cid} {label}: failed{rest}"),
             "crashed": N_(f"[{part}] {cid} {label}: crashed{rest}"),
             "error": N_(f"[{part}] {cid} {label}: error{rest}")}
    return lines.get(status) or f"[{part}] {cid} {label}: {status}{rest}"
