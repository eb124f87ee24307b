"""Problem: validation, objectives, the gap as a certificate, no in-place changes."""
import numpy as np
import pytest
import scipy.sparse as sp

import cdlab
from cdlab.data import make_synthetic
from cdlab.problem import default_max_bytes, problem_bytes, soft_threshold
from _helpers import check_certified, synthetic_problem

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


def _malformed_matrices():
    """(matrix, message) pairs: structures scipy builds without checking (check=False
    or direct attribute writes), each of which made kernels read out of bounds."""
    data = np.array([1.0, 2.0, 3.0])
    out_of_range = sp.csr_matrix((data, [0, 5, 1], [0, 2, 3]), shape=(2, 3))  # the reproducer
    decreasing = sp.csr_matrix((data, [0, 1, 2], [0, 2, 3]), shape=(2, 3))
    decreasing.indptr = np.array([0, 3, 2], dtype=np.int32)
    nonzero_start = sp.csr_matrix((data, [0, 1, 2], [0, 2, 3]), shape=(2, 3))
    nonzero_start.indptr = np.array([1, 2, 3], dtype=np.int32)
    short_end = sp.csr_matrix((data, [0, 1, 2], [0, 2, 3]), shape=(2, 3))
    short_end.indptr = np.array([0, 1, 2], dtype=np.int32)
    negative = sp.csr_matrix((data, [0, -1, 2], [0, 2, 3]), shape=(2, 3))
    csc = sp.csc_matrix((data, [0, 7, 1], [0, 2, 3, 3]), shape=(2, 3))
    coo = sp.coo_matrix((data, ([0, 1, 1], [0, 1, 2])), shape=(2, 3))
    coo.row = np.array([0, 4, 1], dtype=np.int32)
    return [(out_of_range, r"CSR .*indices\[1\] = 5 is out of range \[0, 3\) \(the matrix has 3 columns\), in row 0"),
            (decreasing, r"indptr decreases at row 1: indptr\[1\] = 3 > indptr\[2\] = 2"),
            (nonzero_start, r"indptr\[0\] = 1, must be 0"),
            (short_end, r"indptr\[-1\] = 2, indices has 3 entries and data 3"),
            (negative, r"indices\[1\] = -1 is out of range"),
            (csc, r"CSC .*indices\[1\] = 7 is out of range \[0, 2\) \(the matrix has 2 rows\), in column 0"),
            (coo, r"COO .*row\[1\] = 4 is out of range \[0, 2\)")]


@pytest.mark.parametrize("X, match", _malformed_matrices())
def test_malformed_sparse_structure_is_refused_before_any_kernel(X, match):
    """Issue 17 H2: scipy does not check indices at construction; Problem did not
    either, and SDCA then read out of bounds (garbage, heap corruption, segfault)."""
    before = [np.array(a, copy=True) for a in (X.data, getattr(X, "indices", X.data), getattr(X, "indptr", X.data))]
    with pytest.raises(ValueError, match=match):
        cdlab.Problem(X, np.array([1.0, -1.0]))
    after = [X.data, getattr(X, "indices", X.data), getattr(X, "indptr", X.data)]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)


def test_memory_budget_is_checked_before_allocating():
    """Issue 17 H1: two nonzeros in 10⁹ columns made X.tocsc() allocate GiBs."""
    X = sp.coo_matrix(([1.0, 1.0], ([0, 1], [10 ** 9 - 1, 0])), shape=(2, 10 ** 9))
    with pytest.raises(ValueError, match=r"X of shape \(2, 1000000000\) would need about 59.6 GiB "
                                         r"\(2 nonzeros × 48 B \+ \(2 rows \+ 1000000000 columns\) × 64 B\), "
                                         r"more than max_bytes=4 GiB; most of its 1000000000 columns hold no nonzero"):
        cdlab.Problem(X, np.array([1.0, -1.0]), max_bytes=4 * 2 ** 30)
    X, y = small_data()
    need = problem_bytes(*X.shape, np.count_nonzero(X))
    assert cdlab.Problem(X, y, max_bytes=need).max_bytes == need
    with pytest.raises(ValueError, match="more than max_bytes"):
        cdlab.Problem(X, y, max_bytes=need - 1)
    with pytest.raises(ValueError, match="float64 copy of the dense X"):
        cdlab.Problem(X.astype(np.float32), y, max_bytes=need)  # the conversion counts too
    assert cdlab.Problem(X, y).max_bytes == default_max_bytes() <= 4 * 2 ** 30
    for bad in (0, -1.0, "1e9", np.nan):
        with pytest.raises(ValueError, match="max_bytes"):
            cdlab.Problem(X, y, max_bytes=bad)


