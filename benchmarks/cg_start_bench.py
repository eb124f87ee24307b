"""The squared loss's CG with its start checkpoint's sums taken from the sweep that starts CG
(``newton.CG_START_FUSED``, as shipped), against the driver's own certificate sweep there.

    python benchmarks/cg_start_bench.py [NAME:LOSS:FACTOR ...] [--repeats 7]

The protocol and the printed line are benchmarks/cholesky_start_bench.py's (``setting_pairs.attribute_main``), with
``newton``'s solver="cg": sweep ÷ fused > 1, the fused start faster.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import newton
from setting_pairs import attribute_main

# the race's squared-loss problems whose CG runs on the normal equations (not the dual system: d < 2n)
DEFAULT = ("dense 1e5×500:squared:1", "dense 1e5×500:squared:0.01", "text 1e7 nnz:squared:0.01",
           "reuters_moneyfx:squared:1")
LABELS = ("fused", "sweep")


def main(argv=None):
    attribute_main(argv, __doc__.splitlines()[0], newton, "CG_START_FUSED", False, LABELS, DEFAULT,
                   method="newton", solver="cg")


if __name__ == "__main__":
    main()
