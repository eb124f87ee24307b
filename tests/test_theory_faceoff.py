"""Face-off quantities (theory.faceoff) against direct numpy computations, and the
theorems of Csiba & Richtárik 2016 on random, extreme and exhaustively enumerated data.
"""
import math

import numpy as np
import pytest
import scipy.sparse as sp

import cdlab
from cdlab import theory
from cdlab.data import binary_extreme, extreme_matrix


def random_sparse(n, d, density, rng, skew=0.0):
    """A random sparse matrix with no zero rows or columns; column scales ~ exp(skew·N(0,1))."""
    A = sp.random(n, d, density=density, random_state=rng, data_rvs=rng.standard_normal).toarray()
    for i in np.flatnonzero(~A.any(axis=1)):
        A[i, rng.integers(d)] = rng.standard_normal()
    for j in np.flatnonzero(~A.any(axis=0)):
        A[rng.integers(n), j] = rng.standard_normal()
    return A * np.exp(skew * rng.standard_normal(d))


def labels(A, rng):
    return np.sign(A @ rng.standard_normal(A.shape[1]) + 0.1 + 0.01 * rng.standard_normal(A.shape[0]))


def direct(A, lam, gamma):
    """Every face-off quantity straight from the dense matrix and the explicit samplings."""
    n, d = A.shape
    c = lam * gamma * n
    fnz, fsq = (A != 0).sum(axis=0), (A ** 2).sum(axis=0)
    xnz, xsq = (A != 0).sum(axis=1), (A ** 2).sum(axis=1)
    out = {}
    for side, nz, sq in (("primal", fnz, fsq), ("dual", xnz, xsq)):
        size = len(nz)
        for sampling, p in (("uniform", np.full(size, 1.0 / size)), ("importance", (sq + c) / (sq + c).sum())):
            iters = max((sq[k] + c) / (p[k] * c) for k in range(size))  # Thm 1
            cost = sum(p[k] * nz[k] for k in range(size))  # eqs. (10), (11)
            out[f"iters_{side}_{sampling}"] = iters
            out[f"cost_{side}_{sampling}"] = cost
            out[f"T_{side[0].upper()}_{sampling}"] = iters * cost  # eqs. (12), (13)
    out["C_P"] = sum(fnz[j] * fsq[j] for j in range(d))
    out["C_D"] = sum(xnz[i] * xsq[i] for i in range(n))
    return out


@pytest.mark.parametrize("n,d,density,skew,loss,lam", [
    (60, 25, 0.2, 0.0, "logistic", 1e-3), (30, 80, 0.05, 1.5, "squared", 1e-2),
    (120, 40, 0.6, 0.7, "smoothed_hinge", 1e-4), (40, 40, 1.0, 0.0, "logistic", 1e-1)])
def test_faceoff_quantities_equal_direct_numpy(n, d, density, skew, loss, lam):
    rng = np.random.default_rng(n + d)
    A = random_sparse(n, d, density, rng, skew)
    P = cdlab.Problem(sp.csr_matrix(A), labels(A, rng), loss=loss, lam=lam)
    fo = theory.faceoff(P)
    ref = direct(A, lam, P.gamma)
    for key, val in ref.items():
        assert getattr(fo, key) == pytest.approx(val, rel=1e-10), key
    # eq. (15) closed forms and Theorem 2's "importance ≤ uniform" on the bound's total work
    c = lam * P.gamma * n
    assert fo.T_P_importance == pytest.approx(P.nnz + ref["C_P"] / c, rel=1e-10)
    assert fo.T_D_importance == pytest.approx(P.nnz + ref["C_D"] / c, rel=1e-10)
    assert fo.T_P_importance <= fo.T_P_uniform * (1 + 1e-12)
    assert fo.T_D_importance <= fo.T_D_uniform * (1 + 1e-12)
    # the prediction is the best of the four, and its ratio the other side's best over it
    works = {("primal_cd", s): getattr(fo, f"T_P_{s}") for s in ("uniform", "importance")}
    works.update({("dual_cd", s): getattr(fo, f"T_D_{s}") for s in ("uniform", "importance")})
    (m, s), w = min(works.items(), key=lambda kv: kv[1])
    other = min(v for k, v in works.items() if k[0] != m)
    assert fo.prediction["work"] == pytest.approx(w, rel=1e-12)
    assert fo.prediction["ratio"] == pytest.approx(other / w, rel=1e-12)
    if other / w > 1 + 1e-9:
        assert (fo.prediction["method"], fo.prediction["sampling"]) == (m, s)
    else:  # a dense square matrix with equal norms: C_P = C_D, a tie either way
        assert "tie" in fo.prediction["text"]
    table = fo.table()
    assert table.loc[("dual", "importance"), "total_work"] == pytest.approx(fo.T_D_importance)
    flat = fo.as_dict()
    assert flat["C_P"] == fo.C_P and flat["prediction_work"] == fo.prediction["work"]
    assert flat["theorem3_holds"] is True


