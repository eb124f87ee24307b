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

from .base import TRACE_COLUMNS, Result, get_method

# A primal value this many times the starting objective (or non-finite
# iterates) is reported as divergence rather than drawn as a curve.
DIVERGENCE_FACTOR = 1e6


def _checkpoint(problem, w, alpha):
    if alpha is None:
        alpha = problem.alpha_from_w(w)
    primal = problem.primal(w)
    dual = problem.dual(alpha) if problem.lam > 0 else -np.inf
    gap = problem.gap(w, alpha) if problem.lam > 0 else np.inf
    return alpha, primal, dual, gap


def _number(name, value) -> float:
    """A real number (int or float, not a bool or a string), as float."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


def solve(problem, method="sdca", sampling="uniform", max_passes=50, tol=1e-8, seed=0,
          callback=None, reference=None, max_time=None, eval_every=1.0, cancel=None, **options):
    """Run ``method`` on ``problem`` and return a :class:`~cdlab.solvers.base.Result`.

    Parameters
    ----------
    problem : cdlab.Problem
    method : str, a name in ``cdlab.METHODS``.
    sampling : str or array of probabilities (what the method supports).
    max_passes : float, budget in passes = nonzeros touched / nnz(X).
    tol : float, stop when the duality gap ≤ tol (tol ≤ 0 runs the budget out).
    seed : int, seeds the run's only random generator: equal seeds give equal
        traces (every column but ``time``).
    callback : callable(row: dict) -> bool | None, called at every
        checkpoint; returning False cancels the run.
    reference : float, True or None. P* for the ``subopt`` column; True
        computes it with :func:`cdlab.reference_optimum` (cached on disk).
    max_time : float or None, budget in solver seconds (checkpoints excluded).
    eval_every : float, checkpoint interval in passes.
    cancel : object with ``is_set()`` (e.g. ``threading.Event``); cancels
        the run at the next checkpoint when set.
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
    if max_time is not None and not (_number("max_time", max_time) >= 0):
        raise ValueError(f"max_time must be ≥ 0 or None, got {max_time}")
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
    state = spec.make(problem, sampling, rng, **opts)

    rows = []
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
    rows.append(first[0])
    w, alpha = first[1], first[2]
    p0 = abs(first[0]["primal"]) + 1.0
    status, message = None, ""
    chunk = max(1, int(round(eval_every * state.steps_per_pass)))
    while status is None:
        if callback is not None and callback(rows[-1]) is False:
            status = "cancelled"
            break
        if cancel is not None and cancel.is_set():
            status = "cancelled"
            break
        if rows[-1]["gap"] <= tol:
            status = "converged"
            break
        # The last chunk is cut to what is left of the pass budget, so a run
        # ends within about half a step of max_passes instead of overshooting
        # by up to a whole checkpoint interval (uniform draws land a checkpoint
        # at 2.98 passes, and a full chunk then ended a 3-pass budget at 3.98).
        left = (max_passes - rows[-1]["passes"]) * state.steps_per_pass
        if rows[-1]["passes"] >= max_passes or left < 0.5:
            status = "max_passes"
            break
        if max_time is not None and elapsed >= max_time:
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
        state.run(steps)
        elapsed += time.perf_counter() - t0
        out = record()
        if out is None or not np.isfinite(out[0]["primal"]) or out[0]["primal"] > DIVERGENCE_FACTOR * p0:
            status = "diverged"
            message = (f"{method} diverged after {state.steps} steps: the primal objective left "
                       f"[0, {DIVERGENCE_FACTOR:g} × P(w₀)]; try a smaller step")
            break
        rows.append(out[0])
        w, alpha = out[1], out[2]

    trace = pd.DataFrame(rows, columns=TRACE_COLUMNS + (["subopt"] if reference is not None else []))
    trace.attrs.update(method=method, status=status, message=message,
                       reference=None if reference is None else float(reference))
    return Result(w=w, alpha=alpha, trace=trace, method=method,
                  sampling=sampling, status=status, options=opts, message=message)
