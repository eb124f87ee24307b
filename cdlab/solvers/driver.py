"""``cdlab.solve``: the chunked loop every method runs in (design.md).

The kernel runs a chunk of steps (timed); the driver then evaluates the
checkpoint — P(w), D(α), the gap — outside the timed region, records a trace
row, reports progress, and applies the stopping rule. One loop gives every
method progress bars, cancellation, live curves, divergence detection and
honest timings.
"""
from __future__ import annotations

import functools
import inspect
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._checks import check_real
from ._kernels import all_finite, any_nonzero, certificate_sweep, full_rows, parallel_certificate_sweep, row_arrays
from ._threads import check_n_jobs, parallel_section, row_blocks
from .base import METHODS, STAGED_COLUMN, TRACE_COLUMNS, Result, get_method
from .budget import AUTO, Budget
from .costs import auto_cap

# Divergence, reported rather than drawn as a curve: non-finite iterates, or the
# objective a method optimises moving DIVERGENCE_FACTOR × (|P(w₀)| + 1) the wrong
# way — P(w) above it for primal and primal-dual methods, D(α) that far below
# D(α₀) for dual methods. A dual method's primal point w(α) = Xᵀα/(λn) is a
# by-product: on badly scaled rows P(w(α)) can be huge while D(α) climbs
# steadily, which is slow convergence (the gap says so), not divergence.
DIVERGENCE_FACTOR = 1e6
# The trace keeps at most this many rows (+ the last one): past it, every
# other stored row is dropped and later checkpoints are stored half as often
# (rows stay evenly spaced, the first and the last are always kept). The
# checkpoint cadence itself, and so the stopping rule and the callback, are
# unchanged.
MAX_TRACE_ROWS = 10_000
# A state whose measured work per step exceeds what its ``steps_per_pass``
# declares by more than this factor is sized by the measured rate instead.
RATE_SLACK = 2.0
# A chunk runs in slices of at most about this many nonzeros, a ``cancel`` event
# and max_time checked between them: a checkpoint interval on millions of
# nonzeros takes seconds, a cancelled run stops within a slice (tens of
# milliseconds). The slices depend on the data only, never on a clock or on
# ``cancel``, so equal seeds still give equal traces (a sampler's draws depend
# on how a chunk is cut).
SLICE_NNZ = 2_000_000


def _checkpoint(problem, w, alpha, n_jobs=1, sums=None):
    """(α, P(w), D(α), gap, Xw, v(α)); α = α(w) when the state reports none, Xw and v None with lam = 0. With
    lam > 0, Xw and Xᵀα come from one pass over X (``_kernels.certificate_sweep``; with
    n_jobs > 1 its parallel form over n_jobs row blocks), or from the state's own
    sweep (``sums`` = (α(w), Xw, Xᵀα): ``State.certificate_sums``), or without a
    pass at w = 0 and α = 0 (a dual or primal-dual method's start), and Problem
    turns them into the certificates; with lam = 0 there is no dual."""
    if problem.lam <= 0:
        if alpha is None:
            alpha = problem.alpha_from_w(w)
        return alpha, problem.primal(w), -np.inf, np.inf, None, None
    if sums is not None:
        alpha, z, v = sums
        v /= problem.lam * problem.n_samples
        return (alpha, *problem.certificates(w, alpha, z=z, v=v, alpha_from_w=True), z, v)
    from_w = alpha is None
    if from_w:
        alpha = np.empty(problem.n_samples)
    z = np.zeros(problem.n_samples)
    v = np.zeros(problem.n_features)
    if from_w or any_nonzero(w) or any_nonzero(alpha):  # else a dual start: Xw = Xᵀα = 0 without a pass over X
        args = (*row_arrays(problem), problem.y, problem.loss_code, problem.s, w, alpha, from_w, z, v)
        if n_jobs == 1:
            certificate_sweep(*args, full_rows(problem))
        else:
            with parallel_section(n_jobs):
                parallel_certificate_sweep(*args, row_blocks(problem.X.indptr, n_jobs), full_rows(problem))
        v /= problem.lam * problem.n_samples
    return (alpha, *problem.certificates(w, alpha, z=z, v=v, alpha_from_w=from_w), z, v)


