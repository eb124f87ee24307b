"""SPDC: the stochastic primal–dual coordinate method (Zhang & Xiao, ICML 2015).

Saddle form of theory.md §5 with the paper's dual y = −α (we store α):

    min_w max_α  (1/n) Σ_i (−α_i x_i·w − φ_i*(−α_i)) + g(w),
    g(w) = (λ/2)‖w‖² + μ‖w‖₁.

Algorithm 1 (mini-batch m, ``sampling="uniform"``): per step, for the m
distinct indices K drawn uniformly,

    α_i⁺ = argmax_a −φ_i*(−a) − a·x_i·w̄ − (a − α_i)²/(2σ)          eq. (5)
    w⁺   = argmin_w g(w) − ⟨U + ΔU, w⟩ + ‖w − w‖²/(2τ),  ΔU = (1/m) Σ_K Δα_k x_k   eq. (6)
    U   += (1/n) Σ_K Δα_k x_k            (U = Xᵀα/n = −u of the paper)      eq. (7)
    w̄    = w⁺ + θ(w⁺ − w)                                                  eq. (8)

with τ, σ, θ of Theorem 1 (eq. 10). Eq. (5) is SDCA's exact coordinate step
(``losses.dual_step``) with q = 1/σ: both maximise −φ*(−a) − a z − (q/2)(a − α_i)²
up to a constant, so every loss gets its closed form (Newton for logistic).

Algorithm 2 (``sampling="weighted"``, m = 1): p_k = 1/(2n) + ‖x_k‖/(2 Σ‖x_i‖),
dual weight q = p_k n/σ, ΔU = Δα x_k/(p_k n), parameters of Theorem 2 (R̄).

δ-perturbation (Section 3.1, Table 1; option ``delta``): for a non-smooth
loss, φ_i* + (δ/2)(·)² (the loss becomes its 1/δ-smooth Moreau envelope, so
γ := δ and the solution is within δL²/2 of P*); for λ = 0, g + (δ/2)‖w‖²
(λ := δ, within (δ/2)‖w*‖²). With the perturbation the dual step maximises
−φ*(−a) − (δ/2)a² − a z − (q/2)(a − α)², i.e. SDCA's step from the centre
qα/(q+δ) with weight q + δ.

Sparse data (Section 4): g is separable and a coordinate j that no row of the
batch touches evolves by the fixed map w_j ← S_{τμ}(w_j + τU_j)/(1 + λτ) with
U_j constant, so its update is delayed until a sampled row touches it and
then applied in O(1) (``_lazy_power``: an affine closed form per linear piece
of the map, ``_kernels.toward_fixed_point``; the elastic-net map has at most
three pieces and a monotone orbit). A step therefore costs Σ_K ‖x_k‖₀, not d.

Work: ``steps`` counts mini-batch steps, ``nnz_touched`` adds Σ_K ‖x_k‖₀ per
step (each sampled row counted once, as for SDCA, although it is read twice),
``data_passes`` = steps·m/n ("an equivalent pass over the dataset corresponds
to n/m iterations", Section 2.1).
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from .. import losses as L
from .._checks import check_real
from ..sampling import BatchSampler, Sampler, check_batch_size
from ._kernels import minibatch_kernel, power_table, scalar_soft_threshold, sparse_axpy, toward_fixed_point
from .base import ALL_LOSSES, MethodSpec, State, register


# --------------------------------------------------------------------------
# the delayed primal update
# --------------------------------------------------------------------------

@njit(inline="always", cache=True)
def _prox_step(x, Uj, tau, lam, l1):
    """One step of eq. (6)/(16) on a coordinate: argmin λ/2 w² + μ|w| − U w + (w − x)²/(2τ).
    It runs twice per nonzero a step reads: a product by the reciprocal of 1 + λτ (hoisted out of the
    kernel's loops) instead of a division, and no soft threshold when μ = 0, made SPDC's pass 2.6× faster
    (rcv1_small, logistic, λ = 1/n: 1.43 → 0.56 ms; reuters_moneyfx 4.7 → 2.9 ms)."""
    shrink = 1.0 / (1.0 + lam * tau)
    if l1 == 0.0:
        return (x + tau * Uj) * shrink
    return scalar_soft_threshold(x + tau * Uj, tau * l1) * shrink


@njit(inline="always", cache=True)
def _log_ratio(lam, tau):
    """log r, r = 1/(1 + λτ): the slope of the delayed map on each of its pieces."""
    return -math.log1p(lam * tau)


@njit(inline="always", cache=True)
def _lazy_power(x, k, Uj, tau, lam, l1, log_r, powers):
    """x after k steps of x ← S_{τμ}(x + τU)/(1 + λτ) (U fixed), in O(1);
    ``log_r`` = ``_log_ratio(lam, tau)`` and ``powers`` its ``power_table``
    (possibly empty), both computed once per chunk.

    On each linear piece the map is affine with ratio r = 1/(1+λτ); with μ = 0
    there is one piece, the fixed point U/λ. Inlined (it runs once per nonzero a
    step reads), with the μ > 0 orbit a call (``_lazy_power_pieces``).
    """
    if k == 0:
        return x
    if l1 == 0.0:
        return toward_fixed_point(x, k, Uj / lam, log_r, powers)
    return _lazy_power_pieces(x, k, Uj, tau, lam, l1, log_r, powers)


@njit(cache=True, nogil=True)
def _lazy_power_pieces(x, k, Uj, tau, lam, l1, log_r, powers):
    """``_lazy_power`` with μ = l1 > 0 and k > 0. The pieces:
    x > τ(μ−U): fixed point (U−μ)/λ;  x < −τ(μ+U): fixed point (U+μ)/λ;
    otherwise the image is 0. The map is monotone with a unique fixed point,
    so the orbit is monotone and crosses each piece boundary at most once;
    the number of steps spent on a piece comes from a logarithm, checked
    against the boundary to guard against rounding.
    """
    while k > 0:
        if x + tau * Uj > tau * l1:
            fixed, bound, sign = (Uj - l1) / lam, tau * (l1 - Uj), 1.0
        elif x + tau * Uj < -tau * l1:
            fixed, bound, sign = (Uj + l1) / lam, -tau * (l1 + Uj), -1.0
        else:
            x = 0.0
            k -= 1
            if abs(Uj) <= l1:
                return 0.0
            continue
        # on this piece while sign·x > sign·bound; the orbit tends to `fixed`
        if sign * fixed >= sign * bound:
            return toward_fixed_point(x, k, fixed, log_r, powers)
        est = math.log((bound - fixed) / (x - fixed)) / log_r  # steps until the boundary
        stay = k if est >= k else max(1, int(math.ceil(est)))
        while stay > 1 and not sign * toward_fixed_point(x, stay - 1, fixed, log_r, powers) > sign * bound:
            stay -= 1
        while stay < k and sign * toward_fixed_point(x, stay, fixed, log_r, powers) > sign * bound:
            stay += 1
        x = toward_fixed_point(x, stay, fixed, log_r, powers)
        k -= stay
    return x


# --------------------------------------------------------------------------
# the kernel: eqs. (5)-(8) as the 1-D updates of _kernels.minibatch_kernel
# --------------------------------------------------------------------------

# what the updates read: the data's labels and loss, the weights q_dual, c_primal,
# 1/n and δ_dual, τ, θ, λ, μ, the catch-up's log r and power table, and the arrays
_Step = namedtuple("_Step", "y code s q_dual c_primal inv_n delta_dual tau theta lam l1 log_r powers "
                            "alpha w w_prev U dU")


@njit(inline="always", cache=True)
def _catch_up(st, j, k):
    """k steps of eq. (6) on coordinate j with U_j fixed (no row touched it):
    w_prev[j] = w_j^(t−1), w[j] = w_j^(t). Inlined with ``_lazy_power``: it runs once per nonzero read, and
    a call with this many arguments cost SPDC more than the rest of its step."""
    wp = _lazy_power(st.w[j], k - 1, st.U[j], st.tau, st.lam, st.l1, st.log_r, st.powers)
    st.w_prev[j] = wp
    st.w[j] = _prox_step(wp, st.U[j], st.tau, st.lam, st.l1)


@njit(inline="always", cache=True)
def _extrapolated(st, j):
    """w̄_j = w_j + θ(w_j − w_j^prev), eq. (8): where the batch's rows are read."""
    return st.w[j] + st.theta * (st.w[j] - st.w_prev[j])


@njit(inline="always", cache=True)
def _dual_update(st, i, z):
    """Eq. (5) on α_i at x_i·w̄ = z (with the δ-perturbation's centre and weight). Returns Δα_i."""
    q = st.q_dual[i]
    a = st.alpha[i]
    a_new = L.dual_step(st.code, q * a / (q + st.delta_dual), z, st.y[i], q + st.delta_dual, st.s)
    st.alpha[i] = a_new
    return a_new - a


@njit(inline="always", cache=True)
def _batch_change(st, i, dalpha, indices, data, start, end):
    """ΔU += c_primal[i] Δα_i x_i (the batch's ΔU of eq. (6))."""
    sparse_axpy(indices, data, start, end, dalpha * st.c_primal[i], st.dU)


@njit(inline="always", cache=True)
def _primal_update(st, j):
    """Eq. (6) on coordinate j with U_j + ΔU_j; ΔU_j back to zero."""
    st.w_prev[j] = st.w[j]
    st.w[j] = _prox_step(st.w[j], st.U[j] + st.dU[j], st.tau, st.lam, st.l1)
    st.dU[j] = 0.0


@njit(inline="always", cache=True)
def _dual_average(st, i, dalpha, indices, data, start, end):
    """Eq. (7): U += (1/n) Δα_i x_i."""
    c = dalpha * st.inv_n
    if c != 0.0:
        sparse_axpy(indices, data, start, end, c, st.U)


_steps = minibatch_kernel(_catch_up, _extrapolated, _dual_update, _batch_change, _primal_update, _dual_average)


@njit(cache=True, nogil=True)
def spdc_chunk(indptr, indices, data, y, code, s, batches, q_dual, c_primal, inv_n,
               delta_dual, tau, theta, lam, l1, t0, alpha, w, w_prev, U, last, dU):
    """Run len(batches) SPDC steps (Algorithm 1 or 2) in place from global step t0.

    q_dual[i]: dual prox weight (1/σ or p_i n/σ); c_primal[i]: weight of Δα_i x_i
    in ΔU (1/m or 1/(p_i n)); inv_n: weight in U. ``dU`` is zero scratch of
    size d and is left zero. Returns the nonzeros touched.
    """
    log_r = _log_ratio(lam, tau)
    st = _Step(y, code, s, q_dual, c_primal, inv_n, delta_dual, tau, theta, lam, l1, log_r,
               power_table(log_r, batches.shape[0]), alpha, w, w_prev, U, dU)
    return _steps(indptr, indices, data, batches, t0, last, st, np.empty(batches.shape[1]))


@njit(cache=True, nogil=True)
def spdc_sync(t, w, U, last, tau, lam, l1, out):
    """out = w^(t) for every coordinate, without touching the state."""
    log_r = _log_ratio(lam, tau)
    no_powers = np.empty(0)
    for j in range(w.shape[0]):
        out[j] = _lazy_power(w[j], t - last[j], U[j], tau, lam, l1, log_r, no_powers)


# --------------------------------------------------------------------------
# parameters and state
# --------------------------------------------------------------------------

def spdc_loss_rule(loss, options) -> str:
    """SPDC's steps use the loss's smoothness γ: a non-smooth loss needs the δ-perturbation (Section 3.1)."""
    delta = options.get("delta", 0.0)
    if loss in L.SMOOTH_LOSSES or not isinstance(delta, (int, float, np.integer, np.floating)) or delta > 0:
        return ""  # a delta that is no number is refused by the state, with its own message
    return (f"SPDC needs a smooth loss; for the non-smooth {loss!r} loss pass delta > 0 (Section 3.1: the loss "
            "is smoothed to a 1/δ-smooth one, and the solution is within δ/2 of P*), or use loss='smoothed_hinge'")


def spdc_parameters(problem, m=1, weighted=False, delta=0.0):
    """(τ, σ, θ, γ_eff, λ_eff, δ_dual) of Theorem 1 (eq. 10) or Theorem 2,
    with the Section 3.1 perturbation applied where the problem needs it."""
    n = problem.n_samples
    gamma = problem.gamma
    delta_dual = 0.0
    if gamma is None:
        reason = spdc_loss_rule(problem.loss, {"delta": delta})
        if reason:
            raise ValueError(reason)
        gamma = delta_dual = float(delta)
    lam = problem.lam
    if lam == 0:
        if not delta > 0:
            raise ValueError("SPDC with lam = 0 needs delta > 0 (Section 3.1: g gets (δ/2)‖w‖², the solution "
                             "is within (δ/2)‖w*‖² of P*)")
        lam = float(delta)
    elif delta > 0 and problem.gamma is not None:
        raise ValueError("delta perturbs only a non-smooth loss or lam = 0 (Table 1); this problem has a "
                         f"smooth loss and lam = {problem.lam:g}, so pass delta=0")
    if weighted:
        Rbar = float(np.sqrt(problem.row_norms_sq).mean())
        if Rbar == 0:
            raise ValueError("SPDC needs at least one nonzero row of X")
        tau = np.sqrt(gamma / (n * lam)) / (4 * Rbar)
        sigma = np.sqrt(n * lam / gamma) / (4 * Rbar)
        theta = 1.0 - 1.0 / (2 * n + 2 * Rbar * np.sqrt(n / (lam * gamma)))
    else:
        R = problem.R
        if R == 0:
            raise ValueError("SPDC needs at least one nonzero row of X")
        tau = np.sqrt(m * gamma / (n * lam)) / (2 * R)
        sigma = np.sqrt(n * lam / (m * gamma)) / (2 * R)
        theta = 1.0 - 1.0 / (n / m + R * np.sqrt((n / m) / (lam * gamma)))
    return float(tau), float(sigma), float(theta), float(gamma), float(lam), delta_dual


class SPDCState(State):
    """α (n), U = Xᵀα/n, and the lazily updated w^(last_j), w^(last_j − 1)."""

    def __init__(self, problem, sampling, rng, batch_size=1, delta=0.0):
        n, d = problem.shape
        m = check_batch_size(batch_size, n)
        delta = check_real("delta", delta, low=0.0)
        weighted = sampling == "weighted"
        if weighted and m != 1:
            raise ValueError("sampling='weighted' is Algorithm 2, which takes one example per step "
                             f"(batch_size=1), got batch_size={m}")
        super().__init__(problem, rng)
        self.batch_size = m
        self.tau, self.sigma, self.theta, self.gamma_eff, self.lam_eff, self.delta_dual = \
            spdc_parameters(problem, m, weighted, delta)
        if not all(np.isfinite(v) and v > 0 for v in (self.tau, self.sigma, 1.0 - self.theta)):
            raise ValueError(f"SPDC's parameters (Thm 1) τ = {self.tau:.3g}, σ = {self.sigma:.3g}, θ = {self.theta:.17g} "
                             f"leave τ, σ ∈ (0, ∞), θ < 1 at lam={problem.lam:g}: λn/(γR²) = "
                             f"{problem.n_samples * problem.lam / (self.gamma_eff * problem.R ** 2):.3g} is "
                             "beyond floating point; rescale X or choose another λ")
        if weighted:
            norms = np.sqrt(problem.row_norms_sq)
            probs = 1.0 / (2 * n) + norms / (2 * norms.sum())
            self.sampler = Sampler(n, "probabilities", probs / probs.sum())
            self.q_dual = probs * n / self.sigma
            self.c_primal = 1.0 / (probs * n)
        else:
            self.sampler = BatchSampler(n, m)
            self.q_dual = np.full(n, 1.0 / self.sigma)
            self.c_primal = np.full(n, 1.0 / m)
        self.alpha = np.zeros(n)
        self.w = np.zeros(d)
        self.w_prev = np.zeros(d)  # w^(−1) = w^(0), so that w̄^(0) = w^(0)
        self.U = np.zeros(d)
        self.last = np.zeros(d, dtype=np.int64)
        self._dU = np.zeros(d)
        self._out = np.zeros(d)
        self.steps_per_pass = max(1, -(-n // m))
        self.rows_per_step = m

    def draw(self, n_steps):
        """(n_steps, m) indices: m distinct uniform ones (Alg. 1) or one from p (Alg. 2)."""
        return self.sampler.draw(self.rng, n_steps).reshape(n_steps, self.batch_size)

    def advance(self, n_steps):
        p = self.p
        batches = self.draw(n_steps)
        return spdc_chunk(*p.csr_arrays, p.y, p.loss_code, p.s, batches,
                          self.q_dual, self.c_primal, 1.0 / p.n_samples, self.delta_dual,
                          self.tau, self.theta, self.lam_eff, p.l1, self.steps,
                          self.alpha, self.w, self.w_prev, self.U, self.last, self._dU)

    def iterate(self):
        spdc_sync(self.steps, self.w, self.U, self.last, self.tau, self.lam_eff, self.p.l1, self._out)
        return self._out, self.alpha


register(MethodSpec(
    name="spdc", make=SPDCState, kind="primal-dual", axis="examples",
    source="Zhang & Xiao 2015, Algorithms 1-2, Theorems 1-2, Sections 3.1 and 4",
    losses=ALL_LOSSES, supports_l1=True, needs_lam=False, loss_rule=spdc_loss_rule,
    samplings=("uniform", "weighted"),
))