def test_faceoff_work_matches_the_bounds_per_step_cost():
    rng = np.random.default_rng(3)
    A = random_sparse(50, 30, 0.3, rng, 1.0)
    P = cdlab.Problem(sp.csr_matrix(A), labels(A, rng), loss="logistic", lam=1e-3)
    fo = theory.faceoff(P)
    for method, side in (("primal_cd", "primal"), ("dual_cd", "dual")):
        for sampling in ("uniform", "importance"):
            b = theory.bound(method, P, sampling, quantity="gap" if side == "dual" else "subopt")
            assert b.cost_per_step == pytest.approx(getattr(fo, f"cost_{side}_{sampling}"), rel=1e-12)
            assert 1 / b.rate == pytest.approx(getattr(fo, f"iters_{side}_{sampling}"), rel=1e-12)


def test_faceoff_refuses_non_smooth_loss():
    rng = np.random.default_rng(0)
    A = random_sparse(10, 5, 0.5, rng)
    with pytest.raises(ValueError, match="smooth loss"):
        theory.faceoff(cdlab.Problem(A, labels(A, rng), loss="hinge", lam=0.1))


def test_faceoff_constants_of_a_non_smooth_loss_are_those_of_its_data():
    """C_P, C_D (eq. 16) and Theorem 3 depend on X only: a hinge problem has them, equal to the
    face-off's under any smooth loss on the same data, computed from the matrix by definition."""
    rng = np.random.default_rng(1)
    A = random_sparse(40, 12, 0.4, rng, 1.0)
    hinge = cdlab.Problem(sp.csr_matrix(A), labels(A, rng), loss="hinge", lam=0.1)
    constants = theory.faceoff_constants(hinge)
    assert constants.problem is hinge and not hasattr(constants, "T_P_uniform")
    C_P, C_D, F2 = theorem3_ratio(A)
    assert (constants.C_P, constants.C_D, constants.frob_sq) == pytest.approx((C_P, C_D, F2), rel=1e-12)
    smooth = theory.faceoff(hinge.with_params(loss="logistic"))
    assert (constants.C_P, constants.C_D, constants.nnz) == (smooth.C_P, smooth.C_D, smooth.nnz)
    assert constants.theorem3 == smooth.theorem3 and constants.theorem3["holds"]


# ------------------------------------------------------------------ Theorem 3
def theorem3_ratio(A):
    fnz, fsq = (A != 0).sum(0), (A ** 2).sum(0)
    xnz, xsq = (A != 0).sum(1), (A ** 2).sum(1)
    return (fnz @ fsq), (xnz @ xsq), (A ** 2).sum()


