"""The squared loss's CG on its dual system (cdlab.solvers._dual_cg), Newton's CG path where d ≥ DUAL_CG_RATIO·n:
the iterates of preconditioned CG on (I + XXᵀ/(λn)) α = y computed apart, certified at the independent
optimum on rcv1_small and on dense rows, its carried gap ‖r‖²/(2n) the certificate's, its work counted, and
the primal side kept where d < DUAL_CG_RATIO·n."""
import numpy as np
import pytest

import cdlab
from cdlab.solvers import newton
from _helpers import check_certified, mean_scaled_dataset


def _wide(n=60, d=400, seed=0, density=0.3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.2, 2.0, size=(n, 1))  # rows of unequal norms
    X[rng.random(X.shape) >= density] = 0.0
    y = X @ rng.standard_normal(d) / np.sqrt(d) + 0.1 * rng.standard_normal(n)
    return X, y


def _cg_by_hand(X, y, lam, steps):
    """Preconditioned CG (Nocedal & Wright Algorithm 5.3) on (I + XXᵀ/(λn)) α = y, M = its diagonal, dense numpy."""
    n = X.shape[0]
    A = np.eye(n) + X @ X.T / (lam * n)
    minv = 1.0 / np.diag(A)
    alpha = np.zeros(n)
    r = y - A @ alpha
    s = minv * r
    p = s.copy()
    for _ in range(steps):
        q = A @ p
        step = (r @ s) / (p @ q)
        alpha += step * p
        r_new = r - step * q
        s_new = minv * r_new
        p = s_new + (r_new @ s_new) / (r @ s) * p
        r, s = r_new, s_new
    return alpha


def test_the_iterates_are_preconditioned_cg_on_the_dual_system():
    X, y = _wide()
    problem = cdlab.Problem(X, y, loss="squared", lam=1e-2)
    state = newton.NewtonState(problem, "uniform", None, solver="cg")
    assert state.dual_space
    for steps in (1, 3, 7):
        state.run(steps - state.steps)
        alpha = _cg_by_hand(X, y, problem.lam, steps)
        np.testing.assert_allclose(state.alpha, alpha, rtol=1e-9, atol=1e-12)
        w = X.T @ alpha / (problem.lam * problem.n_samples)
        np.testing.assert_allclose(state.w, w, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(state.z, X @ w, rtol=1e-9, atol=1e-12)
    # two sweeps per iteration, none to start from α = 0
    assert state.nnz_touched == 2 * 7 * problem.nnz and state.data_passes == pytest.approx(14.0)


def test_a_restart_recomputes_w_and_the_residual_from_alpha():
    """Where CG stops short (rz = 0 or rounding) the run restarts from α: w = Xᵀα/(λn), z = Xw and r from them, two
    sweeps counted; the run goes on to the certified optimum."""
    X, y = _wide(seed=3)
    problem = cdlab.Problem(X, y, loss="squared", lam=1e-2)
    state = newton.NewtonState(problem, "uniform", None, solver="cg")
    state.run(3)
    state.w += 1.0  # drift that a restart must discard
    state.rz = None
    touched, steps = state.nnz_touched, state.steps
    state.run(1)
    assert state.steps == steps + 1 and state.nnz_touched == touched + 2 * problem.nnz + 2 * problem.nnz
    w = X.T @ state.alpha / (problem.lam * problem.n_samples)
    np.testing.assert_allclose(state.w, w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(state.r, y - state.alpha - X @ w, rtol=1e-9, atol=1e-12)
    check_certified(problem, "newton", tol=1e-12, solver="cg")


def test_the_carried_residual_gives_the_certified_gap():
    """At w = Xᵀα/(λn) the duality gap is exactly ‖y − α − Xw‖²/(2n): the carried r gives it without a pass."""
    X, y = _wide(seed=1)
    problem = cdlab.Problem(X, y, loss="squared", lam=1e-3)
    state = newton.NewtonState(problem, "uniform", None, solver="cg")
    for _ in range(4):
        state.run(2)
        w, alpha = state.iterate()
        gap = problem.gap(w, alpha)
        assert state._carried_gap() == pytest.approx(gap, rel=1e-8)
        assert gap == pytest.approx(np.sum((y - alpha - X @ w) ** 2) / (2 * problem.n_samples), rel=1e-8)


@pytest.mark.parametrize("lam_factor", [1.0, 0.01])
def test_certified_at_the_independent_optimum_on_rcv1_small(lam_factor):
    X, y = mean_scaled_dataset("rcv1_small")
    problem = cdlab.Problem(X, y, loss="squared", lam=lam_factor / X.shape[0])
    assert problem.n_features >= newton.DUAL_CG_RATIO * problem.n_samples
    res = check_certified(problem, "newton", tol=1e-12, solver="cg")
    assert res.alpha is not None and len(res.trace) <= 6  # the carried gap says when to checkpoint
    np.testing.assert_allclose(res.w, problem.X.T @ res.alpha / (problem.lam * problem.n_samples),
                               rtol=1e-8, atol=1e-12)


def test_dense_rows_run_as_the_csr_arrays(monkeypatch):
    from cdlab.data import dataset

    X, y = _wide(seed=2, density=0.97)
    dense = cdlab.Problem(X, y, loss="squared", lam=1e-3)
    assert dense.data.X_dense is not None
    monkeypatch.setattr(dataset, "DENSE_MIN_DENSITY", 2.0)
    sparse = cdlab.Problem(X, y, loss="squared", lam=1e-3)
    assert sparse.data.X_dense is None
    states = [newton.NewtonState(p, "uniform", None, solver="cg") for p in (dense, sparse)]
    assert states[0].sweep[-1] is dense.data.X_dense and states[1].sweep[-1] is None  # what the kernels read
    for state in states:
        state.run(5)
    assert states[0].nnz_touched == states[1].nnz_touched
    np.testing.assert_allclose(states[0].alpha, states[1].alpha, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(states[0].w, states[1].w, rtol=1e-9, atol=1e-12)
    check_certified(dense, "newton", tol=1e-14, solver="cg")  # P ≈ 6e-5: d > n nearly interpolates


def test_the_primal_side_where_features_are_fewer_than_the_ratio_asks():
    X, y = _wide(n=300, d=400)
    problem = cdlab.Problem(X, y, loss="squared", lam=1e-2)
    assert problem.n_features < newton.DUAL_CG_RATIO * problem.n_samples
    state = newton.NewtonState(problem, "uniform", None, solver="cg")
    assert not state.dual_space and state.iterate()[1] is None
    X, y = _wide()
    wide = cdlab.Problem(X, y, loss="squared", lam=1e-2)
    assert not newton.NewtonState(wide, "uniform", None, solver="cholesky").dual_space
    logistic = cdlab.Problem(X, np.where(y >= 0, 1.0, -1.0), loss="logistic", lam=1e-2)  # a Newton-CG direction
    assert not newton.NewtonState(logistic, "uniform", None, solver="cg").dual_space
