# %% [markdown]
# # 1 · Duality and SDCA
#
# *Stochastic Dual Coordinate Ascent* (Shalev-Shwartz & Zhang, JMLR 2013; Prox-SDCA,
# Math. Programming 2016) solves regularised empirical risk minimisation through
# its **dual**, and uses the pair to certify every iterate. This notebook walks through
#
# 1. the primal–dual pair and weak duality,
# 2. the duality gap as a stopping certificate, next to SDCA's theoretical bound,
# 3. SDCA against SGD,
# 4. random against cyclic order,
# 5. smoothing the hinge loss.
#
# Every sentence below that states a result is followed by a cell that **checks it on this run's
# numbers** (`assert`): if a change in the code made a claim false, running the notebook would fail.
#
# Run it top to bottom (a few minutes). `SMALL = True` in the next cell uses a 2,000-example
# subset: what the test suite runs.

# %% tags=["parameters"]
SMALL = False  # True: tiny sizes, a quick check (the test suite sets this)
SEED = 0

# %%
import numpy as np
import pandas as pd
import holoviews as hv
from scipy.stats import spearmanr

import cdlab
from cdlab import theory

hv.extension("bokeh")

N_TRAIN = 2000 if SMALL else None  # None: all 32,561 examples of a9a
LAM = 1e-4
PASSES = 30


def first_passes(trace, column, eps):
    """Passes at the first checkpoint where `column` ≤ eps (inf if it never gets there)."""
    hit = trace.passes[trace[column] <= eps]
    return float(hit.iloc[0]) if len(hit) else np.inf


def floor(values, tiny=1e-16):
    """Values for a log axis: rounding can make P − P* a hair negative at the optimum."""
    return np.maximum(np.asarray(values, dtype=float), tiny)


# %% [markdown]
# ## The data
#
# `a9a` (the "adult" census data: 123 binary features, labels ±1) shipped with cdlab
# (`cdlab.load_dataset`), training and test files. As in the face-off paper's experiments, every example is divided by the mean
# example norm, so that a typical ‖xᵢ‖ is 1 and λ means the same thing on every data set.

# %%
X, y = cdlab.load_dataset("a9a")
X_test, y_test = cdlab.load_dataset("a9a.t")
if N_TRAIN is not None:
    X, y = X[:N_TRAIN], y[:N_TRAIN]
scale = np.sqrt(np.asarray(X.multiply(X).sum(axis=1))).mean()
X, X_test = X / scale, X_test / scale
print(f"train: {X.shape[0]} examples × {X.shape[1]} features, {X.nnz} nonzeros; test: {X_test.shape[0]} examples")

# %% [markdown]
# ## 1. The primal–dual pair
#
# With a loss φᵢ of the margin xᵢ·w and the L2 regulariser, the **primal** problem is
#
# $$P(w) = \frac1n\sum_{i=1}^n \phi_i(x_i^\top w) + \frac\lambda2\|w\|^2 ,$$
#
# and its **dual**, over one variable αᵢ per example, is
#
# $$D(\alpha) = \frac1n\sum_{i=1}^n -\phi_i^*(-\alpha_i) - \frac\lambda2\|w(\alpha)\|^2, \qquad
#   w(\alpha) = \frac{1}{\lambda n}\sum_i \alpha_i x_i .$$
#
# **Weak duality:** P(w) ≥ D(α) for *every* w and every α, not only at the optimum, and the two
# meet only there. Let us check it on pairs around the optimum: a near-optimal pair from SDCA
# (section 2 explains how it certifies itself), perturbed by noise of sizes from 10⁻⁵ to 1. For the
# logistic loss the dual variables must stay in their domain, αᵢyᵢ ∈ [0, 1].