@pytest.mark.parametrize("seed", range(6))
def test_theorem3_holds_on_random_matrices(seed):
    rng = np.random.default_rng(seed)
    n, d = rng.integers(2, 80, size=2)
    A = random_sparse(n, d, rng.uniform(0.02, 1.0), rng, rng.uniform(0, 2))
    P = cdlab.Problem(sp.csr_matrix(A), labels(A, rng), loss="squared", lam=1.0)
    t3 = theory.theorem3_check(P)
    C_P, C_D, F2 = theorem3_ratio(A)
    assert t3["assumption"] and t3["holds"]
    assert F2 <= C_P <= n * F2 * (1 + 1e-12) and F2 <= C_D <= d * F2 * (1 + 1e-12)
    assert 1 / d <= C_P / C_D <= n
    assert t3["ratio"] == pytest.approx(C_P / C_D, rel=1e-12)


def one_dense_column(n, d, tiny):
    """Column 0 is 1 on rows ≥ d−1 and `tiny` on rows 0..d−2, which hold the other
    columns' single `tiny` entries: as tiny → 0, C_P → n‖X‖_F², C_D → ‖X‖_F², C_P/C_D → n."""
    A = np.zeros((n, d))
    A[:, 0] = 1.0
    A[: d - 1, 0] = tiny
    A[np.arange(d - 1), np.arange(1, d)] = tiny
    return A


@pytest.mark.parametrize("n,d", [(50, 5), (200, 30), (20, 20)])
def test_theorem3_is_approached_by_the_extreme_matrices(n, d):
    for tiny, tol in ((1e-3, 1e-4), (1e-6, 1e-10)):
        A = one_dense_column(n, d, tiny)
        rng = np.random.default_rng(0)
        P = cdlab.Problem(sp.csr_matrix(A), labels(A, rng), loss="squared", lam=1.0)
        t3 = theory.theorem3_check(P)
        assert t3["holds"] and t3["assumption"]
        C_P, C_D, F2 = theorem3_ratio(A)
        assert C_P / (n * F2) > 1 - 2 * tol * n and C_D / F2 < 1 + 2 * tol * n
        assert t3["ratio"] / n > 1 - 4 * tol * n
        # the transpose pattern approaches the other end, 1/d
        P_t = cdlab.Problem(sp.csr_matrix(A.T), labels(A.T, rng), loss="squared", lam=1.0)
        t3t = theory.theorem3_check(P_t)
        assert t3t["holds"] and t3t["ratio"] * n < 1 + 4 * tol * n  # P_t has n features


@pytest.mark.parametrize("n,d", [(100, 8), (30, 30)])
def test_theorem3_is_approached_by_cdlab_data_extreme_matrices(n, d):
    for eps in (1e-2, 1e-5):
        for kind, target in (("primal_worst", n), ("dual_worst", 1 / d)):
            X = extreme_matrix(n, d, kind=kind, eps=eps)
            t3 = theory.theorem3_check(cdlab.Problem(X, np.ones(n), loss="squared", lam=1.0))
            assert t3["assumption"] and t3["holds"]
            assert t3["ratio"] / target == pytest.approx(1.0, abs=10 * max(n, d) ** 2 * eps ** 2)


# ------------------------------------------------------------------ binary data
def all_binary(n, d):
    """Every 0/1 n×d matrix with no zero rows or columns (signs do not change C_P, C_D)."""
    N = n * d
    M = ((np.arange(2 ** N)[:, None] >> np.arange(N)) & 1).reshape(-1, n, d)
    M = M[(M.sum(2) > 0).all(1) & (M.sum(1) > 0).all(1)]
    return (M.sum(1) ** 2).sum(1), (M.sum(2) ** 2).sum(1), M.sum((1, 2))


