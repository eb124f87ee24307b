"""Frostig, Ge, Kakade & Sidford 2015, Figure 3: the final objective against each method's knob,
on the squared and the logistic loss.

The paper's protocol (§5, "Algorithms" and "Parameter sensitivity"): each method has one scalar
knob, called λ there and θ here, swept over orders of magnitude; every run starts at w = 0, gets
"20 stages (or the equivalent)" and is scored by the original ERM objective
F(w) = (1/n) Σ_i φ_i(x_i·w) + (λ₀/2)‖w‖² (λ₀ = 0):

    SGD        step θ/√t               cdlab.solve(F, "sgd", schedule="decaying", eta0=θ)
    SVRG       step θ, stage n         cdlab.solve(F, "svrg", step_size=θ, epoch_length=n)
    SDCA       ridge θ                 cdlab.solve(F with λ = λ₀ + θ, "sdca"), scored on F
    Dual APPA  proximal weight κ = θ   cdlab.solve(F, "dual_appa", kappa=θ)   (α⁰ = 0, w⁰ = 0)

SGD, SDCA and Dual APPA get exactly 20·n steps: 20 one-pass stages of Dual APPA, scored at the
stage output x^(20) that Algorithm 3 returns. (Their budget is ``max_steps``: a pass budget counts
nonzeros read, and a run stopped a few steps into a 21st stage would return that stage's inner
point, not x^(20).) SVRG gets 20 passes
of work with its snapshot gradients counted, as everywhere in cdlab: one difference from the
paper (which did not count them), in SVRG's disfavour. ``dual_appa_gradient`` runs Algorithm 3's
printed first dual point α⁰ = ŷ(0) instead of α⁰ = 0.

The figure's shape: SGD and SVRG have a sharp threshold past which they diverge; SDCA degrades
gracefully (its ridge biases w towards 0, so F(w) rises towards F(0) but never blows up), Dual
APPA more gracefully still on that side, since re-centring undoes the bias a ridge keeps.
(``benchmarks/lambda_sweep.py`` prints this sweep as a table.)
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ._core import Check, Outcome, Plot, Series, fmt, item

DEFAULT_GRID = tuple(10.0 ** k for k in range(-8, 3))
PAPER_METHODS = ("sgd", "svrg", "sdca", "dual_appa")
ALL_METHODS = PAPER_METHODS + ("dual_appa_gradient",)


def run_one(base, method, theta, passes=20, seed=0):
    """One point of the figure: (status, F(w_final), steps) with F the objective of ``base``.

    SGD, SDCA and Dual APPA stop after ⌈passes⌉·n steps (checkpoints fall every n steps, so the
    last one is there: for Dual APPA the stage output x^(⌈passes⌉)); SVRG after ``passes``
    passes of work, snapshots included.
    """
    import cdlab

    n = base.n_samples
    if method == "svrg":
        res = cdlab.solve(base, "svrg", max_passes=passes, tol=0.0, seed=seed, step_size=theta, epoch_length=n,
                          eval_every=1.0)
    else:
        target = int(np.ceil(passes)) * n
        common = dict(max_passes=np.inf, max_steps=target, tol=0.0, seed=seed, eval_every=1.0)
        if method == "sgd":
            res = cdlab.solve(base, "sgd", schedule="decaying", eta0=theta, **common)
        elif method == "sdca":
            res = cdlab.solve(base.with_params(lam=base.lam + theta), "sdca", **common)
        elif method in ("dual_appa", "dual_appa_gradient"):
            start = "zero" if method == "dual_appa" else "gradient"
            res = cdlab.solve(base, "dual_appa", kappa=theta, dual_start=start, **common)
        else:
            raise ValueError(f"unknown sweep method {method!r}; choose from {ALL_METHODS}")
    steps = int(res.trace.steps.iloc[-1])
    if res.diverged:
        return "diverged", np.inf, steps
    if method != "svrg" and not (res.status == "max_steps" and steps == target):
        raise RuntimeError(f"{method} at θ = {theta:g} stopped with status {res.status!r} after {steps} steps, "
                           f"not at the step budget {target}")
    return ("budget" if method != "svrg" else res.status), base.primal(res.w), steps


def sweep(base, grid=DEFAULT_GRID, methods=None, passes=20, seed=0, bar=None):
    """The figure's data: one row per (method, θ) with the final objective F(w).

    ``methods`` defaults to the paper's four (``ALL_METHODS`` adds Algorithm 3's printed start);
    ``bar``: wraps the list of runs (a progress bar).
    """
    methods = PAPER_METHODS if methods is None else methods
    todo = [(m, t) for m in methods for t in grid]
    rows = []
    with np.errstate(over="ignore", invalid="ignore"):  # the runs that diverge overflow on the way, by design
        for method, theta in (todo if bar is None else bar(todo)):
            t0 = time.perf_counter()
            status, value, steps = run_one(base, method, theta, passes=passes, seed=seed)
            rows.append(dict(method=method, theta=theta, status=status, objective=value, steps=steps,
                             seconds=time.perf_counter() - t0))
    return pd.DataFrame(rows)


def erm_optimum(base, passes=500):
    """F* of the base problem: certified by SDCA when λ₀ > 0, else L-BFGS to stagnation."""
    import cdlab

    if base.lam > 0:
        return cdlab.reference_optimum(base)
    res = cdlab.solve(base, "lbfgs", max_passes=passes, tol=0.0, eval_every=50)
    return base.primal(res.w)


def threshold(df, method):
    """Smallest θ from which every larger θ of ``method`` diverged (None if none did)."""
    sub = df[df.method == method].sort_values("theta", ascending=False)
    th = None
    for theta, status in zip(sub.theta, sub.status):
        if status != "diverged":
            break
        th = float(theta)
    return th


def diverged_thetas(df, method):
    """Every θ at which ``method`` diverged, in increasing order (at either end of the grid)."""
    sub = df[(df.method == method) & (df.status == "diverged")]
    return sorted(float(t) for t in sub.theta)


def failure_threshold(df, method):
    """Smallest θ from which every larger θ of ``method`` failed: diverged, or ended above F(0)
    (column ``failed``); None if the largest θ did not fail."""
    part = df[df.method == method].sort_values("theta", ascending=False)
    th = None
    for theta, failed in zip(part.theta, part.failed):
        if not failed:
            break
        th = float(theta)
    return th


def figure3(ctx, loss):
    import cdlab

    X, y = cdlab.load_dataset("a9a")
    rows = 1000 if ctx.quick else None
    if rows is not None:
        X, y = X[:rows], y[:rows]
    base = cdlab.Problem(X, y, loss=loss, lam=0.0)
    grid = tuple(10.0 ** k for k in range(-6, 3)) if ctx.quick else DEFAULT_GRID
    f_star, f0 = erm_optimum(base), base.primal(np.zeros(base.n_features))
    df = sweep(base, grid=grid, methods=ALL_METHODS, seed=ctx.seed,
               bar=lambda todo: ctx.bar(todo, f"APPA Figure 3 ({loss})"))
    df["excess"] = df.objective - f_star
    df["failed"] = (df.status == "diverged") | (df.objective > f0)
    by = {m: g.set_index("theta").sort_index() for m, g in df.groupby("method")}
    checks = []
    ths = {}
    for m in ("sgd", "svrg"):
        th = ths[m] = failure_threshold(df, m)
        part = by[m]
        ok = th is not None and part.failed[part.index >= th].all() and not part.failed[part.index < th].any()
        best = part.excess[~part.failed].min() if (~part.failed).any() else np.inf
        checks.append(Check(f"{m.upper()} has a sharp threshold: it fails (diverges or ends above F(0)) for every θ "
                            "from one inside the grid on, and for no θ below it",
                            ok and th > min(grid),
                            f"{m}: fails for θ ≥ {fmt(th)}; best F − F* = {best:.2e} (F(0) − F* = {f0 - f_star:.2e})"))
    sdca, appa = by["sdca"], by["dual_appa"]
    checks.append(Check("SDCA degrades gracefully: it never fails (never diverges, never ends above F(0))",
                        not sdca.failed.any(), f"SDCA's worst F − F* = {sdca.excess.max():.2e}"))
    edge = min(t for t in ths.values() if t is not None) if any(t is not None for t in ths.values()) else grid[-1]
    side = appa.index >= edge
    checks.append(Check("Dual APPA degrades more gracefully still where SGD and SVRG break: it never fails there and "
                        "ends closer to F* than SDCA with the same θ",
                        not appa.failed[side].any() and (appa.excess[side] < sdca.excess[side]).all(),
                        f"for θ ≥ {edge:g}: Dual APPA F − F* " + ", ".join(f"{v:.2e}" for v in appa.excess[side])
                        + "; SDCA " + ", ".join(f"{v:.2e}" for v in sdca.excess[side])))
    colors = ("sgd", "svrg", "sdca", "dual_appa", "dual_appa_gradient")
    series = [Series(m, by[m].index, np.where(by[m].failed, np.nan, by[m].excess)) for m in colors]
    series += [Series(f"{m} failed", by[m].index[by[m].failed], np.full(int(by[m].failed.sum()), 3 * (f0 - f_star) * 1.6 ** k),
                      "markers") for k, m in enumerate(colors) if by[m].failed.any()]
    plot = Plot(f"F(w) − F* after 20 passes against the knob θ ({loss}; dotted: F(0) − F*; markers on top: failed)",
                "θ (step, ridge or proximal weight)", "F(w) − F*", logx=True, logy=True, series=series,
                hlines=[f0 - f_star])
    return Outcome(paper_says="SGD and SVRG diverge past a threshold; SDCA degrades gracefully; Dual APPA more "
                              "gracefully still (Figure 3)",
                   measured=f"failure thresholds: SGD θ ≥ {fmt(ths['sgd'])}, SVRG θ ≥ {fmt(ths['svrg'])}; SDCA and "
                            f"Dual APPA: {int(sdca.failed.sum())} and {int(appa.failed.sum())} failures",
                   tables={"sweep": df}, plots=[plot], checks=checks,
                   settings=dict(data="a9a" + (f"[:{rows}]" if rows else ""), loss=loss, lam0=0.0, passes=20,
                                 grid=list(grid), F_star=f_star, F0=f0, seed=ctx.seed))


@item("appa", "figure3_squared", "Figure 3, squared loss: final value against the knob")
def figure3_squared(ctx):
    return figure3(ctx, "squared")


@item("appa", "figure3_logistic", "Figure 3, logistic loss: final value against the knob")
def figure3_logistic(ctx):
    return figure3(ctx, "logistic")