# %%
problem = cdlab.Problem(X, y, loss="logistic", lam=LAM)
optimal = cdlab.solve(problem, method="sdca", tol=1e-13, max_passes=300, seed=SEED)
rng = np.random.default_rng(SEED)
pairs = []
for size in 10.0 ** rng.uniform(-5, 0, 200):
    w = optimal.w + size * rng.standard_normal(problem.n_features)
    b = np.clip(optimal.alpha * y + size * rng.standard_normal(problem.n_samples), 0.0, 1.0)  # b = α·y
    pairs.append(dict(size=size, difference=problem.primal(w) - problem.dual(b * y)))
pairs = pd.DataFrame(pairs)
hv.Scatter(pairs, "size", "difference").opts(
    logx=True, logy=True, xlabel="size of the perturbation", ylabel="P(w) − D(α)", width=520, height=300,
    title="Weak duality: P(w) − D(α) > 0 for every pair")

# %% [markdown]
# Every pair has P(w) − D(α) > 0 (a log axis could not show it otherwise), and the difference
# shrinks as the pair approaches the optimum (a rank correlation with the perturbation's size above
# 0.9):

# %%
rho = spearmanr(pairs["size"], pairs.difference).statistic
print(f"smallest P(w) − D(α) over {len(pairs)} pairs: {pairs.difference.min():.3g}; rank correlation {rho:.3f}")
assert (pairs.difference > 0).all() and rho > 0.9

# %% [markdown]
# ## 2. The duality gap is a certificate
#
# At the optimum the two meet: P(w*) = D(α*). So for any pair, the **duality gap**
# G(w, α) = P(w) − D(α) bounds how far w is from optimal: P(w) − P* ≤ P(w) − D(α), with no need to
# know P*. SDCA keeps such a pair at every step — w = w(α) — so it can stop as soon as the gap is
# below the accuracy we want.
#
# SDCA picks an example i at random and maximises D over αᵢ alone (a 1-D problem, closed form or
# a safeguarded Newton step), then updates w ← w + Δαᵢ xᵢ/(λn): one step reads one example.
#
# Below: one SDCA run to a gap of 10⁻¹⁰, with P* from an independent high-precision reference
# solve (`reference=True`) so that we can compare the certificate with the true suboptimality.

# %%
run = cdlab.solve(problem, method="sdca", tol=1e-10, max_passes=200, seed=SEED, reference=True, eval_every=1)
trace = run.trace
p_star = trace.attrs["reference"]
print(run)

values = hv.Overlay([hv.Curve(trace, "passes", "primal", label="P(w)"),
                     hv.Curve(trace, "passes", "dual", label="D(α)"),
                     hv.HLine(p_star).opts(color="gray", line_dash="dashed")]).opts(
    title="P falls and D rises to P* (dashed)", ylabel="objective", width=520, height=300, legend_position="right")
values

# %% [markdown]
# The primal values come down to P* from above and the dual values go up to it from below, at every
# checkpoint:

# %%
assert (trace.dual <= p_star + 1e-12).all() and (trace.primal >= p_star - 1e-12).all()
assert run.converged and trace.gap.iloc[-1] <= 1e-10

# %% [markdown]
# On a log scale, the gap next to the two suboptimalities it controls, and the guarantee of
# Shalev-Shwartz & Zhang's Theorem 1 from `cdlab.theory`: for a (1/γ)-smooth loss, after
# k steps the expected gap is at most (1/θ)(1 − θ)ᵏ ε₀ with 1/θ = n + R²/(λγ).

# %%
bound = theory.bound("sdca", problem)
print(bound.source)
print(f"1/θ = n + R²/(λγ) = {1 / bound.rate:.0f} steps, i.e. {1 / bound.rate / problem.n_samples:.2f} passes "
      f"per factor e; bound for gap 1e-10: {bound.passes(1e-10):.0f} passes")
curves = trace.assign(subopt=floor(trace.subopt), dual_subopt=floor(p_star - trace.dual),
                      gap=floor(trace.gap), bound=bound.curve(trace.passes.values))
