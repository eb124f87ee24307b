"""Shalev-Shwartz & Zhang, Proximal SDCA (slides): SDCA against SGD, and random against cyclic order.

Problem: logistic loss on a9a scaled by its mean example norm, λ = 1e-4 (as in notebook 01).
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from ._core import Check, Outcome, Plot, Series, floor, item

LAM = 1e-4
PASSES = 30
ETA0 = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)


@functools.lru_cache(maxsize=None)
def problem_and_optimum(quick, seed):
    import cdlab
    from cdlab.data import normalize_data

    X, y = cdlab.load_dataset("a9a")
    if quick:
        X, y = X[:2000], y[:2000]
    problem = cdlab.Problem(normalize_data(X, "mean"), y, loss="logistic", lam=LAM)
    return problem, cdlab.reference_optimum(problem)


def second_half_gain(trace):
    """P − P* at the first checkpoint past half the budget over P − P* at the end."""
    sub = floor(trace.subopt.to_numpy())
    return sub[np.argmax(trace.passes.to_numpy() >= PASSES / 2)] / sub[-1]


@item("prox_sdca", "sdca_vs_sgd", "SDCA vs SGD (Pegasos and tuned steps)")
def sdca_vs_sgd(ctx):
    import cdlab

    problem, p_star = problem_and_optimum(ctx.quick, ctx.seed)
    common = dict(max_passes=PASSES, tol=0, seed=ctx.seed, reference=p_star, eval_every=1.0)
    runs = {"SDCA": cdlab.solve(problem, "sdca", **common),
            "SGD Pegasos 1/(λt)": cdlab.solve(problem, "sgd", schedule="pegasos", **common)}
    tuned = []
    for step, eta0 in ctx.bar([(s, e) for s in ("constant", "decaying") for e in ETA0], "SGD step grid"):
        run = cdlab.solve(problem, "sgd", schedule=step, eta0=eta0, **common)
        tuned.append(dict(step=step, eta0=eta0, diverged=run.diverged, subopt=float(run.trace.subopt.iloc[-1]), run=run))
    grid = pd.DataFrame(tuned)
    best_at_edge = []
    for step in ("constant", "decaying"):
        part = grid[(grid.step == step) & ~grid.diverged]
        best = part.loc[part.subopt.idxmin()]
        runs[f"SGD {step}, best η₀ = {best.eta0:g}"] = best.run
        best_at_edge += [step] if best.eta0 in (ETA0[0], ETA0[-1]) else []
    final = pd.DataFrame([dict(method=k, subopt=float(r.trace.subopt.iloc[-1]), gap=float(r.trace.gap.iloc[-1]),
                               second_half_gain=second_half_gain(r.trace)) for k, r in runs.items()])
    sgd = final[final.method != "SDCA"]
    sdca = final[final.method == "SDCA"].iloc[0]
    checks = [
        Check("SDCA converges linearly: over the second half of the budget P − P* falls more than 1000×",
              sdca.second_half_gain > 1e3, f"SDCA gains {sdca.second_half_gain:.3g}×"),
        Check("SGD slows to a crawl (every variant gains < 20× over the second half)", (sgd.second_half_gain < 20).all(),
              "SGD gains: " + ", ".join(f"{g:.3g}×" for g in sgd.second_half_gain)),
        Check("after the budget SDCA is > 1000× closer to P* than the best SGD (best steps inside their grid)",
              sgd.subopt.min() > 1000 * max(sdca.subopt, 1e-16) and not best_at_edge,
              f"SDCA {sdca.subopt:.2e}, best SGD {sgd.subopt.min():.2e}"
              + (f"; best step at the grid's edge for {best_at_edge}" if best_at_edge else "")),
    ]
    plot = Plot("SDCA vs SGD (logistic, a9a)", "passes", "P − P*", logy=True,
                series=[Series(k, r.trace.passes, floor(r.trace.subopt)) for k, r in runs.items()])
    return Outcome(paper_says="SDCA: linear convergence and a stopping certificate; SGD: slow, needs a step size",
                   measured=checks[2].detail, tables={"final": final, "sgd_grid": grid.drop(columns="run")},
                   plots=[plot], checks=checks,
                   settings=dict(data="a9a" + ("[:2000]" if ctx.quick else ""), lam=LAM, passes=PASSES, eta0=ETA0,
                                 seed=ctx.seed))


@item("prox_sdca", "random_vs_cyclic", "Random vs cyclic order of the dual coordinates")
def random_vs_cyclic(ctx):
    import cdlab

    problem, _ = problem_and_optimum(ctx.quick, ctx.seed)
    shuffle = np.random.default_rng(ctx.seed).permutation(problem.n_samples)
    shuffled = problem.__class__(problem.X[shuffle], problem.y[shuffle], loss="logistic", lam=LAM)
    common = dict(max_passes=PASSES, tol=0, eval_every=1.0)
    specs = {"uniform (i.i.d.)": (problem, "uniform"), "new permutation every pass": (problem, "permutation"),
             "cyclic, file order": (problem, "cyclic"), "cyclic, shuffled once": (shuffled, "cyclic")}
    runs = {k: cdlab.solve(p, "sdca", sampling=s, seed=ctx.seed, **common)
            for k, (p, s) in ctx.bar(specs.items(), "SDCA orders", total=len(specs))}
    final = pd.DataFrame([dict(order=k, gap=float(r.trace.gap.iloc[-1])) for k, r in runs.items()]).set_index("order")
    worst_random = max(final.gap["uniform (i.i.d.)"], final.gap["new permutation every pass"], 1e-16)
    best_cyclic = min(final.gap["cyclic, file order"], final.gap["cyclic, shuffled once"])
    checks = [Check("random order beats a fixed cyclic order, and shuffling once does not fix cyclic order "
                    "(both cyclic gaps > 100× the random ones after the budget)", best_cyclic > 100 * worst_random,
                    f"gap after {PASSES} passes: worst random {worst_random:.2e}, best cyclic {best_cyclic:.2e} "
                    f"({best_cyclic / worst_random:.3g}×)")]
    plot = Plot("SDCA: random vs cyclic order", "passes", "duality gap", logy=True,
                series=[Series(k, r.trace.passes, floor(r.trace.gap)) for k, r in runs.items()])
    return Outcome(paper_says="the linear rate needs random order; cyclic order (SMO-style) can be much slower, and "
                              "shuffling once is not enough", measured=checks[0].detail,
                   tables={"final": final.reset_index()}, plots=[plot], checks=checks,
                   settings=dict(lam=LAM, passes=PASSES, seed=ctx.seed))
