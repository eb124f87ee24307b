"""Projected Newton on SDCA's box-constrained dual (cdlab.solvers._box_newton), the polish of a singular free
face: it never lowers D, keeps v = Xᵀα/(λn) and the box, moves only the examples it is given, keeps to its
budget, solves the whole dual of a small degenerate problem to a certified optimum, and a stalled shrinking
run on heart_scale that uses it ends at the same certified optimum in fewer passes."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy import optimize

import cdlab
from cdlab.solvers import _box_newton, _face_cr, dual_cd
from _helpers import mean_scaled_dataset, solve_with_and_without

SINGULAR_LOSSES = ("hinge", "absolute")


def singular_setup(loss, n=120, d=6, lam=0.01, seed=0):
    """More examples than columns (K = B Bᵀ/(λn) singular), a feasible α with a third at a bound, v."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.6, random_state=seed, format="csr")
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0) if loss != "absolute" else rng.standard_normal(n)
    problem = cdlab.Problem(X, y, loss=loss, lam=lam)
    t = rng.uniform(0.2, 0.8, n) if loss != "absolute" else rng.uniform(-0.6, 0.6, n)
    bound = rng.random(n) < 1 / 3
    t[bound] = rng.choice([0.0, 1.0] if loss != "absolute" else [-1.0, 1.0], bound.sum())
    alpha = t * y if loss != "absolute" else t
    return problem, alpha, problem.v_from_alpha(alpha)


def run(problem, alpha, v, examples, budget=10**12, max_iter=_box_newton.BOX_NEWTON_MAX_ITER):
    """(nonzeros read, work) of ``box_newton``, each example of ``examples`` its own group."""
    return _box_newton.box_newton(*problem.csr_arrays, problem.y, problem.loss_code,
                                  problem.lam * problem.n_samples, problem.row_norms_sq, alpha, v,
                                  np.arange(len(examples) + 1), np.asarray(examples, dtype=np.int64), budget, max_iter)


def in_box(problem, alpha):
    t = alpha if problem.loss == "absolute" else alpha * problem.y
    low = -1.0 if problem.loss == "absolute" else 0.0
    return np.all(t >= low) and np.all(t <= 1.0)


@pytest.mark.parametrize("loss", SINGULAR_LOSSES)
def test_box_newton_raises_the_dual_and_keeps_v_the_box_and_the_other_examples(loss):
    for seed in range(5):
        problem, alpha, v = singular_setup(loss, seed=seed)
        examples = np.sort(np.random.default_rng(seed).choice(problem.n_samples, 50, replace=False))
        before, start = problem.dual(alpha), alpha.copy()
        assert run(problem, alpha, v, examples)[0] > 0
        assert problem.dual(alpha) > before
        np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)
        assert in_box(problem, alpha)
        outside = np.setdiff1d(np.arange(problem.n_samples), examples)
        np.testing.assert_array_equal(alpha[outside], start[outside])


@pytest.mark.parametrize("loss", SINGULAR_LOSSES)
def test_box_newton_over_every_example_reaches_the_certified_optimum(loss):
    """Over all examples the polish is the whole dual: from α = 0 its iterations end at a certified gap
    (P at w = v against D at α, both by Problem), and at the D* of L-BFGS-B on the same box QP."""
    problem, _, _ = singular_setup(loss, n=80, d=5, lam=0.05)
    n, lam_n = problem.n_samples, problem.lam * problem.n_samples
    alpha, v = np.zeros(n), np.zeros(problem.n_features)
    run(problem, alpha, v, np.arange(n), max_iter=500)
    scale = abs(problem.primal(v))
    assert problem.gap(v, alpha) <= 1e-9 * scale
    # −n·D as a function of the box coordinate t (α = σt), minimised by L-BFGS-B within the box
    sigma = problem.y if loss == "hinge" else np.ones(n)
    a = np.ones(n) if loss == "hinge" else problem.y
    B = problem.X.toarray() * sigma[:, None]
    low = 0.0 if loss == "hinge" else -1.0
    fun = lambda t: (0.5 * np.sum((B.T @ t) ** 2) / lam_n - a @ t, B @ (B.T @ t) / lam_n - a)
    best = optimize.minimize(fun, np.zeros(n), jac=True, method="L-BFGS-B", bounds=[(low, 1.0)] * n,
                             options=dict(ftol=1e-15, gtol=1e-12, maxiter=10000))
    assert problem.dual(alpha) >= -best.fun / n - 1e-9 * scale


