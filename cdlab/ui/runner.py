"""Run plans and the background worker that streams solver checkpoints.

A session owns one :class:`Worker`. ``Worker.start(job)`` cancels the job
running before it, and runs the new one on a daemon thread (never on the
server's event loop, so the page stays responsive): load the data, analyse it
(face-off quantities, bounds), then solve each planned run through
``cdlab.timing.warm_solve`` (``cdlab.solve`` re-run when it compiled numba
kernels, so no compile time is ever shown or cached as solver seconds) on
each of the budget's seeds; the per-checkpoint callback appends rows, tagged
with their seed, to a :class:`Live` record. ``publish`` — given by the session — is called at most a
few times a second with that record; in a served app it schedules the UI
update on the session's event loop (``pn.state.execute``).
"""
from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..solvers import FACEOFF_OPTIONS, METHODS
from ..solvers.budget import Budget as SolverBudget
from ..timing import warm_solve
from ..verdict import SEED
from .cache import LRUCache

BOTH = "uniform + importance"
# the page's own sampling, for a method that takes custom probabilities: p ∝ ‖·‖² (squared_norm_probabilities);
# "weighted" is SPDC's Algorithm 2, a method's own sampling
SQUARED_NORM = "squared_norm"
SAMPLING_ORDER = ("uniform", "importance", SQUARED_NORM, "weighted", "permutation", "cyclic")
PUBLISH_EVERY = 0.25  # seconds between UI updates while a run streams

_RESULTS = LRUCache(maxsize=512)  # finished warm traces of one seed, keyed on primitives only
SEVERITY = ("diverged", "max_time", "max_passes", "converged")  # a run's status: its worst seed's


@dataclass(frozen=True)
class RunSpec:
    """One curve: a method, its sampling and its mini-batch size."""

    method: str
    sampling: str = "uniform"
    batch_size: int = 1

    @property
    def label(self) -> str:
        extra = f", m={self.batch_size}" if self.batch_size > 1 else ""
        return f"{self.method} ({self.sampling}{extra})"

    @property
    def options(self) -> dict:
        """The run's options: the face-off's own for its two methods (dual_cd as Algorithm 2 prints it)."""
        batch = {"batch_size": self.batch_size} if self.batch_size > 1 else {}
        return {**FACEOFF_OPTIONS.get(self.method, {}), **batch}


def sampling_choices(method: str) -> list:
    """The samplings the dashboard offers for a method, from its MethodSpec."""
    spec = METHODS[method]
    have = set(spec.samplings) | ({SQUARED_NORM} if "custom" in spec.samplings else set())
    names = [s for s in SAMPLING_ORDER if s in have]
    names += sorted(have - set(SAMPLING_ORDER) - {"custom"})
    if "uniform" in have and "importance" in have:
        names.append(BOTH)
    return names


def plan(methods, samplings, batch_sizes) -> list:
    """The list of RunSpec for the chosen methods (BOTH expands to two runs)."""
    runs = []
    for m in methods:
        if m not in METHODS:
            continue
        s = samplings.get(m, "uniform")
        b = max(1, int(batch_sizes.get(m, 1)))
        for one in (("uniform", "importance") if s == BOTH else (s,)):
            runs.append(RunSpec(m, one, b))
    return runs


def squared_norm_probabilities(norms_sq):
    """p ∝ ‖·‖² (the coordinate-wise Lipschitz weights without the λγn term of
    face-off eq. 14); a tiny floor keeps every probability > 0 on zero rows."""
    w = np.asarray(norms_sq, dtype=float)
    w = w + 1e-9 * max(float(w.mean()), 1e-300)
    return w / w.sum()


def sampling_argument(run: RunSpec, problem):
    """What ``cdlab.solve`` takes for the run's sampling (an array for SQUARED_NORM)."""
    if run.sampling != SQUARED_NORM:
        return run.sampling
    features = METHODS[run.method].axis == "features"
    return squared_norm_probabilities(problem.col_norms_sq if features else problem.row_norms_sq)


# a run stops (Cancel, the time budget) only between steps: the page refuses a method whose one step is
# predicted (MethodSpec.step_ns, with the run's options) to take longer than this (newton's iteration: a d × d
# Hessian and its factor, or its CG inner solve)
STEP_SECONDS = 1.0
# the step predictions are central estimates (benchmarks/auto_calibration.py): measured steps took up to 1.8×
# their prediction (Newton–CG on w8a); the page refuses what may take STEP_SECONDS at that error
STEP_MODEL_SLACK = 2.0


