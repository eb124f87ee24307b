"""The face primal (cdlab.solvers._face_primal): at a dual method's checkpoint on a loss with a kink, a primal
point solved on α's free face, certified like w(α) (P(w_F) − D(α) over all examples) and at the optimum of an
independent solver."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cdlab
from cdlab.solvers import _face_primal, dual_cd
from cdlab.solvers._face_cr import free_face
from independent import dual_optimum


def face_off(monkeypatch):
    """Runs without the face primal: no dual is ever close enough to try it."""
    monkeypatch.setattr(dual_cd, "FACE_PRIMAL_REACH", -1.0)


def solve(problem, tol, **kw):
    return cdlab.solve(problem, "sdca", sampling="permutation", shrinking=True, tol=tol, max_passes=3000, seed=0,
                       **kw)


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 12), k=st.integers(1, 12), rank=st.integers(1, 12), consistent=st.booleans(),
       seed=st.integers(0, 2 ** 32 - 1))
def test_min_norm_dense_is_the_minimum_norm_least_squares_solution(m, k, rank, consistent, seed):
    """Tall, wide, rank-deficient, consistent or not (singular values in [0.1, 10] and exact zeros): LAPACK's
    SVD-based solution (numpy's lstsq)."""
    rng = np.random.default_rng(seed)
    rank = min(rank, m, k)
    left = np.linalg.qr(rng.standard_normal((m, rank)))[0]
    right = np.linalg.qr(rng.standard_normal((k, rank)))[0]
    a = left @ np.diag(rng.uniform(0.1, 10.0, rank)) @ right.T
    b = a @ rng.standard_normal(k) if consistent else rng.standard_normal(m)
    np.testing.assert_allclose(_face_primal.min_norm_dense(a, b), np.linalg.lstsq(a, b, rcond=None)[0], rtol=1e-8,
                               atol=1e-10)


@pytest.mark.parametrize("name, loss, lam_factor, passes", [("mushrooms", "hinge", 1.0, 26),
                                                             ("colon-cancer", "absolute", 0.062, 70)])
def test_at_a_converged_dual_the_face_primal_certifies_where_w_alpha_does_not(real_data, monkeypatch, name, loss,
                                                                              lam_factor, passes):
    """After ``passes`` passes the dual is within 1e-6 of the optimum while w(α)'s gap is not; w_F's gap is
    under a hundredth of w(α)'s, and P(w_F) is D* of an independent solver (L-BFGS-B on the dual's box)."""
    face_off(monkeypatch)
    X, y = real_data(name)
    lam = lam_factor / X.shape[0]
    problem = cdlab.Problem(X, y, loss=loss, lam=lam)
    d_star = dual_optimum(X, y, loss, lam)
    res = cdlab.solve(problem, "sdca", sampling="permutation", shrinking=True, tol=0.0, max_passes=passes, seed=0)
    v = problem.v_from_alpha(res.alpha)
    w_face, read = _face_primal.face_primal(problem, res.alpha, v, free_face(problem, res.alpha,
                                                                             np.arange(X.shape[0])), np.inf)
    assert read > 0
    gap_w, gap_face = problem.gap(v, res.alpha), problem.gap(w_face, res.alpha)
    assert gap_w > 1e-6 * abs(d_star) and gap_face < gap_w / 100, (gap_w, gap_face)
    assert abs(problem.primal(w_face) - d_star) <= 1e-6 * abs(d_star)


@pytest.mark.parametrize("name, loss, lam_factor", [("colon-cancer", "hinge", 0.01), ("mushrooms", "hinge", 0.01),
                                                     ("colon-cancer", "absolute", 0.062)])
def test_sdca_reports_the_face_primal_certified_at_the_independent_optimum_in_fewer_passes(
        real_data, monkeypatch, name, loss, lam_factor):
    """With and without the face primal both runs certify (the returned pair's gap recomputed over all examples)
    at the independent optimum; with it the run returns w_F ≠ w(α) and reads fewer nonzeros."""
    X, y = real_data(name)
    lam = lam_factor / X.shape[0]
    problem = cdlab.Problem(X, y, loss=loss, lam=lam)
    d_star = dual_optimum(X, y, loss, lam)
    tol = 1e-6 * abs(d_star)
    with_face = solve(problem, tol)
    face_off(monkeypatch)
    without = solve(problem, tol)
    for res in (with_face, without):
        assert res.converged and problem.gap(res.w, res.alpha) <= tol
        assert abs(problem.primal(res.w) - d_star) <= tol + 1e-8 * abs(d_star)
        np.testing.assert_allclose(res.trace.primal.iloc[-1], problem.primal(res.w), rtol=1e-12)
    assert np.abs(with_face.w - problem.w_from_alpha(with_face.alpha)).max() > 1e-8
    np.testing.assert_allclose(without.w, problem.w_from_alpha(without.alpha), rtol=1e-9, atol=1e-12)
    assert with_face.trace.passes.iloc[-1] < without.trace.passes.iloc[-1]


@pytest.mark.parametrize("kwargs", [dict(tol=0.0, max_passes=40), dict(tol=1e-9, l1=1e-4)])
def test_no_face_primal_without_a_gap_to_reach_or_with_an_l1_term(real_data, monkeypatch, kwargs):
    """tol ≤ 0 (a curve to draw, not a certificate to reach) or an ℓ1 term (w = S(v), not v): never solved."""
    def refuse(*args):
        raise AssertionError("the face primal was solved")

    monkeypatch.setattr(_face_primal, "face_primal", refuse)
    X, y = real_data("colon-cancer")  # where a run with a tol and no ℓ1 term solves it (the test above)
    problem = cdlab.Problem(X, y, loss="hinge", lam=0.01 / X.shape[0], l1=kwargs.pop("l1", 0.0))
    res = cdlab.solve(problem, "sdca", sampling="permutation", shrinking=True, seed=0,
                      **{"max_passes": 3000, **kwargs})
    assert res.trace.passes.iloc[-1] > 10


def test_the_schedules_read_the_states_own_gap_and_margins(real_data, monkeypatch):
    """Where a checkpoint reports the face primal, the state's schedules (shrinking's readmissions, the polish's
    stall test) still read w(α)'s margins and gap."""
    X, y = real_data("colon-cancer")
    problem = cdlab.Problem(X, y, loss="hinge", lam=0.01 / X.shape[0])
    checkpointed, seen = dual_cd.DualCDState.checkpointed, []

    def spy(state, row, tol, margins=None):
        checkpointed(state, row, tol, margins)
        np.testing.assert_allclose(margins, problem.X @ state.w, rtol=1e-9, atol=1e-12)
        own = problem.gap(state.w, state.alpha)
        np.testing.assert_allclose(state.last_row["gap"], own, rtol=1e-9, atol=1e-14)
        seen.append(row["gap"] < own)

    monkeypatch.setattr(dual_cd.DualCDState, "checkpointed", spy)
    res = solve(problem, 1e-6 * problem.primal(solve(problem, 1e-3).w))
    assert res.converged and any(seen)  # the face primal was reported at some checkpoint


def test_a_face_too_large_or_over_budget_is_not_solved(real_data, monkeypatch):
    """None, and only the reads that found out: no dense array beyond FACE_PRIMAL_DENSE_SIDE on both sides or
    FACE_PRIMAL_DENSE_ENTRIES, none whose price exceeds the budget."""
    X, y = real_data("mushrooms")
    problem = cdlab.Problem(X, y, loss="hinge", lam=1.0 / X.shape[0])
    res = cdlab.solve(problem, "sdca", sampling="permutation", shrinking=True, tol=0.0, max_passes=26, seed=0)
    v = problem.v_from_alpha(res.alpha)
    face = free_face(problem, res.alpha, np.arange(X.shape[0]))
    full, read = _face_primal.face_primal(problem, res.alpha, v, face, np.inf)
    assert full is not None
    w, over = _face_primal.face_primal(problem, res.alpha, v, face, read - 1)
    assert w is None and 0 < over < read
    rows = np.arange(X.shape[0])  # 8124 examples over 112 columns: solved in the columns' space
    assert _face_primal.face_primal(problem, res.alpha, v, rows, np.inf)[0] is not None
    monkeypatch.setattr(_face_primal, "FACE_PRIMAL_DENSE_ENTRIES", face.shape[0] * 10)
    nnz_face = problem.X[face].nnz
    assert _face_primal.face_primal(problem, res.alpha, v, face, np.inf) == (None, nnz_face)
    X2, y2 = real_data("rcv1_small")
    wide = cdlab.Problem(X2, y2, loss="hinge", lam=1.0 / X2.shape[0])  # 1000 examples over 47 k columns
    assert _face_primal.face_primal(wide, np.zeros(X2.shape[0]), np.zeros(X2.shape[1]), np.arange(X2.shape[0]),
                                    np.inf) == (None, 0)
