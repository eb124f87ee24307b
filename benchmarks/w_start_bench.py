"""SDCA on the logistic loss with the step's Lambert-W start beyond the shipped thresholds (``losses.W_START_Q`` at
b = 0, ``W_START_Q_INSIDE`` at 0 < b < 1) against the step before: 8 at b = 0, and inside (0, 1) W wherever its
point lay right of logit b.

    python benchmarks/w_start_bench.py [NAME:LOSS:FACTOR ...] [--repeats 7]

Each problem of benchmarks/race.py (rows scaled by the mean example norm, λ = FACTOR/n) is solved by SDCA with a
random permutation to a certified relative gap of 1e-6 (P* from ``race.certified_p_star``): whole ``cdlab.solve``
calls, certificate included, in interleaved pairs in this one process, "shipped" and "before" with ``dual_cd_chunk``
compiled again from its source with the step's solver (``losses._logistic_root_left``, inlined as shipped) under
the old thresholds. JIT compilation happens before the timing. Printed: median milliseconds of each, the median of
the pairs' ratios (before ÷ shipped: > 1, the shipped thresholds faster) and their range, the passes of each, and the
largest relative difference of the certified P between them.
"""
from __future__ import annotations

import types

import race  # noqa: F401  first: it sets numba's thread count
from numba import njit

from cdlab import losses as L
from cdlab.solvers import dual_cd
from setting_pairs import attribute_main

DEFAULT = ("mushrooms:logistic:1", "phishing:logistic:1", "reuters_moneyfx:logistic:1", "a9a:logistic:1",
           "rcv1_small:logistic:0.01", "mushrooms:logistic:0.01", "reuters_moneyfx:logistic:0.01")
OLD = {"W_START_Q": 8.0, "W_START_Q_INSIDE": 0.0}


def _again(f, inline, **names):
    """``f`` (a numba function) compiled again from its source with ``names`` in its globals."""
    py = f.py_func
    return njit(nogil=True, inline=inline)(types.FunctionType(py.__code__, dict(py.__globals__, **names),
                                                              py.__name__, py.__defaults__, py.__closure__))


def old_chunk():
    """``dual_cd.dual_cd_chunk`` whose logistic steps start as under OLD."""
    root = _again(L._logistic_root_left, "always", **OLD)
    step_at = _again(L.logistic_step_at, "always", _logistic_root_left=root)
    step = _again(L._logistic_step, "always", logistic_step_at=step_at)
    dual_step = _again(L.dual_step, "always", _logistic_step=step)
    losses = types.ModuleType("losses_before")
    losses.__dict__.update({k: v for k, v in vars(L).items() if not k.startswith("__")})
    losses.logistic_step_at, losses.dual_step = step_at, dual_step
    return _again(dual_cd.dual_cd_chunk, "never", L=losses)


def main(argv=None):
    attribute_main(argv, __doc__.splitlines()[0], dual_cd, "dual_cd_chunk", old_chunk(), ("shipped", "before"), DEFAULT,
                   method="sdca", sampling="permutation")


if __name__ == "__main__":
    main()
