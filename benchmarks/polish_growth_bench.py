"""The polish budget growing after a polish that left the gap higher (``_face_cr.POLISH_GROWTH``) against a fixed one.

    python benchmarks/polish_growth_bench.py [NAME:FACTOR ...] [--repeats 3] [--seeds 8]

Each problem of benchmarks/race.py (data scaled by the mean example norm, hinge loss, λ = FACTOR/n) is solved
by SDCA with shrinking (the race's hinge method) to a certified relative gap of 1e-6 (P* from
``race.certified_p_star``): whole ``cdlab.solve`` calls, certificate included, in interleaved pairs in this
one process, "growing" as shipped, "fixed" with ``_face_cr.POLISH_GROWTH`` = 1 (every polish's budget
POLISH_SHARE× its interval's reads). Each timed call runs the seeds 0 … SEEDS − 1 one after the other: a
polish changes the random path that follows, and the rule is about the slow paths (heart_scale 0.01/n: 381
to 730 passes over seeds 0-11 with a fixed budget). JIT compilation happens before the timing. Printed: median
milliseconds of each call, the median of the pairs' ratios (fixed ÷ growing: > 1, growing faster) and their
range, the passes of each (median and range over the runs), and the largest relative difference of the
certified P between them.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import _face_cr
from setting_pairs import hinge_main

DEFAULT = ("reuters_moneyfx:1", "reuters_moneyfx:0.01", "madelon:0.01", "heart_scale:0.01", "rcv1_small:0.01",
           "phishing:0.01", "a9a:0.01")


def main(argv=None):
    put = lambda value: setattr(_face_cr, "POLISH_GROWTH", value)  # noqa: E731
    hinge_main(argv, __doc__.splitlines()[0], put, (_face_cr.POLISH_GROWTH, 1.0), ("growing", "fixed"), DEFAULT,
               repeats=3, seeds=8)


if __name__ == "__main__":
    main()