hv.Overlay([hv.Curve(curves, "passes", "gap", label="gap P − D (computable)"),
            hv.Curve(curves, "passes", "subopt", label="P − P* (needs P*)"),
            hv.Curve(curves, "passes", "dual_subopt", label="P* − D"),
            hv.Curve(curves, "passes", "bound", label="Theorem 1 bound on E[gap]").opts(line_dash="dashed")]).opts(
    logy=True, ylabel="error", title="SDCA: the gap certifies P − P*", width=800, height=360, legend_position="right")

# %% [markdown]
# What the plot shows, checked: the gap is never below either suboptimality (it is their sum), the
# run is below its theoretical guarantee at every checkpoint, and the convergence is linear: the
# gap shrinks by a roughly constant factor per pass.

# %%
assert (trace.gap >= trace.subopt - 1e-15).all() and (trace.gap >= p_star - trace.dual - 1e-15).all()
assert np.allclose(trace.gap, trace.subopt + (p_star - trace.dual), rtol=1e-6, atol=1e-13)
assert (trace.gap <= bound.curve(trace.passes.values)).all()
log_gap, half = np.log10(trace.gap.to_numpy()), len(trace) // 2
per_pass = [(log_gap[0] - log_gap[half]) / (trace.passes.iloc[half] - trace.passes.iloc[0]),
            (log_gap[half] - log_gap[-1]) / (trace.passes.iloc[-1] - trace.passes.iloc[half])]
print(f"gap divided by 10^{per_pass[0]:.2f} per pass in the first half of the run, 10^{per_pass[1]:.2f} in the second")
assert 0.5 < per_pass[0] / per_pass[1] < 2
print(f"gap after 1 pass: {trace.gap.iloc[1]:.2e}; after {trace.passes.iloc[-1]:.0f} passes: "
      f"{trace.gap.iloc[-1]:.2e}; the bound guaranteed {bound.curve(trace.passes.values)[-1]:.2e}")

# %% [markdown]
# ## 3. SDCA against SGD
#
# The slides put the two update rules side by side: SGD (Pegasos) takes
# w ← (1 − 1/t) w − φᵢ'(xᵢ·w) xᵢ/(λt); SDCA moves along the same xᵢ, but by the amount that
# maximises the dual. The difference: SDCA needs no step size and has a stopping criterion.
#
# Here SDCA against SGD with the Pegasos step and with tuned constant and decaying steps
# (a grid of η₀ over four decades, keeping each variant's best; the check below makes sure the
# best is inside the grid, not at an end of it), for the same budget of passes over the data.

# %%
ETA0 = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
sgd_runs = {"SGD Pegasos 1/(λt)": cdlab.solve(problem, "sgd", schedule="pegasos", max_passes=PASSES, tol=0,
                                             eval_every=1,
                                             seed=SEED, reference=p_star)}
for step in ("constant", "decaying"):
    tried = [cdlab.solve(problem, "sgd", schedule=step, eta0=eta0, max_passes=PASSES, tol=0, eval_every=1, seed=SEED,
                         reference=p_star) for eta0 in ETA0]
    best = min((r for r in tried if not r.diverged), key=lambda r: r.trace.subopt.iloc[-1])
    assert best.options["eta0"] not in (ETA0[0], ETA0[-1]), "the best step is at an end of the grid: widen it"
    sgd_runs[f"SGD {step}, best η₀ = {best.options['eta0']:g}"] = best
sdca = cdlab.solve(problem, "sdca", max_passes=PASSES, tol=0, eval_every=1, seed=SEED, reference=p_star)

hv.Overlay([hv.Curve((r.trace.passes, floor(r.trace.subopt)), "passes", "P − P*", label=name)
            for name, r in {"SDCA": sdca, **sgd_runs}.items()]).opts(
    logy=True, title="SDCA vs SGD (logistic loss)", width=800, height=360, legend_position="right")

# %% [markdown]
# SDCA converges linearly; every SGD variant slows to a crawl: over the second half of the budget
# (from pass 15 to pass 30) SDCA's P − P* falls by more than a factor 10³ (or to rounding level),
# each SGD variant's by less than a factor 20. After the whole budget, SDCA is more than a thousand
# times closer to P* than the best SGD variant:

