"""SDCA's first pass prefetching whole rows (``_kernels.COLD_PASS_WHOLE``) against their first lines, as every later
pass: whole ``cdlab.solve`` calls, each after ``gc.collect()`` as benchmarks/race.py times them (``--warm``: without).

    python benchmarks/cold_pass_bench.py [NAME:LOSS:FACTOR ...] [--repeats 9] [--warm]

"whole" as shipped, "lines" with COLD_PASS_WHOLE = False; the ratio lines ÷ whole (> 1: the whole rows faster).
SDCA with a random permutation (the race's method for the logistic loss at λ = 1/n on these data; its runs are the
same bit for bit either way: prefetches change no value). The problems, timing and columns:
``setting_pairs.print_pairs``.
"""
from __future__ import annotations

import sys

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import _kernels
from setting_pairs import attribute_main

DEFAULT = tuple(f"{name}:logistic:{factor}" for name in ("reuters_moneyfx", "mushrooms", "phishing", "rcv1_small",
                                                         "a9a", "colon-cancer") for factor in ("1", "0.01"))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    warm = "--warm" in argv
    argv = [a for a in argv if a != "--warm"]
    attribute_main(argv, __doc__.splitlines()[0], _kernels, "COLD_PASS_WHOLE", False, ("whole", "lines"), DEFAULT,
                   repeats=9, collect=not warm, method="sdca", sampling="permutation")


if __name__ == "__main__":
    main()
