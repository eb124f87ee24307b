"""ASDCA: accelerated mini-batch SDCA (Shalev-Shwartz & Zhang 2013, "Accelerated
Mini-Batch Stochastic Dual Coordinate Ascent", procedure ASDCA; theory.md §6).

Their α_i ∈ R^d is our α_i x_i and ∇g*(ᾱ) = ᾱ/λ is v(α) = Xᵀα/(λn), so one
iteration reads, for a batch I of m distinct indices drawn uniformly,

    u   = (1−θ) w + θ v(α)
    α_i ← (1−θ) α_i + θ(−φ_i'(x_i·u))          for i ∈ I
    w   ← (1−θ) w + θ v(α)                      (with the new α)

with θ from their Theorem 1, eq. (3). The theorem assumes φ_i (a function of
w) is (1/γ)-smooth; φ(x_i·w) is (‖x_i‖²/γ)-smooth, so we use γ' = γ/R²:

    θ = ¼ min{1, sqrt(γ'λn/m), γ'λn, (γ'λn)^{2/3}/m^{1/3}}.

Its guarantee, m E[P − P*] + n E[D* − D] ≤ (1 − θm/n)^t (m ΔP₀ + n ΔD₀), needs
n/(mθ) log(·) iterations. Only the L2 regulariser is analysed in the paper,
so ``l1`` is refused; the loss must be smooth (φ' enters the update).

Sparse data: between two visits to coordinate j, v_j is constant and w_j
follows w_j ← (1−θ)w_j + θv_j, so w_j = v_j + (1−θ)^k (w_j − v_j) after k
steps (``_kernels.toward_fixed_point``): w is updated lazily (as SPDC's Section 4 does) and a step costs
Σ_I ‖x_i‖₀, not d. ``data_passes`` = steps·m/n (their Figure 1 counts
processed examples).
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from .. import losses as L
from .._checks import check_real
from ._kernels import minibatch_kernel, no_row_finish, power_table, sparse_axpy, toward_fixed_point
from .base import SMOOTH_LOSSES, MethodSpec, State, register
from ..sampling import BatchSampler, check_batch_size


# what the 1-D updates read: the data's labels and loss, θ, λn, the catch-up's
# log(1 − θ) and power table, and the arrays α, v, w
_Step = namedtuple("_Step", "y code s theta lam_n log_keep powers alpha v w")


@njit(inline="always", cache=True)
def _catch_up(st, j, k):
    """k steps of w_j ← (1−θ)w_j + θv_j with v_j fixed (no row touched j)."""
    st.w[j] = toward_fixed_point(st.w[j], k, st.v[j], st.log_keep, st.powers)


@njit(inline="always", cache=True)
def _point(st, j):
    """u_j = (1−θ)w_j + θv_j, where the batch's rows are read."""
    return (1.0 - st.theta) * st.w[j] + st.theta * st.v[j]


@njit(inline="always", cache=True)
def _row_update(st, i, z):
    """α_i ← (1−θ)α_i + θ(−φ_i'(x_i·u))."""
    step = st.theta * (-L.loss_deriv(st.code, z, st.y[i], st.s) - st.alpha[i])
    st.alpha[i] += step
    return step


@njit(inline="always", cache=True)
def _spread(st, i, step, indices, data, start, end):
    """v = Xᵀα/(λn) follows α_i: v += Δα_i x_i/(λn). (A product by 1/(λn), hoisted out of the kernel's
    loops, not a division: it runs once per nonzero a step reads; 8 % of ASDCA's pass on rcv1_small.)"""
    c = step * (1.0 / st.lam_n)
    if c != 0.0:
        sparse_axpy(indices, data, start, end, c, st.v)


@njit(inline="always", cache=True)
def _settle(st, j):
    """w_j ← (1−θ)w_j + θv_j with the batch's new v."""
    st.w[j] = _point(st, j)


_steps = minibatch_kernel(_catch_up, _point, _row_update, _spread, _settle, no_row_finish)


@njit(cache=True, nogil=True)
def asdca_chunk(indptr, indices, data, y, code, s, batches, theta, lam_n, t0, alpha, v, w, last):
    """Run len(batches) ASDCA iterations in place from global step t0; w_j
    holds w at time last[j]. Returns the nonzeros touched."""
    log_keep = math.log1p(-theta)
    st = _Step(y, code, s, theta, lam_n, log_keep, power_table(log_keep, batches.shape[0]), alpha, v, w)
    return _steps(indptr, indices, data, batches, t0, last, st, np.empty(batches.shape[1]))


@njit(cache=True, nogil=True)
def asdca_sync(t, theta, v, w, last, out):
    """out = w at time t for every coordinate, without touching the state."""
    log_keep = math.log1p(-theta)
    no_powers = np.empty(0)
    for j in range(w.shape[0]):
        out[j] = toward_fixed_point(w[j], t - last[j], v[j], log_keep, no_powers)


def asdca_theta(problem, m):
    """θ of Theorem 1, eq. (3), with γ' = γ/R² for rows of norm up to R."""
    if problem.R == 0:
        raise ValueError("ASDCA needs at least one nonzero row of X")
    glm = problem.gamma / problem.R ** 2 * problem.lam * problem.n_samples
    return 0.25 * min(1.0, np.sqrt(glm / m), glm, glm ** (2 / 3) / m ** (1 / 3))


class ASDCAState(State):
    """α, v = Xᵀα/(λn), and w updated lazily."""

    def __init__(self, problem, sampling, rng, batch_size=1, theta=None):
        n, d = problem.shape
        self.batch_size = check_batch_size(batch_size, n)
        if theta is None:
            theta = asdca_theta(problem, self.batch_size)
        else:
            theta = check_real("theta", theta, low=0.0, high=1.0, low_open=True, high_open=True)
        super().__init__(problem, rng)
        self.theta = float(theta)
        self.sampler = BatchSampler(n, self.batch_size)
        self.alpha = np.zeros(n)
        self.v = np.zeros(d)
        self.w = np.zeros(d)
        self.last = np.zeros(d, dtype=np.int64)
        self._out = np.zeros(d)
        self.steps_per_pass = max(1, -(-n // self.batch_size))
        self.rows_per_step = self.batch_size

    def advance(self, n_steps):
        p = self.p
        batches = self.sampler.draw(self.rng, n_steps)
        return asdca_chunk(*p.csr_arrays, p.y, p.loss_code, p.s, batches,
                           self.theta, p.lam * p.n_samples, self.steps, self.alpha, self.v, self.w, self.last)

    def iterate(self):
        asdca_sync(self.steps, self.theta, self.v, self.w, self.last, self._out)
        return self._out, self.alpha


register(MethodSpec(
    name="asdca", make=ASDCAState, kind="dual", axis="examples",
    source="Shalev-Shwartz & Zhang 2013, Accelerated Mini-Batch SDCA, procedure ASDCA and Theorem 1",
    losses=SMOOTH_LOSSES, supports_l1=False,
    samplings=("uniform",),
))