def cancels(value) -> bool:
    """The callback rule: a returned value cancels the run iff it is not None and false.

    ``None`` (no return statement) continues; ``False``, ``np.False_``, ``0``
    and anything else whose ``bool()`` is False cancel; true values continue.
    A value without a truth value (e.g. an array of several elements) is refused."""
    if value is None:
        return False
    try:
        return not bool(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"a callback must return None or a truth value (False cancels the run), got "
                        f"{type(value).__name__}: {exc}") from None


def divergence_advice(spec) -> str:
    """What to try when ``spec``'s method diverges, in terms of the options it has."""
    if spec.advice:
        return spec.advice
    steps = [name for name in ("step_size", "schedule", "eta0") if name in spec.options]
    if steps:
        return "try a smaller step (option " + " or ".join(repr(s) for s in steps) + ")"
    return (f"{spec.name} has no step size to reduce: its updates depend only on the data, so check their "
            "scale (a huge ‖x_i‖²/(λn) or λ strains floating point; normalizing the rows usually helps)")


def _halted(stop, deadline) -> bool:
    """Whether the run is cancelled (``stop``) or the clock (time.perf_counter) has passed ``deadline``
    (None: no deadline)."""
    return stop.is_set() or (deadline is not None and time.perf_counter() >= deadline)


def _run_sliced(state, steps, size, stop, deadline=None):
    """``state.run(steps)`` in slices of ``size`` steps, stopping early once ``stop`` is set
    or the clock (time.perf_counter) passes ``deadline`` (None: no deadline)."""
    done = 0
    while done < steps:
        part = min(size, steps - done)
        state.run(part)
        done += part
        if _halted(stop, deadline):
            return


def prepare(problem, method="sdca", sampling="uniform", max_passes=Budget.max_passes, tol=Budget.tol, seed=0,
            callback=None, max_time=Budget.max_time, eval_every=Budget.eval_every, cancel=None,
            max_steps=Budget.max_steps, n_jobs=1, **options) -> "Run":
    """Check every argument of a run (cheap, no work on the data) and return it ready to
    :meth:`~Run.execute`. The arguments are :func:`solve`'s but ``reference``."""
    spec = get_method(method)
    options = spec.current_names(options)
    n_jobs = check_parallel(spec, n_jobs)
    spec.check(problem, sampling, options)
    budget = Budget(max_passes=max_passes, max_steps=max_steps, max_time=max_time, tol=tol, eval_every=eval_every)
    budget.check(problem)
    stop = _Stop(callback, cancel)
    try:
        rng = np.random.default_rng(seed)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"seed must be None or a non-negative integer, got {seed!r} ({exc})") from None
    return Run(problem, spec, sampling, budget, stop, rng, {**spec.options, **options}, n_jobs)


def check_parallel(spec, n_jobs) -> int:
    """n_jobs for ``spec``'s method: an integer ≥ 1, and 1 unless the method has a parallel mode."""
    n_jobs = check_n_jobs(n_jobs)
    if n_jobs > 1 and not spec.parallel:
        raise ValueError(f"method {spec.name!r} has no parallel mode, so n_jobs must be 1, got {n_jobs}; "
                         f"methods with one: {parallel_methods()}")
    return n_jobs


def parallel_methods() -> list:
    """The methods that take n_jobs > 1 (their state takes ``n_jobs``: ``MethodSpec.parallel``)."""
    return sorted(name for name, spec in METHODS.items() if spec.parallel)


