"""Fit Newton's cost model (``cdlab.solvers.newton``: the CG path's and the Cholesky path's ns) to whole calls.

    python benchmarks/newton_cost_fit.py [--losses logistic squared] [--only a9a ...] [--repeats 3]
                                         [--solvers cg cholesky]

For every shipped data set, the race's text-like problem at 1e7 nonzeros and its dense 1e5 × 500, the logistic
and squared losses and λ ∈ {1/n, 0.01/n} (the race's protocol: rows scaled by the mean norm, a certified gap
≤ 1e-6·|P*|, one thread), times Newton with each inner solver of ``--solvers`` (median of ``--repeats`` after a
warm-up call) and counts what the model counts: Hessian-vector products and Newton steps on the CG path,
iterations (and those on a sampled H, ``newton.sample_size``) on Cholesky's. A whole call's seconds minus its
checkpoints (``costs.checkpoint_ns`` each) is then fitted, weighted by 1/seconds (relative error), by
non-negative least squares on the model's terms:

    CG path: sweeps·nnz (in cache, beyond it), sweeps·n·d (dense rows), sweeps·n, (products + steps)·d_nonempty,
             steps·n (the logistic line search), and 1 a call (every method pays it alike: fitted, not modelled),
             sweeps = 2·products + steps (the squared loss: steps = 0, its CG iterations are its products);
    Cholesky: per iteration Σ_i nnz_i²/2 (sparse H), n·d²/2 and n·d (H by BLAS on densified rows) — each times
              the share of the rows its H read (m/n on a sampled step) —, d³/3, nnz and 1 (an iteration's
              overhead, which on the squared loss's one iteration includes the call's); a sampled step's own
              gradient sweep is taken off at ``newton.sweep_ns``.

It prints each problem's measured ÷ fitted seconds, the fitted constants beside the ones in ``newton``, the
power law of the CG path's products in κ = 1 + λ̂/(γλ) (``newton.cg_products``) fitted per loss (the logistic
loss's per Newton iteration), and measured ÷ modelled Newton iterations (``newton.newton_iterations``).
"""
from __future__ import annotations

import argparse
import gc
import time

import numpy as np
from scipy.optimize import nnls
from threadpoolctl import threadpool_limits

import cdlab
from cdlab.solvers import base, costs, newton
from cdlab.solvers._kernels import beyond_cache
from race import data_sets, each_problem, warm_up

# the race's data sets but its text-like problem at 5e7 nonzeros
DATA = {name: make for name, make in data_sets(False).items() if "5e7" not in name}


def timed(problem, eps, solver, repeats):
    """(median seconds, result, state) of Newton's whole calls with the inner ``solver``."""
    spec = base.get_method("newton")
    made = []
    make = spec.make
    object.__setattr__(spec, "make", lambda *a, **k: made.append(make(*a, **k)) or made[-1])
    try:
        seconds = []
        for _ in range(repeats + 1):
            made.clear()
            gc.collect()
            t0 = time.perf_counter()
            res = cdlab.solve(problem, method="newton", tol=eps, max_passes=3000, solver=solver)
            seconds.append(time.perf_counter() - t0)
    finally:
        object.__setattr__(spec, "make", make)
    if res.status != "converged":
        raise RuntimeError(f"newton {solver} did not certify: {res.status}")
    return float(np.median(seconds[1:])), res, made[0]


def cg_terms(problem, products, steps):
    """The CG path's terms (the module docstring), in the order of ``CG_NAMES``."""
    n, d, nnz = problem.n_samples, problem.n_features, problem.nnz
    sweeps = 2 * products + steps
    dense_x, out = problem.data.is_dense, beyond_cache(problem)
    return [0.0 if dense_x or out else sweeps * nnz, sweeps * nnz if out and not dense_x else 0.0,
            sweeps * n * d if dense_x else 0.0, sweeps * n, (products + steps) * problem.n_nonempty_columns,
            steps * n, 1.0]


CG_NAMES = ("CG_NS_PER_NNZ", "CG_NS_PER_NNZ_BEYOND_CACHE", "CG_NS_PER_DENSE_ENTRY", "CG_NS_PER_ROW",
            "CG_NS_PER_COLUMN", "CG_NS_PER_LINE_EXAMPLE", "(a call)")


def cholesky_terms(problem, iterations, sampled):
    """The Cholesky path's terms of a run of ``iterations``, ``sampled`` of them on a sampled H (its m of the n rows:
    ``newton.sample_size``), per iteration, in the order of ``CHOLESKY_NAMES``."""
    n, d = problem.n_samples, float(problem.n_features)
    rows = newton.dense_rows(problem)
    sparse_madds = float(problem.row_nnz @ problem.row_nnz) / 2
    share = (iterations - sampled + sampled * newton.sample_size(problem) / n) / iterations  # of H's rows read
    return [0.0 if rows else share * sparse_madds, share * n * d * d / 2 if rows else 0.0,
            share * n * d if rows else 0.0, d ** 3 / 3, float(problem.nnz), 1.0]


CHOLESKY_NAMES = ("SPARSE_NS_PER_MADD", "BLAS_NS_PER_MADD", "DENSIFY_NS_PER_ENTRY", "FACTOR_NS_PER_MADD",
                  "ITERATION_NS_PER_NNZ", "ITERATION_OVERHEAD_NS")


