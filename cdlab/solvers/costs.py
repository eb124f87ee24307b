"""The cost model of a whole ``cdlab.solve`` call's parts that every method shares: the driver's
checkpoints, and the first-order passes ``method="auto"`` weighs against Newton.

Constants are ns on one thread, fitted on the shipped data sets by ``benchmarks/auto_calibration.py``
(rows scaled by their mean norm, λ = 1/n and 0.01/n, whole calls to a certified gap ≤ 1e-6·|P*|) and by
timing ``driver._checkpoint`` alone; each comment gives the range measured. They are a model, not a
promise: auto's choice only needs them to rank the candidates right.
"""
from __future__ import annotations

import math

from .budget import AUTO_CAP, AUTO_FIRST

# The driver's checkpoint (``driver._checkpoint``): one fused row-order sweep for Xw and Xᵀα (~0.65 ns a
# nonzero: madelon 0.66, colon-cancer 0.69, up to 1.9 on w8a's short rows), per example the loss, its
# conjugate and the Fenchel–Young gap (logs and exps for the logistic loss: 56–94 ns; 4–8 for the squared,
# hinge and absolute losses; 15–19 for the smoothed hinge), and ~20 µs of Python (heart_scale).
CHECKPOINT_NS_PER_NNZ = 0.65
CHECKPOINT_NS_PER_EXAMPLE = {"logistic": 70.0, "squared": 5.0, "hinge": 5.0, "absolute": 7.0,
                             "smoothed_hinge": 18.0}
CHECKPOINT_OVERHEAD_NS = 2e4


def checkpoint_ns(problem) -> float:
    """Predicted ns of one of the driver's checkpoints."""
    return (CHECKPOINT_NS_PER_NNZ * problem.nnz + CHECKPOINT_NS_PER_EXAMPLE[problem.loss] * problem.n_samples
            + CHECKPOINT_OVERHEAD_NS)


def auto_checkpoints(passes) -> float:
    """Checkpoints of a run of ``passes`` passes under eval_every="auto" (``budget``): one at the start, then
    intervals doubling from AUTO_FIRST pass up to AUTO_CAP passes, then one every AUTO_CAP passes."""
    doubling = math.log2(AUTO_CAP / AUTO_FIRST) + 1.0
    return 1.0 + min(doubling, math.log2(max(passes, 1.0) / AUTO_FIRST) + 2.0) + max(0.0, passes - AUTO_CAP) / AUTO_CAP
