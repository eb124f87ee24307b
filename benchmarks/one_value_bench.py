"""The kernels reading only X's indices where its nonzeros share one value (``_kernels.row_arrays``) against reading
its values too: whole ``cdlab.solve(method="auto")`` calls, whose runs are the same bit for bit either way.

    python benchmarks/one_value_bench.py [NAME:LOSS:FACTOR ...] [--repeats 7]

"indices" as shipped, "values" with ``_kernels.ONE_VALUE_ROWS`` = False; the ratio values ÷ indices (> 1: reading
the indices alone faster). The race's data sets whose nonzeros share one value: a9a, w8a, mushrooms, phishing (binary
features, every row scaled by the mean example norm). The problems, timing and columns: ``setting_pairs.print_pairs``.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import _kernels
from setting_pairs import attribute_main

DEFAULT = tuple(f"{name}:{loss}:{factor}" for name in ("a9a", "w8a", "mushrooms", "phishing")
                for loss in ("hinge", "logistic", "squared") for factor in ("1", "0.01"))


def main(argv=None):
    attribute_main(argv, __doc__.splitlines()[0], _kernels, "ONE_VALUE_ROWS", False, ("indices", "values"), DEFAULT,
                   method="auto")


if __name__ == "__main__":
    main()