@pytest.mark.parametrize("loss", SINGULAR_LOSSES)
def test_box_newton_keeps_to_its_budget_and_reads_nothing_without_room_for_an_iteration(loss):
    problem, alpha, v = singular_setup(loss)
    m = 40
    examples = np.arange(m)
    nnz = int(problem.row_nnz[examples].sum())
    k = np.count_nonzero(np.asarray(abs(problem.X[examples]).sum(axis=0)).ravel() != 0)
    first = _box_newton.first_work(nnz, m, k)
    assert first == nnz + 4 * m * k + _box_newton.dense_work(m, k) and _box_newton.dense_work(m, k) > 0
    start = alpha.copy()
    assert run(problem, alpha, v, examples, budget=first - 1) == (0, 0)
    np.testing.assert_array_equal(alpha, start)
    for budget in (first, 2 * first, 10**12):
        alpha, v = start.copy(), problem.v_from_alpha(start)
        read, work = run(problem, alpha, v, examples, budget=budget)
        # every iteration charges its dense work beside its reads, within the budget
        assert nnz < read and read + _box_newton.dense_work(1, k) <= work <= budget
        assert problem.dual(alpha) > problem.dual(start)


@pytest.mark.parametrize("loss", SINGULAR_LOSSES)
def test_an_example_held_near_its_bound_steps_onto_it(loss):
    """An example within ε of its bound whose gradient pushes outward (Bertsekas's held set) moves along
    its own coordinate in the first iteration, and its Newton step, which reaches the bound, is clipped
    there."""
    problem, alpha, v = singular_setup(loss, seed=3)
    sigma = problem.y if loss == "hinge" else np.ones(problem.n_samples)
    a = np.ones(problem.n_samples) if loss == "hinge" else problem.y
    t = alpha * sigma
    g = sigma * (problem.X @ v) - a  # ∇f at the start: G of ``losses.box_gradient``
    # the example whose gradient pushes hardest towards t = 1, put 1e-6 below it
    e = int(np.argmin(np.where((t > 0.5) & (t < 1.0), g, np.inf)))
    assert g[e] < -1e-2  # the test's premise: pushed outward, and by more than ε's worth of curvature
    alpha[e] = sigma[e] * (1.0 - 1e-6)
    v = problem.v_from_alpha(alpha)
    before = problem.dual(alpha)
    run(problem, alpha, v, np.arange(problem.n_samples), max_iter=1)
    assert alpha[e] * sigma[e] == 1.0
    assert problem.dual(alpha) > before
    np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)


def test_rows_over_too_many_columns_are_refused():
    d = _box_newton.BOX_NEWTON_MAX_COLUMNS + 10
    X = sp.random(40, d, density=0.5, random_state=1, format="csr")
    problem = cdlab.Problem(X, np.where(np.arange(40) % 2 == 0, 1.0, -1.0), loss="hinge", lam=0.01)
    alpha = 0.5 * problem.y
    v = problem.v_from_alpha(alpha)
    assert run(problem, alpha, v, np.arange(40)) == (0, 0)
    np.testing.assert_array_equal(alpha, 0.5 * problem.y)


