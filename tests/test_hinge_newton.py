"""Newton on the hinge loss (cdlab.solvers._hinge_newton: smoothed hinges with continuation) and the smoothed
hinge's exact line search (cdlab.solvers._piecewise_line): certified at an independent optimum, α in the hinge's
box, μ's stages, the refusals and auto's pick."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cdlab
from cdlab import losses as L
from cdlab.solvers import _face_primal, _hinge_newton, auto, newton
from cdlab.solvers._piecewise_line import smoothed_hinge_line_min
from _helpers import sparse_problem
from independent import dual_optimum


@pytest.mark.parametrize("name, lam_factor", [("heart_scale", 0.01), ("heart_scale", 1.0), ("phishing", 0.01)])
def test_newton_on_the_hinge_certifies_at_the_independent_optimum(real_data, name, lam_factor):
    """The returned pair's gap, recomputed over all examples, is within tol; P(w) is D* of L-BFGS-B on the dual's
    box within tol; α lies in the hinge's box; the trace's last P is P(w)."""
    X, y = real_data(name)
    lam = lam_factor / X.shape[0]
    problem = cdlab.Problem(X, y, loss="hinge", lam=lam)
    d_star = dual_optimum(X, y, "hinge", lam)
    tol = 1e-6 * abs(d_star)
    res = cdlab.solve(problem, "newton", tol=tol, max_passes=3000, seed=0)
    assert res.converged and problem.gap(res.w, res.alpha) <= tol
    assert abs(problem.primal(res.w) - d_star) <= tol + 1e-8 * abs(d_star)
    box = res.alpha * problem.y
    assert box.min() >= 0.0 and box.max() <= 1.0
    np.testing.assert_allclose(res.trace.primal.iloc[-1], problem.primal(res.w), rtol=1e-12)


def test_the_stages_shrink_s_and_each_checkpoint_reports_the_smoothed_dual_point(monkeypatch):
    """A run to its budget (tol = 0): s falls by S_SHRINK a stage, never below S_FLOOR; the α every checkpoint
    certifies is −φ_s'(z) for the s of the problem its last step ran on (z the carried Xw), inside the hinge's box;
    the gap falls below its start's by orders."""
    problem = sparse_problem(n=300, d=20, density=0.3, loss="hinge", lam=1e-4)
    shrunk, checked = [], []
    run = _hinge_newton.HingeNewtonState.run

    def spy_run(state, n_steps):
        before = state.s
        run(state, n_steps)
        if state.inner.p.s != before:
            shrunk.append(state.inner.p.s)

    monkeypatch.setattr(_hinge_newton.HingeNewtonState, "run", spy_run)
    iterate = _hinge_newton.HingeNewtonState.iterate

    def spy_iterate(state):
        w, alpha = iterate(state)
        np.testing.assert_allclose(state.inner.z, problem.X @ w, rtol=1e-9, atol=1e-12)  # the carried Xw
        expected = L.neg_deriv(L.SMOOTHED_HINGE, state.inner.z, problem.y, state.inner.p.s)
        box = alpha * problem.y
        checked.append((np.abs(alpha - expected).max(), box.min(), box.max()))
        return w, alpha

    monkeypatch.setattr(_hinge_newton.HingeNewtonState, "iterate", spy_iterate)
    res = cdlab.solve(problem, "newton", tol=0.0, max_passes=400, seed=0)
    assert len(shrunk) >= 3 and shrunk[0] == pytest.approx(_hinge_newton.S_START / _hinge_newton.S_SHRINK)
    np.testing.assert_allclose(shrunk[1:], np.maximum(np.array(shrunk[:-1]) / _hinge_newton.S_SHRINK,
                                                      _hinge_newton.S_FLOOR), rtol=1e-12)
    errors, lows, highs = np.array(checked).T
    assert errors.max() == 0.0 and lows.min() >= 0.0 and highs.max() <= 1.0
    assert res.trace.gap.iloc[-1] < 1e-4 * res.trace.gap.iloc[0]


def test_a_stage_end_tries_the_face_primal_and_its_reads_are_counted(real_data, monkeypatch):
    """At the checkpoints after stages' last steps the face primal of α's free examples is solved (a w_F comes
    back), and the run's nonzeros are its steps' two passes each plus the tries' reads, each w_F's margins pass
    with them."""
    tries = []
    solve_face = _face_primal.face_primal

    def spy(problem, alpha, v, face, max_reads, n_jobs=1):
        out = solve_face(problem, alpha, v, face, max_reads, n_jobs)
        tries.append((out[0] is not None, out[1]))
        return out

    monkeypatch.setattr(_face_primal, "face_primal", spy)
    X, y = real_data("heart_scale")
    problem = cdlab.Problem(X, y, loss="hinge", lam=0.01 / X.shape[0])
    res = cdlab.solve(problem, "newton", tol=5e-7 * problem.primal(np.zeros(X.shape[1])), max_passes=3000, seed=0)
    assert res.converged and any(solved for solved, _ in tries)
    reads = sum(read + (problem.nnz if solved else 0) for solved, read in tries)
    assert res.trace.nnz_touched.iloc[-1] == res.trace.steps.iloc[-1] * 2 * problem.nnz + reads


