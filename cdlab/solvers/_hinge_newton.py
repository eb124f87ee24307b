"""Newton's method on the hinge loss ("newton" with loss="hinge"): smoothing with continuation.

The hinge φ(z) = max(0, 1 − yz) has no second derivative, so Newton's method runs on its smoothed
neighbour φ_μ (theory.md §2, the smoothed hinge with s = μ: quadratic on 0 < 1 − yz < μ), whose P_μ
satisfies P_μ ≤ P ≤ P_μ + (μ/2)·q, q the share of examples with y_i x_i·w < 1 (Nesterov 2005,
"Smooth minimization of non-smooth functions", Math. Program. 103: the smoothing's bias is μ times the
conjugate's range). Each stage runs ``newton.NewtonState`` on P_μ (H by Cholesky over the examples on
the quadratic piece, the exact line search of ``_piecewise_line``) from the last stage's w, until the
step started within STAGE_SHARE of the bias, ‖∇P_μ‖²/(2λ) ≤ STAGE_SHARE·(μ/2)·q; then μ ← μ/MU_SHRINK.
The dual point of every step is α_i = −φ_μ'(x_i·w) = y_i·min(1, max(0, (1 − y_i x_i·w)/μ)), inside
the hinge's box, and the checkpoints certify the hinge's own duality gap P(w) − D(α) at (w, α), which
goes to 0 with μ. At each stage's end the checkpoint also tries the face primal (``_face_primal``) of α's
free examples, those on the quadratic piece: the stages place them near the kink, and their face
gives w* once it is the optimum's, so a run usually ends there, at μ of 1e-2 … 1e-3, long before
μ·q/2 alone would reach the tolerance.

Why: SDCA's coordinate steps on the hinge's box-constrained dual need hundreds of passes where n ≫ d
and λ is small, while the primal has d unknowns. Measured (one thread, certified relative gap 1e-6,
``benchmarks/hinge_newton_bench.py``): a9a λ = 0.01/n 108 Newton iterations (216 passes) against
SDCA with shrinking's ~600 passes, ijcnn1 λ = 0.01/n 23 iterations against ~330. Where SDCA needs few
passes (λ = 1/n), or d is large, SDCA wins: auto picks between them (``auto``).

The Hessian is formed over the rows on the quadratic piece only (``newton.gram_sweep`` skips the others),
also for X kept dense, whose BLAS path would multiply every row. Work: each iteration reads X twice (the
gradient with H, and XΔ), counted as Newton's; a face try its face's reads (``face_primal``).
"""
from __future__ import annotations

import numpy as np

from .. import losses as L
from ._face_cr import free_face
from ._face_primal import FACE_PRIMAL_SHARE, face_primal
from .base import State
from .newton import NewtonState, line_point

# the first stage's μ (margins are in units of the hinge's kink at y·z = 1)
MU_START = 0.1
# μ ← μ/MU_SHRINK at each stage's end; a stage ends after the step that started within STAGE_SHARE of the
# smoothing's bias. Measured (iterations to a certified relative gap of 1e-6, λ = 0.01/n, MU_START = 0.1;
# shrink / share): ijcnn1 34 (10 / 0.1), 23 (3 / 0.5), 24 (3 / 0.1), 34 (5 / 0.5), 26 (30 / 0.1); a9a 138, 108,
# 136, 122, 178; phishing 70, 75, 68, 84, 99; w8a 216, 272, 173, 232, 280
MU_SHRINK = 3.0
STAGE_SHARE = 0.5
# below this μ the stages stop shrinking (φ_μ'' = 1/μ: H's conditioning): a run with tol ≤ 0 goes on there
MU_FLOOR = 1e-9

# auto (``auto.choose``) runs Newton on the hinge where κ = mean ‖x_i‖²/(λn) ≥ AUTO_MIN_KAPPA (SDCA's passes grow
# with 1/(λn)), d ≤ AUTO_MAX_FEATURES (H's rows and its d³/3 factorisation stay cheap beside 2 passes) and
# n ≥ AUTO_MIN_ROWS_PER_FEATURE·d (the primal far smaller than the dual), else SDCA with shrinking. Measured (whole
# calls to a certified relative gap of 1e-6, one thread, rows scaled to mean norm 1, Newton ÷ SDCA's seconds):
# λ = 0.01/n: ijcnn1 (d = 22, n/d = 2272) 0.08, a9a (123, 265) 0.29, phishing (68, 163) 0.46, heart_scale (13, 21)
# 1.0, w8a (300, 166) 1.9, mushrooms (112, 73) 3.0, madelon (500, 4) 4.2, dense 1e5 × 500 (200) 1.6, colon-cancer
# (2000, 0.03) ~2000; λ = 1/n (κ ≈ 1): 1.2 (madelon) to 10 (w8a)
AUTO_MIN_KAPPA = 10.0
AUTO_MAX_FEATURES = 256
AUTO_MIN_ROWS_PER_FEATURE = 100


