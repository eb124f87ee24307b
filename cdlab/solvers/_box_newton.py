"""Projected Newton on SDCA's box-constrained dual over shrinking's active set, run where the free face is
singular and conjugate residuals on it (``_face_cr``) cannot.

For the hinge and absolute losses (c = 0 in ``_face_cr``'s notation) moving the active examples' box
coordinates t by Δ changes the minimised −n·D by

    f(Δ) = ½ ΔᵀKΔ − r₀ᵀΔ,   K = B Bᵀ/(λn),   B = S X_A (the active rows, each times σ_i),

with r₀ = a − S X_A v at the start; ∇f = g = B u − r₀ for u = BᵀΔ/(λn), the change of v. When the free
examples outnumber the columns their rows use, K is singular on the face: f has no minimiser there, only
directions along which it falls linearly until examples meet their bound. Coordinate ascent then crawls
(heart_scale hinge λ = 0.01/n: ~1000 passes over an active set of 13–16 examples on 13 features), and
a Krylov solve on the face wanders in K's null space.

Each iteration is Bertsekas's projected Newton (1982, "Projected Newton methods for optimization problems
with simple constraints", SIAM J. Control Optim. 20(2)): examples within ε of a bound whose gradient pushes
outward are held (ε = min(EPS_ACTIVE, ‖t − clip(t − g)‖)) and step along their own coordinate,
d_i = −g_i/(K_ii + μ), which the box clips at the bound; the rest F take the Levenberg–Marquardt step

    d_F = −(K_FF + μI)⁻¹ g_F = −(1/μ) [g_F − B_F (μλn I + B_FᵀB_F)⁻¹ B_Fᵀ g_F]     (Woodbury),

μ = ‖g_F‖∞ (where no example is free, the largest projected gradient), so that over K's range d is
Newton's step up to the eigenvalues below μ, and along its null space d is −P_N g/μ, of norm at most
‖g_F‖/μ ≤ √|F| (the box clips it); the k × k system (k: the columns of the active rows, its shift μλn
kept above SHIFT_FLOOR of B_FᵀB_F's largest diagonal entry) is the only factorisation. The step
t ← clip(t + s·d) halves s from 1, at most MAX_HALVINGS times, until f(new) < f and Armijo's condition
f(new) ≤ f + ARMIJO·gᵀ(new − t) hold; an iteration that finds no such s ends the polish. No step raises
f, so none lowers D, and α and v = Xᵀα/(λn) are updated together (v by u); the checkpoint then
certifies as always.

Examples of equal rows and labels (``_face_cr.groups``) move as one, a coordinate in [low·m_g, m_g] for m_g of them
(their share of f depends on the sum of their box coordinates alone: ``_face_cr``'s module docstring), gathered as
one row of B; they end with equal shares of it. Repeated rows make K singular however few the columns, and a
group is one row of B for all its members in the m × k products and in BOX_NEWTON_MAX_EXAMPLES.

Reads, counted as nonzeros read: the active rows are gathered once into a dense m × k B (their nonzeros),
and each product with B or Bᵀ reads its m·k entries. B_FᵀB_F's multiply-adds and the solve's are not reads;
the budget (``dual_cd.DualCDState.resync``'s, in reads) counts them at DENSE_OPS_PER_READ a read (``dense_work``).
Measured (benchmarks/box_newton_bench.py heart_scale:0.01 phishing:0.01 a9a:0.01 ijcnn1:0.01 --repeats 3
--seeds 5: whole solves to a certified relative gap of 1e-6, seeds 0–4 a call, interleaved pairs, without ÷
with; passes as median (range) over the seeds): hinge λ = 0.01/n heart_scale 1.80 (1041 (947–1131) → 577
(485–753) passes), phishing 2.12 (579 → 245), a9a 1.05 (range 0.92–1.28; 656 → 587), ijcnn1 0.99 (0.93–1.07;
330 → 316); other runs of this bench over this session read 1.53–1.69, 2.01–2.13, 1.01–1.13 and 0.98–1.10
there, so a9a's and ijcnn1's gains are within the run-to-run spread. With reads alone priced (no dense work), no
singular face this small arose on mushrooms, madelon, colon-cancer at 0.01/n, nor on heart_scale, phishing,
a9a at 1/n (equal passes, seed 0), and on active sets of up to 4096 examples ijcnn1 0.01/n took 363 passes
against 334 and 1.5× the time (seed 0): hence BOX_NEWTON_MAX_EXAMPLES.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import losses as L

# projected Newton runs on active sets of at most this many groups of equal rows and labels (single examples on
# data without them: ``_face_cr.groups``) whose rows use at most
# BOX_NEWTON_MAX_COLUMNS columns (the k × k factorisation per iteration)
BOX_NEWTON_MAX_EXAMPLES = 256
BOX_NEWTON_MAX_COLUMNS = 256
BOX_NEWTON_MAX_ITER = 30
# Bertsekas's ε: the largest distance to a bound at which an example pushed outward is held there
EPS_ACTIVE = 1e-3
ARMIJO = 1e-4
MAX_HALVINGS = 30
# the shift μλn is at least this fraction of B_FᵀB_F's largest diagonal entry
SHIFT_FLOOR = 1e-12
# The polish keeps to its budget in the time of SDCA's reads: a multiply-add of B_FᵀB_F or of the solve, on the
# cached dense B, costs about DENSE_OPS_PER_READ times less than a nonzero read by a random coordinate step, and
# a solve costs at least SOLVE_FIXED_READS reads. Measured (one thread): the Gram's loop 0.12–0.71 ns a
# multiply-add (256 × 123 B at densities 0.11 and 1, 256 × 68 at 0.5); numba's np.linalg.solve 1.8 µs at
# k = 13, 4.3 µs at 22, 0.38 ns per k³/3 at 68, 0.22 at 123; SDCA's epochs 5–8 ns a nonzero (a9a, w8a, ijcnn1).
DENSE_OPS_PER_READ = 8
SOLVE_FIXED_READS = 256


@njit(inline="always", cache=True)
def dense_work(n_free, k):
    """B_FᵀB_F's multiply-adds and the k × k solve's, over n_free free examples (none without one), priced in
    nonzeros read (DENSE_OPS_PER_READ, SOLVE_FIXED_READS)."""
    if n_free == 0:
        return 0
    return (n_free * k * (k + 1) // 2 + k * k * k // 3) // DENSE_OPS_PER_READ + SOLVE_FIXED_READS


@njit(inline="always", cache=True)
def first_work(nnz, m, k):
    """The work that must fit in the budget for the polish to start: the gather of m rows holding nnz
    nonzeros, and one iteration with every example free (the direction's Bᵀg_F and B_F h, one trial's Bᵀδ, the
    next g: 4·m·k reads, and ``dense_work``)."""
    return nnz + 4 * m * k + dense_work(m, k)


@njit(inline="always", cache=True)
def _blocked(t, g, low, high, eps):
    """Whether t lies within ``eps`` of an end of the box [low, high] that the descent direction −g pushes it
    out of (the lower end with g > 0, the upper with g < 0): with eps = 0, whether the box stops −g at t."""
    return (t <= low + eps and g > 0.0) or (t >= high - eps and g < 0.0)


@njit(cache=True)
def _box_columns(indptr, indices, examples, d):
    """(columns, where): the sorted columns the rows of ``examples`` use, and where[j] = j's place in it
    (−1 for a column they do not use)."""
    where = np.full(d, -1, np.int64)
    k = 0
    for e in range(examples.shape[0]):
        i = examples[e]
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if where[j] < 0:
                where[j] = 0
                k += 1
    columns = np.empty(k, np.int64)
    k = 0
    for j in range(d):
        if where[j] == 0:
            columns[k] = j
            where[j] = k
            k += 1
    return columns, where


@njit(cache=True, nogil=True)
def group_heads(group_ptr, members):
    """Each group's first member, the example whose row the group uses: members[group_ptr[g]] for every group g."""
    heads = np.empty(group_ptr.shape[0] - 1, np.int64)
    for g in range(heads.shape[0]):
        heads[g] = members[group_ptr[g]]
    return heads


