"""SDCA on the logistic loss with each coordinate's logit kept by its steps (``dual_cd.logit_cache``, as shipped)
against the step computing log(b/(1 − b)) each time (the code before).

    python benchmarks/logit_cache_bench.py [NAME:LOSS:FACTOR ...] [--repeats 7]

Each problem of benchmarks/race.py (rows scaled by the mean example norm, λ = FACTOR/n) is solved by SDCA with a
random permutation to a certified relative gap of 1e-6 (P* from ``race.certified_p_star``): whole ``cdlab.solve``
calls, certificate included, in interleaved pairs in this one process, "cached" as shipped and "log" with
``dual_cd.logit_cache`` returning no cache. JIT compilation happens before the timing. Printed: median
milliseconds of each, the median of the pairs' ratios (log ÷ cached: > 1, the cache faster) and their range, the
passes of each, and the largest relative difference of the certified P between them.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import dual_cd
from setting_pairs import attribute_main

DEFAULT = ("mushrooms:logistic:1", "phishing:logistic:1", "reuters_moneyfx:logistic:1", "a9a:logistic:1",
           "rcv1_small:logistic:0.01")


def no_cache(problem, rule, n_jobs):
    return dual_cd.NO_LOGIT


def main(argv=None):
    attribute_main(argv, __doc__.splitlines()[0], dual_cd, "logit_cache", no_cache, ("cached", "log"), DEFAULT,
                   method="sdca", sampling="permutation")


if __name__ == "__main__":
    main()