def test_object_arrays_and_mixed_dataframes_are_accepted_as_scikit_learn_does():
    import pandas as pd

    X, y = small_data(n=12, d=3)
    X = np.round(X, 1)
    want = cdlab.Problem(X, y)
    df = pd.DataFrame({"a": X[:, 0], "b": (X[:, 1] * 10).astype(int), "c": X[:, 2]})
    mixed = pd.DataFrame({"i": [1, 0, 2, 0], "f": [0.5, 1.5, 0.0, 2.0], "b": [True, False, True, True]})
    for Xin, yin in [(X.astype(object), y.astype(object)), (df, pd.Series(y, dtype=object)),
                     (X.tolist(), [int(v) for v in y])]:
        p = cdlab.Problem(Xin, yin)
        np.testing.assert_array_equal(p.X.toarray(), np.asarray(Xin, dtype=float))
        np.testing.assert_array_equal(p.y, want.y)
    p = cdlab.Problem(mixed, np.array([1, -1, 1, -1], dtype=object))
    np.testing.assert_array_equal(p.X.toarray(), [[1, 0.5, 1], [0, 1.5, 0], [2, 0, 1], [0, 2, 1]])
    assert mixed["b"].dtype == bool and mixed["i"].tolist() == [1, 0, 2, 0]  # input untouched


@pytest.mark.parametrize("X, y, match", [
    ("frame_str", [1, -1], r"X must hold real numbers; found 'x' \(str\) at row 0, column 1 \('b'\)"),
    ("frame_na", [1, -1], r"found <NA> \(a missing value\) at row 1, column 1 \('b'\)"),
    (np.array([[1.0, None]], dtype=object), [1], r"found None \(a missing value\) at row 0, column 1"),
    (np.array([[1.0, 1j]], dtype=object), [1], r"found 1j \(complex\) at row 0, column 1"),
    (np.ones((2, 2)), np.array([1, "a"], dtype=object), r"y must hold real numbers; found 'a' \(str\) at index 1"),
])
def test_object_input_that_is_not_numbers_is_named(X, y, match):
    import pandas as pd

    if isinstance(X, str) and X == "frame_str":
        X = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    elif isinstance(X, str) and X == "frame_na":
        X = pd.DataFrame({"a": [1, 2], "b": pd.array([1, None], dtype="Int64")})
    with pytest.raises(ValueError, match=match):
        cdlab.Problem(X, y)


@pytest.mark.parametrize("X, lam, match", [
    (np.ones((2, 2)), 1e-320, r"lam=1e-320 is too small for this data: .*‖x_i‖²/\(λn\)"),
    (np.full((2, 2), 1e200), 1e-4, "too large in scale for float64: the squared norm of row 0 overflows"),
])
def test_scales_that_overflow_are_refused_with_the_reason(X, lam, match):
    with pytest.raises(ValueError, match=match):
        cdlab.Problem(X, np.array([1.0, -1.0]), lam=lam)
    if lam < 1e-300:
        with pytest.raises(ValueError, match="too small for this data"):
            cdlab.Problem(X, np.array([1.0, -1.0]), lam=1.0).with_params(lam=lam)


def test_method_must_be_one_name():
    X, y = small_data()
    with pytest.raises(TypeError, match=r"method must be the name of one method \(a str\), got list \['sdca'\]"):
        cdlab.solve(cdlab.Problem(X, y), method=["sdca"])


