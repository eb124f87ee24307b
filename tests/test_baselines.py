"""The baselines (sgd, svrg, sag, saga, agd, gd, lbfgs): convergence to an
independent optimum, lazy sparse updates = dense reference step by step, SGD's
noise floor against its theory, divergence reported cleanly, work counting,
and the shape of Frostig et al. 2015's Figure 3."""
import functools
import gc
import importlib.util
import threading
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

import cdlab
from cdlab.data import shipped_dir
from cdlab.solvers.base import State
from cdlab.solvers.saga import SAGState
from cdlab.solvers.sgd import SGDState
from cdlab.solvers.svrg import SVRGState
from _helpers import first_steps

DATA = shipped_dir()
LINEAR = ["svrg", "sag", "saga", "agd", "gd", "lbfgs"]


@functools.lru_cache(maxsize=None)
def real(name, rows=None):
    """A shared dataset, rows scaled by the mean example norm (face-off §7)."""
    X, y = load_svmlight_file(str(DATA / f"{name}.bz2"))
    X = sp.csr_matrix(X[:rows] if rows else X)
    X = sp.csr_matrix(X / np.sqrt(X.multiply(X).sum(axis=1)).mean())
    return X, (y[:rows] if rows else y)


def synthetic_sparse(n=300, d=200, density=0.05, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    X = X + sp.csr_matrix((np.ones(n), (np.arange(n), rng.integers(0, d, n))), shape=(n, d))  # no empty rows
    X = sp.csr_matrix(sp.diags(1.0 / np.sqrt(X.multiply(X).sum(axis=1)).A.ravel()) @ X)  # unit rows
    y = np.sign(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n))
    return X, y


def dense_gauss(n=300, d=10, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n)


PROBLEMS = {
    "heart_scale/logistic": lambda: cdlab.Problem(*real("heart_scale"), loss="logistic", lam=1e-2),
    "colon-cancer/squared": lambda: cdlab.Problem(*real("colon-cancer"), loss="squared", lam=1e-1),
    "a9a[:2000]/logistic": lambda: cdlab.Problem(*real("a9a", 2000), loss="logistic", lam=1e-2),
    "synthetic/smoothed_hinge": lambda: cdlab.Problem(*synthetic_sparse(), loss="smoothed_hinge", lam=1e-2),
}


def rel_err(value, ref):
    return abs(value - ref) / max(1.0, abs(ref))


# --------------------------------------------------------------------------- convergence
@pytest.mark.parametrize("data", sorted(PROBLEMS))
@pytest.mark.parametrize("method", LINEAR)
def test_linearly_convergent_methods_reach_the_certified_optimum(method, data):
    """P(w) within 1e-8 (relative) of P* from an independent certified SDCA solve, and the
    run's own duality gap through α(w) certifies it."""
    problem = PROBLEMS[data]()
    p_star = cdlab.reference_optimum(problem)
    res = cdlab.solve(problem, method, max_passes=600, tol=1e-9, reference=p_star)
    assert res.converged, res.message or res.status
    last = res.trace.iloc[-1]
    assert last.gap <= 1e-9 and rel_err(last.primal, p_star) <= 1e-8
    assert np.all(res.trace.gap >= res.trace.subopt - 1e-12)  # the gap bounds P − P* at every checkpoint


@pytest.mark.parametrize("method", ["agd", "gd", "lbfgs"])
def test_elastic_net_through_the_prox_or_the_split(method):
    problem = cdlab.Problem(*real("a9a", 2000), loss="logistic", lam=1e-2, l1=1e-3)
    p_star = cdlab.reference_optimum(problem)  # Prox-SDCA, certified
    res = cdlab.solve(problem, method, max_passes=600, tol=1e-11, reference=p_star)
    assert res.converged and rel_err(res.trace.primal.iloc[-1], p_star) <= 1e-8
    assert np.sum(res.w == 0) > 0  # the prox / split produce exact zeros, unlike a subgradient method
    ref = cdlab.solve(problem, "sdca", tol=1e-13, max_passes=2000)
    # λ-strong convexity: ‖w − w*‖² ≤ 2(P(w) − P*)/λ ≤ 2·gap/λ, for both runs
    radius = sum(np.sqrt(2 * r.trace.gap.iloc[-1] / problem.lam) for r in (res, ref))
    assert np.linalg.norm(res.w - ref.w) <= radius


@pytest.mark.parametrize("method", LINEAR)
def test_unregularised_least_squares_against_lstsq(method):
    """λ = 0, F strongly convex (n > d, full rank): P* from numpy's lstsq; the driver reports
    dual = −inf and gap = inf, and subopt works with a given reference."""
    X, y = dense_gauss()
    problem = cdlab.Problem(X, y, loss="squared", lam=0.0)
    w_ls = np.linalg.lstsq(X, y, rcond=None)[0]
    p_star = problem.primal(w_ls)
    res = cdlab.solve(problem, method, max_passes=400, tol=1e-9, reference=p_star)
    tr = res.trace
    assert res.status == "max_passes"  # no certificate without λ: the budget runs out
    assert np.all(tr.dual == -np.inf) and np.all(tr.gap == np.inf)
    assert np.all(np.isfinite(tr.subopt)) and tr.subopt.iloc[-1] <= 1e-8 * p_star
    assert np.linalg.norm(res.w - w_ls) <= 1e-3 * np.linalg.norm(w_ls)


@pytest.mark.parametrize("method,data", [
    ("svrg", "a9a[:2000]/logistic"),  # epoch 2n, η = 1/(10 L_max) meet Thm 1's α < 1 here only
    ("saga", "a9a[:2000]/logistic"),
    ("saga", "colon-cancer/squared"),
    ("gd", "colon-cancer/squared"),
    ("agd", "colon-cancer/squared"),
    ("gd", "synthetic/smoothed_hinge"),
    ("agd", "synthetic/smoothed_hinge"),
    ("sgd", "heart_scale/logistic"),
])
def test_measured_steps_stay_within_the_theory_layer_bound(method, data):
    """cdlab.theory.bound (Johnson & Zhang Thm 1, Defazio et al. Thm 1, Nesterov 2013 §3 and
    Thm 6, Shamir & Zhang Thm 1 for the Pegasos step): the steps a run with the default options
    needs to reach P − P* ≤ ε stay below the bound's iterations for ε (checked at the first
    checkpoint below ε, so the measured count is, if anything, overstated). SVRG and SAGA run the
    step of their theorems, step_size="L_max" (their default line search has no bound)."""
    from cdlab import theory
    problem = PROBLEMS[data]()
    p_star = cdlab.reference_optimum(problem)
    options = {"step_size": "L_max"} if method in ("svrg", "saga") else {}
    bound = theory.bound(method, problem, reference=p_star, **options)
    assert bound.quantity == "subopt" and bound.exact
    epsilons = (1e-3,) if method == "sgd" else (1e-3, 1e-6, 1e-9)  # SGD's bound is O(1/(λε))
    res = cdlab.solve(problem, method, tol=0, max_passes=300, reference=p_star,
                      callback=lambda row: row["subopt"] > min(epsilons), **options)
    for eps in epsilons:
        assert first_steps(res.trace, "subopt", eps) <= bound.iterations(eps), eps


