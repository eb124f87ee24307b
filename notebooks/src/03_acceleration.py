# %% [markdown]
# # 3 · Acceleration: SPDC and accelerated mini-batch SDCA
#
# SDCA needs about n + κ steps per factor e of accuracy, where κ = R²/(λγ) is the condition
# number (R = maxᵢ‖xᵢ‖, γ the loss's smoothness). In *passes* over the data that is 1 + κ/n:
# excellent while κ ≤ n, slow when the problem is ill-conditioned (λ small). Two papers
# accelerate it:
#
# * **SPDC** (Zhang & Xiao 2015) alternates a dual coordinate step and a primal proximal step with
#   extrapolation; its bound per pass is 1 + √(κ/n).
# * **ASDCA** (Shalev-Shwartz & Zhang 2013) is accelerated *mini-batch* SDCA: with m examples per
#   step its bound interpolates between SDCA (m = 1) and accelerated gradient (m = n).
#
# Every claim below is checked by an `assert` on this run's numbers.

# %% tags=["parameters"]
SMALL = False  # True: tiny sizes, a quick check (the test suite sets this)
SEED = 0

# %%
import numpy as np
import pandas as pd
import holoviews as hv
import sympy as sp

import cdlab
from cdlab import theory
from cdlab.data import make_synthetic

hv.extension("bokeh")

N, D = (500, 50) if SMALL else (2000, 100)
EPS = 1e-6  # target duality gap
RATIOS = (0.1, 1.0, 10.0, 100.0)  # κ/n


def first(trace, column, eps, value="passes"):
    """`value` at the first checkpoint where `column` ≤ eps (inf if it never gets there)."""
    hit = trace[value][trace[column] <= eps]
    return float(hit.iloc[0]) if len(hit) else np.inf


# %% [markdown]
# ## The data and κ
#
# Gaussian data with labels from a planted linear classifier (noise of relative scale 0.3), every
# row scaled to unit norm so that R = 1, and the smoothed hinge loss with s = 1 (γ = 1), the loss
# of both papers' experiments. Then κ = 1/λ, and we choose λ to set κ/n.

# %%
X, y = make_synthetic(N, D, normalize="rows", noise=0.3, seed=SEED)
base = cdlab.Problem(X, y, loss="smoothed_hinge", lam=1.0, s=1.0)
print(base, f"R = {base.R:.3f}, γ = {base.gamma}")


def problem_at(ratio):
    """The problem with κ/n = ratio, i.e. λ = R²/(γ n · ratio)."""
    return base.with_params(lam=base.R ** 2 / (base.gamma * base.n_samples * ratio))


# %% [markdown]
# ## 1. SPDC vs SDCA as κ/n grows
#
# First the theory, symbolically: SDCA's bound costs 1 + κ/n passes per factor e, SPDC's
# 1 + √(κ/n). `cdlab.theory.facts` asks sympy where they cross and where SPDC's is smaller.

# %%
crossing, spdc_wins = theory.facts.spdc_vs_sdca()
print("1 + √(κ/n) = 1 + κ/n at κ =", crossing, "  SPDC's bound is smaller for κ/n in", spdc_wins)
assert crossing == [theory.SYMBOLS["n"]] and spdc_wins == sp.Interval.open(1, sp.oo)

# %% [markdown]
# Now the runs: SDCA, SPDC (Algorithm 1, m = 1) and ASDCA (m = 1, θ of its Theorem 1), each to a
# duality gap of 10⁻⁶, for κ/n from 0.1 to 100. Next to each run, the passes its own bound
# (`cdlab.theory.bound(...).passes(ε)`) guarantees.

# %%
rows = []
for ratio in RATIOS:
    problem = problem_at(ratio)
    for method in ("sdca", "spdc", "asdca"):
        run = cdlab.solve(problem, method, tol=EPS, max_passes=1500, seed=SEED, eval_every=1)
        rows.append(dict(kappa_over_n=ratio, method=method, converged=run.converged,
                         passes=first(run.trace, "gap", EPS),
                         bound_passes=theory.bound(method, problem).passes(EPS)))
race = pd.DataFrame(rows)
race.pivot(index="kappa_over_n", columns="method", values=["passes", "bound_passes"]).round(1)

# %%
measured = hv.Overlay([hv.Curve(race[race.method == m].replace(np.inf, np.nan), "kappa_over_n", "passes",
                                label=f"{m} (measured)").opts(line_width=3)
                       for m in ("sdca", "spdc", "asdca")])
