"""The kernel toolkit (cdlab/solvers/_kernels.py): the one-pass sweep behind the
driver's checkpoints gives Xw, Xᵀα and α(w) bit for bit as Problem does (Xw as
Problem.margins sums it: scipy's product where no row is read as full; Xᵀα as
scipy's), so the trace's certificates are exactly Problem.primal, .dual and .gap."""
import functools
import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import cdlab
from cdlab.regularizer import regularizer_sums
from cdlab.solvers import _kernels
from cdlab.solvers._kernels import (certificate_sweep, full_rows, row_arrays, row_axpy, row_dot, sparse_axpy,
                                     sparse_dot)
from independent import dual_value, neg_derivative, primal_value

LOSSES = ["squared", "logistic", "hinge", "smoothed_hinge", "absolute"]


def _problem(loss, l1, seed=0):
    rng = np.random.default_rng(seed)
    keep = np.ones(40)
    keep[5] = 0.0  # an empty row
    X = sp.csr_matrix(sp.diags(keep) @ sp.random(40, 25, density=0.3, random_state=seed) * 3.0)
    X.eliminate_zeros()
    y = np.where(rng.standard_normal(40) >= 0, 1.0, -1.0)
    return cdlab.Problem(X, y, loss=loss, lam=0.05, l1=l1)


def _sweep(p, w, alpha, from_w):
    z, xt_alpha = np.full(p.n_samples, np.nan), np.zeros(p.n_features)
    certificate_sweep(*p.csr_arrays, p.y, p.loss_code, p.s, w, alpha, from_w, z, xt_alpha, full_rows(p))
    return z, xt_alpha


def test_kernel_arrays_are_unsigned_views_of_x():
    """The kernels read X through unsigned views of its own index arrays: no copy, same bits."""
    p = _problem("logistic", 0.0)
    for M, arrays in ((p.X, p.csr_arrays), (p.X_csc, p.csc_arrays)):
        indptr, indices, data = arrays
        assert indptr.dtype.kind == indices.dtype.kind == "u"
        assert np.shares_memory(indptr, M.indptr) and np.shares_memory(indices, M.indices) and data is M.data
        np.testing.assert_array_equal(indices, M.indices)


@pytest.mark.parametrize("method, options", [("sdca", {}), ("sdca", {"shrinking": True}), ("primal_cd", {})])
def test_64_bit_indices_run_as_32_bit(method, options):
    """X with int64 index arrays (scipy's choice beyond 2³¹ nonzeros) gives unsigned 64-bit views: the run
    is bit for bit the one on int32 indices, its work counted as an integer."""
    p = _problem("smoothed_hinge", 0.0)
    p64 = cdlab.Problem(p.X, p.y, loss="smoothed_hinge", lam=0.05)
    for M in (p64.X, p64.X_csc):  # cdlab narrows indices that fit 32 bits: widened here by hand
        M.indptr, M.indices = M.indptr.astype(np.int64), M.indices.astype(np.int64)
    assert p64.csr_arrays[1].dtype == p64.csc_arrays[1].dtype == np.uint64
    sampling = "permutation" if options.get("shrinking") else "uniform"
    runs = [cdlab.solve(q, method, sampling, tol=1e-10, max_passes=200, **options) for q in (p, p64)]
    np.testing.assert_array_equal(runs[0].w, runs[1].w)
    assert runs[0].trace.nnz_touched.tolist() == runs[1].trace.nnz_touched.tolist()
    assert all(isinstance(v, int) for v in runs[1].trace.nnz_touched.tolist())


@pytest.mark.parametrize("loss", LOSSES)
def test_sweep_gives_scipys_products_bit_for_bit(loss):
    p = _problem(loss, 0.0)
    rng = np.random.default_rng(1)
    w = rng.standard_normal(p.n_features)
    alpha = p.alpha_from_w(rng.standard_normal(p.n_features))
    z, xt_alpha = _sweep(p, w, alpha, False)
    np.testing.assert_array_equal(z, p.X @ w)
    np.testing.assert_array_equal(xt_alpha / (p.lam * p.n_samples), p.v_from_alpha(alpha))


@pytest.mark.parametrize("loss", LOSSES)
def test_sweep_fills_in_alpha_of_w(loss):
    p = _problem(loss, 0.0, seed=2)
    w = np.random.default_rng(3).standard_normal(p.n_features)
    alpha = np.full(p.n_samples, np.nan)
    _sweep(p, w, alpha, True)
    np.testing.assert_array_equal(alpha, p.alpha_from_w(w))


