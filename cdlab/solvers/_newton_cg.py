"""Newton's matrix-free inner solver: conjugate gradients on H Δ = −∇P with
Hessian-vector products, H = Xᵀ diag(curv) X + λI (curv_i = φ''(x_i·w)/n).

* ``hessian_product``: q = Xᵀ diag(curv) X v, and Xv on the way, in one
  row-order sweep that reads each row twice while it is hot (x_i·v, then
  q += curv_i (x_i·v) x_i); a row whose curv_i is 0 (the smoothed hinge off its
  quadratic piece) is read once. It returns the nonzeros it read. Where X is
  kept as dense rows (``Data.X_dense``, or their float32 rounding where
  ``newton.product_rows`` says so: its ``dense`` argument) it reads
  those, each row's dot product a vectorised sum (``_kernels.full_dot``),
  instead of the CSR arrays. Its sweeps over dense or full rows prefetch
  the row ``_kernels.FULL_ROW_AHEAD`` rows ahead.
* ``jacobi``: ∇P and the preconditioner M = diag(H) in one sweep (dense rows alike).
* ``certified_jacobi``: the same sweep fused with a checkpoint's (``_kernels.certificate_sweep``):
  z = Xw, α = −φ'(z) and Xᵀα — from which ∇P = λw − Xᵀα/n — and M's diagonal, so
  a Newton iteration that starts at a checkpointed w reads X once for both.
* ``newton_cg_direction``: one truncated-Newton direction (Nocedal & Wright
  2006, *Numerical Optimization*, Algorithm 7.1, "line search Newton–CG"):
  ∇P and M by one sweep, then preconditioned CG from Δ = 0 until ‖r‖ ≤ η‖∇P‖ with the forcing term
  η of ``forcing_term``: min(½, √‖∇P‖) (their condition 7.3 with the choice after Theorem 7.2: superlinear
  convergence), or for the logistic loss from the second iteration on Eisenstat & Walker's choice 2
  (1996, eq. 2.6), which follows the contraction of ‖∇P‖ over the last iteration,
  or ‖r‖ ≤ ``floor`` (the caller's: where the quadratic model's gap falls
  below the run's tolerance), or
  ``max_iter`` iterations (at least one). XΔ is summed from the Xp of each product
  (XΔ = Σ α_k Xp_k), so the line search needs no further pass over X.
* ``cg_steps``: preconditioned CG on the normal equations of the squared loss,
  (XᵀX/n + λI) w = Xᵀy/n, continued across calls (Hestenes & Stiefel 1952;
  Nocedal & Wright Algorithm 5.3): its P is quadratic, so CG's step along p is
  exact and w moves at every iteration, and the driver certifies w between them.

Each sweep over X has a form for the n_jobs mode (``hessian_vector_product``, ``jacobi_sweep``,
``certified_jacobi_sweep``, given row blocks ``bounds``, else the serial sweep: a None branch numba prunes):
the rows cut into blocks of about equal nonzeros (``_threads.row_blocks``), one per thread
(``hessian_blocks``, ``jacobi_blocks``, ``certified_blocks``), each block summing its own length-d vectors
in the caller's ``scratch``, the blocks' sums added in block order (``_kernels.add_blocks``), so a run's
sums do not depend on thread timing (they round otherwise than the serial sweep's).

Both precondition with the diagonal of H, M_jj = Σ_i curv_i x_ij² + λ (Jacobi;
Nocedal & Wright §5.1, "Preconditioning"; liblinear's Newton solver uses the
same diagonal mixed with the identity: Hsia, Chiang & Lin 2018, "Preconditioned
conjugate gradient methods in truncated Newton frameworks for large-scale
linear classification", ACML): CG's rate then depends on the condition number
of M^-1/2 H M^-1/2, which on text-like data, whose column norms span orders of
magnitude, is far below H's. Measured against plain CG (certified relative gap
1e-6, rows scaled by their mean norm, λ = 1/n and 0.01/n, one thread, CG stopped by
the √ forcing term throughout): the
text-like problem of benchmarks/race.py at 1e7 nonzeros read 943 → 69 passes
(logistic, 0.01/n; 10.0 → 1.1 s), 128 → 18 (logistic, 1/n), 649 → 29 (squared,
0.01/n; 6.2 → 0.35 s); at 0.01/n w8a 505 → 224 and a9a 498 → 233 (logistic),
687 → 149 and 345 → 157 (squared). It is not better everywhere: logistic
phishing and mushrooms read up to 1.3× plain CG's passes, squared phishing and
reuters_moneyfx (1/n) 1.6×, squared rcv1_small at 0.01/n 3.2× (137 → 437).

Not kept: a floor under M, M_jj + cλ, which is Hsia, Chiang & Lin's mix of diag(H) with the identity in this
scaling (their weight α on the diagonal is 1/(1 + c): their α = 0.01 is c = 99). Newton's passes to a certified
relative gap of 1e-6 (``method="newton"``, seed 0, c = 0 → 9 → 99, the sweeps' λ raised to (1 + c)λ): logistic
0.01/n reuters_moneyfx 197 → 173 → 180, rcv1_small 92 → 80 → 78; squared reuters_moneyfx 1/n 101 → 73 → 63, 0.01/n
351 → 335 → 331; but the race's text-like problem at 1e7 nonzeros, logistic 1/n 17 → 33 → 83 and 0.01/n 64 → 58 →
116, squared 0.01/n 29 → 29 → 37, and logistic 1/n reuters_moneyfx 45 → 45 → 49, rcv1_small 18 → 20 → 20. No one c
is better on all of them.

H ⪰ λI > 0, so pᵀHp > 0 in exact arithmetic; when rounding makes it ≤ 0 (λ
below the precision of H) CG stops there, and a first iteration that stops so
returns the preconditioned steepest-descent direction −M⁻¹∇P (Algorithm 7.1's
rule for negative curvature, a descent direction as M ≻ 0).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..data.dataset import unsigned_view
from .. import losses as L
from ._kernels import (add_blocks, entry, full_dot, prefetch_dense_row_ahead, prefetch_full_row_ahead, row_dot,
                       sparse_axpy, sparse_dot)

# ``forcing_term``'s constants: Eisenstat & Walker's exponent α (the ratio of ‖∇P‖ squared), η never above
# FORCING_MAX (Nocedal & Wright's ½), and their safeguard γ·η_prev^α applied where it exceeds
# FORCING_SAFEGUARD_THRESHOLD (their 0.1). γ, by loss: ``newton.FORCING_GAMMA``.
FORCING_EXPONENT = 2.0
FORCING_MAX = 0.5
FORCING_SAFEGUARD_THRESHOLD = 0.1


def nonempty_columns(problem):
    """The columns of X with a nonzero, unsigned (``unsigned_view``): the CG vectors' only live entries, as
    ∇P_j = λw_j = 0 on an empty column j from w = 0, so w_j, r_j, p_j and (Hp)_j stay 0 there."""
    return unsigned_view(np.flatnonzero(problem.col_nnz > 0))


@njit(cache=True, nogil=True, error_model="numpy")
def hessian_rows(indptr, indices, data, dense, curv, v, xv, q, lo, hi):
    """Rows lo ≤ i < hi of ``hessian_product``: xv_i = x_i·v and q += curv_i (x_i·v) x_i (q is not zeroed);
    returns the nonzeros of X read."""
    touched = 0
    n, d = indptr.shape[0] - 1, v.shape[0]
    if dense is not None:
        flat = dense.reshape(dense.size)  # C-contiguous: a view, row i at i·d
    for i in range(lo, hi):
        start, end = indptr[i], indptr[i + 1]
        if dense is None:
            t = sparse_dot(indices, data, start, end, v)
        else:
            prefetch_dense_row_ahead(flat, i, n, d)
            t = full_dot(flat, i * d, v)
        xv[i] = t
        touched += end - start
        c = curv[i] * t
        if c != 0.0:
            if dense is None:
                sparse_axpy(indices, data, start, end, c, q)
            else:  # a 2-D row, not a flat offset: numba then indexes it without the wrap-around test (1.8× faster)
                for j in range(q.shape[0]):
                    q[j] += c * dense[i, j]
            touched += end - start
    return touched


@njit(cache=True, nogil=True, error_model="numpy")
def hessian_product(indptr, indices, data, cols, dense, curv, v, xv, q):
    """q = Σ_i curv_i (x_i·v) x_i and xv_i = x_i·v (q is written on ``cols`` only); returns the nonzeros
    of X read. ``dense``: X as a dense array (``Data.X_dense``, float64 or float32), read instead of the CSR
    arrays, or None (a branch numba prunes when it compiles); the nonzeros read are counted alike."""
    _zero_block(cols, dense, q)
    return hessian_rows(indptr, indices, data, dense, curv, v, xv, q, 0, indptr.shape[0] - 1)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def hessian_blocks(indptr, indices, data, cols, dense, curv, v, xv, bounds, partial):
    """``hessian_product``'s sweep over the row blocks of ``bounds`` (``_threads.row_blocks``), one per thread:
    xv written row by row, disjoint across blocks, block b's q in ``partial[b]``; returns the nonzeros read."""
    touched = 0
    for b in prange(bounds.shape[0] - 1):
        _zero_block(cols, dense, partial[b])
        touched += hessian_rows(indptr, indices, data, dense, curv, v, xv, partial[b], bounds[b], bounds[b + 1])
    return touched


