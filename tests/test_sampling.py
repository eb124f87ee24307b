"""Samplings: importance probabilities (face-off eq. 14), validation of user
probabilities, alias-method frequencies, uniform mini-batches."""
import itertools

import numpy as np
import pytest
from scipy import stats

import cdlab
from cdlab.sampling import AliasTable, BatchSampler, Sampler, check_probabilities, importance_probabilities


def chi_square_pvalue(counts, probs):
    counts = np.asarray(counts, float)
    return stats.chisquare(counts, counts.sum() * np.asarray(probs)).pvalue


def small_problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 7))
    return cdlab.Problem(X, np.sign(rng.standard_normal(30)), loss="logistic", lam=0.1)


def test_importance_probabilities_eq14():
    norms_sq = np.array([0.0, 1.0, 4.0, 9.0])
    p = importance_probabilities(norms_sq, lam=0.5, gamma=4.0, n_samples=3)
    np.testing.assert_allclose(p, (norms_sq + 6.0) / (norms_sq + 6.0).sum(), rtol=1e-15)


@pytest.mark.parametrize("probs", [
    np.array([0.5, 0.2, 0.3]),
    np.array([1e-6, 1 - 2e-6, 1e-6]),
    np.r_[np.full(50, 0.9 / 50), np.full(5, 0.1 / 5)],
])
def test_alias_frequencies_match_probabilities(probs):
    draws = AliasTable(probs).draw(np.random.default_rng(12345), 400_000)
    counts = np.bincount(draws, minlength=probs.size)
    assert counts.sum() == 400_000
    assert chi_square_pvalue(counts, probs) > 1e-3


def test_alias_table_catches_a_wrong_distribution():
    """The frequency test has power: draws from p are rejected against a q ≠ p."""
    p, q = np.array([0.5, 0.2, 0.3]), np.array([0.49, 0.21, 0.30])
    counts = np.bincount(AliasTable(p).draw(np.random.default_rng(12345), 400_000), minlength=3)
    assert chi_square_pvalue(counts, q) < 1e-6


def test_draws_are_reproducible():
    s = Sampler(10, "probabilities", np.arange(1, 11) / 55.0)
    a = s.draw(np.random.default_rng(3), 1000)
    b = s.draw(np.random.default_rng(3), 1000)
    assert np.array_equal(a, b) and not np.array_equal(a, s.draw(np.random.default_rng(4), 1000))


def test_a_sampler_refuses_a_kind_it_does_not_draw():
    """"weighted" names SPDC's Algorithm 2 and a page choice, not a Sampler kind: drawing from given
    probabilities is the kind "probabilities"; an unknown kind is refused, never drawn as some order."""
    with pytest.raises(ValueError, match=r"unknown sampler kind 'weighted'; choose one of \['cyclic', "
                                         r"'permutation', 'probabilities', 'uniform'\]"):
        Sampler(10, "weighted", np.full(10, 0.1))


@pytest.mark.parametrize("bad, match", [
    (np.full(4, 0.25), "length 4, but there are 5"),
    (np.array([0.5, 0.5, 0.2, -0.2, 0.0 + 1e-12]), "must all be > 0"),
    (np.array([0.5, 0.5, 0.0, 0.0, 0.0]), "must all be > 0"),
    (np.array([0.2, 0.2, np.nan, 0.2, 0.2]), "NaN or inf"),
    (np.array([0.2, 0.2, np.inf, 0.2, 0.2]), "NaN or inf"),
    (np.full(5, 0.2 + 1e-8), "must sum to 1"),
    (["a", "b", "c", "d", "e"], "must be numeric"),
    # a matrix is refused, not flattened (it used to be, so (1, 5) and (5, 1) passed)
    (np.full((1, 5), 0.2), r"1-D array of length 5, got shape \(1, 5\)"),
    (np.full((5, 1), 0.2), r"1-D array of length 5, got shape \(5, 1\)"),
    (np.full((2, 5), 0.1), r"1-D array of length 5, got shape \(2, 5\)"),
    (0.2, r"got shape \(\)"),
    # complex and bool are refused, not cast (an imaginary part was dropped with a warning)
    (np.full(5, 0.2 + 0.1j), "real numbers, got dtype complex128"),
    (np.ones(5, dtype=bool), "real numbers, got dtype bool"),
    (None, "a name or a 1-D array of probabilities, got None"),
    ({"p": 0.2}, "a name or a 1-D array of probabilities"),
    ([[0.2, 0.2], [0.6]], "must be numeric"),
    (np.array([1, 0, 0, 0, 0]), r"must all be > 0 \(4 are not\)"),
    (np.ones(5, dtype=int), "they sum to 5"),
])
def test_bad_probabilities_raise(bad, match):
    with pytest.raises(ValueError, match=match):
        check_probabilities(bad, 5)


