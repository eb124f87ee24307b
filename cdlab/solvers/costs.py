"""The cost model of what every method's whole ``cdlab.solve`` call shares: the driver's checkpoints, their
cost and their number (the methods' own costs live beside them: ``newton``, ``auto``).

Constants are ns on one thread, fitted on the shipped data sets by ``benchmarks/auto_calibration.py``
(rows scaled by their mean norm, λ = 1/n and 0.01/n, whole calls to a certified gap ≤ 1e-6·|P*|) and by
timing ``driver._checkpoint`` alone; each comment gives the range measured. They are a model, not a
promise: auto's choice only needs them to rank the candidates right.
"""
from __future__ import annotations

import math

from .budget import AUTO_CAP, AUTO_FIRST, far_interval

# The driver's checkpoint (``driver._checkpoint``): one fused row-order sweep for Xw and Xᵀα (~0.65 ns a
# nonzero: madelon 0.66, colon-cancer 0.69, up to 1.9 on w8a's short rows), per example the loss, its
# conjugate and the Fenchel–Young gap (``losses.certificate_sums``; for the logistic loss its exp and log1p
# vectorised by numpy, ``losses.logistic_tails``, and two scalar logs: 10.5–13 ns with a dual method's α on the
# nine shipped sets with n ≥ 1000 (19 on heart_scale's 270), 2.6–5.2 with a primal method's α(w), which needs
# no log; 4–8 for the squared, hinge and absolute losses; 15–19 for the smoothed hinge), and ~20 µs of Python
# (heart_scale).
CHECKPOINT_NS_PER_NNZ = 0.65
CHECKPOINT_NS_PER_EXAMPLE = {"logistic": 11.0, "squared": 5.0, "hinge": 5.0, "absolute": 7.0,
                             "smoothed_hinge": 18.0}
CHECKPOINT_OVERHEAD_NS = 2e4


def checkpoint_ns(problem) -> float:
    """Predicted ns of one of the driver's checkpoints."""
    return (CHECKPOINT_NS_PER_NNZ * problem.nnz + CHECKPOINT_NS_PER_EXAMPLE[problem.loss] * problem.n_samples
            + CHECKPOINT_OVERHEAD_NS)


def auto_cap(problem) -> float:
    """The auto cadence's longest interval on ``problem``, in passes: AUTO_CAP, or on data so small that a
    checkpoint's fixed cost (CHECKPOINT_OVERHEAD_NS) outweighs the reads of a pass (CHECKPOINT_NS_PER_NNZ a
    nonzero; below ~31 000 nonzeros), AUTO_CAP times as many passes as that cost is worth, so checkpoints stay
    about a tenth of a run. A function of the data's size only: equal seeds still give equal traces. Measured
    (heart_scale, 3380 nonzeros, cap 91; hinge, λ = 0.01/n, SDCA with shrinking to a gap of 1e-6·|P*|, whole
    calls, median of 15): 101 checkpoints and 12.7 ms with the cap at 10, 35 and 9.4 ms at 30, 17 and 9.0 ms
    at 100."""
    return max(AUTO_CAP, AUTO_CAP * CHECKPOINT_OVERHEAD_NS / (CHECKPOINT_NS_PER_NNZ * max(problem.nnz, 1)))


def due_checkpoints(passes, cap=AUTO_CAP) -> float:
    """Checkpoints of a run of ``passes`` passes that checkpoints when its estimate says the certificate is
    due (``_gap_estimate.estimate_schedules``): the start's, the one that stops the run, and one each ``cap``
    passes before it (the longest interval: ceil(passes / cap) − 1). Left out, as the near rule is in
    ``auto_checkpoints``: a checkpoint an estimate brings too early (one in some runs), and the estimates' reads
    (a sixteenth of the rows, a few per run)."""
    return 1.0 + max(1.0, math.ceil(passes / cap))


def auto_checkpoints(passes, step_passes=0.0, cap=AUTO_CAP) -> float:
    """Checkpoints of a run of ``passes`` passes under eval_every="auto": the start's, then one at the end of
    each interval of ``budget.Budget.interval``'s far rule (AUTO_FIRST pass, then AUTO_SHARE × the passes so
    far, at most ``cap``: ``auto_cap``), an interval lasting at least one step of ``step_passes`` passes (the driver
    stops only between steps). The near rule, which aims at the pass where the gap reaches tol, is left out:
    it adds a checkpoint or two near the end."""
    count, at, interval = 1.0, 0.0, AUTO_FIRST
    while at < passes:
        if interval >= cap:  # from here every interval is the same: count the rest at once
            return count + math.ceil((passes - at) / max(cap, step_passes))
        at += max(interval, step_passes)
        count += 1.0
        interval = far_interval(at, cap)
    return count