bounds = hv.Overlay([hv.Curve(race[race.method == m], "kappa_over_n", "bound_passes", label=f"{m} (bound)").opts(
    line_dash="dashed") for m in ("sdca", "spdc", "asdca")])
# a line that stops: that run did not reach the gap within the budget of 1,500 passes
(measured * bounds).opts(logx=True, logy=True, xlabel="κ/n", ylabel=f"passes to gap {EPS:g}", width=820, height=400,
                         title="Passes to a gap of 1e-6 as the problem gets ill-conditioned", legend_position="right")

# %% [markdown]
# What the plot shows, checked below:
#
# * while κ/n ≤ 1 SDCA needs no more passes than SPDC: acceleration buys nothing there;
# * from κ/n = 10 on SPDC needs fewer passes than SDCA, and its advantage grows with κ/n, as the
#   two bounds (1 + κ/n against 1 + √(κ/n)) predict;
# * ASDCA run serially (m = 1) is slower than SDCA at every κ/n, and so is its bound: with one
#   example per step its θ is a quarter of a minimum that never beats SDCA's rate, so there is
#   nothing to accelerate (section 2 is where it shines);
# * every run that finished did so within the passes its bound guarantees.

# %%
wide = race.pivot(index="kappa_over_n", columns="method", values="passes")
advantage = wide.sdca / wide.spdc
print("SDCA passes / SPDC passes:", advantage.round(2).to_dict())
assert (wide.sdca[wide.index <= 1] <= wide.spdc[wide.index <= 1]).all()
assert (advantage[wide.index >= 10] > 1).all() and advantage.is_monotonic_increasing
assert (wide.asdca > wide.sdca).all()
bound_wide = race.pivot(index="kappa_over_n", columns="method", values="bound_passes")
assert (bound_wide.asdca > bound_wide.sdca).all()
done = race[race.converged]
assert (done.passes <= done.bound_passes).all()

# %% [markdown]
# ## 2. The mini-batch interpolation
#
# ASDCA processes a mini-batch of m examples per iteration — m processors could do it in the time
# of one — and its Theorem 1 sets
#
# $$\theta = \tfrac14 \min\Big\{1,\ \sqrt{\tfrac{\gamma\lambda n}{m}},\ \gamma\lambda n,\
#   \tfrac{(\gamma\lambda n)^{2/3}}{m^{1/3}}\Big\}, \qquad \text{iterations} \approx \frac{n}{m\theta}\log\frac1\epsilon .$$
#
# For m = 1 this is SDCA's count up to a factor of at most 4; for small m, θ does not depend on m and the
# iterations fall like 1/m (a linear parallel speed-up); past m ≈ γλn they fall only like 1/√m, and
# at m = n the count is n/(nθ) ∝ √(1/(γλ)) = √κ: the iteration count of accelerated gradient
# descent, which reads all n examples per iteration.
#
# Here γλn = 10 (κ/n = 0.1), so the kink sits at m = 10.

# %%
problem = problem_at(0.1)
BATCHES = [m for m in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000) if m <= problem.n_samples]
curve = pd.DataFrame([dict(m=m, iterations_per_e=1 / theory.bound("asdca", problem, batch_size=m).rate)
                      for m in BATCHES])
reference = {name: 1 / theory.bound(name, problem).rate for name in ("sdca", "agd")}
print({k: round(v, 1) for k, v in reference.items()}, "iterations per factor e (bounds)")
(hv.Curve(curve, "m", "iterations_per_e", label="ASDCA bound").opts(line_width=3)
 * hv.Scatter([(1, reference["sdca"])], "m", "iterations_per_e", label="SDCA bound (m = 1)").opts(
     size=12, marker="square", color="black")
 * hv.Scatter([(problem.n_samples, reference["agd"])], "m", "iterations_per_e", label="AGD bound (all n)").opts(
     size=12, marker="triangle", color="gray")).opts(xlim=(0.7, 1.5 * problem.n_samples),
    logx=True, logy=True, xlabel="mini-batch size m", ylabel="iterations per factor e", width=720, height=380,
    legend_position="right", title="ASDCA's guarantee: from SDCA (m = 1) to accelerated gradient (m = n)")

# %% [markdown]
# Checked on the bound's numbers: the log–log slope is −1 up to m = γλn and −½ from there on; at
# m = 1 the count is within the factor 4 of SDCA's n + κ; at m = n it is a constant multiple of AGD's
# count (the ¼ in θ and AGD's own constant).