def _has_csc(problem):
    """Whether the data's CSC copy has been built (Data.X_csc is built on first use and kept)."""
    return "X_csc" in vars(problem.data)


ROW_METHODS = sorted(name for name, spec in cdlab.METHODS.items() if spec.axis != "features")
COLUMN_METHODS = sorted(name for name, spec in cdlab.METHODS.items() if spec.axis == "features")


@pytest.mark.parametrize("method", ROW_METHODS)
def test_methods_that_read_rows_never_build_the_csc_copy(method):
    X, y = make_synthetic(60, 12, seed=0, normalize="rows")
    problem = cdlab.Problem(X, y, loss="logistic", lam=0.05)
    assert not _has_csc(problem)  # building a Problem does not
    res = cdlab.solve(problem, method=method, max_passes=3, seed=0)
    assert np.isfinite(res.trace.gap.iloc[-1])  # certified at every checkpoint, from rows only
    problem.w_from_alpha(res.alpha)
    assert not _has_csc(problem)


@pytest.mark.parametrize("method", COLUMN_METHODS)
def test_methods_that_read_columns_build_it_once_and_certify(method):
    problem = synthetic_problem("logistic", n=80, d=20, seed=1)
    assert not _has_csc(problem)
    check_certified(problem, method, tol=1e-9)
    built = problem.data.X_csc
    assert _has_csc(problem) and problem.X_csc is built and problem.with_params(lam=1.0).X_csc is built
    np.testing.assert_array_equal(built.toarray(), problem.X.toarray())


@pytest.mark.parametrize("l1", [0.0, 0.01])
def test_strided_vectors_give_the_certificates_bits(l1):
    """P, D and the gap of strided views (columns of a matrix, a read-only array) are those of contiguous
    copies bit for bit, and so a checkpoint's: the vectorised sums take one layout (cdlab._vector)."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((300, 257))  # full rows of 257 entries: margins by the vectorised full_dot
    p = cdlab.Problem(X, np.where(X[:, 0] > 0, 1.0, -1.0), loss="logistic", lam=0.01, l1=l1)
    W, A = rng.standard_normal((257, 3)), rng.uniform(-0.9, 0.9, (300, 3)) * p.y[:, None]
    W_given = W.copy()
    w, alpha = W[:, 1], A[:, 2]
    assert not w.flags.c_contiguous and not alpha.flags.c_contiguous
    v = np.asfortranarray(np.stack([p.v_from_alpha(alpha)] * 2, axis=1))[:, 0]
    frozen = w.copy()
    frozen.flags.writeable = False
    for wv in (w, frozen):
        assert p.primal(wv) == p.primal(w.copy())
        assert p.gap(wv, alpha, v=v) == p.gap(w.copy(), alpha.copy(), v=v.copy())
    assert p.dual(alpha, v=v) == p.dual(alpha.copy(), v=v.copy())
    z = p.margins(w.copy())
    assert p.certificates(w, alpha, z=z, v=v) == p.certificates(w.copy(), alpha.copy(), z=z, v=v.copy()) == (
        p.primal(w), p.dual(alpha, v=v), p.gap(w, alpha, v=v))
    assert np.array_equal(W, W_given) and not w.flags.c_contiguous  # the user's arrays untouched


def test_without_lam_there_is_no_dual_and_no_gap():
    """At λ = 0, P is defined and D and the gap are refused with the reason, also given v."""
    X = np.random.default_rng(0).standard_normal((20, 5))
    p = cdlab.Problem(X, np.sign(X[:, 0]), loss="squared", lam=0.0)
    w, alpha = np.ones(5), np.zeros(20)
    assert np.isfinite(p.primal(w))
    for call in (lambda: p.dual(alpha), lambda: p.dual(alpha, v=np.zeros(5)),
                 lambda: p.gap(w, alpha, v=np.zeros(5))):
        with pytest.raises(ValueError, match="lam > 0"):
            call()
