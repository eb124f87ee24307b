"""The polish of a small active set that projected Newton declines (its dense work over the budget, or its rows'
columns above BOX_NEWTON_MAX_COLUMNS) going on to conjugate residuals on the free face's groups
(``_face_cr.FACE_CR_AFTER_BOX_NEWTON``, as shipped), against no polish there.

    python benchmarks/face_cr_fallback_bench.py [NAME:FACTOR ...] [--repeats 3] [--seeds 3]

Each problem of benchmarks/race.py (data scaled by the mean example norm, hinge loss, λ = FACTOR/n) is solved
by SDCA with shrinking (the race's hinge method) to a certified relative gap of 1e-6 (P* from
``race.certified_p_star``): whole ``cdlab.solve`` calls, certificate included, in interleaved pairs in this
one process, "fallback" as shipped, "none" with ``_face_cr.FACE_CR_AFTER_BOX_NEWTON`` = False. Each timed call
runs the seeds 0 … SEEDS − 1 one after the other. JIT compilation happens before the timing. Printed: median
milliseconds of each call, the median of the pairs' ratios (none ÷ fallback: > 1, the fallback faster) and their
range, the passes of each (median and range over the runs), and the largest relative difference of the
certified P between them.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import _face_cr
from readmit_bench import DEFAULT
from setting_pairs import switch_main


def main(argv=None):
    switch_main(argv, __doc__.splitlines()[0], _face_cr, "FACE_CR_AFTER_BOX_NEWTON", False, ("fallback", "none"),
                DEFAULT, repeats=3, seeds=3)


if __name__ == "__main__":
    main()