@pytest.mark.parametrize("n,d", [(1, 1), (1, 4), (4, 1), (2, 2), (2, 5), (3, 3), (3, 4), (4, 3), (4, 4), (2, 7)])
def test_binary_extremes_and_theorem4_equal_exhaustive_enumeration(n, d):
    cp, cd, om = all_binary(n, d)
    assert om.min() == max(n, d) and om.max() == n * d  # the edge cases ω = max(n, d) and ω = nd are in
    for omega in np.unique(om):
        sel = om == omega
        e = theory.binary_extremes(n, d, int(omega))
        assert (e["min_C_P"], e["max_C_P"]) == (cp[sel].min(), cp[sel].max())
        assert (e["min_C_D"], e["max_C_D"]) == (cd[sel].min(), cd[sel].max())
        lo, hi = theory.theorem4_bounds(n, d, int(omega))
        ratio = cp[sel] / cd[sel]
        assert ratio.min() == pytest.approx(lo, rel=1e-14) and ratio.max() == pytest.approx(hi, rel=1e-14)


@pytest.mark.parametrize("n,d,omega", [(30, 10, 45), (12, 40, 100), (8, 3, 24), (1, 5, 5), (6, 6, 20)])
def test_binary_extremes_match_cdlab_data_constructions(n, d, omega):
    """Two independent implementations of Lemma 9: the closed forms here, the patterns in cdlab.data."""
    e = theory.binary_extremes(n, d, omega)
    for which in ("min_CP", "max_CP", "min_CD", "max_CD"):
        X = binary_extreme(n, d, omega, which=which, signed=True, seed=1).toarray()
        C_P, C_D, _ = theorem3_ratio(X)
        key = which.replace("CP", "C_P").replace("CD", "C_D")  # data's "max_CP" is our "max_C_P"
        assert (C_P if which.endswith("CP") else C_D) == e[key]
        lo, hi = theory.theorem4_bounds(n, d, omega)
        assert lo * (1 - 1e-14) <= C_P / C_D <= hi * (1 + 1e-14)


def max_ratio_binary(n, d, omega):
    """A binary matrix attaining Theorem 4's upper bound: columns piled up (max C_P:
    t full columns, one with 1 + ρ, the rest with 1) and the leftover entries dealt
    round-robin over the rows (min C_D: row counts differ by at most one)."""
    A = np.zeros((n, d))
    t, rho = divmod(omega - d, n - 1)
    if t >= d:
        return np.ones((n, d))
    A[:, :t] = 1
    row = 0
    for j, count in [(t, 1 + rho)] + [(j, 1) for j in range(t + 1, d)]:
        for _ in range(count):
            A[row % n, j] = 1
            row += 1
    return A


@pytest.mark.parametrize("n,d,omega", [(30, 10, 45), (30, 10, 200), (12, 40, 100), (50, 50, 60), (8, 3, 24)])
def test_theorem4_bounds_hold_and_are_attained_at_scale(n, d, omega):
    lo, hi = theory.theorem4_bounds(n, d, omega)
    A = max_ratio_binary(n, d, omega)
    assert A.sum() == omega and A.any(0).all() and A.any(1).all()
    C_P, C_D, _ = theorem3_ratio(A)
    assert C_P / C_D == pytest.approx(hi, rel=1e-14)
    B = max_ratio_binary(d, n, omega).T  # the transpose construction attains the lower bound
    C_P, C_D, _ = theorem3_ratio(B)
    assert C_P / C_D == pytest.approx(lo, rel=1e-14)
    rng = np.random.default_rng(omega)
    for _ in range(20):  # random binary matrices with the same n, d, omega stay inside
        M = random_binary(n, d, omega, rng)
        C_P, C_D, _ = theorem3_ratio(M)
        assert lo <= C_P / C_D <= hi


def random_binary(n, d, omega, rng):
    """A random ±1 matrix with omega nonzeros and no zero rows or columns."""
    A = np.zeros((n, d))
    k = max(n, d)
    A[np.arange(k) % n, rng.permutation(k) % d] = 1  # covers every row and column
    free = np.flatnonzero(A.ravel() == 0)
    A.ravel()[rng.choice(free, omega - int(A.sum()), replace=False)] = 1
    return A * rng.choice([-1.0, 1.0], size=A.shape)