@njit(inline="always", cache=True)
def _zero_block(cols, dense, part):
    """part = 0 on ``cols`` (on every entry where ``dense`` is not None): the entries a sweep adds to. Plain
    loops: an array expression would be a parallel launch of its own in a parallel kernel."""
    if dense is None:
        for j in cols:
            part[j] = 0.0
    else:
        for j in range(part.shape[0]):
            part[j] = 0.0


@njit(cache=True, nogil=True, error_model="numpy")
def hessian_vector_product(indptr, indices, data, cols, dense, curv, v, xv, q, bounds, scratch):
    """``hessian_product``, or where ``bounds`` is not None (the n_jobs mode) the same over its row blocks
    (``hessian_blocks``, summing in ``scratch[0]``), the blocks' q added in block order."""
    if bounds is None:
        return hessian_product(indptr, indices, data, cols, dense, curv, v, xv, q)
    touched = hessian_blocks(indptr, indices, data, cols, dense, curv, v, xv, bounds, scratch[0])
    _zero_block(cols, dense, q)
    add_blocks(scratch[0], bounds.shape[0] - 1, cols, q)
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
def jacobi_rows(indptr, indices, data, dense, deriv, curv, grad, diag, lo, hi):
    """Rows lo ≤ i < hi of ``jacobi``'s sweep: grad += deriv_i x_i and diag += curv_i x_i² (not zeroed)."""
    n, d = indptr.shape[0] - 1, grad.shape[0]
    if dense is not None:
        flat = dense.reshape(dense.size)
    for i in range(lo, hi):
        g, c = deriv[i], curv[i]
        if dense is None:
            for p in range(indptr[i], indptr[i + 1]):
                j, x = indices[p], entry(data, p)
                grad[j] += g * x
                diag[j] += c * x * x
        else:
            prefetch_dense_row_ahead(flat, i, n, d)
            for j in range(d):
                x = dense[i, j]
                grad[j] += g * x
                diag[j] += c * x * x