@pytest.mark.parametrize("method", ["sdca", "primal_cd", "spdc"])
def test_a_start_at_zero_is_certified_without_a_pass_only_where_alpha_is_zero(monkeypatch, method):
    """At w = 0 and α = 0 (a dual or primal-dual method's start) Xw = Xᵀα = 0: the start's checkpoint reads no X
    and is Problem's certificate bit for bit; a primal method's α = α(0) ≠ 0 still needs the sweep."""
    from cdlab.solvers import driver

    calls = []
    sweep = driver.certificate_sweep
    monkeypatch.setattr(driver, "certificate_sweep", lambda *args: calls.append(args[6].any()) or sweep(*args))
    p = _problem("logistic", 0.0)
    res = cdlab.solve(p, method=method, max_passes=3, tol=0.0, seed=0)
    first = res.trace.iloc[0]
    zero_w, zero_alpha = np.zeros(p.n_features), np.zeros(p.n_samples)
    if cdlab.METHODS[method].kind == "primal":
        assert len(calls) == len(res.trace) and not calls[0]  # the start's sweep, at w = 0
        return
    assert len(calls) == len(res.trace) - 1 and all(calls)  # every checkpoint but the start's
    assert first["primal"] == p.primal(zero_w) and first["dual"] == p.dual(zero_alpha)
    assert first["gap"] == p.gap(zero_w, zero_alpha)


@pytest.mark.parametrize("method", ["sdca", "primal_cd", "spdc"])
@pytest.mark.parametrize("l1", [0.0, 0.02])
def test_trace_rows_are_the_problems_certificates(method, l1):
    """A checkpoint's P, D and gap are Problem's, bit for bit; at a primal method's α = −φ'(Xw), D and the gap
    within rounding (``losses.certificate_sums_from_w``)."""
    p = _problem("logistic", l1)
    res = cdlab.solve(p, method=method, max_passes=3, tol=0.0, seed=0)
    last = res.trace.iloc[-1]
    assert last.gap > 0
    assert last["primal"] == p.primal(res.w)
    if cdlab.METHODS[method].kind == "primal":
        assert last["dual"] == pytest.approx(p.dual(res.alpha), rel=1e-13)
        assert last["gap"] == pytest.approx(p.gap(res.w, res.alpha), rel=1e-9)
        return
    assert last["dual"] == p.dual(res.alpha)
    assert last["gap"] == p.gap(res.w, res.alpha)


def test_power_tables_equal_the_closed_form_inside_and_beyond_them():
    from cdlab.solvers._kernels import (POWER_TABLE_MAX, affine_constants, affine_power_tables, affine_powers,
                                        power_table, tabled_affine_powers, toward_fixed_point)
    for rho in (1e-12, 1e-3, 0.5):
        a, log_a = affine_constants(rho)
        pk, qk = affine_power_tables(a, log_a, rho, 40)
        assert pk.shape == (41,)
        for k in (0, 1, 17, 40, 41, 1000):  # the last two beyond the table
            assert tabled_affine_powers(pk, qk, a, log_a, rho, k) == affine_powers(a, log_a, rho, k)
        powers = power_table(log_a, 40)
        for k in (0, 3, 40, 41, 500):
            assert toward_fixed_point(2.0, k, 0.5, log_a, powers) == toward_fixed_point(2.0, k, 0.5, log_a, powers[:0])
    assert power_table(-1e-3, 10 * POWER_TABLE_MAX).shape == (POWER_TABLE_MAX + 1,)


# methods of each kind: dual (with and without L1), primal (α = α(w) from the sweep), primal-dual
CHECKPOINT_RUNS = [("sdca", loss, l1) for loss in LOSSES for l1 in (0.0, 0.02)] + [
    ("primal_cd", "logistic", 0.02), ("saga", "squared", 0.0), ("spdc", "smoothed_hinge", 0.0)]


@pytest.mark.parametrize("method,loss,l1", CHECKPOINT_RUNS)
def test_checkpoints_equal_an_independent_numpy_certificate(method, loss, l1):
    """The trace's P, D and gap after 1, 2 and 4 passes are P(w), D(α) and P − D written out in numpy
    (tests/independent.py) at the returned w and α; a primal method's α is −φ'(Xw)."""
    p = _problem(loss, l1, seed=4)
    X = p.X.toarray()
    for passes in (1, 2, 4):
        res = cdlab.solve(p, method=method, max_passes=passes, tol=0.0, seed=0)
        last = res.trace.iloc[-1]
        if cdlab.METHODS[method].kind == "primal":
            np.testing.assert_allclose(res.alpha, neg_derivative(loss, X @ res.w, p.y), rtol=1e-13, atol=1e-15)
        primal = primal_value(X, p.y, loss, p.lam, l1, res.w)
        dual = dual_value(X, p.y, loss, p.lam, l1, res.alpha)
        scale = max(1.0, abs(primal))
        assert abs(last.primal - primal) <= 1e-13 * scale, (last.primal, primal)
        assert abs(last.dual - dual) <= 1e-13 * scale, (last.dual, dual)
        assert abs(last.gap - (primal - dual)) <= 1e-12 * scale, (last.gap, primal - dual)
        assert last.gap > 0


def _within_sum_rounding(got, terms):
    """|got − Σ terms| within the worst-case bound of a floating-point sum in any order, n·ε·Σ|terms|
    (Higham 2002, §4.2), the exact sum by math.fsum."""
    import math

    terms = np.asarray(terms, dtype=float)
    return abs(got - math.fsum(terms)) <= terms.size * np.finfo(float).eps * np.abs(terms).sum()