@pytest.mark.parametrize("n,d", [(1, 4), (2, 2), (2, 5), (3, 3), (3, 4), (4, 4), (2, 7)])
def test_theorem5_on_every_binary_matrix(n, d):
    """Where Theorem 5 names a side, every binary matrix of that size and ω agrees (both orientations);
    for square n = d ≥ 3 some matrix below the threshold disagrees, so the hypothesis is not vacuous."""
    for rows, cols, side in ((n, d, "primal"), (d, n, "dual")):
        cp, cd, om = all_binary(rows, cols)
        for omega in np.unique(om):
            sel = om == omega
            said = theory.theorem5(rows, cols, int(omega))
            if rows == cols and omega == rows * cols:
                assert said == "tie" and (cp[sel] == cd[sel]).all()
                continue
            assert said == (side if omega >= min(rows, cols) ** 2 else None)
            if said == "primal":
                assert (cp[sel] <= cd[sel]).all()
            elif said == "dual":
                assert (cd[sel] <= cp[sel]).all()
    if n == d >= 3:
        cp, cd, om = all_binary(n, d)
        assert (cp[om < min(n, d) ** 2] > cd[om < min(n, d) ** 2]).any()


def test_theorem5_implies_corollary6_and_refuses_infeasible_omega():
    for n, d in [(3, 9), (4, 20), (2, 4)]:
        assert all(theory.theorem5(n, d, omega) == "primal" for omega in range(d, n * d + 1))
        assert theory.corollary6(n, d) == "primal"
    with pytest.raises(ValueError, match="omega"):
        theory.theorem5(3, 4, 3)


@pytest.mark.parametrize("n,d", [(3, 9), (4, 20), (5, 25)])
def test_corollary6_on_random_binary_matrices(n, d):
    assert theory.corollary6(n, d) == "primal" and theory.corollary6(d, n) == "dual"
    rng = np.random.default_rng(n * d)
    for omega in np.linspace(d, n * d, 8).astype(int):
        for _ in range(10):
            A = random_binary(n, d, int(omega), rng)
            C_P, C_D, _ = theorem3_ratio(A)
            assert C_P <= C_D
            C_P, C_D, _ = theorem3_ratio(A.T)  # n ≥ d² for the transpose: dual wins
            assert C_D <= C_P
    assert theory.corollary6(5, 10) is None


def test_figure1_map():
    d, ns, omegas = 10, [2, 5, 10, 40], [5, 10, 50, 100, 400]
    M = theory.figure1_map(d, ns, omegas)
    assert M.shape == (len(omegas), len(ns))
    for a, omega in enumerate(omegas):
        for b, n in enumerate(ns):
            if max(n, d) <= omega <= n * d:
                assert M[a, b] == theory.theorem4_bounds(n, d, omega)[1]
            else:
                assert np.isnan(M[a, b])
    # Corollary 6 on the map: n² ≤ d means the upper bound is ≤ 1 for every feasible omega
    col = M[:, ns.index(2)]
    assert np.all(col[~np.isnan(col)] <= 1)


def test_binary_functions_reject_bad_input():
    with pytest.raises(ValueError, match="omega"):
        theory.binary_extremes(3, 4, 2)
    with pytest.raises(ValueError, match="max\\(n, d\\) = 4 ≤ omega"):  # ω ≥ n but a column would be empty
        theory.binary_extremes(3, 4, 3)
    with pytest.raises(ValueError, match="omega"):
        theory.theorem4_bounds(3, 4, 13)
    with pytest.raises(ValueError, match="n must be an integer ≥ 1, got 3.5"):
        theory.binary_extremes(3.5, 4, 5)
    with pytest.raises(ValueError, match="n must be an integer ≥ 1, got 0"):
        theory.corollary6(0, 4)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), None, True, 2.5, "5", 0, -3])
