"""Problem: validation, objectives, the gap as a certificate, no in-place changes."""
import numpy as np
import pytest
import scipy.sparse as sp

import cdlab
from cdlab.problem import soft_threshold

LOSSES = ["squared", "logistic", "hinge", "smoothed_hinge", "absolute"]


def small_data(seed=0, n=30, d=8):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sign(rng.standard_normal(n))
    return X, y


@pytest.mark.parametrize("X_bad, y_bad, kwargs, match", [
    (np.ones((3, 2)), np.ones(4), {}, "3 rows but y has 4"),
    (np.array([[1.0, np.nan], [0, 1]]), np.ones(2), {}, "NaN"),
    (np.array([[1.0, np.inf], [0, 1]]), np.ones(2), {}, "inf"),
    (np.ones((2, 2)), np.array([1.0, np.nan]), {}, "y contains NaN"),
    (np.zeros((0, 3)), np.ones(0), {}, "empty"),
    (np.zeros((3, 0)), np.ones(3), {}, "empty"),
    (np.ones((2, 2)), np.array([1.0, 0.0]), {"loss": "logistic"}, "labels in"),
    (np.ones((2, 2)), np.array([1.0, 2.0]), {"loss": "hinge"}, "labels in"),
    (np.ones((2, 2)), np.array([1.0, -1.0]), {"lam": -1e-3}, "lam"),
    (np.ones((2, 2)), np.array([1.0, -1.0]), {"lam": np.nan}, "lam"),
    (np.ones((2, 2)), np.array([1.0, -1.0]), {"l1": -1.0}, "l1"),
    (np.ones((2, 2)), np.array([1.0, -1.0]), {"l1": 1.0, "lam": 0.0}, "needs lam > 0"),
    (np.ones((2, 2)), np.array([1.0, -1.0]), {"loss": "huber"}, "unknown loss"),
    (np.ones((2, 2)), np.array([1.0, -1.0]), {"loss": "smoothed_hinge", "s": 0.0}, "smoothing"),
    (np.ones((2, 2)), np.array([1.0, -1.0]), {"t": 1.0}, "unknown loss parameter"),
    (np.ones(4), np.ones(4), {}, "2-dimensional"),
    (np.array([["a", "b"]]), np.ones(1), {}, "real numbers"),
    # y of the wrong kind: not silently flattened or parsed
    (np.ones((4, 2)), np.ones((2, 2)), {"loss": "squared"}, r"1-dimensional array of 4 labels, got shape \(2, 2\)"),
    (np.ones((4, 2)), np.ones((1, 4)), {"loss": "squared"}, r"got shape \(1, 4\)"),
    (np.ones((2, 2)), 1.0, {"loss": "squared"}, "got a scalar"),
    (np.ones((2, 2)), np.array(["1", "-1"]), {}, "y must hold real numbers"),
    (np.ones((2, 2)), np.array([0, 1]), {}, r"labels in \{0, 1\}\? use y = 2\*y - 1"),
    (np.ones((2, 2)), np.array([True, False]), {"loss": "hinge"}, "labels in"),
    # parameters that are not numbers
    (np.ones((2, 2)), np.array([1.0, -1.0]), {"lam": None}, "lam .* must be a real number"),
    (np.ones((2, 2)), np.array([1.0, -1.0]), {"lam": "0.1"}, "lam .* must be a real number"),
    (np.ones((2, 2)), np.array([1.0, -1.0]), {"lam": np.array([0.1, 0.2])}, "lam .* must be a real number"),
    (np.ones((2, 2)), np.array([1.0, -1.0]), {"l1": None}, "l1 .* must be a real number"),
    # X of the wrong kind
    (np.ones((2, 2)) + 1j, np.array([1.0, -1.0]), {}, "X must hold real numbers, got dtype complex128"),
    (sp.csr_matrix(np.ones((2, 2)) + 1j), np.array([1.0, -1.0]), {}, "X must hold real numbers"),
    ([[1.0, 2.0], [3.0]], np.array([1.0, -1.0]), {}, "X must be a 2-dimensional array"),
    (np.zeros((3, 2)), np.array([1.0, -1.0, 1.0]), {}, "no nonzero entries"),
    (sp.csr_matrix((3, 2)), np.array([1.0, -1.0, 1.0]), {}, "no nonzero entries"),
])
def test_validation_names_the_problem(X_bad, y_bad, kwargs, match):
    with pytest.raises(ValueError, match=match):
        cdlab.Problem(X_bad, y_bad, **kwargs)


