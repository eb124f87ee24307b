"""When SDCA's certificate is due (and dual CD's, which shares its state): the duality gap estimated on a
fixed sample of examples, so that under eval_every="auto" the driver checkpoints where the gap may have
reached tol rather than at geometric intervals.

The gap of a dual point α with w = v(α) = Xᵀα/(λn) and no ℓ1 term is an average over the examples,
G(w, α) = (1/n) Σ_i FY_i(x_i·w, α_i), FY_i(z, a) = φ_i(z) + φ_i*(−a) + a z ≥ 0 (``losses.fenchel_young``;
theory.md §3); with μ > 0 and w = S_{μ/λ}(v) the regulariser's Fenchel–Young sum λ Σ_j FY_g(w_j, v_j)
(``regularizer.regularizer_sums``) adds to it. The mean of FY_i over a uniform sample S of m examples is
an unbiased estimate of the first term at the current iterate, read from m rows instead of X's n (and
without the certificate's Xᵀα). The sample is drawn once per problem size, from a generator of its own
(ESTIMATE_SEED): the run's generator, and so its trace, is untouched, and the same examples are read at
every estimate, so the ratio of the certified gap to the estimate, measured at each checkpoint, carries
to the next: the estimate times that ratio (1 before the first checkpoint) is what is compared with tol.

The estimate only schedules: every stop is still the driver's certificate over all n examples and the
whole of X. The estimates themselves are spared where their rate says the certificate cannot be due: the
linear rate of the last two (log of the estimate against passes) predicts the pass where the estimate times
the ratio reaches tol. The next estimate is taken ESTIMATE_SKIP of the way to ESTIMATE_LEAD passes before
that pass (a one-pass rate is noisy, and a late estimate costs passes where an early one costs a sixteenth
of one), no further from now than the passes run so far (the auto cadence's doubling: a rate read off a
plateau must not skip the estimates of the fall after it), and at the first pass after a checkpoint. A pass
predicted within ESTIMATE_LEAD is aimed at ESTIMATE_AIM times as far, with a checkpoint there and no
estimate between. A wrong estimate costs time, not correctness: one too low brings a checkpoint that does
not stop the run (and raises the ratio), one too high delays the checkpoint, never by more than the auto
cadence's longest interval (``costs.auto_cap``; plus at most the pass after which the estimate is checked),
after which a checkpoint is due whatever the estimate says. An estimate of 0 or at rounding level (the hinge
loss: no sampled example off its optimum, while others are; ESTIMATE_ROUNDING) or one that is not finite says
nothing: the checkpoint is then due where the auto cadence's geometric bound puts it (``budget.far_interval``),
and the ratio is not taken from it.

Measured (``python benchmarks/gap_estimate_bench.py --repeats 11``: SDCA, permutation, whole calls to a
certified gap of 1e-6·|P*|, seeds 0-10 side by side, the geometric cadence's median seconds ÷ the estimate's;
in brackets ÷ an oracle's single checkpoint at the geometric run's last pass): rcv1_small logistic λ = 1/n
1.21 (1.43), 0.01/n 1.11 (1.37), squared 1/n 1.09 (1.44); reuters_moneyfx logistic 1/n 1.14 (1.23), squared
1/n 1.06 (1.28); phishing logistic 1/n 1.17 (1.19); a9a logistic 1/n 1.18 (1.14); madelon hinge 1/n 1.25
(1.37). Checkpoints at the stop fell from 5-6 to 2-3, passes within 0.8 of the geometric run's. Runs with shrinking
keep the geometric cadence: their polish (``_face_cr``) follows an interval whose certified gap stalled, and the
estimate's checkpoints, near the stop, seldom see one. Scheduled so (hinge, ``--repeats 7``, geometric ÷ estimate),
λ = 1/n measured 0.95-1.23 (geometric mean 1.12 over madelon, phishing, ijcnn1, w8a, mushrooms, reuters_moneyfx,
a9a) and λ = 0.01/n 0.94-1.01, but on reuters_moneyfx hinge 1/n, seeds 0-7, the slowest run took 249 passes
against 213 (the median 87 against 116).
"""
from __future__ import annotations

