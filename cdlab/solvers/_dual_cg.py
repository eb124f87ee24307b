"""The squared loss's conjugate gradients in the dual, for X with many more columns than rows (Newton's CG path
where d ≥ DUAL_CG_RATIO·n).

With φ_i(z) = ½(z − y_i)², the dual optimum α solves (I + XXᵀ/(λn)) α = y (SDCA's α: α = −φ'(Xw) =
y − Xw at w = Xᵀα/(λn)), an n × n system whose matrix is ⪰ I. Where d > n the primal normal equations
(XᵀX/n + λI) w = Xᵀy/n carry a null space of d − n eigenvalues λ, one cluster that plain CG clears in
one iteration but that Jacobi's diagonal spreads over up to d − n values (``_newton_cg``'s docstring:
rcv1_small at 0.01/n read 3.2× plain CG's passes); the dual system has no such null space, and CG's
vectors are n long (α, r, p, q) beside the d-long w and Xᵀp. CG (Hestenes & Stiefel 1952; Nocedal &
Wright 2006, Algorithm 5.3) runs on it preconditioned by its diagonal, 1 + ‖x_i‖²/(λn) (Jacobi), and
carries w = Xᵀα/(λn) and z = Xw, so at every iterate the pair (w, α) is SDCA's and its duality gap is
exactly ‖r‖²/(2n) with r = y − α − z (φ_i(z_i) + φ_i*(−α_i) + α_i z_i = ½(y_i − α_i − z_i)²; the
λ-terms cancel at w = Xᵀα/(λn)).

* ``dual_product``: u = Xᵀp/(λn), then q = p + Xu: two row-order sweeps (Xᵀp must be whole before
  any x_i·u), each nonzero read once per sweep (a row whose p_i is 0: once); dense rows (``Data.X_dense``)
  read as such.
* ``dual_cg_steps``: up to n_steps CG iterations from the carried state.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import full_dot, sparse_axpy, sparse_dot


@njit(cache=True, nogil=True, error_model="numpy")
def dual_product(indptr, indices, data, cols, dense, lam_n, p, u, q):
    """u = Xᵀp/(λn) (written on ``cols``, or every column over dense rows) and q = p + Xu; returns the
    nonzeros of X read (twice, a row whose p_i is 0 once). ``dense``: X as a dense array (``Data.X_dense``) or None."""
    n = p.shape[0]
    if dense is None:
        for j in cols:
            u[j] = 0.0
    else:
        u[:] = 0.0
        flat = dense.reshape(dense.size)  # C-contiguous: a view, row i at i·d
    touched = 0
    for i in range(n):
        start, end = indptr[i], indptr[i + 1]
        c = p[i] / lam_n
        if c != 0.0:
            if dense is None:
                sparse_axpy(indices, data, start, end, c, u)
            else:  # a 2-D row, not a flat offset: numba then indexes it without the wrap-around test
                for j in range(u.shape[0]):
                    u[j] += c * dense[i, j]
            touched += end - start
    for i in range(n):
        start, end = indptr[i], indptr[i + 1]
        if dense is None:
            t = sparse_dot(indices, data, start, end, u)
        else:
            t = full_dot(flat, i * u.shape[0], u)
        q[i] = p[i] + t
        touched += end - start
    return touched


@njit(cache=True, nogil=True, error_model="numpy")
def dual_cg_steps(indptr, indices, data, cols, dense, lam_n, minv, n_steps, alpha, w, z, r, p, q, u, s, rz):
    """Up to ``n_steps`` CG iterations on (I + XXᵀ/(λn)) α = y preconditioned with its diagonal (minv = its
    inverse), from the carried (α, w = Xᵀα/(λn), z = Xw, r = y − α − z, p, s = M⁻¹r, rz = r·s), updated in
    place. Returns (iterations done, rz, nonzeros of X read); it stops short, α staying, where rz = 0 or
    pᵀ(I + XXᵀ/(λn))p ≤ 0 (rounding: the caller restarts from the true residual)."""
    touched = 0
    done = 0
    n = alpha.shape[0]
    while done < n_steps and rz > 0.0:
        touched += dual_product(indptr, indices, data, cols, dense, lam_n, p, u, q)
        curvature = 0.0
        for i in range(n):
            curvature += p[i] * q[i]
        if not curvature > 0.0:
            break
        done += 1
        step = rz / curvature
        rz_new = 0.0
        for i in range(n):
            alpha[i] += step * p[i]
            z[i] += step * (q[i] - p[i])  # X(step·u) = step·(q − p)
            r[i] -= step * q[i]
            s[i] = minv[i] * r[i]
            rz_new += r[i] * s[i]
        if dense is None:
            for j in cols:
                w[j] += step * u[j]
        else:
            for j in range(w.shape[0]):
                w[j] += step * u[j]
        beta = rz_new / rz
        for i in range(n):
            p[i] = s[i] + beta * p[i]
        rz = rz_new
    return done, rz, touched


def dual_preconditioner(row_norms_sq, lam_n) -> np.ndarray:
    """1 / diag(I + XXᵀ/(λn)) = 1 / (1 + ‖x_i‖²/(λn))."""
    return 1.0 / (1.0 + np.asarray(row_norms_sq, dtype=float) / lam_n)