def test_sparse_nan_detected_and_regression_labels_allowed():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, np.nan]]))
    with pytest.raises(ValueError, match="NaN"):
        cdlab.Problem(X, np.ones(2))
    cdlab.Problem(np.ones((2, 2)), np.array([0.3, 2.0]), loss="squared")  # real labels are fine


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_nonfinite_entry_is_located(fmt):
    X = np.arange(1.0, 13.0).reshape(4, 3)
    X[2, 1] = -np.inf
    with pytest.raises(ValueError, match=r"X contains inf \(first at row 2, column 1\)"):
        cdlab.Problem(sp.csr_matrix(X).asformat(fmt), np.ones(4))
    y = np.ones(4)
    y[3] = np.nan
    with pytest.raises(ValueError, match=r"y contains NaN or inf values \(first at index 3"):
        cdlab.Problem(np.ones((4, 3)), y)


def test_column_vector_labels_and_boolean_features_are_accepted():
    X, y = small_data()
    p = cdlab.Problem(X, y[:, None])
    np.testing.assert_array_equal(p.y, y)
    b = cdlab.Problem(X > 0, y)  # dense bool is 0/1 features, as sparse bool already was
    np.testing.assert_array_equal(b.X.toarray(), (X > 0).astype(float))
    np.testing.assert_array_equal(cdlab.Problem(sp.csr_matrix(X > 0), y).X.toarray(), b.X.toarray())


@pytest.mark.parametrize("fmt", ["dense", "list", "int", "csr", "csc", "coo", "lil", "dia", "dok", "bsr",
                                 "csr_array", "coo_array"])
def test_any_format_gives_sorted_csr_and_csc(fmt):
    X, y = small_data()
    X[X < 0.3] = 0.0
    if fmt == "int":
        X = np.round(4 * X)
        Xin = X.astype(np.int64)
    elif fmt == "list":
        Xin = X.tolist()
    elif fmt == "dense":
        Xin = X
    else:
        Xin = getattr(sp, fmt if fmt.endswith("array") else f"{fmt}_matrix")(X)
    p = cdlab.Problem(Xin, y)
    assert p.X.format == "csr" and p.X_csc.format == "csc"
    assert p.X.has_sorted_indices and p.X_csc.has_sorted_indices
    assert p.X.dtype == np.float64
    np.testing.assert_array_equal(p.X.toarray(), X)
    np.testing.assert_allclose(p.row_norms_sq, (X ** 2).sum(1))
    np.testing.assert_allclose(p.col_norms_sq, (X ** 2).sum(0))
    np.testing.assert_array_equal(p.row_nnz, (X != 0).sum(1))
    np.testing.assert_array_equal(p.col_nnz, (X != 0).sum(0))
    assert p.nnz == (X != 0).sum()


def test_unsorted_duplicated_csr_input_is_canonicalised_on_a_copy():
    data = np.array([3.0, 1.0, 0.0, 2.0, 5.0, 1.0])
    indices = np.array([2, 0, 1, 0, 0, 2], dtype=np.int32)
    indptr = np.array([0, 3, 6], dtype=np.int32)
    A = sp.csr_matrix((data.copy(), indices.copy(), indptr.copy()), shape=(2, 3))
    assert not A.has_sorted_indices
    y = np.array([1.0, -1.0])
    p = cdlab.Problem(A, y, lam=0.1)
    cdlab.solve(p, max_passes=3)
    np.testing.assert_array_equal(p.X.toarray(), [[1.0, 0.0, 3.0], [7.0, 0.0, 1.0]])  # duplicates summed
    assert p.nnz == 4 and p.X.has_sorted_indices  # the explicit zero dropped
    for got, want in [(A.data, data), (A.indices, indices), (A.indptr, indptr), (y, [1.0, -1.0])]:
        np.testing.assert_array_equal(got, want)
    coo = sp.coo_matrix((data.copy(), (np.repeat([0, 1], 3), indices.copy())), shape=(2, 3))
    cdlab.Problem(coo, y)
    assert coo.nnz == 6 and np.array_equal(coo.data, data) and np.array_equal(coo.col, indices)


