"""Primal randomized coordinate descent: NSync with a serial sampling.

Csiba & Richtárik 2016, Algorithm 1 (NSync, Richtárik & Takáč); theory.md §4.
With margins z = Xw kept up to date, a step on feature j ~ p reads column f_j
once (cost ‖f_j‖₀):

    g_j = (1/n) Σ_{i: X_ij≠0} φ_i'(z_i) X_ij + λ w_j ,   L_j = ‖f_j‖²/(γn) + λ
    w_j⁺ = w_j − g_j/L_j                     (μ = 0)
    w_j⁺ = S_{μ/L_j}(w_j − g_j/L_j)          (μ > 0: prox of μ|·| with weight L_j)
    z += (w_j⁺ − w_j) f_j

L_j is the ESO parameter of a serial sampling (face-off eq. 7), the
coordinate-wise Lipschitz constant of ∂_j of the smooth part, so each step
decreases P. Only smooth losses: the step needs φ' to be (1/γ)-Lipschitz.
The dual point reported is α(w) = −φ'(Xw), filled in by the driver.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import losses as L
from ..sampling import make_sampler
from ._kernels import scalar_soft_threshold, sparse_axpy
from .base import SMOOTH_LOSSES, MethodSpec, State, register

# z is updated incrementally, so it drifts from Xw by rounding: after K
# updates of entry i the error is at most about K·eps·max|z|, and typically
# √K·eps·|z|. That perturbs the gradient the method follows, never the
# certificate (the driver evaluates P, D and the gap from w itself). At the
# scales the tests and benchmarks run (≤ 10⁴ passes) the drift stays many
# orders below a 1e-13 gap, but long high-precision runs should not depend on
# that: every REFRESH_PASSES passes of work z is recomputed as Xw, and the
# nnz(X) that costs is counted in nnz_touched (about 1% extra work).
REFRESH_PASSES = 100.0


@njit(cache=True, nogil=True)
def primal_cd_chunk(indptr, indices, data, y, code, s, n_samples, lam, l1, lip, w, z, order):
    """Run len(order) primal coordinate steps on X in CSC form, updating w and
    z = Xw in place; returns the nonzeros touched (Σ ‖f_j‖₀ over the steps)."""
    touched = 0
    for k in range(order.shape[0]):
        j = order[k]
        start, end = indptr[j], indptr[j + 1]
        g = 0.0
        for p in range(start, end):
            i = indices[p]
            g += L.loss_deriv(code, z[i], y[i], s) * data[p]
        wj = w[j]
        g = g / n_samples + lam * wj
        u = wj - g / lip[j]
        if l1 > 0.0:
            u = scalar_soft_threshold(u, l1 / lip[j])
        touched += end - start
        delta = u - wj
        if delta != 0.0:
            w[j] = u
            sparse_axpy(indices, data, start, end, delta, z)
    return touched


class PrimalCDState(State):
    """State of primal RCD: w, the margins z = Xw and the constants L_j."""

    def __init__(self, problem, sampling, rng):
        super().__init__(problem, rng)
        n, d = problem.n_samples, problem.n_features
        gamma = problem.gamma  # not None: MethodSpec.check admits smooth losses only
        # A named sampling draws from the non-empty columns only: a step on an empty column
        # is a no-op (its gradient is λw_j with w_j = 0), so this is the same process with
        # the no-op steps skipped — each of which cost a draw and a kernel iteration (79% of
        # the draws on rcv1_small). Custom probabilities are taken over every column as given.
        self.cols = None
        if isinstance(sampling, str) and (problem.col_nnz == 0).any():
            self.cols = np.flatnonzero(problem.col_nnz > 0)
        sizes = problem.col_norms_sq if self.cols is None else problem.col_norms_sq[self.cols]
        self.sampler = make_sampler(sampling, sizes.shape[0], sizes, problem.lam, gamma, n, what="features")
        # A zero column has L_j = λ > 0: its step keeps w_j = 0, as it should.
        self.lip = problem.col_norms_sq / (gamma * n) + problem.lam
        self.w = np.zeros(d)
        self.z = np.zeros(n)
        self.steps_per_pass = self.sampler.steps_per_pass(
            problem.col_nnz if self.cols is None else problem.col_nnz[self.cols])
        self._touched_at_refresh = 0

    @property
    def pass_size(self):
        """A data pass reads every column the sampler draws from."""
        return self.sampler.size

    def advance(self, n_steps):
        p = self.p
        if self.nnz_touched - self._touched_at_refresh >= REFRESH_PASSES * p.nnz:
            self.z = p.X @ self.w
            self.nnz_touched += p.nnz
            self._touched_at_refresh = self.nnz_touched
        order = self.sampler.draw(self.rng, n_steps)
        if self.cols is not None:
            order = self.cols[order]
        return primal_cd_chunk(*p.csc_arrays, p.y, p.loss_code, p.s,
                               float(p.n_samples), p.lam, p.l1, self.lip, self.w, self.z, order)

    def iterate(self):
        return self.w, None


register(MethodSpec(
    name="primal_cd", make=PrimalCDState, kind="primal", axis="features",
    source="Csiba & Richtárik 2016, Algorithm 1 (NSync, serial sampling)",
    losses=SMOOTH_LOSSES, supports_l1=True,
    samplings=("uniform", "importance", "custom", "permutation", "cyclic"),
))