@njit(inline="always", cache=True)
def _add_lam(lam, w, grad, minv):
    """grad += λw and minv = 1/(minv + λ): ∇P and M⁻¹ from the sweep's sums."""
    for j in range(grad.shape[0]):
        grad[j] += lam * w[j]
        minv[j] = 1.0 / (minv[j] + lam)


@njit(cache=True, nogil=True, error_model="numpy")
def jacobi(indptr, indices, data, dense, deriv, curv, lam, w, grad, minv):
    """grad = ∇P(w) = Σ_i deriv_i x_i + λw (deriv_i = φ'(x_i·w)/n) and minv = 1/diag(H),
    H_jj = Σ_i curv_i x_ij² + λ, in one sweep (``dense``: as ``hessian_product``); returns the nonzeros read."""
    grad[:] = 0.0
    minv[:] = 0.0
    jacobi_rows(indptr, indices, data, dense, deriv, curv, grad, minv, 0, indptr.shape[0] - 1)
    _add_lam(lam, w, grad, minv)
    return indptr[-1]


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def jacobi_blocks(indptr, indices, data, cols, dense, deriv, curv, bounds, scratch):
    """``jacobi``'s sweep over the row blocks of ``bounds``, one per thread, block b's ∇P − λw and diag(H) − λ in
    ``scratch[0, b]`` and ``scratch[1, b]``."""
    for b in prange(bounds.shape[0] - 1):
        _zero_block(cols, dense, scratch[0, b])
        _zero_block(cols, dense, scratch[1, b])
        jacobi_rows(indptr, indices, data, dense, deriv, curv, scratch[0, b], scratch[1, b], bounds[b], bounds[b + 1])