import functools

import numpy as np
from numba import njit

from .. import losses as L
from ..regularizer import regularizer_sums
from ._kernels import full_rows, row_dot, sparse_dot
from .budget import AUTO_CAP, far_interval
from .costs import auto_cap

# The sample: ESTIMATE_SHARE of the examples, at least ESTIMATE_MIN_ROWS (all of them when n is smaller), drawn
# by a generator seeded with ESTIMATE_SEED.
ESTIMATE_SHARE = 1.0 / 16.0
ESTIMATE_MIN_ROWS = 256
ESTIMATE_SEED = 20151  # any fixed seed: the sample depends on n only
# Estimates are skipped until this many passes before the pass their rate predicts the certificate due at; a pass
# predicted within it is aimed at this many times as far (a noisier prediction than the auto cadence's, AUTO_AIM).
ESTIMATE_LEAD = 1.0
ESTIMATE_AIM = 1.25
ESTIMATE_SKIP = 0.5
# An estimate at most this share of the largest one of the run (or of the start's certified gap) is rounding, and
# says nothing (the module docstring): the hinge loss's sampled examples all at their optimum leave sums of ~1e-17
# (madelon, λ = 1/n, seed 0: 1.9e-17 where the certified gap was 6e-4), whose ratio to the gap held the next
# checkpoint back by the cap's 10 passes.
ESTIMATE_ROUNDING = 1e-12


def estimate_schedules(problem) -> bool:
    """Whether SDCA's checkpoints on ``problem`` may come when the estimate says (one thread, no shrinking): where
    the sample is at most half the examples (n ≥ 2·ESTIMATE_MIN_ROWS) and ``costs.auto_cap`` is AUTO_CAP, i.e. a
    pass's reads outweigh a checkpoint's fixed cost. Elsewhere an estimate costs about what a checkpoint does (a
    pass of dot products over all rows, or the fixed cost of a call per pass), and the geometric cadence's
    longer intervals are cheaper. Measured (logistic, whole calls to a certified gap of 1e-6·|P*|, seeds 0-14,
    medians, the geometric cadence's seconds ÷ the estimate's, n = all rows sampled): heart_scale (n = 270)
    λ = 1/n 0.95, colon-cancer (n = 62) λ = 0.01/n 0.93."""
    return problem.n_samples >= 2 * ESTIMATE_MIN_ROWS and auto_cap(problem) <= AUTO_CAP


@njit(cache=True, nogil=True)
def sample_fenchel_young(indptr, indices, data, y, code, s, w, alpha, rows, full_rows):
    """The mean of FY_i(x_i·w, α_i) over the examples ``rows``: one read of their rows. ``full_rows``:
    ``_kernels.full_rows``."""
    acc = 0.0
    for k in range(rows.shape[0]):
        i = rows[k]
        if full_rows is None:
            z = sparse_dot(indices, data, indptr[i], indptr[i + 1], w)
        else:
            z = row_dot(indices, data, indptr[i], indptr[i + 1], w)
        acc += L.fenchel_young(code, z, alpha[i], y[i], s)
    return acc / rows.shape[0]


def sample_rows(n_samples) -> np.ndarray:
    """The estimate's examples for ``n_samples`` examples, sorted (the module docstring). Drawn once per n and
    sample rule (the draw permutes all n examples: 0.2 ms of a call at n = 20000); the runs share the array and
    only read it."""
    return _drawn_rows(n_samples, ESTIMATE_SHARE, ESTIMATE_MIN_ROWS, ESTIMATE_SEED)


@functools.lru_cache(maxsize=8)
def _drawn_rows(n_samples, share, min_rows, seed) -> np.ndarray:
    """``share`` of ``n_samples`` examples, at least ``min_rows`` (all where fewer), drawn with ``seed``, sorted."""
    m = min(n_samples, max(min_rows, int(np.ceil(share * n_samples))))
    if m == n_samples:
        return np.arange(n_samples, dtype=np.int64)
    return np.sort(np.random.default_rng(seed).choice(n_samples, m, replace=False)).astype(np.int64)


