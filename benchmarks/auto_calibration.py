"""``method="auto"``'s cost model against measured whole calls (issue 16, item 3).

    python benchmarks/auto_calibration.py [--only NAME ...] [--repeats 3] [--save FILE] [--big]

For every shipped data set, smooth loss (logistic, squared) and λ ∈ {1/n, 0.01/n}
(the race's protocol: rows scaled by the mean norm, gap ≤ 1e-6·|P*|, one thread),
times the candidates auto chooses between — SDCA and primal CD with a random
permutation per epoch, Newton with its Cholesky and its CG inner solver — round-robin,
median of ``--repeats``, and prints beside each its predicted seconds
(``cdlab.solvers.auto.predicted_seconds``), its passes and ns per nonzero of a pass,
auto's pick and pick ÷ best measured. A run that does not certify within
``--max-passes`` passes is shown with its seconds in brackets (a lower bound).
"""
from __future__ import annotations

import argparse
import gc
import pickle
import time

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import cdlab
from cdlab.solvers import auto, newton
from race import SHIPPED, data_sets, each_problem, real, warm_up

# the race's synthetic problems, with --big: its text-like problem at 1e7 nonzeros and its dense 1e5 × 500
BIG = {name: make for name, make in data_sets(False).items() if name not in SHIPPED and "5e7" not in name}

CANDIDATES = {"sdca": ("sdca", "permutation", {}), "primal_cd": ("primal_cd", "permutation", {}),
              "newton cholesky": ("newton", "uniform", {"solver": "cholesky"}),
              "newton cg": ("newton", "uniform", {"solver": "cg"})}


def measure(problem, eps, repeats, max_passes, candidates=None):
    runs = {name: spec for name, spec in CANDIDATES.items() if (candidates is None or name in candidates)
            and not (spec[0] == "newton" and newton.features_refusal(problem, spec[2]))}
    times = {name: [] for name in runs}
    results = {}
    for _ in range(repeats):
        for name, (method, sampling, options) in runs.items():
            gc.collect()
            t0 = time.perf_counter()
            results[name] = cdlab.solve(problem, method=method, sampling=sampling, tol=eps, max_passes=max_passes,
                                        seed=0, **options)
            times[name].append(time.perf_counter() - t0)
    rows = {}
    for name, res in results.items():
        last = res.trace.iloc[-1]
        rows[name] = dict(seconds=float(np.median(times[name])), passes=float(last.passes), steps=int(last.steps),
                          checkpoints=len(res.trace),
                          converged=res.status == "converged")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--losses", nargs="*", default=["logistic", "squared"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-passes", type=int, default=1000)
    ap.add_argument("--candidates", nargs="*", choices=list(CANDIDATES), help="time only these")
    ap.add_argument("--save", help="pickle the rows here")
    ap.add_argument("--big", action="store_true", help="also the race's text-like 1e7 and dense 1e5 × 500 problems")
    args = ap.parse_args(argv)
    warm_up()
    out = []
    with threadpool_limits(1):
        makers = {name: (lambda name=name: real(name)) for name in SHIPPED}
        if args.big:
            makers.update(BIG)
        for name, loss, factor, problem, eps in each_problem(makers, args.losses, args.only):
            rows = measure(problem, eps, args.repeats, args.max_passes, args.candidates)
            predicted = auto.predicted_seconds(problem)
            pick = auto.choose(problem)
            pick_name = pick["method"] if pick["method"] != "newton" else f"newton {pick['inner_solver']}"
            done = {k: r["seconds"] for k, r in rows.items() if r["converged"]}
            best = min(done, key=done.get, default=None)
            label = f"{name} {loss} {factor:g}/n"
            print(f"\n{label}: auto picks {pick_name}; pick ÷ best measured "
                  f"{done[pick_name] / done[best] if best and pick_name in done else float('nan'):.2f}")
            for k, r in rows.items():
                s = f"{r['seconds']:.4f}" if r["converged"] else f"[{r['seconds']:.4f}]"
                ns = r["seconds"] / max(r["passes"], 1e-12) / problem.nnz * 1e9
                print(f"   {k:16s} {s:>10s} s  predicted {predicted.get(k, float('nan')):.4f} s  "
                      f"{r['passes']:8.1f} passes  {ns:6.2f} ns/nnz·pass  {r['steps']} steps  "
                      f"{r['checkpoints']} checkpoints")
                out.append(dict(problem=label, candidate=k, predicted=predicted.get(k, np.nan),
                                pick=pick_name, n=problem.n_samples, d=problem.n_features, nnz=problem.nnz,
                                **r))
    table = pd.DataFrame(out)
    if args.save:
        with open(args.save, "wb") as fh:
            pickle.dump(table, fh)
    picks = table[table.candidate == table.pick]
    ratios = []
    for label, group in table.groupby("problem", sort=False):
        done = group[group.converged]
        picked = picks[picks.problem == label]
        if len(picked) and bool(picked.converged.iloc[0]):
            ratios.append(float(picked.seconds.iloc[0]) / float(done.seconds.min()))
        else:
            ratios.append(np.inf)
    print(f"\npick ÷ best: worst {max(ratios):.2f}, geometric mean {np.exp(np.mean(np.log(ratios))):.3f}, "
          f"over {len(ratios)} problems")


if __name__ == "__main__":
    main()