@pytest.mark.parametrize("n", [0, 1, 7, 50_000])
def test_regularizer_sums_are_the_sums_of_their_terms(n):
    """The numba sums Problem uses (cdlab/regularizer.py, vectorised) against each sum's terms, for t = 0 and
    t > 0, on vectors with zeros, entries on both sides of ±t, and a long one."""
    rng = np.random.default_rng(n)
    w, v = rng.standard_normal(n), rng.standard_normal(n)
    w[::3] = 0.0
    for t in (0.0, 0.5):
        sv = np.sign(v) * np.maximum(np.abs(v) - t, 0.0)
        fy = (0.5 * (w - v) ** 2 if t == 0 else 0.5 * w * w + t * np.abs(w) + 0.5 * sv * sv - v * w)
        sq, ab, st, fy_sum = regularizer_sums(w, v, t)
        assert _within_sum_rounding(sq, w * w) and _within_sum_rounding(ab, np.abs(w))
        assert _within_sum_rounding(st, sv * sv) and _within_sum_rounding(fy_sum, np.maximum(fy, 0.0))


def test_regularizer_sums_keep_nan_and_clip_rounding():
    """A NaN entry gives a NaN sum, as numpy's does; a Fenchel–Young term below zero (rounding) counts as 0."""
    for t in (0.0, 0.5):
        assert np.isnan(regularizer_sums(np.array([1.0, np.nan, 2.0]), np.array([np.nan, 2.0, 1.0]), t)).all()
    # at v = w + t·sign(w) each term is 0 mathematically; rounding may leave it slightly negative, clipped
    w = np.random.default_rng(0).standard_normal(1000)
    v = w + 0.3 * np.sign(w)
    terms = [regularizer_sums(w[j:j + 1], v[j:j + 1], 0.3)[3] for j in range(1000)]
    assert min(terms) >= 0.0 and _within_sum_rounding(regularizer_sums(w, v, 0.3)[3], terms)


def test_the_certificates_are_bit_for_bit_problems_primal_dual_and_gap():
    """``Problem.certificates`` (a checkpoint's one pass) is ``primal``, ``dual`` and ``gap`` exactly: each
    reads its regulariser sum from the one loop, ``regularizer_sums``."""
    for loss, l1 in itertools.product(LOSSES, (0.0, 0.02)):
        p = _problem(loss, l1, seed=2)
        res = cdlab.solve(p, "sdca", max_passes=1, tol=0.0, seed=0)
        z, v_alpha = p.X @ res.w, p.v_from_alpha(res.alpha)
        assert p.certificates(res.w, res.alpha, z=z, v=v_alpha) == (
            p.primal(res.w, z=z), p.dual(res.alpha, v=v_alpha), p.gap(res.w, res.alpha, z=z, v=v_alpha))


@pytest.mark.parametrize("n", [0, 1, 50_000])
def test_dense_dot_equals_numpy(n):
    from cdlab.solvers._kernels import dense_dot
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    assert dense_dot(a, b) == pytest.approx(a @ b, rel=1e-12, abs=1e-12 * np.sqrt(n + 1))
    assert dense_dot(a, a) == pytest.approx(a @ a, rel=1e-13, abs=1e-300)


@pytest.mark.parametrize("method, loss, options", [("sdca", "logistic", {}), ("sdca", "hinge", {"shrinking": True}),
                                                   ("appa", "squared", {}), ("newton", "logistic", {})])
def test_full_row_kernels_run_as_the_sparse_ones(monkeypatch, method, loss, options):
    """On rows mostly full (``Data.full_rows_share``) the kernels read rows by ``row_dot``/``row_axpy``, a full
    row's dot product in one vectorised sum (``full_dot``): a run is the one of the sparse kernels (forced by a
    share no data reaches) up to rounding, both certified, and its trace's certificates are bit for bit
    Problem's, whose margins sum full rows alike (``row_margins``)."""
    from cdlab.solvers import _kernels

    rng = np.random.default_rng(3)
    X = rng.standard_normal((200, _kernels.FULL_ROW_MIN_LENGTH)) / 4.0
    X[rng.random(X.shape) < 0.002] = 0.0  # a few rows not full
    y = np.where(rng.standard_normal(200) >= 0, 1.0, -1.0)
    p = cdlab.Problem(X, y, loss=loss, lam=0.1)
    assert 0.5 <= p.data.full_rows_share < 1.0
    assert _kernels.full_rows(p) is True
    assert _kernels.full_rows(cdlab.Problem(X[:, 1:], y, loss=loss, lam=0.1)) is None  # rows too short
    sampling = "permutation" if options.get("shrinking") else "uniform"
    full = cdlab.solve(p, method, sampling, tol=1e-12, max_passes=300, **options)
    monkeypatch.setattr(_kernels, "FULL_ROWS_SHARE", 2.0)
    assert _kernels.full_rows(p) is None
    sparse = cdlab.solve(p, method, sampling, tol=1e-12, max_passes=300, **options)
    assert full.status == sparse.status == "converged"
    np.testing.assert_allclose(full.w, sparse.w, rtol=1e-9, atol=1e-11)
    monkeypatch.undo()
    last = full.trace.iloc[-1]
    assert p.primal(full.w) == last.primal and p.dual(full.alpha) == last.dual
    assert np.array_equal(p.margins(full.w), _sweep(p, full.w, full.alpha, False)[0])
    np.testing.assert_allclose(p.margins(full.w), p.X @ full.w, rtol=1e-12, atol=1e-13)