def test_binary_functions_reject_non_integers_with_a_clear_message(bad):
    """NaN, inf, None and bools used to escape as OverflowError/TypeError or a bare int() message."""
    for call in (lambda: theory.binary_extremes(3, 4, bad), lambda: theory.binary_extremes(bad, 4, 6),
                 lambda: theory.theorem4_bounds(3, bad, 6), lambda: theory.corollary6(bad, 4),
                 lambda: theory.figure1_map(bad, [2, 3], [5, 6]), lambda: theory.figure1_map(10, [2, bad], [20]),
                 lambda: theory.figure1_map(10, [2], [20, bad])):
        with pytest.raises(ValueError, match="must be an integer ≥ 1, got"):
            call()


def test_binary_extremes_edge_cases():
    """n = 1, d = 1, ω = max(n, d), ω = nd: each has exactly one pattern up to permutation."""
    assert theory.binary_extremes(1, 1, 1) == dict(min_C_P=1, max_C_P=1, min_C_D=1, max_C_D=1)
    assert theory.binary_extremes(4, 1, 4) == dict(min_C_P=16, max_C_P=16, min_C_D=4, max_C_D=4)
    assert theory.binary_extremes(1, 5, 5) == dict(min_C_P=5, max_C_P=5, min_C_D=25, max_C_D=25)
    assert theory.binary_extremes(3, 4, 12) == dict(min_C_P=36, max_C_P=36, min_C_D=48, max_C_D=48)
    assert theory.theorem4_bounds(3, 4, 12) == (0.75, 0.75)  # dense: C_P/C_D = n/d exactly
    for n, d in ((1, 1), (4, 1), (1, 5)):
        assert theory.figure1_map(d, [n], [n * d])[0, 0] == theory.theorem4_bounds(n, d, n * d)[1]


@pytest.mark.parametrize("d_factor", [0.2, 1.0, 5.0, 50.0])
def test_prediction_states_its_confidence_from_the_bound_ratio(d_factor):
    """'likely' from a bound ratio of CLOSE_CALL on, 'too close to call' below it, and the text says which."""
    from cdlab.theory.faceoff import CLOSE_CALL, confidence_of
    rng = np.random.default_rng(1)
    n, d = 200, max(2, int(200 * d_factor))
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.1) + np.eye(n, d)
    fo = theory.faceoff(cdlab.Problem(X, np.sign(rng.standard_normal(n)), loss="logistic", lam=1.0 / n))
    pred = fo.prediction
    work = sorted([min(fo.T_P_uniform, fo.T_P_importance), min(fo.T_D_uniform, fo.T_D_importance)])
    assert pred["ratio"] == pytest.approx(work[1] / work[0], rel=1e-12)
    assert pred["confidence"] == ("likely" if work[1] / work[0] >= CLOSE_CALL else "too close to call")
    assert pred["confidence"] == confidence_of(pred["ratio"])
    assert pred["confidence"] in pred["text"]
    assert confidence_of(CLOSE_CALL) == "likely" and confidence_of(CLOSE_CALL * (1 - 1e-9)) == "too close to call"


def test_prediction_names_equal_samplings_and_the_l1_caveat():
    """Rows with equal norms (mushrooms-like one-hot data): uniform and importance sampling have the
    same dual work, so the prediction says so instead of silently contradicting Theorem 2; with
    l1 > 0 it warns that the face-off's theory (L2-regularised ERM) does not cover the problem."""
    rng = np.random.default_rng(5)
    n, d = 300, 12
    A = np.zeros((n, d))
    for i in range(n):
        A[i, rng.choice(d, 3, replace=False)] = 1.0  # every row has 3 ones: ‖x_i‖² = 3
    A[:d] = 0.0  # the first d rows cover every column, still 3 ones each
    for shift in range(3):
        A[np.arange(d), (np.arange(d) + shift) % d] = 1.0
    assert np.all((A ** 2).sum(1) == 3) and A.any(0).all()
    P = cdlab.Problem(sp.csr_matrix(A), labels(A, rng), loss="squared", lam=1e-2)
    fo = theory.faceoff(P)
    assert fo.T_D_importance == pytest.approx(fo.T_D_uniform, rel=1e-12)
    assert fo.prediction["method"] == "dual_cd" and fo.prediction["sampling"] == "uniform"
    assert "importance sampling gives the same bound" in fo.prediction["text"]
    assert "caution" not in fo.prediction["text"]
    fo_l1 = theory.faceoff(P.with_params(l1=1e-3))
    assert "l1 = 0.001" in fo_l1.prediction["text"] and "L2-regularised" in fo_l1.prediction["text"]


