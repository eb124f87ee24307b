"""The logistic loss's e^{−|t|} by ``losses.exp_neg_abs``'s vectorised loops against numpy's exp
(``losses.NUMPY_SIMD_EXP``): whole ``cdlab.solve(method="auto")`` calls, each after ``gc.collect()`` as
benchmarks/race.py times them.

    python benchmarks/logistic_exp_bench.py [NAME:LOSS:FACTOR ...] [--repeats 7]

"loops" with NUMPY_SIMD_EXP = False, "numpy" with True; the ratio numpy ÷ loops (> 1: the loops faster). Where numpy's
exp is AVX-512 (NUMPY_SIMD_EXP true as shipped) the "loops" side is not what ships. The problems, timing and columns:
``setting_pairs.print_pairs``.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab import losses
from setting_pairs import attribute_main

DEFAULT = tuple(f"{name}:logistic:{factor}" for name in ("ijcnn1", "w8a", "a9a", "mushrooms", "reuters_moneyfx")
                for factor in ("1", "0.01"))


def main(argv=None):
    losses.NUMPY_SIMD_EXP = False
    attribute_main(argv, __doc__.splitlines()[0], losses, "NUMPY_SIMD_EXP", True, ("loops", "numpy"), DEFAULT,
                   collect=True, method="auto")


if __name__ == "__main__":
    main()