@njit(cache=True, nogil=True, error_model="numpy")
def jacobi_sweep(indptr, indices, data, cols, dense, deriv, curv, lam, w, grad, minv, bounds, scratch):
    """``jacobi``, or where ``bounds`` is not None (the n_jobs mode) the same over its row blocks
    (``jacobi_blocks``), the blocks' sums added in block order."""
    if bounds is None:
        return jacobi(indptr, indices, data, dense, deriv, curv, lam, w, grad, minv)
    jacobi_blocks(indptr, indices, data, cols, dense, deriv, curv, bounds, scratch)
    grad[:] = 0.0
    minv[:] = 0.0
    add_blocks(scratch[0], bounds.shape[0] - 1, cols, grad)
    add_blocks(scratch[1], bounds.shape[0] - 1, cols, minv)
    _add_lam(lam, w, grad, minv)
    return indptr[-1]


@njit(cache=True, nogil=True, error_model="numpy")
def certified_rows(indptr, indices, data, y, code, s, w, at_zero, z, alpha, xt_alpha, curv, diag, full_rows, lo,
                   hi):
    """Rows lo ≤ i < hi of ``certified_jacobi``'s sweep (xt_alpha and diag are added to, not zeroed)."""
    n = y.shape[0]
    for i in range(lo, hi):
        start, end = indptr[i], indptr[i + 1]
        if full_rows is not None:
            prefetch_full_row_ahead(indptr, data, i, n, xt_alpha.shape[0])
        if at_zero:
            zi = 0.0
        elif full_rows is None:
            zi = sparse_dot(indices, data, start, end, w)
        else:
            zi = row_dot(indices, data, start, end, w)
        z[i] = zi
        a = -L.loss_deriv(code, zi, y[i], s)
        c = L.loss_curvature(code, zi, y[i], s) / n
        alpha[i] = a
        curv[i] = c
        if full_rows is not None and end - start == xt_alpha.shape[0]:  # row_axpy's full row
            for p in range(start, end):
                x = entry(data, p)
                xt_alpha[p - start] += a * x
                diag[p - start] += c * x * x
        else:
            for p in range(start, end):
                j, x = indices[p], entry(data, p)
                xt_alpha[j] += a * x
                diag[j] += c * x * x


