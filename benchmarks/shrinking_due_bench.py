"""SDCA with shrinking, certified right after an epoch whose Σ|PG| is at most n·tol, full or shrunk
(``_shrinking.DUE_SHARE``, as shipped), against the geometric cadence's checkpoints alone.

    python benchmarks/shrinking_due_bench.py [NAME:FACTOR ...] [--repeats 3] [--seeds 5]

Each problem of benchmarks/race.py (data scaled by the mean example norm, hinge loss, λ = FACTOR/n) is solved
by SDCA with shrinking (the race's hinge method) to a certified relative gap of 1e-6 (P* from
``race.certified_p_star``): whole ``cdlab.solve`` calls, certificate included, in interleaved pairs in this
one process, "due" as shipped, "cadence" with ``_shrinking.DUE_SHARE`` = ``NEVER_DUE`` (no epoch is ever due).
Each timed call runs the seeds 0 … SEEDS − 1 one after the other. JIT compilation happens before the timing.
Printed: median milliseconds of each call, the median of the pairs' ratios (cadence ÷ due: > 1, due faster)
and their range, the passes of each (median and range over the runs), and the largest relative difference of
the certified P between them.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import _shrinking
from setting_pairs import switch_main

DEFAULT = ("madelon:1", "ijcnn1:1", "w8a:1", "a9a:1", "phishing:1", "mushrooms:1", "reuters_moneyfx:1",
           "rcv1_small:1", "heart_scale:0.01", "reuters_moneyfx:0.01", "madelon:0.01")


def main(argv=None):
    switch_main(argv, __doc__.splitlines()[0], _shrinking, "DUE_SHARE", _shrinking.NEVER_DUE, ("due", "cadence"),
                DEFAULT, repeats=3, seeds=5)


if __name__ == "__main__":
    main()