def test_svrg_refusal_names_an_epoch_whose_bound_holds_and_the_run_meets_it():
    """Where the default epoch 2n is too short for Johnson & Zhang's α < 1 at η = 1/(10 L_max), the refusal names the epoch
    50 L_max/μ (α = 1/2 at η = 1/(10 L_max)); with it the bound applies and a run stays within it."""
    import re
    from cdlab import theory
    from test_spdc import first_steps
    problem = PROBLEMS["a9a[:2000]/logistic"]().with_params(lam=1e-3)
    p_star = cdlab.reference_optimum(problem)
    with pytest.raises(ValueError, match="epoch_length=") as info:
        theory.bound("svrg", problem, reference=p_star, step_size="L_max")
    epoch = int(re.search(r"epoch_length=(\d+)", str(info.value)).group(1))
    L_max = problem.R ** 2 / problem.gamma + problem.lam
    assert epoch == int(np.ceil(50 * L_max / problem.lam)) > 2 * problem.n_samples
    bound = theory.bound("svrg", problem, reference=p_star, epoch_length=epoch, step_size="L_max")
    assert bound.rate == pytest.approx(0.5, abs=1e-3)  # α = 1/4 + 1/4 up to the ceiling
    res = cdlab.solve(problem, "svrg", epoch_length=epoch, step_size="L_max", tol=0, max_passes=300, reference=p_star,
                      callback=lambda row: row["subopt"] > 1e-6)
    for eps in (1e-3, 1e-6):
        assert first_steps(res.trace, "subopt", eps) <= bound.iterations(eps), eps


# --------------------------------------------------------------------------- SGD theory
def _sgd_mean_subopt(problem, p_star, passes, seeds=4, **options):
    runs = [cdlab.solve(problem, "sgd", max_passes=passes, tol=0.0, seed=s, reference=p_star, eval_every=1.0,
                        **options) for s in range(seeds)]
    return runs[0].trace.passes.to_numpy(), np.mean([r.trace.subopt.to_numpy() for r in runs], axis=0)


@functools.lru_cache(maxsize=None)
def _sgd_problem():
    X, _ = dense_gauss(n=1000, d=20, seed=3)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.sign(X @ np.random.default_rng(4).standard_normal(20) + 0.3 * np.random.default_rng(5).standard_normal(1000))
    problem = cdlab.Problem(X, y, loss="logistic", lam=0.1)
    return problem, cdlab.reference_optimum(problem)


def test_pegasos_sgd_stays_below_its_noise_floor_bound():
    """Step 1/(λt): E‖w_t − w*‖² ≤ 4G²/(λ²t) (Rakhlin, Shamir & Sridharan 2012, Lemma 1) with
    G = 2R for the logistic loss (|φ'| ≤ 1 and ‖w_t‖ ≤ R/λ along Pegasos' iterates), so
    E[P(w_t) − P*] ≤ (L_P/2)·4G²/(λ²t) with L_P = ‖X‖₂²/(4n) + λ. The mean over seeds must stay
    below it, and fall like 1/t (×64 passes → at least ×16 lower)."""
    problem, p_star = _sgd_problem()
    passes, sub = _sgd_mean_subopt(problem, p_star, 64)
    n, lam = problem.n_samples, problem.lam
    L_P = np.linalg.norm(problem.X.toarray(), 2) ** 2 / (4 * n) + lam
    t = passes[1:] * n
    bound = 0.5 * L_P * 4 * (2 * problem.R) ** 2 / (lam ** 2 * t)
    assert np.all(sub[1:] <= bound)
    assert sub[64] <= sub[1] / 16


def test_constant_step_sgd_plateaus_at_a_floor_proportional_to_the_step():
    """With a constant step SGD converges linearly to a noise ball of size O(η): quartering
    η quarters the floor (accepted: a factor 2 to 8), averaged over late passes and seeds."""
    problem, p_star = _sgd_problem()
    floors = []
    for eta0 in (0.4, 0.1, 0.025):
        _, sub = _sgd_mean_subopt(problem, p_star, 32, schedule="constant", eta0=eta0)
        floors.append(sub[8:].mean())
    ratios = np.array(floors[:-1]) / np.array(floors[1:])
    assert np.all((ratios > 2) & (ratios < 8)), ratios


def test_decaying_step_sgd_keeps_improving():
    """η_t = η₀/√t: the noise floor shrinks like 1/√t (×64 passes → at least ×2.5 lower)."""
    problem, p_star = _sgd_problem()
    _, sub = _sgd_mean_subopt(problem, p_star, 64, schedule="decaying", eta0=1.0)
    assert sub[64] <= sub[1] / 2.5 and sub[64] > 0


@pytest.mark.parametrize("loss", ["hinge", "absolute"])
def test_sgd_on_nonsmooth_losses_uses_subgradients_and_converges(loss):
    X, y = real("heart_scale")
    if loss == "absolute":
        y = X @ np.linspace(-1, 1, X.shape[1])
    problem = cdlab.Problem(X, y, loss=loss, lam=0.1)
    p_star = cdlab.reference_optimum(problem)
    res = cdlab.solve(problem, "sgd", max_passes=200, tol=0.0, reference=p_star)
    sub = res.trace.subopt.to_numpy()
    assert 0 <= sub[-1] <= 2e-3 and sub[-1] < sub[1] / 5


# --------------------------------------------------------------------------- lazy = dense
class FixedOrder:
    """A sampler that hands out a preset index sequence, chunk after chunk."""

    def __init__(self, order):
        self.order, self.pos = order, 0

    def draw(self, rng, k):
        out = self.order[self.pos:self.pos + k]
        self.pos += k
        return out


def _dphi(loss, z, y):
    return z - y if loss == "squared" else -y / (1.0 + np.exp(y * z))


def dense_sgd(X, y, loss, lam, order, eta):
    w = np.zeros(X.shape[1])
    for t, i in enumerate(order, start=1):
        et = eta(t)
        w = (1 - et * lam) * w - et * _dphi(loss, X[i] @ w, y[i]) * X[i]
    return w


def _phi(loss, z, y):
    return 0.5 * (z - y) ** 2 if loss == "squared" else np.logaddexp(0.0, -y * z)


