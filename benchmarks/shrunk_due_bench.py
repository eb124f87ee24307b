"""SDCA with shrinking, certified right after any epoch whose Σ|PG| is at most n·tol, shrunk or full
(``_shrinking.DUE_SHRUNK``, as shipped), against certifying after a full epoch alone.

    python benchmarks/shrunk_due_bench.py [NAME:FACTOR ...] [--repeats 3] [--seeds 3]

"shrunk" as shipped, "full" with ``_shrinking.DUE_SHRUNK`` = False; the ratio full ÷ shrunk (> 1: shrunk epochs'
certificates faster). The problems, timing and columns: ``setting_pairs.hinge_main``.
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
