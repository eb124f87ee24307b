"""SAG and SAGA with just-in-time sparse updates.

For a linear model the gradient of φ_i(x_i·w) is φ_i'·x_i, so the gradient
table is one scalar per example, d_i, and its average ḡ = (1/n) Σ_i d_i x_i.
The table starts at zero (no pass at w₀).

* SAG (Schmidt, Le Roux & Bach 2017, "Minimizing finite sums with the
  stochastic average gradient", Algorithm 1 with the L2 term in the gradient,
  their §4.5 sparse implementation): pick i, d_i ← φ_i'(x_i·w), update ḡ,
  then w ← w − η(ḡ + λw) = (1 − ηλ) w − η ḡ.
* SAGA (Defazio, Bach & Lacoste-Julien 2014, Algorithm in §2, with the L2
  term as the prox): pick i, g = φ_i'(x_i·w),
  w ← prox_{ηλ/2‖·‖²}(w − η[(g − d_i) x_i + ḡ]) = (w − η[(g − d_i) x_i + ḡ])/(1 + ηλ),
  then d_i ← g and ḡ += (g − d_i_old) x_i/n.

Just-in-time updates: ḡ_j changes only when a row containing j is used, and
then w_j is brought up to date first; between two such steps every step applies
w_j ← a w_j + a'·ḡ_j with constant ḡ_j (a = 1 − ηλ for SAG, 1/(1 + ηλ) for
SAGA), so k missed steps are applied in closed form when j is next read
(``_kernels.affine_powers``). A step costs ‖x_i‖₀, not d, and the iterates equal
the dense algorithm's up to rounding (tests/test_baselines.py checks it step by
step). At the end of each chunk every coordinate is brought up to date (O(d)).

Default step η = 1/(3 L_max), L_max = max_i ‖x_i‖²/γ + λ (Defazio et al.'s
step for SAGA; Schmidt et al. prove 1/(16 L) for SAG and use 1/L in practice).
A step touches ‖x_i‖₀ nonzeros and is 1/n data pass.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import losses as L
from ..sampling import make_sampler
from ._kernels import affine_constants, affine_power_tables, catch_up_all, catch_up_dot
from .agd import check_step, smooth_constant
from .base import SMOOTH_LOSSES, MethodSpec, State, register


@njit(cache=True, nogil=True, error_model="numpy")
def sag_chunk(indptr, indices, data, y, code, s, n, w, gbar, table, last, t0, a, log_a, rho, eta,
              saga, order):
    """len(order) SAG (saga=False) or SAGA (saga=True) steps; returns nonzeros touched.

    The untouched-coordinate recurrence is w_j ← a w_j + a'·(−η ḡ_j) with
    a' = 1 (SAG, a = 1 − ηλ) or a' = a (SAGA, a = 1/(1 + ηλ)); ``catch_up_all``
    uses b = −η ḡ in both cases (the prox form's factor is inside affine_powers).
    """
    pk, qk = affine_power_tables(a, log_a, rho, order.shape[0])
    touched = 0
    for k in range(order.shape[0]):
        t = t0 + k
        i = order[k]
        start, end = indptr[i], indptr[i + 1]
        z = catch_up_dot(indices, data, start, end, w, gbar, -eta, last, t, a, log_a, rho, pk, qk)
        g = L.loss_deriv(code, z, y[i], s)
        delta = g - table[i]
        table[i] = g
        if saga:
            for p in range(start, end):
                j = indices[p]
                w[j] = a * (w[j] - eta * (delta * data[p] + gbar[j]))
                gbar[j] += delta * data[p] / n
                last[j] = t + 1
        else:
            for p in range(start, end):
                j = indices[p]
                gbar[j] += delta * data[p] / n
                w[j] = a * w[j] - eta * gbar[j]
                last[j] = t + 1
        touched += end - start
    return touched


class SAGState(State):
    """State of SAG / SAGA: w, the derivative table, ḡ and the catch-up clock."""

    def __init__(self, problem, sampling, rng, step="auto", saga=False):
        if problem.gamma is None:
            raise ValueError(f"{'SAGA' if saga else 'SAG'} needs a smooth loss, not {problem.loss!r}")
        step = check_step(step, ("auto",))
        n, d = problem.n_samples, problem.n_features
        super().__init__(problem, rng)
        self.saga = saga
        self.sampler = make_sampler(sampling, n, what="examples")
        self.eta = 1.0 / (3.0 * smooth_constant(problem)) if step == "auto" else step
        self.rho = self.eta * problem.lam
        self.a, self.log_a = affine_constants(self.rho, prox_form=saga)
        self.w = np.zeros(d)
        self.gbar = np.zeros(d)
        self.table = np.zeros(n)
        self.last = np.zeros(d, dtype=np.int64)
        self.steps_per_pass = n

    def advance(self, n_steps):
        p = self.p
        order = self.sampler.draw(self.rng, n_steps)
        touched = sag_chunk(p.X.indptr, p.X.indices, p.X.data, p.y, p.loss_code, p.s,
                            float(p.n_samples), self.w, self.gbar, self.table, self.last, 0,
                            self.a, self.log_a, self.rho, self.eta, self.saga, order)
        catch_up_all(self.w, -self.eta * self.gbar, self.last, n_steps, self.a, self.log_a, self.rho)
        self.last[:] = 0
        return touched

    def iterate(self):
        return self.w.copy(), None  # a copy: the driver keeps the last finite iterate


register(MethodSpec(
    name="sag", make=SAGState, fixed={"saga": False}, kind="primal", axis="examples",
    source="Schmidt, Le Roux & Bach 2017, SAG Algorithm 1 (sparse JIT updates, §4.5)",
    losses=SMOOTH_LOSSES, supports_l1=False, needs_lam=False,
    samplings=("uniform", "permutation"),
))

register(MethodSpec(
    name="saga", make=SAGState, fixed={"saga": True}, kind="primal", axis="examples",
    source="Defazio, Bach & Lacoste-Julien 2014, SAGA (§2), L2 term as the prox",
    losses=SMOOTH_LOSSES, supports_l1=False, needs_lam=False,
    samplings=("uniform", "permutation"),
))