class DenseLineSearch:
    """The line-search step of cdlab.solvers.step_rules written from its statement (Schmidt, Le Roux &
    Bach 2017 §4.6, the decay applied whole): L starts at mean ‖x_i‖²/γ; before each step L is halved
    if n steps were done since the last halving, then doubled while φ(z − g r/L) > φ(z) − g² r/(2L)
    (r = ‖x_i‖², g = φ'(z), z = x_i·w) and L < r/γ; the step is η = c/(L + shift)."""

    def __init__(self, X, y, loss, c, shift):
        self.X, self.y, self.loss, self.c, self.shift = X, y, loss, c, shift
        self.gamma = 1.0 if loss == "squared" else 4.0
        self.L = np.mean(np.sum(X * X, axis=1)) / self.gamma
        self.k = 0

    def current(self):
        """L after the steps done (a halving due after the last step included)."""
        return self.L / 2 if self.k > 0 and self.k % self.X.shape[0] == 0 else self.L

    def __call__(self, i, w):
        self.L = self.current()
        self.k += 1
        z, r, yi = self.X[i] @ w, self.X[i] @ self.X[i], self.y[i]
        g = _dphi(self.loss, z, yi)
        if g * g * r >= 1e-16:
            while self.L < r / self.gamma and (_phi(self.loss, z - g * r / self.L, yi)
                                               > _phi(self.loss, z, yi) - g * g * r / (2 * self.L)):
                self.L *= 2
        return self.c / (self.L + self.shift)


def _eta(eta, i, w):
    """A step size, or a rule called with (i, w) before each step."""
    return eta(i, w) if callable(eta) else eta


def dense_svrg(X, y, loss, lam, order, eta, m, kappa=0.0, center=None):
    n, d = X.shape
    c = np.zeros(d) if center is None else center
    w = np.zeros(d)
    for k, i in enumerate(order):
        if k % m == 0:
            w_snap = w.copy()
            d_snap = _dphi(loss, X @ w_snap, y)
            g_snap = X.T @ d_snap / n
        v = (_dphi(loss, X[i] @ w, y[i]) - d_snap[i]) * X[i] + g_snap + lam * w + kappa * (w - c)
        w = w - _eta(eta, i, w) * v
    return w


def dense_sag(X, y, loss, lam, order, eta, saga):
    n, d = X.shape
    w, gbar, table = np.zeros(d), np.zeros(d), np.zeros(n)
    for i in order:
        g = _dphi(loss, X[i] @ w, y[i])
        eta_k = _eta(eta, i, w)
        if saga:
            w = (w - eta_k * ((g - table[i]) * X[i] + gbar)) / (1 + eta_k * lam)
            gbar = gbar + (g - table[i]) * X[i] / n
        else:
            gbar = gbar + (g - table[i]) * X[i] / n
            w = (1 - eta_k * lam) * w - eta_k * gbar
        table[i] = g
    return w


@pytest.mark.parametrize("loss", ["logistic", "squared"])
@pytest.mark.parametrize("method", ["sgd_pegasos", "sgd_decaying", "svrg", "svrg_prox_center", "sag", "saga"])
def test_lazy_sparse_updates_equal_the_dense_algorithm_step_by_step(method, loss):
    """After every number of steps m = 1 … 60, run as one chunk (so coordinates lag up to m
    steps and catch up in closed form), the sparse iterate equals the dense algorithm's."""
    X, y = synthetic_sparse(n=25, d=40, density=0.12, seed=7)
    lam = 0.05
    problem = cdlab.Problem(X, y, loss=loss, lam=lam)
    Xd = X.toarray()
    order = np.random.default_rng(11).integers(0, 25, 60)
    center = np.linspace(-1, 1, 40)
    for m in range(1, 61):
        if method.startswith("sgd"):
            rule = method.split("_")[1]
            state = SGDState(problem, "uniform", None, schedule=rule, eta0=None if rule == "pegasos" else 0.3)
            eta = (lambda t: 1 / (lam * t)) if rule == "pegasos" else (lambda t: 0.3 / np.sqrt(t))
            expected = dense_sgd(Xd, y, loss, lam, order[:m], eta)
        elif method.startswith("svrg"):
            kappa, c = (0.7, center) if method == "svrg_prox_center" else (0.0, None)
            state = SVRGState(problem, "uniform", None, step_size=0.05, epoch_length=9, center=c, kappa=kappa)
            expected = dense_svrg(Xd, y, loss, lam, order[:m], 0.05, 9, kappa, c)
        else:
            state = SAGState(problem, "uniform", None, step_size=0.2, saga=method == "saga")
            expected = dense_sag(Xd, y, loss, lam, order[:m], 0.2, method == "saga")
        state.sampler = FixedOrder(order)
        state.run(m)
        w, alpha = state.iterate()
        assert alpha is None
        np.testing.assert_allclose(w, expected, rtol=1e-10, atol=1e-12, err_msg=f"{method} after {m} steps")


@pytest.mark.parametrize("loss", ["logistic", "squared"])
@pytest.mark.parametrize("method", ["svrg", "sag", "saga"])
def test_line_search_steps_equal_the_dense_algorithm_step_by_step(method, loss):
    """The default step (SAG's line search, cdlab.solvers.step_rules) with its early-ended kernel calls and
    catch-ups: after every m = 1 … 120 steps in one run(m) call the iterate equals the dense algorithm fed
    DenseLineSearch's steps; the run crosses two halvings (n = 25) and doubles L on the way."""
    from cdlab.solvers.saga import SAGA_STEPS, SAG_STEPS
    from cdlab.solvers.svrg import SVRG_STEPS
    X, y = synthetic_sparse(n=25, d=40, density=0.12, seed=7)
    X = X.multiply(np.exp(np.linspace(-2, 2, 25))[:, None]).tocsr()  # row norms over two decades
    lam = 0.05
    problem = cdlab.Problem(X, y, loss=loss, lam=lam)
    Xd = X.toarray()
    order = np.random.default_rng(11).integers(0, 25, 120)
    c = {"svrg": SVRG_STEPS, "sag": SAG_STEPS, "saga": SAGA_STEPS}[method]["linesearch"]
    for m in (1, 2, 24, 25, 26, 51, 77, 120):
        rule = DenseLineSearch(Xd, y, loss, c, lam)
        if method == "svrg":
            state = SVRGState(problem, "uniform", None, epoch_length=9)
            expected = dense_svrg(Xd, y, loss, lam, order[:m], rule, 9)
        else:
            state = SAGState(problem, "uniform", None, saga=method == "saga")
            expected = dense_sag(Xd, y, loss, lam, order[:m], rule, method == "saga")
        state.sampler = FixedOrder(order)
        state.run(m)
        assert state.step_rule.L == rule.current() and state.eta == c / (rule.current() + lam)
        np.testing.assert_allclose(state.iterate()[0], expected, rtol=1e-10, atol=1e-12,
                                   err_msg=f"{method} after {m} steps")
    assert rule.current() != np.mean(np.sum(Xd * Xd, axis=1)) / rule.gamma / 2 ** 4  # the search moved L


