"""The run budget: when ``cdlab.solve`` stops, each default written once.

The driver runs under a :class:`Budget`; ``cdlab.solve``'s keywords, the
page, the grid and the CLI take their defaults from it (``Budget.max_passes``
and so on are the defaults).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .._checks import check_int, check_real


@dataclass(frozen=True)
class Budget:
    """When a run stops (the first limit reached ends it).

    max_passes : passes = nonzeros touched / nnz(X). A run ends within one
        checkpoint interval (or one step, if a step costs more) of it.
    max_steps : steps as the method counts them (a mini-batch step counts
        once), or None; a run ends exactly at it.
    max_time : wall-clock seconds for the whole run from the state's
        construction on (steps, checkpoints and callback included), or None.
    tol : stop when the duality gap ≤ tol (tol ≤ 0 runs the budget out).
    eval_every : the checkpoint interval, in passes.

    ``max_passes=inf`` needs a finite ``max_steps`` or ``max_time``, or
    ``tol > 0`` on a problem with ``lam > 0`` (:meth:`check`).
    """

    max_passes: float = 50.0
    max_steps: float | None = None
    max_time: float | None = None
    tol: float = 1e-8
    eval_every: float = 1.0

    def __post_init__(self):
        max_passes = check_real("max_passes", self.max_passes, low=0.0, low_open=True, finite=False)
        eval_every = check_real("eval_every", self.eval_every, low=0.0, low_open=True)
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

    def kwargs(self) -> dict:
        """The budget as ``cdlab.solve`` keywords."""
        return asdict(self)
