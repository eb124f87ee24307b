"""cdlab's newton on its CG path against the peers that solve the same Newton system
matrix-free (scikit-learn's Ridge(solver="sparse_cg") for the squared loss; liblinear's
primal trust-region Newton-CG and scikit-learn's newton-cg for the logistic loss), and
against SDCA (random permutation), side by side in one process.

Each problem is race.py's (rows scaled by the mean norm, λ = factor/n); cdlab runs the
whole solve call to a certified gap ≤ 1e-6·|P*|, a peer at the loosest of its tolerances
whose P is within that of P* (race.run_peer's rule). The runs go round-robin (cdlab,
sdca, peer, cdlab, …) so a change in a loaded machine's load falls on all alike;
printed: median seconds, min–max, and cdlab's passes and CG iterations.

    cd benchmarks && PYTHONPATH=..:. python newton_cg_bench.py [--only rcv1_small ...] [--repeats 7]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import cdlab
import race
from _peers import PEERS, peer_input
from cdlab.solvers import newton

PEER_NAMES = {"squared": ("Ridge sparse_cg",), "logistic": ("liblinear primal", "sklearn newton-cg")}
DATA = ("rcv1_small", "reuters_moneyfx", "colon-cancer", "a9a")


def newton_cg_peer():
    """scikit-learn's LogisticRegression(solver="newton-cg") at race.py's conventions (C = 1/(λn))."""
    def build(lam, n, d, tol, threads=1):
        from sklearn.linear_model import LogisticRegression
        return LogisticRegression(solver="newton-cg", C=1.0 / (lam * n), fit_intercept=False, tol=tol,
                                  max_iter=100000)
    return build


def peers(loss):
    table = {name: build for name, build, _, _ in PEERS[loss]}
    table["sklearn newton-cg"] = newton_cg_peer()
    return {name: table[name] for name in PEER_NAMES[loss]}


def tuned_peer(build, problem, X, target):
    """The loosest tolerance at which the peer's P ≤ target (race.run_peer's search), or None."""
    for tol in race.PEER_TOLS:
        _, primal = race.fit_peer(build, problem, X, tol, 1)
        if primal <= target:
            return tol
    return None


def bench(name, loss, factor, repeats):
    X, y = race.real(name)
    problem = race.make_problem(X, y, loss, factor)
    p_star = race.certified_p_star(problem)
    eps = race.GAP_REL * abs(p_star)
    Xp = peer_input(X)
    calls = {
        "newton cg": lambda: cdlab.solve(problem, "newton", tol=eps, max_passes=5000, solver="cg"),
        "sdca permutation": lambda: cdlab.solve(problem, "sdca", "permutation", tol=eps, max_passes=5000),
    }
    if problem.n_features <= newton.MAX_FEATURES:
        calls["newton cholesky"] = lambda: cdlab.solve(problem, "newton", tol=eps, max_passes=5000,
                                                       solver="cholesky")
    for peer, build in peers(loss).items():
        tol = tuned_peer(build, problem, Xp, p_star + eps)
        if tol is not None:
            calls[f"{peer} (tol {tol:g})"] = lambda build=build, tol=tol: race.fit_peer(build, problem, Xp, tol, 1)
    times = {label: [] for label in calls}
    results = {}
    for fn in calls.values():
        fn()  # compilation and first-call costs
    for _ in range(repeats):
        for label, fn in calls.items():
            t0 = time.perf_counter()
            results[label] = fn()
            times[label].append(time.perf_counter() - t0)
    print(f"\n{name} {loss} λ={factor:g}/n  (n={problem.n_samples}, d={problem.n_features}, nnz={problem.nnz}; "
          f"auto picks {cdlab.solvers.auto.choose(problem)['method']}, newton's inner solver "
          f"{newton.inner_solver(problem)}; predicted Hessian-vector products {newton.cg_products(problem):.0f})")
    for label, ts in times.items():
        res = results[label]
        extra = ""
        if isinstance(res, cdlab.Result):
            extra = f"  {res.status}, {res.trace.passes.iloc[-1]:.0f} passes, {res.trace.steps.iloc[-1]} steps"
        print(f"  {label:34s} median {np.median(ts) * 1e3:8.1f} ms   min–max {min(ts) * 1e3:.1f}–{max(ts) * 1e3:.1f}"
              + extra)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=list(DATA))
    parser.add_argument("--losses", nargs="*", default=["squared", "logistic"], choices=["squared", "logistic"])
    parser.add_argument("--factors", nargs="*", type=float, default=[1.0, 0.01])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    for name in args.only:
        for loss in args.losses:
            for factor in args.factors:
                bench(name, loss, factor, args.repeats)


if __name__ == "__main__":
    main()
