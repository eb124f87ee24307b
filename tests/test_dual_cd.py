"""Dual RCD (face-off Algorithm 2 / Quartz serial) and SDCA: the θ/q_i gradient
step for every smooth loss, the exact step for every loss, SDCA as its
uniform special case sharing the kernel."""
import numpy as np
import pytest

import cdlab
from cdlab.solvers import dual_cd
from independent import dual_optimum
from _helpers import (LOSSES, REAL, check_certified, check_importance_wins, lbfgs_value, real_data, scale_rows,
                      scaled_problem, skewed, synthetic_problem, tiny_problem)

UPDATES = dual_cd.UPDATES


def no_time(res):
    return res.trace.drop(columns="time")


# ---------------------------------------------------------------- certificates

@pytest.mark.parametrize("l1", [0.0, 1e-2])
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("update", UPDATES)
@pytest.mark.parametrize("sampling", ["uniform", "importance"])
def test_certified_on_synthetic(loss, l1, update, sampling):
    check_certified(synthetic_problem(loss, l1=l1), "dual_cd", update=update, sampling=sampling)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("name", sorted(REAL))
@pytest.mark.parametrize("update", UPDATES)
def test_certified_on_real_data(name, loss, update):
    check_certified(scaled_problem(name, loss), "dual_cd", update=update)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("name", sorted(REAL))
def test_certified_on_real_data_elastic_net(name, loss):
    check_certified(scaled_problem(name, loss, l1=1e-3), "dual_cd", sampling="importance")


@pytest.mark.parametrize("loss, name", [("hinge", "colon-cancer"), ("hinge", "synthetic"),
                                        ("absolute", "heart_scale")])
def test_exact_step_certifies_non_smooth_losses(loss, name):
    if name == "synthetic":
        rng = np.random.default_rng(0)
        X = scale_rows(rng.standard_normal((200, 50)))
        y = np.where(X @ rng.standard_normal(50) + 0.3 * rng.standard_normal(200) >= 0, 1.0, -1.0)
    else:
        X, y = real_data(name)
        if loss == "absolute":  # a regression target: the first feature plus label noise
            y = 3.0 * X[:, 0].toarray().ravel() + 0.1 * y
    problem = cdlab.Problem(X, y, loss=loss, lam=1.0 / X.shape[0])
    res = cdlab.solve(problem, method="dual_cd", update="exact", tol=1e-9, max_passes=5000)
    assert res.converged and res.trace.gap.iloc[-1] <= 1e-9
    d_ref = dual_optimum(problem.X, problem.y, loss, problem.lam)
    assert abs(res.trace.dual.iloc[-1] - d_ref) <= 1e-8 * abs(d_ref)


@pytest.mark.parametrize("loss, smooth", [("hinge", "smoothed_hinge"),
                                         # real-valued targets: suggesting the smoothed hinge
                                         # (±1 labels only) sent regression users to another refusal
                                         ("absolute", "squared")])
def test_gradient_step_needs_a_smooth_loss(loss, smooth):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 4))
    y = np.sign(rng.standard_normal(20)) if loss == "hinge" else rng.standard_normal(20)
    calls = []
    with pytest.raises(ValueError, match=f"gradient step \\(update='linesearch'\\) needs a smooth loss, not '{loss}'; "
                                         f"use update='exact' or loss='{smooth}'"):
        cdlab.solve(cdlab.Problem(X, y, loss=loss, lam=0.1), method="dual_cd", callback=calls.append)
    for method, options in (("dual_cd", {"update": "exact"}), ("sdca", {})):
        with pytest.raises(ValueError, match="importance sampling .* needs a smooth loss.*sampling='uniform'"):
            cdlab.solve(cdlab.Problem(X, y, loss=loss, lam=0.1), method=method, sampling="importance",
                        callback=calls.append, **options)
    assert calls == []


# ------------------------------------------------------- SDCA is the special case