def solve(problem, method="sdca", sampling="uniform", *, reference=None, **kwargs):
    """Run ``method`` on ``problem`` and return a :class:`~cdlab.solvers.base.Result`.

    Parameters
    ----------
    problem : cdlab.Problem
    method : str, a name in ``cdlab.METHODS``.
    sampling : str or array of probabilities (what the method supports).
    max_passes, max_steps, max_time, tol, eval_every : the run's
        :class:`~cdlab.solvers.budget.Budget` (passes, steps, seconds, gap,
        checkpoint interval in passes or "auto"); the defaults are its. The
        default ``eval_every="auto"`` spaces checkpoints geometrically and aims
        them at the pass where the gap reaches tol (SDCA and dual CD on one
        thread without shrinking: where a sampled gap estimate says it may
        have, ``_gap_estimate``; with shrinking, also after an epoch whose
        Σ|PG| is at most n·tol, ``_shrinking``; Newton: after its due
        steps): give a number
        for a curve with regular checkpoints. The trace keeps
        at most ``MAX_TRACE_ROWS`` + 1 rows (older rows thinned evenly beyond
        that). The trace's ``time`` column counts solver time only.
    seed : int, seeds the run's only random generator: equal seeds give equal
        traces (every column but ``time``).
    callback : callable(row: dict) -> object, called at every checkpoint
        with a copy of the trace row. A returned value ``v`` cancels the run
        iff ``v is not None and not bool(v)`` (False, ``np.False_``, 0, ...);
        ``None`` and true values continue (:func:`cancels`).
    reference : float or None, P* for the ``subopt`` column (``cdlab.solve``
        also takes True, read by :func:`cdlab.reference.resolve_reference`).
    cancel : object with ``is_set()`` (e.g. ``threading.Event``); cancels
        the run when set: it is checked at every checkpoint and between slices
        of about ``SLICE_NNZ`` nonzeros within a checkpoint interval (a run
        cancelled mid-interval records its last row there).
    n_jobs : int ≥ 1, threads: > 1 runs a method's parallel mode (``parallel_methods()``:
        SDCA and dual CD, as PASSCoDe-Wild, ``cdlab.solvers.dual_cd``; newton, as BLAS threads on its
        Cholesky path and row blocks on its CG path where X has at least ``newton.CG_PARALLEL_MIN_NNZ``
        nonzeros) and the checkpoints' certificate pass over n_jobs row blocks (newton's CG path: its own
        sweep's); still certified, but not bit for bit the serial run (row blocks sum in another order than
        one thread) and, for SDCA and dual CD, not reproducible (thread timing decides which lock-free
        updates race). 1: the serial kernels, reproducible from the seed.
    **options : method options (see ``cdlab.METHODS[method].options``).
    """
    run = prepare(problem, method, sampling, **kwargs)
    return run.execute(reference)


# the keywords of solve: prepare's, and reference
SOLVE_ARGS = frozenset(name for name, par in inspect.signature(prepare).parameters.items()
                       if par.kind is par.POSITIONAL_OR_KEYWORD) | {"reference"}


@dataclass
class Run:
    """A checked run (:func:`prepare`): the method, its sampling, budget, stop channel, generator and options."""

    problem: object
    spec: object
    sampling: object
    budget: Budget
    stop: "_Stop"
    rng: np.random.Generator
    options: dict
    n_jobs: int = 1

    def execute(self, reference=None) -> Result:
        """Build the state, run the loop to a stopping rule and return the Result.
        ``reference``: P* (a finite number) or None."""
        if reference is not None:
            reference = check_reference(reference)
        problem, spec = self.problem, self.spec
        clock = time.perf_counter()  # max_time counts from here: construction, steps, checkpoints, callbacks
        threads = {"n_jobs": self.n_jobs} if spec.parallel else {}
        state = spec.make(problem, self.sampling, self.rng, **self.options, **threads)
        trace = _Trace(problem, state, reference, self.n_jobs, self.budget.tol)
        status = _loop(problem, state, spec.kind, self.budget, self.stop, trace, clock)
        message = divergence_message(spec, state.steps) if status == "diverged" else ""
        frame = trace.frame()
        frame.attrs.update(method=spec.name, status=status, message=message, reference=reference, n_jobs=self.n_jobs)
        return Result(w=trace.w, alpha=trace.alpha, trace=frame, method=spec.name,
                      sampling=self.sampling, status=status, options=self.options, message=message)


