"""Conjugate gradients on the free face of SDCA's box-constrained dual (shrinking's examples strictly
inside their box), run when coordinate ascent stalls there.

For a loss of ``losses.BOX_LOSSES`` the dual is a concave quadratic over a box. In the box coordinate
of ``losses.box_gradient`` — t_i = α_i y_i ∈ [0, 1] (hinge, smoothed hinge; α_i = σ_i t_i with
σ_i = y_i) or t_i = α_i ∈ [−1, 1] (absolute; σ_i = 1) — moving the examples of a face F by Δ changes
the minimised −n·D by

    f(Δ) = ½ Δᵀ A Δ − rᵀ Δ,   A = S X_F X_Fᵀ S / (λn) + c I,   r_i = a_i − c t_i − σ_i x_i·w,

with S = diag(σ_F), a_i = 1 and c = s (c = 0 for the hinge) or a_i = y_i and c = 0 (absolute): r is
−G of ``box_gradient``. Coordinate ascent on a face whose A is ill-conditioned crawls (reuters_moneyfx
hinge λ = 1/n: over 1049 free examples, shrinking's Σ|PG| stayed at 1.7e-3 from epoch 32 to 224);
conjugate gradients on the face, Jacobi-preconditioned (M = A's diagonal ‖x_i‖²/(λn) + c), need about
√cond(M⁻¹A) products. This is GPCG's pairing (Moré & Toraldo 1991, "On the solution of large quadratic
programming problems with bound constraints", SIAM J. Optim. 1(1)) of a phase that identifies the face —
here SDCA's epochs — with CG on it; the CG is the classical active-set form (Polyak 1969; O'Leary 1980,
"A generalized conjugate gradient algorithm for solving a class of quadratic programming problems",
Linear Algebra Appl. 34): each step is taken whole, or cut where the first examples meet their bound
(those are fixed there and CG restarts on the rest of the face). f is convex along each step and falls
up to its full length, so no step raises f, i.e. none lowers D. α and v = Xᵀα/(λn) are updated in
place; the checkpoint then certifies as always, D from α and P at w = v.

A face with more examples than X has nonempty columns has a singular A (hinge, absolute: c = 0; a
sufficient condition, not a necessary one: duplicated rows make A singular too): its minimiser is not
unique and CG wanders in A's null space, moving α where w does not move. Measured
(whole solves, hinge, λ = 0.01/n, three seeds): polishing such faces took ijcnn1 (22 features) from
335 passes to the 3000-pass cap, and mushrooms from 135 to 256; ``polish`` refuses them, and hands an
active set of at most BOX_NEWTON_MAX_EXAMPLES examples to projected Newton (``_box_newton``) instead.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import losses as L
from . import _box_newton
from ._box_newton import BOX_NEWTON_MAX_ITER, box_newton
from ._kernels import sparse_axpy, sparse_dot

# CG on the face stops once its preconditioned residual norm falls to this fraction of its first
FACE_CG_RTOL = 1e-10
# SDCA with shrinking polishes (``polish``: CG on its face, or projected Newton on a small active set whose face is
# singular) at the end of the checkpoint interval that follows one whose certified gap fell by less than POLISH_FALL×
# (a stall), with a budget of POLISH_SHARE× the nonzeros that interval's steps read, times the factor of
# ``polish_budget_factor`` below (so a first polish that does not help adds at most half an interval's reads, and for
# projected Newton its dense work at ``_box_newton.dense_work``'s price), and never more than the run's max_passes
# leaves. Measured for face CG (whole solves of benchmarks/race.py's problems to a certified relative gap of 1e-6,
# seeds 0-2, passes without → with): reuters_moneyfx hinge 1/n 240-442 → 76-113 (share 1: 70-137), madelon hinge
# 0.01/n 912-1021 → 335-370; rcv1_small hinge 0.01/n 68-74 → 68-79 (share 1: 68-91, the cost of polishing a face that
# SDCA was about to finish); no face it applies to on ijcnn1, mushrooms and phishing hinge 0.01/n (projected Newton's
# measurements: ``_box_newton``).
POLISH_FALL = 2.0
POLISH_SHARE = 0.5
# A polish cut short by its budget can leave the gap higher than before it: CG truncated on an ill-conditioned
# face raises D yet can leave w = v(α) with a higher P (reuters_moneyfx hinge 1/n, seed 0, one polish: P − P*
# 6.8e-7 → 1.2e-5; CG to its tolerance there: 4.0e-8). So after a stalled interval whose polish left the gap above
# the checkpoint before it (the interval's steps count in that too), the next polish gets POLISH_GROWTH× its budget
# factor (``polish_budget_factor``), which an interval whose gap falls POLISH_FALL× resets to 1; and all of a run's
# polishes read at most what its steps read (``dual_cd.DualCDState.resync``), so polishing at most doubles a run's
# reads. Measured (race.py's problems, hinge, whole solves to a certified relative gap of 1e-6, passes over seeds
# 0-11, without → with the factor: median, mean, max): reuters_moneyfx 1/n 85, 153, 431 → 84, 97, 203;
# reuters_moneyfx 0.01/n 168, 170, 197 → 172, 170, 175; madelon 0.01/n 354, 363, 440 → 349, 353, 390; seeds 0-7:
# heart_scale 0.01/n 526, 547, 761 → 468, 487, 649; a9a 0.01/n 590, 594, 671 → 602, 607, 668; rcv1_small (1/n,
# 0.01/n) and mushrooms 0.01/n alike; phishing 0.01/n 219 → 218. A cap of half the steps' reads instead lost most
# of it (reuters_moneyfx 1/n mean 114, max 354; heart_scale 0.01/n median 570 against 528 without the factor).
POLISH_GROWTH = 2.0


def polish_budget_factor(factor, stalled, hurt) -> float:
    """The polish budget's factor after a checkpoint (``factor`` before it): ×POLISH_GROWTH when the interval
    stalled and the polish in it left the gap above the previous checkpoint's (``hurt``), kept while it stalls
    otherwise, 1 once the gap falls POLISH_FALL×."""
    if not stalled:
        return 1.0
    return POLISH_GROWTH * factor if hurt else factor


def free_face(problem, alpha, examples):
    """The examples of ``examples`` whose box coordinate lies strictly inside its box, sorted."""
    y = problem.y
    t = alpha[examples] if problem.loss == "absolute" else alpha[examples] * y[examples]
    low = -1.0 if problem.loss == "absolute" else 0.0
    return np.sort(examples[(t > low) & (t < 1.0)])


def polish(problem, alpha, v, examples, budget) -> int:
    """``face_cg`` on the free face of ``examples`` where it applies (the module docstring): some examples, no
    ℓ1 term (w = v), and for the hinge and absolute loss no more examples than X has nonempty columns (more
    make A = S X_F X_Fᵀ S/(λn) singular). A singular face of an active set of at most
    BOX_NEWTON_MAX_EXAMPLES examples takes projected Newton over the active set (``_box_newton``) instead.
    Returns the nonzeros read."""
    face = free_face(problem, alpha, examples)
    if face.shape[0] == 0 or problem.l1 != 0:
        return 0
    # the smoothed hinge's A has c = s > 0 on its diagonal: never singular
    if problem.loss != "smoothed_hinge" and face.shape[0] > problem.n_nonempty_columns:
        # read at call time: the one switch of projected Newton (benchmarks/box_newton_bench.py sets it to 0)
        if examples.shape[0] > _box_newton.BOX_NEWTON_MAX_EXAMPLES:
            return 0
        read, _ = box_newton(*problem.csr_arrays, problem.y, problem.loss_code, problem.lam * problem.n_samples,
                             problem.row_norms_sq, alpha, v, np.sort(examples), budget, BOX_NEWTON_MAX_ITER)
        return read
    return face_cg(*problem.csr_arrays, problem.y, problem.loss_code, problem.s, problem.lam * problem.n_samples,
                   problem.row_norms_sq, alpha, v, face, budget)


@njit(cache=True, nogil=True)
def face_cg(indptr, indices, data, y, code, s, lam_n, row_sq, alpha, v, face, budget):
    """Preconditioned CG on f over the examples ``face`` (the module docstring), in place on α and v,
    reading at most ``budget`` nonzeros of X; returns the nonzeros read."""
    m = face.shape[0]
    d = v.shape[0]
    absolute = code == L.ABSOLUTE
    c = s if code == L.SMOOTHED_HINGE else 0.0
    low = -1.0 if absolute else 0.0
    live_nnz = 0  # the nonzeros of the live examples' rows: a product reads them twice
    for k in range(m):
        live_nnz += indptr[face[k] + 1] - indptr[face[k]]
    if 3 * live_nnz > budget:  # room for the first residual and at least one product, or nothing is read
        return 0
    t = np.empty(m)
    r = np.empty(m)
    diag = np.empty(m)
    sigma = np.empty(m)
    limit = np.empty(m)  # each live example's step to its bound along p
    live = np.ones(m, np.bool_)
    read = live_nnz
    for k in range(m):
        i = face[k]
        start, end = indptr[i], indptr[i + 1]
        sigma[k] = 1.0 if absolute else y[i]
        t[k] = alpha[i] * sigma[k]
        a = y[i] if absolute else 1.0
        r[k] = a - c * t[k] - sigma[k] * sparse_dot(indices, data, start, end, v)
        diag[k] = row_sq[i] / lam_n + c
        if diag[k] <= 0.0:
            diag[k] = 1.0
    p = np.zeros(m)
    q = np.zeros(m)
    u = np.empty(d)
    first = -1.0
    done = False
    while not done and read + 2 * live_nnz <= budget:
        # (re)start: steepest descent in the preconditioner's metric over the live examples
        rs = 0.0
        for k in range(m):
            p[k] = r[k] / diag[k] if live[k] else 0.0
            rs += r[k] * p[k]
        if first < 0.0:
            first = rs
        if rs <= FACE_CG_RTOL * FACE_CG_RTOL * first:
            break
        while read + 2 * live_nnz <= budget:
            u[:] = 0.0
            for k in range(m):
                if p[k] != 0.0:
                    i = face[k]
                    sparse_axpy(indices, data, indptr[i], indptr[i + 1], sigma[k] * p[k] / lam_n, u)
            pq = 0.0
            for k in range(m):
                if live[k]:
                    i = face[k]
                    q[k] = sigma[k] * sparse_dot(indices, data, indptr[i], indptr[i + 1], u) + c * p[k]
                    pq += p[k] * q[k]
                else:
                    q[k] = 0.0
            read += 2 * live_nnz
            # the longest step that keeps every live t in its box
            reach = np.inf
            for k in range(m):
                limit[k] = np.inf
                if p[k] > 0.0:
                    limit[k] = max((1.0 - t[k]) / p[k], 0.0)
                elif p[k] < 0.0:
                    limit[k] = max((low - t[k]) / p[k], 0.0)
                reach = min(reach, limit[k])
            step = rs / pq if pq > 0.0 else np.inf
            cut = step >= reach
            if cut:
                step = reach
            if not np.isfinite(step):  # p = 0 on every live example
                done = True
                break
            for k in range(m):
                t[k] = min(max(t[k] + step * p[k], low), 1.0)
                r[k] -= step * q[k]
            for j in range(d):
                v[j] += step * u[j]
            if cut:  # every example that met its bound is fixed there; CG restarts on the rest of the face
                for k in range(m):
                    if live[k] and p[k] != 0.0 and limit[k] <= reach:
                        t[k] = 1.0 if p[k] > 0.0 else low
                        live[k] = False
                        live_nnz -= indptr[face[k] + 1] - indptr[face[k]]
                break
            rs_new = 0.0
            for k in range(m):
                if live[k]:
                    rs_new += r[k] * r[k] / diag[k]
            if rs_new <= FACE_CG_RTOL * FACE_CG_RTOL * first:
                done = True
                break
            beta = rs_new / rs
            for k in range(m):
                p[k] = (r[k] / diag[k] + beta * p[k]) if live[k] else 0.0
            rs = rs_new
    for k in range(m):
        alpha[face[k]] = sigma[k] * t[k]
    return read