# shipped data as it comes (no row scaling), where the old default η from L_max stalled: (name, rows, loss, λn)
RAW = [("colon-cancer", None, "logistic", 1.0), ("mushrooms", 2000, "logistic", 0.01),
       ("heart_scale", None, "squared", 1.0)]


def raw_problem(name, rows, loss, lam_n):
    X, y = cdlab.load_dataset(name)
    X, y = (X, y) if rows is None else (X[:rows], y[:rows])
    return cdlab.Problem(X, y, loss=loss, lam=lam_n / X.shape[0])


@pytest.mark.parametrize("method", ["sag", "saga", "svrg"])
@pytest.mark.parametrize("case", RAW, ids=[f"{c[0]}/{c[2]}/{c[3]}" for c in RAW])
def test_default_step_certifies_unnormalised_shipped_data(method, case):
    """The default step (SAG's line search on L) reaches the duality gap 1e-6 within 300 passes on raw
    shipped data, as SDCA does; the theorem's step 1/(c L_max) is still > 1e-4 away on colon-cancer."""
    problem = raw_problem(*case)
    res = cdlab.solve(problem, method, tol=1e-6, max_passes=300)
    assert res.converged, res
    if case[0] == "colon-cancer":
        old = cdlab.solve(problem, method, step_size="L_max", tol=1e-6, max_passes=300)
        assert old.trace.gap.iloc[-1] > 1e-4, old


def test_step_rule_constants_are_their_formulas():
    """η = c/(L + λ + κ): L = max ‖x_i‖²/γ for "L_max", the line search's start mean ‖x_i‖²/γ, a number as given."""
    from cdlab.solvers.step_rules import StepRule
    problem = raw_problem("heart_scale", None, "logistic", 1.0)
    sq = np.asarray(problem.X.multiply(problem.X).sum(axis=1)).ravel()
    lam, kappa = problem.lam, 0.3
    rules = {"linesearch": 0.5, "L_max": 0.25}
    assert StepRule(problem, "L_max", rules, lam + kappa).eta == pytest.approx(0.25 / (sq.max() / 4 + lam + kappa),
                                                                              rel=1e-14)
    assert StepRule(problem, "linesearch", rules, lam).eta == pytest.approx(0.5 / (sq.mean() / 4 + lam), rel=1e-14)
    assert StepRule(problem, 0.01, rules, lam).eta == 0.01


def test_chunking_does_not_change_the_iterates():
    """The driver's chunk sizes only change where coordinates are caught up, not the iterates."""
    problem = PROBLEMS["synthetic/smoothed_hinge"]()
    order = np.random.default_rng(5).integers(0, problem.n_samples, 1000)
    for method in ("svrg", "sag", "saga", "sgd"):
        states = [cdlab.METHODS[method].make(problem, "uniform", None, **cdlab.METHODS[method].options)
                  for _ in range(2)]
        for state, chunks in zip(states, ([1000], [1, 7, 250, 2, 600, 140])):
            state.sampler = FixedOrder(order)
            for k in chunks:
                state.run(k)
        np.testing.assert_allclose(states[0].iterate()[0], states[1].iterate()[0], rtol=1e-10, atol=1e-13)


# --------------------------------------------------------------------------- SVRG as APPA's oracle
def test_svrg_oracle_minimises_the_proximal_subproblem():
    """SVRGState (APPA's oracle) on F(w) + (λ/2)‖w‖² + (κ/2)‖w − c‖²: for the squared loss its minimiser solves
    (XᵀX/n + (λ+κ)I) w = Xᵀy/n + κc. Each epoch contracts the error; the inputs stay untouched."""
    X, y = dense_gauss(n=200, d=15, seed=2)
    problem = cdlab.Problem(X, y, loss="squared", lam=0.0)
    kappa, c = 2.0, np.linspace(-1, 1, 15)
    n = problem.n_samples
    w_opt = np.linalg.solve(X.T @ X / n + kappa * np.eye(15), X.T @ y / n + kappa * c)

    def f(w):
        return problem.primal(w) + 0.5 * kappa * np.sum((w - c) ** 2)

    w0, c0 = np.ones(15), c.copy()
    errs = [f(w0) - f(w_opt)]
    w, rng = w0, np.random.default_rng(0)
    for _ in range(12):
        state = SVRGState(problem, "uniform", rng, center=c, kappa=kappa, w0=w)
        state.run(state.epoch_length)  # one epoch: a snapshot and m = 2n inner steps
        assert state.steps == 2 * n and state.nnz_touched == problem.nnz * 3 and state.data_passes == 3
        w = state.w.copy()
        errs.append(f(w) - f(w_opt))
    floor = 1e-13 * f(w_opt)  # rounding of f itself
    assert np.all(np.array(errs[1:]) <= 0.5 * np.array(errs[:-1]) + floor)
    assert errs[-1] <= 1e-12 * f(w_opt)
    assert np.array_equal(w0, np.ones(15)) and np.array_equal(c, c0)
    with pytest.raises(ValueError, match="kappa must be finite and ≥ 0, got -1.0"):
        SVRGState(problem, "uniform", rng, kappa=-1.0, w0=w0)
    with pytest.raises(ValueError, match="center must be a finite array of shape"):
        SVRGState(problem, "uniform", rng, center=np.ones(3), w0=w0)
    with pytest.raises(ValueError, match="epoch_length must be an integer ≥ 1, got 0"):
        SVRGState(problem, "uniform", rng, epoch_length=0, w0=w0)


# --------------------------------------------------------------------------- divergence
@pytest.mark.parametrize("method,options", [
    ("sgd", dict(schedule="constant", eta0=1e3)),
    ("svrg", dict(step_size=1e3)),
    ("sag", dict(step_size=1e3)),
    ("saga", dict(step_size=1e3)),
    ("gd", dict(step_size=1e3)),
])
def test_a_diverging_step_is_reported_not_drawn(method, options):
    problem = cdlab.Problem(*real("heart_scale"), loss="squared", lam=1e-3)
    res = cdlab.solve(problem, method, max_passes=50, **options)
    assert res.diverged and "diverged" in res.message and res.trace.attrs["status"] == "diverged"
    numeric = res.trace[["primal", "dual", "gap"]].to_numpy()
    assert np.all(np.isfinite(numeric)) and np.all(np.isfinite(res.w))
    assert res.trace.passes.iloc[-1] < 50


