"""The run budget: when ``cdlab.solve`` stops, each default written once.

The driver runs under a :class:`Budget`; ``cdlab.solve``'s keywords, the
page, the grid and the CLI take their defaults from it (``Budget.max_passes``
and so on are the defaults).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .._checks import check_int, check_real

# eval_every="auto": the checkpoint cadence of a run whose trace is not read as a
# curve. A checkpoint (P(w), D(α), the gap) costs about one pass over X, as much
# as a pass of a cheap-step method, so checkpoints come at geometrically growing
# intervals: AUTO_FIRST passes at first, then AUTO_SHARE times the passes run so
# far, at most AUTO_CAP passes (more on data so small that a checkpoint's fixed cost
# outweighs a pass's reads: ``costs.auto_cap``, the cap below). A run whose gap is ≤ tol from T passes on thus
# stops by max(T + AUTO_FIRST, (1 + AUTO_SHARE)·T) and T + cap, after
# O(log T) checkpoints rather than T (in passes at the run's average step cost so
# far: a method whose steps cost unevenly — line searches, L-SVRG's random
# refreshes, APPA's stage ends — can end an interval a few passes past it). Within that bound, the gap's linear rate
# (log gap against passes) between the last two checkpoints, or since the start
# if the gap rose between them (a stochastic method's gap is noisy), predicts the
# pass where gap ≤ tol; the next checkpoint goes AUTO_AIM times that far, so a
# prediction that holds certifies there, but no nearer than AUTO_FLOOR of the
# interval the bound allows. The cadence depends on passes and gaps only, never
# on a clock: equal seeds still give equal traces. (Constants chosen on the
# traces of SDCA, dual CD, primal CD and SAGA on shipped data sets: stops within
# 1.11·T, with about a quarter of the checkpoints of eval_every=1.) A state that
# knows better when its certificate is due (``base.State.checkpoints_when_due``:
# Newton after its due steps, SDCA by its sampled gap estimate, ``_gap_estimate``)
# replaces this cadence under "auto"; SDCA's intervals keep the cap as their
# longest (plus at most the pass its estimates are checked after).
AUTO = "auto"
AUTO_FIRST = 1.0
AUTO_SHARE = 1.0
AUTO_CAP = 10.0
AUTO_AIM = 1.1
AUTO_FLOOR = 0.25
# The interval of runs whose trace is read as a curve (the sweep's default):
# regular checkpoints, every pass.
CURVE_EVAL_EVERY = 1.0


@dataclass(frozen=True)
class Budget:
    """When a run stops (the first limit reached ends it).

    max_passes : passes = nonzeros touched / nnz(X). A run ends within one
        checkpoint interval (or one step, if a step costs more) of it.
    max_steps : steps as the method counts them (a mini-batch step counts
        once), or None; a run ends exactly at it.
    max_time : wall-clock seconds for the whole run from the state's
        construction on (steps, checkpoints and callback included), or None;
        checked at checkpoints and between the driver's slices of steps.
    tol : stop when the duality gap ≤ tol (tol ≤ 0 runs the budget out).
    eval_every : the checkpoint interval in passes, or "auto" (the default):
        geometrically growing intervals aimed at the pass where the gap
        reaches tol (:meth:`interval`; the AUTO_* rules above). Runs whose
        curve is read (the page, the sweep, the face-off) set a number.

    ``max_passes=inf`` needs a finite ``max_steps`` or ``max_time``, or
    ``tol > 0`` on a problem with ``lam > 0`` (:meth:`check`).
    """

    max_passes: float = 50.0
    max_steps: float | None = None
    max_time: float | None = None
    tol: float = 1e-8
    eval_every: float | str = AUTO

    def __post_init__(self):
        max_passes = check_real("max_passes", self.max_passes, low=0.0, low_open=True, finite=False)
        eval_every = check_eval_every(self.eval_every)
        tol = check_real("tol", self.tol, finite=False)  # tol ≤ 0 (even -inf) runs the budget out
        max_time = None if self.max_time is None else check_real("max_time", self.max_time, low=0.0)
        max_steps = self.max_steps
        if max_steps is not None:  # a whole number of steps ≥ 1, or inf (no step limit), as float
            max_steps = check_real("max_steps", max_steps, finite=False)
            if max_steps != np.inf:
                max_steps = float(check_int("max_steps", max_steps))
        for name, value in (("max_passes", max_passes), ("eval_every", eval_every), ("tol", tol),
                            ("max_time", max_time), ("max_steps", max_steps)):
            object.__setattr__(self, name, value)

    def check(self, problem):
        """Refuse a budget that may never end on ``problem``."""
        finite_stop = (self.max_time is not None or (self.max_steps is not None and self.max_steps < np.inf)
                       or (self.tol > 0 and problem.lam > 0))
        if self.max_passes == np.inf and not finite_stop:
            raise ValueError("max_passes=inf needs a finite max_steps or max_time, or tol > 0 with lam > 0 (a "
                             f"duality gap that can reach tol); got tol={self.tol:g}, lam={problem.lam:g}, "
                             f"max_steps={self.max_steps}, max_time=None")

    def interval(self, first, previous, last, cap=AUTO_CAP, first_interval=None) -> float:
        """Passes from the checkpoint ``last`` (a trace row) to the next: ``eval_every``,
        or with "auto" the AUTO_* rules; ``first`` is the start's checkpoint,
        ``previous`` the one before ``last`` (None when ``last`` is the start); ``cap``: the
        longest interval, AUTO_CAP or the problem's (``costs.auto_cap``); ``first_interval``: the
        state's first interval (``base.State.first_interval``), AUTO_FIRST where None."""
        if self.eval_every != AUTO:
            return self.eval_every
        if previous is None:
            return AUTO_FIRST if first_interval is None else first_interval
        far = far_interval(last["passes"], cap)
        near = passes_to_tol(previous, last, self.tol)
        if near is None:  # a gap that rose since the previous checkpoint (noise): its rate since the start
            near = passes_to_tol(first, last, self.tol)
        if near is None:
            return far
        return min(far, max(AUTO_AIM * near, AUTO_FLOOR * far))

    def kwargs(self) -> dict:
        """The budget as ``cdlab.solve`` keywords."""
        return asdict(self)


def far_interval(passes, cap=AUTO_CAP) -> float:
    """The auto cadence's longest next interval after ``passes`` passes (the geometric bound above): AUTO_FIRST,
    or AUTO_SHARE × the passes run so far, at most ``cap``."""
    return min(max(AUTO_FIRST, AUTO_SHARE * passes), cap)


def check_eval_every(value, name="eval_every"):
    """A checkpoint interval: AUTO, or a finite number of passes > 0 (as float)."""
    if isinstance(value, str) and value == AUTO:
        return AUTO
    try:
        return check_real(name, value, low=0.0, low_open=True)
    except ValueError:
        raise ValueError(f"{name} must be {AUTO!r} or a finite number of passes > 0, got {value!r}") from None


def passes_to_tol(previous, last, tol):
    """Passes after checkpoint ``last`` until the duality gap is ≤ tol if it keeps
    falling at the linear rate it fell at since ``previous`` (log gap linear in
    passes); None when it did not fall, or tol ≤ 0."""
    ran = last["passes"] - previous["passes"]
    g0, g1 = previous["gap"], last["gap"]
    if not (tol > 0 and ran > 0 and np.isfinite(g0) and tol < g1 < g0):
        return None
    return ran * np.log(g1 / tol) / np.log(g0 / g1)
