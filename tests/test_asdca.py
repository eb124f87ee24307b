"""ASDCA (accelerated mini-batch SDCA, Shalev-Shwartz & Zhang 2013): the lazy
sparse kernel against a dense numpy reference, θ of Theorem 1, certified
convergence on real and synthetic data, and the paper's claim that the
iteration count falls with the mini-batch size."""
import numpy as np
import pytest

import cdlab
from cdlab.solvers.asdca import asdca_theta
from _helpers import first_steps, shipped_problem, sparse_problem


def deriv(loss, z, y, s=1.0):
    """φ'(z; y), written out for the test."""
    if loss == "squared":
        return z - y
    if loss == "logistic":
        return -y / (1 + np.exp(y * z))
    m = 1 - y * z  # smoothed hinge
    return np.where(m <= 0, 0.0, np.where(m >= s, -y, -y * m / s))


def asdca_dense(problem, batches, theta):
    """The ASDCA procedure verbatim (their α_i = our α_i x_i), dense numpy."""
    X = problem.X.toarray()
    n, d = X.shape
    alpha, w = np.zeros(n), np.zeros(d)
    v = np.zeros(d)
    for I in batches:
        u = (1 - theta) * w + theta * v
        alpha[I] = (1 - theta) * alpha[I] - theta * deriv(problem.loss, X[I] @ u, problem.y[I], problem.s)
        v = X.T @ alpha / (problem.lam * n)
        w = (1 - theta) * w + theta * v
        yield w.copy(), alpha.copy()


@pytest.mark.parametrize("loss,m", [("squared", 1), ("logistic", 3), ("smoothed_hinge", 5)])
def test_lazy_kernel_matches_dense_reference(loss, m):
    problem = sparse_problem(n=40, d=30, density=0.15, loss=loss, lam=0.05)
    theta = asdca_theta(problem, m)
    state = cdlab.METHODS["asdca"].make(problem, "uniform", np.random.default_rng(3), batch_size=m)
    rng = np.random.default_rng(3)  # the same draws, one step at a time as run(1) makes them
    batches = np.array([state.sampler.draw(rng, 1).reshape(m) for _ in range(300)])
    worst = 0.0
    for w_ref, a_ref in asdca_dense(problem, batches, theta):
        state.run(1)
        w, a = state.iterate()
        worst = max(worst, np.abs(w - w_ref).max() / (1 + np.abs(w_ref).max()),
                    np.abs(a - a_ref).max() / (1 + np.abs(a_ref).max()))
    assert worst <= 1e-12
    assert np.abs(w_ref).max() > 1e-3


def test_theta_of_theorem_1():
    problem = shipped_problem("heart_scale", loss="logistic", lam=1e-3)
    n, gamma, lam, R2 = problem.n_samples, 4.0, 1e-3, problem.R ** 2
    g = gamma * lam * n / R2
    for m in (1, 7, 50):
        expect = 0.25 * min(1, np.sqrt(g / m), g, g ** (2 / 3) / m ** (1 / 3))
        assert asdca_theta(problem, m) == pytest.approx(expect, rel=1e-14)
    assert cdlab.METHODS["asdca"].make(problem, "uniform", np.random.default_rng(0)).theta == asdca_theta(problem, 1)


@pytest.mark.parametrize("name,rows,loss,lam,m", [
    ("heart_scale", None, "smoothed_hinge", 1e-2, 1),
    ("heart_scale", None, "squared", 1e-2, 8),
    ("a9a", 2000, "logistic", 1e-3, 4),
    ("colon-cancer", None, "squared", 10.0, 2),
])
def test_reaches_certified_optimum_on_real_data(name, rows, loss, lam, m):
    problem = shipped_problem(name, rows, loss=loss, lam=lam)
    res = cdlab.solve(problem, method="asdca", batch_size=m, tol=1e-9, max_passes=2000, reference=True)
    assert res.converged, res
    last = res.trace.iloc[-1]
    assert last.gap <= 1e-9 and abs(last.subopt) <= 1e-8 * abs(last.primal)
    assert last.data_passes == pytest.approx(last.steps * m / problem.n_samples)
    # a step reads Σ_I ‖x_i‖₀ nonzeros: never more than m rows' worth
    assert last.nnz_touched <= last.steps * m * problem.row_nnz.max()


