"""A session's job: load and analyse the data, then solve each planned run on each seed.

It runs on the session's worker thread (:class:`cdlab.ui.runner.Worker`) and
reads only a frozen :class:`Settings`, never the live state object, so the
user may change the page while it runs.
"""
from __future__ import annotations

from dataclasses import dataclass

from .analysis import analyse
from .runner import Budget, replay, run_one
from .warmup import WARMUP

FINAL = ("converged", "max_passes", "max_time", "diverged")


@dataclass(frozen=True)
class Settings:
    """A frozen copy of the inputs a job needs (the worker never reads params)."""

    data_key: tuple
    loss: str
    lam_rule: str
    log10_lam: float
    l1: float
    budget: Budget
    need_p_star: bool


class Job:
    """Load, analyse, then solve each planned run (in the worker thread). ``publish(live)`` shows what
    the job has so far; the worker publishes once more when the job returns."""

    def __init__(self, settings: Settings, runs, solve=True):
        self.settings, self.runs, self.solve = settings, runs, solve

    def __call__(self, live, cancel, publish):
        s = self.settings
        with live.lock:
            live.phase = "loading data and computing P*" if s.need_p_star else "loading data"
        publish(live)
        try:
            analysis = analyse(s, self.runs, s.need_p_star)
        except (ValueError, RuntimeError) as exc:
            with live.lock:
                live.error, live.phase = str(exc), "error"
            return
        todo = [r for r in self.runs if r.label not in analysis.refusals]
        seeds = s.budget.seed_list
        with live.lock:
            live.seeds = len(seeds)
            for run in self.runs:
                if run.label in analysis.refusals:
                    live.status[run.label] = "refused"
                    live.message[run.label] = analysis.refusals[run.label]
                elif self.solve:
                    live.status[run.label] = "queued"
            live.phase = "ready" if not self.solve else "running"
        # what the cache holds comes with the analysis, in one update; only the rest is solved. The
        # analysis goes into ``live`` after the replays: an update applied meanwhile (the page's
        # "loading data" one may run now) shows no half-replayed runs, which the next would redraw
        jobs = [] if not self.solve else [
            (seed, run) for seed in seeds for run in todo
            if not replay(analysis.problem_key, run, s.budget, seed, live)]
        with live.lock:
            live.analysis = analysis
        if jobs:  # else the worker's last update, right after this one, shows it all: one update, not two
            publish(live)
        if not self.solve:
            return
        if jobs and WARMUP.started and not WARMUP.finished.is_set():
            # a compiling thread holds the GIL for long stretches: runs timed meanwhile would count it
            with live.lock:
                live.phase = "waiting for numba's kernels to compile (solver seconds never include compilation)"
            publish(live)
            WARMUP.wait(cancel)
        # seed by seed: every curve appears on the first seed, the later seeds add its spread
        for k, (seed, run) in enumerate(jobs):
            if cancel.is_set():
                break
            with live.lock:
                live.phase = f"running {run.label}, seed {seed} ({k + 1}/{len(jobs)})"
            publish(live)
            run_one(analysis.problem, analysis.problem_key, run, s.budget, seed, live, cancel, publish)
        with live.lock:
            if cancel.is_set():
                for run in todo:
                    if live.status.get(run.label) in ("queued", "running"):
                        live.status[run.label] = "cancelled"
                live.phase = "cancelled"
            else:
                live.phase = "finished"
