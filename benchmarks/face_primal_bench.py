"""The face primal at a dual method's checkpoints (``_face_primal``) against w(α) alone.

    python benchmarks/face_primal_bench.py [NAME:FACTOR ...] [--repeats 3] [--seeds 5]

Each problem of benchmarks/race.py (data scaled by the mean example norm, hinge loss, λ = FACTOR/n) is solved
by SDCA with shrinking (the race's hinge method) to a certified relative gap of 1e-6 (P* from
``race.certified_p_star``): whole ``cdlab.solve`` calls, certificate included, in interleaved pairs in this
one process, "face" as shipped, "w(α)" with ``dual_cd.FACE_PRIMAL_REACH`` = −1 (no dual is ever close enough to
try the face primal). Each timed call runs the seeds 0 … SEEDS − 1 one after the other: the face primal's reads
move the checkpoints, and one seed's ratio is mostly its path's luck. JIT compilation happens before the timing.
Printed: median milliseconds of each call, the median of the pairs' ratios (w(α) ÷ face: > 1, the face primal
faster) and their range, the passes of each (median and range over the runs; the face primal's reads counted),
and the largest relative difference of the certified P between them.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import dual_cd
from setting_pairs import hinge_main

DEFAULT = ("mushrooms:1", "mushrooms:0.01", "colon-cancer:0.01", "heart_scale:1", "heart_scale:0.01", "phishing:1",
           "a9a:1", "w8a:1", "ijcnn1:1", "madelon:0.01", "rcv1_small:1", "reuters_moneyfx:1")


def main(argv=None):
    hinge_main(argv, __doc__.splitlines()[0], lambda value: setattr(dual_cd, "FACE_PRIMAL_REACH", value),
               (dual_cd.FACE_PRIMAL_REACH, -1.0), ("face", "w(α)"), DEFAULT, repeats=3, seeds=5)


if __name__ == "__main__":
    main()