def test_polish_goes_on_to_face_cr_where_projected_newton_declines(monkeypatch):
    """An active set of 40 groups of 10 equal rows and labels over more than BOX_NEWTON_MAX_COLUMNS columns: its
    free face, more examples than columns, is singular, and projected Newton declines the set for its columns;
    the polish runs conjugate residuals on the face's groups (fewer than the columns), raising D with v kept
    equal to Xᵀα/(λn) and equal rows at equal α; with FACE_CR_AFTER_BOX_NEWTON off it reads nothing and leaves α
    as it was."""
    d = _box_newton.BOX_NEWTON_MAX_COLUMNS + 10
    rows = np.repeat(np.arange(40), 10)
    X = sp.random(40, d, density=0.5, random_state=1, format="csr")[rows]
    problem = cdlab.Problem(X, np.where(rows % 2 == 0, 1.0, -1.0), loss="hinge", lam=0.01)
    examples = np.arange(problem.n_samples)
    assert examples.size > problem.n_nonempty_columns
    assert _face_cr.groups(problem, examples)[0].size - 1 == 40
    for fallback in (True, False):
        monkeypatch.setattr(_face_cr, "FACE_CR_AFTER_BOX_NEWTON", fallback)
        alpha = 0.5 * problem.y
        v = problem.v_from_alpha(alpha)
        assert run(problem, alpha, v, examples) == (0, 0)
        before = problem.dual(alpha)
        read = _face_cr.polish(problem, alpha, v, examples, 10**12)
        if fallback:
            assert read > 0 and problem.dual(alpha) > before
            np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)
            assert in_box(problem, alpha)
            np.testing.assert_allclose(alpha.reshape(40, 10), alpha.reshape(40, 10)[:, :1].repeat(10, 1), atol=1e-12)
        else:
            assert read == 0
            np.testing.assert_array_equal(alpha, 0.5 * problem.y)


def test_polish_takes_projected_newton_on_a_small_singular_active_set_and_nothing_on_a_large_one():
    for loss in SINGULAR_LOSSES:
        problem, alpha, v = singular_setup(loss, n=2 * _box_newton.BOX_NEWTON_MAX_EXAMPLES)
        small = np.arange(_box_newton.BOX_NEWTON_MAX_EXAMPLES)
        assert _face_cr.free_face(problem, alpha, small).size > problem.n_nonempty_columns  # singular
        before = problem.dual(alpha)
        assert _face_cr.polish(problem, alpha, v, small, 10**12) > 0
        assert problem.dual(alpha) > before
        np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)
        start = alpha.copy()
        assert _face_cr.polish(problem, alpha, v, np.arange(problem.n_samples), 10**12) == 0
        np.testing.assert_array_equal(alpha, start)


def test_a_stalled_shrinking_run_on_heart_scale_polishes_by_projected_newton_in_fewer_passes(monkeypatch):
    """heart_scale hinge λ = 0.01/n (the race's problem): coordinate ascent crawls over an active set of
    about fifteen examples on 13 features; over seeds 0-4 the runs with projected Newton read fewer nonzeros
    (median) than the runs without it, and every run is certified at the reference optimum. A polish changes
    the random path after it, so the comparison is over seeds."""
    X, y = mean_scaled_dataset("heart_scale")
    problem = cdlab.Problem(X, y, loss="hinge", lam=0.01 / X.shape[0])
    reference = cdlab.reference_optimum(problem)
    tol = 1e-6 * abs(reference)
    passes = {"with": [], "without": []}
    for seed in range(5):
        kw = dict(sampling="permutation", shrinking=True, tol=tol, max_passes=5000, seed=seed)
        monkeypatch.setattr(_face_cr, "FACE_CR_AFTER_BOX_NEWTON", False)  # "without": no polish where Newton is not
        with_newton, without, reads = solve_with_and_without(monkeypatch, _face_cr, "box_newton", problem,
                                                             nothing=(0, 0), **kw)
        monkeypatch.undo()
        assert reads and max(read for read, _ in reads) > 0
        for res in (with_newton, without):
            assert res.converged and problem.gap(res.w, res.alpha) <= tol
            assert abs(res.trace.primal.iloc[-1] - reference) <= 2 * tol
        assert np.all(np.diff(with_newton.trace.dual) >= -1e-15)
        passes["with"].append(with_newton.trace.passes.iloc[-1])
        passes["without"].append(without.trace.passes.iloc[-1])
    assert np.median(passes["with"]) < 0.75 * np.median(passes["without"]), passes