def test_a_state_built_directly_refuses_conjugate_gradients():
    problem = sparse_problem(loss="hinge", lam=1e-2)
    with pytest.raises(ValueError, match=r"^method 'newton' on the hinge loss .*solver='auto' or 'cholesky'"):
        newton.make_state(problem, "uniform", np.random.default_rng(0), solver="cg")


@pytest.mark.parametrize("options, match", [({"solver": "cg"}, r"solver='auto' or 'cholesky'"),
                                            ({}, r"at most 8 features")])
def test_newton_refuses_the_hinge_off_choleskys_path(monkeypatch, options, match):
    monkeypatch.setattr(newton, "MAX_FEATURES", 8)
    problem = sparse_problem(loss="hinge", lam=1e-2)
    with pytest.raises(ValueError, match=r"^method 'newton' on the hinge loss .*" + match):
        cdlab.solve(problem, "newton", **options)


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 40), s=st.floats(1e-3, 2.0), n_lam=st.floats(1e-4, 10.0), t0=st.floats(1e-3, 10.0),
       seed=st.integers(0, 2 ** 32 - 1))
def test_the_exact_line_search_finds_the_minimiser_on_the_line(n, s, n_lam, t0, seed):
    """h(t) = Σ φ_s(z_i + t u_i) + (nλ/2)‖w + tΔ‖² along a descent direction: the returned t has h'(t) ≈ 0 and
    no point of a fine grid around it is lower; along the opposite direction it returns 0."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    z, u = rng.standard_normal(n) * 2, rng.standard_normal(n)
    w, step = rng.standard_normal(3), rng.standard_normal(3)

    def h(t):
        zi = z + t * u
        return sum(L.loss_value(L.SMOOTHED_HINGE, zi[i], y[i], s) for i in range(n)) + 0.5 * n_lam * np.sum(
            (w + t * step) ** 2)

    def slope(t):
        zi = z + t * u
        return sum(L.loss_deriv(L.SMOOTHED_HINGE, zi[i], y[i], s) * u[i] for i in range(n)) + n_lam * (
            w @ step + t * step @ step)

    if slope(0.0) >= 0.0:
        step, u = -step, -u
    if slope(0.0) >= 0.0:
        return
    t, _ = smoothed_hinge_line_min(z, u, y, s, n_lam, float(w @ step), float(step @ step), t0)
    assert t > 0.0 and abs(slope(t)) <= 1e-8 * max(1.0, abs(slope(0.0)))
    grid = t * np.linspace(0.0, 2.0, 401)
    assert h(t) <= min(h(g) for g in grid) + 1e-10 * max(1.0, abs(h(t)))
    # along −Δ (an ascent direction) it finds no t: Newton's line search then keeps its own
    assert smoothed_hinge_line_min(z, -u, y, s, n_lam, -float(w @ step), float(step @ step), t0)[0] == 0.0


def test_auto_runs_newton_on_the_hinge_where_its_rule_says_and_sdca_elsewhere(real_data):
    """ijcnn1 (d = 22, n/d ≈ 2300) at λ = 0.01/n: Newton, and the run certifies; at λ = 1/n (κ ≈ 1) and on
    heart_scale (n/d ≈ 21): SDCA with shrinking."""
    X, y = real_data("ijcnn1")
    small = cdlab.Problem(X, y, loss="hinge", lam=0.01 / X.shape[0])
    assert auto.choose(small)["method"] == "newton" and "_hinge_newton" in auto.choose(small)["reason"]
    assert auto.choose(cdlab.Problem(X, y, loss="hinge", lam=1.0 / X.shape[0]))["method"] == "sdca"
    Xh, yh = real_data("heart_scale")
    assert auto.choose(cdlab.Problem(Xh, yh, loss="hinge", lam=0.01 / Xh.shape[0]))["method"] == "sdca"
    tol = 1e-4 * small.primal(np.zeros(X.shape[1]))
    res = cdlab.solve(small, "auto", tol=tol, seed=0)
    assert res.converged and res.method == "newton" and small.gap(res.w, res.alpha) <= tol
