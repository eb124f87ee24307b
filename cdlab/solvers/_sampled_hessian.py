"""Newton's Cholesky path with a subsampled Hessian on the steps that cannot end the run (Byrd, Chin, Neveitt &
Nocedal 2011, "On the use of stochastic Hessian information in optimization methods for machine learning", SIAM
J. Optim. 21(3); Roosta-Khorasani & Mahoney 2019, "Sub-sampled Newton methods", Math. Program. 174).

Far from the optimum Newton is in its damped phase, each step cutting the gap G_k = ‖∇P(w_k)‖²/(2λ) by a roughly
constant factor (logistic, λ = 1/n: ijcnn1 3e9 → 1e8 → 2e7 → 2e6 → 1e5 times tol, then 7e2 and 0.02 once
quadratic), and an exact H buys little over an estimate. A step that starts from G_k above SAMPLE_REACH·√(tol·P)
forms H from m of the n rows (``sample_size``), drawn without replacement by the run's rng, each weighted n/m (so
E[H_S] = H), its diagonal raised to H's exact one wherever the sample's falls short:

    H_S = (n/m) Σ_{i∈S} φ''_i x_i x_iᵀ/n, then (H_S)_jj ← max((H_S)_jj, H_jj − λ)

— a feature the sample leaves out (the rare columns of binary data) would otherwise get curvature λ alone, and a
step of its gradient over λ (logistic a9a at λ = 0.01/n: 11 iterations with the plain sample, 7 with the raised
diagonal, as exact Newton). ∇P and diag(H) come exact from one sweep (``_newton_cg.jacobi``, or a checkpoint's
``certified_jacobi``), so Δ = −(H_S + λI)⁻¹∇P is a descent direction (H_S + λI ≻ 0) and the line search keeps
every step decreasing P. Along Δ the exact curvature is known without forming H: ΔᵀHΔ = Σ_i φ''_i (XΔ)_i²/n +
λ‖Δ‖² (``curvature_along``, from the line search's own XΔ), against the sample's ΔᵀH_SΔ = −∇P·Δ. Where it exceeds
the sample's more than SAMPLE_CURVATURE_RATIO-fold the step takes the exact H instead, and the run samples no
more; else the line search starts from t = min(1, ΔᵀH_SΔ/ΔᵀHΔ). A sampled step whose next gap is not below
1/SAMPLE_PROGRESS of its own also ends the sampling. The steps from SAMPLE_REACH·√(tol·P) on, those that
converge quadratically, form the exact H; once a step has formed it, every later step does (in one read with
∇P, as on the path without sampling). A run without a tol > 0 never samples.

Work: a sampled step reads X for ∇P and diag(H) (fused into the checkpoint's sweep after a checkpoint), for H (the
m sampled rows' nonzeros) and for XΔ, each counted; the first exact step after the sampling, unless a checkpoint
gave its ∇P, reads X once more than a step of the path without sampling. The curvature check was measured on the
runs where it bites (logistic w8a at λ = 0.01/n, solver="cholesky", seeds 0–2, before the check): the first
sampled Δ's ratio was 1.86–1.89 on two seeds of three, while every sampled step that went on well on ijcnn1, a9a,
phishing, mushrooms and w8a (λ = 1/n and 0.01/n) had 0.74–1.46; those two samples had put w's largest entry at
191 where exact Newton's first step puts it at 9, and exact Newton took 15 more steps from there, 18 in all
against 11. Whole calls as shipped (benchmarks/sampled_hessian_bench.py, to a certified relative gap 1e-6,
solver="cholesky", seeds 0–3, 3 interleaved pairs, exact H ÷ sampled, λ = 1/n and 0.01/n): logistic ijcnn1 1.20
and 1.18, phishing 1.13 and 1.43, a9a 1.34 and 1.40, mushrooms 1.32 and 1.29, w8a 1.46 and 1.06. Memory: n + m
row indices (every row's, for the exact H through the same kernels, and a sample's) and the Jacobi sweep's
d-vector.
"""
from __future__ import annotations

import math

from numba import njit

from ._kernels import entry

