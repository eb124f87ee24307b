"""SDCA with shrinking bringing back, at each checkpoint, the left-out examples whose projected gradient at the
checkpoint's margins is not 0 (``_shrinking.readmit``) against leaving them out until the set is restored.

    python benchmarks/readmit_bench.py [NAME:FACTOR ...] [--repeats 5] [--seeds 3]

"readmit" as shipped, "wait" with ``_shrinking.READMIT`` = False; the ratio wait ÷ readmit (> 1: readmitting
faster). The problems, timing and columns: ``setting_pairs.hinge_main``.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import _shrinking
from setting_pairs import switch_main

# every data set of the race at both λ
DEFAULT = tuple(f"{name}:{factor}" for name in ("a9a", "w8a", "ijcnn1", "mushrooms", "phishing", "heart_scale",
                                                "reuters_moneyfx", "rcv1_small", "colon-cancer", "madelon")
                for factor in ("1", "0.01"))


def main(argv=None):
    switch_main(argv, __doc__.splitlines()[0], _shrinking, "READMIT", False, ("readmit", "wait"), DEFAULT,
                repeats=5, seeds=3)


if __name__ == "__main__":
    main()
