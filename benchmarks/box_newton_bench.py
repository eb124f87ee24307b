"""Projected Newton on a singular free face (``_box_newton``) against SDCA with shrinking left to itself there.

    python benchmarks/box_newton_bench.py [NAME:FACTOR ...] [--repeats 5] [--seeds 3]

Each problem of benchmarks/race.py (data scaled by the mean example norm, hinge loss, λ = FACTOR/n) is solved
by SDCA with shrinking (the race's hinge method) to a certified relative gap of 1e-6 (P* from
``race.certified_p_star``): whole ``cdlab.solve`` calls, certificate included, in interleaved pairs in this
one process, "newton" as shipped, "without" with ``_box_newton.BOX_NEWTON_MAX_EXAMPLES`` = 0 and
``_face_cr.GROUP_DUPLICATES`` off (a face singular as examples is not polished; with the groups on, one of few
enough groups would be polished by conjugate residuals, as the shipped side does where projected Newton declines:
``_face_cr.FACE_CR_AFTER_BOX_NEWTON``). Each timed call runs the seeds 0 … SEEDS − 1 one after the
other: a polish changes the random path that follows, so one seed's ratio is mostly that path's luck. JIT
compilation happens before the timing. Printed: median milliseconds of each call, the median of the pairs'
ratios (without ÷ newton: > 1, newton faster) and their range, the passes of each (median and range over
the runs), and the largest relative difference of the certified P between them.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import _box_newton, _face_cr
from setting_pairs import hinge_main

DEFAULT = ("heart_scale:0.01", "phishing:0.01", "a9a:0.01", "ijcnn1:0.01", "mushrooms:0.01", "madelon:0.01",
           "colon-cancer:0.01", "heart_scale:1", "phishing:1", "a9a:1")


def main(argv=None):
    def put(value):
        setattr(_box_newton, "BOX_NEWTON_MAX_EXAMPLES", value)
        setattr(_face_cr, "GROUP_DUPLICATES", value > 0)

    hinge_main(argv, __doc__.splitlines()[0], put, (_box_newton.BOX_NEWTON_MAX_EXAMPLES, 0), ("newton", "without"),
               DEFAULT, repeats=5, seeds=3)


if __name__ == "__main__":
    main()
