"""How sure the face-off's prediction is: its hit rate on every shipped dataset at λ = 1/n and 0.01/n.

``theory.faceoff(problem).prediction["confidence"]`` is "likely" when the bound ratio is ≥ CLOSE_CALL
and "too close to call" below; the claim behind "likely" is a hit rate ≥ LIKELY_HIT_RATE, checked here.
Protocol as Table 1 (Section 7): logistic loss, X divided by its mean example norm, each method at its
better sampling, first checkpoint with a duality gap ≤ ε. The predicted winner runs first; the other
method runs to at most CUTOFF times the winner's passes (beyond that the call is right, speed-up
≥ CUTOFF). A case where neither reaches ε within the budget is undecided and left out of the rates.
--quick: the first QUICK_ROWS rows of each dataset, ε = 1e-4 and a smaller budget.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..theory.faceoff import CLOSE_CALL, LIKELY_HIT_RATE
from ._core import Check, Outcome, Plot, Series, first, fmt, item
from .faceoff import FULL_DATA, SAMPLINGS, logistic

SCALES = (1.0, 0.01)  # λ = scale/n
CUTOFF = 4.0
QUICK_ROWS, QUICK_EPS, QUICK_BUDGET = 1000, 1e-4, 150
FULL_EPS, FULL_BUDGET = 1e-6, 300


def best_passes(problem, method, eps, budget, seed):
    import cdlab
    from ..solvers import FACEOFF_OPTIONS

    return min(first(cdlab.solve(problem, method, sampling=s, tol=eps, max_passes=budget, seed=seed,
                                 eval_every=0.5, **FACEOFF_OPTIONS[method]).trace, "gap", eps) for s in SAMPLINGS)


def call(problem, eps, budget, seed):
    """(prediction, passes of the predicted winner, passes of the other, measured speed-up)."""
    from cdlab import theory

    pred = theory.faceoff(problem).prediction
    other = "dual_cd" if pred["method"] == "primal_cd" else "primal_cd"
    won = best_passes(problem, pred["method"], eps, budget, seed)
    cap = budget if not np.isfinite(won) else min(budget, CUTOFF * won)
    lost = best_passes(problem, other, eps, cap, seed)
    speedup = np.nan if not (np.isfinite(won) or np.isfinite(lost)) else lost / won
    return pred, won, lost, speedup


@item("faceoff", "hit_rate", "How sure the prediction is: its hit rate on every shipped dataset, λ = 1/n and 0.01/n")
def hit_rate(ctx):
    import cdlab
    from cdlab.data import normalize_data

    eps, budget = (QUICK_EPS, QUICK_BUDGET) if ctx.quick else (FULL_EPS, FULL_BUDGET)
    rows = []
    for name in ctx.bar(FULL_DATA, "face-off hit rate"):
        X, y = cdlab.load_dataset(name)
        if ctx.quick:
            X, y = X[:QUICK_ROWS], y[:QUICK_ROWS]
        X = normalize_data(X, "mean")
        for scale in SCALES:
            problem = logistic(X, y).with_params(lam=scale / X.shape[0])
            pred, won, lost, speedup = call(problem, eps, budget, ctx.seed)
            rows.append(dict(data=name, n=X.shape[0], d=X.shape[1], lam_times_n=scale, predicted=pred["method"],
                             bound_ratio=pred["ratio"], confidence=pred["confidence"], passes_predicted=won,
                             passes_other=lost, measured_speedup=speedup))
    table = pd.DataFrame(rows)
    decided = table[np.isfinite(table.measured_speedup) | np.isinf(table.measured_speedup)]
    decided = decided.assign(hit=decided.measured_speedup > 1)

    def rate(frame):
        return f"{int(frame.hit.sum())}/{len(frame)}" if len(frame) else "none"

    likely, close = decided[decided.confidence == "likely"], decided[decided.confidence != "likely"]
    misses = decided[~decided.hit]
    checks = [Check(
        f"predictions marked likely (bound ratio ≥ {CLOSE_CALL:g}) are right in at least {LIKELY_HIT_RATE:.0%} of cases",
        len(likely) > 0 and likely.hit.mean() >= LIKELY_HIT_RATE,
        f"likely: {rate(likely)} right; too close to call: {rate(close)}; by λ: " + ", ".join(
            f"λ = {s:g}/n {rate(decided[decided.lam_times_n == s])}" for s in SCALES)
        + f"; undecided (neither reached ε = {eps:g}): {len(table) - len(decided)}"
        + ("" if misses.empty else "; missed: " + ", ".join(
            f"{r.data} at {r.lam_times_n:g}/n (ratio {r.bound_ratio:.3g}, speed-up {fmt(r.measured_speedup)})"
            for r in misses.itertuples())))]
    shown = np.clip(decided.measured_speedup.to_numpy(dtype=float), 1e-2, 1e2)  # "≥ CUTOFF" drawn at the edge
    plot = Plot("Measured speed-up of the predicted winner against the bound ratio", "bound ratio (loser / winner)",
                "measured speed-up (> 1: prediction right)", logx=True, logy=True, hlines=[1.0], vlines=[CLOSE_CALL],
                series=[Series(f"λ = {s:g}/n", decided.bound_ratio[decided.lam_times_n == s],
                               shown[(decided.lam_times_n == s).to_numpy()], "markers") for s in SCALES])
    return Outcome(paper_says="the method with the smaller bound on total work is faster (Section 7: the speed-up "
                              "'matches the theoretical predictions'); how often, the paper does not measure",
                   measured=checks[0].detail, tables={"calls": table}, plots=[plot], checks=checks,
                   settings=dict(data=FULL_DATA, rows=QUICK_ROWS if ctx.quick else "all", eps=eps, budget_passes=budget,
                                 cutoff=CUTOFF, close_call=CLOSE_CALL, likely_hit_rate=LIKELY_HIT_RATE,
                                 lam_times_n=SCALES, seed=ctx.seed))
