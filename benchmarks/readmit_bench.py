"""SDCA with shrinking bringing back, at each checkpoint, the left-out examples whose projected gradient at the
checkpoint's margins is not 0 (``_shrinking.readmit``) against leaving them out until the set is restored.

    python benchmarks/readmit_bench.py [NAME:FACTOR ...] [--repeats 5] [--seeds 3]

Each problem of benchmarks/race.py (data scaled by the mean example norm, hinge loss, λ = FACTOR/n) is solved
by SDCA with shrinking (the race's hinge method) to a certified relative gap of 1e-6 (P* from
``race.certified_p_star``): whole ``cdlab.solve`` calls, certificate included, in interleaved pairs in this
one process, "readmit" as shipped, "wait" with ``_shrinking.READMIT`` = False. Each timed call runs the seeds
0 … SEEDS − 1 one after the other. JIT compilation happens before the timing. Printed: median milliseconds of
each call, the median of the pairs' ratios (wait ÷ readmit: > 1, readmitting faster) and their range, the
passes of each (median and range over the runs), and the largest relative difference of the certified P
between them.
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