def test_row_primitives_read_a_full_row_without_its_indices():
    """A row of len(w) entries is read as the dense row 0..d − 1 (its indices are not read: garbage here), a
    shorter one through its indices, as ``sparse_dot``/``sparse_axpy`` do."""
    data, w = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 10.0, 100.0])
    garbage = np.zeros(4, dtype=np.uint32)
    assert row_dot(garbage, data, np.uint32(0), np.uint32(3), w) == 321.0
    out = np.zeros(3)
    row_axpy(garbage, data, np.uint32(1), np.uint32(4), 2.0, out)
    np.testing.assert_array_equal(out, [4.0, 6.0, 8.0])
    indices = np.array([2, 0, 0, 0], dtype=np.uint32)
    assert row_dot(indices, data, np.uint32(0), np.uint32(2), w) == sparse_dot(indices, data, 0, 2, w) == 102.0
    out, ref = np.zeros(3), np.zeros(3)
    row_axpy(indices, data, np.uint32(0), np.uint32(2), 1.0, out)
    sparse_axpy(indices, data, 0, 2, 1.0, ref)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("d", [1, 3, 4, 5, 8, 11, 100, 1001])
def test_full_dot_is_the_dot_product_and_row_dots_full_row(d):
    """``full_dot`` (a vectorised sum, ``VECTOR_SUM``): within the worst-case rounding bound of a sum of d
    products, d·ε·Σ|x_j w_j| (Higham 2002, §3.1), of the exact dot product, read from ``start`` on; ``row_dot``
    sums a full row by it, bit for bit (the kernels' readers: ``test_full_row_kernels_run_as_the_sparse_ones``
    and the parallel sweep's test); a NaN or an infinity propagates."""
    from cdlab.solvers._kernels import full_dot

    rng = np.random.default_rng(d)
    values, w = rng.standard_normal(d + 7) * 10.0 ** rng.integers(-3, 4, d + 7), rng.standard_normal(d)
    row = values[7:]
    got = full_dot(values, 7, w)
    assert _within_sum_rounding(got, row * w)
    garbage = np.zeros(d + 7, dtype=np.uint32)  # a full row's indices are not read
    assert row_dot(garbage, values, np.uint32(7), np.uint32(7 + d), w) == got
    for bad in (np.nan, np.inf):
        spoilt = values.copy()
        spoilt[7 + d // 2] = bad
        assert not np.isfinite(full_dot(spoilt, 7, w))


def _recompiled(kernel, **constants):
    """``kernel`` compiled again with some of its module's constants replaced, bounds checks on."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from prefetch_bench import recompiled

    return recompiled(kernel, boundscheck=True, **constants)


def test_prefetch_is_a_hint_that_changes_no_value():
    from numba import njit

    from cdlab.solvers._kernels import prefetch, prefetch_full_row, prefetch_row, prefetch_whole_row

    @njit
    def touch_all(indptr, indices, data, values):
        for i in range(values.shape[0] + 1):  # one past the end too: a prefetch never faults
            prefetch(values, i)
        for i in range(indptr.shape[0] - 1):
            prefetch_row(indptr, indices, data, i)
            prefetch_whole_row(indptr, indices, data, i, True)
        prefetch_full_row(data, 0, data.shape[0])
        return values.sum()

    keep = np.ones(30)
    keep[3] = 0.0  # an empty row
    X = sp.csr_matrix(sp.diags(keep) @ sp.random(30, 50, density=0.6, random_state=0))  # rows beyond a cache line
    X.eliminate_zeros()
    values = np.arange(7.0)
    before = (X.indptr.copy(), X.indices.copy(), X.data.copy())
    assert touch_all(X.indptr, X.indices, X.data, values) == 21.0
    assert all(np.array_equal(a, b) for a, b in zip(before, (X.indptr, X.indices, X.data)))
    assert any("@llvm.prefetch" in text for text in touch_all.inspect_llvm().values())  # emitted, not dropped


def test_prefetch_whole_row_reaches_every_line_of_the_row_and_no_other():
    """``prefetch_whole_row``, run as Python with ``prefetch`` recording the 64-byte lines it is handed: every line
    of row i's data, and with ``with_indices`` of its indices, and none outside the row; nothing for an empty row.
    Rows of 0 to 150 entries, starting at every offset within a line."""
    import types

    from cdlab.solvers import _kernels

    hits = []

    def record(values, index):
        hits.append((values.ctypes.data, (values.ctypes.data + int(index) * values.itemsize) // 64))

    def as_python(helper, **replaced):
        f = helper.py_func
        return types.FunctionType(f.__code__, dict(f.__globals__, **replaced), f.__name__)

    whole = as_python(_kernels.prefetch_whole_row, prefetch_full_row=as_python(_kernels.prefetch_full_row,
                                                                               prefetch=record))
    lengths = [0, 1, 2, 7, 8, 9, 15, 16, 17, 33, 100, 150, 0, 3] + list(range(1, 18))
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.uint32)
    data = np.random.default_rng(0).standard_normal(int(indptr[-1]))
    indices = np.arange(indptr[-1], dtype=np.uint32)
    for i in range(len(lengths)):
        start, end = int(indptr[i]), int(indptr[i + 1])
        for with_indices in (True, False):
            hits.clear()
            whole(indptr, indices, data, i, with_indices)
            wanted = {(a.ctypes.data, (a.ctypes.data + k * a.itemsize) // 64)
                      for a in ((data, indices) if with_indices else (data,)) for k in range(start, end)}
            assert set(hits) == wanted, (i, with_indices)

    # and dual_cd_chunk takes it for its first whole_steps steps: the rows ahead whole there, their first lines after
    from cdlab.solvers import dual_cd

    rng = np.random.default_rng(4)
    X = sp.random(40, 300, density=0.2, random_state=4, format="csr")  # rows of ~60 entries: 8 lines of data
    p = cdlab.Problem(X, np.where(rng.standard_normal(40) >= 0, 1.0, -1.0), loss="logistic", lam=0.05)
    ip, ix, dx = p.csr_arrays
    order = rng.integers(0, p.n_samples, 30)
    first = as_python(_kernels.prefetch_row, prefetch=record)

    def lines(a, ks):
        return {(a.ctypes.data, (a.ctypes.data + int(k) * a.itemsize) // 64) for k in ks}

    def whole_rows(rows):
        return set().union(set(), *(lines(dx, range(ip[i], ip[i + 1])) | lines(ix, range(ip[i], ip[i + 1]))
                                    for i in rows))

    def first_lines(rows):  # prefetch_row's
        return set().union(set(), *(lines(dx, [ip[i], ip[i] + _kernels._DATA_LINE])
                                    | lines(ix, [ip[i], ip[i] + _kernels._INDEX_LINE]) for i in rows))

    assert first_lines(order[2:]) < whole_rows(order[2:]) and (np.diff(ip) > _kernels._INDEX_LINE).all()
    chunk = as_python(dual_cd.dual_cd_chunk, prefetch=record, prefetch_row=first, prefetch_whole_row=whole)
    # the row ahead of step k is order[k + 2]: whole for k < whole_steps
    for whole_steps in (len(order), 0, 11):
        hits.clear()
        chunk(ip, ix, dx, p.y, p.loss_code, p.s, p.lam * p.n_samples, 0.0, p.row_norms_sq, np.zeros(p.n_samples),
              np.zeros(p.n_features), np.zeros(p.n_features), order, np.ones(p.n_samples), dual_cd.EXACT,
              dual_cd.NO_LOGIT, None, 2, whole_steps)
        split = 2 + min(whole_steps, len(order) - 2)
        wanted = whole_rows(order[2:split]) | first_lines(order[split:])
        assert {hit for hit in hits if hit[0] in (dx.ctypes.data, ix.ctypes.data)} == wanted, whole_steps


def test_the_full_row_sweeps_give_the_same_bits_without_their_prefetches():
    """The row-order sweeps over full rows prefetch the row FULL_ROW_AHEAD ahead (``prefetch_full_row_ahead``,
    ``prefetch_dense_row_ahead``): compiled with bounds checks, with and without those prefetches (the helpers
    replaced by no-ops, which their LLVM IR confirms), each gives the same bits, on rows mostly full (one short
    row, one empty, the last rows full) and beyond the cache (below it they do not prefetch)."""
    from numba import njit

    from cdlab.solvers import _kernels, _newton_cg

    rng = np.random.default_rng(3)
    d = 130  # rows longer than FULL_ROW_MIN_LENGTH and than a cache line
    n = _kernels.CACHE_BYTES // (_kernels.NNZ_BYTES * d) + 8  # X beyond the cache, where the sweeps prefetch
    dense = rng.standard_normal((n, d))
    dense[4, ::3] = 0.0  # a short row
    dense[7] = 0.0  # an empty row
    X = sp.csr_matrix(dense)
    y = np.where(rng.standard_normal(n) >= 0, 1.0, -1.0)
    p = cdlab.Problem(X, y, loss="logistic", lam=0.1)
    assert full_rows(p) is not None and _kernels.beyond_cache(p)
    indptr, indices, data = p.csr_arrays
    full = np.ascontiguousarray(p.X.toarray())  # every row as a full one, for the dense paths
    w, v = rng.standard_normal(d), rng.standard_normal(d)
    deriv, curv, alpha = rng.standard_normal(n), rng.random(n), rng.standard_normal(n)

    noops = {"prefetch_full_row_ahead": njit(lambda indptr, data, i, hi, d: None),
             "prefetch_dense_row_ahead": njit(lambda flat, i, n, d: None)}
    calls = {
        _newton_cg.hessian_rows: lambda k: (lambda xv, q: (
            k(indptr, indices, data, full, curv, v, xv, q, 0, n), xv, q))(np.empty(n), np.zeros(d)),
        _newton_cg.jacobi_rows: lambda k: (lambda g, m: (
            k(indptr, indices, data, full, deriv, curv, g, m, 0, n), g, m))(np.zeros(d), np.zeros(d)),
        _newton_cg.certified_rows: lambda k: (lambda z, a, xa, c, m: (
            k(indptr, indices, data, y, p.loss_code, p.s, w, False, z, a, xa, c, m, True, 0, n), z, a, xa, c, m))(
            np.empty(n), np.empty(n), np.zeros(d), np.empty(n), np.zeros(d)),
        _kernels.certificate_rows: lambda k: (lambda z, xa: (
            k(indptr, indices, data, y, p.loss_code, p.s, w, alpha.copy(), False, z, xa, 0, n, True), z, xa))(
            np.empty(n), np.zeros(d)),
        _kernels.row_margins: lambda k: (lambda z: (k(indptr, indices, data, w, z, full_rows(p)), z))(np.empty(n)),
    }
    for kernel, call in calls.items():
        shipped, bare = _recompiled(kernel), _recompiled(kernel, **noops)
        shipped_out, bare_out = call(shipped), call(bare)
        for a, b in zip(shipped_out, bare_out):
            assert np.array_equal(np.asarray(a), np.asarray(b)), kernel.__name__
        # the no-ops took the helpers' place: the shipped build prefetches, the bare one does not
        assert any("@llvm.prefetch" in ir for ir in shipped.inspect_llvm().values()), kernel.__name__
        assert not any("@llvm.prefetch" in ir for ir in bare.inspect_llvm().values()), kernel.__name__


def test_whole_row_steps_are_every_step_beyond_the_cache_else_the_first_pass_left(monkeypatch):
    from types import SimpleNamespace

    from cdlab.solvers import _kernels

    beyond = SimpleNamespace(nnz=_kernels.CACHE_BYTES // _kernels.NNZ_BYTES + 1)
    cached = SimpleNamespace(nnz=10)
    assert _kernels.COLD_PASS_WHOLE
    assert _kernels.whole_row_steps(beyond, 50, 0) == _kernels.whole_row_steps(beyond, 50, 80) == 50
    assert [_kernels.whole_row_steps(cached, 50, left) for left in (80, 50, 30, 0, -20)] == [50, 50, 30, 0, 0]
    monkeypatch.setattr(_kernels, "COLD_PASS_WHOLE", False)
    assert _kernels.whole_row_steps(cached, 50, 80) == 0 and _kernels.whole_row_steps(beyond, 50, 0) == 50


def test_sdca_prefetches_whole_rows_over_its_first_pass_only(monkeypatch):
    """SDCA's chunks hand ``dual_cd_chunk`` whole_steps that cover the run's first n steps and none after (X in the
    cache), with and without the sampled gap estimate's one-pass chunks."""
    from cdlab.solvers import dual_cd

    p = _problem("logistic", 0.0)
    shipped, seen = dual_cd.dual_cd_chunk, []

    def spy(*args):
        seen.append((len(args[12]), args[-1]))
        return shipped(*args)

    monkeypatch.setattr(dual_cd, "dual_cd_chunk", spy)
    for eval_every in ("auto", 0.3):
        seen.clear()
        res = cdlab.solve(p, "sdca", sampling="permutation", tol=1e-10, eval_every=eval_every, seed=0)
        assert res.converged and len(seen) > 3
        steps = np.cumsum([0] + [n_steps for n_steps, _ in seen])
        wanted = [max(0, min(n_steps, p.n_samples - before)) for (n_steps, _), before in zip(seen, steps)]
        assert [whole for _, whole in seen] == wanted and sum(wanted) == p.n_samples, eval_every


def test_prefetch_ahead_is_on_for_smooth_losses_and_for_data_beyond_the_cache():
    from types import SimpleNamespace

    from cdlab.solvers._kernels import CACHE_BYTES, NNZ_BYTES, PREFETCH_AHEAD, prefetch_ahead

    beyond = CACHE_BYTES // NNZ_BYTES + 1
    assert prefetch_ahead(SimpleNamespace(is_smooth=True, nnz=10)) == PREFETCH_AHEAD > 0
    assert prefetch_ahead(SimpleNamespace(is_smooth=False, nnz=10)) == 0
    assert prefetch_ahead(SimpleNamespace(is_smooth=False, nnz=beyond)) == PREFETCH_AHEAD
    assert prefetch_ahead(cdlab.Problem(sp.eye(3, format="csr"), np.ones(3), loss="logistic", lam=1.0)) > 0


@functools.cache
def _bounds_checked_dual_cd_chunk():
    """``dual_cd_chunk`` compiled again with bounds checks, once for the module (a compile takes ~1 min)."""
    from cdlab.solvers.dual_cd import dual_cd_chunk

    return _recompiled(dual_cd_chunk)


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_dual_cd_chunk_gives_the_same_steps_with_and_without_prefetch(loss):
    """The same steps bit for bit with and without prefetch (of the rows' first lines, of whole rows, of both in
    turn), the logistic loss's with its logit cache (bounds checked too)."""
    from cdlab.solvers.dual_cd import EXACT, dual_cd_chunk, logit_cache

    p = _problem(loss, 0.0)
    order = np.random.default_rng(1).integers(0, p.n_samples, 500)
    runs = []
    checked = _bounds_checked_dual_cd_chunk()
    for kernel, ahead, whole_steps in ((dual_cd_chunk, 0, 0), (dual_cd_chunk, 2, 0), (dual_cd_chunk, 2, 260),
                                       (checked, 1, 500), (checked, 7, 500), (checked, 3, 100)):
        alpha, v, logit = np.zeros(p.n_samples), np.zeros(p.n_features), logit_cache(p, EXACT, 1)
        touched = kernel(*p.csr_arrays, p.y, p.loss_code, p.s, p.lam * p.n_samples, 0.0, p.row_norms_sq,
                         alpha, v, v, order, np.ones(p.n_samples), EXACT, logit, None, ahead, whole_steps)
        runs.append((touched, alpha, v))
    assert np.any(runs[0][1] != 0.0)
    for touched, alpha, v in runs[1:]:
        assert touched == runs[0][0] and np.array_equal(alpha, runs[0][1]) and np.array_equal(v, runs[0][2])


def test_the_logit_cache_gives_the_steps_of_the_log_within_rounding():
    """SDCA's logistic steps reading each coordinate's cached logit (``dual_cd.logit_cache``) are the steps computing
    log(b/(1 − b)) to rounding: 20 passes' α and v agree to 1e-12, and each coordinate's cache holds its logit
    (an empty row's step, α = −φ'(0), reads and writes none). Elsewhere no cache is kept."""
    from cdlab.solvers.dual_cd import EXACT, LINESEARCH, NO_LOGIT, dual_cd_chunk, logit_cache

    p = _problem("logistic", 0.0)
    assert logit_cache(p, LINESEARCH, 1) is NO_LOGIT and logit_cache(p, EXACT, 2) is NO_LOGIT
    assert logit_cache(_problem("hinge", 0.0), EXACT, 1) is NO_LOGIT
    order = np.concatenate([np.random.default_rng(k).permutation(p.n_samples) for k in range(20)])
    runs = []
    for logit in (logit_cache(p, EXACT, 1), NO_LOGIT):
        alpha, v = np.zeros(p.n_samples), np.zeros(p.n_features)
        dual_cd_chunk(*p.csr_arrays, p.y, p.loss_code, p.s, p.lam * p.n_samples, 0.0, p.row_norms_sq, alpha, v, v,
                      order, np.ones(1), EXACT, logit, None, 0, 0)
        runs.append((alpha, v, logit))
    (alpha, v, logit), (alpha_log, v_log, _) = runs
    assert logit.shape == (p.n_samples,) and np.all(alpha * p.y > 0)
    np.testing.assert_allclose(alpha, alpha_log, rtol=1e-12, atol=0)
    np.testing.assert_allclose(v, v_log, rtol=1e-12, atol=1e-14 * np.abs(v_log).max())
    b, rows = alpha * p.y, p.row_norms_sq > 0
    assert not rows.all() and logit[~rows].tolist() == [0.0] * int((~rows).sum())
    np.testing.assert_allclose(logit[rows], np.log(b[rows] / (1 - b[rows])), rtol=1e-12, atol=1e-13)


def test_the_shrinking_kernel_gives_the_same_run_with_and_without_prefetch():
    """The shrinking kernel prefetches only while its active rows exceed the last-level cache; compiled with
    that threshold below any active set (and bounds checked), the example it prefetches lies inside the active set
    and the run is the shipped kernel's, which never prefetches on this small X: the same run, shrinks and the
    epochs' orders included."""
    from cdlab.solvers import _shrinking

    p = _problem("hinge", 0.0)
    assert p.nnz < _shrinking.PREFETCH_MIN_NNZ
    eager = _recompiled(_shrinking.shrinking_chunk, PREFETCH_MIN_NNZ=-1)
    runs = []
    for kernel in (eager, _shrinking.shrinking_chunk):
        active_set = _shrinking.ActiveSet(p, np.random.default_rng(2))
        alpha, v = np.zeros(p.n_samples), np.zeros(p.n_features)
        touched = kernel(*p.csr_arrays, p.y, p.loss_code, p.s, p.lam * p.n_samples, 0.0, p.row_norms_sq, alpha,
                         v, v, 3000, active_set.state, active_set.active, active_set.ints, active_set.floats,
                         _shrinking.UNSHRINK_RATIO, active_set.nnz, None)
        runs.append((touched, alpha, v, active_set.active.copy(), active_set.ints.copy(), active_set.state.copy()))
    assert runs[0][4][_shrinking.N_ACTIVE] < p.n_samples and np.any(runs[0][1] != 0.0)  # it shrank, it moved
    for a, b in zip(*runs):
        assert np.array_equal(a, b)


def test_all_finite_and_any_nonzero_are_numpys():
    """The checkpoint's tests of w and α equal np.all(np.isfinite(x)) and x.any()."""
    from cdlab.solvers._kernels import all_finite, any_nonzero
    cases = [np.zeros(0), np.zeros(5), np.array([0.0, -0.0]), np.array([0.0, 1e-300]), np.array([np.nan, 0.0]),
             np.array([1.0, np.inf]), np.array([-np.inf]), np.arange(10.0)[::-3]]
    for x in cases:
        assert all_finite(x) == bool(np.all(np.isfinite(x))), x
        assert any_nonzero(x) == bool(x.any()), x


def _binary(n, d, density, seed=0):
    """n × d features of one value (0/1, every row and column with a nonzero) and ±1 labels."""
    rng = np.random.default_rng(seed)
    X = np.maximum(rng.random((n, d)) < density, np.eye(n, d)).astype(float)
    X[0] = 1.0
    return X, np.where(rng.standard_normal(n) >= 0, 1.0, -1.0)


@pytest.mark.parametrize("data, loss, l1, method, options", [
    ("a9a", "hinge", 0.0, "sdca", {"sampling": "permutation", "shrinking": True}),
    ("a9a", "hinge", 1e-3, "sdca", {"sampling": "permutation", "shrinking": True}),
    ("a9a", "logistic", 0.0, "sdca", {"sampling": "permutation"}),
    ("a9a", "logistic", 0.0, "newton", {"solver": "cg"}), ("a9a", "squared", 0.0, "newton", {"solver": "cg"}),
    ("a9a", "logistic", 0.0, "newton", {"solver": "cg", "n_jobs": 2}),
    ("a9a", "logistic", 0.0, "newton", {"solver": "cholesky"}),
    ("dense", "logistic", 0.0, "newton", {"solver": "cg"}),  # X_dense kept beside the one value
    ("dense", "logistic", 0.0, "newton", {"solver": "cholesky"}),  # H from dense blocks, sampled, then whole
    ("wide", "squared", 0.0, "newton", {"solver": "cg"})])  # d ≥ 2n: CG on the dual system
def test_rows_of_one_value_are_read_by_their_indices_to_the_same_run_bit_for_bit(real_data, monkeypatch, data, loss,
                                                                                 l1, method, options):
    """a9a's nonzeros share one value (binary features scaled by the mean example norm), as do the binary matrices
    here: the kernels that read rows through ``entry`` are handed that value in place of X's data array
    (``row_arrays``) and do the same arithmetic, so the certified run is the one that reads X's values, bit for bit."""
    X, y = {"a9a": lambda: real_data("a9a"), "dense": lambda: _binary(2000, 40, 0.95),
            "wide": lambda: _binary(40, 200, 0.1)}[data]()
    runs = []
    for reads_values in (False, True):
        monkeypatch.setattr(_kernels, "ONE_VALUE_ROWS", not reads_values)
        problem = cdlab.Problem(X, y, loss=loss, lam=1.0 / X.shape[0], l1=l1)  # a fresh Data: equal first reads
        values = row_arrays(problem)[2]
        shared = type(values) is float and values == problem.X.data[0]
        assert values is problem.csr_arrays[2] if reads_values else shared
        res = cdlab.solve(problem, method, tol=1e-9, max_passes=3000, seed=1, **options)
        assert res.converged and problem.gap(res.w, res.alpha) <= 1e-9
        runs.append(res)
    by_indices, by_values = runs
    np.testing.assert_array_equal(by_indices.w, by_values.w)
    columns = ["passes", "primal", "dual", "gap"]
    assert by_indices.trace[columns].equals(by_values.trace[columns])


def test_full_rows_of_one_value_are_read_as_dense_rows_with_their_values():
    """Full rows are read as dense ones (``full_rows``, a vectorised sum over X's values), whatever they hold:
    ``row_arrays`` hands those kernels X's data array even where every entry shares one value."""
    problem = cdlab.Problem(0.5 * np.ones((30, 120)), np.where(np.arange(30) % 2, 1.0, -1.0), loss="hinge", lam=0.1)
    assert problem.data.one_value == 0.5 and full_rows(problem) is not None
    assert row_arrays(problem)[2] is problem.csr_arrays[2]
