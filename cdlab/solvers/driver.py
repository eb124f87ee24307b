"""``cdlab.solve``: the chunked loop every method runs in (design.md).

The kernel runs a chunk of steps (timed); the driver then evaluates the
checkpoint — P(w), D(α), the gap — outside the timed region, records a trace
row, reports progress, and applies the stopping rule. One loop gives every
method progress bars, cancellation, live curves, divergence detection and
honest timings.
"""
from __future__ import annotations

import numbers
import time

import numpy as np
import pandas as pd

from ._kernels import certificate_sweep
from .base import TRACE_COLUMNS, Result, get_method

# A primal value this many times the starting objective (or non-finite
# iterates) is reported as divergence rather than drawn as a curve.
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
# checked between them: a checkpoint interval on millions of nonzeros takes
# seconds, a cancelled run stops within a slice (tens of milliseconds). The
# slices depend on the data only, never on a clock or on ``cancel``, so equal
# seeds still give equal traces (a sampler's draws depend on how a chunk is cut).
SLICE_NNZ = 2_000_000


def _checkpoint(problem, w, alpha):
    """(α, P(w), D(α), gap); α = α(w) when the state reports none. With lam > 0,
    Xw and Xᵀα come from one pass over X (``_kernels.certificate_sweep``) and
    Problem turns them into the certificates; with lam = 0 there is no dual."""
    if problem.lam <= 0:
        if alpha is None:
            alpha = problem.alpha_from_w(w)
        return alpha, problem.primal(w), -np.inf, np.inf
    from_w = alpha is None
    if from_w:
        alpha = np.empty(problem.n_samples)
    X = problem.X
    z = np.empty(problem.n_samples)
    v = np.zeros(problem.n_features)
    certificate_sweep(X.indptr, X.indices, X.data, problem.y, problem.loss_code, problem.s, w, alpha, from_w,
                      z, v)
    v /= problem.lam * problem.n_samples
    return alpha, problem.primal(w, z=z), problem.dual(alpha, v=v), problem.gap(w, alpha, z=z, v=v)


