"""Primal RCD (NSync, face-off Algorithm 1): certificates on synthetic and real
data, agreement with scipy L-BFGS-B, importance vs uniform sampling, work
counting, refusals (the data helpers are in _helpers.py, shared with test_dual_cd.py)."""
import numpy as np
import pytest

import cdlab
from cdlab.solvers import primal_cd
from _helpers import (LOSSES, REAL, check_certified, check_importance_wins, real_data, scaled_problem, skewed,
                      synthetic_problem, tiny_problem)

# ---------------------------------------------------------------- certificates

@pytest.mark.parametrize("l1", [0.0, 1e-2])
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("sampling", ["uniform", "importance"])
def test_certified_on_synthetic(loss, l1, sampling):
    res = check_certified(synthetic_problem(loss, l1=l1), "primal_cd", sampling=sampling)
    if l1 > 0:
        assert 0 < np.count_nonzero(res.w) < res.w.size  # the prox step really zeroes coordinates


@pytest.mark.parametrize("order", ["permutation", "cyclic"])
def test_certified_with_orders(order):
    check_certified(synthetic_problem("logistic", l1=1e-2), "primal_cd", sampling=order)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("name", sorted(REAL))
def test_certified_on_real_data(name, loss):
    check_certified(scaled_problem(name, loss), "primal_cd")


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("name", sorted(REAL))
def test_certified_on_real_data_elastic_net(name, loss):
    check_certified(scaled_problem(name, loss, l1=1e-3), "primal_cd", sampling="importance")


def test_zero_columns_stay_zero():
    X, y = real_data("reuters_moneyfx")  # the 800-row slice leaves most of the 8315 columns empty
    problem = cdlab.Problem(X, y, loss="logistic", lam=1.0 / X.shape[0])
    empty = problem.col_nnz == 0
    assert empty.sum() > 1000
    res = check_certified(problem, "primal_cd", sampling="importance")
    assert np.all(res.w[empty] == 0.0)


@pytest.mark.parametrize("sampling", ["uniform", "permutation", "importance"])
def test_empty_columns_are_never_drawn(sampling):
    """A named sampling draws from the non-empty columns only (a step on an empty
    column is a no-op), renormalised: importance keeps eq. 14's ratios among them."""
    X, y = real_data("reuters_moneyfx")
    problem = cdlab.Problem(X, y, loss="logistic", lam=1.0 / X.shape[0])
    used = np.flatnonzero(problem.col_nnz > 0)
    state = primal_cd.PrimalCDState(problem, sampling, np.random.default_rng(0))
    assert np.array_equal(state.cols, used) and state.sampler.size == used.size
    if sampling == "importance":
        w = problem.col_norms_sq[used] + problem.lam * 4.0 * problem.n_samples
        np.testing.assert_allclose(state.sampler.probs, w / w.sum(), rtol=1e-14)
    steps = 3 * used.size
    state.run(steps)
    assert state.nnz_touched >= steps  # every step touched at least one nonzero
    assert state.data_passes == steps / used.size
    res = check_certified(problem, "primal_cd", sampling=sampling)
    assert np.all(res.w[problem.col_nnz == 0] == 0.0)


# ------------------------------------------------------------------ sampling

def test_importance_beats_uniform_on_skewed_columns():
    """Face-off Theorem 1: with a few heavy columns, uniform sampling pays
    d·max_j L_j/λ iterations, importance Σ_j L_j/λ (here ~2× fewer passes)."""
    check_importance_wins("primal_cd", [skewed(1, 150, 150, 0.05, 20.0, seed) for seed in range(10)])


def test_importance_probabilities_are_eq14():
    problem = synthetic_problem("logistic")
    state = primal_cd.PrimalCDState(problem, "importance", np.random.default_rng(0))
    w = problem.col_norms_sq + problem.lam * 4.0 * problem.n_samples
    np.testing.assert_allclose(state.sampler.probs, w / w.sum(), rtol=1e-14)


def test_custom_probabilities_equal_importance_and_are_not_modified():
    problem = synthetic_problem("logistic")
    imp = primal_cd.PrimalCDState(problem, "importance", np.random.default_rng(0)).sampler.probs
    probs = imp.copy()
    probs.flags.writeable = False
    a = cdlab.solve(problem, method="primal_cd", sampling=probs, seed=3, tol=1e-9)
    b = cdlab.solve(problem, method="primal_cd", sampling="importance", seed=3, tol=1e-9)
    assert np.array_equal(probs, imp)
    assert a.trace.drop(columns="time").equals(b.trace.drop(columns="time"))


def test_equal_seeds_equal_traces():
    problem = scaled_problem("heart_scale", "logistic", l1=1e-3)
    runs = [cdlab.solve(problem, method="primal_cd", sampling="importance", seed=s, tol=1e-9)
            for s in (5, 5, 6)]
    assert runs[0].trace.drop(columns="time").equals(runs[1].trace.drop(columns="time"))
    assert np.array_equal(runs[0].w, runs[1].w)
    assert not runs[0].trace.primal.equals(runs[2].trace.primal)


