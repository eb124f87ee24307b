"""Whole-call seconds of SDCA (sampling="permutation", eval_every="auto", tol = 1e-6·|P*|) with its checkpoints
scheduled by the sampled gap estimate (cdlab.solvers._gap_estimate) against the geometric cadence it replaces
(the estimate switched off), and against an oracle: one checkpoint, at the pass the geometric run of the same
seed stopped at (eval_every = those passes), the least any schedule could pay.

    python benchmarks/gap_estimate_bench.py [--repeats 15] [--only rcv1_small:logistic:1 madelon:hinge:1:shrinking ...]

(a case's fourth field ``shrinking`` runs SDCA with shrinking).

Data as in the race (shipped sets scaled by the mean example norm, no intercept). For each problem, after a
warm-up call of each, seeds 0, 1, … run the three side by side in one process, in turn; the table shows the
median seconds, the spread (max − min) / median, the median checkpoints and passes at the stop, and the ratios
of the medians (geometric ÷ estimate, geometric ÷ oracle). Every run must be certified (status converged).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import cdlab
from cdlab.solvers import dual_cd
from _peers import real

# name:loss:λ·n; the race's problems whose best fixed method is SDCA without shrinking, and a few more
CASES = ("rcv1_small:logistic:1", "rcv1_small:logistic:0.01", "rcv1_small:squared:1", "reuters_moneyfx:logistic:1",
         "reuters_moneyfx:squared:1", "phishing:logistic:1", "a9a:logistic:1", "madelon:hinge:1",
         "colon-cancer:logistic:1", "heart_scale:logistic:1")  # heart_scale: a control, too small to be scheduled
GAP_REL = 1e-6
MAX_PASSES = 3000
VARIANTS = ("geometric", "estimate", "oracle")
SCHEDULES = dual_cd.estimate_schedules  # the geometric and oracle runs replace it by "never"


def run(problem, tol, seed, variant, oracle_passes, options):
    """(seconds, result) of one whole call of the variant."""
    dual_cd.estimate_schedules = SCHEDULES if variant == "estimate" else (lambda problem: False)
    extra = {"eval_every": oracle_passes} if variant == "oracle" else {}
    extra.update(options)
    try:
        t0 = time.perf_counter()
        res = cdlab.solve(problem, "sdca", sampling="permutation", tol=tol, max_passes=MAX_PASSES, seed=seed,
                          **extra)
        seconds = time.perf_counter() - t0
    finally:
        dual_cd.estimate_schedules = SCHEDULES
    if res.status != "converged":
        raise RuntimeError(f"{variant} run not certified: {res.status}")
    return seconds, res



def case_row(case, repeats):
    name, loss, factor, *flags = case.split(":")
    options = {"shrinking": True} if "shrinking" in flags else {}
    X, y = real(name)
    problem = cdlab.Problem(X, y, loss=loss, lam=float(factor) / X.shape[0])
    tol = GAP_REL * abs(cdlab.reference_optimum(problem, tol=1e-9))
    stops = [run(problem, tol, seed, "geometric", None, options)[1].trace.passes.iloc[-1] for seed in range(repeats)]
    for variant in VARIANTS:  # warm-up
        run(problem, tol, 0, variant, stops[0], options)
    seconds = {v: [] for v in VARIANTS}
    rows = {v: [] for v in VARIANTS}
    passes = {v: [] for v in VARIANTS}
    for seed in range(repeats):
        order = VARIANTS if seed % 2 == 0 else VARIANTS[::-1]
        for variant in order:
            s, res = run(problem, tol, seed, variant, stops[seed], options)
            seconds[variant].append(s)
            rows[variant].append(len(res.trace))
            passes[variant].append(res.trace.passes.iloc[-1])
    out = {"problem": f"{name} {loss} λ={factor}/n" + (" shrinking" if options else "")}
    for v in VARIANTS:
        med = float(np.median(seconds[v]))
        out[f"{v} ms"] = 1e3 * med
        out[f"{v} spread"] = (max(seconds[v]) - min(seconds[v])) / med
        out[f"{v} checkpoints"] = float(np.median(rows[v]))
        out[f"{v} passes"] = float(np.median(passes[v]))
    out["geometric ÷ estimate"] = out["geometric ms"] / out["estimate ms"]
    out["geometric ÷ oracle"] = out["geometric ms"] / out["oracle ms"]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--only", nargs="*", default=CASES)
    args = parser.parse_args()
    frame = pd.DataFrame([case_row(case, args.repeats) for case in args.only])
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(frame.to_string(index=False, float_format=lambda x: f"{x:.3g}"))
    ratios = frame["geometric ÷ estimate"]
    print(f"geometric ÷ estimate: geometric mean {np.exp(np.log(ratios).mean()):.3f}, "
          f"min {ratios.min():.3f}, max {ratios.max():.3f}")


if __name__ == "__main__":
    main()
