"""The problem every solver minimises (theory.md §1).

    P(w) = (1/n) Σ_i φ_i(x_i·w) + (λ/2)‖w‖² + μ‖w‖₁
    v(α) = Xᵀα/(λn),  w(α) = S_{μ/λ}(v(α))
    D(α) = (1/n) Σ_i −φ_i*(−α_i) − (λ/2)‖S_{μ/λ}(v(α))‖²

and the duality gap G(w, α) = P(w) − D(α), computed as a sum of non-negative
Fenchel–Young terms (one per example for the loss, one per feature for the
regulariser) so that a tiny gap is never swamped by the cancellation of
P − D; mathematically the two are equal.
"""
from __future__ import annotations

import hashlib
import os

import numpy as np
import scipy.sparse as sp

from . import losses as L
from ._numeric import as_float_array


def soft_threshold(v, t):
    """S_t(v) = sign(v)·max(|v| − t, 0)."""
    if t == 0.0:
        return np.array(v, dtype=float, copy=True)
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


GiB = 2 ** 30
# Memory a problem takes, as Problem.__init__ and a solver allocate it: per
# stored nonzero the CSR and CSC copies and the squared temporary (an 8-byte
# value and an index of at most 8 bytes each); per row and per column the
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


def _check_max_bytes(max_bytes) -> float:
    if max_bytes is None:
        return default_max_bytes()
    value = _real("max_bytes", max_bytes)
    if not value > 0:
        raise ValueError(f"max_bytes must be > 0 (math.inf turns the check off), got {max_bytes!r}")
    return value


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


def _as_csr(X, max_bytes) -> sp.csr_matrix:
    """A canonical CSR copy of X (sorted indices, duplicates summed, no explicit zeros)."""
    Xc = _sparse_as_csr(X, max_bytes) if sp.issparse(X) else _dense_as_csr(X, max_bytes)
    Xc.sum_duplicates()
    Xc.eliminate_zeros()
    Xc.sort_indices()
    return Xc


def _first_nonfinite(X: sp.csr_matrix) -> str:
    """'NaN at row i, column j' for the first non-finite stored entry of X."""
    k = int(np.flatnonzero(~np.isfinite(X.data))[0])
    row = int(np.searchsorted(X.indptr, k, side="right") - 1)
    what = "NaN" if np.isnan(X.data[k]) else "inf"
    return f"{what} (first at row {row}, column {int(X.indices[k])})"


def _as_labels(y, n) -> np.ndarray:
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


def _real(name, value) -> float:
    """A plain real number (not a bool, string, array or None)."""
    arr = None if isinstance(value, (str, bytes)) else np.asarray(value)
    if arr is None or arr.ndim != 0 or arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a real number, got {value!r}")
    return float(arr)


def _check_objective(loss, lam, l1, loss_params):
    """Validate the objective's parameters; returns (loss_info, lam, l1, s)."""
    info = L.get_loss(loss)
    unknown = set(loss_params) - {"s"}
    if unknown:
        raise ValueError(f"unknown loss parameter(s) {sorted(unknown)}; only 's' (smoothed hinge) exists")
    s = _real("smoothing parameter s", loss_params.get("s", 1.0))
    if not (np.isfinite(s) and s > 0):
        raise ValueError(f"smoothing parameter s must be finite and > 0, got {s}")
    lam, l1 = _real("lam (L2 strength λ)", lam), _real("l1 (L1 strength μ)", l1)
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"lam (L2 strength λ) must be finite and ≥ 0, got {lam}")
    if not np.isfinite(l1) or l1 < 0:
        raise ValueError(f"l1 (L1 strength μ) must be finite and ≥ 0, got {l1}")
    if l1 > 0 and lam == 0:
        raise ValueError("l1 > 0 needs lam > 0 (the dual of the elastic net uses S_{μ/λ})")
    return info, lam, l1, s


def _check_labels(info, y):
    if info.classification and not np.all(np.abs(y) == 1.0):
        bad = np.unique(y[np.abs(y) != 1.0])[:5]
        hint = " (labels in {0, 1}? use y = 2*y - 1)" if np.all((y == 0) | (y == 1)) else ""
        raise ValueError(f"loss {info.name!r} needs labels in {{-1, +1}}; found {bad.tolist()}{hint}")