class GapEstimate:
    """The sampled gap estimate of a dual state (w, α, v) and the due rule of the module docstring."""

    def __init__(self, problem):
        self.p = problem
        self.rows = sample_rows(problem.n_samples)
        self.ratio = 1.0  # certified gap ÷ estimate at the last checkpoint
        self.cap = auto_cap(problem)  # the longest interval, in passes, between checkpoints
        # the last estimate and the state's (steps, nonzeros read) when it was taken: a polish (``dual_cd``'s resync)
        # moves α and v without steps, and its reads are counted
        self.value, self.value_at = None, None
        self.largest = 0.0  # the largest estimate so far, or the start's certified gap (ESTIMATE_ROUNDING)
        self.checkpoint_passes = 0.0
        self.previous = None  # (passes, estimate) of the last estimate the due rule took
        self.next_passes = 0.0  # no estimate before this pass (the module docstring)
        self.due_passes = None  # the pass aimed at for the next checkpoint, or None

    def estimate(self, state) -> float:
        """The estimated gap at the state's iterate (its ``w``, ``alpha`` and ``v``)."""
        if self.value_at != (state.steps, state.nnz_touched):
            p = self.p
            value = sample_fenchel_young(*p.csr_arrays, p.y, p.loss_code, p.s, state.w, state.alpha, self.rows,
                                         full_rows(p))
            if state.thresh > 0.0:
                value += p.lam * regularizer_sums(state.w, state.v, state.thresh)[3]
            self.value, self.value_at = value, (state.steps, state.nnz_touched)
            if value < np.inf:
                self.largest = max(self.largest, value)
        return self.value

    def informs(self, value) -> bool:
        """Whether an estimate says anything: finite and above rounding (ESTIMATE_ROUNDING × the largest so far)."""
        return ESTIMATE_ROUNDING * self.largest < value < np.inf

    def due(self, state, tol) -> bool:
        """Whether to checkpoint now: the estimate times the last ratio is ≤ tol, the pass aimed at is reached,
        or ``cap`` passes have run since the last checkpoint (the geometric bound's interval where the estimate
        says nothing). No estimate is taken before the pass the last two predict (the module docstring)."""
        passes = state.nnz_touched / self.p.nnz
        if passes - self.checkpoint_passes >= self.cap:
            return True
        if self.due_passes is not None:
            return passes >= self.due_passes
        if passes < self.next_passes:
            return False
        value = self.estimate(state)
        if not self.informs(value):  # no information: the geometric bound's interval
            return passes - self.checkpoint_passes >= far_interval(self.checkpoint_passes, self.cap)
        predicted = self.ratio * value
        if predicted <= tol:
            return True
        if self.previous is not None and value < self.previous[1] and passes > self.previous[0]:
            ahead = np.log(predicted / tol) * (passes - self.previous[0]) / np.log(self.previous[1] / value)
            if ahead <= ESTIMATE_LEAD:
                self.due_passes = passes + ESTIMATE_AIM * ahead
            else:
                self.next_passes = passes + ESTIMATE_SKIP * min(ahead - ESTIMATE_LEAD, passes)
        self.previous = (passes, value)
        return False

    def passes_to_aim(self, state) -> float:
        """Passes from the state's to the pass aimed at (∞ when none is)."""
        if self.due_passes is None:
            return np.inf
        return self.due_passes - state.nnz_touched / self.p.nnz

    def checkpointed(self, state, row, tol):
        """Take the certified gap of the checkpoint ``row`` (at the state's iterate) into the ratio, unless the
        row ends the run (gap ≤ tol) or is the start's (whose gap sets the scale of rounding, ESTIMATE_ROUNDING)."""
        self.checkpoint_passes, self.due_passes, self.next_passes = row["passes"], None, row["passes"]
        if row["passes"] == 0.0 and np.isfinite(row["gap"]):
            self.largest = max(self.largest, row["gap"])
        if row["gap"] <= tol or row["passes"] == 0.0:
            return
        value = self.estimate(state)
        if self.informs(value) and np.isfinite(row["gap"]):
            self.previous = (row["passes"], value)
            self.ratio = row["gap"] / value
