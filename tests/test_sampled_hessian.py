"""Newton's Cholesky path with a sampled Hessian (cdlab.solvers._sampled_hessian): certified and agreeing with an
independent optimum where it samples (sparse and dense rows, logistic and smoothed hinge, a real data set), the
sampled steps only those that start above SAMPLE_REACH·√(tol·P) and the last ones exact, the sampling ended by a
step that falls short or whose exact curvature is too high, never without a tol or on the squared loss; its kernels
equal to the exact H; its work counted by hand; equal seeds, equal traces, other seeds other rows and the same
optimum."""
import numpy as np
import pytest

import cdlab
from cdlab.solvers import newton
from cdlab.solvers import _sampled_hessian as S
from _helpers import check_certified, mean_scaled_dataset, sparse_problem, synthetic_problem


def _sparse(loss):
    return sparse_problem(n=4000, d=40, density=0.2, seed=3, loss=loss, lam=1e-4)


def _dense(loss):
    return synthetic_problem(loss, n=4000, d=30, seed=5)


def _spy(monkeypatch):
    """The (rows, weight) of each H the Cholesky path forms, one entry an H: through the row kernels while the run
    samples, in one read with ∇P after (``_gradient_and_hessian``: all rows, weight 1)."""
    seen = []
    fused = newton.NewtonState._gradient_and_hessian

    def spy_fused(self):
        seen.append((self.p.n_samples, 1.0))
        return fused(self)

    monkeypatch.setattr(newton.NewtonState, "_gradient_and_hessian", spy_fused)
    for name in ("gram_rows", "densify_sampled"):
        kernel = getattr(newton, name)

        def spy(indptr, indices, data, rows, *args, kernel=kernel, name=name):
            if name == "gram_rows" or args[0] == 0:  # densify_sampled: the first block of an H
                seen.append((rows.shape[0], args[1 if name == "densify_sampled" else 0]))
            return kernel(indptr, indices, data, rows, *args)

        monkeypatch.setattr(newton, name, spy)
    return seen


def _last_state(monkeypatch, problem):
    """The state of a run like the test's (solver="cholesky", tol 1e-9, seed 0)."""
    made = []
    init = newton.NewtonState.__init__
    monkeypatch.setattr(newton.NewtonState, "__init__", lambda self, *a, **k: made.append(self) or init(self, *a, **k))
    cdlab.solve(problem, "newton", solver="cholesky", tol=1e-9, seed=0)
    return made[-1]


@pytest.mark.parametrize("make", [_sparse, _dense])
@pytest.mark.parametrize("loss", ["logistic", "smoothed_hinge"])
def test_certified_where_it_samples_and_its_last_steps_are_exact(monkeypatch, make, loss):
    problem = make(loss)
    m = S.sample_size(problem)
    assert 0 < m <= problem.n_samples // 2
    assert newton.dense_rows(problem) == (make is _dense)
    seen = _spy(monkeypatch)
    starts = []  # (sampled, the step's start gap over SAMPLE_REACH·√(tol·P)) of each H formed on the sampled path
    form = newton.NewtonState._form_hessian

    def spy_form(self, sampled):
        starts.append((sampled, self.start_gap / (S.SAMPLE_REACH * np.sqrt(self.tol * abs(self.value)))))
        return form(self, sampled)

    monkeypatch.setattr(newton.NewtonState, "_form_hessian", spy_form)
    res = check_certified(problem, "newton", tol=1e-9, solver="cholesky")
    assert all(ratio > 1.0 for sampled, ratio in starts if sampled)  # only the steps that cannot reach tol
    weights = [weight for _, weight in seen]
    assert len(seen) == res.trace.steps.iloc[-1]  # one H a step
    sampled = [rows == m and weight == problem.n_samples / m for rows, weight in seen]
    assert any(sampled) and not sampled[-1]
    assert all(weight == 1.0 for weight, s in zip(weights, sampled) if not s)
    assert sampled == sorted(sampled, reverse=True)  # the sampled steps first, then exact ones
    assert sum(sampled) == _last_state(monkeypatch, problem).sampled_steps


def test_certified_on_real_data_where_it_samples(monkeypatch):
    X, y = mean_scaled_dataset("phishing")
    problem = cdlab.Problem(X, y, loss="logistic", lam=0.01 / X.shape[0])
    assert S.sample_size(problem) > 0
    seen = _spy(monkeypatch)
    check_certified(problem, "newton", tol=1e-9, solver="cholesky")
    assert any(weight > 1.0 for _, weight in seen)


def test_no_sampling_without_a_tol_on_the_squared_loss_or_on_few_rows(monkeypatch):
    seen = _spy(monkeypatch)
    problem = _sparse("logistic")
    cdlab.solve(problem, "newton", solver="cholesky", tol=0.0, max_steps=4)
    assert seen == [(problem.n_samples, 1.0)] * 4
    assert S.sample_size(_sparse("squared")) == 0
    assert S.sample_size(sparse_problem(n=600, d=40, loss="logistic", lam=1e-3)) == 0  # 16·d > n/2


def test_a_sampled_step_that_falls_short_ends_the_sampling(monkeypatch):
    """With SAMPLE_PROGRESS = inf no step cuts the gap enough: the first step samples, none after it."""
    monkeypatch.setattr(newton, "SAMPLE_PROGRESS", np.inf)
    seen = _spy(monkeypatch)
    check_certified(_sparse("logistic"), "newton", tol=1e-9, solver="cholesky")
    assert [weight > 1.0 for _, weight in seen] == [True] + [False] * (len(seen) - 1)


