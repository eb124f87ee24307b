"""Shrinking for SDCA on the losses whose dual coordinate lives in a box (``losses.BOX_LOSSES``:
hinge, smoothed hinge, absolute), as in liblinear's dual coordinate descent (Hsieh, Chang, Lin,
Keerthi & Sundararajan 2008, "A dual coordinate descent method for large-scale linear SVM", ICML,
Section 3.2 and Algorithm 3).

Along example i's box coordinate t_i (``losses.box_gradient``), G_i is the derivative of the
minimised dual −n·D at the current w and the projected gradient PG_i is G_i, or 0 where the box
blocks it (at the lower end when G_i > 0, at the upper end when G_i < 0). An epoch visits the
active examples in a fresh uniformly random order. A visited example at an end of its box whose
gradient pushes outward further than the previous epoch's extreme projected gradients — G_i > M̄ at
the lower end, G_i < m̄ at the upper end, M̄ = max PG and m̄ = min PG over the previous epoch
(M̄ = +∞ when that max is ≤ 0, m̄ = −∞ when that min is ≥ 0) — is not stepped and leaves the active
set: its row was read once (the step is counted), and it is not read again until a checkpoint brings
it back or the set is restored. Its α_i keeps its value, so α, v = Xᵀα/(λn) and w stay the real ones and every
checkpoint's P, D and gap are over all examples.

Restoring the active set: liblinear restores every example when max PG − min PG ≤ its ε on the
active set. Here the scale is the duality gap's. With w = ∇g*(v), example i's share of the gap,
φ_i(z_i) + φ_i*(−α_i) + α_i z_i, is max_box h_i − h_i(t_i) for the concave h_i(t) = −φ_i*(−α) − αz
(h_i' = −G_i), hence at most width·|PG_i| (width 1, or 2 for the absolute loss): n·gap ≤
width·Σ_i |PG_i|, and an epoch's Σ|PG| (each at the w of its visit) measures how far the examples it
visited are from optimal. The set is restored when an epoch's Σ|PG| falls to UNSHRINK_RATIO times
that of the last full epoch (one that began with every example active, so it saw every |PG_i|).
The restored epoch starts with M̄ = +∞, m̄ = −∞ (nothing leaves during it) and measures the full sum
anew: the run pays one full epoch each time the active set's sum has fallen by 1/UNSHRINK_RATIO, and
an active set that has converged while some left-out example is wrong is restored, so the run keeps
going until the driver's certificate over all examples reaches its tolerance.

The certificate brings back the left-out examples that are wrong: its pass over X computes every margin
z_i = x_i·w at the current α (``driver._checkpoint``), from which each left-out example's PG_i costs O(1), no
read of X. Those whose PG_i is not 0 (not at an end of the box, or their gradient no longer pushes against it:
flipped since they left) come back into the epoch under way as the next chunk starts (``ActiveSet.advance``,
``readmit``; α has not moved since the checkpoint), each to a uniform slot among its unvisited ones; the rest stay
out, right at that w. liblinear has no such pass: the
left-out examples that flipped wait for the ratio rule's restore, and a rule on the ratio alone asks each
cycle's active set to fall 1/UNSHRINK_RATIO below a full epoch that was itself measured near the optimum, which
at small λ spent hundreds of passes on an active set already at its optimum (READMIT's comment).

When the certificate is due: a full epoch (one that began with every example active) measures the bound
above, n·gap ≤ width·Σ|PG| over all n examples, each |PG_i| at the w of its visit (an example that leaves has
PG = 0, so the sum is over all n). Under eval_every="auto" with tol > 0, an epoch whose width·Σ|PG| is at most
DUE_SHARE·n·tol ends the chunk there (the visits it ran: ``ActiveSet.ran``, so a chunk runs at most the visits
asked), and the driver certifies at once rather than at the geometric cadence's next checkpoint (a shrunk epoch
once the steps since the last checkpoint have read SHRUNK_DUE_READS·nnz(X)). A full epoch
then bounds the gap by about tol; a shrunk one bounds only the active examples' share, and its certificate either
holds or brings back the left-out examples that are wrong, at a pass over X (the margins) rather than the active
set's further epochs or a restore of the whole set (``DUE_SHRUNK``). The certificate decides, as always. (SDCA
without shrinking is scheduled by a sampled gap estimate, ``_gap_estimate``, whose docstring says why shrinking
keeps the geometric cadence otherwise.)

Each epoch's order is drawn when the epoch before it ends, as liblinear does: a Fisher–Yates shuffle of
the active examples (``shuffle_active``) in ``active[:n_active]``, which the epoch then visits slot by
slot; an example that leaves swaps with the last active slot's, which is visited next (the unvisited
examples stay in a uniformly random order). The uniforms come from SplitMix64 (Steele, Lea & Flood 2014)
inside the kernel, its state seeded once from the run's generator, so equal seeds give equal runs (at
equal tol and eval_every: the checkpoints' readmissions make a run's path depend on where it is certified).
Against one uniform from numpy's generator per visit, drawn into an array per chunk, each visit drawing
its example from the slots not yet visited (an order a prefetch can only guess), measured
(benchmarks/shuffle_bench.py: hinge, whole solves to a certified relative gap of 1e-6, seeds 0-9 a call,
interleaved pairs in one process, before ÷ shuffled, time a pass): w8a 1.10, mushrooms 1.16, ijcnn1
1.23, a9a 1.04, reuters_moneyfx 1.12, phishing 1.07, madelon 1.05 at λ = 1/n; rcv1_small 1.09 and
heart_scale 1.01 at 0.01/n; rcv1_small 1/n 0.92 (the whole calls 1.08).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import losses as L
from ..sampling import MAX_STEPS_PER_PASS_FACTOR, fisher_yates_step, splitmix64_mix
from ._kernels import (PREFETCH_AHEAD, PREFETCH_MIN_NNZ, full_rows, prefetch, prefetch_whole_row, row_arrays,
                       row_axpy, row_dot, scalar_soft_threshold, sparse_axpy, sparse_dot)

# The active set is restored when an epoch's Σ|PG| falls to this fraction of the last full epoch's.
# Measured (hinge, λ = 1/n, whole solve to a certified relative gap of 1e-6 and 1e-10, on heart_scale,
# colon-cancer, rcv1_small, a9a, w8a): 1e-3 took the fewest passes or within noise of them; 0.1 took
# up to 1.6× its passes on a9a and w8a, 1e-4 no fewer.
UNSHRINK_RATIO = 1e-3
# the one sampling shrinking runs with: the active examples in a random order per epoch
SHRINKING_SAMPLING = "permutation"

# Under eval_every="auto", an epoch whose width·Σ|PG| is at most DUE_SHARE·n·tol ends the chunk: the driver
# certifies there (the module docstring). Full epochs alone, measured (benchmarks/shrinking_due_bench.py: hinge,
# whole solves to a certified relative gap of 1e-6, seeds 0-4, passes, median and max, without → with): madelon 1/n
# 8, 16 → 8, 12;
# ijcnn1 1/n (seeds 0-2) 15, 16 → 13, 14;
# every other race problem's hinge at 1/n and 0.01/n alike (heart_scale, colon-cancer, rcv1_small, mushrooms,
# phishing, reuters_moneyfx, madelon 0.01/n; seeds 0-2: a9a, w8a, ijcnn1 0.01/n). Restoring the set, as liblinear
# does, once a shrunk epoch's width·Σ|PG| is at most n·tol took w8a 1/n from 8 passes to 12-13 and a9a 1/n from
# 17 to 18-20.
DUE_SHARE = 1.0
# While True, an epoch of the shrunk active set is due by the same Σ|PG| (the module docstring). Measured
# (benchmarks/shrunk_due_bench.py: full epochs alone ÷ both; seeds 0-2 a call, passes both | full alone), before
# SHRUNK_DUE_READS: ijcnn1 1/n 1.12, 12 | 13; w8a 1/n 1.07; heart_scale 1/n 1.05, 22 | 23; phishing 0.01/n 1.04;
# a9a 1/n 1.04; the other race problems' hinge 0.99-1.02 at the same passes. With it (and
# FACE_CR_AFTER_BOX_NEWTON on both sides): ijcnn1 1/n 1.10, w8a 1/n 1.03, a9a 1/n 1.03, phishing 0.01/n 1.02,
# heart_scale 1/n 0.99. A shrunk epoch's due Σ|PG| at 4× a full one's took up to 2× the time (more
# certificates: heart_scale 1/n 2.0, a9a 1/n 1.37); at 1/4 of it, 1.03-1.07× more on a9a, w8a, ijcnn1 1/n.
DUE_SHRUNK = True
# ... once the steps since the last checkpoint have read at least this share of nnz(X): a certificate reads X once,
# so shrunk epochs that keep finding it due (a tol the gap cannot reach, wrong left-out examples it keeps bringing
# back) pay for at most about 1/SHRUNK_DUE_READS certificates a pass of the steps' reads. w8a hinge 1/n, seed 0,
# whose last shrunk epoch was due 0.10 of a pass after a polish that left the gap at 1.4·tol: 37 ms at 0.1, 39 at
# 0.25, 40 at 0.5 (the whole call, one run each).
SHRUNK_DUE_READS = 0.1
# At each checkpoint the left-out examples whose projected gradient at its margins is not 0 come back (``readmit``)
# while this is True. Measured (benchmarks/readmit_bench.py --repeats 3: hinge, whole solves to a certified
# relative gap of 1e-6, seeds 0-2 a call; ratio rule alone ÷ readmitting, passes readmitting | ratio rule alone):
# a9a 0.01/n 1.38, 506 | 648; w8a 0.01/n 1.26, 78 | 110; heart_scale 0.01/n 1.08, 450 | 583; reuters_moneyfx
# 0.01/n 1.08 and 1/n 1.05; madelon 1/n 1.09, 8 | 8-12; madelon 0.01/n 1.03; the other race problems 0.93-1.04 at
# the same passes (heart_scale 1/n 0.93: 2.5 ms against 2.2). A checkpoint that asked for a restore of the whole
# set when the last shrunk epoch's width·Σ|PG| fell to n·gap, on top of the readmissions, took more passes on a9a
# 0.01/n (595-606 against 506-554) and about as many elsewhere (madelon 0.01/n 319-341 against 338-342, heart_scale,
# phishing and reuters_moneyfx 0.01/n within their seeds' spread).
READMIT = True
# Under eval_every="auto" the first checkpoint after the start comes after this many passes (the driver's cadence then
# doubles the passes run so far, as from its own first interval: 4, 8, 16, …), unless an epoch's Σ|PG| finds the
# certificate due before (DUE_SHARE): the driver's checkpoints at 1 and 2 passes cost a pass each and certified none of
# the race's hinge problems. The price: a tol the first passes reach without their Σ|PG| showing it (phishing, a9a,
# heart_scale hinge 1/n at tol 0.03–0.1·P) is certified at 4 passes, not 1 or 2. Measured (benchmarks/
# first_interval_bench.py: whole solves to a certified relative gap of 1e-6, seeds 0-2 a call, interleaved pairs,
# 1 pass ÷ 4): hinge 1/n a9a 1.04, ijcnn1 1.05, mushrooms 1.04, phishing 1.04, w8a 1.06, rcv1_small 1.06, madelon 1.20,
# reuters_moneyfx 0.96 (its passes 53 → 62 median); rcv1_small 0.01/n 1.03; the same passes elsewhere.
SHRUNK_FIRST_INTERVAL = 4.0
# DUE_SUM's and SHRUNK_DUE_SUM's value when no epoch is due (tol ≤ 0, or a fixed cadence): below any Σ|PG|
NEVER_DUE = -1.0

# the counters the active set keeps between chunks: ints (the visits the last chunk ran; 1 when an epoch
# found the certificate due, which ends every chunk at once until the next checkpoint; the nonzeros read since the
# last checkpoint) ...
INTS = N_ACTIVE, POS, ACTIVE_NNZ, FULL, RAN, DUE, READ = range(7)
# ... and floats: M̄ and m̄ of the previous epoch, this epoch's max PG, min PG and Σ|PG|, the last full
# epoch's Σ|PG|, the Σ|PG| at or below which a full epoch finds the certificate due (−1: never), and a shrunk one
FLOATS = PG_MAX_OLD, PG_MIN_OLD, PG_MAX, PG_MIN, PG_SUM, FULL_PG_SUM, DUE_SUM, SHRUNK_DUE_SUM = range(8)


def shrinking_flag(options) -> bool:
    """The ``shrinking`` option of ``options`` (False when absent): True or False, else a ValueError."""
    value = options.get("shrinking", False)
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"shrinking must be True or False, got {value!r}")
    return bool(value)


def shrinking_loss_rule(loss, options) -> str:
    """Why SDCA refuses ``loss`` with these options: shrinking needs a box-constrained dual coordinate."""
    if shrinking_flag(options) and loss not in L.BOX_LOSSES:
        return (f"shrinking=True needs a loss whose dual coordinate lives in a box ({sorted(L.BOX_LOSSES)}), "
                f"not {loss!r}: its examples never sit at a bound; use shrinking=False")
    return ""


def shrinking_sampling_rule(sampling, options) -> str:
    """Why SDCA refuses ``sampling`` with these options: shrinking visits its active set in epochs."""
    if shrinking_flag(options) and not (isinstance(sampling, str) and sampling == SHRINKING_SAMPLING):
        shown = sampling if isinstance(sampling, str) else "an array of probabilities"
        return (f"shrinking=True visits the active examples in a random order per epoch, so it needs "
                f"sampling={SHRINKING_SAMPLING!r}, got {shown!r}")
    return ""


@njit(inline="always", cache=True)
def _next_uniform(state):
    """A uniform in [0, 1) from SplitMix64 (Steele, Lea & Flood 2014, "Fast splittable pseudorandom number
    generators", OOPSLA), advancing its 64-bit state ``state[0]``; the top 53 bits of the output."""
    z = state[0] + np.uint64(0x9E3779B97F4A7C15)
    state[0] = z
    return (splitmix64_mix(z) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True)
def shuffle_active(active, n_active, state):
    """Put ``active[:n_active]`` in a uniformly random order: Fisher–Yates (``sampling.fisher_yates_step``),
    slot p taking the example at a uniform slot of [p, n_active)."""
    for p in range(n_active - 1):
        fisher_yates_step(active, p, n_active, _next_uniform(state))


@njit(cache=True, nogil=True)
def shrinking_chunk(indptr, indices, data, y, code, s, lam_n, thresh, row_sq, alpha, v, w,
                    n_steps, state, active, ints, floats, ratio, nnz, full_rows):
    """Run at most ``n_steps`` visits of the active set (the module docstring) in place: the epoch's order is
    ``active[:ints[N_ACTIVE]]``, shuffled (``shuffle_active``, generator state ``state``) when an epoch ends;
    ``ints``/``floats`` are the counters kept between chunks. Returns the nonzeros read: the rows visited,
    each once; ``ints[RAN]`` holds the visits run, fewer than ``n_steps`` when an epoch found the certificate
    due (``ints[DUE]``: the chunk ends there, and a chunk called while it is set runs nothing).

    ``w`` may be the same array as ``v`` when thresh (= μ/λ) is 0. ``data``: X's values, or the one value they share
    (``_kernels.row_arrays``); ``full_rows``: ``_kernels.full_rows``."""
    n = active.shape[0]
    n_active, pos, active_nnz, full = ints[N_ACTIVE], ints[POS], ints[ACTIVE_NNZ], ints[FULL]
    pg_max_old, pg_min_old = floats[PG_MAX_OLD], floats[PG_MIN_OLD]
    pg_max, pg_min, pg_sum, full_sum = floats[PG_MAX], floats[PG_MIN], floats[PG_SUM], floats[FULL_PG_SUM]
    due_sum, shrunk_due_sum = floats[DUE_SUM], floats[SHRUNK_DUE_SUM]
    touched, ran, due, read_before = 0, 0, ints[DUE], ints[READ]
    shrunk_reads = SHRUNK_DUE_READS * nnz
    while ran < n_steps and due == 0:
        ran += 1
        # while the active rows exceed the last-level cache, prefetch the example in slot pos + PREFETCH_AHEAD: the
        # epoch visits it then, unless examples leave first (each pulls the last slot's example forward)
        if active_nnz > PREFETCH_MIN_NNZ and pos + PREFETCH_AHEAD < n_active:
            # as in dual_cd_chunk: an inline helper for these lines cost that kernel 10-15 % (logistic, λ = 1/n,
            # a9a and ijcnn1, whole solves against the kernel with the lines written out)
            ahead = active[pos + PREFETCH_AHEAD]
            prefetch_whole_row(indptr, indices, data, ahead, full_rows is None)
            prefetch(alpha, ahead)
            prefetch(y, ahead)
            prefetch(row_sq, ahead)
        i = active[pos]
        start, end = indptr[i], indptr[i + 1]
        if full_rows is None:
            z = sparse_dot(indices, data, start, end, w)
        else:
            z = row_dot(indices, data, start, end, w)
        touched += end - start
        a = alpha[i]
        g, side = L.box_gradient(code, a, z, y[i], s)
        if (side < 0 and g > pg_max_old) or (side > 0 and g < pg_min_old):
            n_active -= 1
            active[pos] = active[n_active]
            active[n_active] = i
            active_nnz -= end - start
        else:
            pg = 0.0 if (side < 0 and g > 0.0) or (side > 0 and g < 0.0) else g
            pg_max = max(pg_max, pg)
            pg_min = min(pg_min, pg)
            pg_sum += abs(pg)
            a_new = L.dual_step(code, a, z, y[i], row_sq[i] / lam_n, s)
            # the step's writes, as dual_cd_chunk's: shared as an inline helper, they changed that
            # kernel's machine code and cost it 7 % a pass (rcv1_small, squared loss)
            delta = a_new - a
            if delta != 0.0:
                alpha[i] = a_new
                if full_rows is None:
                    sparse_axpy(indices, data, start, end, delta / lam_n, v)
                else:
                    row_axpy(indices, data, start, end, delta / lam_n, v)
                if thresh > 0.0:
                    for p in range(start, end):
                        w[indices[p]] = scalar_soft_threshold(v[indices[p]], thresh)
            pos += 1
        if pos >= n_active:  # the epoch is over
            if full:
                full_sum = pg_sum
            if full and pg_sum <= due_sum:
                due = 1
            elif not full and pg_sum <= shrunk_due_sum and read_before + touched >= shrunk_reads:
                due = 1
            if n_active < n and pg_sum <= ratio * full_sum:
                n_active, active_nnz = n, nnz
                pg_max_old, pg_min_old = np.inf, -np.inf
            else:
                pg_max_old = pg_max if pg_max > 0.0 else np.inf
                pg_min_old = pg_min if pg_min < 0.0 else -np.inf
            full = 1 if n_active == n else 0
            pos, pg_max, pg_min, pg_sum = 0, -np.inf, np.inf, 0.0
            shuffle_active(active, n_active, state)
    ints[N_ACTIVE], ints[POS], ints[ACTIVE_NNZ], ints[FULL], ints[RAN], ints[DUE] = (n_active, pos, active_nnz, full,
                                                                                  ran, due)
    ints[READ] = read_before + touched
    floats[PG_MAX_OLD], floats[PG_MIN_OLD] = pg_max_old, pg_min_old
    floats[PG_MAX], floats[PG_MIN], floats[PG_SUM], floats[FULL_PG_SUM] = pg_max, pg_min, pg_sum, full_sum
    return touched


@njit(cache=True, nogil=True)
def readmit(active, ints, margins, alpha, y, code, s, indptr, state):
    """Bring back into the active set the left-out examples (``active[ints[N_ACTIVE]:]``) whose projected
    gradient at the margins z = Xw is not 0, each to a uniform slot among the epoch's unvisited ones
    (``active[ints[POS]:ints[N_ACTIVE]]``, an inside-out Fisher–Yates step), growing ``ints[N_ACTIVE]`` and
    ``ints[ACTIVE_NNZ]``; returns how many came back."""
    n = active.shape[0]
    n_active, pos = ints[N_ACTIVE], ints[POS]
    k = n_active
    for slot in range(n_active, n):
        i = active[slot]
        g, side = L.box_gradient(code, alpha[i], margins[i], y[i], s)
        if (side < 0 and g >= 0.0) or (side > 0 and g <= 0.0):
            continue  # PG = 0: right to be left out
        active[slot] = active[k]
        active[k] = i
        ints[ACTIVE_NNZ] += indptr[i + 1] - indptr[i]
        j = pos + int(_next_uniform(state) * (k + 1 - pos))
        active[k], active[j] = active[j], active[k]
        k += 1
    ints[N_ACTIVE] = k
    return k - n_active


class ActiveSet:
    """The active examples and the counters of the module docstring's epochs, kept between chunks."""

    def __init__(self, problem, rng):
        n = problem.n_samples
        self.nnz, self.n = problem.nnz, n
        self.active = np.arange(n, dtype=np.int64)
        # the epochs' orders come from SplitMix64 (``shuffle_active``), seeded once from the run's generator
        self.state = np.array([rng.integers(2 ** 63)], dtype=np.uint64)
        shuffle_active(self.active, n, self.state)
        self.ints = np.zeros(len(INTS), dtype=np.int64)
        self.ints[[N_ACTIVE, ACTIVE_NNZ, FULL]] = n, problem.nnz, 1
        # in FLOATS' order
        self.floats = np.array([np.inf, -np.inf, -np.inf, np.inf, 0.0, np.inf, NEVER_DUE, NEVER_DUE])
        # the box's width: n·gap ≤ width·Σ|PG| (the module docstring)
        self.width = 2.0 if problem.loss == "absolute" else 1.0
        # the last checkpoint's margins until the next chunk brings its wrong examples back (``advance``)
        self.margins = None
        self.first_interval = SHRUNK_FIRST_INTERVAL

    def checkpointed(self, tol=0.0, auto_cadence=False, margins=None):
        """Keep the checkpoint's margins (Xw at the current α) for the next chunk's ``readmit``; clear a due flag,
        and set the Σ|PG| at which an epoch is due from the run's ``tol`` (none when tol ≤ 0, or unless
        ``auto_cadence``: eval_every="auto"; the module docstring)."""
        self.margins = margins
        self.floats[DUE_SUM] = DUE_SHARE * self.n * tol / self.width if tol > 0.0 and auto_cadence else NEVER_DUE
        self.floats[SHRUNK_DUE_SUM] = self.floats[DUE_SUM] if DUE_SHRUNK else NEVER_DUE
        self.ints[DUE] = self.ints[READ] = 0

    @property
    def ran(self) -> int:
        """The visits the last chunk ran."""
        return int(self.ints[RAN])

    @property
    def size(self) -> int:
        return int(self.ints[N_ACTIVE])

    def advance(self, p, alpha, v, w, thresh, n_steps) -> int:
        """The left-out examples wrong at the last checkpoint's margins back (``readmit``, while READMIT: α has not
        moved since, and a run that ends at that checkpoint never pays for it), then at most ``n_steps`` visits of
        the active set (``shrinking_chunk``; ``ran`` holds how many); the nonzeros they read."""
        if self.margins is not None:
            if READMIT and self.ints[N_ACTIVE] < self.n:
                readmit(self.active, self.ints, self.margins, alpha, p.y, p.loss_code, p.s, p.csr_arrays[0],
                        self.state)
            self.margins = None
        return shrinking_chunk(*row_arrays(p), p.y, p.loss_code, p.s, p.lam * p.n_samples,
                               thresh, p.row_norms_sq, alpha, v, w, n_steps, self.state, self.active, self.ints,
                               self.floats, UNSHRINK_RATIO, self.nnz, full_rows(p))

    def steps_per_pass(self) -> int:
        """Visits that read about nnz(X) nonzeros while the active set stays as it is: nnz over the
        active rows' mean length (at most MAX_STEPS_PER_PASS_FACTOR × max(n, nnz), as for a sampler)."""
        per_visit = max(int(self.ints[ACTIVE_NNZ]), 1) / max(self.size, 1)
        return int(max(1, min(round(self.nnz / per_visit), MAX_STEPS_PER_PASS_FACTOR * max(self.n, self.nnz))))