def test_lists_tuples_and_int_arrays_are_accepted_as_float64_copies():
    for p, size in (([0.25, 0.75], 2), ((0.5, 0.5), 2), (np.array([1]), 1), (np.array([0.5, 0.5], np.float32), 2)):
        out = check_probabilities(p, size)
        assert out.dtype == np.float64 and out.shape == (size,)
        np.testing.assert_allclose(out, np.asarray(p, float), rtol=0, atol=0)
        assert out is not p


def test_probabilities_summing_to_one_within_1e9_pass():
    p = np.full(5, 0.2)
    p[0] += 5e-10
    assert np.array_equal(check_probabilities(p, 5), p)


@pytest.mark.parametrize("method, right, wrong, what", [
    ("primal_cd", "n_features", "n_samples", "features"),
    ("dual_cd", "n_samples", "n_features", "examples"),
    ("sdca", "n_samples", "n_features", "examples"),
])
def test_primal_dual_length_mixup_raises_before_any_work(method, right, wrong, what):
    problem = small_problem()
    calls = []
    mixed = np.full(getattr(problem, wrong), 1.0 / getattr(problem, wrong))
    with pytest.raises(ValueError, match=f"length {mixed.size}, but there are {getattr(problem, right)} {what}"):
        cdlab.solve(problem, method=method, sampling=mixed, callback=calls.append)
    bad = np.full(getattr(problem, right), 1.0 / getattr(problem, right))
    bad[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cdlab.solve(problem, method=method, sampling=bad, callback=calls.append)
    assert calls == []


@pytest.mark.parametrize("method", ["primal_cd", "dual_cd", "sdca"])
def test_matrix_or_complex_probabilities_raise_through_solve(method):
    problem = small_problem()
    size = problem.n_features if method == "primal_cd" else problem.n_samples
    calls = []
    for bad, match in ((np.full((1, size), 1.0 / size), "1-D array"), (np.full(size, 1.0 / size + 0j), "real")):
        with pytest.raises(ValueError, match=match):
            cdlab.solve(problem, method=method, sampling=bad, callback=calls.append)
    assert calls == []


@pytest.mark.parametrize("loss, s, gamma", [("squared", 1.0, 1.0), ("logistic", 1.0, 4.0),
                                            ("smoothed_hinge", 0.3, 0.3), ("smoothed_hinge", 2.5, 2.5)])
def test_importance_uses_the_losses_gamma_on_both_sides(loss, s, gamma):
    """Eq. (14) with λγn, γ the loss's smoothness (s for the smoothed hinge),
    not λn: p_j ∝ ‖f_j‖² + λγn for primal_cd, q_i ∝ ‖x_i‖² + λγn for dual_cd."""
    from cdlab.solvers import dual_cd, primal_cd
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 6)) * np.r_[5.0, np.ones(5)]
    X[:5] *= 4.0
    problem = cdlab.Problem(X, np.sign(rng.standard_normal(40)), loss=loss, lam=0.05, s=s)
    lgn = 0.05 * gamma * 40
    primal = primal_cd.PrimalCDState(problem, "importance", np.random.default_rng(0)).sampler.probs
    dual = dual_cd.DualCDState(problem, "importance", np.random.default_rng(0)).sampler.probs
    np.testing.assert_allclose(primal, (problem.col_norms_sq + lgn) / (problem.col_norms_sq + lgn).sum(), rtol=1e-14)
    np.testing.assert_allclose(dual, (problem.row_norms_sq + lgn) / (problem.row_norms_sq + lgn).sum(), rtol=1e-14)


def test_user_probabilities_are_not_modified():
    problem = small_problem()
    p = np.linspace(1.0, 2.0, problem.n_features)
    p /= p.sum()
    keep = p.copy()
    cdlab.solve(problem, method="primal_cd", sampling=p, tol=1e-9)
    assert np.array_equal(p, keep)


# ---------------------------------------------------------------- mini-batches

@pytest.mark.parametrize("size, m", [(5, 2), (5, 3), (5, 5), (1000, 1), (1000, 20), (1000, 40)])
def test_batches_are_distinct_and_reproducible(size, m):
    sampler = BatchSampler(size, m)
    a = sampler.draw(np.random.default_rng(9), 500)
    assert a.shape == (500, m) and a.dtype == np.int64
    assert a.min() >= 0 and a.max() < size
    assert all(np.unique(row).size == m for row in a)
    assert np.array_equal(a, sampler.draw(np.random.default_rng(9), 500))
    assert sampler.draw(np.random.default_rng(9), 0).shape == (0, m)