def test_user_arrays_not_modified():
    X, y = small_data()
    Xs = sp.csr_matrix(X)
    Xs.has_sorted_indices = False
    X0, y0, data0 = X.copy(), y.copy(), Xs.data.copy()
    p = cdlab.Problem(Xs, y, loss="squared", lam=0.1)
    p2 = cdlab.Problem(X, y, loss="squared", lam=0.1)
    res = cdlab.solve(p, method="sdca", max_passes=3)
    res.w[:] = 7.0
    p.X.data[:] = 0.0
    p2.y[:] = 0.0
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(Xs.data, data0)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("l1", [0.0, 0.05])
def test_gap_is_p_minus_d_and_nonnegative(loss, l1):
    X, y = small_data(1)
    p = cdlab.Problem(X, y, loss=loss, lam=0.1, l1=l1)
    rng = np.random.default_rng(2)
    for _ in range(5):
        w = rng.standard_normal(p.n_features)
        alpha = p.alpha_from_w(rng.standard_normal(p.n_features))  # inside the domain
        P, D, G = p.primal(w), p.dual(alpha), p.gap(w, alpha)
        assert D <= P
        assert G == pytest.approx(P - D, rel=1e-12, abs=1e-13)


def test_objectives_match_the_formulas():
    X, y = small_data(3)
    lam, l1 = 0.2, 0.03
    p = cdlab.Problem(X, y, loss="squared", lam=lam, l1=l1)
    w = np.linspace(-1, 1, p.n_features)
    n = len(y)
    assert p.primal(w) == pytest.approx(0.5 * np.mean((X @ w - y) ** 2) + lam / 2 * w @ w + l1 * np.abs(w).sum())
    alpha = np.linspace(-0.5, 0.5, n)
    v = X.T @ alpha / (lam * n)
    sv = soft_threshold(v, l1 / lam)
    assert p.dual(alpha) == pytest.approx(np.mean(alpha * y - alpha ** 2 / 2) - lam / 2 * sv @ sv)
    # α(w) = −φ'(Xw) and, for the logistic loss, lies strictly inside b ∈ (0, 1)
    q = cdlab.Problem(X, y, loss="logistic", lam=lam)
    b = q.alpha_from_w(w) * y
    np.testing.assert_allclose(b, 1 / (1 + np.exp(y * (X @ w))))


def test_dual_outside_domain_is_minus_infinity():
    X, y = small_data()
    p = cdlab.Problem(X, y, loss="hinge", lam=0.1)
    alpha = np.zeros(len(y))
    alpha[0] = -2.0 * y[0]
    assert p.dual(alpha) == -np.inf


def test_zero_rows_and_columns_are_handled():
    X, y = small_data(4, n=40, d=10)
    X[3] = 0.0
    X[:, 5] = 0.0
    for loss in LOSSES:
        p = cdlab.Problem(X, y, loss=loss, lam=0.1)
        res = cdlab.solve(p, method="sdca", tol=1e-9, max_passes=2000)
        assert res.converged, (loss, res)
        assert res.w[5] == 0.0
        assert np.isfinite(res.trace[["primal", "dual", "gap"]].to_numpy()).all()


def test_content_hash_changes_with_objective_and_data():
    X, y = small_data()
    a = cdlab.Problem(X, y, lam=0.1)
    assert a.content_hash() == cdlab.Problem(X.copy(), y.copy(), lam=0.1).content_hash()
    assert a.content_hash() != cdlab.Problem(X, y, lam=0.2).content_hash()
    X2 = X.copy()
    X2[0, 0] += 1e-9
    assert a.content_hash() != cdlab.Problem(X2, y, lam=0.1).content_hash()
    assert a.with_params(lam=0.2).content_hash() == cdlab.Problem(X, y, lam=0.2).content_hash()
    with pytest.raises(ValueError, match="labels"):
        cdlab.Problem(X, X[:, 0], loss="squared").with_params(loss="logistic")
