"""The one solver contract (design.md): a method declares what it supports and
builds a *state* object that runs chunks of steps; the driver in
``cdlab.solvers.driver`` does everything else (checkpoints, stopping, timing,
progress, cancellation, divergence).

A state object has

    run(n_steps)          run that many steps (numba kernel calls; fewer where
                          the state ends a chunk early: ``steps_run``), updating
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
    checkpoints_when_due = True
                          under eval_every="auto", the driver runs
                          ``due_steps`` steps at a time (1 by default) and
                          checkpoints only after those whose certificate is
                          due, instead of at geometric intervals: Newton,
                          whose step costs far more than a checkpoint's pass
                          (a d × d factorisation), and SDCA, whose sampled gap
                          estimate says when (``_gap_estimate``)
    certificate_due(tol) -> bool
                          with checkpoints_when_due: whether the steps just
                          run may have reached the gap ``tol``; False lets
                          the driver run the next ``due_steps`` without a
                          checkpoint
    first_interval = None
                          under eval_every="auto", the passes before the
                          first checkpoint after the start (None: the
                          budget's AUTO_FIRST): SDCA with shrinking, whose
                          epochs say themselves when the certificate is due

and is given, by the driver before its first checkpoint,

    auto_cadence          whether the run's checkpoints follow
                          eval_every="auto" (only then does the driver read
                          checkpoints_when_due)

:class:`State` holds the counters and the bookkeeping of ``run`` (a subclass
writes ``advance``, the kernel call); a method whose work is counted
differently (snapshots, line searches, stages) overrides ``run`` and keeps the
counters.

To add a method: write ``cdlab/solvers/<family>.py`` with a numba kernel, a
state class and a ``register(MethodSpec(...))`` call; ``cdlab/solvers/__init__.py``
imports every module of the package, so the new file is all there is to it.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from .._checks import renamed
from ..losses import ALL_LOSSES, SMOOTH_LOSSES  # noqa: F401  (the methods' loss sets, read from here)
from ..sampling import check_sampling


AXES = ("examples", "features", "none")


class State:
    """The counters every state carries and the bookkeeping of ``run``.

    A subclass sets ``steps_per_pass`` and writes ``advance(n_steps)`` — the
    kernel call, returning the nonzeros of X it read — and ``iterate()``;
    ``run`` then counts the steps, the nonzeros and the data passes, a step
    reading ``rows_per_step`` of the ``pass_size`` rows (or columns) one data
    pass reads. A state that counts its work otherwise overrides ``run``."""

    rows_per_step = 1
    checkpoints_when_due = False
    due_steps = 1
    first_interval = None
    auto_cadence = False

    def __init__(self, problem, rng=None):
        self.p, self.rng = problem, rng
        self.steps = 0
        self.nnz_touched = 0
        self.data_passes = 0.0

    @property
    def pass_size(self) -> int:
        """The rows (or columns) one data pass reads: n, unless the state samples otherwise."""
        return self.p.n_samples

    def run(self, n_steps):
        touched = int(self.advance(n_steps))  # int: a count may come back as a numpy or unsigned integer
        self.nnz_touched += touched  # after advance, which may count work of its own (a refresh)
        self.steps += self.steps_run(n_steps)
        self.data_passes = self.steps * self.rows_per_step / self.pass_size

    def advance(self, n_steps) -> int:
        raise NotImplementedError

    def steps_run(self, n_steps) -> int:
        """The steps the last ``advance(n_steps)`` ran: all of them, unless the state ends a chunk early (SDCA
        with shrinking, at an epoch that finds its certificate due: ``_shrinking``)."""
        return n_steps

    def synchronize(self, room=None):
        """Work the method does once per checkpoint interval, after its steps and before the
        checkpoint (the driver calls it in the timed region); its nonzeros are counted. ``room``: the
        nonzeros the run may still read for work it may skip (None: no limit). None here."""
        self.nnz_touched += self.resync(room)

    def resync(self, room=None) -> int:
        return 0

    def checkpointed(self, row, tol, margins=None):
        """Called by the driver with each checkpoint's row (P, D, the gap, ...), the gap ``tol`` the run
        stops at and the checkpoint's margins Xw (None without a dual), before the next chunk: a state whose
        schedule reads the certificate (SDCA's shrinking, the floor under Newton–CG's forcing term) overrides
        it. Nothing here."""

    def certificate_due(self, tol) -> bool:
        """Whether the driver should checkpoint after the last steps (read only under checkpoints_when_due):
        always, here."""
        return True

    def certificate_sums(self):
        """(α, Xw, Xᵀα) at the current iterate where the state computes them in a sweep of its own (Newton–CG
        fuses it with its next gradient's, Newton's Cholesky path at its start with its first H's, the squared loss's
        CG at its start with the sweep that starts it: ``NewtonState.certificate_sums``), for the driver's checkpoint
        instead of its certificate sweep; the driver counts the call's seconds as the solver's. None here: the driver
        sweeps."""
        return None

    def primal_candidate(self, alpha, v, dual, gap, tol):
        """Another primal point for the checkpoint's α (v = v(α), D(α) and the gap at the state's w; ``tol``: the
        run's, > 0), or None; the driver's checkpoint reports it, and its gap, where that gap is smaller (SDCA and
        dual CD on the losses with a kink: ``_face_primal``; their ``checkpointed`` then reads its own gap, not
        the row's). None here."""
        return None

    def iterate(self):
        raise NotImplementedError


# arguments every state takes before its options: the problem, the sampling and the generator
STATE_ARGS = 3


@dataclass(frozen=True)
class MethodSpec:
    """What a method is and what it accepts.

    ``make(problem, sampling, rng, **options)`` returns a state object; it is
    usually the state class itself. ``fixed`` holds arguments ``make`` always
    gets (not options); ``options`` — every other keyword of ``make``'s
    signature with its default, but ``batch_size`` and the names in
    ``withheld`` — is read from that signature, so each default is written
    once, where the state takes it. ``batch`` says whether ``make`` takes
    ``batch_size``; ``parallel``, whether it takes ``n_jobs`` (the run's
    ``n_jobs`` argument, not an option: a parallel mode). ``samplings`` lists accepted sampling names; "custom" means
    an array of probabilities is accepted too. ``axis`` is what a sampling
    draws: "examples" (rows of X), "features" (columns) or "none" (a
    full-gradient method samples nothing). ``renamed`` maps an option's old
    name to its new one: the old name is accepted for one more release, with a
    FutureWarning (:meth:`current_names`); ``renamed_values`` maps, per
    option, a named value's old spelling to its new one, likewise.
    """

    name: str
    make: Callable
    source: str  # paper, algorithm, equation
    kind: str  # "dual", "primal", "primal-dual"
    axis: str  # "examples", "features" or "none"
    losses: frozenset = ALL_LOSSES
    supports_l1: bool = True
    needs_lam: bool = True  # λ > 0 required
    samplings: tuple = ("uniform",)
    fixed: dict = field(default_factory=dict)
    withheld: tuple = ()
    advice: str = ""  # what to try when a run diverges; default: from the options it has (driver)
    # (loss, options) -> why the method refuses that loss with those options ('' if it takes it): for a
    # refusal that depends on an option (dual_cd's gradient step, SPDC without δ); ``losses`` is the rest
    loss_rule: Callable | None = None
    # (sampling, options) -> why the method refuses that sampling with those options ('' if it takes it): for
    # a refusal that depends on an option (SDCA's shrinking); ``samplings`` is the rest
    sampling_rule: Callable | None = None
    # (problem, options) -> why the method refuses this problem's data with those options ('' if it takes it),
    # checked before any work: for a size the method's memory cannot take (newton's d × d Hessian)
    problem_rule: Callable | None = None
    # (problem, options=None) -> predicted ns of one step on one thread (options: the method's defaults where
    # not given), for a method whose step is a whole iteration that a run cannot stop inside (newton's d × d
    # factorisation, or its CG inner solve); None where a step is a coordinate's or a pass's
    step_ns: Callable | None = None
    renamed: dict = field(default_factory=dict)  # old option name -> its new name
    renamed_values: dict = field(default_factory=dict)  # option -> {old value name: new value name}
    options: dict = field(init=False)
    batch: bool = field(init=False)
    parallel: bool = field(init=False)

    def __post_init__(self):
        if self.axis not in AXES:
            raise ValueError(f"axis must be one of {AXES}, got {self.axis!r}")
        params = list(inspect.signature(self.make).parameters.values())[STATE_ARGS:]
        skip = set(self.fixed) | set(self.withheld) | {"batch_size", "n_jobs"}
        options = {p.name: p.default for p in params if p.name not in skip
                   and p.default is not inspect.Parameter.empty}
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "batch", any(p.name == "batch_size" for p in params))
        object.__setattr__(self, "parallel", any(p.name == "n_jobs" for p in params))
        if self.fixed:
            object.__setattr__(self, "make", functools.partial(self.make, **self.fixed))

    def current_names(self, options) -> dict:
        """``options`` with each old name of ``renamed`` and each old value of ``renamed_values``
        replaced by its new one (both warn)."""
        options = dict(options)
        for old, new in self.renamed.items():
            if old in options:
                value = renamed(new, options.get(new), old, options.pop(old))
                if value is not None:  # an old name given as None means "the default", as the new one does
                    options[new] = value
        for name, values in self.renamed_values.items():
            value = options.get(name)
            if isinstance(value, str) and value in values:
                warnings.warn(f"{name}={value!r} is renamed {name}={values[value]!r}; the old value will be "
                              f"removed in the next release", FutureWarning, stacklevel=3)
                options[name] = values[value]
        return options

    def loss_refusal(self, loss, options=None) -> str:
        """Why the method refuses ``loss`` with ``options`` (its defaults where not given); '' if it takes it.
        The loss set ``losses`` is checked by :meth:`check` with its own message."""
        if loss not in self.losses:
            return f"method {self.name!r} does not support the {loss} loss"
        if self.loss_rule is None:
            return ""
        return self.loss_rule(loss, {**self.options, **self.fixed, **(options or {})})

    def check(self, problem, sampling, options):
        """Refuse an unsupported combination before any work is done."""
        if problem.loss not in self.losses:
            hint = ""
            if problem.loss == "hinge" and "smoothed_hinge" in self.losses:
                hint = " (it needs a smooth loss: try loss='smoothed_hinge', or method='sdca', which takes it)"
            elif problem.loss == "absolute" and "squared" in self.losses:
                takes = "a smooth loss or the hinge" if "hinge" in self.losses else "a smooth loss"
                hint = f" (it needs {takes}: for regression try loss='squared', or method='sdca', which takes it)"
            raise ValueError(f"method {self.name!r} does not support the {problem.loss} loss{hint}; "
                             f"supported: {sorted(self.losses)}")
        if problem.l1 > 0 and not self.supports_l1:
            raise ValueError(f"method {self.name!r} does not support l1 > 0 (elastic net)")
        reason = "" if self.problem_rule is None else self.problem_rule(problem, {**self.options, **options})
        if reason:
            raise ValueError(reason)
        if self.needs_lam and problem.lam <= 0:
            raise ValueError(f"method {self.name!r} needs lam > 0, got lam={problem.lam}")
        check_sampling(sampling, self.samplings, f"method {self.name!r}")
        allowed = set(self.options) | ({"batch_size"} if self.batch else set())
        unknown = set(options) - allowed
        if unknown:
            raise ValueError(f"method {self.name!r} got unknown option(s) {sorted(unknown)}; "
                             f"it accepts {sorted(allowed) or 'none'}")
        reason = self.loss_refusal(problem.loss, options)
        if not reason and self.sampling_rule is not None:
            reason = self.sampling_rule(sampling, {**self.options, **self.fixed, **options})
        if reason:
            raise ValueError(reason)


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


def first_row(trace: pd.DataFrame, eps, column="gap"):
    """The first checkpoint (a row of ``trace``) where ``column`` ≤ eps, or None if the run never got there."""
    hit = np.flatnonzero(trace[column].to_numpy(dtype=float) <= eps)
    return trace.iloc[int(hit[0])] if hit.size else None


@dataclass
class Result:
    """What ``cdlab.solve`` returns.

    ``trace`` has one row per checkpoint with the columns of TRACE_COLUMNS
    (+ ``subopt`` = P − P* when a reference optimum is known, + ``inner`` for a
    staged method: True where the row shows the inner solver's point mid-stage). ``status`` is
    one of "converged" (gap ≤ tol), "max_passes", "max_steps", "max_time",
    "cancelled", "diverged".
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

    def first(self, eps, column="gap"):
        """The first trace row where ``column`` (the gap, or e.g. "subopt") is ≤ eps, or None."""
        return first_row(self.trace, eps, column)

    def __repr__(self):
        last = self.trace.iloc[-1]
        return (f"Result(method={self.method!r}, status={self.status!r}, passes={last.passes:.3g}, "
                f"gap={last.gap:.3e}, primal={last.primal:.12g})")