# ---------------------------------------------------------------- work counts

def test_a_step_costs_its_column_nonzeros():
    X, y = real_data("a9a")
    problem = cdlab.Problem(X, y, loss="logistic", lam=1e-3)
    state = primal_cd.PrimalCDState(problem, "importance", np.random.default_rng(7))
    state.run(1000)
    replay = np.random.default_rng(7)
    replayed = primal_cd.PrimalCDState(problem, "importance", replay)
    drawn = replayed.sampler.draw(replay, 1000)
    if replayed.cols is not None:
        drawn = replayed.cols[drawn]
    assert state.steps == 1000 and state.data_passes == 1000 / np.count_nonzero(problem.col_nnz)
    assert state.nnz_touched == problem.col_nnz[drawn].sum()
    np.testing.assert_allclose(state.z, problem.X @ state.w, rtol=0, atol=1e-12)


def test_margin_refresh_is_counted(monkeypatch):
    monkeypatch.setattr(primal_cd, "REFRESH_PASSES", 2.0)
    problem = scaled_problem("heart_scale", "logistic")
    d = problem.n_features
    state = primal_cd.PrimalCDState(problem, "uniform", np.random.default_rng(1))
    replay = np.random.default_rng(1)
    expected = last_refresh = refreshes = 0
    for _ in range(12):  # a chunk of d steps ≈ one pass: a refresh every third chunk
        if expected - last_refresh >= 2.0 * problem.nnz:
            expected += problem.nnz
            last_refresh, refreshes = expected, refreshes + 1
        state.run(d)
        expected += problem.col_nnz[replay.integers(0, d, d)].sum()
        assert state.nnz_touched == expected
    assert refreshes >= 3
    np.testing.assert_allclose(state.z, problem.X @ state.w, rtol=0, atol=1e-12)


def test_nonzeros_touched_counted_by_hand():
    """Cyclic order visits columns 0,1 | 2,3 | 0,1 ... (a chunk is 2 steps at
    eval_every=0.5): touched 2+1=3, then +3+1=7, +3=10, +4=14; passes = touched/7."""
    res = cdlab.solve(tiny_problem(), method="primal_cd", sampling="cyclic", tol=0.0, max_passes=2.0,
                      eval_every=0.5)
    assert res.trace.nnz_touched.tolist() == [0, 3, 7, 10, 14]
    assert res.trace.steps.tolist() == [0, 2, 4, 6, 8]
    np.testing.assert_array_equal(res.trace.passes, np.array([0, 3, 7, 10, 14]) / 7)


# ------------------------------------------------------------------- refusals

@pytest.mark.parametrize("loss, suggestion", [("hinge", "try loss='smoothed_hinge'"),
                                              # regression targets: the smoothed hinge would refuse them
                                              ("absolute", "for regression try loss='squared'")])
def test_non_smooth_losses_refused_before_any_work(loss, suggestion):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 4))
    y = np.sign(rng.standard_normal(20)) if loss == "hinge" else rng.standard_normal(20)
    calls = []
    with pytest.raises(ValueError, match=f"does not support the {loss} loss .*{suggestion}"):
        cdlab.solve(cdlab.Problem(X, y, loss=loss, lam=0.1), method="primal_cd", callback=calls.append)
    assert calls == []


def test_unknown_option_and_sampling_refused():
    problem = synthetic_problem("logistic")
    with pytest.raises(ValueError, match="unknown option"):
        cdlab.solve(problem, method="primal_cd", step="exact")
    with pytest.raises(ValueError, match="does not support sampling 'nice'"):
        cdlab.solve(problem, method="primal_cd", sampling="nice")


@pytest.mark.parametrize("method", ["primal_cd", "dual_cd"])
def test_checkpoints_are_about_a_pass_apart_under_importance_sampling(method):
    """A step costs Σ_k p_k‖·_k‖₀ nonzeros (eq. 10, 11), not nnz/size: on the Theorem 3 extreme
    (one dense column) importance sampling draws that column ~70 % of the time, so a checkpoint
    every d steps was ~25 passes apart and a 30-pass budget ended at 43. Checkpoints are spaced by
    the expected cost, so they fall about a pass apart and the budget ends near 30."""
    from cdlab.data.extremes import extreme_matrix

    X = extreme_matrix(400, 40, "primal_worst")
    X = X.T.tocsr() if method == "dual_cd" else X  # the dense side is where each method samples
    y = np.where(np.arange(X.shape[0]) % 2 == 0, 1.0, -1.0)
    p = cdlab.Problem(X, y, loss="logistic", lam=1.0 / X.shape[0])
    res = cdlab.solve(p, method, sampling="importance", max_passes=30, tol=0, eval_every=1.0)
    spacing = np.diff(res.trace.passes.to_numpy())
    assert 0.3 <= np.median(spacing) <= 3.0
    assert res.trace.passes.iloc[-1] <= 30 + spacing.max()
    assert res.trace.passes.iloc[-1] < 33
