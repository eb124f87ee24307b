"""SDCA with shrinking, certified right after any epoch whose Σ|PG| is at most n·tol, shrunk or full
(``_shrinking.DUE_SHRUNK``, as shipped), against certifying after a full epoch alone.

    python benchmarks/shrunk_due_bench.py [NAME:FACTOR ...] [--repeats 3] [--seeds 3]

Each problem of benchmarks/race.py (data scaled by the mean example norm, hinge loss, λ = FACTOR/n) is solved
by SDCA with shrinking (the race's hinge method) to a certified relative gap of 1e-6 (P* from
``race.certified_p_star``): whole ``cdlab.solve`` calls, certificate included, in interleaved pairs in this
one process, "shrunk" as shipped, "full" with ``_shrinking.DUE_SHRUNK`` = False. Each timed call runs the seeds
0 … SEEDS − 1 one after the other. JIT compilation happens before the timing. Printed: median milliseconds of
each call, the median of the pairs' ratios (full ÷ shrunk: > 1, shrunk epochs' certificates faster) and their
range, the passes of each (median and range over the runs), and the largest relative difference of the
certified P between them.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import _shrinking
from readmit_bench import DEFAULT
from setting_pairs import switch_main


def main(argv=None):
    switch_main(argv, __doc__.splitlines()[0], _shrinking, "DUE_SHRUNK", False, ("shrunk", "full"), DEFAULT,
                repeats=3, seeds=3)


if __name__ == "__main__":
    main()
