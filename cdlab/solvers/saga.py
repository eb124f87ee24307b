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

Step (``step_rules``): by default η = 1/(L + λ) for SAG (Schmidt et al.'s
practice; they prove 1/(16 L)) and 1/(2(L + λ)) for SAGA, L from SAG's line
search (Schmidt et al. §4.6); ``step_size="L_max"`` is η = 1/(3 L_max),
L_max = max_i ‖x_i‖²/γ + λ, the step of Defazio et al.'s Thm 1 for SAGA (the
default before the line search). A step touches ‖x_i‖₀ nonzeros and is 1/n
data pass.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import losses as L
from ..sampling import make_sampler
from ._kernels import affine_constants, affine_power_tables, catch_up_all, catch_up_dot
from .base import SMOOTH_LOSSES, MethodSpec, State, register
from .step_rules import StepRule, lipschitz_search

# c in η = c/(L + λ) per rule: with the line search, Schmidt et al.'s 1/L (SAG) and 1/(2L) for SAGA
# (Defazio et al.'s Thm 1 step 1/(2(μn + L)) without its μn term); with L_max, 1/(3 L_max) (Defazio et
# al.'s Thm 1 step for SAGA, used for both).
SAG_STEPS = {"linesearch": 1.0, "L_max": 1.0 / 3.0}
SAGA_STEPS = {"linesearch": 0.5, "L_max": 1.0 / 3.0}


@njit(cache=True, nogil=True, error_model="numpy")
def sag_chunk(indptr, indices, data, y, code, s, n, w, gbar, table, last, t0, a, log_a, rho, eta,
              saga, order, row_sq, inv_gamma, L_est, search, pk, qk):
    """Up to len(order) SAG (saga=False) or SAGA (saga=True) steps.

    Returns (nonzeros touched, steps done, L found): with ``search`` the chunk
    stops before the first step whose line search (``step_rules.lipschitz_search``)
    needs an L above ``L_est``, and returns that L; else it does every step and
    returns L found = 0.
    The untouched-coordinate recurrence is w_j ← a w_j + a'·(−η ḡ_j) with
    a' = 1 (SAG, a = 1 − ηλ) or a' = a (SAGA, a = 1/(1 + ηλ)); ``catch_up_all``
    uses b = −η ḡ in both cases (the prox form's factor is inside affine_powers). ``pk``, ``qk``: the
    chunk's ``affine_power_tables`` (k up to len(order)).
    """
    touched = 0
    for k in range(order.shape[0]):
        t = t0 + k
        i = order[k]
        start, end = indptr[i], indptr[i + 1]
        z = catch_up_dot(indices, data, start, end, w, gbar, -eta, last, t, a, log_a, rho, pk, qk)
        if search:
            L_new = lipschitz_search(code, z, y[i], s, row_sq[i], inv_gamma, L_est)
            if L_new > L_est:
                return touched, k, L_new
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
    return touched, order.shape[0], 0.0


class SAGState(State):
    """State of SAG / SAGA: w, the derivative table, ḡ and the catch-up clock."""

    def __init__(self, problem, sampling, rng, step_size="linesearch", saga=False):
        if problem.gamma is None:
            raise ValueError(f"{'SAGA' if saga else 'SAG'} needs a smooth loss, not {problem.loss!r}")
        n, d = problem.n_samples, problem.n_features
        self.step_rule = StepRule(problem, step_size, SAGA_STEPS if saga else SAG_STEPS, problem.lam)
        super().__init__(problem, rng)
        self.saga = saga
        self.sampler = make_sampler(sampling, n, what="examples")
        self._set_constants()
        self.w = np.zeros(d)
        self.gbar = np.zeros(d)
        self.table = np.zeros(n)
        self.last = np.zeros(d, dtype=np.int64)
        self.steps_per_pass = n

    def _set_constants(self):
        self.eta = self.step_rule.eta
        self.rho = self.eta * self.p.lam
        self.a, self.log_a = affine_constants(self.rho, prox_form=self.saga)

    def advance(self, n_steps):
        p, rule = self.p, self.step_rule
        order = self.sampler.draw(self.rng, n_steps)
        touched = done = 0
        while done < n_steps:
            chunk = order[done:done + rule.steps_left(n_steps - done)]
            pk, qk = affine_power_tables(self.a, self.log_a, self.rho, chunk.shape[0])
            nnz, k, L_new = sag_chunk(*p.csr_arrays, p.y, p.loss_code, p.s,
                                      float(p.n_samples), self.w, self.gbar, self.table, self.last, 0,
                                      self.a, self.log_a, self.rho, self.eta, self.saga, chunk,
                                      p.row_norms_sq, rule.inv_gamma, rule.L, rule.search, pk, qk)
            catch_up_all(self.w, -self.eta * self.gbar, self.last, k, pk, qk, self.a, self.log_a, self.rho)
            self.last[:] = 0
            touched += nnz
            done += k
            rule.after_chunk(k, L_new)
            self._set_constants()
        return touched

    def iterate(self):
        return self.w.copy(), None  # a copy: the driver keeps the last finite iterate


register(MethodSpec(
    name="sag", make=SAGState, fixed={"saga": False}, kind="primal", axis="examples",
    source="Schmidt, Le Roux & Bach 2017, SAG Algorithm 1 (sparse JIT updates, §4.5)",
    losses=SMOOTH_LOSSES, supports_l1=False, needs_lam=False,
    samplings=("uniform", "permutation"), renamed={"step": "step_size"},
    renamed_values={"step_size": {"auto": "L_max"}},  # the L_max rule's old name
))

register(MethodSpec(
    name="saga", make=SAGState, fixed={"saga": True}, kind="primal", axis="examples",
    source="Defazio, Bach & Lacoste-Julien 2014, SAGA (§2), L2 term as the prox",
    losses=SMOOTH_LOSSES, supports_l1=False, needs_lam=False,
    samplings=("uniform", "permutation"), renamed={"step": "step_size"},
    renamed_values={"step_size": {"auto": "L_max"}},  # the L_max rule's old name
))
