"""SDCA with shrinking (hinge) reading only X's indices where its nonzeros share one value (``_kernels.one_value``)
against reading its values too.

    python benchmarks/one_value_bench.py [NAME:FACTOR ...] [--repeats 5] [--seeds 3]

"indices" as shipped, "values" with ``_kernels.ONE_VALUE_ROWS`` = False; the ratio values ÷ indices (> 1: reading
the indices alone faster). The race's data sets whose nonzeros share one value: a9a, w8a, mushrooms, phishing (binary
features, every row scaled by the mean example norm). The problems, timing and columns: ``setting_pairs.hinge_main``.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import _kernels
from setting_pairs import switch_main

DEFAULT = tuple(f"{name}:{factor}" for name in ("a9a", "w8a", "mushrooms", "phishing") for factor in ("1", "0.01"))


def main(argv=None):
    switch_main(argv, __doc__.splitlines()[0], _kernels, "ONE_VALUE_ROWS", False, ("indices", "values"), DEFAULT,
                repeats=5, seeds=3)


if __name__ == "__main__":
    main()
