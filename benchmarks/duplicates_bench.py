"""The polish moving the free examples of equal rows and labels as one (``_face_cr.groups``) against the polish
over each example apart.

    python benchmarks/duplicates_bench.py [NAME:FACTOR ...] [--repeats 5] [--seeds 3]

Each problem of benchmarks/race.py (data scaled by the mean example norm, hinge loss, λ = FACTOR/n) is solved
by SDCA with shrinking (the race's hinge method) to a certified relative gap of 1e-6 (P* from
``race.certified_p_star``): whole ``cdlab.solve`` calls, certificate included, in interleaved pairs in this
one process, "groups" as shipped, "apart" with ``_face_cr.GROUP_DUPLICATES`` = False (each example its own
group, as before the grouping). Each timed call runs the seeds 0 … SEEDS − 1 one after the other: a polish
changes the random path that follows, so one seed's ratio is mostly that path's luck. JIT compilation happens
before the timing. Printed: median milliseconds of each call, the median of the pairs' ratios (apart ÷ groups:
> 1, groups faster) and their range, the passes of each (median and range over the runs), and the largest
relative difference of the certified P between them.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import _face_cr
from setting_pairs import switch_main

# the race's binary data sets, whose rows repeat (w8a, a9a, phishing), and others whose polish runs
DEFAULT = ("w8a:0.01", "a9a:0.01", "phishing:0.01", "mushrooms:0.01", "ijcnn1:0.01", "heart_scale:0.01",
           "reuters_moneyfx:1", "reuters_moneyfx:0.01", "madelon:0.01", "w8a:1", "a9a:1", "phishing:1")


def main(argv=None):
    switch_main(argv, __doc__.splitlines()[0], _face_cr, "GROUP_DUPLICATES", False, ("groups", "apart"), DEFAULT,
                repeats=5, seeds=3)


if __name__ == "__main__":
    main()