@njit(cache=True, nogil=True, error_model="numpy")
def certified_jacobi(indptr, indices, data, y, code, s, w, at_zero, z, alpha, xt_alpha, curv, diag, full_rows):
    """``_kernels.certificate_sweep``'s z = Xw, α_i = −φ'(z_i) and xt_alpha += Xᵀα (zero on entry), summed as
    it sums them (so the certificate is bit for bit Problem's), and in the same read of each row
    curv_i = φ''(z_i)/n and diag += Σ_i curv_i x_ij² (zero on entry: the caller adds λ and inverts for M⁻¹).
    ``at_zero``: w = 0, so z = 0 without reading the rows for it."""
    certified_rows(indptr, indices, data, y, code, s, w, at_zero, z, alpha, xt_alpha, curv, diag, full_rows, 0,
                   y.shape[0])


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def certified_blocks(indptr, indices, data, y, code, s, w, at_zero, z, alpha, curv, full_rows, bounds, scratch):
    """``certified_jacobi``'s sweep over the row blocks of ``bounds``, one per thread: z, α and curv written row
    by row, block b's Xᵀα and diag(H) − λ in ``scratch[0, b]`` and ``scratch[1, b]``."""
    for b in prange(bounds.shape[0] - 1):
        scratch[0, b, :] = 0.0
        scratch[1, b, :] = 0.0
        certified_rows(indptr, indices, data, y, code, s, w, at_zero, z, alpha, scratch[0, b], curv, scratch[1, b],
                       full_rows, bounds[b], bounds[b + 1])


@njit(cache=True, nogil=True, error_model="numpy")
def certified_jacobi_sweep(indptr, indices, data, y, code, s, w, at_zero, z, alpha, xt_alpha, curv, diag, full_rows,
                           bounds, scratch):
    """``certified_jacobi``, or where ``bounds`` is not None (the n_jobs mode) the same over its row blocks
    (``certified_blocks``), the blocks' sums added in block order to every entry as
    ``_kernels.parallel_certificate_sweep`` adds its own (so over the same blocks the certificate is bit for
    bit the driver's parallel one)."""
    if bounds is None:
        certified_jacobi(indptr, indices, data, y, code, s, w, at_zero, z, alpha, xt_alpha, curv, diag, full_rows)
        return
    certified_blocks(indptr, indices, data, y, code, s, w, at_zero, z, alpha, curv, full_rows, bounds, scratch)
    add_blocks(scratch[0], bounds.shape[0] - 1, None, xt_alpha)
    add_blocks(scratch[1], bounds.shape[0] - 1, None, diag)


@njit(inline="always", cache=True)
def _precondition(cols, minv, r, s):
    """s = M⁻¹r; returns r·s."""
    acc = 0.0
    for j in cols:
        s[j] = minv[j] * r[j]
        acc += r[j] * s[j]
    return acc


@njit(cache=True)
def forcing_term(norm, prev_norm, prev_eta, gamma):
    """The forcing term η of a Newton iteration whose ∇P has norm ``norm``: CG stops at ‖r‖ ≤ η‖∇P‖
    (Nocedal & Wright's condition 7.3). With ``gamma`` = 0, or at a first iteration (``prev_norm`` = 0),
    min(½, √‖∇P‖) (their choice after Theorem 7.2: superlinear convergence). Else Eisenstat & Walker's choice 2
    (1996, "Choosing the forcing terms in an inexact Newton method", SIAM J. Sci. Comput. 17(1), eq. 2.6, with
    its safeguard): γ(‖∇P‖/‖∇P_prev‖)^α, raised to γ·η_prev^α where that exceeds FORCING_SAFEGUARD_THRESHOLD,
    at most FORCING_MAX; ``prev_norm`` and ``prev_eta`` are the ‖∇P‖ and η of the iteration that moved w to
    here. It follows the contraction Newton's steps really achieve: no tighter than a step far from the optimum
    can use, ever tighter as the contraction turns quadratic."""
    if gamma == 0.0 or prev_norm == 0.0:
        return min(FORCING_MAX, math.sqrt(norm))
    eta = gamma * (norm / prev_norm) ** FORCING_EXPONENT
    safeguard = gamma * prev_eta ** FORCING_EXPONENT
    if safeguard > FORCING_SAFEGUARD_THRESHOLD:
        eta = max(eta, safeguard)
    return min(eta, FORCING_MAX)


