"""Newton's XΔ on its Cholesky path by the kernels' ``row_margins`` (``NewtonState._along``: X as the kernels read
it, the one value of one-value rows, full rows as dense ones) against scipy's CSR product: whole
``cdlab.solve(method="auto")`` calls, the same runs bit for bit on sparse rows.

    python benchmarks/newton_along_bench.py [NAME:LOSS:FACTOR ...] [--repeats 7]

"kernel" as shipped, "scipy" with ``_along`` = X @ Δ; the ratio scipy ÷ kernel (> 1: the kernel faster). Each call
after ``gc.collect()``, as benchmarks/race.py times them. The problems, timing and columns:
``setting_pairs.print_pairs``.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import newton
from setting_pairs import attribute_main

DEFAULT = tuple(f"{name}:logistic:{factor}" for name in ("mushrooms", "a9a", "phishing", "ijcnn1", "w8a", "madelon")
                for factor in ("1", "0.01"))


def main(argv=None):
    attribute_main(argv, __doc__.splitlines()[0], newton.NewtonState, "_along", lambda state, step: state.p.X @ step,
                   ("kernel", "scipy"), DEFAULT, collect=True, method="auto")


if __name__ == "__main__":
    main()
