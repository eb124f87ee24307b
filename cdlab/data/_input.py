"""User (X, y) to the canonical arrays every solver reads, checked once.

X becomes a float64 CSR copy (sorted indices, duplicates summed, no explicit
zeros), y a float64 vector; a matrix whose arrays would exceed the memory
budget is refused before anything is allocated. The user's arrays are never
modified.
"""
from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from .._checks import check_real
from .._numeric import as_float_array

GiB = 2 ** 30
# Memory a problem takes, as Problem.__init__ and a solver allocate it: per
# stored nonzero the CSR and CSC copies and the squared temporary (an 8-byte
# value and an index of at most 8 bytes each; on X kept dense, ``Data.X_dense``
# and its float32 rounding fit within it too); per row and per column the
# per-example / per-feature arrays (labels, norms, counts) and a solver's
# vectors (α, w, v, margins, ...).
BYTES_PER_NONZERO = 48
BYTES_PER_ROW_OR_COLUMN = 64


def default_max_bytes() -> int:
    """The default memory budget of a Problem: 4 GiB or half the physical
    memory, whichever is smaller (4 GiB where the physical memory is unknown)."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        physical = 0
    return min(4 * GiB, physical // 2) if physical > 0 else 4 * GiB


def problem_bytes(n_samples, n_features, nnz) -> int:
    """Estimated bytes of a problem with these sizes (see BYTES_PER_NONZERO)."""
    return BYTES_PER_NONZERO * int(nnz) + BYTES_PER_ROW_OR_COLUMN * (int(n_samples) + int(n_features))


def _format_bytes(b) -> str:
    for unit, size in (("GiB", GiB), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{int(b)} bytes"


def _check_budget(n, d, nnz, max_bytes, extra=0, extra_what="", nnz_known=True):
    """Refuse, before allocating, a problem whose arrays would exceed max_bytes
    (with nnz_known=False, nnz is a lower bound and not reported)."""
    need = problem_bytes(n, d, nnz) + extra
    if need <= max_bytes:
        return
    parts = f"({n} rows + {d} columns) × {BYTES_PER_ROW_OR_COLUMN} B"
    if nnz_known:
        parts = f"{nnz} nonzeros × {BYTES_PER_NONZERO} B + " + parts
    if extra:
        parts += f" + {_format_bytes(extra)} for {extra_what}"
    hint = ""
    if nnz_known and (d > 2 * nnz or n > 2 * nnz):
        empty = "columns" if d > 2 * nnz else "rows"
        hint = f"; most of its {d if empty == 'columns' else n} {empty} hold no nonzero: drop or renumber them"
    raise ValueError(f"X of shape ({n}, {d}) would need about {_format_bytes(need)} ({parts}), more than "
                     f"max_bytes={_format_bytes(max_bytes)}{hint}; pass a larger max_bytes to Problem if the "
                     "machine has the memory")


def check_max_bytes(max_bytes) -> float:
    """The memory budget: None for :func:`default_max_bytes`, else a number > 0 (inf turns the check off)."""
    if max_bytes is None:
        return default_max_bytes()
    return check_real("max_bytes", max_bytes, low=0.0, low_open=True, finite=False)


def _check_numeric_dtype(name, dtype):
    """Real numbers or booleans only: a complex X would silently lose its
    imaginary part in the float64 cast, strings would parse or crash late."""
    if dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers, got dtype {dtype}")


def _malformed(fmt, what) -> ValueError:
    return ValueError(f"X ({fmt.upper()} sparse matrix) has a malformed structure: {what}")


def _index_array(fmt, name, arr, length=None) -> np.ndarray:
    arr = np.asarray(arr)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise _malformed(fmt, f"{name} must be a 1-D integer array, got dtype {arr.dtype} and shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise _malformed(fmt, f"{name} has {arr.shape[0]} entries, data has {length}")
    return arr


def _check_in_range(fmt, name, idx, bound, axis, where=lambda k: ""):
    if idx.size == 0:
        return
    bad = (idx < 0) | (idx >= bound)
    if bad.any():
        k = int(np.argmax(bad))
        raise _malformed(fmt, f"{name}[{k}] = {int(idx[k])} is out of range [0, {bound}) "
                              f"(the matrix has {bound} {axis}){where(k)}")


def _check_compressed(fmt, indptr, indices, n_data, major, minor, major_axis, minor_axis):
    """O(nnz) check of a CSR/CSC/BSR structure: indptr has major + 1 entries, starts at 0,
    never decreases and ends at len(indices) == len(data); indices lie in [0, minor)."""
    indptr = _index_array(fmt, "indptr", indptr)
    indices = _index_array(fmt, "indices", indices)
    if indptr.shape[0] != major + 1:
        raise _malformed(fmt, f"indptr has {indptr.shape[0]} entries; {major} {major_axis} need {major + 1}")
    if indptr[0] != 0:
        raise _malformed(fmt, f"indptr[0] = {int(indptr[0])}, must be 0")
    steps = np.diff(indptr.astype(np.int64) if indptr.dtype.kind == "u" else indptr)
    if steps.size and steps.min() < 0:
        k = int(np.argmax(steps < 0))
        raise _malformed(fmt, f"indptr decreases at {major_axis[:-1]} {k}: indptr[{k}] = {int(indptr[k])} > "
                              f"indptr[{k + 1}] = {int(indptr[k + 1])}")
    if not int(indptr[-1]) == indices.shape[0] == n_data:
        raise _malformed(fmt, f"indptr[-1] = {int(indptr[-1])}, indices has {indices.shape[0]} entries and data "
                              f"{n_data}; the three must agree")
    _check_in_range(fmt, "indices", indices, minor, minor_axis,
                    lambda k: f", in {major_axis[:-1]} {int(np.searchsorted(indptr, k, side='right')) - 1}")


def _index_dtype(*sizes):
    return np.int32 if max(sizes) < 2 ** 31 else np.int64


def check_sparse_structure(X):
    """Check a scipy sparse X in O(nnz) without modifying it; returns (X or its COO
    conversion, nnz stored). Raises ValueError naming the first inconsistency.

    scipy does not check indices at construction, and its C++ routines
    (conversions, products), like numba kernels, read and write out of bounds
    on a malformed structure: anything that hands a user's sparse matrix to
    them checks it here first (``Problem``, the estimators)."""
    _check_numeric_dtype("X", X.dtype)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got a sparse array of shape {X.shape}")
    fmt = X.format
    n, d = (int(s) for s in X.shape)
    if fmt not in ("csr", "csc", "coo", "bsr"):
        try:  # lil, dok, dia: scipy converts them in Python/numpy; the result is checked below
            X = X.tocoo()
        except (ValueError, IndexError, TypeError) as exc:
            raise _malformed(fmt, str(exc)) from None
        fmt = "coo"
    data = np.asarray(X.data)
    if fmt == "bsr":
        R, C = X.blocksize
        if data.ndim != 3 or data.shape[1:] != (R, C) or n % R or d % C:
            raise _malformed(fmt, f"blocks of shape {data.shape[1:]} in a ({n}, {d}) matrix with blocksize {(R, C)}")
        _check_compressed(fmt, X.indptr, X.indices, data.shape[0], n // R, d // C, "block rows", "block columns")
        return X, data.size
    if data.ndim != 1:
        raise _malformed(fmt, f"data must be 1-D, got shape {data.shape}")
    nnz = data.shape[0]
    if fmt == "coo":
        row = _index_array(fmt, "row", X.row, nnz)
        col = _index_array(fmt, "col", X.col, nnz)
        _check_in_range(fmt, "row", row, n, "rows")
        _check_in_range(fmt, "col", col, d, "columns")
    else:
        major, minor, axes = (n, d, ("rows", "columns")) if fmt == "csr" else (d, n, ("columns", "rows"))
        _check_compressed(fmt, X.indptr, X.indices, nnz, major, minor, *axes)
    return X, nnz


def _sparse_as_csr(X, max_bytes) -> sp.csr_matrix:
    """A canonical float64 CSR copy of a scipy sparse X, built from its checked arrays."""
    X, nnz = check_sparse_structure(X)
    fmt, data = X.format, np.asarray(X.data)
    n, d = (int(s) for s in X.shape)
    _check_budget(n, d, nnz, max_bytes)
    idx = _index_dtype(n + 1, d + 1, nnz + 1)
    values = data.astype(np.float64)  # always a new array: the user's X is never touched
    if fmt == "coo":
        Y = sp.coo_matrix((values, (X.row.astype(idx), X.col.astype(idx))), shape=(n, d))
    elif fmt == "bsr":
        Y = sp.bsr_matrix((values, X.indices.astype(idx), X.indptr.astype(idx)), shape=(n, d))
    else:
        cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
        Y = cls((values, X.indices.astype(idx), X.indptr.astype(idx)), shape=(n, d))
    return Y.tocsr()


def _dense_as_csr(X, max_bytes) -> sp.csr_matrix:
    try:
        arr = np.asarray(X)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise ValueError(f"X must be a 2-dimensional array or a scipy sparse matrix: {exc}") from None
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got shape {arr.shape}")
    n, d = arr.shape
    converted = 0 if arr.dtype == np.float64 else 8 * n * d
    _check_budget(n, d, 0, max_bytes, converted, "the float64 copy of the dense X", nnz_known=False)
    arr = as_float_array("X", arr, columns=getattr(X, "columns", None), copy=False)
    _check_budget(n, d, np.count_nonzero(arr), max_bytes, converted, "the float64 copy of the dense X")
    return sp.csr_matrix(arr)


def as_csr(X, max_bytes) -> sp.csr_matrix:
    """A canonical CSR copy of X (sorted indices, duplicates summed, no explicit zeros)."""
    Xc = _sparse_as_csr(X, max_bytes) if sp.issparse(X) else _dense_as_csr(X, max_bytes)
    Xc.sum_duplicates()
    Xc.eliminate_zeros()
    Xc.sort_indices()
    return Xc


def first_nonfinite(X: sp.csr_matrix) -> str:
    """'NaN at row i, column j' for the first non-finite stored entry of X."""
    k = int(np.flatnonzero(~np.isfinite(X.data))[0])
    row = int(np.searchsorted(X.indptr, k, side="right") - 1)
    what = "NaN" if np.isnan(X.data[k]) else "inf"
    return f"{what} (first at row {row}, column {int(X.indices[k])})"


def as_labels(y, n) -> np.ndarray:
    """A float64 copy of y as a vector of n labels; a column vector (n, 1) is accepted."""
    try:
        arr = np.asarray(y)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"y must be a 1-dimensional array of {n} labels: {exc}") from None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"y must be a 1-dimensional array of {n} labels, got "
                         + ("a scalar" if arr.ndim == 0 else f"shape {arr.shape}"))
    if arr.shape[0] != n:
        raise ValueError(f"X has {n} rows but y has {arr.shape[0]} entries")
    y = as_float_array("y", arr)
    if not np.all(np.isfinite(y)):
        i = int(np.flatnonzero(~np.isfinite(y))[0])
        raise ValueError(f"y contains NaN or inf values (first at index {i}: {y[i]})")
    return y