@njit(cache=True, nogil=True, error_model="numpy")
def newton_cg_direction(indptr, indices, data, cols, dense, product_dense, deriv, curv, lam, w, max_iter, floor, grad,
                        step, u, r, p, q, xp, minv, s, fresh, bounds, scratch, gamma, prev_norm, prev_eta):
    """grad = ∇P(w) and minv = 1/diag(H) (``jacobi``; ``fresh``: already computed at w, by ``certified_jacobi``),
    then step ≈ −H⁻¹grad by CG preconditioned with M = diag(H) (module docstring) with u = X·step, stopped at the
    forcing term η = ``forcing_term(‖∇P‖, prev_norm, prev_eta, gamma)`` (prev_norm = 0 at a first iteration).
    Returns (CG iterations, the nonzeros of X read (the gradient's sweep counted whether it ran here or fused),
    ‖∇P‖, η).
    ``product_dense``: the dense rows the Hessian-vector products read (``dense``, or its float32 rounding:
    ``newton.product_rows``); the gradient's sweep here reads ``dense`` (the caller's: X's float64 rows, or the
    products' own: ``newton.GRADIENT_ON_PRODUCT_ROWS``) or the CSR arrays."""
    if fresh:
        touched = indptr[-1]
    else:
        touched = jacobi_sweep(indptr, indices, data, cols, dense, deriv, curv, lam, w, grad, minv, bounds, scratch)
    for j in cols:
        step[j] = 0.0
        r[j] = -grad[j]
    rz = _precondition(cols, minv, r, s)
    for j in cols:
        p[j] = s[j]
    u[:] = 0.0
    rho = 0.0
    for j in cols:
        rho += r[j] * r[j]
    norm = math.sqrt(rho)
    eta = forcing_term(norm, prev_norm, prev_eta, gamma)
    target = max(eta * norm, floor)
    iterations = 0
    while iterations < max_iter and (iterations == 0 or math.sqrt(rho) > target):
        touched += hessian_vector_product(indptr, indices, data, cols, product_dense, curv, p, xp, q, bounds, scratch)
        iterations += 1
        curvature = _curvature_along(lam, cols, p, q)
        if not curvature > 0.0:
            if iterations == 1:  # (preconditioned) steepest descent: step = p = M⁻¹(−grad), u = Xp = xp
                for j in cols:
                    step[j] = p[j]
                u[:] = xp
            break
        rho = _move_along(lam, cols, step, u, r, p, q, xp, rz / curvature)
        rz_new = _precondition(cols, minv, r, s)
        _next_direction(cols, s, p, rz_new / rz)
        rz = rz_new
    return iterations, touched, norm, eta


@njit(cache=True, nogil=True, error_model="numpy")
def cg_steps(indptr, indices, data, cols, dense, curv, lam, minv, n_steps, w, z, r, p, q, xp, s, rz, bounds, scratch):
    """Up to ``n_steps`` CG iterations on H w = b preconditioned with M = diag(H) (minv = 1/diag(H)), from the
    carried (w, z = Xw, r = b − Hw, p, s = M⁻¹r, rz = r·s), updated in place. Returns (iterations done, rz,
    nonzeros of X read); it stops short, w staying, where rz = 0 or pᵀHp ≤ 0 (rounding: the caller
    restarts from the true residual)."""
    touched = 0
    done = 0
    while done < n_steps and rz > 0.0:
        touched += hessian_vector_product(indptr, indices, data, cols, dense, curv, p, xp, q, bounds, scratch)
        curvature = _curvature_along(lam, cols, p, q)
        if not curvature > 0.0:
            break
        done += 1
        _move_along(lam, cols, w, z, r, p, q, xp, rz / curvature)
        rz_new = _precondition(cols, minv, r, s)
        _next_direction(cols, s, p, rz_new / rz)
        rz = rz_new
    return done, rz, touched