# ------------------------------------------------------------ measured verdict (cdlab.verdict)
def test_verdict_is_a_tie_when_seed_ranges_overlap_and_a_win_when_apart():
    from cdlab.verdict import verdict
    tie = verdict({"primal": [11.0, 11.2, 11.4], "dual": [10.9, 11.1, 11.3]})
    assert (tie.kind, tie.winner, tie.overlapping) == ("tie", "dual", ("primal",))  # dual: the smaller median
    win = verdict({"primal": [11.5, 11.6, 11.7], "dual": [10.9, 11.1, 11.3]})
    assert (win.kind, win.winner, win.overlapping) == ("winner", "dual", ())
    touching = verdict({"primal": [11.3, 11.6], "dual": [10.9, 11.3]})  # ranges meeting at a point overlap
    assert touching.kind == "tie"
    one = verdict({"primal": [11.108], "dual": [11.095]})  # the default scenario, one seed
    assert (one.kind, one.winner) == ("one seed", "dual")
    # a seed that never reached ε counts as ∞: the other side wins only if all its seeds are below
    assert verdict({"a": [5.0, 6.0], "b": [math.inf, math.inf]}).kind == "winner"
    assert verdict({"a": [5.0, math.inf], "b": [7.0, 8.0]}).kind == "tie"
    assert verdict({"a": [math.inf, math.inf], "b": [math.inf, math.inf]}).kind == "none"
    assert verdict({"a": [2.0, 3.0], "b": [4.0, 5.0], "c": [2.5, 2.6]}).overlapping == ("c",)


@pytest.mark.parametrize("passes,message", [({"a": [1.0]}, "at least two"), ({"a": [], "b": [1.0]}, "no seeds"),
                                            ({"a": [float("nan")], "b": [1.0]}, "≥ 0 or inf"),
                                            ([1.0, 2.0], "at least two")])
def test_verdict_refuses_bad_input(passes, message):
    from cdlab.verdict import verdict
    with pytest.raises(ValueError, match=message):
        verdict(passes)


def test_faceoff_verdict_compares_each_sides_best_run():
    from cdlab.verdict import faceoff_verdict
    passes = {"primal_cd (uniform)": [9.0, 9.5, 10.0], "primal_cd (importance)": [12.0, 13.0, 14.0],
              "dual_cd (uniform)": [10.5, 11.0, 11.5], "sdca (uniform)": [20.0, 21.0, 22.0]}
    sides = {name: "primal" if name.startswith("primal") else "dual" for name in passes}
    v, chosen = faceoff_verdict(passes, sides)
    assert chosen == {"primal": "primal_cd (uniform)", "dual": "dual_cd (uniform)"}
    assert (v.kind, v.winner) == ("winner", "primal_cd (uniform)")
    assert faceoff_verdict({k: passes[k] for k in list(passes)[:2]}, sides) == (None, {"primal": "primal_cd (uniform)"})


def test_spread_text_says_what_was_not_reached():
    from cdlab.verdict import Spread
    assert Spread("a", (9.44, 9.6, 10.2)).text() == "9.6 passes (9.44–10.2)"
    assert Spread("a", (9.6,)).text() == "9.6 passes"
    assert Spread("a", (math.inf,) * 3).text() == "not reached"
    assert Spread("a", (math.inf,) * 3).range_text() == "not reached"
    assert Spread("a", (5.2, 6.0, math.inf)).text(unit="") == "6 (5.2–not reached)"
    assert Spread("a", (5.2, math.inf, math.inf)).text() == "not reached by most seeds (5.2–not reached)"