def fit(rows, names, label):
    """Weighted NNLS of the rows' (terms, seconds); prints measured ÷ fitted and the constants."""
    if not rows:
        print(f"\n{label}: no runs")
        return
    terms = np.array([r["terms"] for r in rows])
    ns = np.array([r["ns"] for r in rows])
    weight = 1.0 / ns
    coef, _ = nnls(terms * weight[:, None], ns * weight)
    ratio = ns / (terms @ coef)
    print(f"\n{label}: measured ÷ fitted")
    for r, q in zip(rows, ratio):
        print(f"   {r['label']:36s} {q:5.2f}")
    print(f"   range {ratio.min():.2f}–{ratio.max():.2f}, 10–90 % {np.percentile(ratio, 10):.2f}–"
          f"{np.percentile(ratio, 90):.2f}")
    for name, value in zip(names, coef):
        now = getattr(newton, name, None)
        print(f"   {name:28s} fitted {value:10.4g}" + (f"   newton: {now:g}" if now is not None else ""))


def cg_row(problem, eps, label, repeats, laws):
    """The CG path's fit row of ``problem`` (its terms and ns: the whole call minus its checkpoints); its products
    and steps are appended to laws[loss]."""
    loss = problem.loss
    seconds, res, state = timed(problem, eps, "cg", repeats)
    if loss == "squared":
        products, steps = int(res.trace.steps.iloc[-1]), 0
    else:
        products, steps = int(sum(state.cg_iterations)), len(state.cg_iterations)
    ns = (seconds - len(res.trace) * costs.checkpoint_ns(problem) * 1e-9) * 1e9
    laws.setdefault(loss, []).append((newton.cg_kappa(problem), products, max(steps, 1),
                                      newton.newton_iterations(problem), newton.cg_products(problem)))
    print(f"{label:36s} cg {seconds * 1e3:9.2f} ms, {products} products "
          f"({newton.cg_products(problem):.1f} predicted), {steps} Newton steps", flush=True)
    return dict(label=label, terms=cg_terms(problem, products, steps), ns=ns)


def cholesky_row(problem, eps, label, repeats):
    """The Cholesky path's fit row of ``problem``: its terms and ns per iteration (the whole call minus its
    checkpoints and its sampled steps' gradient sweeps, which ``newton.sweep_ns`` models, over its iterations)."""
    seconds, res, state = timed(problem, eps, "cholesky", repeats)
    iterations = int(res.trace.steps.iloc[-1])
    sampled = getattr(state, "sampled_steps", 0)
    ns = (seconds - len(res.trace) * costs.checkpoint_ns(problem) * 1e-9) * 1e9
    ns = (ns - sampled * newton.sweep_ns(problem)) / iterations
    print(f"{label:36s} cholesky {seconds * 1e3:9.2f} ms, {iterations} iterations, {sampled} sampled "
          f"({newton.newton_iterations(problem):.1f} modelled)", flush=True)
    return dict(label=label, terms=cholesky_terms(problem, iterations, sampled), ns=ns)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--losses", nargs="*", default=["logistic", "squared"], choices=["logistic", "squared"])
    ap.add_argument("--only", nargs="*", help="the data sets whose name starts with one of these")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--solvers", nargs="*", default=["cg", "cholesky"], choices=["cg", "cholesky"],
                    help="fit these inner solvers' constants (the CG path's power laws need its runs)")
    args = ap.parse_args(argv)
    warm_up()
    cg_rows, cholesky_rows, laws = [], [], {}
    with threadpool_limits(1):
        for name, loss, factor, problem, eps in each_problem(DATA, args.losses, args.only):
            label = f"{name} {loss} {factor:g}/n"
            if "cg" in args.solvers:
                cg_rows.append(cg_row(problem, eps, label, args.repeats, laws))
            if "cholesky" in args.solvers and not newton.features_refusal(problem, {"solver": "cholesky"}):
                cholesky_rows.append(cholesky_row(problem, eps, label, args.repeats))
    fit(cg_rows, CG_NAMES, "CG path, whole calls minus checkpoints")
    fit(cholesky_rows, CHOLESKY_NAMES, "Cholesky path, an iteration")
    for loss, points in laws.items():
        kappa, products, steps, modelled_steps, modelled = np.array(points, dtype=float).T
        # the squared loss's law is for the whole solve, the logistic loss's for one Newton iteration
        per = products if loss == "squared" else products / steps
        slope, intercept = np.polyfit(np.log(kappa), np.log(per), 1)
        ratio = per / (np.exp(intercept) * kappa ** slope)
        now = (f"{newton.CG_PRODUCTS_SCALE[loss]:g} κ^{newton.CG_PRODUCTS_EXPONENT[loss]:g}" if loss == "squared" else
               f"{newton.CG_PRODUCTS_PER_ITERATION:g} κ^{newton.CG_PRODUCTS_PER_ITERATION_EXPONENT:g}")
        print(f"\n{loss}: products{'' if loss == 'squared' else ' an iteration'} = {np.exp(intercept):.3g} "
              f"κ^{slope:.3g} (newton: {now}); measured ÷ fitted {ratio.min():.2f}–{ratio.max():.2f}, 10–90 % "
              f"{np.percentile(ratio, 10):.2f}–{np.percentile(ratio, 90):.2f}; whole solves measured ÷ "
              f"newton.cg_products {np.min(products / modelled):.2f}–{np.max(products / modelled):.2f}")
        if loss != "squared":
            iterations = steps / modelled_steps
            print(f"{loss}: Newton iterations measured ÷ newton.newton_iterations {iterations.min():.2f}–"
                  f"{iterations.max():.2f}")


if __name__ == "__main__":
    main()