def check(run: RunSpec, problem):
    """None if the run can go, else the reason (MethodSpec.check's message)."""
    spec = METHODS.get(run.method)
    if spec is None:
        return f"method {run.method!r} is not available in this server"
    if run.batch_size > 1 and not spec.batch:
        return f"method {run.method!r} has no mini-batch variant; set its batch size to 1"
    try:
        spec.check(problem, sampling_argument(run, problem), run.options)
        if run.batch_size > problem.n_samples:
            raise ValueError(f"batch size {run.batch_size} exceeds the {problem.n_samples} examples")
    except ValueError as exc:
        return str(exc)
    seconds = 0.0 if spec.step_ns is None else spec.step_ns(problem, run.options) * 1e-9
    if seconds * STEP_MODEL_SLACK > STEP_SECONDS:
        return (f"one step of {run.method!r} is predicted to take {seconds:.2g} s on these data (up to "
                f"{seconds * STEP_MODEL_SLACK:.2g} s at the prediction's measured error; {spec.source}), and "
                f"a run stops only between steps: the page, which answers Cancel within {STEP_SECONDS:g} s, does "
                f"not run it here (cdlab.solve does; sdca steps are cheap)")
    return None


# The page's defaults: shorter and looser than cdlab.solve's, the page being interactive.
PAGE_DEFAULTS = SolverBudget(max_passes=30.0, tol=1e-7, max_time=20.0)


@dataclass(frozen=True)
class Budget:
    """The page's budget: each run's solver budget, repeated on ``seeds`` seeds from ``seed`` on."""

    max_passes: float = PAGE_DEFAULTS.max_passes
    tol: float = PAGE_DEFAULTS.tol
    seed: int = 0
    max_time: float = PAGE_DEFAULTS.max_time
    seeds: int = 3

    def solver(self) -> SolverBudget:
        """What one run on one seed stops on."""
        return SolverBudget(max_passes=self.max_passes, tol=self.tol, max_time=self.max_time,
                            eval_every=self.eval_every)

    @property
    def seed_list(self) -> tuple:
        """The seeds each run is repeated on: seed, seed + 1, …"""
        return tuple(range(int(self.seed), int(self.seed) + max(1, int(self.seeds))))

    @property
    def eval_every(self) -> float:
        # ~60 checkpoints per curve: smooth enough to read, few enough that the
        # O(nnz) checkpoint evaluations stay a small part of the run
        return max(0.05, self.max_passes / 60.0)


@dataclass
class Live:
    """What a job has produced so far; written by the worker under ``lock``."""

    runs: list
    lock: threading.Lock = field(default_factory=threading.Lock)
    phase: str = "starting"
    analysis: object = None
    rows: dict = field(default_factory=dict)  # label -> list of dict rows
    status: dict = field(default_factory=dict)  # label -> "queued"|"running"|status|"refused"|"error"
    message: dict = field(default_factory=dict)  # label -> text
    seed_status: dict = field(default_factory=dict)  # (label, seed) -> (status, message, from cache?)
    cached: set = field(default_factory=set)
    seeds: int = 1  # seeds per run in this job
    done: bool = False
    error: str = ""

    def snapshot(self):
        with self.lock:
            traces = {k: pd.DataFrame(v) for k, v in self.rows.items() if v}
            return (self.phase, self.analysis, traces, dict(self.status), dict(self.message), self.done,
                    self.error, set(self.cached))


def run_key(problem_key, run: RunSpec, budget: Budget, seed: int):
    return (problem_key, run.method, run.sampling, run.batch_size, int(seed), float(budget.max_passes),
            float(budget.tol), float(budget.max_time))


