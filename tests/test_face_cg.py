"""CG on the free face of SDCA's box-constrained dual (cdlab.solvers._face_cg): it solves the face's
quadratic (checked against numpy's dense solve), never lowers D, keeps v = Xᵀα/(λn), keeps to its
budget, refuses singular faces, and a stalled shrinking run that uses it ends at the same certified
optimum in fewer passes."""
import numpy as np
import pytest
import scipy.sparse as sp

import cdlab
from cdlab.solvers import _face_cg, dual_cd
from _helpers import mean_scaled_dataset

BOX_LOSSES = ("hinge", "smoothed_hinge", "absolute")


def setup(loss, n=60, d=40, lam=0.05, seed=0, at_bound=1 / 3):
    """A problem, a feasible α with a share ``at_bound`` of the examples at a bound, v = Xᵀα/(λn), and
    the free face."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.3, random_state=seed, format="csr")
    y = np.sign(rng.standard_normal(n)) if loss != "absolute" else rng.standard_normal(n)
    y[y == 0] = 1.0
    problem = cdlab.Problem(X, y, loss=loss, lam=lam)
    t = rng.uniform(0.2, 0.8, n) if loss != "absolute" else rng.uniform(-0.6, 0.6, n)
    bound = rng.random(n) < at_bound
    t[bound] = rng.choice([0.0, 1.0] if loss != "absolute" else [-1.0, 1.0], bound.sum())
    alpha = t * y if loss != "absolute" else t
    v = problem.v_from_alpha(alpha)
    face = _face_cg.free_face(problem, alpha, np.arange(n))
    return problem, alpha, v, face


def run(problem, alpha, v, face, budget=10**9):
    return _face_cg.face_cg(*problem.csr_arrays, problem.y, problem.loss_code, problem.s,
                            problem.lam * problem.n_samples, problem.row_norms_sq, alpha, v, face, budget)


@pytest.mark.parametrize("loss", BOX_LOSSES)
def test_face_cg_raises_the_dual_and_keeps_v_and_the_box(loss):
    problem, alpha, v, face = setup(loss)
    before, start = problem.dual(alpha), alpha.copy()
    read = run(problem, alpha, v, face)
    assert read > 0
    assert problem.dual(alpha) > before
    np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)
    t = alpha * problem.y if loss != "absolute" else alpha
    assert np.all(t >= (-1.0 if loss == "absolute" else 0.0)) and np.all(t <= 1.0)
    outside = np.setdiff1d(np.arange(problem.n_samples), face)
    np.testing.assert_array_equal(alpha[outside], start[outside])  # only the face moves


def test_face_cg_solves_the_face_quadratic():
    """The absolute loss, whose targets are free to choose: with y on the face set so that the face's
    minimiser t* (A t* = y_F − X_F v_B, v_B the bound examples' share of v) is a chosen point inside the
    box, CG from elsewhere on the face ends at t*, numpy's dense solution."""
    problem, alpha, v, face = setup("absolute", at_bound=0.85)
    X, n, lam = problem.X, problem.n_samples, problem.lam
    assert 0 < face.size <= np.count_nonzero(problem.col_nnz)
    XF = X[face].toarray()
    A = XF @ XF.T / (lam * n)
    bound = np.setdiff1d(np.arange(n), face)
    v_bound = X[bound].T @ alpha[bound] / (lam * n)
    target = np.random.default_rng(1).uniform(-0.5, 0.5, face.size)
    y = problem.y.copy()
    y[face] = A @ target + XF @ v_bound
    problem = cdlab.Problem(X, y, loss="absolute", lam=lam)
    expected = np.linalg.solve(A, y[face] - XF @ v_bound)
    np.testing.assert_allclose(expected, target, atol=1e-8)
    run(problem, alpha, v, face)
    np.testing.assert_allclose(alpha[face], expected, atol=1e-8)
    np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)


def test_face_cg_keeps_to_its_budget_and_still_raises_the_dual():
    problem, alpha, v, face = setup("hinge")
    face_nnz = int(problem.row_nnz[face].sum())
    budget = face_nnz + 5 * face_nnz  # the first residual, then at most two products
    before = problem.dual(alpha)
    read = run(problem, alpha, v, face, budget)
    assert face_nnz < read <= budget
    assert problem.dual(alpha) > before


def test_a_face_with_more_examples_than_nonempty_columns_or_an_l1_term_is_left_alone():
    problem, alpha, v, face = setup("hinge", n=200, d=10)
    assert face.size > np.count_nonzero(problem.col_nnz)
    start = alpha.copy()
    assert _face_cg.polish(problem, alpha, v, np.arange(problem.n_samples), 10**9) == 0
    np.testing.assert_array_equal(alpha, start)
    problem, alpha, v, _ = setup("hinge")
    l1 = cdlab.Problem(problem.X, problem.y, loss="hinge", lam=problem.lam, l1=1e-3)
    assert _face_cg.polish(l1, alpha, v, np.arange(problem.n_samples), 10**9) == 0


def test_a_stalled_shrinking_run_polishes_and_ends_at_the_same_certified_optimum_in_fewer_passes(monkeypatch):
    """reuters_moneyfx hinge λ = 1/n (the race's problem): coordinate ascent stalls on a face of about a
    thousand free examples; the run with face CG reads fewer nonzeros, and both runs are certified at the
    optimum they bracket together."""
    X, y = mean_scaled_dataset("reuters_moneyfx")
    problem = cdlab.Problem(X, y, loss="hinge", lam=1.0 / X.shape[0])
    tol = 1e-6 * 0.0489  # the race's relative gap at P* ≈ 0.0489
    calls = []
    polish = dual_cd.polish
    monkeypatch.setattr(dual_cd, "polish", lambda *args: calls.append(polish(*args)) or calls[-1])
    kw = dict(sampling="permutation", shrinking=True, tol=tol, max_passes=3000, seed=0)
    with_cg = cdlab.solve(problem, "sdca", **kw)
    assert calls and max(calls) > 0
    monkeypatch.setattr(dual_cd, "FACE_CG_SHARE", 0.0)
    without = cdlab.solve(problem, "sdca", **kw)
    for res in (with_cg, without):
        assert res.converged and problem.gap(res.w, res.alpha) <= tol
    for one, other in ((with_cg, without), (without, with_cg)):
        assert one.trace.primal.iloc[-1] - other.trace.dual.iloc[-1] <= 2 * tol
    assert with_cg.trace.passes.iloc[-1] < 0.6 * without.trace.passes.iloc[-1]
    assert np.all(np.diff(with_cg.trace.dual) >= -1e-15)
