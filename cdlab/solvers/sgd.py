"""Stochastic (sub)gradient descent on P(w) = (1/n) Σ_i φ_i(x_i·w) + (λ/2)‖w‖².

Step t = 1, 2, ...: pick i, w ← (1 − η_t λ) w − η_t φ_i'(x_i·w) x_i, with a
subgradient (``losses.loss_deriv``) for the hinge and absolute losses, and
η_t from the ``schedule``, one of

* ``"pegasos"`` η_t = 1/(λt) (Shalev-Shwartz, Singer, Srebro & Cotter 2011,
  Pegasos, without the optional projection); needs λ > 0. Safe for losses
  with |φ'| ≤ L (hinge, logistic, smoothed hinge, absolute): the iterates are
  averages of −φ'x_i/λ, so ‖w_t‖ ≤ LR/λ, and for smooth losses
  E‖w_t − w*‖² ≤ 4G²/(λ²t) (Rakhlin, Shamir & Sridharan 2012, Lemma 1), G² a
  bound on E‖stochastic gradient‖²: the noise floor that tests check. On the
  squared loss (φ' unbounded) its first steps, η ≈ 1/λ ≫ 1/‖x_i‖², blow up.
* ``"inverse"`` η_t = eta0/(1 + eta0·λ·t) (Bottou 2012, "Stochastic Gradient
  Descent Tricks", §5.2: γ_t = γ₀(1 + γ₀λt)⁻¹): never above eta0 = 1/L_max,
  so every sampled step w ↦ w − η∇f_i(w) is non-expansive (f_i convex and
  L_max-smooth, η ≤ 2/L_max), and ~1/(λt) later, the step of Moulines & Bach
  2011 (NIPS), Thm 1 with α = 1 and Cμ = 1 > 1/2: E‖w_t − w*‖² = O(1/t).
* ``"constant"`` η_t = eta0: linear convergence to a noise ball of size O(eta0).
* ``"decaying"`` η_t = eta0/√t: the SGD baseline of Frostig et al. 2015 §5
  (their "λ t^{−1/2}"); works for λ = 0.
* ``"auto"`` (the default): ``"pegasos"`` for a loss with bounded slope and
  λ > 0, ``"inverse"`` for the squared loss with λ > 0 (or any loss when
  eta0 is given: Pegasos has none), ``"decaying"`` when λ = 0 — a step that
  converges for every loss sgd accepts (``default_schedule``).

``eta0`` defaults to 1/L_max, L_max = max_i ‖x_i‖²/γ + λ (γ = 1 for a
non-smooth loss: a scale, not a theorem). The iterate reported is the last one.

Sparse data: w is stored as s·u with a scalar s (the classic trick of
Shalev-Shwartz et al. and Bottou), so the shrinkage (1 − η_t λ) is one
multiplication and a step costs ‖x_i‖₀; u is renormalised (O(d)) when |s|
leaves [1e-100, 1e100] and zeroed when the factor is exactly 0 (Pegasos' first
step). A step touches ‖x_i‖₀ nonzeros and is 1/n data pass.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import losses as L
from ..sampling import ORDERS, make_sampler
from ._kernels import sparse_axpy, sparse_dot
from .agd import check_step, smooth_constant
from .base import ALL_LOSSES, MethodSpec, State, register

PEGASOS, CONSTANT, DECAYING, INVERSE = 0, 1, 2, 3
_RULES = {"pegasos": PEGASOS, "constant": CONSTANT, "decaying": DECAYING, "inverse": INVERSE}


def default_schedule(problem, eta0=None) -> str:
    """The schedule ``schedule="auto"`` stands for on ``problem`` (module docstring); Pegasos has no
    eta0, so a given eta0 picks the inverse step in its place."""
    if problem.lam <= 0:
        return "decaying"
    return "pegasos" if problem.loss_info.lipschitz is not None and eta0 is None else "inverse"


@njit(cache=True, nogil=True, error_model="numpy")
def sgd_chunk(indptr, indices, data, y, code, s, lam, rule, eta0, t0, u, scale, order):
    """len(order) SGD steps on w = scale·u, steps numbered t0 + 1, ...

    Returns (new scale, nonzeros touched). Overflow is left to produce inf/NaN,
    which the driver reports as divergence.
    """
    touched = 0
    for k in range(order.shape[0]):
        t = t0 + k + 1
        if rule == PEGASOS:
            eta = 1.0 / (lam * t)
            shrink = 1.0 - 1.0 / t  # = 1 − ηλ exactly, so the first step really forgets w₀
        else:
            if rule == CONSTANT:
                eta = eta0
            elif rule == DECAYING:
                eta = eta0 / np.sqrt(t)
            else:
                eta = eta0 / (1.0 + eta0 * lam * t)
            shrink = 1.0 - eta * lam
        i = order[k]
        start, end = indptr[i], indptr[i + 1]
        z = sparse_dot(indices, data, start, end, u)
        g = L.loss_deriv(code, scale * z, y[i], s)
        if shrink == 0.0:
            u[:] = 0.0
            scale = 1.0
        else:
            scale *= shrink
        sparse_axpy(indices, data, start, end, -(eta * g / scale), u)
        if not (1e-100 <= abs(scale) <= 1e100):
            u *= scale
            scale = 1.0
        touched += end - start
    return scale, touched


class SGDState(State):
    def __init__(self, problem, sampling, rng, schedule="auto", eta0=None):
        if not isinstance(schedule, str) or schedule not in ("auto", *_RULES):
            raise ValueError(f"schedule must be one of {['auto', *_RULES]} (set its size with eta0), got {schedule!r}")
        if schedule == "auto":
            schedule = default_schedule(problem, eta0)
        if schedule == "pegasos" and eta0 is not None:
            # silently ignoring it would let a user believe the step was tuned
            raise ValueError("eta0 sets the 'constant', 'decaying' and 'inverse' steps; the Pegasos step 1/(λt) has no "
                             "eta0 (pass schedule='inverse', 'constant' or 'decaying' to use it)")
        if schedule == "pegasos" and problem.lam <= 0:
            raise ValueError("the Pegasos step 1/(λt) needs lam > 0; use schedule='decaying' or 'constant' with eta0")
        if problem.l1 > 0:
            raise ValueError("SGD here handles l1 = 0 only")
        self.eta0 = 1.0 / smooth_constant(problem) if eta0 is None else check_step(eta0, (), "eta0")
        super().__init__(problem, rng)
        self.rule = _RULES[schedule]
        self.sampler = make_sampler(sampling, problem.n_samples, what="examples")
        self.u = np.zeros(problem.n_features)
        self.scale = 1.0
        self.steps_per_pass = problem.n_samples

    def advance(self, n_steps):
        p = self.p
        order = self.sampler.draw(self.rng, n_steps)
        self.scale, touched = sgd_chunk(*p.csr_arrays, p.y, p.loss_code, p.s, p.lam,
                                        self.rule, self.eta0, self.steps, self.u, self.scale, order)
        return touched

    def iterate(self):
        return self.scale * self.u, None


register(MethodSpec(
    name="sgd", make=SGDState, kind="primal", axis="examples",
    source="Shalev-Shwartz et al. 2011 (Pegasos step 1/(λt)); Bottou 2012 (step eta0/(1 + eta0·λt)); "
           "Frostig et al. 2015 §5 (step eta0/√t)",
    losses=ALL_LOSSES, supports_l1=False, needs_lam=False,
    samplings=ORDERS, renamed={"step": "schedule"},
))
