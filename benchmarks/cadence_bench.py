"""Whole-call seconds of ``cdlab.solve(problem, method, tol=1e-6·|P*|)`` with checkpoints every
pass (eval_every=1) against the automatic cadence (eval_every="auto", cdlab.solvers.budget).

    python benchmarks/cadence_bench.py [--repeats 5] [--only rcv1_small ...]

Data as in the race (shipped sets scaled by the mean example norm, λ = 1/n, no intercept);
both cadences run side by side in one process, alternating which goes first, after a warm-up
call of each; the table shows the median seconds of each, the spread (max − min) / median,
the checkpoints and the passes at the stop, and the ratio of the medians (every pass ÷ auto).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd

import cdlab
from _peers import real

DATA = ("rcv1_small", "a9a", "colon-cancer")
LOSSES = ("logistic", "hinge", "squared")
METHODS = ("sdca", "primal_cd", "dual_cd", "saga")
CADENCES = (1.0, "auto")
GAP_REL = 1e-6
MAX_PASSES = 300


def timed(problem, method, tol, eval_every):
    t0 = time.perf_counter()
    res = cdlab.solve(problem, method, tol=tol, max_passes=MAX_PASSES, eval_every=eval_every, seed=0)
    return time.perf_counter() - t0, res


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=DATA)
    args = parser.parse_args()
    rows = []
    for name in args.only:
        X, y = real(name)
        for loss in LOSSES:
            problem = cdlab.Problem(X, y, loss=loss, lam=1.0 / X.shape[0])
            tol = GAP_REL * abs(cdlab.reference_optimum(problem, tol=1e-9))
            for method in METHODS:
                try:
                    warm = {ev: timed(problem, method, tol, ev)[1] for ev in CADENCES}
                except ValueError as exc:  # a method that refuses this loss (e.g. needs a smooth one)
                    print(f"{name} {loss} {method}: {exc}", flush=True)
                    continue
                if not all(r.converged for r in warm.values()):
                    print(f"{name} {loss} {method}: not certified within {MAX_PASSES} passes, skipped", flush=True)
                    continue
                seconds = {ev: [] for ev in CADENCES}
                for k in range(args.repeats):
                    for ev in (CADENCES if k % 2 == 0 else CADENCES[::-1]):
                        seconds[ev].append(timed(problem, method, tol, ev)[0])
                row = dict(data=name, loss=loss, method=method)
                for ev in CADENCES:
                    s = np.array(seconds[ev])
                    row[f"s[{ev}]"] = np.median(s)
                    row[f"spread[{ev}]"] = (s.max() - s.min()) / np.median(s)
                    row[f"ckpts[{ev}]"] = len(warm[ev].trace)
                    row[f"passes[{ev}]"] = warm[ev].trace.passes.iloc[-1]
                row["every pass / auto"] = row["s[1.0]"] / row["s[auto]"]
                rows.append(row)
                print(pd.DataFrame([row]).to_string(index=False, header=len(rows) == 1, float_format="%.3g"),
                      flush=True)
    table = pd.DataFrame(rows)
    print(f"\nload average {os.getloadavg()}; geometric mean of (every pass / auto): "
          f"{np.exp(np.log(table['every pass / auto']).mean()):.3f}")


if __name__ == "__main__":
    main()
