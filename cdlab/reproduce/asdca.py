"""Shalev-Shwartz & Zhang 2013, accelerated mini-batch SDCA: the mini-batch sizes (Section 4,
Figure 1: "ASDCA indeed interpolates between SDCA and AGD ... SDCA is much better than AGD when we
have a single computing node. ASDCA performance is quite similar to SDCA when m is not very large"),
and Theorem 1's iteration count as m grows.

Data as in :mod:`cdlab.reproduce.spdc` (unit rows, smoothed hinge s = 1), at κ/n = 1 (λ = 1/n), so
that γλn = 1 and the bound's iterations fall like 1/√m from m = 1 on.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._core import Check, Outcome, Plot, Series, first, fmt, item
from .spdc import at_ratio, base_problem

EPS = 1e-6
KAPPA_OVER_N = 1.0
THETA_FACTOR = 4  # Theorem 1's θ carries a factor 1/4 that SDCA's rate does not


@item("asdca", "minibatch", "Mini-batch sizes: from SDCA (m = 1) to AGD (m = n)")
def minibatch(ctx):
    import cdlab
    from cdlab import theory

    problem = at_ratio(base_problem(ctx.quick, ctx.seed), KAPPA_OVER_N)
    n = problem.n_samples
    lgn = problem.lam * problem.gamma * n
    batches = [m for m in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000) if m <= n]
    rows = []
    for m in ctx.bar(batches, "ASDCA mini-batches"):
        b = theory.bound("asdca", problem, batch_size=m)
        run = cdlab.solve(problem, "asdca", batch_size=m, tol=EPS, max_passes=1.05 * b.passes(EPS), seed=ctx.seed,
                          eval_every=max(1.0, m / 20))
        rows.append(dict(m=m, converged=run.converged, iterations=first(run.trace, "gap", EPS, "steps"),
                         passes=first(run.trace, "gap", EPS), bound_iterations=b.iterations(EPS),
                         bound_iterations_per_e=1 / b.rate))
    runs = pd.DataFrame(rows)
    sdca = cdlab.solve(problem, "sdca", tol=EPS, max_passes=500, seed=ctx.seed)
    agd = cdlab.solve(problem, "agd", tol=EPS, max_passes=5000)
    sdca_passes, agd_passes = first(sdca.trace, "gap", EPS), first(agd.trace, "gap", EPS)
    logs = np.log(runs[["m", "bound_iterations_per_e"]].to_numpy())
    slopes = np.diff(logs[:, 1]) / np.diff(logs[:, 0])
    m_arr = runs.m.to_numpy()
    small_m, large_m = m_arr[1:] <= lgn, m_arr[:-1] >= lgn
    not_large = runs[runs.m <= max(1.0, lgn)]
    checks = [
        Check("ASDCA processes more examples per iteration and needs fewer iterations as m grows",
              runs.converged.all() and runs.iterations.is_monotonic_decreasing,
              "iterations to gap " + f"{EPS:g}: " + ", ".join(f"m={r.m}: {fmt(r.iterations)}" for r in runs.itertuples())),
        Check("ASDCA is quite similar to SDCA (in examples processed) when m is not very large: within the "
              f"factor {THETA_FACTOR} of Theorem 1's θ, for m ≤ max(1, γλn)",
              (not_large.passes <= THETA_FACTOR * sdca_passes).all(),
              f"passes for m ≤ {max(1.0, lgn):g}: " + ", ".join(fmt(v) for v in not_large.passes) + f"; SDCA {fmt(sdca_passes)}"),
        Check("SDCA is much better than AGD on a single node (examples processed)",
              agd_passes >= 2 * sdca_passes, f"passes to {EPS:g}: SDCA {fmt(sdca_passes)}, AGD {fmt(agd_passes)}"),
        Check("ASDCA interpolates: its work at the largest m lies between SDCA's and AGD's (up to the factor "
              f"{THETA_FACTOR} of θ)",
              sdca_passes <= runs.passes.iloc[-1] <= THETA_FACTOR * agd_passes,
              f"m = {m_arr[-1]}: {fmt(runs.passes.iloc[-1])} passes (m = 1: {fmt(runs.passes.iloc[0])}, SDCA "
              f"{fmt(sdca_passes)}, AGD {fmt(agd_passes)}: AGD's adaptive line search against ASDCA's worst-case θ)"),
        Check("Theorem 1: iterations fall like 1/m up to m = γλn and like 1/√m beyond",
              np.allclose(slopes[small_m], -1.0) and np.allclose(slopes[large_m], -0.5),
              "log-log slopes of the bound: " + ", ".join(f"{s:.2f}" for s in slopes)),
    ]
    plots = [
        Plot("ASDCA: iterations (parallel rounds) to the gap", "mini-batch size m", "iterations", logx=True,
             logy=True, series=[Series("measured", runs.m, runs.iterations, "line"),
                                Series("Theorem 1 bound", runs.m, runs.bound_iterations, "dashed"),
                                Series("AGD measured (m = n)", [n], [first(agd.trace, "gap", EPS, "steps")], "markers")]),
        Plot("… and the work (examples processed, in passes)", "mini-batch size m", "passes", logx=True, logy=True,
             series=[Series("ASDCA", runs.m, runs.passes, "line"), Series("SDCA", [1, n], [sdca_passes] * 2, "dashed"),
                     Series("AGD", [1, n], [agd_passes] * 2, "dashed")]),
    ]
    return Outcome(paper_says="ASDCA interpolates between SDCA (m = 1) and AGD (m = n); similar to SDCA when m is "
                              "not very large; SDCA much better than AGD on one node",
                   measured=f"iterations {fmt(runs.iterations.iloc[0])} (m = 1) → {fmt(runs.iterations.iloc[-1])} "
                            f"(m = {m_arr[-1]}); passes SDCA {fmt(sdca_passes)}, AGD {fmt(agd_passes)}",
                   tables={"runs": runs, "baselines": pd.DataFrame([dict(method="sdca", passes=sdca_passes),
                                                                    dict(method="agd", passes=agd_passes)])},
                   plots=plots, checks=checks,
                   settings=dict(n=n, d=problem.n_features, loss="smoothed_hinge", lam=problem.lam, gamma_lam_n=lgn,
                                 eps=EPS, seed=ctx.seed))