@pytest.mark.parametrize("loss, l1", [("logistic", 0.0), ("hinge", 1e-2), ("squared", 0.0)])
def test_exact_step_at_uniform_sampling_is_sdca(loss, l1):
    X, y = real_data("heart_scale")
    problem = cdlab.Problem(X, y, loss=loss, lam=1.0 / X.shape[0], l1=l1)
    a = cdlab.solve(problem, method="sdca", seed=11, tol=1e-9, max_passes=200)
    b = cdlab.solve(problem, method="dual_cd", update="exact", seed=11, tol=1e-9, max_passes=200)
    assert len(a.trace) > 3
    assert no_time(a).equals(no_time(b))
    assert np.array_equal(a.w, b.w) and np.array_equal(a.alpha, b.alpha)


def sdca_by_hand(X, y, loss, lam, l1, s, order):
    """Shalev-Shwartz & Zhang's (Prox-)SDCA in plain numpy, the closed forms
    of theory.md §3 written out here (logistic: the root by brentq), run over
    ``order``; nothing from cdlab's kernels. Returns α."""
    from scipy.optimize import brentq
    n, d = X.shape
    alpha, v = np.zeros(n), np.zeros(d)
    t = l1 / lam
    for i in order:
        w = np.sign(v) * np.maximum(np.abs(v) - t, 0.0)
        x = X[i]
        z, q, a, b = x @ w, x @ x / (lam * n), alpha[i], alpha[i] * y[i]
        if loss == "squared":
            new = a + (y[i] - z - a) / (1.0 + q)
        elif loss == "hinge":
            new = y[i] * np.clip(b + (1.0 - y[i] * z) / q, 0.0, 1.0)
        elif loss == "smoothed_hinge":
            new = y[i] * np.clip(b + (1.0 - y[i] * z - s * b) / (s + q), 0.0, 1.0)
        else:  # logistic: log(b⁺/(1−b⁺)) + yz + q(b⁺ − b) = 0
            f = lambda c: np.log(c / (1.0 - c)) + y[i] * z + q * (c - b)  # noqa: E731
            new = y[i] * brentq(f, 1e-300, 1.0 - 1e-16, xtol=1e-300, rtol=1e-15, maxiter=500)
        v += (new - a) * x / (lam * n)
        alpha[i] = new
    return alpha


@pytest.mark.parametrize("loss, l1", [("logistic", 0.0), ("squared", 1e-2), ("hinge", 1e-2),
                                      ("smoothed_hinge", 0.0)])
def test_registered_sdca_and_exact_dual_cd_are_sdca_written_independently(loss, l1):
    """Both registered methods replay, step for step, an SDCA written here from
    the paper's update rules with the same uniform indices (the run's
    Generator draws one chunk of n indices per pass)."""
    X, y = real_data("heart_scale")
    problem = cdlab.Problem(X, y, loss=loss, lam=1.0 / X.shape[0], l1=l1, s=0.5)
    n, passes = problem.n_samples, 6
    replay = np.random.default_rng(21)
    order = np.concatenate([replay.integers(0, n, n) for _ in range(passes)])
    expected = sdca_by_hand(problem.X.toarray(), problem.y, loss, problem.lam, l1, 0.5, order)
    for method, options in (("sdca", {}), ("dual_cd", {"update": "exact"})):
        state = cdlab.METHODS[method].make(problem, "uniform", np.random.default_rng(21), **options)
        for _ in range(passes):
            state.run(n)
        np.testing.assert_allclose(state.alpha, expected, rtol=1e-9, atol=1e-12)
        assert state.nnz_touched == problem.row_nnz[order].sum()


def test_nonzeros_touched_counted_by_hand():
    """3×4 matrix, rows holding 2, 1, 4 nonzeros (nnz 7); cyclic order in chunks
    of 2 rows (eval_every=0.5 of n=3): rows 0,1 | 2,0 | 1,2 touch 3, 6, 5."""
    for method, options in (("dual_cd", {}), ("dual_cd", {"update": "exact"}), ("sdca", {})):
        res = cdlab.solve(tiny_problem(), method=method, sampling="cyclic", tol=0.0, max_passes=2.0,
                          eval_every=0.5, **options)
        assert res.trace.nnz_touched.tolist() == [0, 3, 9, 14], method
        np.testing.assert_array_equal(res.trace.passes, np.array([0, 3, 9, 14]) / 7)