# %%
def second_half_gain(run):
    """P − P* at the first checkpoint past half the budget, divided by P − P* at the end."""
    sub = np.maximum(run.trace.subopt.to_numpy(), 1e-16)
    return sub[np.argmax(run.trace.passes.to_numpy() >= PASSES / 2)] / sub[-1]


best_sgd = min(r.trace.subopt.iloc[-1] for r in sgd_runs.values())
print(f"after {PASSES} passes: SDCA P − P* = {sdca.trace.subopt.iloc[-1]:.2e}, best SGD {best_sgd:.2e}")
print("second-half gains:", {name: round(float(second_half_gain(r)), 1) for name, r in {"SDCA": sdca, **sgd_runs}.items()})
assert second_half_gain(sdca) > 1e3 and all(second_half_gain(r) < 20 for r in sgd_runs.values())
assert best_sgd > 1000 * max(sdca.trace.subopt.iloc[-1], 1e-16)

# %% [markdown]
# SGD's iterate can be certified too: any w gives a dual point α(w) = −φ'(Xw) and a gap. But that
# gap stays large, so SGD never *knows* it is done, while SDCA's gap went below 10⁻¹⁰:

# %%
for name, r in sgd_runs.items():
    print(f"{name:32s} gap at the end {r.trace.gap.iloc[-1]:.2e}")
assert min(r.trace.gap.iloc[-1] for r in sgd_runs.values()) > 1e3 * max(sdca.trace.gap.iloc[-1], 1e-16)

# %% [markdown]
# ## 4. Random order matters
#
# Dual coordinate ascent in a fixed **cyclic** order (SMO, early LIBLINEAR) is older than SDCA. The
# slides' point: the linear rate above is proved for coordinates drawn *at random*; a fixed order
# has no such guarantee, and shuffling the data once and then cycling is not the same thing.
# `cdlab.theory` refuses to give a bound for cyclic order:

# %%
try:
    theory.bound("sdca", problem, sampling="cyclic")
    raise AssertionError("cdlab.theory gave a bound for cyclic order")
except ValueError as err:
    print("ValueError:", err)

# %% [markdown]
# Four orders on the same problem: i.i.d. uniform draws, a fresh random permutation every pass,
# cyclic in the file's order, and cyclic after shuffling the examples once.

# %%
shuffle = np.random.default_rng(SEED).permutation(problem.n_samples)
shuffled = cdlab.Problem(X[shuffle], y[shuffle], loss="logistic", lam=LAM)
orders = {"uniform (i.i.d.)": cdlab.solve(problem, "sdca", sampling="uniform", max_passes=PASSES, tol=0,
                                          eval_every=1, seed=SEED),
          "new permutation every pass": cdlab.solve(problem, "sdca", sampling="permutation", max_passes=PASSES,
                                                    tol=0, eval_every=1, seed=SEED),
          "cyclic, file order": cdlab.solve(problem, "sdca", sampling="cyclic", max_passes=PASSES, tol=0,
                                            eval_every=1),
          "cyclic, shuffled once": cdlab.solve(shuffled, "sdca", sampling="cyclic", max_passes=PASSES, tol=0,
                                               eval_every=1)}
hv.Overlay([hv.Curve((r.trace.passes, floor(r.trace.gap)), "passes", "duality gap", label=name)
            for name, r in orders.items()]).opts(
    logy=True, title="SDCA: random vs cyclic order", width=800, height=360, legend_position="right")

# %% [markdown]
# On this data both cyclic orders fall far behind both random ones: after the budget their gap is
# more than a hundred times larger. Shuffling once did not rescue the cyclic order.

# %%
final = {name: r.trace.gap.iloc[-1] for name, r in orders.items()}
print(pd.Series(final).map("{:.2e}".format).to_string())
worst_random = max(final["uniform (i.i.d.)"], final["new permutation every pass"], 1e-16)
assert min(final["cyclic, file order"], final["cyclic, shuffled once"]) > 100 * worst_random

