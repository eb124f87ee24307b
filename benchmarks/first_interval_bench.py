"""SDCA with shrinking's first checkpoint interval (``_shrinking.SHRUNK_FIRST_INTERVAL``, as shipped) against the
driver's AUTO_FIRST of 1 pass.

    python benchmarks/first_interval_bench.py [NAME:FACTOR ...] [--repeats 3] [--seeds 3]

Each problem of benchmarks/race.py (data scaled by the mean example norm, hinge loss, λ = FACTOR/n) is solved by
SDCA with shrinking to a certified relative gap of 1e-6 (``setting_pairs.hinge_main``): whole ``cdlab.solve``
calls in interleaved pairs in this one process, each running seeds 0 … SEEDS − 1. Printed: median milliseconds of
each, the median of the pairs' ratios (1 pass ÷ shipped: > 1, the shipped interval faster) and their range, the
passes of each, and the largest relative difference of the certified P between them.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import _shrinking
from setting_pairs import switch_main

DEFAULT = ("a9a:1", "ijcnn1:1", "mushrooms:1", "phishing:1", "w8a:1", "rcv1_small:1", "reuters_moneyfx:1",
           "rcv1_small:0.01", "madelon:1")


def main(argv=None):
    switch_main(argv, __doc__.splitlines()[0], _shrinking, "SHRUNK_FIRST_INTERVAL", 1.0, ("shipped", "1 pass"),
                DEFAULT, repeats=3, seeds=3)


if __name__ == "__main__":
    main()