def test_a_sampled_direction_whose_exact_curvature_is_too_high_gives_way_to_the_exact_one(monkeypatch):
    """With SAMPLE_CURVATURE_RATIO = 0 every sampled Δ fails the check: the first step forms a sampled H, then the
    exact one at the same w, and the run goes on as exact Newton (its steps, its optimum)."""
    problem = _sparse("logistic")
    monkeypatch.setattr(newton, "SAMPLE_CURVATURE_RATIO", 0.0)
    seen = _spy(monkeypatch)
    res = check_certified(problem, "newton", tol=1e-9, solver="cholesky")
    assert [weight > 1.0 for _, weight in seen] == [True] + [False] * (len(seen) - 1)
    assert len(seen) == res.trace.steps.iloc[-1] + 1
    monkeypatch.setattr(newton, "sample_size", lambda problem: 0)
    exact = cdlab.solve(problem, "newton", solver="cholesky", tol=1e-9)
    assert res.trace.steps.iloc[-1] == exact.trace.steps.iloc[-1] > 1
    assert abs(res.trace.primal.iloc[-1] - exact.trace.primal.iloc[-1]) <= 1e-9


@pytest.mark.parametrize("make", [_sparse, _dense])
def test_the_row_kernels_give_the_exact_hessian_and_a_weighted_sample(make):
    """Over all rows with weight 1 the lower triangle of Xᵀ diag(curv) X; over rows S with weight c, c times
    X_Sᵀ diag(curv_S) X_S; ``raise_diagonal`` lifts a diagonal entry to the exact one only where it falls short."""
    from scipy.linalg.blas import dsyrk

    problem = make("logistic")
    X = problem.X.toarray()
    n, d = X.shape
    curv = np.random.default_rng(0).uniform(0.0, 0.25, n) / n
    rows = np.sort(np.random.default_rng(1).choice(n, 500, replace=False))
    for subset, weight in ((np.arange(n), 1.0), (rows, n / 500)):
        exact = np.tril(weight * (X[subset].T * curv[subset]) @ X[subset])
        H = np.zeros((d, d), order="F")
        touched = S.gram_rows(*problem.csr_arrays, subset, weight, curv, H)
        np.testing.assert_allclose(H, exact, rtol=1e-12, atol=1e-15)
        H[...] = 0.0
        block = np.empty((128, d))
        for lo in range(0, subset.shape[0], 128):
            part = block[:min(128, subset.shape[0] - lo)]
            assert S.densify_sampled(*problem.csr_arrays, subset, lo, weight, curv, part) == np.diff(
                problem.X.indptr)[subset[lo:lo + part.shape[0]]].sum()
            dsyrk(1.0, part.T, beta=1.0, c=H, trans=0, lower=1, overwrite_c=1)
        np.testing.assert_allclose(H, exact, rtol=1e-12, atol=1e-15)
        assert touched == np.diff(problem.X.indptr)[subset].sum()
    exact_diag = (X * X).T @ curv
    lam = 1e-3
    H = np.diag(exact_diag * np.where(np.arange(d) % 2, 0.5, 2.0))
    S.raise_diagonal(H, 1.0 / (exact_diag + lam), lam)
    np.testing.assert_allclose(np.diag(H), exact_diag * np.where(np.arange(d) % 2, 1.0, 2.0), rtol=1e-12)


def test_work_counted_by_hand(monkeypatch):
    """A step reads X for ∇P and diag(H) (unless the checkpoint's sweep gave them), for H (the sampled rows' or
    every row's nonzeros) and for XΔ."""
    problem = _sparse("logistic")
    touched = []
    kernel = newton.gram_rows

    def spy(indptr, indices, data, rows, weight, curv, H):
        touched.append(kernel(indptr, indices, data, rows, weight, curv, H))
        return touched[-1]

    monkeypatch.setattr(newton, "gram_rows", spy)
    state = newton.NewtonState(problem, "uniform", np.random.default_rng(0), solver="cholesky")
    state.certificate_sums()  # the start's sweep: ∇P and diag(H) for the first step
    state.checkpointed({"gap": np.inf, "primal": problem.primal(state.w)}, 1e-9)
    assert state.nnz_touched == 0  # the checkpoint's read is the driver's to count
    state.run(1)
    assert touched[0] < problem.nnz and state.nnz_touched == touched[0] + problem.nnz
    state.run(1)
    assert state.nnz_touched == sum(touched) + 3 * problem.nnz


def test_equal_seeds_give_equal_traces_and_other_seeds_the_same_optimum():
    problem = _sparse("logistic")
    runs = [cdlab.solve(problem, "newton", solver="cholesky", tol=1e-9, seed=seed) for seed in (0, 0, 1)]
    assert runs[0].trace.drop(columns="time").equals(runs[1].trace.drop(columns="time"))
    assert all(r.converged for r in runs)
    assert not runs[0].trace.drop(columns="time").equals(runs[2].trace.drop(columns="time"))  # other rows drawn
    assert abs(runs[0].trace.primal.iloc[-1] - runs[2].trace.primal.iloc[-1]) <= 1e-9
