"""SPDC (Zhang & Xiao 2015): the sparse lazy implementation against a dense
numpy reference, the dual proximal step against numeric maximisation,
certified convergence on real and synthetic data, the δ-perturbation's
guarantee, and acceleration over SDCA on an ill-conditioned problem."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import cdlab
from cdlab import losses as L
from cdlab.solvers._kernels import power_table
from cdlab.solvers.spdc import _lazy_power, _log_ratio, spdc_parameters
from _helpers import first_steps, shipped_problem, sparse_problem


def soft(v, t):
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def dense_dual_prox(loss, a0, z, y, q, delta, s=1.0):
    """Closed-form argmax_a −φ*(−a) − (δ/2)a² − a z − (q/2)(a − a0)², derived
    by hand for the test (independently of cdlab.losses)."""
    if loss == "squared":
        return (y - z + q * a0) / (1.0 + delta + q)
    s = {"hinge": 0.0, "smoothed_hinge": s}[loss]
    b = (1.0 - y * z + q * a0 * y) / (s + delta + q)
    return y * np.clip(b, 0.0, 1.0)


def spdc_dense(problem, batches, weighted=False, delta=0.0):
    """Plain dense numpy SPDC (Algorithm 1 / 2 of Zhang & Xiao in α = −y
    notation); yields (w, α) after each step."""
    n, d = problem.shape
    m = batches.shape[1]
    tau, sigma, theta, _, lam, delta_dual = spdc_parameters(problem, m, weighted, delta)
    X = problem.X.toarray()
    if weighted:
        norms = np.linalg.norm(X, axis=1)
        p = 1 / (2 * n) + norms / (2 * norms.sum())
        q, c = p * n / sigma, 1 / (p * n)
    else:
        q, c = np.full(n, 1 / sigma), np.full(n, 1 / m)
    alpha, w, U = np.zeros(n), np.zeros(d), np.zeros(d)
    wbar = w.copy()
    for K in batches:
        zbar = X[K] @ wbar
        new = np.array([dense_dual_prox(problem.loss, alpha[i], zbar[b], problem.y[i], q[i], delta_dual, problem.s)
                        for b, i in enumerate(K)])
        dA = new - alpha[K]
        alpha[K] = new
        w_new = soft(w + tau * (U + (c[K] * dA) @ X[K]), tau * problem.l1) / (1 + lam * tau)
        U = U + dA @ X[K] / n
        wbar = w_new + theta * (w_new - w)
        w = w_new
        yield w.copy(), alpha.copy()


@pytest.mark.parametrize("loss,lam,l1,m,sampling,delta", [
    ("squared", 0.05, 0.0, 1, "uniform", 0.0),
    ("smoothed_hinge", 0.02, 0.0, 3, "uniform", 0.0),
    ("smoothed_hinge", 0.02, 0.01, 1, "uniform", 0.0),
    ("squared", 0.02, 0.02, 4, "uniform", 0.0),
    ("smoothed_hinge", 0.02, 0.005, 1, "weighted", 0.0),
    ("hinge", 0.02, 0.01, 2, "uniform", 0.1),
    ("squared", 0.0, 0.0, 2, "uniform", 0.05),
])
def test_sparse_lazy_updates_match_dense_reference(loss, lam, l1, m, sampling, delta):
    problem = sparse_problem(loss=loss, lam=lam, l1=l1)
    spec = cdlab.METHODS["spdc"]
    state = spec.make(problem, sampling, np.random.default_rng(7), batch_size=m, delta=delta)
    rng = np.random.default_rng(7)  # the same draws, one step at a time as run(1) makes them
    batches = np.array([state.sampler.draw(rng, 1).reshape(m) for _ in range(400)])
    worst = 0.0
    for w_ref, a_ref in spdc_dense(problem, batches, sampling == "weighted", delta):
        state.run(1)
        w, a = state.iterate()
        scale = 1.0 + np.abs(w_ref).max()
        worst = max(worst, np.abs(w - w_ref).max() / scale, np.abs(a - a_ref).max() / (1 + np.abs(a_ref).max()))
    assert worst <= 1e-12
    # the run moved somewhere (a test that cannot fail is no test)
    assert np.abs(w_ref).max() > 1e-3
    if l1 > 0:
        assert (w_ref == 0).any() and (w_ref != 0).any()


def test_lazy_power_equals_repeated_steps():
    rng = np.random.default_rng(3)
    crossings = 0
    for _ in range(3000):
        x, U = rng.normal(scale=3), rng.normal()
        tau, lam, l1 = rng.uniform(0.05, 2), rng.uniform(0.01, 1), rng.choice([0.0, rng.uniform(0, 1)])
        k = int(rng.integers(0, 60))
        # r^k from a table for some k, by exp for the others
        powers = power_table(_log_ratio(lam, tau), int(rng.integers(0, 60)))
        ref = x
        for _ in range(k):
            ref = soft(ref + tau * U, tau * l1) / (1 + lam * tau)
        crossings += np.sign(ref) != np.sign(x)
        assert abs(_lazy_power(x, k, U, tau, lam, l1, _log_ratio(lam, tau), powers) - ref) <= 1e-12 * (1 + abs(ref) + abs(x))
    assert crossings > 100  # the piecewise cases were exercised


@pytest.mark.parametrize("loss", ["squared", "logistic", "hinge", "smoothed_hinge", "absolute"])
def test_dual_prox_is_the_argmax(loss):
    """Eq. (5) in α = −y form: α⁺ = argmax_a −φ*(−a) − (δ/2)a² − a z − (q/2)(a−α)²,
    computed by losses.dual_step from the centre qα/(q+δ) with weight q+δ."""
    info = L.get_loss(loss)
    rng = np.random.default_rng(1)
    for _ in range(40):
        y = rng.choice([-1.0, 1.0]) if info.classification else rng.normal()
        a = y * rng.uniform(0.01, 0.99) if loss != "squared" else rng.normal()
        z, q, delta = rng.normal(scale=2), rng.uniform(0.1, 5), rng.choice([0.0, rng.uniform(0.01, 1)])
        got = L.dual_step(info.code, q * a / (q + delta), z, y, q + delta, 1.0)

        def neg(t):
            return -(L.neg_conj(info.code, t, y, 1.0) - 0.5 * delta * t * t - t * z - 0.5 * q * (t - a) ** 2)
        if loss == "squared":
            lo, hi = -20.0, 20.0
        elif loss == "absolute":
            lo, hi = -1.0, 1.0
        else:
            lo, hi = (0.0, 1.0) if y > 0 else (-1.0, 0.0)
        num = minimize_scalar(neg, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12}).x
        assert neg(got) <= neg(num) + 1e-12
        assert abs(got - num) <= 1e-5


@pytest.mark.parametrize("name,rows,loss,lam,l1,m,sampling", [
    ("heart_scale", None, "smoothed_hinge", 1e-2, 0.0, 1, "uniform"),
    ("heart_scale", None, "logistic", 1e-3, 1e-3, 4, "uniform"),
    ("colon-cancer", None, "squared", 1.0, 0.0, 1, "weighted"),
    ("a9a", 2000, "logistic", 1e-3, 0.0, 2, "uniform"),
    ("a9a", 2000, "smoothed_hinge", 1e-3, 1e-4, 1, "weighted"),
])
def test_reaches_certified_optimum_on_real_data(name, rows, loss, lam, l1, m, sampling):
    problem = shipped_problem(name, rows, loss=loss, lam=lam, l1=l1)
    res = cdlab.solve(problem, method="spdc", sampling=sampling, batch_size=m, tol=1e-9, max_passes=600,
                      reference=True)
    assert res.converged, res
    last = res.trace.iloc[-1]
    assert last.gap <= 1e-9
    assert abs(last.subopt) <= 1e-8 * abs(last.primal)
    assert np.all(res.trace.gap >= 0) and np.all(np.diff(res.trace.steps) > 0)
    assert last.data_passes == pytest.approx(last.steps * m / problem.n_samples)


def test_reaches_sklearn_optimum_on_synthetic_ridge():
    from sklearn.linear_model import Ridge
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 25)) * rng.uniform(0.1, 3, 25)
    y = X @ rng.standard_normal(25) + 0.3 * rng.standard_normal(300)
    lam = 1e-2
    problem = cdlab.Problem(X, y, loss="squared", lam=lam)
    w_sk = Ridge(alpha=lam * 300, fit_intercept=False, tol=1e-14, solver="cholesky").fit(X, y).coef_
    res = cdlab.solve(problem, method="spdc", batch_size=5, tol=1e-10, max_passes=800,
                      reference=problem.primal(w_sk))
    assert res.converged
    assert abs(res.trace.subopt.iloc[-1]) <= 1e-8 * problem.primal(w_sk)
    assert np.linalg.norm(res.w - w_sk) <= 1e-4 * np.linalg.norm(w_sk)


@pytest.mark.parametrize("loss", ["hinge", "absolute"])
def test_delta_perturbation_of_a_nonsmooth_loss(loss):
    """Section 3.1: with φ* + (δ/2)(·)², the solution is within δL²/2 (L = 1) of
    P*, and the gap on the original problem at the perturbed saddle point is
    at most δ/2 as well (both from φ − δ/2 ≤ φ_δ ≤ φ)."""
    problem = shipped_problem("heart_scale", loss=loss, lam=1e-2) if loss == "hinge" else \
        cdlab.Problem(*_regression(), loss="absolute", lam=1e-2)
    ref = cdlab.solve(problem, method="sdca", tol=1e-7, max_passes=5000)
    assert ref.converged
    d_star = ref.trace.dual.iloc[-1]  # ≤ P* ≤ d_star + 1e-7
    delta = 0.05
    res = cdlab.solve(problem, method="spdc", delta=delta, tol=0.0, max_passes=300, reference=d_star)
    last = res.trace.iloc[-1]
    assert -1e-7 <= last.subopt <= delta / 2
    assert last.gap <= delta / 2 * 1.001
    assert last.subopt > 1e-6  # the bias is real: δ moved the solution
    if loss == "hinge":  # the perturbed problem is exactly the smoothed hinge with s = δ
        smooth = problem.with_params(loss="smoothed_hinge", s=delta)
        assert smooth.gap(res.w, res.alpha) <= 1e-9


def _regression(n=150, d=8, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, X @ rng.standard_normal(d) + rng.standard_t(2, n)


def test_lam_zero_least_squares_with_delta():
    """λ = 0 (Table 1, smooth φ, g not strongly convex): g + (δ/2)‖w‖² puts
    P(w_δ) within (δ/2)‖w*‖² of the least-squares optimum."""
    X, y = _regression(n=200, d=10)
    w_star = np.linalg.lstsq(X, y, rcond=None)[0]
    problem = cdlab.Problem(X, y, loss="squared", lam=0.0)
    p_star = problem.primal(w_star)
    delta = 1e-3
    res = cdlab.solve(problem, method="spdc", delta=delta, tol=0.0, max_passes=400, reference=p_star)
    last = res.trace.iloc[-1]
    assert np.isinf(last.gap) and last.dual == -np.inf
    assert 0 <= last.subopt <= delta / 2 * w_star @ w_star
    # and it is the ridge solution with λ = δ (certified by that problem's gap)
    assert problem.with_params(lam=delta).gap(res.w, res.alpha) <= 1e-8


def test_bad_input_is_refused_before_any_work():
    problem = sparse_problem(loss="hinge", lam=1e-2)
    with pytest.raises(ValueError, match="delta"):
        cdlab.solve(problem, method="spdc")
    with pytest.raises(ValueError, match="lam = 0 needs delta"):
        cdlab.solve(problem.with_params(loss="squared", lam=0.0), method="spdc")
    with pytest.raises(ValueError, match="batch_size"):
        cdlab.solve(problem.with_params(loss="squared"), method="spdc", batch_size=0)
    with pytest.raises(ValueError, match="batch_size"):
        cdlab.solve(problem.with_params(loss="squared"), method="spdc", batch_size=2.5)
    with pytest.raises(ValueError, match="weighted"):
        cdlab.solve(problem.with_params(loss="squared"), method="spdc", sampling="weighted", batch_size=2)
    with pytest.raises(ValueError, match="delta"):
        cdlab.solve(problem.with_params(loss="squared"), method="spdc", delta=0.1)
    with pytest.raises(ValueError, match="delta"):
        cdlab.solve(problem, method="spdc", delta=-1.0)
    with pytest.raises(ValueError, match="sampling"):
        cdlab.solve(problem.with_params(loss="squared"), method="spdc", sampling="importance")
    with pytest.raises(ValueError, match="custom sampling probabilities"):
        cdlab.solve(problem.with_params(loss="squared"), method="spdc", sampling=np.full(40, 1 / 40))
    for bad in ("0.1", None, True, float("inf")):  # named in the message, not float()'s own error
        with pytest.raises(ValueError, match=r"delta must be (a real number|finite and ≥ 0), got"):
            cdlab.solve(problem, method="spdc", delta=bad)


def test_parameters_are_those_of_theorems_1_and_2():
    """τ, σ, θ of eq. (10) (batch m, R = max‖x_i‖), Theorem 2 (R̄ = mean‖x_i‖) and
    Section 3.1 (non-smooth loss: γ := δ; λ = 0: λ := δ), written out here."""
    problem = shipped_problem("heart_scale", loss="smoothed_hinge", lam=1e-3)
    n, R, lam, g = problem.n_samples, problem.R, 1e-3, 1.0
    Rbar = np.sqrt(problem.row_norms_sq).mean()
    for m in (1, 5, n):
        tau, sigma, theta, gam, lam_eff, dd = spdc_parameters(problem, m)
        assert tau == pytest.approx(np.sqrt(m * g / (n * lam)) / (2 * R), rel=1e-14)
        assert sigma == pytest.approx(np.sqrt(n * lam / (m * g)) / (2 * R), rel=1e-14)
        assert theta == pytest.approx(1 - 1 / (n / m + R * np.sqrt((n / m) / (lam * g))), rel=1e-14)
        assert (gam, lam_eff, dd) == (g, lam, 0.0)
    tau, sigma, theta, *_ = spdc_parameters(problem, 1, weighted=True)
    assert tau == pytest.approx(np.sqrt(g / (n * lam)) / (4 * Rbar), rel=1e-14)
    assert sigma == pytest.approx(np.sqrt(n * lam / g) / (4 * Rbar), rel=1e-14)
    assert theta == pytest.approx(1 - 1 / (2 * n + 2 * Rbar * np.sqrt(n / (lam * g))), rel=1e-14)
    # Section 3.1 with γ = λ = δ: τ = sqrt(m/n)/(2R), σ = sqrt(n/m)/(2R), θ = 1 − 1/(n/m + (R/δ) sqrt(n/m))
    both = problem.with_params(loss="hinge", lam=0.0)
    delta, m = 0.05, 3
    tau, sigma, theta, gam, lam_eff, dd = spdc_parameters(both, m, delta=delta)
    assert tau == pytest.approx(np.sqrt(m / n) / (2 * R), rel=1e-14)
    assert sigma == pytest.approx(np.sqrt(n / m) / (2 * R), rel=1e-14)
    assert theta == pytest.approx(1 - 1 / (n / m + R / delta * np.sqrt(n / m)), rel=1e-14)
    assert (gam, lam_eff, dd) == (delta, delta, delta)
    # non-smooth loss with λ > 0 (Table 1, row 3): only φ* is perturbed
    assert spdc_parameters(problem.with_params(loss="hinge"), 1, delta=delta)[3:] == (delta, lam, delta)


def test_equal_seeds_give_equal_traces():
    problem = sparse_problem(n=80, d=20, density=0.3, loss="logistic", lam=1e-2)
    r1 = cdlab.solve(problem, method="spdc", batch_size=3, seed=11, max_passes=5, tol=0)
    r2 = cdlab.solve(problem, method="spdc", batch_size=3, seed=11, max_passes=5, tol=0)
    cols = [c for c in r1.trace.columns if c != "time"]
    assert r1.trace[cols].equals(r2.trace[cols])
    assert r1.trace.nnz_touched.iloc[-1] > 0


def test_fewer_passes_than_sdca_on_an_ill_conditioned_problem():
    """colon-cancer (n = 62, d = 2000), squared loss, λ = 0.1: κ = R²/(λγ) ≈ 620 n.
    SPDC's batch complexity (1 + sqrt(κm/n)) log(1/ε) beats SDCA's (1 + κ/n) log(1/ε)."""
    problem = shipped_problem("colon-cancer", loss="squared", lam=0.1)
    assert problem.R ** 2 / (problem.lam * problem.gamma) >= 100 * problem.n_samples
    sdca = cdlab.solve(problem, method="sdca", tol=1e-6, max_passes=4000, eval_every=5)
    assert sdca.converged
    for m in (1, 2):
        spdc = cdlab.solve(problem, method="spdc", batch_size=m, tol=1e-6, max_passes=4000, eval_every=5)
        assert spdc.converged
        assert spdc.trace.passes.iloc[-1] < sdca.trace.passes.iloc[-1]
        assert spdc.trace.data_passes.iloc[-1] < sdca.trace.data_passes.iloc[-1]


@pytest.mark.parametrize("name,rows,loss,lam,sampling,m", [
    ("heart_scale", None, "smoothed_hinge", 1e-2, "uniform", 1),
    ("heart_scale", None, "smoothed_hinge", 1e-2, "uniform", 4),
    ("heart_scale", None, "smoothed_hinge", 1e-2, "weighted", 1),
    ("a9a", 1000, "logistic", 1e-3, "uniform", 2),
])
def test_measured_steps_stay_within_the_theorem_bounds(name, rows, loss, lam, sampling, m):
    """Theorem 1 (uniform, batch m) and Theorem 2 (weighted) through
    cdlab.theory.bound: the steps a run needs to reach P − P* ≤ ε stay below
    the iterations after which the theorem guarantees E[P − P*] ≤ ε."""
    from cdlab import theory
    problem = shipped_problem(name, rows, loss=loss, lam=lam)
    p_star = cdlab.reference_optimum(problem)
    bound = theory.bound("spdc", problem, sampling, batch_size=m, reference=p_star)
    assert bound.quantity == "subopt" and bound.exact
    res = cdlab.solve(problem, method="spdc", sampling=sampling, batch_size=m, tol=0, max_passes=2000,
                      reference=p_star, callback=lambda row: row["subopt"] > 1e-10)
    for eps in (1e-3, 1e-6, 1e-9):
        assert first_steps(res.trace, "subopt", eps) <= bound.iterations(eps)