def _number(name, value) -> float:
    """A real number (int or float, not a bool or a string), as float."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


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
    steps = [name for name in ("step", "eta0") if name in spec.options]
    if steps:
        return "try a smaller step (option " + " or ".join(repr(s) for s in steps) + ")"
    return (f"{spec.name} has no step size to reduce: its updates depend only on the data, so check their "
            "scale (a huge ‖x_i‖²/(λn) or λ strains floating point; normalizing the rows usually helps)")


def _run_sliced(state, steps, size, cancel):
    """``state.run(steps)`` in slices of ``size`` steps, stopping early once ``cancel`` (if any) is set."""
    done = 0
    while done < steps:
        part = min(size, steps - done)
        state.run(part)
        done += part
        if cancel is not None and cancel.is_set():
            return


def solve(problem, method="sdca", sampling="uniform", max_passes=50, tol=1e-8, seed=0,
          callback=None, reference=None, max_time=None, eval_every=1.0, cancel=None, **options):
    """Run ``method`` on ``problem`` and return a :class:`~cdlab.solvers.base.Result`.

    Parameters
    ----------
    problem : cdlab.Problem
    method : str, a name in ``cdlab.METHODS``.
    sampling : str or array of probabilities (what the method supports).
    max_passes : float, budget in passes = nonzeros touched / nnz(X). A run
        ends within one checkpoint interval (or one step, if a step costs
        more) of it. ``inf`` needs a finite ``max_time``, or ``tol > 0`` with
        ``lam > 0`` (a gap that can reach tol).
    tol : float, stop when the duality gap ≤ tol (tol ≤ 0 runs the budget out).
    seed : int, seeds the run's only random generator: equal seeds give equal
        traces (every column but ``time``).
    callback : callable(row: dict) -> object, called at every checkpoint
        with a copy of the trace row. A returned value ``v`` cancels the run
        iff ``v is not None and not bool(v)`` (False, ``np.False_``, 0, ...);
        ``None`` and true values continue (:func:`cancels`).
    reference : float, True or None. P* for the ``subopt`` column; True
        computes it with :func:`cdlab.reference_optimum` (cached on disk).
    max_time : float or None, budget in wall-clock seconds for the whole run
        from the state's construction on: steps, checkpoints and callback
        included (the trace's ``time`` column counts solver time only).
    eval_every : float, checkpoint interval in passes. The trace keeps at most
        ``MAX_TRACE_ROWS`` + 1 rows (older rows thinned evenly beyond that).
    cancel : object with ``is_set()`` (e.g. ``threading.Event``); cancels
        the run when set: it is checked at every checkpoint and between slices
        of about ``SLICE_NNZ`` nonzeros within a checkpoint interval (a run
        cancelled mid-interval records its last row there).
    **options : method options (see ``cdlab.METHODS[method].options``).
    """
    spec = get_method(method)
    spec.check(problem, sampling, options)
    max_passes = _number("max_passes", max_passes)
    if not (max_passes > 0):
        raise ValueError(f"max_passes must be > 0, got {max_passes}")
    eval_every = _number("eval_every", eval_every)
    if not (0 < eval_every < np.inf):
        raise ValueError(f"eval_every must be finite and > 0, got {eval_every}")
    tol = _number("tol", tol)
    if np.isnan(tol):
        raise ValueError("tol must be a number, got nan")
    if max_time is not None:
        max_time = _number("max_time", max_time)
        if not (0 <= max_time < np.inf):
            raise ValueError(f"max_time must be finite and ≥ 0, or None, got {max_time}")
    if max_passes == np.inf and max_time is None and not (tol > 0 and problem.lam > 0):
        raise ValueError("max_passes=inf needs a finite max_time, or tol > 0 with lam > 0 (a duality gap that "
                         f"can reach tol); got tol={tol:g}, lam={problem.lam:g}, max_time=None")
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable or None, got {type(callback).__name__}")
    if cancel is not None and not callable(getattr(cancel, "is_set", None)):
        raise ValueError(f"cancel must have an is_set() method (e.g. threading.Event), got {type(cancel).__name__}")
    if reference is True:
        from ..reference import reference_optimum
        reference = reference_optimum(problem)
    elif reference is False:
        reference = None
    elif reference is not None:
        reference = _number("reference", reference)
        if not np.isfinite(reference):
            raise ValueError(f"reference (P*) must be finite, got {reference}")
    try:
        rng = np.random.default_rng(seed)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"seed must be None or a non-negative integer, got {seed!r} ({exc})") from None
    opts = {**spec.options, **options}
    clock = time.perf_counter()  # max_time counts from here: construction, steps, checkpoints, callbacks
    state = spec.make(problem, sampling, rng, **opts)

    rows = []  # the stored trace: checkpoints 0, stride, 2·stride, ... (and the last one)
    stride, count = 1, 0
    elapsed = 0.0

    def record():
        w, alpha = state.iterate()
        if not np.all(np.isfinite(w)):
            return None
        # copies: the state keeps mutating its arrays, and a later divergence
        # must not corrupt the last good iterate the result returns
        w = np.array(w, copy=True)
        alpha = None if alpha is None else np.array(alpha, copy=True)
        alpha, primal, dual, gap = _checkpoint(problem, w, alpha)
        row = dict(steps=state.steps, nnz_touched=state.nnz_touched,
                   passes=state.nnz_touched / problem.nnz, data_passes=state.data_passes,
                   time=elapsed, primal=primal, dual=dual, gap=gap)
        if reference is not None:
            row["subopt"] = primal - reference
        return row, w, alpha

    first = record()
    if first is None:
        raise ValueError("the starting point is not finite")
    last, w, alpha = first
    rows.append(last)
    p0 = abs(last["primal"]) + 1.0
    status, message = None, ""
    while status is None:
        # the callback gets a copy: what it writes cannot reach the trace or the stopping rule
        if callback is not None and cancels(callback(dict(last))):
            status = "cancelled"
            break
        if cancel is not None and cancel.is_set():
            status = "cancelled"
            break
        if last["gap"] <= tol:
            status = "converged"
            break
        # Steps per pass: what the state declares, or what the run measured when
        # its steps cost more than RATE_SLACK times that (so a mis-declared state
        # overshoots by at most its first chunk, never chunk after chunk).
        rate = float(state.steps_per_pass)
        if last["passes"] > first[0]["passes"] and last["steps"] > first[0]["steps"]:
            measured = (last["steps"] - first[0]["steps"]) / (last["passes"] - first[0]["passes"])
            if measured * RATE_SLACK < rate:
                rate = measured
        chunk = max(1, int(round(eval_every * rate)))
        # The last chunk is cut to what is left of the pass budget, so a run
        # ends within about half a step of max_passes instead of overshooting
        # by up to a whole checkpoint interval (uniform draws land a checkpoint
        # at 2.98 passes, and a full chunk then ended a 3-pass budget at 3.98).
        left = (max_passes - last["passes"]) * rate
        if last["passes"] >= max_passes or left < 0.5:
            status = "max_passes"
            break
        if max_time is not None and time.perf_counter() - clock >= max_time:
            status = "max_time"
            break
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
                    status = "max_passes"
                    break
        t0 = time.perf_counter()
        _run_sliced(state, steps, max(1, int(SLICE_NNZ / problem.nnz * rate)), cancel)
        elapsed += time.perf_counter() - t0
        out = record()
        if out is None or not np.isfinite(out[0]["primal"]) or out[0]["primal"] > DIVERGENCE_FACTOR * p0:
            status = "diverged"
            message = (f"{method} diverged after {state.steps} steps: the primal objective left "
                       f"[0, {DIVERGENCE_FACTOR:g} × P(w₀)]; {divergence_advice(spec)}")
            break
        last, w, alpha = out
        count += 1
        if count % stride == 0:
            rows.append(last)
            if len(rows) > MAX_TRACE_ROWS:
                rows, stride = rows[::2], 2 * stride
    if rows[-1] is not last:
        rows.append(last)

    trace = pd.DataFrame(rows, columns=TRACE_COLUMNS + (["subopt"] if reference is not None else []))
    trace.attrs.update(method=method, status=status, message=message,
                       reference=None if reference is None else float(reference))
    return Result(w=w, alpha=alpha, trace=trace, method=method,
                  sampling=sampling, status=status, options=opts, message=message)
