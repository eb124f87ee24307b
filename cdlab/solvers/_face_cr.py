"""Conjugate residuals on the free face of SDCA's box-constrained dual (shrinking's examples strictly
inside their box), run when coordinate ascent stalls there.

For a loss of ``losses.BOX_LOSSES`` the dual is a concave quadratic over a box. In the box coordinate
of ``losses.box_gradient`` — t_i = α_i y_i ∈ [0, 1] (hinge, smoothed hinge; α_i = σ_i t_i with
σ_i = y_i) or t_i = α_i ∈ [−1, 1] (absolute; σ_i = 1) — moving the examples of a face F by Δ changes
the minimised −n·D by

    f(Δ) = ½ Δᵀ A Δ − rᵀ Δ,   A = S X_F X_Fᵀ S / (λn) + c I,   r_i = a_i − c t_i − σ_i x_i·w,

with S = diag(σ_F), a_i = 1 and c = s (c = 0 for the hinge) or a_i = y_i and c = 0 (absolute): r is
−G of ``box_gradient``. Coordinate ascent on a face whose A is ill-conditioned crawls (reuters_moneyfx
hinge λ = 1/n: over 1049 free examples, shrinking's Σ|PG| stayed at 1.7e-3 from epoch 32 to 224); a
Krylov method on the face, Jacobi-preconditioned (M = A's diagonal ‖x_i‖²/(λn) + c), needs about
√cond(M⁻¹A) products. This is GPCG's pairing (Moré & Toraldo 1991, "On the solution of large quadratic
programming problems with bound constraints", SIAM J. Optim. 1(1)) of a phase that identifies the face —
here SDCA's epochs — with a Krylov solve on it, in the classical active-set form (Polyak 1969; O'Leary
1980, "A generalized conjugate gradient algorithm for solving a class of quadratic programming problems",
Linear Algebra Appl. 34): each step is taken whole, or cut where the first examples meet their bound
(those are fixed there and the solve restarts on the rest of the face).

The Krylov method is conjugate residuals (CR; Stiefel 1955, "Relaxationsmethoden bester Strategie zur
Lösung linearer Gleichungssysteme", Comment. Math. Helv. 29), preconditioned: CR on M⁻¹A in the M inner
product, whose k-th iterate minimises ‖r‖_{M⁻¹} = √(rᵀM⁻¹r) over the k-th Krylov space (MINRES's iterate on
M^{-1/2} A M^{-1/2}), one product a step as CG. The polish is cut short by its budget more often than not, and
what the certificate needs of the face is a small residual: example i's share of n·gap is at most width·|r_i|
(``_shrinking``'s bound; for the hinge exactly (1 − t_i)·r_i where r_i > 0 and t_i·|r_i| where r_i < 0), and
Σ_F |r_i| ≤ √(Σ_F M_ii)·‖r‖_{M⁻¹} (Cauchy–Schwarz), so the face's share of the gap is bounded by the residual
CR lowers, not by f. CG minimises the A-norm of the error, i.e. f, and its residual is not monotone: cut short on
an ill-conditioned face it raised the residual, and P with it (reuters_moneyfx hinge 1/n, seed 0, the run's
first polish: P − P* 6.8e-7 → 1.2e-5).

No step lowers D. On a positive definite face the A-norm of CR's error falls too (Hestenes & Stiefel 1952,
"Methods of conjugate gradients for solving linear systems", J. Res. NBS 49, for the minimal-residual member of
their family; Fong & Saunders 2012, "CG versus MINRES: an empirical comparison", SQU J. Sci. 17(1), collect the
monotone quantities of both methods), i.e. f falls at every whole CR step, and a CR step cut at a bound, shorter
along a line on which the convex f has not risen at the whole step's end, does not raise it either. The kernel
checks it all the same: a step along which f would rise (rounding, a face made singular by duplicated rows) ends
the polish before it is taken; at Az = 0 (z in A's null space, where f falls linearly along z) the step runs to
the first bound. α and v = Xᵀα/(λn) are updated in place; the checkpoint then certifies as always, D from α and
P at w = v.

One step is CG's: at a (re)start, where both methods step along z = M⁻¹r, CR's step (zᵀAz/(Az)ᵀM⁻¹Az) is the
shorter of the two (Cauchy–Schwarz), and where f's minimiser along z (rᵀz/zᵀAz, CG's step) lies beyond the first
bound, the step runs to that bound, as CG's does. While SDCA is still identifying the face, most polish steps end
at a bound, and those fix examples: the shorter step fixed fewer per product (reuters_moneyfx hinge 0.01/n). That
bound is short of f's minimiser along z, so f falls along the step; its residual may be higher than CR's step
would leave (the price of fixing the examples, and CR restarts on the rest of the face right after it). Every
other step is CR's.

Measured (whole solves of benchmarks/race.py's hinge problems to a certified relative gap of 1e-6, passes over
seeds 0-7: median, mean, max; CG → CR with every step CR's → as shipped): reuters_moneyfx 1/n 98, 114, 203 → 65,
67, 97 → 64, 66, 92; reuters_moneyfx 0.01/n 172, 170, 176 → 190, 186, 196 → 185, 185, 193; madelon 0.01/n 344,
350, 381 → 350, 359, 410 → 338, 336, 369; colon-cancer 0.01/n 48, 48, 49 throughout; alike on heart_scale,
rcv1_small, phishing, a9a, mushrooms and w8a 0.01/n (no polish, or projected Newton's). CG's f-minimising step at every
step instead of only at a restart: reuters_moneyfx 1/n 72, 96, 191. Whole calls timed side by side:
benchmarks/face_cr_bench.py.

A face with more examples than X has nonempty columns has a singular A (hinge, absolute: c = 0; a
sufficient condition, not a necessary one: duplicated rows make A singular too): its minimiser is not
unique and the solve wanders in A's null space, moving α where w does not move. Measured (whole solves,
hinge, λ = 0.01/n, three seeds, then with CG): polishing such faces took ijcnn1 (22 features) from 335 passes to
the 3000-pass cap, and mushrooms from 135 to 256; ``polish`` hands an active set of at most
BOX_NEWTON_MAX_EXAMPLES groups (below) to projected Newton (``_box_newton``) instead, and takes the others, and
those projected Newton declines (FACE_CR_AFTER_BOX_NEWTON), to CR over the face's groups where they are no more
than columns, else refuses them.
Examples of equal rows and labels move as one (``groups``; c = 0 only): their share of f depends on the sum of
their box coordinates alone, a coordinate in [low·m, m] for m of them with A's row and diagonal of one of them,
and the polish leaves them equal shares of it (the gap bound above then weighs group k's |r_k| by m_k). On binary
data rows repeat, and a face singular as examples may not be as groups: w8a hinge λ = 0.01/n stalls on ~1900 free
examples (2214 active) with 261 distinct rows over 300 columns, which coordinate ascent crawled over for half its
passes. Measured (benchmarks/duplicates_bench.py --repeats 3 --seeds 3: whole solves to a certified relative gap
of 1e-6, seeds 0-2 a call, interleaved pairs, apart ÷ groups, and passes median (range) apart → groups): w8a
0.01/n 1.89 (1.73–1.90; 178 (167–186) → 104 (98–117)), a9a 0.01/n 1.04 (619 → 575), phishing 0.01/n 1.03 (222 →
203), phishing 1/n 1.16 (28 → 25); a9a and w8a at 1/n alike (0.86 on w8a 1/n, at the same 8 passes, read 1.00
(0.78–1.16) over 7 repeats); on data without equal rows (mushrooms, ijcnn1, heart_scale, reuters_moneyfx, madelon)
the runs are the same as before.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import losses as L
from . import _box_newton
from ._box_newton import BOX_NEWTON_MAX_ITER, _box_columns, box_newton, group_box, group_heads, share_out
from ._kernels import sparse_axpy, sparse_dot

# CR on the face stops once its preconditioned residual norm falls to this fraction of its first
FACE_CR_RTOL = 1e-10
# SDCA with shrinking polishes (``polish``: CR on its face, or projected Newton on a small active set whose face is
# singular) at the end of the checkpoint interval that follows one whose certified gap fell by less than POLISH_FALL×
# (a stall), with a budget of POLISH_SHARE× the nonzeros that interval's steps read (so a polish that does not help
# adds at most half an interval's reads, and for projected Newton its dense work at ``_box_newton.dense_work``'s
# price), and never more than the run's max_passes leaves. Measured with CG on the face, not measured again with
# CR (whole solves of benchmarks/race.py's problems to a certified relative gap of 1e-6, seeds 0-2, passes
# without → with): reuters_moneyfx hinge 1/n 240-442 → 76-113 (share 1: 70-137), madelon hinge 0.01/n 912-1021 →
# 335-370; rcv1_small hinge 0.01/n 68-74 → 68-79 (share 1: 68-91, the cost of polishing a face that SDCA was about
# to finish); no face it applies to on ijcnn1, mushrooms and phishing hinge 0.01/n (projected Newton's
# measurements: ``_box_newton``).
POLISH_FALL = 2.0
POLISH_SHARE = 0.5
# All of a run's polishes read at most what its steps read (``dual_cd.DualCDState.resync``), so polishing at most
# doubles a run's reads.
# The polish of a face singular as examples moves those of equal rows and labels as one (``groups``);
# GROUP_DUPLICATES, read at call time, is the switch (benchmarks/duplicates_bench.py turns it off)
GROUP_DUPLICATES = True
# While True, an active set that projected Newton declines (its first iteration's dense work beyond the budget, or
# its rows over more than BOX_NEWTON_MAX_COLUMNS columns) goes on to CR over its face's groups, as a larger set
# does. w8a hinge λ = 1/n, seed 0: an active set of 1929 examples in 233 groups over 272 columns, its face 199
# groups, was left to coordinate ascent, which spent 258 k visits (5 epochs of n) on it; CR there took the run
# from 7.7 passes to 7.1 and the call from 44 to 37 ms. Measured: benchmarks/face_cr_fallback_bench.py.
FACE_CR_AFTER_BOX_NEWTON = True


def free_face(problem, alpha, examples):
    """The examples of ``examples`` whose box coordinate lies strictly inside its box, sorted."""
    y = problem.y
    t = alpha[examples] if problem.loss == "absolute" else alpha[examples] * y[examples]
    low = -1.0 if problem.loss == "absolute" else 0.0
    return np.sort(examples[(t > low) & (t < 1.0)])


def groups(problem, examples):
    """(group_ptr, members) of ``examples`` for ``face_cr`` and ``box_newton``, group g being
    members[group_ptr[g]:group_ptr[g + 1]]: grouped by equal rows (``Data.row_copies``) and equal labels for the
    hinge and absolute loss when GROUP_DUPLICATES and X has equal rows, else one group each.

    Such examples move the dual together: a change Δ of their box coordinates' sum moves v by Δ·σx/(λn) and −n·D's
    linear term by −aΔ (a = 1 for the hinge, y for the absolute loss) whichever of them carries it, so their share
    of f depends on the sum alone, which lives in [low·m, m] for m of them (not so for the smoothed hinge, whose
    −n·D has s·t_i²/2 for each). On binary data many rows repeat: w8a hinge λ = 0.01/n ends on 2214 active
    examples with 261 distinct rows, a9a on 224 with 121; their free faces, above the columns the rows use, are
    singular."""
    examples = np.asarray(examples, dtype=np.int64)
    copies = problem.data.row_copies if GROUP_DUPLICATES and problem.loss != "smoothed_hinge" else None
    if copies is None or examples.shape[0] == 0:
        return np.arange(examples.shape[0] + 1), examples
    keys, labels = copies[examples], problem.y[examples]
    order = np.lexsort((labels, keys))
    keys, labels = keys[order], labels[order]
    starts = np.flatnonzero((keys[1:] != keys[:-1]) | (labels[1:] != labels[:-1])) + 1
    return np.concatenate(([0], starts, [examples.shape[0]])).astype(np.int64), examples[order]


def polish(problem, alpha, v, examples, budget) -> int:
    """``face_cr`` on the free face of ``examples`` where it applies (the module docstring): some examples, no
    ℓ1 term (w = v), and for the hinge and absolute loss no more examples than X has nonempty columns (more
    make A = S X_F X_Fᵀ S/(λn) singular). A face singular so goes to projected Newton over the active set
    (``_box_newton``) where that set has at most BOX_NEWTON_MAX_EXAMPLES groups of equal rows and labels
    (``groups``), else to ``face_cr`` over the face's groups where they are no more than X's nonempty columns, and
    where projected Newton declines it (FACE_CR_AFTER_BOX_NEWTON) where they are no more than the columns the face's
    rows use. Returns the nonzeros read."""
    face = free_face(problem, alpha, examples)
    if face.shape[0] == 0 or problem.l1 != 0:
        return 0
    lam_n = problem.lam * problem.n_samples
    # the smoothed hinge's A has c = s > 0 on its diagonal: never singular
    if problem.loss == "smoothed_hinge" or face.shape[0] <= problem.n_nonempty_columns:
        return face_cr(*problem.csr_arrays, problem.y, problem.loss_code, problem.s, lam_n, problem.row_norms_sq,
                       alpha, v, np.arange(face.shape[0] + 1), face, budget)
    group_ptr, members = groups(problem, np.sort(examples))
    columns = problem.n_nonempty_columns
    # read at call time: the one switch of projected Newton (benchmarks/box_newton_bench.py sets it to 0)
    if group_ptr.shape[0] - 1 <= _box_newton.BOX_NEWTON_MAX_EXAMPLES:
        read, _ = box_newton(*problem.csr_arrays, problem.y, problem.loss_code, lam_n, problem.row_norms_sq, alpha,
                             v, group_ptr, members, budget, BOX_NEWTON_MAX_ITER)
        if read or not FACE_CR_AFTER_BOX_NEWTON:
            return read
        # a set this small uses few of X's columns: its face's groups are held to the columns its own rows use
        indptr, indices, _ = problem.csr_arrays
        columns = _box_columns(indptr, indices, face, problem.n_features)[0].shape[0]
    group_ptr, members = groups(problem, face)
    if group_ptr.shape[0] - 1 > columns:
        return 0
    return face_cr(*problem.csr_arrays, problem.y, problem.loss_code, problem.s, lam_n, problem.row_norms_sq,
                   alpha, v, group_ptr, members, budget)


@njit(cache=True, nogil=True)
def face_start(indptr, indices, data, y, code, s, lam_n, row_sq, alpha, v, face):
    """(t, r, M's diagonal, σ, c, low) of the examples ``face`` at (α, v), in the module docstring's notation."""
    m = face.shape[0]
    absolute = code == L.ABSOLUTE
    c = s if code == L.SMOOTHED_HINGE else 0.0
    t = np.empty(m)
    r = np.empty(m)
    diag = np.empty(m)
    sigma = np.empty(m)
    for k in range(m):
        i = face[k]
        sigma[k] = 1.0 if absolute else y[i]
        t[k] = alpha[i] * sigma[k]
        a = y[i] if absolute else 1.0
        r[k] = a - c * t[k] - sigma[k] * sparse_dot(indices, data, indptr[i], indptr[i + 1], v)
        diag[k] = row_sq[i] / lam_n + c
        if diag[k] <= 0.0:
            diag[k] = 1.0
    return t, r, diag, sigma, c, -1.0 if absolute else 0.0


@njit(cache=True, nogil=True)
def face_product(indptr, indices, data, face, sigma, live, c, lam_n, x, u, out) -> float:
    """out = A x on the live examples (0 on the others), with u = X_Fᵀ S x/(λn) (x is 0 off the live examples):
    the live rows read twice. Returns xᵀAx."""
    u[:] = 0.0
    for k in range(face.shape[0]):
        if x[k] != 0.0:
            i = face[k]
            sparse_axpy(indices, data, indptr[i], indptr[i + 1], sigma[k] * x[k] / lam_n, u)
    xax = 0.0
    for k in range(face.shape[0]):
        if live[k]:
            i = face[k]
            out[k] = sigma[k] * sparse_dot(indices, data, indptr[i], indptr[i + 1], u) + c * x[k]
            xax += x[k] * out[k]
        else:
            out[k] = 0.0
    return xax


@njit(cache=True, nogil=True)
def box_reach(t, p, lower, upper, limit) -> float:
    """The longest step along p that keeps every t[k] in [lower[k], upper[k]] (p = 0 off the live examples);
    each example's own into ``limit``."""
    reach = np.inf
    for k in range(t.shape[0]):
        limit[k] = np.inf
        if p[k] > 0.0:
            limit[k] = max((upper[k] - t[k]) / p[k], 0.0)
        elif p[k] < 0.0:
            limit[k] = max((lower[k] - t[k]) / p[k], 0.0)
        reach = min(reach, limit[k])
    return reach


@njit(cache=True, nogil=True)
def fix_at_bounds(t, p, lower, upper, limit, reach, live, face, indptr) -> int:
    """After a step cut at ``reach``: every live example that met its bound is fixed there (ties included: one
    left live would step past it). Returns the nonzeros of the rows it fixed."""
    fixed_nnz = 0
    for k in range(t.shape[0]):
        if live[k] and p[k] != 0.0 and limit[k] <= reach:
            t[k] = upper[k] if p[k] > 0.0 else lower[k]
            live[k] = False
            fixed_nnz += indptr[face[k] + 1] - indptr[face[k]]
    return fixed_nnz


@njit(cache=True, nogil=True)
def face_cr(indptr, indices, data, y, code, s, lam_n, row_sq, alpha, v, group_ptr, members, budget):
    """Preconditioned conjugate residuals on f over the examples ``members`` (the module docstring), in place on α
    and v, reading at most ``budget`` nonzeros of X; returns the nonzeros read. The examples come in groups of
    equal rows and labels (``groups``; only where c = 0: their share of f depends on the sum
    of their box coordinates alone), each moving as one example whose coordinate is that sum, in [low·m, m] for
    m members, shared equally among them at the end. With z = M⁻¹r, each step reads
    the face's rows twice for Az (uz = X_Fᵀ S z/(λn), then S X_F uz); the direction p = z + βp carries Ap and
    X_Fᵀ S p/(λn) (v's change per unit step) by the same recurrence; the step τ = zᵀAz / (Ap)ᵀM⁻¹Ap minimises
    ‖r − τAp‖_{M⁻¹} (at a (re)start whose f-minimising step along z reaches a bound: that bound, the module
    docstring), and β = z₊ᵀAz₊ / zᵀAz."""
    face = group_heads(group_ptr, members)
    m = face.shape[0]
    d = v.shape[0]
    live_nnz = 0  # the nonzeros of the live examples' rows: a product reads them twice
    for k in range(m):
        live_nnz += indptr[face[k] + 1] - indptr[face[k]]
    if 3 * live_nnz > budget:  # room for the first residual and at least one product, or nothing is read
        return 0
    t, r, diag, sigma, c, low = face_start(indptr, indices, data, y, code, s, lam_n, row_sq, alpha, v, face)
    lower, upper = group_box(t, sigma, low, alpha, group_ptr, members)
    read = live_nnz
    limit = np.empty(m)  # each live example's step to its bound along p
    live = np.ones(m, np.bool_)
    z = np.zeros(m)
    az = np.zeros(m)
    p = np.zeros(m)
    ap = np.zeros(m)
    uz = np.empty(d)
    up = np.empty(d)
    first = -1.0
    done = False
    while not done and read + 2 * live_nnz <= budget:
        # (re)start from z = M⁻¹r over the live examples
        rz = 0.0
        for k in range(m):
            z[k] = r[k] / diag[k] if live[k] else 0.0
            rz += r[k] * z[k]
        if first < 0.0:
            first = rz
        if rz <= FACE_CR_RTOL * FACE_CR_RTOL * first:
            break
        zaz_before = 0.0  # zᵀAz of the step before: 0 at a (re)start, where p = z
        restart = True
        while read + 2 * live_nnz <= budget:
            zaz = face_product(indptr, indices, data, face, sigma, live, c, lam_n, z, uz, az)
            read += 2 * live_nnz
            if zaz > 0.0 and zaz_before > 0.0:
                beta = zaz / zaz_before
                for k in range(m):
                    p[k] = z[k] + beta * p[k]
                    ap[k] = az[k] + beta * ap[k]
                for j in range(d):
                    up[j] = uz[j] + beta * up[j]
            else:  # a (re)start, or Az = 0 (A ⪰ 0): along z, f falls linearly to the first bound
                p[:] = z
                ap[:] = az
                up[:] = uz
            zaz_before = max(zaz, 0.0)
            apmap = 0.0
            for k in range(m):
                if live[k]:
                    apmap += ap[k] * ap[k] / diag[k]
            step = zaz / apmap if zaz > 0.0 and apmap > 0.0 else np.inf
            reach = box_reach(t, p, lower, upper, limit)
            if restart and zaz > 0.0 and rz / zaz >= reach:  # CG's step reaches a bound (the module docstring)
                step = reach
            restart = False
            cut = step >= reach
            if cut:
                step = reach
            # f's change along the step is τ·(½τ·pᵀAp − pᵀr), < 0 by CR's theory (and for the step to a bound at a
            # restart because it is at most rᵀz/zᵀAz): a step that would raise f beyond rounding (or an unbounded
            # one) ends the polish untaken
            pr = 0.0
            pap = 0.0
            for k in range(m):
                if live[k]:
                    pr += p[k] * r[k]
                    pap += p[k] * ap[k]
            if not np.isfinite(step) or 0.5 * step * pap > pr + 1e-12 * abs(pr):
                done = True
                break
            rz = 0.0
            for k in range(m):
                t[k] = min(max(t[k] + step * p[k], lower[k]), upper[k])
                r[k] -= step * ap[k]
                if live[k]:
                    z[k] = r[k] / diag[k]
                    rz += r[k] * z[k]
            for j in range(d):
                v[j] += step * up[j]
            if cut:  # CR restarts on the rest of the face
                live_nnz -= fix_at_bounds(t, p, lower, upper, limit, reach, live, face, indptr)
                break
            if rz <= FACE_CR_RTOL * FACE_CR_RTOL * first:
                done = True
                break
    share_out(alpha, sigma, t, upper, group_ptr, members)
    return read
