"""What a whole ``cdlab.solve`` call costs beyond its solver seconds, on the race's small problems.

A user waits for the whole call: argument checks, the state's construction, the steps, the checkpoints'
certificates and the trace's DataFrame. On a problem that certifies in a few milliseconds the parts that are
not steps or certificates are a large share. This script times whole calls as benchmarks/race.py does
(``gc.collect()`` before each, so the previous call's garbage is not collected inside the timing, and the
caches are as cold as the race's; BLAS on one thread), and splits each into the driver's parts by wrapping them:

    prepare   driver.prepare: the arguments' checks, the budget, the seeded generator
    make      the method's state (its sampler, buffers, inner-solver choice)
    steps     the trace's solver seconds (its ``time`` column: the timed chunks; a state whose own sweep gives
              the certificate's sums, Newton–CG's and the Cholesky path's start, counts that sweep here and in
              certify, and its "rest" is short by as much: ijcnn1 squared's start forms the first H)
    certify   the checkpoints (``_Trace.evaluate``: P, D and the gap)
    frame     the trace's DataFrame
    rest      the whole call less the parts above (the loop's bookkeeping, the Result)

The wrapped calls run after the plain ones; "whole" is the plain calls' median. Compare two checkouts by
running this script under each (``PYTHONPATH=checkout``), alternating, on an otherwise idle machine.

    python benchmarks/call_overhead.py [--calls 60] [--only heart_scale rcv1_small]
"""
from __future__ import annotations

import argparse
import gc
import time

import numpy as np
from threadpoolctl import threadpool_limits

import cdlab
from cdlab.solvers import base, driver

from _peers import real

# (data set, loss, λ·n, method, options): the race's fastest fixed cdlab method on problems that certify in
# 1-20 ms (benchmarks/results/race, one thread)
CASES = [
    ("heart_scale", "squared", 1.0, "newton", {}),
    ("colon-cancer", "logistic", 1.0, "sdca", {"sampling": "permutation"}),
    ("rcv1_small", "logistic", 1.0, "sdca", {"sampling": "permutation"}),
    ("rcv1_small", "hinge", 1.0, "sdca", {"sampling": "permutation", "shrinking": True}),
    ("madelon", "squared", 1.0, "newton", {}),
    ("madelon", "hinge", 1.0, "sdca", {"sampling": "permutation"}),
    ("ijcnn1", "squared", 1.0, "newton", {}),
    ("reuters_moneyfx", "squared", 1.0, "sdca", {"sampling": "permutation"}),
]
PARTS = ("prepare", "make", "steps", "certify", "frame", "rest")


class Parts:
    """Seconds spent in the driver's parts during one call (wrapping them for the block's duration)."""

    def __enter__(self):
        self.seconds, self.saved = {}, []
        self._wrap(driver, "prepare", "prepare")
        self._wrap(driver._Trace, "evaluate", "certify")
        self._wrap(driver._Trace, "frame", "frame")
        for spec in base.METHODS.values():
            self._wrap(spec, "make", "make", frozen=True)
        return self

    def _wrap(self, owner, attr, key, frozen=False):
        inner = getattr(owner, attr)
        seconds = self.seconds

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                seconds[key] = seconds.get(key, 0.0) + time.perf_counter() - t0

        self.saved.append((owner, attr, inner, frozen))
        (object.__setattr__ if frozen else setattr)(owner, attr, timed)

    def __exit__(self, *exc):
        for owner, attr, inner, frozen in reversed(self.saved):
            (object.__setattr__ if frozen else setattr)(owner, attr, inner)
        return False


def case(name, loss, factor, method, options, calls):
    """The plain calls' median whole seconds and the wrapped calls' median parts, in µs."""
    X, y = real(name)
    problem = cdlab.Problem(X, y, loss=loss, lam=factor / X.shape[0])
    p_star = cdlab.reference_optimum(problem, tol=1e-10)
    kwargs = dict(method=method, tol=1e-6 * abs(p_star), max_passes=3000, **options)
    for _ in range(3):  # numba's compiled code loaded, the caches the state builds filled
        cdlab.solve(problem, **kwargs)
    whole = []
    for _ in range(calls):
        gc.collect()
        t0 = time.perf_counter()
        result = cdlab.solve(problem, **kwargs)
        whole.append(time.perf_counter() - t0)
        assert result.converged, (name, loss, result.status)
    parts = []
    for _ in range(calls):
        gc.collect()
        with Parts() as measured:
            t0 = time.perf_counter()
            result = cdlab.solve(problem, **kwargs)
            total = time.perf_counter() - t0
        row = dict(measured.seconds, steps=float(result.trace["time"].iloc[-1]))
        row["rest"] = total - sum(row.get(k, 0.0) for k in PARTS if k != "rest")
        parts.append(row)
    out = {"whole": np.median(whole) * 1e6, "spread": (np.percentile(whole, 90) - np.percentile(whole, 10)) * 1e6}
    out.update({k: np.median([row.get(k, 0.0) for row in parts]) * 1e6 for k in PARTS})
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--only", nargs="*", default=None, help="data set names")
    args = parser.parse_args(argv)
    with threadpool_limits(limits=1):
        run(args)


def run(args):
    print(f"cdlab {cdlab.__file__}; whole: median µs of {args.calls} gc-cold calls (10-90 % spread); "
          f"parts: medians of as many wrapped calls")
    print(f"{'problem':34s} {'whole':>7s} {'spread':>7s} " + " ".join(f"{k:>7s}" for k in PARTS))
    for name, loss, factor, method, options in CASES:
        if args.only and name not in args.only:
            continue
        row = case(name, loss, factor, method, options, args.calls)
        label = f"{name} {loss} {factor:g}/n {method}"
        print(f"{label:34s} {row['whole']:7.0f} {row['spread']:7.0f} " + " ".join(f"{row[k]:7.0f}" for k in PARTS),
              flush=True)


if __name__ == "__main__":
    main()