# m = max(SAMPLE_FRACTION·n, SAMPLE_ROWS_PER_FEATURE·d) rows; a problem where m > n/2 never samples (too little to
# gain). Measured (logistic, certified relative gap 1e-6, λ = 1/n and 0.01/n, a replay of the path in numpy before
# it was built): with 0.1·n rows the iterations of ijcnn1, a9a, mushrooms and phishing stayed within one of exact
# Newton's (5–10); with 0.05·n, phishing (552 rows, 8·d) and w8a (1/n) took one or two more.
SAMPLE_FRACTION = 0.1
SAMPLE_ROWS_PER_FEATURE = 16
# The steps from a gap above SAMPLE_REACH·√(tol·P) sample H (a step from above newton.DUE_REACH·√(tol·P) cannot end
# the run). Measured (the bench of the docstring before the curvature check, seeds 0–3, exact ÷ sampled at 300 and
# at DUE_REACH): equal within 0.05 on ijcnn1 and phishing, 300 ahead on a9a 1/n (1.31 against 1.16) and mushrooms
# 1/n (1.54 against 1.37); at 1e4 and 1e5 (one seed) fewer steps sampled and less gained, at 100 ijcnn1 1/n lost
# (0.96).
SAMPLE_REACH = 300.0
# A sampled Δ along which the exact curvature is more than this many times the sample's gives way to the exact H's:
# between the ratios of the sampled steps that went on well (0.74–1.46) and of those that derailed w8a (1.86–1.89;
# the docstring's measurements).
SAMPLE_CURVATURE_RATIO = 1.6
# A sampled step must cut the gap by this factor, or the run forms the exact H from then on.
SAMPLE_PROGRESS = 4.0


def sample_size(problem) -> int:
    """The rows m of a sampled Hessian (SAMPLE_FRACTION's comment), or 0 where the run forms every H exactly: the
    squared loss (H is constant: its one Cholesky step lands on the optimum) and m > n/2."""
    n, d = problem.n_samples, problem.n_features
    m = max(math.ceil(SAMPLE_FRACTION * n), SAMPLE_ROWS_PER_FEATURE * d)
    return m if problem.loss != "squared" and 2 * m <= n else 0


@njit(cache=True, nogil=True, error_model="numpy")
def gram_rows(indptr, indices, data, rows, weight, curv, H):
    """The lower triangle of H += weight·Σ_{i ∈ rows} curv_i x_i x_iᵀ, row by row over their nonzeros
    (``newton.gram_sweep``'s loop on the rows listed; CSR indices sorted). Returns the nonzeros read."""
    touched = 0
    for i in rows:
        start, end = indptr[i], indptr[i + 1]
        touched += end - start
        c = weight * curv[i]
        if c != 0.0:
            for p in range(start, end):
                jp, cx = indices[p], c * entry(data, p)
                for q in range(start, p + 1):
                    H[jp, indices[q]] += cx * entry(data, q)
    return touched


@njit(cache=True, nogil=True, error_model="numpy")
def densify_sampled(indptr, indices, data, rows, lo, weight, curv, block):
    """Rows rows[lo], rows[lo + 1], … (as many as ``block`` has) into the dense ``block``, row i scaled by
    √(weight·curv_i), so blockᵀblock = weight·Σ curv_i x_i x_iᵀ over them (``newton.densify_rows`` without the
    gradient). Returns the nonzeros read."""
    touched = 0
    for r in range(block.shape[0]):
        i = rows[lo + r]
        c = math.sqrt(weight * curv[i])
        for j in range(block.shape[1]):
            block[r, j] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            block[r, indices[p]] = c * entry(data, p)
        touched += indptr[i + 1] - indptr[i]
    return touched


@njit(cache=True, nogil=True, error_model="numpy")
def raise_diagonal(H, minv, lam):
    """H_jj ← max(H_jj, 1/minv_j − λ): the sampled H's diagonal raised to the exact diag(H) − λ, from the Jacobi
    sweep's minv = 1/diag(H)."""
    for j in range(H.shape[0]):
        exact = 1.0 / minv[j] - lam
        if H[j, j] < exact:
            H[j, j] = exact


@njit(cache=True, nogil=True, error_model="numpy")
def curvature_along(curv, u):
    """Σ_i curv_i u_i²: with u = XΔ, the loss part of ΔᵀHΔ."""
    total = 0.0
    for i in range(u.shape[0]):
        total += curv[i] * u[i] * u[i]
    return total