def test_pegasos_on_the_squared_loss_diverges_cleanly():
    """Pegasos' first step is 1/λ: with the unbounded squared-loss gradient and small λ it blows
    up — a real property of the step rule, reported as divergence with advice about the step."""
    problem = cdlab.Problem(*real("heart_scale"), loss="squared", lam=1e-4)
    res = cdlab.solve(problem, "sgd", schedule="pegasos", max_passes=20)
    assert res.diverged and len(res.trace) >= 1 and np.all(np.isfinite(res.trace.primal))
    assert "try a smaller step (option 'schedule' or 'eta0')" in res.message


@pytest.mark.parametrize("lam", [1e-2, 1e-4])
def test_the_default_sgd_step_converges_on_the_squared_loss(lam):
    """schedule='auto' picks the inverse step eta0/(1 + eta0·λt), eta0 = 1/L_max (Bottou 2012) for the
    squared loss: on heart_scale as distributed the Pegasos default diverged at both λ."""
    from cdlab.solvers.sgd import default_schedule
    problem = cdlab.Problem(*cdlab.load_dataset("heart_scale"), loss="squared", lam=lam)
    assert default_schedule(problem) == "inverse"
    p_star = cdlab.reference_optimum(problem)
    res = cdlab.solve(problem, "sgd", max_passes=200, tol=0.0, reference=p_star)
    sub = res.trace.subopt.to_numpy()
    assert res.status == "max_passes" and np.all(np.isfinite(sub)) and np.all(sub >= 0)
    assert sub[-1] < sub[1] / 3, sub[[1, -1]]


@pytest.mark.parametrize("loss", ["squared", "logistic", "hinge", "smoothed_hinge", "absolute"])
@pytest.mark.parametrize("lam", [1e-2, 1e-5, 0.0])
def test_the_default_sgd_step_never_diverges(loss, lam):
    """Every loss sgd accepts, at every λ it accepts (λ = 0: the decaying step): no divergence,
    and at a moderate λ the last primal value below the first. (Pegasos' first steps, 1/λ, put
    the iterate at up to R/λ: at λ = 1e-5 it is still coming back after 30 passes, bounded.)"""
    X, y = cdlab.load_dataset("heart_scale")
    if loss in ("squared", "absolute"):
        y = X @ np.linspace(-1, 1, X.shape[1]) + 0.1 * y
    res = cdlab.solve(cdlab.Problem(X, y, loss=loss, lam=lam), "sgd", max_passes=30, tol=0.0)
    assert res.status == "max_passes" and np.all(np.isfinite(res.trace.primal))
    if lam != 1e-5:
        assert res.trace.primal.iloc[-1] < res.trace.primal.iloc[0]


def test_divergence_advice_speaks_of_what_the_method_has(monkeypatch):
    """A method without a step size is not told to take a smaller one."""
    from cdlab.solvers.base import METHODS, MethodSpec
    from cdlab.solvers.driver import divergence_advice
    for name, spec in METHODS.items():
        advice = divergence_advice(spec)
        assert ("smaller step" in advice) == any(k in spec.options for k in ("step_size", "schedule", "eta0")), (name, advice)

    class Blowup(State):  # a state whose iterate leaves every bound after one chunk
        steps = nnz_touched = 0
        data_passes, steps_per_pass = 0.0, 1

        def __init__(self, problem):
            self.w = np.zeros(problem.n_features)

        def run(self, k):
            self.steps += k
            self.nnz_touched += k
            self.w[:] = 1e300

        def iterate(self):
            return self.w, None

    monkeypatch.setitem(METHODS, "blowup", MethodSpec(name="blowup", make=lambda p, s, rng: Blowup(p),
                                                      source="a test", kind="dual", axis="examples"))
    res = cdlab.solve(PROBLEMS["heart_scale/logistic"](), "blowup", max_passes=3)
    assert res.diverged and "blowup has no step size to reduce" in res.message and "smaller" not in res.message


# --------------------------------------------------------------------------- contract
def test_work_counting():
    problem = PROBLEMS["synthetic/smoothed_hinge"]()
    n, nnz = problem.n_samples, problem.nnz
    order = np.random.default_rng(0).integers(0, n, 3 * n)
    state = SVRGState(problem, "uniform", None, epoch_length=2 * n)
    state.sampler = FixedOrder(order)
    state.run(2 * n + 5)  # one epoch plus 5 steps of the next: two snapshots
    assert state.nnz_touched == 2 * nnz + problem.row_nnz[order[:2 * n + 5]].sum()
    assert state.steps == 2 * n + 5 and state.data_passes == pytest.approx(2 + (2 * n + 5) / n)
    state = SAGState(problem, "uniform", None, saga=True)
    state.sampler = FixedOrder(order)
    state.run(n)
    assert state.nnz_touched == problem.row_nnz[order[:n]].sum() and state.data_passes == 1.0
    for method in ("agd", "gd", "lbfgs"):
        tr = cdlab.solve(problem, method, max_passes=10, tol=0.0).trace
        assert np.all(tr.nnz_touched % nnz == 0) and np.allclose(tr.data_passes, tr.passes)
    tr = cdlab.solve(problem, "lbfgs", max_passes=10, tol=0.0, eval_every=1.0).trace
    assert list(tr.steps) == list(range(len(tr)))  # one evaluation per one-pass checkpoint interval


@pytest.mark.parametrize("method", ["sgd", "svrg", "sag", "saga"])
def test_equal_seeds_give_equal_traces(method):
    problem = PROBLEMS["heart_scale/logistic"]()
    a, b = (cdlab.solve(problem, method, max_passes=5, tol=0.0, seed=4) for _ in range(2))
    cols = ["steps", "nnz_touched", "passes", "primal", "gap"]
    assert a.trace[cols].equals(b.trace[cols])
    c = cdlab.solve(problem, method, max_passes=5, tol=0.0, seed=5)
    assert not np.array_equal(a.w, c.w)


def test_lbfgs_keeps_its_memory_across_checkpoints_and_stops_its_thread():
    """Chunked L-BFGS must be the same optimiser as one uninterrupted scipy run: same
    evaluations → same accepted iterates, whatever the checkpoint interval."""
    problem = PROBLEMS["a9a[:2000]/logistic"]()
    a = cdlab.solve(problem, "lbfgs", max_passes=40, tol=0.0, eval_every=1)
    b = cdlab.solve(problem, "lbfgs", max_passes=40, tol=0.0, eval_every=8)
    assert a.trace.steps.iloc[-1] == b.trace.steps.iloc[-1] == 40
    np.testing.assert_array_equal(a.w, b.w)
    assert cdlab.solve(problem, "lbfgs", max_passes=40, tol=0.0, memory=3).trace.primal.iloc[-1] \
        > a.trace.primal.iloc[-1]  # memory 30 beats memory 3 at equal work
    del a, b
    gc.collect()
    for _ in range(100):
        if not any(t.name == "cdlab-lbfgs" for t in threading.enumerate()):
            break
        threading.Event().wait(0.02)
    assert not any(t.name == "cdlab-lbfgs" for t in threading.enumerate())


