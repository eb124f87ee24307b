"""L-BFGS (scipy.optimize L-BFGS-B, memory 30) in the chunked driver.

scipy's L-BFGS-B runs its own loop, and restarting it per checkpoint would
throw its curvature memory away every pass — that would not be L-BFGS. So one
``minimize`` call runs, uninterrupted, in a worker thread, and its objective
function asks the driver for a permit before each evaluation: ``run(k)``
grants k evaluations and returns once all k are done and the worker is
blocked waiting for the next permit. The optimiser's state is never reset
between chunks, the work is exactly the evaluations granted, and the timings
include everything the evaluations and scipy's own iterations cost. The
reported iterate is the last one scipy accepted (its iteration callback), not
a line-search trial point. If scipy stops by itself (its line search cannot
progress at machine precision; ftol = gtol = 0 so it has no other reason), it
is restarted from its last iterate with a fresh memory, so a run always spends
the budget it is given. The worker is told to stop when the state is
garbage-collected (``weakref.finalize``).

Work: one evaluation = f and ∇f in one row-wise sweep = nnz(X) nonzeros
touched = one data pass = one "step"; a checkpoint interval is one evaluation.

Elastic net (μ > 0): L-BFGS-B on the split w = u − v, u, v ≥ 0, minimising
f(u − v) + (λ/2)‖u − v‖² + μ Σ(u + v), whose minimum is P*'s (at a minimiser
u_j v_j = 0, otherwise shrinking both lowers μΣ(u + v)); a standard smooth
bound-constrained reformulation, so no subgradient of |w| is ever taken.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

from .._checks import check_int
from ._kernels import dense_dot, loss_grad
from .base import SMOOTH_LOSSES, MethodSpec, State, register

_UNLIMITED = 2 ** 31 - 1


class _Closed(Exception):
    """Raised inside the objective to unwind scipy when the state goes away."""


class _Channel:
    """Permits from the driver to the worker, and the worker's accepted iterate."""

    def __init__(self, x0):
        self.cond = threading.Condition()
        self.budget = 0
        self.waiting = False
        self.closed = False
        self.error = None
        self.evals = 0
        self.x = x0.copy()

    def close(self):
        with self.cond:
            self.closed = True
            self.cond.notify_all()


def _objective(problem):
    """(x ↦ (P(x), ∇P(x))) on w, or on (u, v) for the elastic-net split; no reference to the state."""
    d = problem.n_features
    grad = np.empty(d)
    deriv = np.empty(problem.n_samples)
    lam, mu = problem.lam, problem.l1

    def f_grad_w(w):
        fw = loss_grad(*problem.csr_arrays, problem.y, problem.loss_code, problem.s, w, grad, deriv)
        return fw + 0.5 * lam * dense_dot(w, w), grad + lam * w

    if mu == 0:
        return f_grad_w

    def f_grad_split(x):
        u, v = x[:d], x[d:]
        fw, gw = f_grad_w(u - v)
        return fw + mu * float(u.sum() + v.sum()), np.concatenate([gw + mu, mu - gw])

    return f_grad_split


def _worker(ch, f_grad, memory, bounds):
    from scipy.optimize import minimize  # here, not at the top: importing it costs the page's start-up ~0.3 s

    def fun(x):
        with ch.cond:
            while ch.budget == 0 and not ch.closed:
                ch.waiting = True
                ch.cond.notify_all()
                ch.cond.wait()
            ch.waiting = False
            if ch.closed:
                raise _Closed
            ch.budget -= 1
        out = f_grad(x)
        with ch.cond:
            ch.evals += 1
        return out

    def accept(intermediate_result):
        with ch.cond:
            ch.x = np.array(intermediate_result.x, copy=True)

    options = dict(maxcor=memory, maxiter=_UNLIMITED, maxfun=_UNLIMITED, ftol=0.0, gtol=0.0)
    try:
        while True:  # each pass of this loop is a restart after scipy stopped by itself
            with ch.cond:
                x0 = ch.x.copy()
            res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds, callback=accept, options=options)
            if np.all(np.isfinite(res.x)):
                accept(res)
    except _Closed:
        pass
    except BaseException as exc:  # surfaced in the driver's thread by run()
        with ch.cond:
            ch.error = exc
            ch.waiting = True
            ch.cond.notify_all()


MAX_WORKSPACE = 2 ** 30  # bytes of L-BFGS-B workspace a memory option may ask for


class LBFGSState(State):
    def __init__(self, problem, sampling, rng, memory=30):
        super().__init__(problem, rng)
        self.memory = check_int("memory", memory)
        d = problem.n_features
        m = self.memory
        work = 8 * ((2 * m + 5) * (2 * d) + 11 * m * m + 8 * m)  # L-BFGS-B's workspace, bytes (d doubled: l1 split)
        if work > MAX_WORKSPACE:
            raise ValueError(f"memory={m} needs an L-BFGS-B workspace of {work / 2 ** 30:.3g} GiB for d={d}, over "
                             f"the {MAX_WORKSPACE / 2 ** 30:g} GiB allowed; use a smaller memory (default 30)")
        self.split = problem.l1 > 0
        self.ch = _Channel(np.zeros(2 * d if self.split else d))
        self.bounds = [(0.0, None)] * (2 * d) if self.split else None
        self.thread = None
        self._finalizer = weakref.finalize(self, _Channel.close, self.ch)
        self.steps_per_pass = 1

    def run(self, n_steps):
        ch = self.ch
        if self.thread is None:
            self.thread = threading.Thread(target=_worker, args=(ch, _objective(self.p), self.memory, self.bounds),
                                           name="cdlab-lbfgs", daemon=True)
            self.thread.start()
        with ch.cond:
            ch.budget += n_steps
            ch.cond.notify_all()
            while not ((ch.budget == 0 and ch.waiting) or ch.error is not None):
                ch.cond.wait()
            if ch.error is not None:
                raise RuntimeError(f"L-BFGS-B failed: {ch.error!r}") from ch.error
            evals = ch.evals
        self.steps = evals
        self.nnz_touched = evals * self.p.nnz
        self.data_passes = float(evals)

    def iterate(self):
        with self.ch.cond:
            x = self.ch.x.copy()
        if self.split:
            d = self.p.n_features
            return x[:d] - x[d:], None
        return x, None

    def close(self):
        """Stop the worker thread now (it also stops when the state is collected)."""
        self._finalizer()


register(MethodSpec(
    name="lbfgs", make=LBFGSState, kind="primal", axis="none",
    source="Byrd, Lu, Nocedal & Zhu 1995 (L-BFGS-B, scipy.optimize), memory 30",
    losses=SMOOTH_LOSSES, supports_l1=True, needs_lam=False,
))