def check_reference(value) -> float:
    """A given P*: a finite real number, as float."""
    return check_real("reference", value)


class _Stop:
    """The run's one cancellation channel: set by a callback's cancelling answer
    (:func:`cancels`) or by the ``cancel`` object, read by the loop and between slices."""

    def __init__(self, callback, cancel):
        if callback is not None and not callable(callback):
            raise ValueError(f"callback must be callable or None, got {type(callback).__name__}")
        if cancel is not None and not callable(getattr(cancel, "is_set", None)):
            raise ValueError(f"cancel must have an is_set() method (e.g. threading.Event), got "
                             f"{type(cancel).__name__}")
        self.callback, self.cancel, self.asked = callback, cancel, False

    def checkpoint(self, row):
        """Show the callback a copy of the row (what it writes cannot reach the trace or the stopping rule)."""
        if self.callback is not None and cancels(self.callback(dict(row))):
            self.asked = True

    def is_set(self) -> bool:
        return self.asked or (self.cancel is not None and self.cancel.is_set())


class _Trace:
    """The checkpoints: evaluation of P, D and the gap, and the stored rows (at most
    MAX_TRACE_ROWS + 1: checkpoints 0, stride, 2·stride, ... and the last one)."""

    def __init__(self, problem, state, reference, n_jobs=1, tol=0.0):
        self.problem, self.state, self.reference, self.n_jobs, self.tol = problem, state, reference, n_jobs, tol
        # another primal point for the state's α (``State.primal_candidate``), asked at the checkpoints of a run
        # with a gap to reach
        self.candidate = state.primal_candidate if tol > 0 else None
        self.rows, self.stride, self.count = [], 1, 0
        self.elapsed = 0.0  # solver seconds: the timed chunks only
        self.first = self.last = self.w = self.alpha = self.margins = None
        self.previous = None  # the checkpoint before the last (Budget.interval reads the gap's rate from both)
        # a staged method (APPA) says whether its point is a stage output; the trace's ``inner`` column
        # marks the checkpoints that show the inner solver's point instead (base.STAGED_COLUMN)
        self.staged = getattr(state, "at_stage_output", None)

    def evaluate(self):
        """The checkpoint at the state's current iterate, or None if it is not finite."""
        problem, state = self.problem, self.state
        w, alpha = state.iterate()
        if not all_finite(w):
            return None
        # copies: the state keeps mutating its arrays, and a later divergence
        # must not corrupt the last good iterate the result returns
        w = np.array(w, copy=True)
        alpha = None if alpha is None else np.array(alpha, copy=True)
        t0 = time.perf_counter()
        sums = state.certificate_sums() if problem.lam > 0 and alpha is None else None
        fused = time.perf_counter() - t0 if sums is not None else 0.0
        alpha, primal, dual, gap, margins, v = _checkpoint(problem, w, alpha, self.n_jobs, sums)
        if self.candidate is not None and gap > self.tol:
            # its seconds and reads (the margins' pass too) are the solver's, from this row on: the run's output
            t0 = time.perf_counter()
            better = self.candidate(alpha, v, dual, gap, self.tol)
            if better is not None:
                better_primal, _, better_gap = problem.certificates(better, alpha, z=problem.margins(better), v=v)
                if better_gap < gap:
                    w, primal, gap = better, better_primal, better_gap
            self.elapsed += time.perf_counter() - t0
        row = dict(steps=state.steps, nnz_touched=state.nnz_touched,
                   passes=state.nnz_touched / problem.nnz, data_passes=state.data_passes,
                   time=self.elapsed, primal=primal, dual=dual, gap=gap)
        self.elapsed += fused  # the state's sweep is also its next step's: solver seconds, from the next row on
        if self.reference is not None:
            row["subopt"] = primal - self.reference
        if self.staged is not None:
            row["inner"] = not self.staged()
        return row, w, alpha, margins

    def start(self):
        out = self.evaluate()
        if out is None:
            raise ValueError("the starting point is not finite")
        self.first, self.w, self.alpha, self.margins = out
        self.last = self.first
        self.rows.append(self.first)

    def keep(self, out):
        """Take a finite checkpoint as the last one, storing every stride-th."""
        self.previous = self.last
        self.last, self.w, self.alpha, self.margins = out
        self.count += 1
        if self.count % self.stride == 0:
            self.rows.append(self.last)
            if len(self.rows) > MAX_TRACE_ROWS:
                self.rows, self.stride = self.rows[::2], 2 * self.stride

    def frame(self) -> pd.DataFrame:
        if self.rows[-1] is not self.last:
            self.rows.append(self.last)
        columns = (TRACE_COLUMNS + (["subopt"] if self.reference is not None else [])
                   + ([STAGED_COLUMN] if self.staged is not None else []))
        # column by column: pandas takes each column's dtype from one array instead of reading the rows' dicts
        return trace_frame([np.array([row[column] for row in self.rows]) for column in columns], tuple(columns))


