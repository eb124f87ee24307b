"""Newton's matrix-free inner solver: conjugate gradients on H Δ = −∇P with
Hessian-vector products, H = Xᵀ diag(curv) X + λI (curv_i = φ''(x_i·w)/n).

* ``hessian_product``: q = Xᵀ diag(curv) X v, and Xv on the way, in one
  row-order sweep that reads each row twice while it is hot (x_i·v, then
  q += curv_i (x_i·v) x_i); a row whose curv_i is 0 (the smoothed hinge off its
  quadratic piece) is read once. It returns the nonzeros it read.
* ``newton_cg_direction``: one truncated-Newton direction (Nocedal & Wright
  2006, *Numerical Optimization*, Algorithm 7.1, "line search Newton–CG"):
  ∇P by one sweep, then CG from Δ = 0 until ‖r‖ ≤ η‖∇P‖ with the forcing term
  η = min(½, √‖∇P‖) (their eq. 7.3 with Theorem 7.2: superlinear convergence)
  or ``max_iter`` iterations. XΔ is summed from the Xp of each product
  (XΔ = Σ α_k Xp_k), so the line search needs no further pass over X.
* ``cg_steps``: plain CG on the normal equations of the squared loss,
  (XᵀX/n + λI) w = Xᵀy/n, continued across calls (Hestenes & Stiefel 1952;
  Nocedal & Wright Algorithm 5.2): its P is quadratic, so CG's step along p is
  exact and w moves at every iteration, and the driver certifies w between them.

H ⪰ λI > 0, so pᵀHp > 0 in exact arithmetic; when rounding makes it ≤ 0 (λ
below the precision of H) CG stops there, and a first iteration that stops so
returns the steepest-descent direction −∇P (Algorithm 7.1's rule for negative
curvature).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..data.dataset import unsigned_view
from ._kernels import sparse_axpy, sparse_dot


def nonempty_columns(problem):
    """The columns of X with a nonzero, unsigned (``unsigned_view``): the CG vectors' only live entries, as
    ∇P_j = λw_j = 0 on an empty column j from w = 0, so w_j, r_j, p_j and (Hp)_j stay 0 there."""
    return unsigned_view(np.flatnonzero(problem.col_nnz > 0))


@njit(cache=True, nogil=True, error_model="numpy")
def hessian_product(indptr, indices, data, cols, curv, v, xv, q):
    """q = Σ_i curv_i (x_i·v) x_i and xv_i = x_i·v (q is written on ``cols`` only); returns the nonzeros
    of X read."""
    for j in cols:
        q[j] = 0.0
    touched = 0
    for i in range(indptr.shape[0] - 1):
        start, end = indptr[i], indptr[i + 1]
        t = sparse_dot(indices, data, start, end, v)
        xv[i] = t
        touched += end - start
        c = curv[i] * t
        if c != 0.0:
            sparse_axpy(indices, data, start, end, c, q)
            touched += end - start
    return touched


@njit(inline="always", cache=True)
def _move_along(lam, cols, x, xx, r, p, q, xp, alpha):
    """x += αp, xx += α Xp, r −= α(q + λp) (q = XᵀDXp); returns the new r·r."""
    rho = 0.0
    for j in cols:
        x[j] += alpha * p[j]
        r[j] -= alpha * (q[j] + lam * p[j])
        rho += r[j] * r[j]
    for i in range(xx.shape[0]):
        xx[i] += alpha * xp[i]
    return rho


@njit(inline="always", cache=True)
def _curvature_along(lam, cols, p, q):
    """pᵀ(q + λp) = pᵀHp."""
    acc = 0.0
    for j in cols:
        acc += p[j] * (q[j] + lam * p[j])
    return acc


@njit(inline="always", cache=True)
def _next_direction(cols, r, p, beta):
    """p = r + βp."""
    for j in cols:
        p[j] = r[j] + beta * p[j]


@njit(cache=True, nogil=True, error_model="numpy")
def gradient(indptr, indices, data, deriv, lam, w, grad):
    """grad = ∇P(w) = Σ_i deriv_i x_i + λw (deriv_i = φ'(x_i·w)/n), one sweep; returns the nonzeros read."""
    grad[:] = 0.0
    for i in range(indptr.shape[0] - 1):
        sparse_axpy(indices, data, indptr[i], indptr[i + 1], deriv[i], grad)
    for j in range(grad.shape[0]):
        grad[j] += lam * w[j]
    return indptr[-1]


@njit(cache=True, nogil=True, error_model="numpy")
def newton_cg_direction(indptr, indices, data, cols, deriv, curv, lam, w, max_iter, grad, step, u, r, p, q, xp):
    """grad = ∇P(w) (``gradient``), then step ≈ −H⁻¹grad by CG (module docstring) with u = X·step.
    Returns (CG iterations, nonzeros of X read)."""
    touched = gradient(indptr, indices, data, deriv, lam, w, grad)
    for j in cols:
        step[j] = 0.0
        r[j] = -grad[j]
        p[j] = r[j]
    u[:] = 0.0
    rho = 0.0
    for j in cols:
        rho += r[j] * r[j]
    norm = math.sqrt(rho)
    target = min(0.5, math.sqrt(norm)) * norm
    iterations = 0
    while iterations < max_iter and math.sqrt(rho) > target:
        touched += hessian_product(indptr, indices, data, cols, curv, p, xp, q)
        iterations += 1
        curvature = _curvature_along(lam, cols, p, q)
        if not curvature > 0.0:
            if iterations == 1:  # steepest descent: step = −grad, u = X(−grad) = xp
                for j in cols:
                    step[j] = p[j]
                u[:] = xp
            break
        rho_new = _move_along(lam, cols, step, u, r, p, q, xp, rho / curvature)
        _next_direction(cols, r, p, rho_new / rho)
        rho = rho_new
    return iterations, touched


@njit(cache=True, nogil=True, error_model="numpy")
def cg_steps(indptr, indices, data, cols, curv, lam, n_steps, w, z, r, p, q, xp, rho):
    """Up to ``n_steps`` CG iterations on H w = b from the carried (w, z = Xw, r = b − Hw, p, ρ = r·r),
    updated in place. Returns (iterations done, ρ, nonzeros of X read); it stops short, w staying, where
    ρ = 0 or pᵀHp ≤ 0 (rounding: the caller restarts from the true residual)."""
    touched = 0
    done = 0
    while done < n_steps and rho > 0.0:
        touched += hessian_product(indptr, indices, data, cols, curv, p, xp, q)
        curvature = _curvature_along(lam, cols, p, q)
        if not curvature > 0.0:
            break
        done += 1
        rho_new = _move_along(lam, cols, w, z, r, p, q, xp, rho / curvature)
        _next_direction(cols, r, p, rho_new / rho)
        rho = rho_new
    return done, rho, touched