@pytest.mark.parametrize("method,options,match", [
    ("sgd", dict(schedule="pegasos"), "needs lam > 0"),
    ("sgd", dict(schedule=0.1), "schedule must be one of"),
    ("sgd", dict(schedule="constant", eta0=-1.0), "eta0 must be finite and > 0, got -1.0"),
    ("sgd", dict(schedule="constant", eta0="big"), "eta0 must be a real number, got 'big'"),
    ("sgd", dict(schedule="pegasos", eta0=0.5), "Pegasos step 1/\\(λt\\) has no eta0"),
    ("svrg", dict(step_size=0.0), "step_size must be finite and > 0, got 0.0"),
    ("svrg", dict(epoch_length=0), "epoch_length"),
    ("svrg", dict(epoch_length=2.5), "epoch_length"),
    ("saga", dict(step_size="big"), r"step_size must be one of \['linesearch', 'L_max'\] or a number > 0, got 'big'"),
    ("saga", dict(step_size=None), "step_size must be a real number, got None"),
    ("gd", dict(step_size=float("nan")), "step_size must be finite and > 0, got nan"),
    ("lbfgs", dict(memory=0), "memory"),
])
def test_bad_options_are_refused_before_any_work(method, options, match):
    problem = cdlab.Problem(*dense_gauss(n=30, d=4), loss="squared", lam=0.0)
    with pytest.raises(ValueError, match=match):
        cdlab.solve(problem, method, **options)


@pytest.mark.parametrize("method", ["svrg", "sag", "saga", "agd", "gd", "lbfgs"])
def test_smooth_only_methods_refuse_nonsmooth_losses(method):
    problem = cdlab.Problem(*real("heart_scale"), loss="hinge", lam=1e-2)
    with pytest.raises(ValueError, match="smoothed_hinge"):
        cdlab.solve(problem, method)


@pytest.mark.parametrize("method", ["sgd", "svrg", "sag", "saga"])
def test_stochastic_methods_refuse_l1(method):
    problem = cdlab.Problem(*real("heart_scale"), loss="logistic", lam=1e-2, l1=1e-3)
    with pytest.raises(ValueError, match="l1"):
        cdlab.solve(problem, method)