class Worker:
    """One background thread per session at a time; ``start`` supersedes."""

    def __init__(self):
        self._thread = None
        self._cancel = None
        self.live = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, job, publish):
        """Run ``job(live, cancel, publish)`` in the background; returns its Live."""
        previous, prev_cancel = self._thread, self._cancel
        if prev_cancel is not None:
            prev_cancel.set()
        cancel = threading.Event()
        live = Live(runs=list(getattr(job, "runs", [])))
        self._cancel, self.live = cancel, live

        def target():
            if previous is not None:
                previous.join()  # one solver thread per session: cores are shared
            try:
                job(live, cancel, publish)
            except Exception as exc:  # shown in the page; the session goes on
                with live.lock:
                    live.error = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
            finally:
                with live.lock:
                    live.done = True
                publish(live)

        self._thread = threading.Thread(target=target, name="cdlab-ui-worker", daemon=True)
        self._thread.start()
        return live

    def cancel(self):
        if self._cancel is not None:
            self._cancel.set()

    def abandon(self):
        """Cancel the running job and ignore what it still publishes (its settings were replaced)."""
        self.cancel()
        self.live = None

    def join(self, timeout=None):
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running


def replay(problem_key, run: RunSpec, budget: Budget, seed: int, live: Live) -> bool:
    """Put the cached finished seed of a run into ``live`` (False: the cache has none)."""
    hit = _RESULTS.get(run_key(problem_key, run, budget, seed))
    if hit is None:
        return False
    with live.lock:
        live.rows.setdefault(run.label, []).extend(dict(r, **{SEED: seed}) for r in hit[0].to_dict("records"))
        live.seed_status[(run.label, seed)] = (hit[1], hit[2], True)
        _summarise(live, run.label)
    return True


def run_one(problem, problem_key, run: RunSpec, budget: Budget, seed: int, live: Live, cancel, publish):
    """Solve one planned run on one seed, streaming its rows (tagged with the seed) into ``live``,
    or replay the cache. Only a warm run is cached: one that still compiled is shown with a note."""
    label = run.label
    key = run_key(problem_key, run, budget, seed)
    if replay(problem_key, run, budget, seed, live):
        return
    with live.lock:
        live.status[label] = "running"
        live.rows.setdefault(label, [])
    last = [0.0]

    def on_row(row):
        with live.lock:
            live.rows[label].append(dict(row, **{SEED: seed}))
        now = time.monotonic()
        if now - last[0] >= PUBLISH_EVERY:
            last[0] = now
            publish(live)

    def on_retime():
        with live.lock:  # the compiling run's seconds are not solver seconds: its rows go, the warm run's come
            live.rows[label] = [r for r in live.rows[label] if r[SEED] != seed]
            live.phase = f"re-timing {label}, seed {seed}, warm (its first run compiled numba kernels)"
        publish(live)

    try:
        res = warm_solve(problem, on_retime=on_retime, method=run.method, sampling=sampling_argument(run, problem),
                         seed=seed, callback=on_row, cancel=cancel, **budget.solver().kwargs(), **run.options)
    except ValueError as exc:
        with live.lock:
            live.status[label], live.message[label] = "refused", str(exc)
        return
    trace = res.trace
    message = res.message
    if trace.attrs["compiled"]:
        message = ("its seconds include numba compilation (the kernels compiled again when re-run)"
                   + (f"; {message}" if message else ""))
    with live.lock:
        live.rows[label] = [r for r in live.rows[label] if r[SEED] != seed]
        live.rows[label].extend(dict(r, **{SEED: seed}) for r in trace.to_dict("records"))
        live.seed_status[(label, seed)] = (res.status, message, False)
        _summarise(live, label)
    if res.status in ("converged", "max_passes", "diverged") and not trace.attrs["compiled"]:
        _RESULTS.put(key, (trace, res.status, res.message))


def _summarise(live: Live, label: str):
    """A run's status and message from its seeds' (call with the lock held): 'running' until every
    seed of the job has finished, then its worst seed's status, and which seeds ended how."""
    seeds = {s: v for (lab, s), v in live.seed_status.items() if lab == label}
    if len(seeds) < live.seeds:
        live.status[label] = "running"
        live.message[label] = f"{len(seeds)} of {live.seeds} seeds done"
        return
    statuses = {v[0] for v in seeds.values()}
    live.status[label] = next((st for st in SEVERITY if st in statuses), sorted(statuses)[0])
    notes = []
    if len(statuses) > 1:
        notes.append("; ".join(f"seed {s}: {v[0]}" for s, v in sorted(seeds.items())))
    notes += sorted({v[1] for v in seeds.values() if v[1]})
    live.message[label] = "; ".join(notes)
    if all(v[2] for v in seeds.values()):
        live.cached.add(label)