@functools.lru_cache(maxsize=8)
def _labels(columns) -> pd.Index:
    """The trace's column labels, built once per set of columns; each frame gets a shallow copy (its values and
    lookup table shared, its ``name`` its own: a frame whose columns are named leaves the next frame's alone)."""
    return pd.Index(list(columns))


def trace_frame(arrays, columns) -> pd.DataFrame:
    """The DataFrame with one column per array, labelled ``columns``. The public constructor infers each
    column's dtype and the labels' anew: 0.45–0.5 ms of every call on the race's small problems (gc-cold, as
    benchmarks/race.py times a call; benchmarks/call_overhead.py), where pandas' ``DataFrame._from_arrays``,
    given the cached labels, takes ~0.2 ms. A pandas without it gets the public constructor."""
    index = pd.RangeIndex(len(arrays[0]))
    try:
        return pd.DataFrame._from_arrays(arrays, columns=_labels(columns).copy(), index=index)
    except (AttributeError, TypeError):
        return pd.DataFrame(dict(zip(columns, arrays)), index=index)


def _steps_per_pass(state, first, last, slack=RATE_SLACK) -> float:
    """Steps per pass: what the state declares, or what the run measured when its
    steps cost more than ``slack`` times that (so a mis-declared state
    overshoots by at most its first chunk, never chunk after chunk). The auto
    cadence passes slack 1: its intervals, in passes, are capped (Budget), so a
    step dearer than declared must shorten the chunk at once."""
    rate = float(state.steps_per_pass)
    if last["passes"] > first["passes"] and last["steps"] > first["steps"]:
        measured = (last["steps"] - first["steps"]) / (last["passes"] - first["passes"])
        if measured * slack < rate:
            rate = measured
    return rate


