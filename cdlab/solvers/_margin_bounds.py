"""Certificate sweeps that leave out the examples provably beyond the margin (hinge, smoothed hinge).

A checkpoint of a dual method reads X once (``_kernels.certificate_sweep``): z = Xw for P(w) and Xᵀα for D(α).
For a loss of ``losses.FLAT_BEYOND_MARGIN`` an example with α_i = 0 and margin y_i z_i ≥ 1 adds nothing to either
sum: φ(z_i) = 0 (the loss is flat there), −φ*(−α_i) = 0 and α_i x_i = 0, so P, D and the gap come out the same
without its row. Its margin is known to be ≥ 1 without reading the row where a lower bound says so: by
Cauchy–Schwarz, between two checkpoints' points w′ and w,

    y_i x_i·w ≥ y_i x_i·w′ − ‖x_i‖·‖w − w′‖,

so a bound b_i ≤ y_i x_i·w′ (the margin the last sweep that read the row computed, lowered at each sweep since by
‖x_i‖ times that step's ‖w − w′‖) stays a bound at w once lowered by ‖x_i‖·‖w − w′‖. A sweep reads the row of each
example with α_i ≠ 0 or b_i below 1 (and sets b_i to the margin it computes); the others keep z_i = y_i b_i, whose
loss is 0 as the true margin's is. Rounding: a row of m nonzeros' computed margin is within about m·u·‖x_i‖‖w‖ of
the exact one (u = 2⁻⁵³), at the point it was read and at w; the test asks b_i to clear 1 by ‖x_i‖ times
ROUNDING_FACTOR·(m + 2)·u·max‖w‖ (m the longest row, max over the run's sweeps), each ‖x_i‖·‖w − w′‖ is taken
(1 + NORM_SLACK + (d + m + 8)·u)-fold (the computed norms may fall short by (d/2 + 1)·u and (m/2 + 1)·u), and each
lowered bound is rounded down (else a step below half an ulp of b_i would leave it where it was), so the rows left
out are those whose computed margin would also be ≥ 1, and P, D and the gap
are the full sweep's bit for bit (a zero α_i adds nothing to Xᵀα in the full sweep either; the run's steps, which
read neither, are the same). The margins a state reads from the checkpoint (SDCA with shrinking's ``readmit``) are
y_i b_i ≥ 1 at those examples, where the exact margin gives the same answer (α_i = 0 at its lower bound, projected
gradient 0).

Where it pays: late in a run, where the support vectors are few and w moves little between checkpoints. SDCA with
shrinking on w8a, hinge λ = 1/n, leaves out 71–82 % of the rows (92–97 % of the nonzeros) at each checkpoint after
the first; a9a 25–60 % of the nonzeros, ijcnn1 40–78 %, reuters_moneyfx 75–81 %, the race's text-like 1e7 problem
up to 51 %. Measured (benchmarks/margin_bounds_bench.py: method="auto", whole calls to a certified relative gap of
1e-6, each after gc.collect(), interleaved pairs, every row ÷ bounds, the same passes and P; medians of 7): hinge
λ = 1/n w8a 1.29, phishing 1.15, ijcnn1 1.12, a9a 1.11, reuters_moneyfx 1.06, mushrooms 1.05, the text-like 1e7
problem 1.02 (0.68–1.26); λ = 0.01/n ijcnn1 1.13, mushrooms 1.06, reuters_moneyfx 1.05, w8a 1.04, a9a 1.03, phishing
1.03; smoothed hinge phishing 1/n 1.04, a9a 0.01/n 1.00; heart_scale, colon-cancer, madelon 0.98–1.00 (calls of
1.4–122 ms whose checkpoints read few rows, or whose rows are full). One thread (the n_jobs mode's sweep reads every
row), on X of at least MIN_NNZ_PER_FEATURE nonzeros a feature.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .. import losses as L
from ._kernels import certificate_rows

# the rounding allowance's factor, and the relative slack on each step's ‖x_i‖·‖w − w′‖ beyond the (d + m + 8)·u
# by which the two norms' sums of squares and square roots may fall short (module docstring)
ROUNDING_FACTOR = 4.0
NORM_SLACK = 1e-9
EPS = float(np.finfo(float).eps)  # 2u
# whether a dual run's checkpoints on a loss of ``losses.FLAT_BEYOND_MARGIN`` leave out the rows beyond the margin:
# off. The docstring's gains were measured against a full sweep slowed 3-6x by an inline helper (since written out);
# against the full sweep as it is, SDCA with shrinking, hinge 1/n, every row ÷ bounds: w8a 1.04, a9a 0.97, ijcnn1
# 0.97 (benchmarks/margin_bounds_bench.py --repeats 5)
MARGIN_BOUNDS = False
# ... where X has at least this many nonzeros a feature: a sweep's bounds cost a pass over d entries (``step_norms``)
# and one over n, which on rcv1_small (1000 × 47236, 1.6 nonzeros a feature, 77–100 % of the nonzeros read) outweigh
# what they leave out (whole calls 0.98–0.99× with them)
MIN_NNZ_PER_FEATURE = 4


@njit(cache=True, nogil=True, error_model="numpy")
def bounded_certificate_sweep(indptr, indices, data, y, code, s, w, alpha, z, xt_alpha, full_rows, row_norm, shift,
                              clearance, bound):
    """``_kernels.certificate_sweep`` at a given α (xt_alpha zero on entry) over the rows it cannot leave out: row i
    is left out where α_i = 0 and bound[i] − row_norm[i]·shift, rounded down, is ≥ 1 + row_norm[i]·clearance
    (z_i = y_i·bound[i] there, bound[i] lowered so); each row read sets bound[i] = y_i z_i. Returns the nonzeros
    read."""
    read = 0
    for i in range(y.shape[0]):
        lower = bound[i] - row_norm[i] * shift
        lower -= abs(lower) * EPS  # the subtraction and this one rounded down: the bound falls at every sweep
        if alpha[i] == 0.0 and lower >= 1.0 + row_norm[i] * clearance:
            bound[i] = lower
            z[i] = y[i] * lower
        else:
            certificate_rows(indptr, indices, data, y, code, s, w, alpha, False, z, xt_alpha, i, i + 1, full_rows)
            bound[i] = y[i] * z[i]
            read += indptr[i + 1] - indptr[i]
    return read


@njit(cache=True, nogil=True)
def step_norms(w, last):
    """(‖w − last‖, ‖w‖), then last ← w: one pass over both."""
    step, size = 0.0, 0.0
    for j in range(w.shape[0]):
        diff = w[j] - last[j]
        step += diff * diff
        size += w[j] * w[j]
        last[j] = w[j]
    return math.sqrt(step), math.sqrt(size)


class MarginBounds:
    """A run's lower bounds on the margins y_i x_i·w (module docstring), kept across its checkpoints."""

    def __init__(self, problem):
        self.row_norm = np.sqrt(problem.row_norms_sq)
        self.bound = np.full(problem.n_samples, -np.inf)
        longest = int(np.max(np.diff(problem.X.indptr), initial=0))
        self.rounding = ROUNDING_FACTOR * (longest + 2) * EPS / 2
        self.slack = 1.0 + NORM_SLACK + (problem.n_features + longest + 8) * EPS / 2
        self.w = np.zeros(problem.n_features)  # the last sweep's w (its bounds are -inf until a sweep)
        self.w_norm = 0.0

    @staticmethod
    def applies(problem, n_jobs) -> bool:
        """Whether a dual run's checkpoints on ``problem`` keep bounds: under MARGIN_BOUNDS, one thread, λ > 0, a
        loss flat beyond the margin and MIN_NNZ_PER_FEATURE."""
        return (MARGIN_BOUNDS and n_jobs == 1 and problem.lam > 0 and problem.loss in L.FLAT_BEYOND_MARGIN
                and problem.nnz >= MIN_NNZ_PER_FEATURE * problem.n_features)

    def sweep(self, arrays, y, code, s, w, alpha, z, xt_alpha, full_rows) -> int:
        """``bounded_certificate_sweep`` at (w, α), the bounds moved from the last sweep's w; returns the nonzeros
        read."""
        step, size = step_norms(w, self.w)
        self.w_norm = max(self.w_norm, size)
        return bounded_certificate_sweep(*arrays, y, code, s, w, alpha, z, xt_alpha, full_rows, self.row_norm,
                                         self.slack * step, 2.0 * self.rounding * self.w_norm, self.bound)
