"""The face primal: a primal point that certifies a dual method's α on a loss with a kink (hinge, absolute)
long before w(α) does.

On these losses the dual can converge long before the primal point it maps to: P is not smooth at the kink,
y_i x_i·w = 1 (hinge) or x_i·w = y_i (absolute), where the free examples of the optimum sit, so P(w(α)) − P* is of
the order of ‖w(α) − w*‖, while D* − D(α) ≥ (λ/2)‖w(α) − w*‖² bounds only its square. Measured (SDCA with
shrinking, certified relative gap 1e-6, checkpoints every 2 passes, seed 0): mushrooms λ = 1/n had D(α) within the
tolerance of P* after 22 passes and P(w(α)) after 46; rcv1_small after 10 and 32; the race's text-like problem at
1e7 nonzeros after 12 and 18. Elsewhere the dual lags as long as the primal (a9a, ijcnn1, phishing, madelon).

KKT with the examples at an end of their box known: the free face F (box coordinate strictly inside its box,
``_face_cr.free_face``) sits on the kink, X_F w = y_F, and w = w_B + X_Fᵀβ/(λn) for the part of the examples at
their ends, w_B = (1/(λn)) Σ_{i∉F} α_i x_i, and some β. At α's face: w_B = v(α) − (1/(λn)) Σ_{i∈F} α_i x_i, and
Δ = the minimum-norm least-squares solution of X_F Δ = y_F − X_F w_B, which lies in the span of F's rows as
X_Fᵀβ does. The face primal w_F = w_B + Δ is w(α') for α' = α with α_F replaced by the face's solution without
its box, and it is the optimum w* once α's face and ends are the optimum's: the system is then consistent, and
no box or rank condition is needed (a face of more examples than columns, singular for the dual's face solvers
``_face_cr`` and ``_box_newton``, is not for this one). Δ is computed directly (``min_norm_dense``) where the face
or its columns are few; conjugate-gradient-type solves (LSQR: Paige & Saunders 1982, ACM TOMS 8(1)) cost more
than they saved: rcv1_small λ = 1/n, 627 free rows of 1000, 49 iterations, the reads of 60 passes against the 33
the run takes; the text-like problem, ~400 iterations over 8.5 k free rows, ~70 passes.

Any w is a primal point: P(w_F) − D(α) is a duality gap as P(w(α)) − D(α) is, and a checkpoint reports the smaller
(``driver._Trace.evaluate``), with its w as the run's. α, and so D, the state and its steps, are unchanged.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import losses as L
from ._box_newton import DENSE_OPS_PER_READ, _box_columns, dense_work
from ._face_cr import free_face
from ._threads import blas_threads

# The face's system is solved where its examples or the columns its rows use number at most FACE_PRIMAL_DENSE_SIDE
# and its dense m × k array has at most FACE_PRIMAL_DENSE_ENTRIES (``min_norm_dense``: the Gram's eigenvalues below
# FACE_PRIMAL_RCOND × the largest taken as 0)
FACE_PRIMAL_DENSE_SIDE = 512
FACE_PRIMAL_DENSE_ENTRIES = 2 ** 22
FACE_PRIMAL_RCOND = 1e-12
# A dual method's checkpoint tries the face primal where its gap is at least FACE_PRIMAL_LAG × the run's tol and the
# dual's distance to P*, extrapolated from its last two rises between checkpoints as a geometric series, is at most
# FACE_PRIMAL_REACH × tol (before, w_F cannot certify: P(w_F) − D ≥ P* − D), within a budget: all its tries read at
# most FACE_PRIMAL_SHARE of what the run's steps read (each try: ``face_primal``'s reads, and the checkpoint's pass
# for Xw_F)
FACE_PRIMAL_LAG = 4.0
FACE_PRIMAL_REACH = 1.0
FACE_PRIMAL_SHARE = 0.25
# ... a try's fixed cost (finding the face, the calls into LAPACK, the margins' pass through scipy), priced in reads:
# 0.094–0.1 ms on heart_scale's 11 free examples, ~25 k reads at SDCA's ~4 ns a read (its whole run at λ = 1/n reads
# ~50 k nonzeros and took 1.25 ms without the face primal, 1.51 ms with it, before this price)
FACE_PRIMAL_FIXED_READS = 25_000
# the losses with a kink (a box-constrained dual coordinate, not smooth: hinge, absolute), where the dual's free
# examples sit at the optimum: x_i·w = y_i
FACE_PRIMAL_LOSSES = L.BOX_LOSSES - L.SMOOTH_LOSSES


@njit(cache=True, nogil=True)
def face_system(indptr, indices, data, y, lam_n, alpha, v, face, columns, where):
    """(A, w_B, b): the module docstring's system A Δ = b, A = X_F, b = y_F − X_F w_B, at (α, v = v(α)) for the free
    examples ``face`` (targets x_i·w = y_i: the hinge's ±1 labels and the absolute loss's kink alike), over the
    columns its rows use (``columns``, ``where``: ``_box_columns``): A dense, w_B on those columns (elsewhere
    w_B = v)."""
    m, k = face.shape[0], columns.shape[0]
    a = np.zeros((m, k))
    w_b = np.empty(k)
    for c in range(k):
        w_b[c] = v[columns[c]]
    for e in range(m):
        i = face[e]
        share = alpha[i] / lam_n
        for p in range(indptr[i], indptr[i + 1]):
            c = where[indices[p]]
            a[e, c] += data[p]
            w_b[c] -= share * data[p]
    b = np.empty(m)
    for e in range(m):
        acc = 0.0
        for c in range(k):
            acc += a[e, c] * w_b[c]
        b[e] = y[face[e]] - acc
    return a, w_b, b


def min_norm_dense(a, b):
    """The minimum-norm least-squares solution a⁺b of a x = b, through the eigendecomposition (LAPACK's syevd) of
    the smaller Gram matrix, G = aᵀa or aaᵀ: G = V diag(s) Vᵀ, G⁺ = V diag(1/s) Vᵀ over the eigenvalues s above
    FACE_PRIMAL_RCOND × the largest (the singular values of a above √FACE_PRIMAL_RCOND × the largest), and
    a⁺b = G⁺aᵀb or aᵀG⁺b. The Gram's null space must be cut, not shifted: a face over one-hot columns (mushrooms)
    is singular, and a Cholesky factorisation of G + 1e-12·max G_jj damped the components its solution needs."""
    wide = a.shape[0] < a.shape[1]
    s, vecs = np.linalg.eigh(a @ a.T if wide else a.T @ a)
    keep = s > FACE_PRIMAL_RCOND * max(s[-1], 0.0)
    vecs = vecs[:, keep]
    if wide:
        return a.T @ (vecs @ ((vecs.T @ b) / s[keep]))
    return vecs @ ((vecs.T @ (a.T @ b)) / s[keep])


def dense_price(m, k):
    """The work of ``face_system`` and ``min_norm_dense`` on an m × k face, priced in nonzeros read: the dense
    array's m·k entries twice, and ``_box_newton.dense_work`` of the Gram matrix and its factorisation over
    r = min(m, k) with the eigendecomposition's r³ for the Cholesky factorisation's r³/3 (one thread: syevd takes
    0.2–0.6 ns per r³ at r = 500 … 112)."""
    r = min(m, k)
    return 2 * m * k + dense_work(max(m, k), r) + 2 * r ** 3 // (3 * DENSE_OPS_PER_READ)


def face_primal(problem, alpha, v, face, max_reads, n_jobs=1):
    """(w_F, nonzeros read) of the module docstring at (α, v = v(α)) for the free examples ``face``, or (None, read)
    where the face is too large (FACE_PRIMAL_DENSE_SIDE, FACE_PRIMAL_DENSE_ENTRIES) or its work would read more
    than ``max_reads`` (FACE_PRIMAL_FIXED_READS, the face's rows twice, for its columns and its system, and
    ``dense_price``); BLAS and LAPACK on the run's ``n_jobs`` threads."""
    indptr, indices, _ = problem.csr_arrays
    m = face.shape[0]
    lengths = indptr[face + 1] - indptr[face]
    nnz_face = int(lengths.sum())
    # the face's columns number at least its longest row's and at most min(nnz_F, X's nonempty columns): a face that
    # cannot be small enough, or cheap enough, costs nothing
    if FACE_PRIMAL_FIXED_READS + 2 * nnz_face + dense_price(m, int(lengths.max())) > max_reads or (
            m > FACE_PRIMAL_DENSE_SIDE and min(nnz_face, problem.n_nonempty_columns) > FACE_PRIMAL_DENSE_SIDE):
        return None, 0
    columns, where = _box_columns(indptr, indices, face, problem.n_features)
    k = columns.shape[0]
    if k == 0 or min(m, k) > FACE_PRIMAL_DENSE_SIDE or m * k > FACE_PRIMAL_DENSE_ENTRIES:
        return None, nnz_face
    read = FACE_PRIMAL_FIXED_READS + 2 * nnz_face + dense_price(m, k)
    if read > max_reads:
        return None, nnz_face
    a, w_b, b = face_system(*problem.csr_arrays, problem.y, problem.lam * problem.n_samples, alpha, v, face,
                            columns, where)
    try:
        with blas_threads(n_jobs):
            delta = min_norm_dense(a, b)
    except np.linalg.LinAlgError:  # syevd did not converge: no candidate, as where the face is too large
        return None, read
    w = v.copy()
    w[columns] = w_b + delta
    return w, read


def face_primal_try(problem, alpha, v, steps_reads, face_reads, n_jobs=1):
    """(w_F or None, the nonzeros read): ``face_primal`` on α's free face (``_face_cr.free_face``) where all tries,
    ``face_reads`` so far with this one and the checkpoint's pass for Xw_F's margins, stay within FACE_PRIMAL_SHARE of
    ``steps_reads``, the steps' own reads (nothing read where less than FACE_PRIMAL_FIXED_READS is left); the reads
    include that pass where a w_F comes back. The one budget of a dual method's tries (``dual_cd``) and Newton's on
    the hinge (``_hinge_newton``)."""
    max_reads = FACE_PRIMAL_SHARE * steps_reads - face_reads - problem.nnz
    if max_reads <= FACE_PRIMAL_FIXED_READS:
        return None, 0
    face = free_face(problem, alpha, np.arange(problem.n_samples))
    if face.shape[0] == 0:
        return None, 0
    w, read = face_primal(problem, alpha, v, face, max_reads, n_jobs)
    return w, read + (problem.nnz if w is not None else 0)