def auto_reason(problem) -> str:
    """Why auto runs Newton on this hinge-loss problem (AUTO_MIN_KAPPA's comment), or '' where it runs SDCA."""
    n, d = problem.n_samples, problem.n_features
    kappa = float(np.mean(problem.row_norms_sq)) / (problem.lam * n)
    if kappa < AUTO_MIN_KAPPA or d > AUTO_MAX_FEATURES or n < AUTO_MIN_ROWS_PER_FEATURE * d:
        return ""
    return (f"κ = mean ‖x_i‖²/(λn) = {kappa:.3g} ≥ {AUTO_MIN_KAPPA:g} (SDCA's passes grow with it), d = {d} ≤ "
            f"{AUTO_MAX_FEATURES} and n = {n} ≥ {AUTO_MIN_ROWS_PER_FEATURE}·d: Newton on smoothed hinges with "
            f"continuation (d unknowns, H by Cholesky; cdlab.solvers._hinge_newton), certified by the hinge's gap")


class HingeNewtonState(State):
    """Newton's method on the hinge by smoothing and continuation (module docstring); ``solver`` must be
    Cholesky's ("auto" or "cholesky": ``newton.features_refusal`` says why not)."""

    checkpoints_when_due = True

    def __init__(self, problem, sampling, rng, solver="auto", n_jobs=1):
        super().__init__(problem, rng)
        self.mu = MU_START
        self.inner = NewtonState(self._smoothed(self.mu), sampling, rng, solver="cholesky", n_jobs=n_jobs)
        self.inner.sample_size = 0  # every H exact: a sample would miss the few rows on the quadratic piece
        self.inner.dense = False  # H over those rows only (gram_sweep), not BLAS over every dense row
        self.steps_per_pass = self.inner.steps_per_pass
        self.n_jobs = n_jobs
        self.stage_done = False  # the last step ended a stage: the next checkpoint is due, then μ shrinks
        self.face_reads = 0  # the face primal's reads, counted in nnz_touched

    def _smoothed(self, mu):
        p = self.p
        return type(p).from_data(p.data, loss="smoothed_hinge", lam=p.lam, s=mu)

    def _shrink(self):
        """μ ← μ/MU_SHRINK (not below MU_FLOOR): the inner run goes on from its w and z on the new P_μ."""
        inner, p = self.inner, self.p
        self.mu = max(self.mu / MU_SHRINK, MU_FLOOR)
        inner.p = self._smoothed(self.mu)
        inner.value = (line_point(L.SMOOTHED_HINGE, inner.z, inner.z, p.y, self.mu, 0.0)[0] / p.n_samples
                       + 0.5 * p.lam * float(inner.w @ inner.w))
        inner.weights_at_z = inner.hessian_fresh = False
        inner.start_gap = None

    def run(self, n_steps):
        inner = self.inner
        for _ in range(n_steps):
            if self.stage_done:
                self.stage_done = False
                self._shrink()
            inner.run(1)
            self.stage_done = self.mu > MU_FLOOR and inner.start_gap <= STAGE_SHARE * self._bias()
        self.steps = inner.steps
        self.nnz_touched = inner.nnz_touched + self.face_reads
        self.data_passes = self.nnz_touched / self.p.nnz

    def _bias(self):
        """(μ/2)·q: P − P_μ at most, q the share of examples with y_i x_i·w < 1 (module docstring)."""
        p = self.p
        return 0.5 * self.mu * float(np.count_nonzero(p.y * self.inner.z < 1.0)) / p.n_samples

    def certificate_due(self, tol) -> bool:
        """After a stage's last step (its face is tried), after a step that started within tol of P_μ's optimum
        while the bias is within tol too, and always where tol ≤ 0."""
        start = self.inner.start_gap
        return tol <= 0.0 or self.stage_done or (start is not None and start + self._bias() <= tol)

    def iterate(self):
        """w and α = −φ_μ'(Xw), in the hinge's box (module docstring)."""
        p = self.p
        return self.inner.w, L.neg_deriv(L.SMOOTHED_HINGE, self.inner.z, p.y, self.mu)

    def primal_candidate(self, alpha, v, dual, gap, tol):
        """The face primal of α's free examples at a stage's end (``_face_primal``), within FACE_PRIMAL_SHARE of
        the steps' reads; its reads are counted."""
        if not self.stage_done:
            return None
        p = self.p
        max_reads = FACE_PRIMAL_SHARE * self.inner.nnz_touched - self.face_reads - p.nnz
        face = free_face(p, alpha, np.arange(p.n_samples))
        if max_reads <= 0 or face.shape[0] == 0:
            return None
        w, read = face_primal(p, alpha, v, face, max_reads, self.n_jobs)
        self.face_reads += read + (p.nnz if w is not None else 0)  # and the checkpoint's pass for Xw_F
        self.nnz_touched = self.inner.nnz_touched + self.face_reads
        self.data_passes = self.nnz_touched / p.nnz
        return w