# --------------------------------------------------------------------------- Figure 3
def _lambda_sweep_module():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "lambda_sweep.py"
    spec = importlib.util.spec_from_file_location("lambda_sweep", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_lambda_sweep_has_the_shape_of_appa_figure_3():
    """Frostig et al. 2015, Fig. 3 on a9a[:1000] with the squared loss (F = mean loss, λ₀ = 0),
    "20 stages (or the equivalent)": 20·n steps for SGD, SDCA and Dual APPA (whose score is its
    stage output x^(20)), 20 passes of work for SVRG; θ = 1e-6 … 1e2, every θ checked:

    - SGD (step θ/√t) and SVRG (step θ) diverge for every θ past a threshold inside the grid
      although well-tuned they get within 5% of F(0) − F*;
    - SDCA (ridge θ) never diverges, never ends above F(0), and past its best θ degrades
      monotonically;
    - Dual APPA (proximal weight θ, first dual point α = 0, i.e. w = 0 as in Section 5) never
      diverges, ends below F(0) and within a factor 1.5 of SDCA's F − F* at every θ, and past
      SDCA's best θ (the side where SGD and SVRG break) better than SDCA. At tiny θ (κn ≪ ‖x_i‖²)
      its one-pass stages are SDCA's passes (both near-Kaczmarz steps), so the two agree there
      (measured: within 16% over 4 seeds, both at Kaczmarz's noise floor, < 0.6 (F(0) − F*));
    - Algorithm 3's printed start α = ŷ(0) (dual_start="gradient") fails at the smallest θ:
      w = Xᵀŷ(0)/(κn) is not brought back by one-pass stages; reported as diverged or as a
      number above F(0), never as a finite number past the driver's divergence factor."""
    mod = _lambda_sweep_module()
    X, y = load_svmlight_file(str(DATA / "a9a.bz2"))
    base = cdlab.Problem(X[:1000], y[:1000], loss="squared", lam=0.0)
    n = base.n_samples
    grid = tuple(10.0 ** k for k in range(-6, 3))
    df = mod.sweep(base, grid=grid, methods=mod.ALL_METHODS, passes=20)
    assert sorted(df.method.unique()) == ["dual_appa", "dual_appa_gradient", "sdca", "sgd", "svrg"]
    f_star, f0 = mod.erm_optimum(base), base.primal(np.zeros(base.n_features))
    w_ls = np.linalg.lstsq(base.X.toarray(), base.y, rcond=None)[0]  # rank-deficient: one-hot groups
    assert rel_err(f_star, base.primal(w_ls)) <= 1e-10
    by = {m: g.sort_values("theta") for m, g in df.groupby("method")}
    excess = {m: (g.objective.to_numpy() - f_star) / (f0 - f_star) for m, g in by.items()}
    for m in ("sgd", "sdca", "dual_appa"):  # every run that did not diverge got exactly 20·n steps
        ok = by[m].status.to_numpy() != "diverged"
        assert np.all(by[m].steps.to_numpy()[ok] == 20 * n), m
    for m in ("sgd", "svrg"):
        th = mod.threshold(df, m)
        assert th is not None and th <= 10.0, (m, th)  # a sharp break inside the grid
        assert np.nanmin(excess[m]) < 0.05, m
    sdca = excess["sdca"]
    assert np.all(np.isfinite(sdca)) and np.all(sdca <= 1.0)
    best = int(np.argmin(sdca))
    assert best < len(grid) - 1 and np.all(np.diff(sdca[best:]) >= -1e-9)
    assert sdca[-1] < 1.0  # at θ = 100 SDCA is biased towards 0 but still better than w = 0
    appa = excess["dual_appa"]
    assert np.all(by["dual_appa"].status.to_numpy() == "budget")  # never diverged, at any θ
    assert np.all(np.isfinite(appa)) and np.all(appa < 1.0)  # below F(0) at every θ
    assert np.all(appa <= 1.5 * sdca)  # never much worse than SDCA, at any θ
    assert np.all(appa[best:] < sdca[best:])  # better where the ridge's bias dominates: re-centring undoes it
    gradient = excess["dual_appa_gradient"]
    status = by["dual_appa_gradient"].status.to_numpy()
    assert status[0] == "diverged" or gradient[0] > 1.0  # Algorithm 3's printed start fails at tiny θ
    # every run is either a number below the driver's divergence factor or reported as diverged
    assert np.all((status == "diverged") == ~np.isfinite(gradient))
    assert np.all(gradient[np.isfinite(gradient)] * (f0 - f_star) + f_star <= 1e6 * (f0 + 1))


# --------------------------------------------------------------------------- L-SVRG (method="lsvrg")
class FixedCoins:
    """L-SVRG's coins from a preset boolean sequence (True: w̃ ← x^k after step k), as refresh gaps."""

    def __init__(self, coins):
        self.heads = list(np.flatnonzero(coins) + 1)  # the 1-based step numbers that refresh
        self.step = 0

    def next_gap(self):
        nxt = self.heads.pop(0) if self.heads else self.step + 10 ** 9
        gap, self.step = nxt - self.step, nxt
        return gap


def dense_lsvrg(X, y, loss, lam, order, coins, eta):
    """Kovalev, Horváth & Richtárik 2020, Algorithm 1 written densely: g = ∇f_i(x) − ∇f_i(w̃) + ∇f(w̃),
    x⁺ = x − ηg, and w̃ ← x (the iterate before the step) where the step's coin is True."""
    n, d = X.shape
    w = np.zeros(d)
    d_ref = _dphi(loss, X @ w, y)
    g_ref = X.T @ d_ref / n
    for i, coin in zip(order, coins):
        v = (_dphi(loss, X[i] @ w, y[i]) - d_ref[i]) * X[i] + g_ref + lam * w
        w_next = w - _eta(eta, i, w) * v
        if coin:
            d_ref = _dphi(loss, X @ w, y)
            g_ref = X.T @ d_ref / n
        w = w_next
    return w


def loopless_state(problem, order, coins, **options):
    state = cdlab.METHODS["lsvrg"].make(problem, "uniform", None, **options)
    state.sampler, state.coins = FixedOrder(order), FixedCoins(coins)
    return state


@pytest.mark.parametrize("loss", ["logistic", "squared"])
@pytest.mark.parametrize("step", [0.05, "linesearch"])
def test_loopless_svrg_equals_the_dense_algorithm_step_by_step(loss, step):
    """lsvrg fed the same indices and coins as the dense Algorithm 1 (a refresh at the first step,
    two in a row, long gaps): equal iterates after every m = 1 … 70 steps run as one chunk, and after 70
    steps run in uneven chunks; with the line search the dense run is fed DenseLineSearch's steps."""
    from cdlab.solvers.svrg import LOOPLESS_STEPS
    X, y = synthetic_sparse(n=25, d=40, density=0.12, seed=7)
    X = X.multiply(np.exp(np.linspace(-1, 1, 25))[:, None]).tocsr()
    lam = 0.05
    problem = cdlab.Problem(X, y, loss=loss, lam=lam)
    Xd = X.toarray()
    rng = np.random.default_rng(11)
    order = rng.integers(0, 25, 70)
    coins = rng.random(70) < 0.15
    coins[[0, 30, 31]] = True
    for m in list(range(1, 71)) + [(3, 29, 1, 1, 36)]:
        chunks = m if isinstance(m, tuple) else (m,)
        steps = sum(chunks)
        eta = DenseLineSearch(Xd, y, loss, LOOPLESS_STEPS["linesearch"], lam) if step == "linesearch" else step
        expected = dense_lsvrg(Xd, y, loss, lam, order[:steps], coins[:steps], eta)
        state = loopless_state(problem, order, coins, step_size=step)
        for k in chunks:
            state.run(k)
        np.testing.assert_allclose(state.iterate()[0], expected, rtol=1e-10, atol=1e-12,
                                   err_msg=f"{step} after {m} steps")


def test_loopless_svrg_counts_every_refresh_as_a_pass():
    """Work: the full gradient at w₀ and one at each refresh read nnz(X) each (one data pass); a step
    reads ‖x_i‖₀ (1/n pass). Checked against the coins and indices fed."""
    problem = cdlab.Problem(*synthetic_sparse(n=30, d=20, seed=3), loss="logistic", lam=0.01)
    rng = np.random.default_rng(2)
    order, coins = rng.integers(0, 30, 200), rng.random(200) < 0.05
    state = loopless_state(problem, order, coins)
    state.run(120)
    state.run(80)
    refreshes = int(coins.sum())
    assert refreshes >= 5
    assert state.steps == 200
    assert state.nnz_touched == problem.row_nnz[order].sum() + problem.nnz * (1 + refreshes)
    assert state.data_passes == pytest.approx(200 / 30 + 1 + refreshes, rel=1e-14)


def test_loopless_coins_are_the_seeds_and_not_the_chunks():
    """The refresh coins come from the run's seed: equal seeds give equal runs; with the same indices, the
    iterates do not depend on how the steps are chunked; another seed refreshes elsewhere."""
    problem = PROBLEMS["synthetic/smoothed_hinge"]()
    order = np.random.default_rng(5).integers(0, problem.n_samples, 1000)
    finals = []
    for seed, chunks in ((1, [1000]), (1, [1, 7, 250, 2, 600, 140]), (2, [1000])):
        state = cdlab.METHODS["lsvrg"].make(problem, "uniform", np.random.default_rng(seed))
        state.sampler = FixedOrder(order)
        for k in chunks:
            state.run(k)
        finals.append(state.iterate()[0])
    np.testing.assert_allclose(finals[0], finals[1], rtol=1e-10, atol=1e-13)
    assert not np.allclose(finals[0], finals[2], rtol=1e-6)  # seed 2's coins refresh at other steps
    a, b = (cdlab.solve(problem, "lsvrg", max_passes=5, tol=0.0, seed=4) for _ in range(2))
    assert a.trace[["steps", "nnz_touched", "primal", "gap"]].equals(b.trace[["steps", "nnz_touched", "primal", "gap"]])


@pytest.mark.parametrize("data", ["a9a[:2000]/logistic", "colon-cancer/squared"])
def test_loopless_svrg_certifies_and_agrees_with_an_independent_optimum(data):
    """The theorem's step 1/(6 L_max) and p = 1/n reach the duality gap 1e-9, and P agrees with L-BFGS-B's."""
    from _helpers import check_certified
    check_certified(PROBLEMS[data](), "lsvrg", max_passes=3000)


@pytest.mark.parametrize("data", ["heart_scale/logistic", "a9a[:2000]/logistic", "colon-cancer/squared",
                                  "synthetic/smoothed_hinge", "raw colon-cancer/logistic"])
def test_loopless_bound_holds_at_every_checkpoint(data):
    """Kovalev et al. Thm 5 through cdlab.theory.bound("lsvrg"): at every checkpoint of runs with
    the default options (3 seeds), the measured P − P* is below the bound at the run's step count, and below
    the curve the page draws against passes (the expected refresh cost and the start's full pass counted);
    on mean-scaled data and on colon-cancer as shipped."""
    from cdlab import theory
    problem = raw_problem(*RAW[0]) if data.startswith("raw") else PROBLEMS[data]()
    p_star = cdlab.reference_optimum(problem)
    bound = theory.bound("lsvrg", problem, reference=p_star)
    assert bound.quantity == "subopt" and bound.exact and bound.rate > 0
    for seed in range(3):
        tr = cdlab.solve(problem, "lsvrg", tol=0, max_passes=60, reference=p_star, seed=seed).trace
        assert np.all(tr.subopt.to_numpy() <= bound.curve_at_steps(tr.steps.to_numpy())), seed
        assert np.all(tr.subopt.to_numpy() <= bound.curve(tr.passes.to_numpy())), seed
        assert tr.subopt.iloc[-1] < 0.5 * tr.subopt.iloc[0]  # the runs move (raw colon-cancer the least)


def test_the_theorem_step_is_not_the_default_because_raw_data_stalls_it():
    """Why svrg with its line search, not lsvrg, is the variance-reduced default: on colon-cancer as shipped
    (logistic, λ = 1/n) L-SVRG's theorem step 1/(6 L_max) is still far from the gap 1e-6 after 300 passes, where the default
    certifies it (test_default_step_certifies_unnormalised_shipped_data)."""
    problem = raw_problem(*RAW[0])
    res = cdlab.solve(problem, "lsvrg", tol=1e-6, max_passes=300)
    assert not res.converged and res.trace.gap.iloc[-1] > 1e-2, res


def test_loopless_bound_is_its_formula():
    """The sympy bound = the statement computed by hand: ρ = min(ημ, p/2), prefactor (L_P/2)(2/μ + 8η²L/p),
    T(ε) = log(prefactor ε₀/ε)/ρ, work nnz/n + p·nnz a step and nnz at the start; η = 1/(6 L_max), p = 1/n
    by default, or as given."""
    from cdlab import theory
    problem = PROBLEMS["colon-cancer/squared"]()
    X, n = problem.X.toarray(), problem.n_samples
    lam, gamma = problem.lam, problem.gamma
    L = np.max(np.sum(X * X, axis=1)) / gamma + lam
    mu = lam + np.linalg.eigvalsh(X.T @ X / n)[0]  # μ_F of the squared loss
    L_P = lam + np.linalg.norm(X, 2) ** 2 * (1 + 1e-9) / (gamma * n)  # padded as Data.spectral_norm_sq is
    eps0, eps = 0.7, 1e-6
    for options, eta, p in (({}, 1 / (6 * L), 1 / n), ({"step_size": 1e-3, "refresh_prob": 0.3}, 1e-3, 0.3)):
        bound = theory.bound("lsvrg", problem, eps0=eps0, **options)
        rho = min(eta * mu, p / 2)
        prefactor = L_P / 2 * (2 / mu + 8 * eta ** 2 * L / p)
        assert bound.rate == pytest.approx(rho, rel=1e-12)
        assert bound.eps0 == pytest.approx(prefactor * eps0, rel=1e-12)
        iters = np.log(prefactor * eps0 / eps) / rho
        assert bound.iterations(eps) == pytest.approx(iters, rel=1e-12)
        nnz = problem.nnz
        assert bound.passes(eps) == pytest.approx((iters * (nnz / n + p * nnz) + nnz) / nnz, rel=1e-12)
        k = np.array([0.0, 10.0, 1e4])
        np.testing.assert_allclose(bound.curve_at_steps(k), prefactor * eps0 * (1 - rho) ** k, rtol=1e-12)


@pytest.mark.parametrize("options,match", [
    (dict(epoch_length=100), r"unknown option\(s\) \['epoch_length'\]"),
    (dict(refresh_prob=0.0), r"refresh_prob must be finite and in \(0, 1\], got 0.0"),
    (dict(refresh_prob=1.5), r"refresh_prob must be finite and in \(0, 1\], got 1.5"),
    (dict(refresh_prob="often"), "refresh_prob must be a real number, got 'often'"),
    (dict(step_size=-1.0), "step_size must be finite and > 0, got -1.0"),
])
def test_bad_loopless_options_are_refused_before_any_work(options, match):
    problem = cdlab.Problem(*dense_gauss(n=30, d=4), loss="squared", lam=0.1)
    with pytest.raises(ValueError, match=match):
        cdlab.solve(problem, "lsvrg", **options)


@pytest.mark.parametrize("method,options,match", [
    ("lsvrg", dict(step_size="linesearch"), "step_size='linesearch' .* is covered by no theorem"),
    ("lsvrg", dict(step_size=1.0), r"needs η ≤ 1/\(6 L_max\)"),
    ("lsvrg", dict(step_size=0), "step_size must be > 0, got 0.0"),
    ("lsvrg", dict(epoch_length=10), r"unknown option\(s\) \['epoch_length'\]"),
    ("lsvrg", dict(refresh_prob=2.0), r"refresh_prob must be finite and in \(0, 1\]"),
    ("svrg", dict(refresh_prob=0.1, step_size="L_max"), r"unknown option\(s\) \['refresh_prob'\]"),
    ("svrg", dict(), "or run method='lsvrg'"),  # the default line search: the refusal names the variant with a bound
])
def test_loopless_bound_refusals_are_clear(method, options, match):
    from cdlab import theory
    with pytest.raises(ValueError, match=match):
        theory.bound(method, PROBLEMS["heart_scale/logistic"](), **options)


@pytest.mark.parametrize("p", [0.05, 0.5])
def test_loopless_coins_refresh_with_probability_p(p):
    """RefreshCoins' gaps are Geometric(p): over 20 000 steps the refreshes number 20 000·p within 4
    standard deviations (the exact tests feed fixed coins, so this is the coins' own check)."""
    from cdlab.solvers.svrg import RefreshCoins
    coins, steps, refreshes = RefreshCoins(np.random.default_rng(0), p), 0, 0
    while True:
        steps += coins.next_gap()
        if steps > 20_000:
            break
        refreshes += 1
    assert abs(refreshes - 20_000 * p) <= 4 * np.sqrt(20_000 * p * (1 - p))


def test_lsvrg_records_the_step_it_ran():
    """A run's options name its step rule, not None: the store key says what ran."""
    problem = PROBLEMS["heart_scale/logistic"]()
    assert cdlab.solve(problem, "lsvrg", max_passes=2).options == {"step_size": "L_max", "refresh_prob": None}
    assert cdlab.solve(problem, "svrg", max_passes=2).options["step_size"] == "linesearch"
