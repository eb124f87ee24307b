"""The one solver contract (design.md): a method declares what it supports and
builds a *state* object that runs chunks of steps; the driver in
``cdlab.solvers.driver`` does everything else (checkpoints, stopping, timing,
progress, cancellation, divergence).

A state object has

    run(n_steps)          run that many steps (numba kernel calls), updating
                          the counters below; must not evaluate P or D
    iterate() -> (w, alpha)   the current primal point and a dual point
                          (alpha may be None: the driver then reports α(w))
    steps                 coordinate / stochastic steps done (a mini-batch
                          step counts once)
    nnz_touched           nonzeros of X read, the face-off's work unit
    data_passes           passes as the method's paper counts them
    steps_per_pass        the number of steps one checkpoint interval holds
                          (about one pass over the data, everything a step
                          reads counted: restarts, snapshots, line searches);
                          the driver sizes chunks and the end of the pass
                          budget by it, and by the measured rate when steps
                          cost more than twice what it declares

and may have

    at_stage_output() -> bool
                          a staged method: whether iterate() is now a stage's
                          output; the trace then has the boolean column
                          ``inner`` (STAGED_COLUMN), True for mid-stage rows
    align_last_chunk(n_steps, slack) -> int
                          the steps to run instead of the budget's last
                          n_steps (0 = stop now), e.g. to end on a stage
                          boundary at most ``slack`` steps away

To add a method: write ``cdlab/solvers/<family>.py`` with a numba kernel, a
state class and a ``register(MethodSpec(...))`` call, and import the module
in ``cdlab/solvers/__init__.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

ALL_LOSSES = frozenset({"squared", "logistic", "hinge", "smoothed_hinge", "absolute"})
SMOOTH_LOSSES = frozenset({"squared", "logistic", "smoothed_hinge"})


@dataclass(frozen=True)
class MethodSpec:
    """What a method is and what it accepts.

    ``make(problem, sampler_arg, rng, **options)`` returns a state object.
    ``samplings`` lists accepted sampling names; "custom" means an array of
    probabilities is accepted too. ``options`` maps option names to defaults.
    """

    name: str
    make: Callable
    source: str  # paper, algorithm, equation
    kind: str  # "dual", "primal", "primal-dual"
    losses: frozenset = ALL_LOSSES
    supports_l1: bool = True
    needs_lam: bool = True  # λ > 0 required
    samplings: tuple = ("uniform",)
    options: dict = field(default_factory=dict)
    batch: bool = False  # accepts batch_size
    advice: str = ""  # what to try when a run diverges; default: from the options it has (driver)

    def check(self, problem, sampling, options):
        """Refuse an unsupported combination before any work is done."""
        if problem.loss not in self.losses:
            hint = ""
            if problem.loss == "hinge" and "smoothed_hinge" in self.losses:
                hint = " (it needs a smooth loss: try loss='smoothed_hinge')"
            elif problem.loss == "absolute" and "squared" in self.losses:
                hint = " (it needs a smooth loss: for regression try loss='squared')"
            raise ValueError(f"method {self.name!r} does not support the {problem.loss} loss{hint}; "
                             f"supported: {sorted(self.losses)}")
        if problem.l1 > 0 and not self.supports_l1:
            raise ValueError(f"method {self.name!r} does not support l1 > 0 (elastic net)")
        if self.needs_lam and problem.lam <= 0:
            raise ValueError(f"method {self.name!r} needs lam > 0, got lam={problem.lam}")
        if isinstance(sampling, str):
            if sampling not in self.samplings or sampling == "custom":
                names = [s for s in self.samplings if s != "custom"]
                extra = " or an array of probabilities" if "custom" in self.samplings else ""
                raise ValueError(f"method {self.name!r} does not support sampling {sampling!r}; "
                                 f"use one of {names}{extra}")
        elif "custom" not in self.samplings:
            raise ValueError(f"method {self.name!r} does not accept custom sampling probabilities")
        allowed = set(self.options) | ({"batch_size"} if self.batch else set())
        unknown = set(options) - allowed
        if unknown:
            raise ValueError(f"method {self.name!r} got unknown option(s) {sorted(unknown)}; "
                             f"it accepts {sorted(allowed) or 'none'}")


METHODS: dict[str, MethodSpec] = {}


def register(spec: MethodSpec) -> MethodSpec:
    METHODS[spec.name] = spec
    return spec


def get_method(name: str) -> MethodSpec:
    if not isinstance(name, str):
        raise TypeError(f"method must be the name of one method (a str), got {type(name).__name__} {name!r}; "
                        f"available: {sorted(METHODS)}")
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; available: {sorted(METHODS)}")
    return METHODS[name]


TRACE_COLUMNS = ["steps", "nnz_touched", "passes", "data_passes", "time", "primal", "dual", "gap"]
# Staged methods (the APPA family) add a boolean column: True where the checkpoint shows the inner
# solver's point mid-stage, False at a stage output x^(t), the only points their theorems speak of.
STAGED_COLUMN = "inner"


def stage_rows(trace):
    """The rows a convergence plot draws: every row, except a staged method's mid-stage ones."""
    if STAGED_COLUMN not in trace.columns:
        return trace
    return trace[~trace[STAGED_COLUMN].eq(True)]


@dataclass
class Result:
    """What ``cdlab.solve`` returns.

    ``trace`` has one row per checkpoint with the columns of TRACE_COLUMNS
    (+ ``subopt`` = P − P* when a reference optimum is known, + ``inner`` for a
    staged method: True where the row shows the inner solver's point mid-stage). ``status`` is
    one of "converged" (gap ≤ tol), "max_passes", "max_time", "cancelled",
    "diverged".
    """

    w: np.ndarray
    alpha: np.ndarray
    trace: pd.DataFrame
    method: str
    sampling: object
    status: str
    options: dict
    message: str = ""
    auto_reason: str = ""  # method="auto": why it ran this method and sampling (cdlab.solvers.auto)

    @property
    def converged(self) -> bool:
        return self.status == "converged"

    @property
    def diverged(self) -> bool:
        return self.status == "diverged"

    def __repr__(self):
        last = self.trace.iloc[-1]
        return (f"Result(method={self.method!r}, status={self.status!r}, passes={last.passes:.3g}, "
                f"gap={last.gap:.3e}, primal={last.primal:.12g})")
