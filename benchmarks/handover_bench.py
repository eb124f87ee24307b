"""Newton's squared-loss hand-over from CG to Cholesky (``newton.NewtonState._hands_over``), side by side with
each inner solver alone: whole ``cdlab.solve`` calls to a certified relative gap of 1e-6 (``race.GAP_REL``),
solver="auto" (CG, handing over where its rule says so), "cg" and "cholesky", timed in rotation.

    python benchmarks/handover_bench.py [--repeats R]

Per problem: the products a CG-alone run takes and the hand-over cap (``newton.cg_handover``: a Cholesky
iteration's predicted ns in products), the median ms of each call and auto ÷ the faster of the two alone (its
range over the repeats). The problems: madelon (its CG residual rises and falls before a steep descent), a rank-20
matrix plus noise (a clustered spectrum: the residual oscillates all the way), and dense Gaussian rows whose
column scales span √cond, rotated so that no diagonal preconditioner undoes them (CG slow where cond is large).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import cdlab
from cdlab.solvers import newton

sys.path.insert(0, str(Path(__file__).resolve().parent))
from race import GAP_REL, certified_p_star, data_sets, make_problem  # noqa: E402


def rotated_rows(cond, lam_factor, n=4000, d=300, seed=1):
    """Dense Gaussian rows, column scales spanning √cond, rotated; rows scaled by their mean norm."""
    rng = np.random.default_rng(seed)
    rotation, _ = np.linalg.qr(rng.standard_normal((d, d)))
    X = rng.standard_normal((n, d)) * np.logspace(0, -np.log10(cond) / 2, d) @ rotation.T
    X /= np.sqrt((X ** 2).sum(axis=1).mean())
    return cdlab.Problem(X, X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n), loss="squared",
                         lam=lam_factor / n)


def low_rank_rows(lam_factor, n=5000, d=500, rank=20, seed=5):
    """A rank-``rank`` matrix plus Gaussian noise of 0.05; rows scaled by their mean norm."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, rank)) @ rng.standard_normal((rank, d)) + 0.05 * rng.standard_normal((n, d))
    X /= np.sqrt((X ** 2).sum(axis=1).mean())
    return cdlab.Problem(X, X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n), loss="squared",
                         lam=lam_factor / n)


def problems():
    X, y = data_sets(False)["madelon"]()
    for factor in (1.0, 0.1, 0.01, 0.001):
        yield f"madelon λ={factor:g}/n", make_problem(X, y, "squared", factor)
    for factor in (1.0, 0.01):
        yield f"rank 20 + noise λ={factor:g}/n", low_rank_rows(factor)
    for cond in (1.0, 1e3, 1e8):
        for factor in (0.1, 0.01):
            yield f"rotated cond {cond:g} λ={factor:g}/n", rotated_rows(cond, factor)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"{'problem':<30} {'CG products':>11} {'cap':>5} {'auto ms':>8} {'cg ms':>8} {'chol ms':>8} "
          f"{'auto ÷ best':>11} {'range':>11}")
    for label, problem in problems():
        tol = GAP_REL * abs(certified_p_star(problem))
        calls = {solver: (lambda solver=solver: cdlab.solve(problem, "newton", solver=solver, tol=tol,
                                                             max_passes=100_000, seed=0))
                 for solver in ("auto", "cg", "cholesky")}
        results = {solver: call() for solver, call in calls.items()}  # compiled, and each certified
        assert all(result.converged for result in results.values())
        seconds = {solver: [] for solver in calls}
        for _ in range(args.repeats):
            for solver, call in calls.items():
                start = time.perf_counter()
                call()
                seconds[solver].append(time.perf_counter() - start)
        s = {solver: np.array(v) for solver, v in seconds.items()}
        ratios = s["auto"] / np.minimum(s["cg"], s["cholesky"])
        ms = {solver: 1e3 * np.median(v) for solver, v in s.items()}
        products = results["cg"].trace.steps.iloc[-1]
        print(f"{label:<30} {products:>11} {newton.cg_handover(problem):>5.1f} {ms['auto']:>8.2f} {ms['cg']:>8.2f} "
              f"{ms['cholesky']:>8.2f} {np.median(ratios):>11.2f} {ratios.min():>5.2f}–{ratios.max():<5.2f}",
              flush=True)


if __name__ == "__main__":
    main()
