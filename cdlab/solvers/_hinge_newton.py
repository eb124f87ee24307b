"""Newton's method on the hinge loss ("newton" with loss="hinge"): smoothing with continuation.

The hinge φ(z) = max(0, 1 − yz) has no second derivative, so Newton's method runs on its smoothed
neighbour φ_s (theory.md §2, the smoothed hinge: quadratic on 0 < 1 − yz < s), whose P_s satisfies
P_s ≤ P ≤ P_s + (s/2)·q, q the share of examples with y_i x_i·w < 1 (Nesterov 2005, "Smooth minimization
of non-smooth functions", Math. Program. 103: the smoothing's bias is s times the conjugate's range). Each
stage runs ``newton.NewtonState`` on P_s (H by Cholesky over the rows on the quadratic piece only, the
exact line search of ``_piecewise_line``) from the last stage's w, until a step started within
STAGE_SHARE of the bias, ‖∇P_s‖²/(2λ) ≤ STAGE_SHARE·(s/2)·q; then s ← s/S_SHRINK. The dual point of
every step is α_i = −φ_s'(z_i) = y_i·min(1, max(0, (1 − y_i z_i)/s)), z the carried Xw, inside the
hinge's box, and the checkpoints certify the hinge's own duality gap P(w) − D(α) at (w, α), which goes to 0
with s. Under eval_every="auto" a checkpoint follows each stage's last step and also tries the face primal
(``_face_primal``) of α's free examples, those on the quadratic piece: the stages place them near the kink,
and their face gives w* once it is the optimum's, so a run usually ends there (λ = 0.01/n: a9a at s = 1.2e-3,
ijcnn1 3.7e-3, phishing 4.1e-4, heart_scale 3.7e-3, each returning the face's w), long
before (s/2)·q alone would reach the tolerance (with a numeric eval_every a stage may end between
checkpoints, untried).

Why: SDCA's coordinate steps on the hinge's box-constrained dual need hundreds of passes where n ≫ d
and λ is small, while the primal has d unknowns. Where SDCA needs few passes (λ = 1/n), or d is large,
SDCA wins: auto picks between them (AUTO_MIN_C_NORM's comment, measured by
``benchmarks/hinge_newton_bench.py``).

Work: each iteration reads X twice (the gradient with H, and XΔ), counted as Newton's; a face try its
reads (``face_primal_try``).
"""
from __future__ import annotations

import numpy as np

from .. import losses as L
from ._face_primal import face_primal_try
from .base import State

# the first stage's s (margins are in units of the hinge's kink at y·z = 1)
S_START = 0.1
# s ← s/S_SHRINK at each stage's end; a stage ends after the step that started within STAGE_SHARE of the
# smoothing's bias. Measured by an ad-hoc probe (NewtonState driven by hand, the face primal tried at each stage's
# end; Newton iterations to a certified relative gap of 1e-6, λ = 0.01/n, S_START = 0.1; shrink / share): ijcnn1 34
# (10 / 0.1), 23 (3 / 0.5), 24 (3 / 0.1), 34 (5 / 0.5), 26 (30 / 0.1); a9a 138, 108, 136, 122, 178; phishing 70, 75,
# 68, 84, 99; w8a 216, 272, 173, 232, 280
S_SHRINK = 3.0
STAGE_SHARE = 0.5
# below this s the stages stop shrinking (φ_s'' = 1/s: H's conditioning): a run with tol ≤ 0 goes on there
S_FLOOR = 1e-9

# auto (``auto.choose``) runs Newton on the hinge where C·mean ‖x_i‖² ≥ AUTO_MIN_C_NORM, C = 1/(λn) (liblinear's C:
# SDCA's passes grow with it), d ≤ AUTO_MAX_FEATURES (H's rows and its d³/3 factorisation stay cheap beside 2 passes)
# and n ≥ AUTO_MIN_ROWS_PER_FEATURE·d (the primal far smaller than the dual), else SDCA with shrinking. Measured
# (benchmarks/hinge_newton_bench.py: whole calls to a certified relative gap of 1e-6, one thread, rows scaled to
# mean norm 1, interleaved pairs, Newton ÷ SDCA's seconds): λ = 0.01/n ijcnn1 (d = 22, n/d = 2272) 0.07, a9a (123,
# 265) 0.29, phishing (68, 163) 0.46, heart_scale (13, 21) 0.99, w8a (300, 166) 1.85, mushrooms (112, 73) 2.98,
# madelon (500, 4) 4.28; λ = 1/n a9a 5.0, ijcnn1 5.1, phishing 3.4. Single calls at λ = 0.01/n: dense 1e5 × 500
# (n/d = 200) 38 s against SDCA's 23.8 s in the race, colon-cancer (2000, 0.03) 5.3 s against 2.6 ms
AUTO_MIN_C_NORM = 10.0
AUTO_MAX_FEATURES = 256
AUTO_MIN_ROWS_PER_FEATURE = 100