@njit(cache=True, nogil=True)
def group_box(t, sigma, low, alpha, group_ptr, members):
    """(lower, upper): each group's box [low·m_g, m_g] for its m_g members; ``t``, its first member's box
    coordinate, becomes the sum of its members' (in place)."""
    m = t.shape[0]
    lower = np.empty(m)
    upper = np.empty(m)
    for g in range(m):
        upper[g] = group_ptr[g + 1] - group_ptr[g]
        lower[g] = low * upper[g]
        for q in range(group_ptr[g] + 1, group_ptr[g + 1]):
            t[g] += alpha[members[q]] * sigma[g]
    return lower, upper


@njit(cache=True, nogil=True)
def share_out(alpha, sigma, t, upper, group_ptr, members):
    """Each group's box coordinate t_g shared equally among its members: α_i = σ_g t_g / m_g."""
    for g in range(t.shape[0]):
        share = sigma[g] * t[g] / upper[g]
        for q in range(group_ptr[g], group_ptr[g + 1]):
            alpha[members[q]] = share


@njit(cache=True, nogil=True)
def box_newton(indptr, indices, data, y, code, lam_n, row_sq, alpha, v, group_ptr, members, budget, max_iter):
    """Projected Newton on f over the examples ``members`` (distinct; the module docstring), in place on α and v,
    its reads and ``dense_work`` together at most ``budget``; returns (nonzeros read, work = reads + dense_work).
    The examples come in groups of equal rows and labels (``_face_cr.groups``): group e is
    members[group_ptr[e]:group_ptr[e + 1]], and moves as one example whose box coordinate is the sum of theirs,
    in [low·m_e, m_e] for m_e members, at the end shared equally among them. (0, 0), and nothing changed, where
    the rows use no column or more than BOX_NEWTON_MAX_COLUMNS, or ``first_work`` does not fit (``_face_cr.polish``
    then goes on to conjugate residuals where the face allows). The example limit
    BOX_NEWTON_MAX_EXAMPLES is ``_face_cr.polish``'s, on the groups. ``row_sq``: ‖x_i‖²
    (``Problem.row_norms_sq``), K's diagonal times λn."""
    m = group_ptr.shape[0] - 1
    absolute = code == L.ABSOLUTE
    low = -1.0 if absolute else 0.0
    examples = group_heads(group_ptr, members)
    nnz = 0
    for e in range(m):
        nnz += indptr[examples[e] + 1] - indptr[examples[e]]
    columns, where = _box_columns(indptr, indices, examples, v.shape[0])
    k = columns.shape[0]
    mk = m * k
    # the gather and one iteration over every example
    if k == 0 or k > BOX_NEWTON_MAX_COLUMNS or first_work(nnz, m, k) > budget:
        return 0, 0
    B = np.zeros((m, k))
    sigma = np.empty(m)
    t0 = np.empty(m)
    r0 = np.empty(m)
    for e in range(m):
        i = examples[e]
        sigma[e] = 1.0 if absolute else y[i]
        t0[e] = alpha[i] * sigma[e]
        z = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            B[e, where[indices[p]]] = sigma[e] * data[p]
            z += data[p] * v[indices[p]]
        r0[e] = (y[i] if absolute else 1.0) - sigma[e] * z
    lower, upper = group_box(t0, sigma, low, alpha, group_ptr, members)
    read = nnz
    work = nnz  # read, and dense_work's share of the budget
    t = t0.copy()
    u = np.zeros(k)  # Bᵀ(t − t0)/(λn)
    g = -r0.copy()
    f = 0.0
    d = np.empty(m)
    trial = np.empty(m)
    u_new = np.empty(k)
    f_new = 0.0
    free = np.empty(m, np.bool_)
    for _ in range(max_iter):
        # Bertsekas's ε and the held examples
        dist, pg_max = 0.0, 0.0
        for e in range(m):
            step = min(max(t[e] - g[e], lower[e]), upper[e]) - t[e]
            dist += step * step
            if not _blocked(t[e], g[e], lower[e], upper[e], 0.0):
                pg_max = max(pg_max, abs(g[e]))
        if pg_max == 0.0:
            break
        eps = min(EPS_ACTIVE, np.sqrt(dist))
        mu = 0.0
        n_free = 0
        for e in range(m):
            free[e] = not _blocked(t[e], g[e], lower[e], upper[e], eps)
            if free[e]:
                mu = max(mu, abs(g[e]))
                n_free += 1
        if mu == 0.0:  # no free example moves: the held ones do
            n_free, mu = 0, pg_max
        if work + 4 * mk + dense_work(n_free, k) > budget:  # the direction, one trial, the next g
            break
        # d_F = −(1/μ)[g_F − B_F (μλn I + B_FᵀB_F)⁻¹ B_Fᵀ g_F]
        h = np.zeros(k)
        if n_free > 0:
            gram = np.zeros((k, k))
            btg = np.zeros(k)
            for e in range(m):
                if free[e]:
                    for a in range(k):
                        bea = B[e, a]
                        if bea != 0.0:
                            btg[a] += bea * g[e]
                            for b in range(a, k):
                                gram[a, b] += bea * B[e, b]
            largest = 0.0
            for a in range(k):
                largest = max(largest, gram[a, a])
            # μλn, kept above rounding relative to B_FᵀB_F (which may be singular)
            shift = max(mu * lam_n, SHIFT_FLOOR * largest)
            for a in range(k):
                gram[a, a] += shift
                for b in range(a):
                    gram[a, b] = gram[b, a]
            h = np.linalg.solve(gram, btg)
        slope = 0.0
        for e in range(m):
            if free[e]:
                bh = 0.0
                for a in range(k):
                    bh += B[e, a] * h[a]
                d[e] = -(g[e] - bh) / mu
            else:  # a held example steps along its own coordinate, to its bound if its Newton step reaches it
                d[e] = -g[e] / (row_sq[examples[e]] / lam_n + mu)
            slope += g[e] * d[e]
        read += 2 * mk
        work += 2 * mk + dense_work(n_free, k)
        if not slope < 0.0:  # rounding: the projected gradient instead
            for e in range(m):
                d[e] = 0.0 if _blocked(t[e], g[e], lower[e], upper[e], 0.0) else -g[e]
        # projected search: t + s·d clipped to the box, s halved from 1 until Armijo's condition holds
        s = 1.0
        accepted = False
        for _halving in range(MAX_HALVINGS):
            if work + 2 * mk > budget:  # this trial and the next g
                break
            decrease = 0.0
            for e in range(m):
                trial[e] = min(max(t[e] + s * d[e], lower[e]), upper[e])
                decrease += g[e] * (trial[e] - t[e])
            u_new[:] = u
            for e in range(m):
                delta = trial[e] - t[e]
                if delta != 0.0:
                    for a in range(k):
                        u_new[a] += B[e, a] * delta / lam_n
            read += mk
            work += mk
            f_new = 0.5 * lam_n * np.dot(u_new, u_new)
            for e in range(m):
                f_new -= r0[e] * (trial[e] - t0[e])
            if f_new <= f + ARMIJO * decrease and f_new < f:
                accepted = True
                break
            s *= 0.5
        if not accepted:
            break
        t[:] = trial
        u[:] = u_new
        f = f_new
        for e in range(m):
            bu = 0.0
            for a in range(k):
                bu += B[e, a] * u[a]
            g[e] = bu - r0[e]
        read += mk
        work += mk
    if f < 0.0:
        share_out(alpha, sigma, t, upper, group_ptr, members)
        for a in range(k):
            v[columns[a]] += u[a]
    return read, work