def _next_chunk(state, budget, last, rate, clock, interval):
    """(steps to run next, None) or (0, the status that ends the run on the budget);
    ``interval``: passes to the next checkpoint (:meth:`Budget.interval`)."""
    chunk = max(1, int(round(interval * rate)))
    # The last chunk is cut to what is left of the pass budget, so a run
    # ends within about half a step of max_passes instead of overshooting
    # by up to a whole checkpoint interval (uniform draws land a checkpoint
    # at 2.98 passes, and a full chunk then ended a 3-pass budget at 3.98).
    left = (budget.max_passes - last["passes"]) * rate
    if last["passes"] >= budget.max_passes or left < 0.5:
        return 0, "max_passes"
    if budget.max_steps is not None and state.steps >= budget.max_steps:
        return 0, "max_steps"
    if budget.max_time is not None and time.perf_counter() - clock >= budget.max_time:
        return 0, "max_time"
    steps = chunk
    if left < chunk:
        steps = max(1, int(round(left)))
        # A staged method (APPA) outputs x^(t) only at stage ends: a budget
        # that ends a few steps into a stage would report the next stage's
        # start point, so such a state may move the end to a stage boundary
        # within half a checkpoint interval.
        align = getattr(state, "align_last_chunk", None)
        if align is not None:
            steps = align(steps, chunk // 2)
            if steps == 0:
                return 0, "max_passes"
    if budget.max_steps is not None:
        steps = int(min(steps, budget.max_steps - state.steps))
    return steps, None


def _diverged(kind, first, row) -> bool:
    """The divergence rule (DIVERGENCE_FACTOR) at a checkpoint ``row``; ``first`` is the start's row."""
    if row is None:
        return True
    margin = DIVERGENCE_FACTOR * (abs(first["primal"]) + 1.0)
    if kind == "dual":
        return not (np.isfinite(row["dual"]) and np.isfinite(row["primal"])) or row["dual"] < first["dual"] - margin
    return not np.isfinite(row["primal"]) or row["primal"] > margin


def divergence_message(spec, steps) -> str:
    """What :func:`_diverged` found, in words, and what to try."""
    broke = ("the dual objective fell below D(α₀) − " if spec.kind == "dual"
             else "the primal objective rose above ")
    return (f"{spec.name} diverged after {steps} steps: {broke}{DIVERGENCE_FACTOR:g} × (|P(w₀)| + 1), "
            f"or an iterate is not finite; {divergence_advice(spec)}")


def _loop(problem, state, kind, budget, stop, trace, clock):
    """Checkpoint, then stop or run the next chunk, until a rule ends the run; returns the status."""
    state.auto_cadence = budget.eval_every == AUTO
    trace.start()
    deadline = None if budget.max_time is None else clock + budget.max_time
    cap = auto_cap(problem)  # the auto cadence's longest interval
    while True:
        last = trace.last
        stop.checkpoint(last)
        state.checkpointed(last, budget.tol, trace.margins)
        if stop.is_set():
            return "cancelled"
        if last["gap"] <= budget.tol:
            return "converged"
        rate = _steps_per_pass(state, trace.first, last, 1.0 if budget.eval_every == AUTO else RATE_SLACK)
        interval = budget.interval(trace.first, trace.previous, last, cap, state.first_interval)
        steps, status = _next_chunk(state, budget, last, rate, clock, interval)
        if status is not None:
            return status
        when_due = budget.eval_every == AUTO and state.checkpoints_when_due
        if when_due:
            steps = min(steps, state.due_steps)
        slice_steps = max(1, int(SLICE_NNZ / problem.nnz * rate))
        t0 = time.perf_counter()
        _run_sliced(state, steps, slice_steps, stop, deadline)
        checking = 0.0  # seconds of certificate_due: the schedule's, not the solver's (as a checkpoint's)
        # a state that checkpoints when due (State.certificate_due) runs due_steps at a time until it is, within
        # the budget _next_chunk keeps
        while when_due and not _halted(stop, deadline):
            # steps left in the budget, passes counted as _next_chunk counts them (nonzeros read / nnz)
            left = (budget.max_passes - state.nnz_touched / problem.nnz) * rate
            if budget.max_steps is not None:
                left = min(left, budget.max_steps - state.steps)
            if left < 0.5:
                break
            t1 = time.perf_counter()
            due = state.certificate_due(budget.tol)
            checking += time.perf_counter() - t1
            if due:
                break
            _run_sliced(state, max(1, int(round(min(state.due_steps, left)))), slice_steps, stop, deadline)
        # work a state may skip (SDCA's polish) gets what max_passes leaves, and nothing once the run is stopped
        state.synchronize(0 if _halted(stop, deadline)
                          else max(0.0, (budget.max_passes - state.nnz_touched / problem.nnz) * problem.nnz))
        trace.elapsed += time.perf_counter() - t0 - checking
        out = trace.evaluate()
        if _diverged(kind, trace.first, None if out is None else out[0]):
            return "diverged"
        trace.keep(out)