# %%
lgn = problem.lam * problem.gamma * problem.n_samples
logs = np.log(curve[["m", "iterations_per_e"]].to_numpy())
slopes = np.diff(logs[:, 1]) / np.diff(logs[:, 0])
small_m, large_m = curve.m.to_numpy()[1:] <= lgn, curve.m.to_numpy()[:-1] >= lgn
print("slopes:", np.round(slopes, 3))
assert np.allclose(slopes[small_m], -1.0) and np.allclose(slopes[large_m], -0.5)
ratio_m1 = curve.iterations_per_e.iloc[0] / reference["sdca"]
ratio_mn = curve.iterations_per_e.iloc[-1] / reference["agd"]
print(f"ASDCA(m=1)/SDCA = {ratio_m1:.2f}, ASDCA(m=n)/AGD = {ratio_mn:.2f}")
assert 1 <= ratio_m1 <= 4 and 1 <= ratio_mn <= 8

# %% [markdown]
# The runs: ASDCA for each m to a gap of 10⁻⁶, counting iterations (parallel rounds) and passes
# (total work).

# %%
runs = []
for m in BATCHES:
    b = theory.bound("asdca", problem, batch_size=m)
    run = cdlab.solve(problem, "asdca", batch_size=m, tol=EPS, max_passes=1.05 * b.passes(EPS), seed=SEED,
                      eval_every=max(1.0, m / 20))
    runs.append(dict(m=m, converged=run.converged, iterations=first(run.trace, "gap", EPS, "steps"),
                     passes=first(run.trace, "gap", EPS), bound_iterations=b.iterations(EPS)))
runs = pd.DataFrame(runs)
agd = cdlab.solve(problem, "agd", tol=EPS, max_passes=5000, eval_every=1)
runs

# %%
agd_iterations = first(agd.trace, "gap", EPS, "steps")
(hv.Curve(runs, "m", "iterations", label="ASDCA measured").opts(line_width=3)
 * hv.Curve(runs, "m", "bound_iterations", label="ASDCA bound").opts(line_dash="dashed")
 * hv.Scatter([(problem.n_samples, agd_iterations)], "m", "iterations", label="AGD measured (all n)").opts(
     size=12, marker="triangle", color="gray")).opts(xlim=(0.7, 1.5 * problem.n_samples),
    logx=True, logy=True, xlabel="mini-batch size m", ylabel=f"iterations to gap {EPS:g}", width=640, height=360,
    title="ASDCA: fewer iterations with larger mini-batches", legend_position="right") + \
    hv.Curve(runs, "m", "passes").opts(logx=True, logy=True, xlabel="mini-batch size m", ylabel="passes (work)",
                                       width=380, height=360, title="… at the price of more work")

# %% [markdown]
# Every run reached the gap within its bound and the iterations fall as m grows. Up to
# m = γλn the work (passes) stays that of m = 1 — a parallel speed-up for free — while at the
# largest m the work exceeds it: beyond the kink, speed-up is paid for with extra computation.
# AGD (the gray triangle), with its adaptive line search, needs more than ten times fewer
# iterations than its worst-case bound: the interpolation is a statement about guarantees.

# %%
assert runs.converged.all() and (runs.iterations <= runs.bound_iterations).all()
assert runs.iterations.is_monotonic_decreasing and runs.iterations.iloc[-1] < runs.iterations.iloc[0]
assert (runs.passes[runs.m <= lgn] <= 1.1 * runs.passes.iloc[0]).all()
assert runs.passes.iloc[-1] > 1.1 * runs.passes.iloc[0]
print(f"AGD: {agd_iterations:.0f} iterations measured, its bound {theory.bound('agd', problem).iterations(EPS):.0f}")
assert 10 * agd_iterations < theory.bound("agd", problem).iterations(EPS)

# %% [markdown]
# ## Exercises
#
# 1. **Where is the crossover on real data?** Load `rcv1_small` (d ≫ n, sparse), scale it to unit
#    rows, and find the λ where SPDC starts to beat SDCA. Is it at κ = n, as the bounds say?
# 2. **SPDC with mini-batches.** Rerun section 1 with `batch_size=10` for SPDC. Its bound is
#    n/m + R√(n/(mλγ)) iterations: which term dominates at each κ/n?
# 3. **A more aggressive θ.** ASDCA's θ is an option (`theta=...`). Try twice the theorem's value at
#    m = 1 and m = n: does the run still converge, and does the gap still certify it?
# 4. **Work vs. rounds.** If an iteration of m examples costs 1 + c·m time units on m processors
#    (c the per-example cost of synchronising), which m minimises the time to ε in section 2?