def auto_reason(problem) -> str:
    """Why auto runs Newton on this hinge-loss problem (AUTO_MIN_C_NORM's comment), or '' where it runs SDCA."""
    n, d = problem.n_samples, problem.n_features
    c_norm = float(np.mean(problem.row_norms_sq)) / (problem.lam * n)
    if c_norm < AUTO_MIN_C_NORM or d > AUTO_MAX_FEATURES or n < AUTO_MIN_ROWS_PER_FEATURE * d:
        return ""
    return (f"C·mean ‖x_i‖² = {c_norm:.3g} ≥ {AUTO_MIN_C_NORM:g} (C = 1/(λn): SDCA's passes grow with it), d = {d} ≤ "
            f"{AUTO_MAX_FEATURES} and n = {n} ≥ {AUTO_MIN_ROWS_PER_FEATURE}·d: Newton on smoothed hinges with "
            f"continuation (d unknowns, H by Cholesky; cdlab.solvers._hinge_newton), certified by the hinge's gap")


class HingeNewtonState(State):
    """Newton's method on the hinge by smoothing and continuation (module docstring). ``stage_state``: the class
    each stage's run is, ``newton.NewtonState`` (``newton.make_state`` builds this state, having refused a solver
    other than Cholesky's: this module sits below ``newton``), run on Cholesky's path with every H exact by the
    sparse sweep."""

    checkpoints_when_due = True

    def __init__(self, problem, sampling, rng, stage_state, n_jobs=1):
        super().__init__(problem, rng)
        self.s = S_START
        self.inner = stage_state(problem.with_params(loss="smoothed_hinge", s=self.s), sampling, rng,
                                 solver="cholesky", n_jobs=n_jobs, sparse_gram=True)
        self.steps_per_pass = self.inner.steps_per_pass
        self.n_jobs = n_jobs
        self.stage_done = False  # the last step ended a stage: the next checkpoint is due, then s shrinks
        self.bias = 0.0  # (s/2)·q at the last step's end (``_bias``)
        self.face_reads = 0  # the face primal's reads, counted in nnz_touched

    def run(self, n_steps):
        inner = self.inner
        for _ in range(n_steps):
            if self.stage_done:
                self.stage_done = False
                self.s = max(self.s / S_SHRINK, S_FLOOR)
                inner.restart_on(self.p.with_params(loss="smoothed_hinge", s=self.s))
            inner.run(1)
            self.bias = self._bias()
            self.stage_done = self.s > S_FLOOR and inner.start_gap <= STAGE_SHARE * self.bias
        self._count()

    def _count(self):
        self.steps = self.inner.steps
        self.nnz_touched = self.inner.nnz_touched + self.face_reads
        self.data_passes = self.nnz_touched / self.p.nnz

    def _bias(self):
        """(s/2)·q: P − P_s at most, q the share of examples with y_i x_i·w < 1 (module docstring)."""
        p = self.p
        return 0.5 * self.s * float(np.count_nonzero(p.y * self.inner.z < 1.0)) / p.n_samples

    def certificate_due(self, tol) -> bool:
        """After a stage's last step (its face is tried), after a step that started within tol of P_s's optimum
        with the bias, and always where tol ≤ 0."""
        start = self.inner.start_gap
        return tol <= 0.0 or self.stage_done or (start is not None and start + self.bias <= tol)

    def iterate(self):
        """w and α = −φ_s'(z), in the hinge's box (module docstring)."""
        return self.inner.w, L.neg_deriv(L.SMOOTHED_HINGE, self.inner.z, self.p.y, self.s)

    def primal_candidate(self, alpha, v, dual, gap, tol):
        """At a stage's end, ``face_primal_try`` within its budget of the steps' reads; its reads are counted."""
        if not self.stage_done:
            return None
        w, read = face_primal_try(self.p, alpha, v, self.inner.nnz_touched, self.face_reads, self.n_jobs)
        self.face_reads += read
        self._count()
        return w