def test_gradient_step_is_the_exact_step_for_squared_loss_at_importance_sampling():
    """θ/q_i = λn/(‖x_i‖² + λn) = 1/(1 + q) there: Quartz's step and SDCA's
    closed form are the same number, so the runs agree to rounding."""
    problem = synthetic_problem("squared", n=120, d=30)
    a = cdlab.solve(problem, method="dual_cd", update="gradient", sampling="importance", seed=2, tol=1e-10)
    b = cdlab.solve(problem, method="dual_cd", update="exact", sampling="importance", seed=2, tol=1e-10)
    np.testing.assert_allclose(a.alpha, b.alpha, rtol=1e-9, atol=1e-13)
    np.testing.assert_array_equal(a.trace.steps, b.trace.steps)


def test_theta_over_q_keeps_alpha_in_the_domain():
    problem = scaled_problem("heart_scale", "logistic")
    q = np.linspace(1.0, 30.0, problem.n_samples)
    q /= q.sum()
    state = dual_cd.DualCDState(problem, q, np.random.default_rng(0), update="gradient")
    lgn = problem.lam * 4.0 * problem.n_samples
    theta = np.min(q * lgn / (problem.row_norms_sq + lgn))
    np.testing.assert_allclose(state.step_scale, theta / q, rtol=1e-14)
    assert state.step_scale.max() <= 1.0
    state.run(20 * problem.n_samples)
    b = state.alpha * problem.y
    assert b.min() >= 0.0 and b.max() <= 1.0


def test_coordinate_step_is_its_formula_under_any_sampling():
    """update="coordinate": s̄_i = λγn/(‖x_i‖² + λγn) whatever q, and θ/q_i (Algorithm 2) at importance q."""
    problem = scaled_problem("heart_scale", "logistic")
    lgn = problem.lam * 4.0 * problem.n_samples
    own = lgn / (np.asarray(problem.X.multiply(problem.X).sum(axis=1)).ravel() + lgn)
    q = np.linspace(1.0, 30.0, problem.n_samples)
    for sampling in ("uniform", "importance", q / q.sum()):
        state = dual_cd.DualCDState(problem, sampling, np.random.default_rng(0), update="coordinate")
        np.testing.assert_allclose(state.step_scale, own, rtol=1e-14)
    algorithm2 = dual_cd.DualCDState(problem, "importance", np.random.default_rng(0), update="gradient")
    np.testing.assert_allclose(algorithm2.step_scale, own, rtol=1e-12)


def test_coordinate_step_on_unnormalised_rows_beats_the_common_theta_within_its_bound():
    """On w8a as shipped (‖x_i‖² from 1 to 114) uniform θ is set by the longest row; the per-coordinate step
    reaches the gap 1e-6 in fewer passes, every checkpoint under the face-off bound it shares."""
    from cdlab import theory
    X, y = cdlab.load_dataset("w8a")
    problem = cdlab.Problem(X[:3000], y[:3000], loss="logistic", lam=1.0 / 3000)
    bound = theory.bound("dual_cd", problem, update="coordinate")
    passes = {}
    for update in ("coordinate", "gradient"):
        res = cdlab.solve(problem, "dual_cd", update=update, tol=1e-6, max_passes=300)
        assert res.converged, res
        passes[update] = res.trace.passes.iloc[-1]
        if update == "coordinate":
            tr = res.trace
            assert np.all(tr.gap.to_numpy() <= bound.curve(tr.passes.to_numpy()) * (1 + 1e-9))
    assert passes["coordinate"] < passes["gradient"], passes


@pytest.mark.parametrize("lam_factor", [1.0, 0.01])
def test_default_line_search_certifies_raw_data_where_algorithm_2_stalls(lam_factor):
    """Colon-cancer as shipped (‖x_i‖² ≈ 2000 against λγn = 4·62·λ): Algorithm 2's fixed step s̄_i is
    about 1e-4, so 300 passes leave a gap of order 1e-3; the default line search along the same direction
    certifies 1e-6 within them, brackets L-BFGS-B's optimum, and stays under the face-off bound it shares."""
    from cdlab import theory
    X, y = cdlab.load_dataset("colon-cancer")
    problem = cdlab.Problem(X, y, loss="logistic", lam=lam_factor / X.shape[0])
    assert dual_cd.DualCDState(problem, "uniform", np.random.default_rng(0)).rule == dual_cd.LINESEARCH
    slow = cdlab.solve(problem, "dual_cd", update="gradient", tol=1e-6, max_passes=300)
    assert not slow.converged and slow.trace.gap.iloc[-1] > 1e-4
    res = cdlab.solve(problem, "dual_cd", tol=1e-6, max_passes=300)
    last = res.trace.iloc[-1]
    assert res.converged and res.options["update"] == "linesearch"
    p_ref = lbfgs_value(problem)  # an independent optimum, inside the certified interval [D, P]
    assert last.dual - 1e-12 <= p_ref <= last.primal + 1e-12 and last.primal - p_ref <= 1e-6
    bound = theory.bound("dual_cd", problem)
    tr = res.trace
    assert np.all(tr.gap.to_numpy() <= bound.curve(tr.passes.to_numpy()) * (1 + 1e-9))