def test_reaches_lbfgs_optimum_on_synthetic_logistic():
    from scipy.optimize import minimize
    rng = np.random.default_rng(8)
    X = rng.standard_normal((400, 15))
    y = np.sign(X @ rng.standard_normal(15) + rng.standard_normal(400))
    problem = cdlab.Problem(X, y, loss="logistic", lam=1e-2)

    def f(w):
        z = y * (X @ w)
        return np.logaddexp(0, -z).mean() + 0.005 * w @ w, -(X.T @ (y / (1 + np.exp(z)))) / 400 + 0.01 * w
    opt = minimize(f, np.zeros(15), jac=True, method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-12})
    res = cdlab.solve(problem, method="asdca", batch_size=10, tol=1e-10, max_passes=1000, reference=opt.fun)
    assert res.converged
    assert abs(res.trace.subopt.iloc[-1]) <= 1e-8 * opt.fun
    assert np.linalg.norm(res.w - opt.x) <= 1e-4 * np.linalg.norm(opt.x)


def test_iterations_fall_with_the_batch_size():
    """Theorem 1: n/(mθ) log(·) iterations, so on an ill-conditioned problem
    (κ/n = 100) a mini-batch of m = 50 needs far fewer iterations than
    SDCA's one-example steps: fewer rounds of communication, the paper's
    point (its Section 3).

    Passes do not fall, and the theorem says they cannot: examples processed
    are n/θ with θ = ¼ min{γλn, sqrt(γλn/m), …} (R = 1), i.e. 4κ for m ≤ κ/n
    and 4·sqrt(nmκ) > 4κ beyond, against SDCA's n + κ; the paper's own
    experiments find ASDCA "quite similar to SDCA when m is not very large"
    (Section 4). The run shows it too."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 20)) @ np.diag(np.linspace(0.2, 1, 20))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = X @ rng.standard_normal(20) + 0.1 * rng.standard_normal(200)
    problem = cdlab.Problem(X, y, loss="squared", lam=1.0 / (100 * 200))  # κ = R²/(λγ) = 100 n
    sdca = cdlab.solve(problem, method="sdca", tol=1e-6, max_passes=3000)
    asdca = cdlab.solve(problem, method="asdca", batch_size=50, tol=1e-6, max_passes=3000)
    assert sdca.converged and asdca.converged
    assert asdca.trace.steps.iloc[-1] < 0.5 * sdca.trace.steps.iloc[-1]
    assert asdca.trace.passes.iloc[-1] > sdca.trace.passes.iloc[-1]


def test_bad_input_is_refused():
    problem = sparse_problem(loss="hinge", lam=1e-2)
    with pytest.raises(ValueError, match="smooth"):
        cdlab.solve(problem, method="asdca")
    with pytest.raises(ValueError, match="l1"):
        cdlab.solve(problem.with_params(loss="squared", l1=1e-3), method="asdca")
    with pytest.raises(ValueError, match="theta"):
        cdlab.solve(problem.with_params(loss="squared"), method="asdca", theta=1.5)
    for bad in ("0.1", True, 0.0, np.float64("nan")):
        with pytest.raises(ValueError, match=r"theta must be (a real number|finite and in \(0, 1\)), got"):
            cdlab.solve(problem.with_params(loss="squared"), method="asdca", theta=bad)
    with pytest.raises(ValueError, match="batch_size"):
        cdlab.solve(problem.with_params(loss="squared"), method="asdca", batch_size=0)
    with pytest.raises(ValueError, match="sampling"):
        cdlab.solve(problem.with_params(loss="squared"), method="asdca", sampling="weighted")
    # a θ taken from a numpy array is a number like any other
    res = cdlab.solve(problem.with_params(loss="squared"), method="asdca", theta=np.float32(0.01), max_passes=1)
    assert res.options["theta"] == np.float32(0.01)
    with pytest.raises(ValueError, match="batch_size"):
        cdlab.solve(problem.with_params(loss="squared"), method="asdca", batch_size=10 ** 6)
    with pytest.raises(ValueError, match="lam"):
        cdlab.solve(problem.with_params(loss="squared", lam=0.0), method="asdca")


@pytest.mark.parametrize("name,rows,loss,lam,m", [
    ("heart_scale", None, "smoothed_hinge", 1e-2, 1),
    ("heart_scale", None, "smoothed_hinge", 1e-2, 8),
    ("a9a", 1000, "logistic", 1e-3, 4),
])
def test_measured_steps_stay_within_theorem_1(name, rows, loss, lam, m):
    """Theorem 1 through cdlab.theory.bound: E[gap] ≤ ε after (n/(mθ)) log(·) iterations."""
    from cdlab import theory
    problem = shipped_problem(name, rows, loss=loss, lam=lam)
    bound = theory.bound("asdca", problem, batch_size=m)
    assert bound.quantity == "gap" and bound.exact
    res = cdlab.solve(problem, method="asdca", batch_size=m, tol=1e-10, max_passes=3000)
    assert res.converged
    for eps in (1e-3, 1e-6, 1e-9):
        assert first_steps(res.trace, "gap", eps) <= bound.iterations(eps)