def _check_scale(lam, n, row_norms_sq, col_norms_sq):
    """Refuse data and λ whose quantities overflow float64: ‖x_i‖², ‖f_j‖² and
    the dual step's curvature q_i = ‖x_i‖²/(λn) (theory.md §3) must be finite."""
    for norms, what in ((row_norms_sq, "row"), (col_norms_sq, "column")):
        if not np.all(np.isfinite(norms)):
            k = int(np.argmax(~np.isfinite(norms)))
            raise ValueError(f"X is too large in scale for float64: the squared norm of {what} {k} overflows; "
                             "rescale X")
    if not np.isfinite(row_norms_sq.sum()):
        raise ValueError("X is too large in scale for float64: its squared Frobenius norm overflows; rescale X")
    if lam > 0:
        top = float(row_norms_sq.max())
        lam_n = lam * n
        if lam_n == 0.0 or not np.isfinite(top / lam_n):
            raise ValueError(f"lam={lam!r} is too small for this data: the dual step's curvature "
                             f"‖x_i‖²/(λn) overflows float64 (max ‖x_i‖² = {top:.3g}, n = {n}); "
                             "use a larger lam, or lam=0 with a method that allows it")


class Problem:
    """L2 (+ optional L1) regularised ERM of a linear predictor.

    Parameters
    ----------
    X : array-like or scipy sparse matrix, shape (n_samples, n_features)
        Dense input may be an object array or a pandas DataFrame of numbers
        (mixed int, float and bool columns), as scikit-learn accepts. Sparse
        input of any scipy format has its structure checked in O(nnz) (index
        ranges; ``indptr`` starting at 0, non-decreasing and ending at
        len(indices) == len(data)) before anything reads it.
    y : array-like, shape (n_samples,) (object arrays and pandas Series of numbers too)
    loss : {"squared", "logistic", "hinge", "smoothed_hinge", "absolute"}
    lam : float, L2 strength λ ≥ 0 (λ = 0 only for methods that support it).
    l1 : float, L1 strength μ ≥ 0 (elastic net when > 0; needs λ > 0).
    max_bytes : float, optional
        Memory budget: a problem whose arrays would take more (estimated by
        :func:`problem_bytes` as 48 bytes per nonzero and 64 per row and per
        column, including a solver's vectors) is refused before anything is
        allocated. Default :func:`default_max_bytes`: 4 GiB or half the
        physical memory, whichever is smaller; ``math.inf`` turns it off.
    s : float, smoothing of the smoothed hinge (theory.md §2), default 1.

    The user's X and y are copied, never modified; the copy of X is
    canonical (CSR, sorted indices, duplicates summed, no explicit zeros).
    """

    def __init__(self, X, y, loss="logistic", lam=1e-4, l1=0.0, max_bytes=None, **loss_params):
        self.loss_info, self.lam, self.l1, self.s = _check_objective(loss, lam, l1, loss_params)
        self.loss = self.loss_info.name
        self.max_bytes = _check_max_bytes(max_bytes)

        X = _as_csr(X, self.max_bytes)
        n, d = X.shape
        if n == 0 or d == 0:
            raise ValueError(f"X is empty (shape {X.shape})")
        if not np.all(np.isfinite(X.data)):
            raise ValueError(f"X contains {_first_nonfinite(X)}")
        if X.nnz == 0:
            # nothing to learn, and a pass (nnz nonzeros touched) would be undefined
            raise ValueError(f"X has no nonzero entries (shape {X.shape}): every example is zero")
        y = _as_labels(y, n)
        _check_labels(self.loss_info, y)

        sq = X.copy()
        with np.errstate(over="ignore"):  # an overflow is refused by _check_scale
            sq.data **= 2
        row_norms_sq = np.asarray(sq.sum(axis=1)).ravel()
        col_norms_sq = np.asarray(sq.sum(axis=0)).ravel()
        del sq
        _check_scale(self.lam, n, row_norms_sq, col_norms_sq)

        self.X = X
        self.X_csc = X.tocsc()
        self.X_csc.sort_indices()
        self.y = y
        self.n_samples, self.n_features = n, d
        self.nnz = int(X.nnz)
        self.row_nnz = np.diff(X.indptr).astype(np.int64)
        self.col_nnz = np.diff(self.X_csc.indptr).astype(np.int64)
        self.row_norms_sq, self.col_norms_sq = row_norms_sq, col_norms_sq
        self.frob_sq = float(self.row_norms_sq.sum())
        self.R = float(np.sqrt(self.row_norms_sq.max()))
        self._hash = None

    # ---------------------------------------------------------------- facts
    @property
    def loss_code(self) -> int:
        return self.loss_info.code

    @property
    def gamma(self) -> float | None:
        """Smoothness γ of the loss (φ' is 1/γ-Lipschitz); None if non-smooth."""
        return self.loss_info.gamma(self.s)

    @property
    def is_smooth(self) -> bool:
        return self.loss_info.smooth

    @property
    def shape(self):
        return self.n_samples, self.n_features

    def __repr__(self):
        return (f"Problem(n={self.n_samples}, d={self.n_features}, nnz={self.nnz}, loss={self.loss!r}, "
                f"lam={self.lam:g}, l1={self.l1:g}" + (f", s={self.s:g}" if self.loss == "smoothed_hinge" else "") + ")")

    def content_hash(self) -> str:
        """A hash of the data and the objective (used to cache reference optima)."""
        if self._hash is None:
            h = hashlib.sha256()
            for arr in (self.X.indptr, self.X.indices, self.X.data, self.y):
                h.update(np.ascontiguousarray(arr).tobytes())
            h.update(repr((self.shape, self.loss, self.lam, self.l1, self.s)).encode())
            self._hash = h.hexdigest()[:32]
        return self._hash

    def with_params(self, **changes) -> "Problem":
        """A copy with another loss / lam / l1 / s; the data are shared, not copied."""
        unknown = set(changes) - {"loss", "lam", "l1", "s"}
        if unknown:
            raise ValueError(f"unknown problem parameter(s) {sorted(unknown)}")
        info, lam, l1, s = _check_objective(changes.get("loss", self.loss), changes.get("lam", self.lam),
                                            changes.get("l1", self.l1), {"s": changes.get("s", self.s)})
        _check_labels(info, self.y)
        _check_scale(lam, self.n_samples, self.row_norms_sq, self.col_norms_sq)
        new = object.__new__(Problem)
        new.__dict__.update(self.__dict__)
        new.loss_info, new.loss, new.lam, new.l1, new.s, new._hash = info, info.name, lam, l1, s, None
        return new

    # ------------------------------------------------------------ objectives
    def _check_w(self, w):
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"w must have shape ({self.n_features},), got {w.shape}")
        return w

    def _check_alpha(self, alpha):
        alpha = np.asarray(alpha, dtype=np.float64)
        if alpha.shape != (self.n_samples,):
            raise ValueError(f"alpha must have shape ({self.n_samples},), got {alpha.shape}")
        return alpha

    def margins(self, w):
        return self.X @ self._check_w(w)

    def primal(self, w, *, z=None) -> float:
        """P(w) of theory.md §1; ``z`` = Xw when the caller has it."""
        w = self._check_w(w)
        if z is None:
            z = self.X @ w
        return (L.sum_loss(self.loss_code, z, self.y, self.s) / self.n_samples
                + 0.5 * self.lam * float(w @ w) + self.l1 * float(np.abs(w).sum()))

    def v_from_alpha(self, alpha):
        """v(α) = Xᵀα/(λn)."""
        if self.lam <= 0:
            raise ValueError("the dual needs lam > 0")
        return (self.X_csc.T @ self._check_alpha(alpha)) / (self.lam * self.n_samples)

    def w_from_alpha(self, alpha):
        """w(α) = S_{μ/λ}(v(α)) (the primal point the dual certifies)."""
        return soft_threshold(self.v_from_alpha(alpha), self.l1 / self.lam)

    def dual(self, alpha, *, v=None) -> float:
        """D(α) of theory.md §1 (−inf if α leaves the conjugate's domain); ``v`` = v(α)
        when the caller has it."""
        alpha = self._check_alpha(alpha)
        w = self.w_from_alpha(alpha) if v is None else soft_threshold(v, self.l1 / self.lam)
        return L.sum_neg_conj(self.loss_code, alpha, self.y, self.s) / self.n_samples - 0.5 * self.lam * float(w @ w)

    def alpha_from_w(self, w):
        """α_i(w) = −φ_i'(x_i·w): the dual point a primal method reports."""
        return L.neg_deriv(self.loss_code, self.margins(w), self.y, self.s)

    def gap(self, w, alpha, *, z=None, v=None) -> float:
        """G(w, α) = P(w) − D(α) ≥ P(w) − P*; ``z`` = Xw and ``v`` = v(α) when the
        caller has them.

        Evaluated as (1/n) Σ_i FY_φ(z_i, α_i) + λ Σ_j FY_g(w_j, v_j), where
        FY_φ(z, α) = φ(z) + φ*(−α) + αz and, with g(w) = ½‖w‖² + (μ/λ)‖w‖₁,
        FY_g(w, v) = g(w) + g*(v) − vw; both are ≥ 0 and their sum is P − D
        (expand (1/n) αᵀXw = λ vᵀw).
        """
        w = self._check_w(w)
        alpha = self._check_alpha(alpha)
        if z is None:
            z = self.X @ w
        loss_part = L.sum_fenchel_young(self.loss_code, z, alpha, self.y, self.s) / self.n_samples
        if v is None:
            v = self.v_from_alpha(alpha)
        t = self.l1 / self.lam
        sv = soft_threshold(v, t)
        reg = 0.5 * (w - v) ** 2 if t == 0 else 0.5 * w * w + t * np.abs(w) + 0.5 * sv * sv - v * w
        return float(loss_part + self.lam * np.maximum(reg, 0.0).sum())
