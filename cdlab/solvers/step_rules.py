"""Step sizes of the variance-reduced methods SAG, SAGA and SVRG, in one place.

Each method's step is η = c/(L + λ + κ) with its constant c for the rule
(written beside the method; κ is APPA's proximal term, 0 otherwise) and L a
smoothness constant of the loss terms φ_i(x_i·w), chosen by the option
``step_size``, one of:

* ``"linesearch"`` (the default): SAG's line search on L (Schmidt, Le Roux &
  Bach 2017, "Minimizing finite sums with the stochastic average gradient",
  §4.6). At each step, with z = x_i·w and g = φ'(z), L is doubled until
  φ(z − g‖x_i‖²/L) ≤ φ(z) − g²‖x_i‖²/(2L), the descent inequality of the
  sampled term; after every step L ← L·2^{−1/n}. L starts at the mean
  ‖x_i‖²/γ. It finds the curvature the iterates meet: a logistic margin far
  from 0 has φ'' ≪ 1/γ, where the global constant makes every step tiny.
  Two departures keep it exact and bounded: the lazy sparse updates need one
  η between two catch-ups, so the decay is applied whole, L ← L/2 after every
  n steps, and a doubling ends a kernel call early (every coordinate is
  brought up to date, then the steps go on with the new η) — the iterates do
  not depend on how the driver chunks the steps; and the doubling stops once
  L ≥ ‖x_i‖²/γ, where the inequality holds in exact arithmetic (the loss is
  (1/γ)-smooth), so L < 2 max_i ‖x_i‖²/γ and rounding cannot drive it up.
  No theorem covers the steps it picks.
* ``"L_max"``: L = max_i ‖x_i‖²/γ (``agd.smooth_constant``), the constant of
  each method's theorem (Defazio et al. 2014 Thm 1 for SAGA with c = 1/3,
  Johnson & Zhang 2013 Thm 1 for SVRG, which needs η < 1/(4 L_max)).
* a number > 0: that η.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import losses as L
from .agd import check_step, smooth_constant

STEP_RULES = ("linesearch", "L_max")
# Schmidt et al. §4.6 skip the test when ‖∇f_i‖ < 1e-8: ‖∇f_i‖² = g²‖x_i‖² below this.
TINY_GRADIENT_SQ = 1e-16


@njit(inline="always", cache=True)
def lipschitz_search(code, z, y, s, row_sq, inv_gamma, L_est):
    """SAG's line search (Schmidt et al. 2017 §4.6) on the sampled term at z = x_i·w: the
    smallest L = L_est·2^k (k ≥ 0) with φ(z − g r/L) ≤ φ(z) − g² r/(2L), r = ‖x_i‖², g = φ'(z),
    doubling no further once L ≥ r/γ (module docstring)."""
    g = L.loss_deriv(code, z, y, s)
    gg = g * g * row_sq
    if gg < TINY_GRADIENT_SQ:
        return L_est
    cap = row_sq * inv_gamma
    f = L.loss_value(code, z, y, s)
    while L_est < cap and L.loss_value(code, z - g * row_sq / L_est, y, s) > f - 0.5 * gg / L_est:
        L_est *= 2.0
    return L_est


class StepRule:
    """η = c/(L + shift) for one state, L from the rule and c = ``constants[rule]`` (module
    docstring); ``eta`` is the current step.

    A kernel call runs at most ``steps_left()`` steps (to the next decay); ``after_chunk(k, L_found)``
    counts the k steps it did, halves L after every n steps, and takes the larger L that
    :func:`lipschitz_search` found before the next step (a fixed rule ignores both)."""

    def __init__(self, problem, step_size, constants, shift):
        self.rule = check_step(step_size, STEP_RULES, "step_size")
        c = constants.get(self.rule, 1.0)
        self.c, self.shift, self.n = c, shift, problem.n_samples
        self.t = 0  # steps done since the last decay
        self.search = self.rule == "linesearch"
        self.inv_gamma = 1.0 / problem.gamma
        self.L = 0.0  # the current constant; none for a given step
        if self.search:
            self.L = float(np.mean(problem.row_norms_sq)) * self.inv_gamma
        elif self.rule == "L_max":
            self.L = smooth_constant(problem) - problem.lam
        self.eta = c / (self.L + shift) if isinstance(self.rule, str) else self.rule

    def steps_left(self, n_steps):
        """The steps the next kernel call may run out of ``n_steps``."""
        return min(n_steps, self.n - self.t) if self.search else n_steps

    def after_chunk(self, k, L_found):
        if self.search:
            self.t += k
            if self.t == self.n:
                self.t = 0
                self.L *= 0.5
            self.L = max(self.L, L_found)
            self.eta = self.c / (self.L + self.shift)