def test_the_face_off_runs_algorithm_2_as_printed():
    """The face-off's experiments (page, ``cdlab faceoff --run``, reproduce) run dual_cd's θ/q_i step, not
    the default line search: the page's run options carry FACEOFF_OPTIONS."""
    from cdlab.solvers import FACEOFF_OPTIONS
    from cdlab.ui.runner import RunSpec
    assert FACEOFF_OPTIONS["dual_cd"] == {"update": "gradient"} and FACEOFF_OPTIONS["primal_cd"] == {}
    assert RunSpec("dual_cd", "importance").options == {"update": "gradient"}
    assert RunSpec("sdca", "uniform", 4).options == {"batch_size": 4}


# ------------------------------------------------------------------ sampling

def test_importance_beats_uniform_on_skewed_rows():
    """Algorithm 2's uniform θ is set by the largest row norm, so every step is short;
    importance sampling gives each row its own step (face-off eq. 14)."""
    check_importance_wins("dual_cd", [skewed(0, 300, 30, 0.05, 10.0, seed) for seed in range(10)], update="gradient")


@pytest.mark.parametrize("method", ["sdca", "dual_cd"])
def test_custom_probabilities_equal_importance_and_are_not_modified(method):
    problem = synthetic_problem("logistic")
    imp = dual_cd.DualCDState(problem, "importance", np.random.default_rng(0)).sampler.probs
    probs = imp.copy()
    probs.flags.writeable = False
    a = cdlab.solve(problem, method=method, sampling=probs, seed=4, tol=1e-9)
    b = cdlab.solve(problem, method=method, sampling="importance", seed=4, tol=1e-9)
    assert np.array_equal(probs, imp)
    assert no_time(a).equals(no_time(b))


def test_equal_seeds_equal_traces():
    problem = scaled_problem("colon-cancer", "smoothed_hinge", l1=1e-3)
    runs = [cdlab.solve(problem, method="dual_cd", sampling="importance", seed=s, tol=1e-9) for s in (8, 8, 9)]
    assert no_time(runs[0]).equals(no_time(runs[1]))
    assert not runs[0].trace.primal.equals(runs[2].trace.primal)


def test_a_step_costs_its_row_nonzeros():
    X, y = real_data("a9a")
    problem = cdlab.Problem(X, y, loss="logistic", lam=1e-3)
    state = dual_cd.DualCDState(problem, "importance", np.random.default_rng(7), update="gradient")
    state.run(1000)
    replay = np.random.default_rng(7)
    drawn = dual_cd.DualCDState(problem, "importance", replay).sampler.draw(replay, 1000)
    assert state.nnz_touched == problem.row_nnz[drawn].sum()
    np.testing.assert_allclose(state.v, problem.v_from_alpha(state.alpha), rtol=0, atol=1e-12)


@pytest.mark.parametrize("update", UPDATES)
def test_zero_rows(update):
    """A zero row has q_i = 0: the exact step sets α_i = −φ'(0), the gradient
    step moves toward it by θ/q_i ≤ 1; both certify."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 10)) / 3.0
    X[::7] = 0.0
    problem = cdlab.Problem(X, np.where(rng.standard_normal(100) >= 0, 1.0, -1.0), loss="logistic", lam=0.01)
    res = check_certified(problem, "dual_cd", update=update, sampling="importance")
    np.testing.assert_allclose(res.alpha[::7], 0.5 * problem.y[::7], rtol=0, atol=1e-6)
