"""Damped Newton (cdlab.solvers.newton): certified to a tight gap and agreeing with an independent
optimum for every smooth loss, one step on the squared loss, its refusals (non-smooth loss, l1, too
many features for the Cholesky path — before anything of size d² is allocated), its work counted by
hand, its Hessian formed alike on both paths, and its BLAS threads; the CG inner solver (solver="cg",
the cost model's pick beyond MAX_FEATURES) certified on sparse data with many features and on
rcv1_small, its direction and its work checked by hand, its iterations bounded, its option checked."""
import re
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_info

import cdlab
from cdlab import losses as L
from cdlab.solvers import auto, newton
from cdlab.data import make_synthetic
from _helpers import LOSSES, check_certified, mean_scaled_dataset, scaled_problem, sparse_problem, synthetic_problem


@pytest.mark.parametrize("loss", LOSSES)
def test_certified_and_agrees_with_an_independent_optimum_on_synthetic_data(loss):
    res = check_certified(synthetic_problem(loss, n=300, d=40, seed=3), "newton", tol=1e-9)
    assert res.trace.steps.iloc[-1] <= 30  # Newton steps, not passes of a first-order method


@pytest.mark.parametrize("name", ["heart_scale", "a9a"])
@pytest.mark.parametrize("loss", LOSSES)
def test_certified_and_agrees_with_an_independent_optimum_on_real_data(name, loss):
    problem = scaled_problem(name, loss)
    check_certified(problem, "newton", tol=1e-9)
    check_certified(problem.with_params(lam=0.01 / problem.n_samples), "newton", tol=1e-9)


def test_the_squared_loss_is_solved_by_one_full_newton_step():
    problem = synthetic_problem("squared", n=200, d=30, seed=1)
    state = newton.NewtonState(problem, "uniform", None, solver="cholesky")
    state.run(1)
    assert state.last_step == 1.0  # the line search took the full step
    w_star = np.linalg.solve(problem.X.T @ problem.X / problem.n_samples + problem.lam * np.eye(30),
                             problem.X.T @ problem.y / problem.n_samples)
    np.testing.assert_allclose(state.w, w_star, rtol=1e-10, atol=1e-12)
    res = cdlab.solve(problem, "newton", tol=1e-10, solver="cholesky")
    assert res.converged and res.trace.steps.iloc[-1] == 1


@pytest.mark.parametrize("lam", [1e-16, 1e-20])
def test_a_hessian_singular_in_floating_point_is_shifted_until_cholesky_succeeds(lam):
    """Collinear features and a λ below the precision of H's diagonal: H + λI is singular in floating
    point; Newton shifts it (Nocedal & Wright §3.4) and still reaches the least-squares optimum."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal((50, 5))
    X = np.hstack([base, base, 1e8 * base])
    y = rng.standard_normal(50)
    problem = cdlab.Problem(X, y, loss="squared", lam=lam)
    H = X.T @ X / 50 + lam * np.eye(15)
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(H)
    res = cdlab.solve(problem, "newton", tol=0, max_steps=5, solver="cholesky")
    w_ls = np.linalg.lstsq(base, y, rcond=None)[0]
    p_ls = 0.5 * np.mean((base @ w_ls - y) ** 2)
    assert np.all(np.isfinite(res.w)) and abs(res.trace.primal.iloc[-1] - p_ls) <= 1e-9 * p_ls


def test_work_is_two_passes_over_x_per_iteration():
    """Counted by hand: each iteration reads X once for ∇P and H and once for XΔ; the line
    search's trials read no X (z + t·XΔ), so steps = k gives 2k passes, 2k·nnz nonzeros."""
    problem = sparse_problem(n=60, d=20, density=0.3, seed=2, loss="logistic", lam=1e-3)
    state = newton.NewtonState(problem, "uniform", None, solver="cholesky")
    for k in (1, 2, 5):
        state.run(1 if k == 1 else k - state.steps)
        assert (state.steps, state.nnz_touched, state.data_passes) == (k, 2 * k * problem.nnz, 2.0 * k)
    res = cdlab.solve(problem, "newton", max_steps=3, tol=0, solver="cholesky")
    last = res.trace.iloc[-1]
    assert (last.steps, last.nnz_touched, last.passes) == (3, 6 * problem.nnz, 6.0)


@pytest.mark.parametrize("solver", ["cholesky", "cg"])
@pytest.mark.parametrize("loss", LOSSES)
def test_z_carried_along_the_line_searches_is_xw(loss, solver):
    problem = synthetic_problem(loss, n=150, d=12, seed=4)
    state = newton.NewtonState(problem, "uniform", None, solver=solver)
    state.run(4)
    np.testing.assert_allclose(state.z, problem.X @ state.w, rtol=1e-12, atol=1e-12)
    assert state.value == pytest.approx(problem.primal(state.w), rel=1e-13)


@pytest.mark.parametrize("loss", LOSSES)
def test_both_ways_of_forming_the_hessian_give_x_t_d_x(loss):
    problem = synthetic_problem(loss, n=120, d=15, seed=5)
    state = newton.NewtonState(problem, "uniform", None, solver="cholesky")
    state.z[:] = np.random.default_rng(0).standard_normal(problem.n_samples)
    X = problem.X.toarray()
    n = problem.n_samples
    curv = np.array([L.loss_curvature(problem.loss_code, z, y, problem.s) for z, y in zip(state.z, problem.y)])
    deriv = np.array([L.loss_deriv(problem.loss_code, z, y, problem.s) for z, y in zip(state.z, problem.y)])
    H_ref = X.T @ (curv[:, None] * X) / n
    for dense in (False, True):
        state.dense = dense
        state._gradient_and_hessian()
        np.testing.assert_allclose(np.tril(state.H), np.tril(H_ref), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(state.grad, X.T @ deriv / n + problem.lam * state.w, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("loss", LOSSES)
def test_curvature_is_the_derivative_of_the_derivative(loss):
    code, s = L.LOSSES[loss].code, 0.7
    h = 1e-6
    for z in np.linspace(-3.1, 3.1, 23):
        for y in (-1.0, 1.0):
            fd = (L.loss_deriv(code, z + h, y, s) - L.loss_deriv(code, z - h, y, s)) / (2 * h)
            assert L.loss_curvature(code, z, y, s) == pytest.approx(fd, rel=1e-6, abs=1e-8), (z, y)


def test_the_cost_model_sends_dense_rows_to_blas_and_sparse_rows_to_the_sweep():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 200))
    y = np.sign(rng.standard_normal(400))
    assert newton.dense_rows(cdlab.Problem(X, y, lam=1e-2))
    Xs = sp.random(400, 2000, density=0.005, random_state=0, format="csr")
    assert not newton.dense_rows(cdlab.Problem(Xs, y, lam=1e-2))


def test_the_absolute_loss_is_refused_naming_sdca():
    problem = cdlab.Problem(sparse_problem().X, np.linspace(-1, 1, 40), loss="absolute", lam=1e-2)
    with pytest.raises(ValueError, match=r"^method 'newton' does not support the absolute loss \(it needs a smooth "
                                         r"loss or the hinge: .*method='sdca', which takes it\)"):
        cdlab.solve(problem, "newton")


def test_l1_is_refused():
    with pytest.raises(ValueError, match=r"^method 'newton' does not support l1 > 0 \(elastic net\)$"):
        cdlab.solve(sparse_problem(loss="logistic", lam=1e-2, l1=1e-3), "newton")


def test_too_many_features_for_cholesky_is_refused_before_anything_of_size_d_squared_exists():
    d = newton.MAX_FEATURES * 4  # H alone would be 2 GiB
    X = sp.random(50, d, density=1e-3, random_state=0, format="csr")
    problem = cdlab.Problem(X, np.sign(np.random.default_rng(0).standard_normal(50)), lam=1e-2)
    cdlab.solve(problem, "newton", max_steps=1)  # loads the CG path's kernels (numba's typing) before tracing
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=rf"^method 'newton' with solver='cholesky' forms the d × d Hessian .*: "
                                             rf"d = {d} features would need 4 GiB; it takes at most "
                                             rf"{newton.MAX_FEATURES} features .* Use solver='cg' .* "
                                             r"e\.g\. method='sdca'"):
            cdlab.solve(problem, "newton", solver="cholesky")
        _, peak = tracemalloc.get_traced_memory()
        with pytest.raises(ValueError, match=r"^method 'newton' with solver='cholesky' forms the d × d Hessian"):
            newton.NewtonState(problem, "uniform", None, solver="cholesky")  # a state built directly refuses too
        _, peak_state = tracemalloc.get_traced_memory()
        # the default takes it on the CG path, in O(n + d) memory
        res = cdlab.solve(problem, "newton", tol=1e-9)
        _, peak_cg = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert max(peak, peak_state, peak_cg) < 8 * d * 100  # a few length-d vectors at most, never d² doubles
    assert res.converged and newton.inner_solver(problem) == "cg" and res.options["solver"] == "auto"
    at_limit = sp.random(50, newton.MAX_FEATURES, density=1e-3, random_state=0, format="csr")
    taken = cdlab.Problem(at_limit, problem.y, lam=1e-2)
    assert newton.features_refusal(taken, {"solver": "cholesky"}) == ""  # the limit is taken