@pytest.mark.parametrize("size, m", [(5, 2), (6, 3), (7, 5)])
def test_every_subset_equally_likely(size, m):
    """Both code paths (rejection for m² ≤ size, shuffles otherwise) draw each
    m-subset with probability 1/C(size, m)."""
    draws = BatchSampler(size, m).draw(np.random.default_rng(2024), 60_000)
    subsets = {s: k for k, s in enumerate(itertools.combinations(range(size), m))}
    counts = np.bincount([subsets[tuple(sorted(row))] for row in draws.tolist()], minlength=len(subsets))
    assert chi_square_pvalue(counts, np.full(len(subsets), 1.0 / len(subsets))) > 1e-3


def test_batch_inclusion_frequency_is_m_over_size():
    size, m, k = 400, 15, 20_000
    counts = np.bincount(BatchSampler(size, m).draw(np.random.default_rng(5), k).ravel(), minlength=size)
    assert chi_square_pvalue(counts, np.full(size, 1.0 / size)) > 1e-3


@pytest.mark.parametrize("m, text", [(0, "an integer ≥ 1, got 0"), (-1, "an integer ≥ 1, got -1"),
                                     (6, "in [1, 5], got 6"), (2.5, "an integer ≥ 1, got 2.5"),
                                     (True, "an integer ≥ 1, got True"), ("3", "an integer ≥ 1, got '3'"),
                                     (None, "an integer ≥ 1, got None")])
def test_bad_batch_size_raises(m, text):
    with pytest.raises(ValueError) as error:
        BatchSampler(5, m)
    assert str(error.value) == f"batch_size must be {text}"


def test_integral_float_batch_size_is_accepted():
    assert BatchSampler(5, 3.0).batch_size == 3


def test_float32_normalised_probabilities_are_accepted_and_renormalised():
    """Issue 17: w/w.sum() in float32 sums to 1 only within float32 rounding (3.4e-8 off here)."""
    w = np.random.default_rng(1).random(30).astype(np.float32)
    p32 = w / w.sum()
    assert abs(p32.astype(float).sum() - 1) > 1e-9
    p = check_probabilities(p32, 30)
    assert p.dtype == np.float64 and abs(p.sum() - 1) <= 1e-15
    np.testing.assert_allclose(p, p32, rtol=1e-6)
    problem = small_problem()
    result = cdlab.solve(problem, sampling=p32, max_passes=2)
    assert np.all(np.isfinite(result.trace.gap))
    with pytest.raises(ValueError, match=r"must sum to 1 \(within 0.00035\)"):
        check_probabilities(np.full(30, 1.01 / 30, dtype=np.float32), 30)
    for p_obj in (np.full(5, 0.2).astype(object), np.array([0.25, 0.25, np.float64(0.25), 0.125, 0.125], dtype=object)):
        assert check_probabilities(p_obj, 5).dtype == np.float64
    with pytest.raises(ValueError, match=r"found True \(bool\) at index 1"):
        check_probabilities(np.array([0.5, True, 0.5], dtype=object), 3)


@pytest.mark.parametrize("method", ["sdca", "dual_cd", "primal_cd"])
def test_probabilities_concentrated_on_empty_coordinates_are_refused(method):
    """Issue 17: custom probabilities concentrated on an empty row made a checkpoint
    interval ~1e12 steps and numpy ask for 291 GiB (7 TiB here) of indices."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 6))
    X[-1] = 0.0
    X[:, -1] = 0.0
    problem = cdlab.Problem(X, np.sign(rng.standard_normal(20)), loss="squared", lam=0.1)
    size, what = (6, "features") if method == "primal_cd" else (20, "examples")
    p = np.full(size, 1e-12)
    p[-1] = 1 - (size - 1) * 1e-12
    calls = []
    with pytest.raises(ValueError, match=rf"put 0.9999999999\d* of their mass on {what} without nonzeros: one "
                                         rf"pass over the data would take [\d.]+e\+1\d steps, more than 16 × "
                                         rf"max\({size} {what}, {problem.nnz} nonzeros\)"):
        cdlab.solve(problem, method=method, sampling=p, callback=calls.append)
    assert calls == []
    p = np.full(size, 1.0 / size)  # an empty coordinate drawn as often as the others is fine
    assert cdlab.solve(problem, method=method, sampling=p, max_passes=2).trace.passes.iloc[-1] >= 1.5
