"""The logistic loss's e^{−|t|} and log(1 + e) by the vectorised loops of ``losses.exp_neg_abs`` and
``losses.log1p_unit`` against numpy's ufuncs (``losses.NUMPY_SIMD_EXP``, ``NUMPY_SIMD_LOG1P``): whole
``cdlab.solve(method="auto")`` calls, each after ``gc.collect()`` as benchmarks/race.py times them.

    python benchmarks/logistic_exp_bench.py [NAME:LOSS:FACTOR ...] [--ufuncs exp,log1p] [--repeats 7]

"loops" with the flags of ``--ufuncs`` False, "numpy" with them True (the others as shipped); the ratio numpy ÷ loops
(> 1: the loops faster). Where numpy's ufuncs are AVX-512 (the flags true as shipped) the "loops" side is not what
ships. The problems, timing and columns: ``setting_pairs.print_pairs``.
"""
from __future__ import annotations

import argparse

import race  # noqa: F401  first: it sets numba's thread count
from cdlab import losses
from setting_pairs import print_pairs

DEFAULT = tuple(f"{name}:logistic:{factor}" for name in ("ijcnn1", "w8a", "a9a", "mushrooms", "reuters_moneyfx")
                for factor in ("1", "0.01"))
FLAGS = {"exp": "NUMPY_SIMD_EXP", "log1p": "NUMPY_SIMD_LOG1P"}


def main(argv=None):
    from threadpoolctl import threadpool_limits

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problems", nargs="*", default=list(DEFAULT), metavar="NAME:LOSS:FACTOR")
    ap.add_argument("--ufuncs", default="exp,log1p", help="which of exp, log1p the two sides set apart")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    names = [name.strip() for name in args.ufuncs.split(",")]
    if not names or any(name not in FLAGS for name in names):
        ap.error(f"--ufuncs takes a comma-separated subset of {', '.join(FLAGS)}, got {args.ufuncs!r}")

    def put(numpy_side):
        for name in names:
            setattr(losses, FLAGS[name], numpy_side)

    with threadpool_limits(1):
        print_pairs(args.problems, put, (False, True), ("loops", "numpy"), args.repeats, collect=True, method="auto")


if __name__ == "__main__":
    main()