def _blas_threads_seen(monkeypatch, problem, n_jobs):
    seen = []
    form = newton.NewtonState._gradient_and_hessian

    def watched(self):
        seen.extend(lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas")
        return form(self)

    monkeypatch.setattr(newton.NewtonState, "_gradient_and_hessian", watched)
    res = cdlab.solve(problem, "newton", tol=1e-10, n_jobs=n_jobs, solver="cholesky")
    return res, set(seen)


def test_n_jobs_sets_the_blas_threads_and_reaches_the_same_certified_optimum(monkeypatch):
    problem = synthetic_problem("logistic", n=300, d=40, seed=6)
    one, threads_one = _blas_threads_seen(monkeypatch, problem, 1)
    two, threads_two = _blas_threads_seen(monkeypatch, problem, 2)
    assert threads_one == {1} and threads_two == {2}
    assert one.converged and two.converged and two.trace.attrs["n_jobs"] == 2
    assert abs(one.trace.primal.iloc[-1] - two.trace.primal.iloc[-1]) <= 1e-10
    assert cdlab.METHODS["newton"].parallel


def test_concurrent_runs_leave_the_processs_blas_threads_as_they_were():
    """threadpoolctl's limit is process-wide: runs in several threads (the page's sessions) take it one at a
    time, so their saves and restores do not interleave and leave BLAS at another run's count."""
    import threading
    before = [(lib["internal_api"], lib["num_threads"]) for lib in threadpool_info()]
    problem = synthetic_problem("logistic", n=300, d=40, seed=6)
    errors = []

    def solve_some(n_jobs):
        try:
            for _ in range(5):
                assert cdlab.solve(problem, "newton", tol=1e-10, n_jobs=n_jobs, solver="cholesky").converged
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=solve_some, args=(k % 2 + 1,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert errors == []
    assert [(lib["internal_api"], lib["num_threads"]) for lib in threadpool_info()] == before


def test_it_checkpoints_after_every_iteration_where_one_outweighs_a_checkpoint():
    """Where an iteration outweighs EVERY_STEP_RATIO checkpoints, under eval_every="auto" the trace has a
    row after every iteration from the first due one on (the steps from a gap above DUE_REACH·√(tol·P) are
    not checkpointed), so the run stops at the first certifiable iteration, as one certified after every
    iteration does; a given interval in passes is honoured; where it does not, the driver's geometric cadence."""
    problem = synthetic_problem("logistic", n=300, d=20, seed=8)
    assert newton.cholesky_iteration_ns(problem) >= newton.EVERY_STEP_RATIO * newton.checkpoint_ns(problem)
    tol = 1e-10
    res = cdlab.solve(problem, "newton", tol=tol, solver="cholesky")
    every = cdlab.solve(problem, "newton", tol=tol, solver="cholesky", eval_every=1e-9)
    assert every.trace.steps.tolist() == list(range(len(every.trace)))
    due = res.trace.steps.tolist()
    assert res.converged and due[-1] == every.trace.steps.iloc[-1] and res.w.tolist() == every.w.tolist()
    assert due[0] == 0 and due[1:] == list(range(due[1], due[-1] + 1)) and len(due) < len(every.trace)
    assert (res.trace.gap.iloc[:-1] > tol).all()
    threshold = newton.DUE_REACH * np.sqrt(tol * every.trace.primal.iloc[-1])
    assert (every.trace.gap.iloc[:due[1] - 1] > threshold).all() and every.trace.gap.iloc[due[1] - 1] <= threshold
    regular = cdlab.solve(problem, "newton", tol=0, max_passes=16, eval_every=4.0, solver="cholesky")
    assert (np.diff(regular.trace.steps) >= 2).all() and len(regular.trace) >= 3
    cheap = sparse_problem(n=20000, d=5, density=0.2, seed=9, loss="logistic", lam=1e-2)
    assert newton.cholesky_iteration_ns(cheap) < newton.EVERY_STEP_RATIO * newton.checkpoint_ns(cheap)
    geometric = cdlab.solve(cheap, "newton", tol=0, max_steps=8, solver="cholesky")
    assert geometric.trace.steps.tolist() == [0, 1, 2, 4, 8]


# ------------------------------------------------------------------ the CG inner solver

def many_features_problem(loss, lam_factor=1.0, seed=0):
    """Sparse text-like data (power-law column counts, some columns empty) with more features than the
    Cholesky path takes; rows scaled by their mean norm."""
    n, d = 600, newton.MAX_FEATURES + 904
    X, y = make_synthetic(n, d, density=0.004, col_skew=1.0, labels="regression" if loss == "squared" else "linear",
                          normalize="mean", seed=seed, allow_empty=True)
    return cdlab.Problem(X, y, loss=loss, lam=lam_factor / n)


@pytest.mark.parametrize("lam_factor", [1.0, 0.01])
@pytest.mark.parametrize("loss", LOSSES)
def test_cg_path_certified_and_agrees_with_an_independent_optimum_beyond_max_features(loss, lam_factor):
    problem = many_features_problem(loss, lam_factor)
    assert problem.n_features > newton.MAX_FEATURES and (problem.col_nnz == 0).any()
    assert newton.inner_solver(problem) == "cg"
    # P* is ~5e-3 here: a gap of 1e-11 certifies the 1e-8 relative agreement check_certified asks
    res = check_certified(problem, "newton", tol=1e-11)
    assert not res.w[problem.col_nnz == 0].any()  # an empty column's weight stays 0


@pytest.mark.parametrize("loss", LOSSES)
def test_cg_path_certified_and_agrees_with_an_independent_optimum_on_rcv1_small(loss):
    X, y = mean_scaled_dataset("rcv1_small")
    problem = cdlab.Problem(X, y, loss=loss, lam=1.0 / X.shape[0])
    res = check_certified(problem, "newton", tol=1e-9)
    if loss != "squared":
        assert res.trace.steps.iloc[-1] <= 30  # Newton iterations, each a truncated CG solve
    else:  # the squared loss: CG (on the dual system here, d = 47 n), one step per CG iteration, certified between them
        assert res.trace.steps.iloc[-1] > 1


@pytest.mark.parametrize("loss", LOSSES)
def test_cg_and_cholesky_reach_the_same_certified_optimum_on_real_data(loss):
    problem = scaled_problem("a9a", loss).with_params(lam=0.01 / 2000)
    cg = check_certified(problem, "newton", tol=1e-9, solver="cg")
    cholesky = check_certified(problem, "newton", tol=1e-9, solver="cholesky")
    assert abs(cg.trace.primal.iloc[-1] - cholesky.trace.primal.iloc[-1]) <= 2e-9


def dense_pcg_step(H, m_inv, x, r, s, p):
    """One iteration of Nocedal & Wright's Algorithm 5.3 (CG preconditioned by M, m_inv = 1/diag(M)) in dense
    numpy, from (x, r = b − Hx, s = M⁻¹r, p); returns the next (x, r, s, p)."""
    a = (r @ s) / (p @ H @ p)
    x, r_new = x + a * p, r - a * (H @ p)
    s_new = m_inv * r_new
    return x, r_new, s_new, s_new + (r_new @ s_new) / (r @ s) * p


def expected_forcing(problem, norm, prev_norm, prev_eta):
    """The forcing term written out: min(½, √‖∇P‖) at a first iteration or for a loss without a γ, else
    Eisenstat & Walker's choice 2, γ(‖∇P‖/‖∇P_prev‖)², raised to γη_prev² where that exceeds 0.1, at most ½."""
    gamma = newton.FORCING_GAMMA.get(problem.loss, 0.0)
    if gamma == 0.0 or prev_norm == 0.0:
        return min(0.5, np.sqrt(norm))
    guard = gamma * prev_eta ** 2
    return min(0.5, max(gamma * (norm / prev_norm) ** 2, guard if guard > 0.1 else 0.0))


def reference_cg_direction(problem, w, z, floor=0.0, prev_norm=0.0, prev_eta=0.0):
    """Nocedal & Wright's Algorithm 7.1 direction written out with dense numpy: ∇P, H = XᵀDX/n + λI, CG from 0
    preconditioned by M = diag(H) (their Algorithm 5.3) until ‖r‖ ≤ max(η·‖∇P‖, floor), η the forcing term
    after an iteration whose ‖∇P‖ and η were ``prev_norm``, ``prev_eta`` (``expected_forcing``);
    returns (direction, CG iterations, φ'')."""
    X, n = problem.X.toarray(), problem.n_samples
    deriv = np.array([L.loss_deriv(problem.loss_code, zi, yi, problem.s) for zi, yi in zip(z, problem.y)])
    curv = np.array([L.loss_curvature(problem.loss_code, zi, yi, problem.s) for zi, yi in zip(z, problem.y)])
    grad = X.T @ deriv / n + problem.lam * w
    H = X.T @ (curv[:, None] * X) / n + problem.lam * np.eye(problem.n_features)
    m_inv = 1.0 / np.diag(H)
    step, r = np.zeros_like(grad), -grad
    s = m_inv * r
    direction, k = s.copy(), 0
    norm = np.linalg.norm(grad)
    target = max(expected_forcing(problem, norm, prev_norm, prev_eta) * norm, floor)
    while (k == 0 or np.linalg.norm(r) > target) and k < newton.MAX_CG_ITERATIONS:
        step, r, s, direction = dense_pcg_step(H, m_inv, step, r, s, direction)
        k += 1
    return step, k, curv


@pytest.mark.parametrize("loss", ["logistic", "smoothed_hinge"])
def test_cg_direction_and_work_counted_by_hand(loss):
    """One Newton-CG iteration: its direction is Algorithm 7.1's (dense numpy), and it reads X once for ∇P and
    per Hessian-vector product once for Xp and once more for each row whose curvature is not 0 (the smoothed
    hinge's rows off its quadratic piece are read once): nnz + k·(nnz + Σ_{φ''_i ≠ 0} nnz_i); XΔ is summed
    along the way, so the line search reads no X."""
    problem = sparse_problem(n=60, d=25, density=0.3, seed=2, loss=loss, lam=1e-3)
    state = newton.NewtonState(problem, "uniform", None, solver="cg")
    state.run(1)  # away from w = 0, where every smoothed-hinge margin is on the quadratic piece
    w, z, before = state.w.copy(), state.z.copy(), state.nnz_touched
    step, k, curv = reference_cg_direction(problem, w, z, prev_norm=state.last_grad_norm,
                                          prev_eta=state.last_forcing)
    state.run(1)
    assert state.cg_iterations[-1] == k >= 2
    np.testing.assert_allclose(state.step, step, rtol=1e-9, atol=1e-12)
    curved = int(problem.row_nnz[curv != 0].sum())
    assert loss == "logistic" or curved < problem.nnz  # the smoothed hinge has rows off its quadratic piece
    assert state.nnz_touched - before == problem.nnz + k * (problem.nnz + curved)
    assert state.data_passes == pytest.approx(state.nnz_touched / problem.nnz, rel=1e-15)
    np.testing.assert_allclose(state.u, problem.X @ state.step, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("loss", ["logistic", "smoothed_hinge", "squared"])
def test_the_gap_at_alpha_of_w_is_the_squared_gradient_norm_over_two_lambda(loss):
    """With α = −φ'(Xw), the driver's dual point for a primal method, P(w) − D(α) = ‖∇P(w)‖²/(2λ) exactly
    (Fenchel–Young holds with equality at each example, leaving λ/2‖w − v‖², and ∇P = λ(w − v)): the identity
    the CG path's stop (CG_GAP_SHARE) rests on, checked against ∇P written out with dense numpy."""
    problem = sparse_problem(n=80, d=30, density=0.3, seed=4, loss=loss, lam=1e-2)
    X, n = problem.X.toarray(), problem.n_samples
    for seed in range(3):
        w = np.random.default_rng(seed).standard_normal(30) * 0.3
        deriv = np.array([L.loss_deriv(problem.loss_code, zi, yi, problem.s) for zi, yi in zip(X @ w, problem.y)])
        grad = X.T @ deriv / n + problem.lam * w
        gap = problem.gap(w, problem.alpha_from_w(w))
        assert gap == pytest.approx(grad @ grad / (2 * problem.lam), rel=1e-9)


@pytest.mark.parametrize("loss", ["logistic", "smoothed_hinge"])
def test_the_forcing_term_is_the_square_root_rule_first_and_eisenstat_walkers_after_for_the_logistic_loss(loss):
    """``forcing_term`` on each of its branches: the first iteration (and the smoothed hinge throughout) √‖∇P‖
    capped at ½; the logistic loss's later ones γ(‖∇P‖/‖∇P_prev‖)², the safeguard γη_prev² where it exceeds
    0.1 (and only there), the cap ½. A run's iterations each stop CG at the term of their own and the last
    ‖∇P‖, which is not where the √ rule would have stopped it."""
    from cdlab.solvers._newton_cg import forcing_term
    problem = sparse_problem(n=60, d=25, density=0.3, seed=2, loss=loss, lam=1e-3)
    gamma = newton.FORCING_GAMMA.get(loss, 0.0)
    assert (gamma > 0.0) == (loss == "logistic")
    cases = [(0.04, 0.0, 0.0), (4.0, 0.0, 0.0), (0.01, 0.1, 0.2), (0.02, 0.1, 0.45), (0.09, 0.1, 0.5),
             (1e-3, 0.1, 0.3), (0.3, 0.1, 0.1)]
    for norm, prev_norm, prev_eta in cases:
        eta = forcing_term(norm, prev_norm, prev_eta, gamma)
        assert eta == pytest.approx(expected_forcing(problem, norm, prev_norm, prev_eta), rel=1e-15)
    if loss == "logistic":  # Eisenstat & Walker's value, its safeguard, its cap
        assert forcing_term(0.01, 0.1, 0.2, gamma) == pytest.approx(gamma * 0.01)
        assert gamma * 0.45 ** 2 > 0.1
        assert forcing_term(0.02, 0.1, 0.45, gamma) == pytest.approx(gamma * 0.45 ** 2)  # the safeguard
        assert forcing_term(0.3, 0.1, 0.1, gamma) == 0.5
    state = newton.NewtonState(problem, "uniform", None, solver="cg")
    prev_norm, prev_eta = 0.0, 0.0
    differs = False
    for _ in range(3):
        w, z = state.w.copy(), state.z.copy()
        step, k, _ = reference_cg_direction(problem, w, z, prev_norm=prev_norm, prev_eta=prev_eta)
        _, k_root, _ = reference_cg_direction(problem, w, z)  # the √ rule
        differs = differs or k != k_root
        state.run(1)
        assert state.last_step > 0.0
        assert state.cg_iterations[-1] == k
        np.testing.assert_allclose(state.step, step, rtol=1e-9, atol=1e-12)
        assert state.last_grad_norm == pytest.approx(np.linalg.norm(state.grad), rel=1e-12)
        assert state.last_forcing == pytest.approx(expected_forcing(problem, state.last_grad_norm, prev_norm,
                                                                    prev_eta))
        prev_norm, prev_eta = state.last_grad_norm, state.last_forcing
    assert differs == (loss == "logistic")


def test_a_step_that_finds_no_decrease_leaves_the_forcing_terms_ratio_as_it_was(monkeypatch):
    """A line search that finds no decrease leaves w where it was, so the next iteration recomputes the same
    ∇P: it takes η from the ‖∇P‖ and η of the iteration that moved w there (a ratio of 1 against the failed
    iteration's own would set η to ½, the loosest), and so solves as the failed one did."""
    problem = sparse_problem(n=60, d=25, density=0.3, seed=2, loss="logistic", lam=1e-3)
    state = newton.NewtonState(problem, "uniform", None, solver="cg")
    state.run(2)
    kept = state.last_grad_norm, state.last_forcing
    w = state.w.copy()

    def no_decrease(self, step):
        self.last_step = 0.0

    with monkeypatch.context() as m:
        m.setattr(newton.NewtonState, "_line_search", no_decrease)
        state.run(1)
    failed_iterations = state.cg_iterations[-1]
    np.testing.assert_array_equal(state.w, w)
    assert (state.last_grad_norm, state.last_forcing) == kept
    step, k, _ = reference_cg_direction(problem, w, state.z, prev_norm=kept[0], prev_eta=kept[1])
    state.run(1)
    assert state.cg_iterations[-1] == k == failed_iterations
    np.testing.assert_allclose(state.step, step, rtol=1e-9, atol=1e-12)
    assert state.last_step > 0.0


def test_cg_stops_at_the_residual_the_runs_tolerance_needs():
    """Once the driver has handed the state the run's tol, a Newton-CG direction stops as soon as
    ‖r‖ ≤ CG_GAP_SHARE·√(2λ·tol) (Algorithm 7.1 with that floor under its forcing term): fewer CG iterations
    than without it, the same as the dense reference with that floor; and the run still ends certified."""
    problem = sparse_problem(n=60, d=25, density=0.3, seed=2, loss="logistic", lam=1e-3)
    state = newton.NewtonState(problem, "uniform", None, solver="cg")
    state.run(2)
    w, z = state.w.copy(), state.z.copy()
    before = {"prev_norm": state.last_grad_norm, "prev_eta": state.last_forcing}
    _, k_plain, _ = reference_cg_direction(problem, w, z, **before)
    gap = problem.gap(w, problem.alpha_from_w(w))
    norm = np.sqrt(2 * problem.lam * gap)  # ‖∇P(w)‖
    floor = 3 * expected_forcing(problem, norm, **before) * norm  # above the forcing term's target, below ‖∇P‖
    assert floor < norm
    tol = (floor / newton.CG_GAP_SHARE) ** 2 / (2 * problem.lam)
    step, k, _ = reference_cg_direction(problem, w, z, floor, **before)
    state.checkpointed({"gap": gap, "primal": problem.primal(w)}, tol)
    state.run(1)
    assert state.cg_iterations[-1] == k < k_plain
    np.testing.assert_allclose(state.step, step, rtol=1e-9, atol=1e-12)
    res = check_certified(problem, "newton", tol=1e-10, solver="cg")
    assert problem.gap(res.w, problem.alpha_from_w(res.w)) <= 1e-10


def _watch_checkpoints(monkeypatch):
    """(state, row, tol) of each checkpoint of the runs that follow (``NewtonState.checkpointed``'s calls)."""
    seen = []
    hook = newton.NewtonState.checkpointed
    monkeypatch.setattr(newton.NewtonState, "checkpointed",
                        lambda self, row, tol, margins=None: seen.append((self, row, tol)) or hook(self, row, tol))
    return seen


def test_the_driver_hands_each_checkpoint_and_the_runs_tol_to_the_state(monkeypatch):
    seen = _watch_checkpoints(monkeypatch)
    problem = sparse_problem(n=60, d=25, density=0.3, seed=2, loss="logistic", lam=1e-3)
    res = cdlab.solve(problem, "newton", tol=1e-7, solver="cg", eval_every=1.0, max_passes=1000)
    assert res.converged and len(seen) == len(res.trace)  # one call per checkpoint, the start's included
    assert [tol for _, _, tol in seen] == [1e-7] * len(seen)
    assert [row["gap"] for _, row, _ in seen] == res.trace.gap.tolist()


def test_squared_cg_is_preconditioned_cg_on_the_normal_equations():
    """The squared loss's carried CG after 1, 2 and 3 steps equals Nocedal & Wright's Algorithm 5.3 with
    M = diag(XᵀX/n + λI), written out with dense numpy (plain CG's iterates differ from the second on)."""
    problem = sparse_problem(n=60, d=12, density=0.4, seed=3, loss="squared", lam=1e-2)
    X, n = problem.X.toarray(), problem.n_samples
    H = X.T @ X / n + 1e-2 * np.eye(12)
    m_inv = 1.0 / np.diag(H)
    assert np.ptp(m_inv) > 0.1 * m_inv.max()  # a preconditioner that is not a multiple of I
    w, r = np.zeros(12), X.T @ problem.y / n
    s = m_inv * r
    p = s.copy()
    state = newton.NewtonState(problem, "uniform", None, solver="cg")
    for _ in range(3):
        w, r, s, p = dense_pcg_step(H, m_inv, w, r, s, p)
        state.run(1)
        np.testing.assert_allclose(state.w, w, rtol=1e-10, atol=1e-13)


def test_cg_on_the_squared_loss_counts_two_passes_per_iteration_and_one_for_the_start(monkeypatch):
    """The squared loss under CG: one sweep for the start's residual −∇P(0), then two per CG iteration
    (a step); CG's iterates are the exact minimisers over the Krylov space, so after d steps w is w*. A solve's
    start checkpoint gives CG its residual from data facts (``_sums_at_zero``): the first solve on the data reads
    X once for Xᵀy, counted as the sweep's would be; a later one reads none; with SUMS_AT_ZERO off, the sweep."""
    problem = sparse_problem(n=60, d=12, density=0.4, seed=3, loss="squared", lam=1e-2)
    state = newton.NewtonState(problem, "uniform", None, solver="cg")
    for k in (1, 3, 12):
        state.run(k - state.steps)
        assert (state.steps, state.nnz_touched, state.data_passes) == (k, (1 + 2 * k) * problem.nnz, 1.0 + 2 * k)
    X = problem.X.toarray()
    w_star = np.linalg.solve(X.T @ X / 60 + 1e-2 * np.eye(12), X.T @ problem.y / 60)
    np.testing.assert_allclose(state.w, w_star, rtol=1e-8, atol=1e-10)
    assert not problem.data.has_fact("xty")
    first = cdlab.solve(problem, "newton", tol=0, max_steps=4, solver="cg", eval_every=1.0)
    assert first.trace.nnz_touched.tolist()[-1] == 9 * problem.nnz and problem.data.has_fact("xty")
    res = cdlab.solve(problem, "newton", tol=0, max_steps=4, solver="cg", eval_every=1.0)
    assert res.trace.nnz_touched.tolist()[-1] == 8 * problem.nnz
    np.testing.assert_array_equal(first.w, res.w)
    monkeypatch.setattr(newton, "SUMS_AT_ZERO", False)
    swept = cdlab.solve(problem, "newton", tol=0, max_steps=4, solver="cg", eval_every=1.0)
    assert swept.trace.nnz_touched.tolist()[-1] == 9 * problem.nnz
    np.testing.assert_allclose(swept.w, res.w, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("loss", LOSSES)
def test_a_tiny_lam_ends_with_a_clear_status_and_bounded_iterations(loss):
    """λ = 1e-8/n: H is ill-conditioned, CG stops at MAX_CG_ITERATIONS per Newton iteration (so one iteration,
    which a run cannot stop inside, reads X at most 2·MAX_CG_ITERATIONS + 1 times) and the run ends on its
    budget, its objective decreasing (the squared loss's, on its dual system: D increasing) and its certificate
    finite."""
    problem = many_features_problem(loss).with_params(lam=1e-8 / 600)
    res = cdlab.solve(problem, "newton", tol=1e-12, max_passes=1500, eval_every=1.0)
    assert res.status in ("converged", "max_passes") and np.isfinite(res.trace.gap).all()
    # the budget ends a run within half a step of max_passes
    assert res.status == "converged" or res.trace.passes.iloc[-1] >= 1500 - newton.MAX_CG_ITERATIONS - 1
    if loss == "squared":
        assert problem.n_features >= newton.DUAL_CG_RATIO * problem.n_samples
        assert (np.diff(res.trace.dual) >= -1e-12 * abs(res.trace.primal.iloc[0])).all()
    else:
        assert (np.diff(res.trace.primal) <= 1e-12 * abs(res.trace.primal.iloc[0])).all()
    per_step = np.diff(res.trace.passes) / np.maximum(np.diff(res.trace.steps), 1)
    assert per_step.max() <= 2 * newton.MAX_CG_ITERATIONS + 1


@pytest.mark.parametrize("solver", ["qr", "Cholesky", None, 3])
def test_a_bad_solver_is_one_clear_value_error(solver):
    problem = sparse_problem(loss="logistic", lam=1e-2)
    message = rf"^unknown solver {re.escape(repr(solver))}; choose one of \['auto', 'cg', 'cholesky'\]$"
    with pytest.raises(ValueError, match=message):
        cdlab.solve(problem, "newton", solver=solver)
    with pytest.raises(ValueError, match=message):
        newton.NewtonState(problem, "uniform", None, solver=solver)


def test_the_inner_solver_and_its_step_cost():
    """Cholesky unless CG_MARGIN times CG's predicted call is below it (few features), CG beyond MAX_FEATURES; a
    forced solver is kept; a step's predicted cost (MethodSpec.step_ns) is the Cholesky iteration's (where the run
    samples H, with a sampled one's), or on the CG path its most, MAX_CG_ITERATIONS Hessian-vector products (the
    squared loss's step: one)."""
    X, y = make_synthetic(8000, 20, seed=7, normalize="rows")
    small = cdlab.Problem(X, y, loss="logistic", lam=3e-4 / 8000)  # few features, κ large
    wide = many_features_problem("logistic")
    assert newton.inner_solver(small) == "cholesky" and newton.inner_solver(wide) == "cg"
    assert newton.inner_solver(small, "cg") == "cg" and newton.inner_solver(wide, "cholesky") == "cholesky"
    for lam in (1e-3 / 8000, 1e-1 / 8000, 10 / 8000):  # the rule, wherever the constants put the problem
        problem = small.with_params(lam=lam)
        cholesky, cg = newton.predicted_ns(problem, "cholesky"), newton.predicted_ns(problem, "cg")
        assert newton.inner_solver(problem) == ("cg" if newton.CG_MARGIN * cg < cholesky else "cholesky")
    spec = cdlab.METHODS["newton"]
    assert newton.sample_size(small) > 0  # its most: a sampled step that gives way to the exact H's
    assert spec.step_ns(small) == newton.cholesky_iteration_ns(small) + newton.cholesky_iteration_ns(small, True)
    assert spec.step_ns(wide) == newton.cg_iteration_ns(wide, newton.MAX_CG_ITERATIONS)
    assert spec.step_ns(small, {"solver": "cg"}) == newton.cg_iteration_ns(small, newton.MAX_CG_ITERATIONS)
    squared = many_features_problem("squared")
    assert spec.step_ns(squared) == newton.cg_iteration_ns(squared, 1)
    assert newton.cg_iteration_ns(wide, 2) - newton.cg_iteration_ns(wide, 1) > 2 * newton.CG_NS_PER_NNZ * wide.nnz


def test_the_logistic_start_gap_is_the_gap_newton_starts_from_and_sets_its_iterations():
    """newton.logistic_start_gap, ‖Xᵀy‖²/(8λn²), is the certified gap of the trace's first row (w = 0, α = y/2);
    newton_iterations grows with its decades, never below MIN_ITERATIONS, and the measured iterations of runs to a
    gap of 1e-6·P(0) lie within the fit's range (0.63–1.34 on the race's problems) widened to 0.5–2."""
    X, y = make_synthetic(3000, 40, seed=11, normalize="mean")
    for lam_factor in (1.0, 0.01):
        problem = cdlab.Problem(X, y, loss="logistic", lam=lam_factor / 3000)
        res = cdlab.solve(problem, "newton", tol=1e-6 * np.log(2), max_passes=2000)
        assert res.converged
        assert newton.logistic_start_gap(problem) == pytest.approx(res.trace.gap.iloc[0], rel=1e-9)
        assert 0.5 <= res.trace.steps.iloc[-1] / newton.newton_iterations(problem) <= 2.0
    problem = cdlab.Problem(X, y, loss="logistic", lam=1.0 / 3000)
    iterations = [newton.newton_iterations(problem.with_params(lam=lam)) for lam in (1e2, 1.0, 1e-3, 1e-6)]
    assert iterations[0] == newton.MIN_ITERATIONS and np.all(np.diff(iterations) >= 0) and iterations[-1] > 6
    assert newton.newton_iterations(problem.with_params(loss="squared")) == 1.0


@pytest.mark.parametrize("loss", ["logistic", "squared", "smoothed_hinge"])
def test_cg_on_dense_rows_runs_as_on_the_csr_arrays(monkeypatch, loss):
    """On data kept as dense rows (``Data.X_dense``) the CG kernels read those instead of the CSR arrays: the
    same direction up to rounding (the row sums run in another order), the same work counted, and a run
    certified at the independent optimum."""
    from cdlab.data import dataset

    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 40)) / 6.0
    X[rng.random(X.shape) < 0.03] = 0.0  # about 97 % of the entries stored: a dense copy
    y = X @ rng.standard_normal(40) if loss == "squared" else np.where(X[:, 0] + X[:, 1] >= 0, 1.0, -1.0)
    dense = cdlab.Problem(X, y, loss=loss, lam=1e-3)
    assert dense.data.X_dense is not None
    monkeypatch.setattr(dataset, "DENSE_MIN_DENSITY", 2.0)
    sparse = cdlab.Problem(X, y, loss=loss, lam=1e-3)
    assert sparse.data.X_dense is None
    states = [newton.NewtonState(p, "uniform", None, solver="cg") for p in (dense, sparse)]
    assert states[0].sweep[-1] is dense.data.X_dense and states[1].sweep[-1] is None  # what the kernels read
    for state in states:
        state.run(2)
    assert states[0].nnz_touched == states[1].nnz_touched and states[0].steps == states[1].steps == 2
    np.testing.assert_allclose(states[0].w, states[1].w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(states[0].z, dense.X @ states[0].w, rtol=1e-9, atol=1e-12)
    check_certified(dense, "newton", tol=1e-10, solver="cg")


def test_squared_cg_checkpoints_where_its_carried_residual_says_the_gap_may_be_reached():
    """The squared loss on the CG path under eval_every="auto": the gap at α = −φ'(Xw) is ‖r‖²/(2λ) with r the
    residual CG carries, so the run checkpoints at the start and where that is ≤ SQUARED_DUE_FACTOR·tol only,
    ending at the step a run certified after every step ends at, with the same iterate; when the estimate never
    says so (a factor of 0), the guard still checkpoints at DUE_GUARD_RATIO × the last checkpoint's steps +
    DUE_GUARD_STEPS, and the run ends certified."""
    problem = sparse_problem(n=400, d=60, density=0.3, seed=6, loss="squared", lam=1e-4)
    tol = 1e-10
    res = cdlab.solve(problem, "newton", solver="cg", tol=tol, max_passes=5000)
    every = cdlab.solve(problem, "newton", solver="cg", tol=tol, max_passes=5000, eval_every=1e-9)
    assert res.converged and every.converged and res.trace.gap.iloc[-1] <= tol
    assert every.trace.steps.iloc[-1] > 8 and len(res.trace) <= 3 < len(every.trace)
    assert res.trace.steps.iloc[-1] == every.trace.steps.iloc[-1] and res.w.tolist() == every.w.tolist()
    assert newton.solve_checkpoints(problem, "cg") == 2
    never = pytest.MonkeyPatch()
    never.setattr(newton, "SQUARED_DUE_FACTOR", 0.0)
    try:
        guarded = cdlab.solve(problem, "newton", solver="cg", tol=tol, max_passes=5000)
    finally:
        never.undo()
    steps, guard = guarded.trace.steps.tolist(), [0]
    while guard[-1] < steps[-1]:
        guard.append(newton.DUE_GUARD_RATIO * guard[-1] + newton.DUE_GUARD_STEPS)
    assert guarded.converged and steps[:-1] == guard[:len(steps) - 1] and steps[-1] <= guard[len(steps) - 1]


def test_squared_cg_below_the_reachable_gap_checkpoints_rarely():
    """A tol below what the certificate can reach (columns scaled 1 … 1e-4, λ = 1e-9): CG's carried residual
    keeps falling after the true one stalls, so each due checkpoint that does not certify doubles the steps
    to the next (``due_spacing``): the run checkpoints about log₂(steps) times, not after every step, and ends
    on its budget."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 60)) * np.logspace(0, -4, 60)
    problem = cdlab.Problem(X, X @ rng.standard_normal(60), loss="squared", lam=1e-9)
    res = cdlab.solve(problem, "newton", solver="cg", tol=1e-22, max_passes=600)
    assert res.status == "max_passes" and res.trace.steps.iloc[-1] >= 250 and np.isfinite(res.trace.gap).all()
    assert len(res.trace) <= 20


def rotated_dense_problem(cond, lam_factor, n=4000, d=300, seed=1):
    """Dense Gaussian rows whose column scales span √cond, rotated so that no diagonal (Jacobi) preconditioner
    undoes them: CG on its normal equations is slow where cond is large, fast at cond = 1. The rows of
    benchmarks/handover_bench.py (``rotated_rows``), where the hand-over rule was measured."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from handover_bench import rotated_rows
    return rotated_rows(cond, lam_factor, n, d, seed)


def normal_equations_solution(problem):
    """numpy's solution of the squared loss's normal equations (XᵀX/n + λI) w = Xᵀy/n."""
    X = problem.X.toarray()
    n, d = problem.n_samples, problem.n_features
    return np.linalg.solve(X.T @ X / n + problem.lam * np.eye(d), X.T @ problem.y / n)


@pytest.mark.parametrize("lam_factor", [0.1, 0.01])  # at 1/n and cond 1 "auto" takes CG outright
def test_the_squared_loss_starts_on_cg_and_hands_over_to_cholesky_where_cg_is_slow(monkeypatch, lam_factor):
    """Where a Cholesky iteration costs at least HANDOVER_MIN_PRODUCTS products, a squared-loss run under
    solver="auto" starts on CG, whichever inner solver the model predicts faster (it puts CG ahead at cond 1e8 too,
    blind to the rotation): on well-conditioned rows CG certifies in a few
    products and never forms H; on rows CG is slow on (cond 1e8, rotated) it hands over after a few products,
    and one Cholesky step lands on the optimum. Both certified (and within the gap's reach, ‖w − w*‖² ≤ 2·gap/λ,
    of numpy's solution of the normal equations), with every pass
    counted (1 for the start's Xᵀy, the data fact its ∇P comes from, ``_sums_at_zero``, 2 per product, 2 for the
    Cholesky step), and no checkpoint at the CG step
    that handed over (its gap is far above tol: the next step is Cholesky's)."""
    seen = _watch_checkpoints(monkeypatch)
    for cond, hands_over in ((1.0, False), (1e8, True)):
        problem = rotated_dense_problem(cond, lam_factor)
        assert newton.cg_handover(problem) >= newton.HANDOVER_MIN_PRODUCTS
        assert cond == 1.0 or newton.inner_solver(problem) == "cg"  # the model's pick, blind to the rotation
        res = check_certified(problem, "newton", tol=1e-9)
        state = seen[-1][0]
        assert state.handover_products > 0 and state.solver == ("cholesky" if hands_over else "cg")
        # λ-strong convexity: ‖w − w*‖² ≤ 2 gap / λ
        w_star = normal_equations_solution(problem)
        assert np.linalg.norm(res.w - w_star) <= np.sqrt(2 * res.trace.gap.iloc[-1] / problem.lam) + 1e-12
        products = len(state.product_gaps)
        assert 2 <= products <= state.handover_products
        assert state.data_passes == pytest.approx(1 + 2 * products + 2 * hands_over, rel=1e-12)
        steps = res.trace.steps.tolist()
        assert steps[-1] == products + hands_over and (products not in steps) == hands_over
        slow = cdlab.solve(problem, "newton", solver="cg", tol=1e-9, max_passes=1e5)
        assert (slow.trace.steps.iloc[-1] > 5 * products) == hands_over  # CG alone: many more products
    choice = auto.choose(problem)  # auto's reason says so
    assert choice["method"] == "newton" and "hands over to Cholesky" in choice["reason"]


def test_a_squared_run_without_a_tol_hands_over_at_its_second_product():
    """tol ≤ 0 (a run to its budget): CG cannot reach a gap of 0, so it hands over at its second product;
    the Cholesky step that follows lands on the optimum; an explicit solver never hands over."""
    problem = rotated_dense_problem(1.0, 0.1)
    state = newton.NewtonState(problem, "uniform", None)
    state.checkpointed({"gap": np.inf, "primal": problem.primal(state.w)}, 0.0)
    state.run(1)
    assert state.solver == "cg" and state.data_passes == 3  # ∇P, then a product
    state.run(1)
    assert state.solver == "cholesky" and state.data_passes == 5 and len(state.product_gaps) == 2
    state.run(1)
    assert state.steps == 3 and state.data_passes == 7
    np.testing.assert_allclose(state.w, normal_equations_solution(problem), rtol=1e-9, atol=1e-12)
    assert newton.NewtonState(problem, "uniform", None, solver="cholesky").handover_products == 0
    assert newton.NewtonState(problem, "uniform", None, solver="cg").handover_products == 0


def test_the_handover_rule_weighs_the_products_left_and_caps_cg_at_a_cholesky_iterations_worth():
    """``_hands_over`` on given carried gaps (tol 1e-6): at a contraction of ½ per product, ~19 more products
    reach tol, so CG goes on where a Cholesky iteration costs 30 and hands over where it costs 10; a gap that
    has not fallen, or rose within the window of the rate, decides nothing until CG has run a Cholesky
    iteration's worth of products; a gap within tol never hands over; the first product alone never does."""
    problem = rotated_dense_problem(1.0, 0.1)
    state = newton.NewtonState(problem, "uniform", None)
    state.checkpointed({"gap": np.inf, "primal": problem.primal(state.w)}, 1e-6)

    def decide(gaps, products):
        state.product_gaps, state.handover_products = list(gaps), products
        return state._hands_over()

    assert not decide([1.0], 2.0)
    assert not decide([1.0, 0.5], 30.0) and decide([1.0, 0.5], 10.0)
    assert not decide([1.0, 0.5, 0.25, 0.125], 30.0)  # the last half's rate: (0.125 / 0.5)^(1/2) = ½
    assert not decide([1.0] * 9, 10.0) and decide([1.0] * 10, 10.0)
    assert not decide([1.0] + [1e-7] * 20, 10.0)
    # a window where the gap rose decides nothing (its rate, (0.45 / 0.5)^(1/2), would ask for ~250 products) but
    # the cap; the same rate over a window that fell at every product hands over
    assert not decide([1.0, 0.5, 0.6, 0.45], 10.0) and decide([1.0, 0.5, 0.6, 0.45], 4.0)
    assert decide([1.0, 0.5, 0.48, 0.45], 10.0)
    assert decide([1.0, 0.5, 0.6, 0.45, 0.44, 0.43], 10.0)  # from m = 3 on it fell at every product


def _full_rows_problem(loss, n=300, d=120, seed=6):
    """Every row full and d ≥ FULL_ROW_MIN_LENGTH: the checkpoint reads rows as dense ones (``full_rows``)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) >= 0, 1.0, -1.0)
    return cdlab.Problem(X, y, loss=loss, lam=1e-2 / n)


@pytest.mark.parametrize("loss", ["logistic", "smoothed_hinge"])
@pytest.mark.parametrize("rows", ["sparse", "full"])
def test_newton_cg_checkpoints_with_its_next_gradients_sweep(monkeypatch, loss, rows):
    """On the Newton–CG path a checkpoint's Xw, α(w) and Xᵀα come from the sweep that also gives the next
    iteration ∇P and its preconditioner (``certificate_sums``), not from the driver's sweep: the certificate is
    Problem's (P bit for bit, D and the gap within rounding, as any primal method's), the run is the unfused one
    up to rounding — the same steps, w within 1e-10, and the same passes counted but the start's, whose sums come
    from data facts (``_sums_at_zero``) — and it is certified at the independent optimum."""
    from cdlab.solvers import base, driver

    problem = (sparse_problem(n=200, d=60, density=0.2, seed=3, loss=loss, lam=1e-3) if rows == "sparse"
               else _full_rows_problem(loss))
    assert (cdlab.solvers._kernels.full_rows(problem) is None) == (rows == "sparse")
    problem.data.xty  # the data's Xᵀy known, as after a first run on it: the start reads nothing
    sweeps = []
    sweep = driver.certificate_sweep
    monkeypatch.setattr(driver, "certificate_sweep", lambda *args: sweeps.append(1) or sweep(*args))
    fused = cdlab.solve(problem, "newton", tol=1e-10, solver="cg", max_passes=1000)
    assert fused.converged and not sweeps and len(fused.trace) >= 3
    last = fused.trace.iloc[-1]
    assert last.primal == problem.primal(fused.w)
    assert last.dual == pytest.approx(problem.dual(fused.alpha), rel=1e-13)
    assert last.gap == pytest.approx(problem.gap(fused.w, fused.alpha), rel=1e-9, abs=1e-15)
    monkeypatch.setattr(newton.NewtonState, "certificate_sums", base.State.certificate_sums)
    plain = cdlab.solve(problem, "newton", tol=1e-10, solver="cg", max_passes=1000)
    assert sweeps and fused.trace.steps.tolist() == plain.trace.steps.tolist()
    # the start's sums from data facts (``_sums_at_zero``): the first step reads X once less
    np.testing.assert_array_equal(plain.trace.nnz_touched - fused.trace.nnz_touched,
                                  [0] + [problem.nnz] * (len(fused.trace) - 1))
    np.testing.assert_allclose(fused.w, plain.w, rtol=1e-10, atol=1e-13)
    check_certified(problem, "newton", tol=1e-10, solver="cg")


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("dense", [False, True])
def test_the_cholesky_paths_start_checkpoints_with_its_first_hessians_read(monkeypatch, loss, dense):
    """On the Cholesky path the start's checkpoint (w = 0) takes Xᵀα from the read of X that forms the first
    iteration's ∇P and H (``_cholesky_start``), not from the driver's sweep, which runs at the later checkpoints
    only; the start's certificate is Problem's (D and the gap within rounding), the run is the unfused one up to
    rounding — the same steps and passes counted, w within 1e-10 — and it is certified at the independent
    optimum; H is formed once an iteration."""
    from cdlab.solvers import base, driver

    problem = sparse_problem(n=300, d=20, density=0.3, seed=5, loss=loss, lam=1e-3)
    monkeypatch.setattr(newton, "dense_rows", lambda p: dense)
    sweeps, forms = [], []
    sweep, form = driver.certificate_sweep, newton.NewtonState._gradient_and_hessian
    monkeypatch.setattr(driver, "certificate_sweep", lambda *args: sweeps.append(1) or sweep(*args))
    monkeypatch.setattr(newton.NewtonState, "_gradient_and_hessian", lambda self: forms.append(1) or form(self))
    fused = cdlab.solve(problem, "newton", tol=1e-10, solver="cholesky", max_passes=1000)
    assert fused.converged and len(sweeps) == len(fused.trace) - 1 and len(forms) == fused.trace.steps.iloc[-1]
    start = fused.trace.iloc[0]
    alpha0 = problem.alpha_from_w(np.zeros(problem.n_features))
    assert start.primal == problem.primal(np.zeros(problem.n_features))
    assert start.dual == pytest.approx(problem.dual(alpha0), rel=1e-12, abs=1e-12)
    assert start.gap == pytest.approx(problem.gap(np.zeros(problem.n_features), alpha0), rel=1e-12, abs=1e-12)
    monkeypatch.setattr(newton.NewtonState, "certificate_sums", base.State.certificate_sums)
    sweeps.clear()
    plain = cdlab.solve(problem, "newton", tol=1e-10, solver="cholesky", max_passes=1000)
    assert len(sweeps) == len(plain.trace) and fused.trace.steps.tolist() == plain.trace.steps.tolist()
    assert fused.trace.nnz_touched.tolist() == plain.trace.nnz_touched.tolist()
    np.testing.assert_allclose(fused.w, plain.w, rtol=1e-10, atol=1e-13)
    check_certified(problem, "newton", tol=1e-10, solver="cholesky")
    forms.clear()  # a start that already certifies has formed the H its first step would have used: once
    monkeypatch.undo()
    monkeypatch.setattr(newton, "dense_rows", lambda p: dense)
    monkeypatch.setattr(newton.NewtonState, "_gradient_and_hessian", lambda self: forms.append(1) or form(self))
    done = cdlab.solve(problem, "newton", tol=1e3 * fused.trace.gap.iloc[0], solver="cholesky")
    assert done.converged and done.trace.steps.iloc[-1] == 0 and len(forms) == 1


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_the_squared_losss_cg_starts_checkpoints_from_data_facts(monkeypatch, n_jobs):
    """On the squared loss's CG path the start's checkpoint (w = 0) takes its sums, and CG its first residual,
    from data facts (``_cg_start_sums``, ``_sums_at_zero``: Xᵀα = Xᵀy, no read once the data has it, where the
    unfused run's first step reads X for them), not from the driver's sweep, which runs at the later checkpoints
    only; the start's certificate is Problem's (D and the gap within rounding), and the run is the unfused one up
    to rounding — the same steps, w within 1e-10 — certified at the independent optimum."""
    from cdlab.solvers import base, driver

    problem = sparse_problem(n=300, d=40, density=0.3, seed=7, loss="squared", lam=1e-3)
    problem.data.xty  # the data's Xᵀy known, as after a first run on it: the start reads nothing
    sweeps = []
    for name in ("certificate_sweep", "parallel_certificate_sweep"):
        sweep = getattr(driver, name)
        monkeypatch.setattr(driver, name, lambda *args, sweep=sweep: sweeps.append(1) or sweep(*args))
    fused = cdlab.solve(problem, "newton", tol=1e-10, solver="cg", max_passes=1000, n_jobs=n_jobs)
    assert fused.converged and len(fused.trace) >= 2 and len(sweeps) == len(fused.trace) - 1
    start, zero = fused.trace.iloc[0], np.zeros(problem.n_features)
    alpha0 = problem.alpha_from_w(zero)
    assert start.primal == problem.primal(zero) and start.nnz_touched == 0
    assert start.dual == pytest.approx(problem.dual(alpha0), rel=1e-12, abs=1e-12)
    assert start.gap == pytest.approx(problem.gap(zero, alpha0), rel=1e-12, abs=1e-12)
    monkeypatch.setattr(newton.NewtonState, "certificate_sums", base.State.certificate_sums)
    sweeps.clear()
    plain = cdlab.solve(problem, "newton", tol=1e-10, solver="cg", max_passes=1000, n_jobs=n_jobs)
    assert len(sweeps) == len(plain.trace) and fused.trace.steps.tolist() == plain.trace.steps.tolist()
    # the start's sums from data facts (``_sums_at_zero``): the first step reads X once less
    np.testing.assert_array_equal(plain.trace.nnz_touched - fused.trace.nnz_touched,
                                  [0] + [problem.nnz] * (len(fused.trace) - 1))
    np.testing.assert_allclose(fused.w, plain.w, rtol=1e-10, atol=1e-13)
    check_certified(problem, "newton", tol=1e-10, solver="cg", n_jobs=n_jobs)


@pytest.mark.parametrize("loss", ["logistic", "smoothed_hinge"])
def test_the_fused_sweep_gives_the_gradient_and_preconditioner_of_jacobi(loss):
    """``certified_jacobi``'s z, α and Xᵀα are the checkpoint sweep's bit for bit, and ∇P = λw − Xᵀα/n, curv and
    1/diag(H) are ``jacobi``'s up to rounding; at w = 0 it reads no row for z."""
    from cdlab.solvers._kernels import certificate_sweep, full_rows
    from cdlab.solvers._newton_cg import certified_jacobi, jacobi

    for problem in (sparse_problem(n=80, d=30, density=0.3, seed=1, loss=loss, lam=1e-3), _full_rows_problem(loss)):
        n, d = problem.n_samples, problem.n_features
        for w in (np.random.default_rng(2).standard_normal(d) / 3, np.zeros(d)):
            state = newton.NewtonState(problem, "uniform", None, solver="cg")
            state.w = w.copy()
            alpha, z, xt_alpha = state.certificate_sums()
            z_ref, alpha_ref, xt_ref = np.empty(n), np.empty(n), np.zeros(d)
            certificate_sweep(*problem.csr_arrays, problem.y, problem.loss_code, problem.s, w, alpha_ref, True,
                              z_ref, xt_ref, full_rows(problem))
            np.testing.assert_array_equal(z, z_ref)
            np.testing.assert_array_equal(alpha, alpha_ref)
            np.testing.assert_array_equal(xt_alpha, xt_ref)
            deriv, curv, grad, minv = np.empty(n), np.empty(n), np.empty(d), np.empty(d)
            newton.loss_weights(problem.loss_code, problem.X @ w, problem.y, problem.s, deriv, curv)
            jacobi(*problem.csr_arrays, None, deriv, curv, problem.lam, w, grad, minv)
            np.testing.assert_allclose(state.grad, grad, rtol=1e-11, atol=1e-15)
            np.testing.assert_allclose(state.curv, curv, rtol=1e-12, atol=1e-18)
            np.testing.assert_allclose(state.minv, minv, rtol=1e-12)
            assert state.fresh
            state.checkpointed({"gap": np.inf, "primal": problem.primal(w)}, 0.0)  # the driver's, after the sweep
            assert state.value == problem.primal(w)  # the next line search starts from the checkpoint's P(w)
            # the next iteration takes ∇P, curv and M from the sweep: a NaN φ' would reach w through jacobi
            state.deriv[:] = np.nan
            state.run(1)
            assert not state.fresh and np.all(np.isfinite(state.w)) and state.value < problem.primal(w)


def _blocks_problems(loss):
    """Sparse rows (one empty row, one empty column), and full rows kept as a dense array too
    (``Data.X_dense``, read by the dense sweeps)."""
    rng = np.random.default_rng(1)
    X = sp.random(90, 30, density=0.3, random_state=1, format="lil", data_rvs=rng.standard_normal)
    X[5, :] = 0.0
    X[:, 7] = 0.0
    y = X @ rng.standard_normal(30) + 0.1 * rng.standard_normal(90) if loss == "squared" else np.sign(
        rng.standard_normal(90))
    sparse = cdlab.Problem(sp.csr_matrix(X), y, loss=loss, lam=1e-3)
    full = _full_rows_problem(loss, n=90)
    assert sparse.data.X_dense is None and full.data.X_dense is not None
    assert sparse.X.getnnz(axis=1)[5] == 0 and sparse.col_nnz[7] == 0
    return sparse, full


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_the_parallel_sweeps_sum_each_block_as_the_serial_sweep_and_add_them_in_block_order(loss):
    """Over row blocks (``_threads.row_blocks``, run on two threads), each sweep's n_jobs form writes its
    length-n vectors row by row as the serial sweep does (the same bits), and its length-d sums are the serial
    sweep's over each block added in block order (the same bits; ∇P and M⁻¹ then take λ as the serial sweep
    does), so one block gives the serial sweep's bits; the fused sweep's Xᵀα is the driver's parallel
    certificate sweep's over the same blocks bit for bit. Scratch starts as NaN: what a block does not zero
    would show."""
    from cdlab.solvers import _newton_cg as NC
    from cdlab.solvers._kernels import full_rows, parallel_certificate_sweep
    from cdlab.solvers._threads import parallel_section, row_blocks

    rng = np.random.default_rng(4)
    for problem in _blocks_problems(loss):
        n, d, lam = problem.n_samples, problem.n_features, problem.lam
        indptr, indices, data = problem.csr_arrays
        cols, dense = NC.nonempty_columns(problem), problem.data.X_dense
        v, w = rng.standard_normal(d), rng.standard_normal(d) / 3
        curv, deriv = rng.random(n) / n, rng.standard_normal(n) / n
        curv[::7] = 0.0  # rows a product reads once
        rows = full_rows(problem)
        cert_args = (*problem.csr_arrays, problem.y, problem.loss_code, problem.s, w, False)
        for n_blocks in (1, 3):
            bounds = row_blocks(indptr, n_blocks)
            scratch = np.full((2, n_blocks, d), np.nan)
            with parallel_section(2):
                xv, q = np.empty(n), np.full(d, np.nan)
                touched = NC.hessian_vector_product(*cg_sweep_arrays(problem), curv, v, xv, q, bounds, scratch)
                grad, minv = np.full(d, np.nan), np.full(d, np.nan)
                NC.jacobi_sweep(*cg_sweep_arrays(problem), deriv, curv, lam, w, grad, minv, bounds, scratch)
                z, alpha, xt_alpha, c, diag = np.empty(n), np.empty(n), np.zeros(d), np.empty(n), np.zeros(d)
                NC.certified_jacobi_sweep(*cert_args, z, alpha, xt_alpha, c, diag, rows, bounds, scratch)
                z_ref, alpha_ref, xt_ref = np.empty(n), np.empty(n), np.zeros(d)
                parallel_certificate_sweep(*cert_args[:-1], alpha_ref, True, z_ref, xt_ref, bounds, rows)
            np.testing.assert_array_equal(z, z_ref)
            np.testing.assert_array_equal(alpha, alpha_ref)
            np.testing.assert_array_equal(xt_alpha, xt_ref)
            # the serial sweeps, each block on its own, added in block order
            xv_ref, q_ref = np.empty(n), np.empty(d)
            assert touched == NC.hessian_product(indptr, indices, data, cols, dense, curv, v, xv_ref, q_ref)
            sums = {k: np.zeros(d) for k in ("q", "grad", "diag_h", "diag_c")}
            c_ref = np.empty(n)
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                part = {k: np.zeros(d) for k in sums}
                NC.hessian_rows(indptr, indices, data, dense, curv, v, np.empty(n), part["q"], lo, hi)
                NC.jacobi_rows(indptr, indices, data, dense, deriv, curv, part["grad"], part["diag_h"], lo, hi)
                NC.certified_rows(*cert_args, np.empty(n), np.empty(n), np.zeros(d), c_ref, part["diag_c"], rows,
                                  lo, hi)
                for k in sums:
                    sums[k] += part[k]
            np.testing.assert_array_equal(xv, xv_ref)
            np.testing.assert_array_equal(c, c_ref)
            np.testing.assert_array_equal(q[cols], sums["q"][cols])  # q is written on the nonempty columns only
            np.testing.assert_array_equal(diag, sums["diag_c"])
            np.testing.assert_array_equal(grad, sums["grad"] + lam * w)
            np.testing.assert_array_equal(minv, 1.0 / (sums["diag_h"] + lam))
            grad_ref, minv_ref = np.empty(d), np.empty(d)
            NC.jacobi(indptr, indices, data, dense, deriv, curv, lam, w, grad_ref, minv_ref)
            if n_blocks == 1:
                np.testing.assert_array_equal(q[cols], q_ref[cols])
                np.testing.assert_array_equal(grad, grad_ref)
                np.testing.assert_array_equal(minv, minv_ref)
            np.testing.assert_allclose(q[cols], q_ref[cols], rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(grad, grad_ref, rtol=1e-12, atol=1e-15)
            if dense is None:  # the sparse problem's empty column: neither zeroed nor summed
                assert np.isnan(q[problem.col_nnz == 0]).all()
            assert not (grad - lam * w)[problem.col_nnz == 0].any()


def cg_sweep_arrays(problem):
    """What the CG kernels read of X (``NewtonState.sweep``): its CSR arrays (values as ``_kernels.row_arrays`` hands
    them), nonempty columns and dense rows."""
    from cdlab.solvers._kernels import row_arrays
    from cdlab.solvers._newton_cg import nonempty_columns

    return (*row_arrays(problem), nonempty_columns(problem), problem.data.X_dense)


def _watch_row_blocks(monkeypatch):
    """The row bounds each CG sweep of a NewtonState ran with (None: the serial sweeps)."""
    seen = []
    threads = newton.NewtonState._sweep_threads

    def watched(self):
        seen.append(self.bounds)
        return threads(self)

    monkeypatch.setattr(newton.NewtonState, "_sweep_threads", watched)
    return seen


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_the_cg_paths_n_jobs_mode_reaches_the_same_certified_optimum(monkeypatch, loss):
    """n_jobs=2 on the CG path (Newton–CG, and the squared loss's CG on its normal equations) runs its sweeps
    over row blocks (the gate lowered to these small problems), Newton–CG's checkpoints from its own fused sweep
    (not the driver's parallel one), and reaches the certified optimum at the independent one, within the
    serial run's P; below CG_PARALLEL_MIN_NNZ it runs the serial sweeps, the serial run bit for bit."""
    from cdlab.solvers import driver

    blocks = _watch_row_blocks(monkeypatch)
    driver_sweeps = []
    sweep = driver.parallel_certificate_sweep
    monkeypatch.setattr(driver, "parallel_certificate_sweep", lambda *a: driver_sweeps.append(1) or sweep(*a))
    for problem in _blocks_problems(loss):
        assert problem.nnz < newton.CG_PARALLEL_MIN_NNZ and not newton.dual_system(problem)
        assert newton.cg_serial_reason(problem, 2).endswith("nonzeros")
        one = check_certified(problem, "newton", tol=1e-10, solver="cg")
        gated = cdlab.solve(problem, "newton", tol=1e-10, solver="cg", n_jobs=2, max_passes=5000)
        assert gated.trace.primal.tolist() == one.trace.primal.tolist()
        assert blocks and not any(b is not None for b in blocks)
        with monkeypatch.context() as m:
            m.setattr(newton, "CG_PARALLEL_MIN_NNZ", 0)
            blocks.clear()
            two = check_certified(problem, "newton", tol=1e-10, solver="cg", n_jobs=2)
        assert blocks and all(b is not None and len(b) == 3 for b in blocks) and two.trace.attrs["n_jobs"] == 2
        assert abs(two.trace.primal.iloc[-1] - one.trace.primal.iloc[-1]) <= 2e-10
        assert (not driver_sweeps) == (loss != "squared")  # the squared loss's CG: the driver's sweep certifies
        blocks.clear()
        driver_sweeps.clear()


def test_auto_runs_newton_cg_on_the_threads_it_is_given(monkeypatch):
    """auto's Newton–CG pick (many features, logistic) runs n_jobs=2 as the CG path's row blocks where X has
    CG_PARALLEL_MIN_NNZ nonzeros (lowered here), certified at the serial run's optimum; below it, it runs on one
    thread and says why. The pick is forced by the margin (on these data SDCA is predicted faster, as it
    measured on rcv1_small): the routing is what is tested, not the cost model."""
    blocks = _watch_row_blocks(monkeypatch)
    problem = many_features_problem("logistic")
    monkeypatch.setattr(auto, "NEWTON_CG_MARGIN", 1e-3)
    choice = auto.choose(problem)
    assert (choice["method"], choice["inner_solver"]) == ("newton", "cg")
    one = cdlab.solve(problem, method="auto", tol=1e-10, max_passes=1000)
    below = cdlab.solve(problem, method="auto", tol=1e-10, max_passes=1000, n_jobs=2)
    assert below.trace.attrs["n_jobs"] == 1 and not any(b is not None for b in blocks)
    assert f"n_jobs=2 not used: newton's CG path runs on one thread below {newton.CG_PARALLEL_MIN_NNZ:,} nonzeros" \
        in below.auto_reason
    monkeypatch.setattr(newton, "CG_PARALLEL_MIN_NNZ", 0)
    blocks.clear()
    two = cdlab.solve(problem, method="auto", tol=1e-10, max_passes=1000, n_jobs=2)
    assert two.method == "newton" and two.converged and two.trace.attrs["n_jobs"] == 2
    assert "not used" not in two.auto_reason and blocks and all(b is not None for b in blocks)
    assert abs(two.trace.primal.iloc[-1] - one.trace.primal.iloc[-1]) <= 1e-10


@pytest.mark.parametrize("loss", ["logistic", "smoothed_hinge"])
def test_products_over_float32_rows_reach_the_same_certified_optimum(monkeypatch, loss):
    """Newton–CG's Hessian-vector products read X's dense rows rounded to float32 where ``product_rows`` says so
    (X kept dense, beyond the cache): forced here on a small problem, the run
    still reaches the certified optimum at the independent one (the products round, and the gradient sweeps of
    the steps that start from no checkpoint far from the tol, ``_gradient_rounds``: not near it, even where a fixed
    cadence leaves those steps unchecked, nor without a tol; the certificate reads float64), along other iterates
    than the float64 run's, with the gradient on float64 rows too; the float32 rows are X_dense rounded,
    read-only."""
    problem = _full_rows_problem(loss, n=400)
    rows32 = problem.data.X_dense_f32
    assert rows32.dtype == np.float32 and not rows32.flags.writeable
    np.testing.assert_array_equal(rows32, problem.data.X_dense.astype(np.float32))
    assert newton.product_rows(problem) is problem.data.X_dense  # within the cache: float64
    f64 = check_certified(problem, "newton", tol=1e-10, solver="cg")
    monkeypatch.setattr(newton, "product_rows", lambda p: p.data.X_dense_f32)
    state = newton.NewtonState(problem, "uniform", None, solver="cg")
    assert state.product_dense is rows32 and state.sweep[-1] is problem.data.X_dense  # the gradient: float64
    direction = newton.newton_cg_direction
    gradient_rows = []

    def recording(*args):
        if not args[21]:  # fresh: ∇P from the checkpoint's float64 sweep, no read here
            gradient_rows.append(args[4])
        return direction(*args)

    monkeypatch.setattr(newton, "newton_cg_direction", recording)
    f32 = check_certified(problem, "newton", tol=1e-10, solver="cg")
    assert not np.array_equal(f32.w, f64.w)  # the products did read the float32 rows
    # far from the tol the gradient reads the float32 rows, near it X's float64 values (``_gradient_rounds``)
    assert any(rows is rows32 for rows in gradient_rows)
    assert all(rows is rows32 or rows is problem.data.X_dense for rows in gradient_rows)
    gradient_rows.clear()
    spaced = check_certified(problem, "newton", tol=1e-10, solver="cg", eval_every=40.0)  # steps near it unchecked
    assert gradient_rows[0] is rows32 and gradient_rows[-1] is problem.data.X_dense
    assert spaced.trace.steps.iloc[-1] > len(spaced.trace)  # steps ran between checkpoints
    gradient_rows.clear()
    cdlab.solve(problem, "newton", tol=0.0, max_steps=12, eval_every=4.0, solver="cg")
    assert gradient_rows and all(rows is problem.data.X_dense for rows in gradient_rows)  # no tol: float64 only
    gradient_rows.clear()
    monkeypatch.setattr(newton, "GRADIENT_ON_PRODUCT_ROWS", False)
    products_only = check_certified(problem, "newton", tol=1e-10, solver="cg")
    assert gradient_rows and all(rows is problem.data.X_dense for rows in gradient_rows)
    assert not np.array_equal(products_only.w, f32.w)
    monkeypatch.setattr(newton, "GRADIENT_ON_PRODUCT_ROWS", True)
    # a line search that finds no decrease along a float32-summed XΔ switches the run to the float64 rows
    search = newton.NewtonState._line_search

    def failing_once(self, step):
        search(self, step)
        if self.steps == 1:
            self.last_step = 0.0

    monkeypatch.setattr(newton.NewtonState, "_line_search", failing_once)
    state = newton.NewtonState(problem, "uniform", None, solver="cg")
    state.run(2)
    assert state.product_dense is problem.data.X_dense


def test_product_rows_are_float32_only_for_dense_rows_beyond_the_cache_not_on_the_dual_system(monkeypatch):
    problem = _full_rows_problem("logistic")
    sparse = sparse_problem(n=200, d=60, density=0.2, seed=3, loss="logistic", lam=1e-3)
    wide = _full_rows_problem("squared", n=50, d=120)  # d ≥ DUAL_CG_RATIO·n: the squared loss's dual system
    assert newton.product_rows(problem) is problem.data.X_dense and newton.product_rows(sparse) is None
    monkeypatch.setattr(newton, "beyond_cache", lambda p: True)  # every X beyond the cache
    assert newton.product_rows(problem) is problem.data.X_dense_f32
    assert newton.product_rows(problem.with_params(loss="squared")) is problem.data.X_dense_f32
    assert newton.dual_system(wide) and newton.product_rows(wide) is wide.data.X_dense
    assert newton.product_rows(wide.with_params(loss="logistic")) is wide.data.X_dense_f32
    assert newton.product_rows(sparse) is None


def test_the_squared_losss_cg_on_float32_rows_refines_to_the_certified_optimum(monkeypatch):
    """The squared loss's CG on products over float32 rows (``product_rows``, forced here) converges to the rounded
    system's solution: on well-conditioned rows its due checkpoint certifies it with float64 values (no switch),
    and on rows whose columns span 1 … 1e-3 at a tolerance below what rounding leaves, the first due checkpoint
    that does not certify switches the run to the float64 rows, CG restarted from the true residual (one more
    read of X for it), and the run still reaches the certified optimum at the independent one; a run without a
    tol > 0 (nothing to refine against) reads the float64 rows throughout: the float64 run's iterates."""
    monkeypatch.setattr(newton, "product_rows", lambda p: p.data.X_dense_f32)
    switches = []
    checkpointed = newton.NewtonState.checkpointed

    def spy(self, row, tol, margins=None):
        rounded = self.product_dense is not self.sweep[-1]
        checkpointed(self, row, tol, margins)
        switches.append(rounded and self.product_dense is self.sweep[-1])

    monkeypatch.setattr(newton.NewtonState, "checkpointed", spy)
    easy = _full_rows_problem("squared", n=400)
    state = newton.NewtonState(easy, "uniform", None, solver="cg")
    assert state.product_dense is easy.data.X_dense_f32 and state.sweep[-1] is easy.data.X_dense
    check_certified(easy, "newton", tol=1e-10, solver="cg")
    assert not any(switches)
    rng = np.random.default_rng(8)
    X = rng.standard_normal((400, 120)) * np.logspace(0, -3, 120)
    hard = cdlab.Problem(X, X @ rng.standard_normal(120) + 0.1 * rng.standard_normal(400), loss="squared",
                         lam=1e-9)
    switches.clear()
    res = check_certified(hard, "newton", tol=1e-16, max_passes=20000, solver="cg")
    assert switches.count(True) == 1 and res.trace.steps.iloc[-1] > 0
    budget = cdlab.solve(hard, "newton", tol=0.0, max_passes=30, solver="cg")
    monkeypatch.undo()
    np.testing.assert_array_equal(budget.w, cdlab.solve(hard, "newton", tol=0.0, max_passes=30, solver="cg").w)


def test_the_cost_fits_terms_are_the_models(monkeypatch):
    """benchmarks/newton_cost_fit.py fits newton's constants on terms of its own: dotted with the constants they
    give the model's ns (the CG path's whole solve, its call term left out; a Cholesky iteration, and the mean one of
    a run that samples H, its sampled steps' gradient sweeps left out), on sparse rows, dense rows and X beyond the
    cache, for the logistic loss (Newton steps) and the squared one (none)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import newton_cost_fit as fit
    cg = np.array([getattr(newton, name) for name in fit.CG_NAMES[:-1]] + [0.0])
    cholesky = np.array([getattr(newton, name) for name in fit.CHOLESKY_NAMES])
    X, y = make_synthetic(500, 60, density=0.05, seed=3, normalize="mean")
    sparse = cdlab.Problem(X, y, loss="logistic", lam=1.0 / 500)
    Xd, yd = make_synthetic(300, 40, seed=4, normalize="mean")
    dense = cdlab.Problem(Xd, yd, loss="logistic", lam=1.0 / 300)
    assert dense.data.is_dense and not sparse.data.is_dense
    X, y = make_synthetic(4000, 30, density=0.2, seed=5, normalize="mean")
    tall_sparse = cdlab.Problem(X, y, loss="logistic", lam=1.0 / 4000)
    Xd, yd = make_synthetic(4000, 20, seed=6, normalize="mean")
    tall_dense = cdlab.Problem(Xd, yd, loss="logistic", lam=1.0 / 4000)
    for beyond in (False, True):
        monkeypatch.setattr(newton, "beyond_cache", lambda problem: beyond)
        monkeypatch.setattr(fit, "beyond_cache", lambda problem: beyond)
        for problem in (sparse, dense, sparse.with_params(loss="squared"), dense.with_params(loss="squared")):
            products, steps = (14, 0) if problem.loss == "squared" else (14, 4)
            model = (newton.cg_iteration_ns(problem, products) if steps == 0
                     else steps * newton.cg_iteration_ns(problem, products / steps))
            assert np.dot(fit.cg_terms(problem, products, steps), cg) == pytest.approx(model, rel=1e-12)
            assert np.dot(fit.cholesky_terms(problem, 7, 0), cholesky) == pytest.approx(
                newton.cholesky_iteration_ns(problem), rel=1e-12)
        for problem in (tall_sparse, tall_dense):  # 4 of 7 iterations on a sampled H, their gradient sweeps taken off
            assert newton.sample_size(problem) > 0
            sampled = newton.cholesky_iteration_ns(problem, sampled=True) - newton.sweep_ns(problem)
            assert np.dot(fit.cholesky_terms(problem, 7, 4), cholesky) == pytest.approx(
                (3 * newton.cholesky_iteration_ns(problem) + 4 * sampled) / 7, rel=1e-12)
        terms = fit.cg_terms(sparse, 14, 4)  # the in-cache or the beyond-cache nonzeros' term, not both
        assert (terms[0] == 0.0) == beyond and (terms[1] == 0.0) != beyond


def test_the_logistic_line_point_and_weights_are_the_scalar_terms_within_rounding():
    """``line_point`` and ``loss_weights`` take the logistic terms from vectorised exp and log1p
    (``losses.logistic_tails``): the value and slope sums within 1e-14 of the sums of their terms' sizes, and each
    weight within 1e-15 of it relatively, against ``losses.logistic_terms`` (libm's scalar exp and log1p), at
    margins from 0 to ±900 where e^{−|t|} underflows (weights exactly 0 or −y/n there)."""
    rng = np.random.default_rng(5)
    n = 4000
    y = rng.choice([-1.0, 1.0], n)
    z = rng.standard_normal(n) * 10.0 ** rng.uniform(-6, 2.9, n)
    z[:6] = [0.0, -0.0, 900.0, -900.0, 1e-300, 37.0]
    u, t = rng.standard_normal(n), 0.37
    deriv, curv = np.empty(n), np.empty(n)
    value, slope = newton.line_point(L.LOGISTIC, z, u, y, 0.0, t, deriv, curv)
    terms = [L.logistic_terms(-y[i] * (z[i] + t * u[i])) for i in range(n)]
    phi = np.array([term[0] for term in terms])
    sg, sm = np.array([term[1] for term in terms]), np.array([term[2] for term in terms])
    assert abs(value - phi.sum()) <= 1e-14 * phi.sum()
    assert abs(slope - np.sum(-y * sg * u)) <= 1e-14 * np.sum(np.abs(sg * u))
    np.testing.assert_allclose(deriv, -y * sg / n, rtol=1e-15, atol=0.0)
    np.testing.assert_allclose(curv, sm * sg / n, rtol=1e-15, atol=0.0)
    assert np.any(curv == 0.0)  # e^{−|t|} underflowed at some margin
    weights = np.empty(n), np.empty(n)
    newton.loss_weights(L.LOGISTIC, z, y, 0.0, *weights)
    at_z = [L.logistic_terms(-y[i] * z[i]) for i in range(n)]
    np.testing.assert_allclose(weights[0], [-y[i] * at_z[i][1] / n for i in range(n)], rtol=1e-15, atol=0.0)
    np.testing.assert_allclose(weights[1], [at_z[i][2] * at_z[i][1] / n for i in range(n)], rtol=1e-15, atol=0.0)


@pytest.mark.parametrize("loss", ["logistic", "smoothed_hinge"])
@pytest.mark.parametrize("solver", ["cholesky", "cg"])
def test_the_line_search_leaves_the_next_iterations_loss_weights_at_the_new_z(loss, solver):
    """An accepted line search leaves deriv and curv at z + t·u (``LINE_SEARCH_WEIGHTS``): what ``loss_weights``
    computes there, so the next iteration skips it; the run's iterates are those of a run that recomputes them."""
    problem = _full_rows_problem(loss)
    state = newton.NewtonState(problem, "uniform", None, solver=solver)
    state.checkpointed({"gap": np.inf, "primal": problem.primal(state.w)}, 0.0)
    for _ in range(3):
        state.run(1)
        assert state.weights_at_z and state.last_step > 0.0
        deriv, curv = np.empty(problem.n_samples), np.empty(problem.n_samples)
        newton.loss_weights(problem.loss_code, state.z, problem.y, problem.s, deriv, curv)
        np.testing.assert_allclose(state.deriv, deriv, rtol=1e-14, atol=1e-300)
        np.testing.assert_allclose(state.curv, curv, rtol=1e-14, atol=1e-300)
    shipped = cdlab.solve(problem, "newton", solver=solver, tol=1e-10, seed=0, max_passes=5000)
    newton.LINE_SEARCH_WEIGHTS = False
    try:
        recomputed = cdlab.solve(problem, "newton", solver=solver, tol=1e-10, seed=0, max_passes=5000)
    finally:
        newton.LINE_SEARCH_WEIGHTS = True
    assert shipped.converged and recomputed.converged
    np.testing.assert_allclose(shipped.w, recomputed.w, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("loss, s", [("logistic", 1.0), ("smoothed_hinge", 1.0), ("smoothed_hinge", 2.0),
                                     ("squared", 1.0)])
@pytest.mark.parametrize("rows", ["sparse", "full"])
def test_the_start_at_zero_takes_its_sums_from_data_facts_as_the_sweep_gives_them(loss, s, rows):
    """At w = 0 the checkpoint's α(0) = −φ'(0) is k·y and φ''(0) one constant on these losses, so its Xᵀα is
    k·Xᵀy (``Data.xty``, read-only) and diag(H) the column norms times φ''(0)/n (``_sums_at_zero``): equal to what
    the certified sweep reads from X — α, z and curv bit for bit, Xᵀα bit for bit where k is a power of 2 (the
    logistic loss's ½, the squared loss's 1, the smoothed hinge's min(1, 1/s): 1 and ½ here) and the preconditioner
    within rounding. Xᵀy is X's product with y (against a dense product); the first start on the data reads X
    for it and counts that read (the logistic loss's state has it from its cost model), a later one reads none.
    Labels all 0 (the squared loss: no k to read off y) get
    the sweep."""
    from cdlab.solvers._newton_cg import certified_jacobi_sweep

    problem = (sparse_problem(n=200, d=60, density=0.2, seed=3, loss=loss, lam=1e-3) if rows == "sparse"
               else _full_rows_problem(loss))
    if loss == "smoothed_hinge":
        problem = problem.with_params(s=s)
    state = newton.NewtonState(problem, "uniform", None, solver="cg")
    known = problem.data.has_fact("xty")
    assert known == (loss == "logistic")  # the logistic loss's cost model asks for ‖Xᵀy‖² (``logistic_start_gap``)
    alpha, xt_alpha, read = state._sums_at_zero()
    assert read == (0 if known else problem.nnz) and problem.data.has_fact("xty") and state._sums_at_zero()[2] == 0
    xty = problem.data.xty
    assert not xty.flags.writeable
    np.testing.assert_allclose(xty, problem.X.toarray().T @ problem.y, rtol=1e-12, atol=1e-12)
    n, d = problem.n_samples, problem.n_features
    z, alpha_ref, xt_ref, curv_ref, diag_ref = np.ones(n), np.empty(n), np.zeros(d), np.empty(n), np.zeros(d)
    certified_jacobi_sweep(*problem.csr_arrays, problem.y, problem.loss_code, problem.s, np.zeros(d), True, z,
                           alpha_ref, xt_ref, curv_ref, diag_ref, cdlab.solvers._kernels.full_rows(problem), None,
                           None)
    np.testing.assert_array_equal(state.z, z)
    np.testing.assert_array_equal(alpha, alpha_ref)
    np.testing.assert_array_equal(state.curv, curv_ref)
    np.testing.assert_array_equal(xt_alpha, xt_ref)
    np.testing.assert_allclose(state.minv, 1.0 / (diag_ref + problem.lam), rtol=1e-13, atol=0)  # M⁻¹
    if loss == "squared":
        unlabelled = cdlab.Problem(problem.X, np.zeros(n), loss="squared", lam=problem.lam)
        assert newton.NewtonState(unlabelled, "uniform", None, solver="cg")._sums_at_zero() is None
        res = check_certified(unlabelled, "newton", tol=1e-12, solver="cg")
        assert not res.w.any()


@pytest.mark.parametrize("name", ["a9a", "ijcnn1", "colon-cancer"])
def test_the_cholesky_paths_x_delta_is_the_kernels_product(real_data, monkeypatch, name):
    """Newton's XΔ on its Cholesky path (``NewtonState._along``: ``row_margins`` on X as the kernels read it) against
    scipy's CSR product: the same run bit for bit on sparse rows (a9a, whose entries share one value: the indices
    alone; ijcnn1's real values), and on full rows (colon-cancer, summed as ``full_dot`` sums them) the same
    certified optimum."""
    from cdlab.solvers._kernels import full_rows

    X, y = real_data(name)
    problem = cdlab.Problem(X, y, loss="logistic", lam=0.01 / X.shape[0])
    shipped, calls = newton.NewtonState._along, []
    monkeypatch.setattr(newton.NewtonState, "_along", lambda state, step: calls.append(1) or shipped(state, step))
    runs = [cdlab.solve(problem, "newton", solver="cholesky", tol=1e-10, seed=0)]
    assert len(calls) >= 3
    monkeypatch.setattr(newton.NewtonState, "_along", lambda state, step: state.p.X @ step)
    runs.append(cdlab.solve(problem, "newton", solver="cholesky", tol=1e-10, seed=0))
    assert all(res.converged and res.trace.gap.iloc[-1] <= 1e-10 for res in runs)
    if full_rows(problem) is None:
        for column in ("steps", "nnz_touched", "primal", "dual", "gap"):
            assert np.array_equal(runs[0].trace[column].to_numpy(), runs[1].trace[column].to_numpy()), column
        assert np.array_equal(runs[0].w, runs[1].w)
    else:
        assert abs(runs[0].trace.primal.iloc[-1] - runs[1].trace.primal.iloc[-1]) <= 2e-10
    assert (problem.data.one_value is not None) == (name == "a9a")