# %% [markdown]
# ## 5. Smoothing the hinge loss
#
# The hinge loss max(0, 1 − yz) of the SVM is not smooth, and SDCA's rate for it is only
# Õ(n + 1/(λε)). The slides replace it by the **smoothed hinge**, quadratic on a window of width s
# around the kink:
#
# $$\phi_s(z) = \begin{cases} 0 & yz \ge 1\\ 1 - yz - s/2 & yz \le 1 - s \\ (1-yz)^2/(2s) & \text{otherwise,}\end{cases}$$
#
# which is (1/s)-smooth, so the linear rate applies with γ = s. Two claims of the slides: smoothing
# *improves training time* and has a *mild effect on the 0–1 test error*. Here the gap of SDCA for
# s from 0 (the hinge itself) to 1, and each solution's error on the a9a test file.

# %%
SMOOTHING = (0.0, 0.01, 0.1, 0.5, 1.0)
smooth_runs, summary = {}, []
for s in SMOOTHING:
    p = (cdlab.Problem(X, y, loss="hinge", lam=LAM) if s == 0 else
         cdlab.Problem(X, y, loss="smoothed_hinge", lam=LAM, s=s))
    r = cdlab.solve(p, "sdca", max_passes=50, tol=0, eval_every=1, seed=SEED)
    smooth_runs[s] = r
    summary.append(dict(s=s, passes_to_1e3=first_passes(r.trace, "gap", 1e-3),
                        passes_to_1e5=first_passes(r.trace, "gap", 1e-5), gap_at_50=r.trace.gap.iloc[-1],
                        test_error=float(np.mean(np.where(X_test @ r.w >= 0, 1.0, -1.0) != y_test))))
summary = pd.DataFrame(summary).set_index("s")
hv.Overlay([hv.Curve((r.trace.passes, floor(r.trace.gap)), "passes", "duality gap",
                     label="hinge" if s == 0 else f"smoothed, s = {s:g}")
            for s, r in smooth_runs.items()]).opts(
    logy=True, title="SDCA's gap for smoothed hinge losses", width=800, height=360, legend_position="right")

# %%
summary

# %% [markdown]
# The more smoothing, the faster the gap falls: the passes needed to reach a gap of 10⁻³ never
# increase with s, and the smoothest loss reaches it in fewer passes than the hinge. The test error,
# meanwhile, moves by less than one percentage point.

# %%
reach = summary.passes_to_1e3.to_numpy()
assert np.all(np.diff(reach) <= 0), reach
assert reach[-1] < reach[0]
spread = summary.test_error.max() - summary.test_error.min()
print(f"test error from {summary.test_error.min():.2%} to {summary.test_error.max():.2%} (spread {spread:.2%})")
assert spread < 0.01

# %% [markdown]
# ## Exercises
#
# 1. **Where does the gap come from?** Write G(w(α), α) as a sum over examples of Fenchel–Young
#    terms φᵢ(xᵢ·w) + φᵢ*(−αᵢ) + αᵢ xᵢ·w ≥ 0 and check numerically, for the run `run`, that the sum
#    equals `trace.gap.iloc[-1]`. Which examples contribute most to the gap early on?
# 2. **λ and the rate.** Theorem 1 predicts about n + R²/(λγ) steps per factor e. Rerun section 2
#    with λ = 10⁻³ and λ = 10⁻⁵ and compare the measured slope of log(gap) per pass with
#    `bound.rate`. Is the bound's *slope* tight even where its constant is not?
# 3. **Tuning SGD.** Extend the η₀ grid of section 3. Can any step size make SGD's final P − P*
#    match SDCA's? What does the gap of SGD's iterate tell you about when to stop?
# 4. **Breaking cyclic order.** Sort the examples by label (`np.argsort(y)`) and run cyclic SDCA.
#    What happens to the gap in the first passes, and why is a fixed order dangerous for data
#    stored sorted?
