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

import numpy as np
import scipy.sparse as sp

from . import losses as L


def soft_threshold(v, t):
    """S_t(v) = sign(v)·max(|v| − t, 0)."""
    if t == 0.0:
        return np.array(v, dtype=float, copy=True)
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def _check_numeric_dtype(name, dtype):
    """Real numbers or booleans only: a complex X would silently lose its
    imaginary part in the float64 cast, strings would parse or crash late."""
    if dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers, got dtype {dtype}")


def _as_csr(X) -> sp.csr_matrix:
    if sp.issparse(X):
        _check_numeric_dtype("X", X.dtype)
        Xc = sp.csr_matrix(X, dtype=np.float64, copy=True)
    else:
        try:
            arr = np.asarray(X)
        except (ValueError, TypeError) as exc:  # ragged nested lists
            raise ValueError(f"X must be a 2-dimensional array or a scipy sparse matrix: {exc}") from None
        _check_numeric_dtype("X", arr.dtype)
        if arr.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {arr.shape}")
        Xc = sp.csr_matrix(arr.astype(np.float64))
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
    _check_numeric_dtype("y", arr.dtype)
    if arr.shape[0] != n:
        raise ValueError(f"X has {n} rows but y has {arr.shape[0]} entries")
    y = np.array(arr, dtype=np.float64, copy=True)
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


class Problem:
    """L2 (+ optional L1) regularised ERM of a linear predictor.

    Parameters
    ----------
    X : array-like or scipy sparse matrix, shape (n_samples, n_features)
    y : array-like, shape (n_samples,)
    loss : {"squared", "logistic", "hinge", "smoothed_hinge", "absolute"}
    lam : float, L2 strength λ ≥ 0 (λ = 0 only for methods that support it).
    l1 : float, L1 strength μ ≥ 0 (elastic net when > 0; needs λ > 0).
    s : float, smoothing of the smoothed hinge (theory.md §2), default 1.

    The user's X and y are copied, never modified.
    """

    def __init__(self, X, y, loss="logistic", lam=1e-4, l1=0.0, **loss_params):
        self.loss_info, self.lam, self.l1, self.s = _check_objective(loss, lam, l1, loss_params)
        self.loss = self.loss_info.name

        X = _as_csr(X)
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

        self.X = X
        self.X_csc = X.tocsc()
        self.X_csc.sort_indices()
        self.y = y
        self.n_samples, self.n_features = n, d
        self.nnz = int(X.nnz)
        self.row_nnz = np.diff(X.indptr).astype(np.int64)
        self.col_nnz = np.diff(self.X_csc.indptr).astype(np.int64)
        sq = X.copy()
        sq.data **= 2
        self.row_norms_sq = np.asarray(sq.sum(axis=1)).ravel()
        self.col_norms_sq = np.asarray(sq.sum(axis=0)).ravel()
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

    def primal(self, w) -> float:
        """P(w) of theory.md §1."""
        w = self._check_w(w)
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

    def dual(self, alpha) -> float:
        """D(α) of theory.md §1 (−inf if α leaves the conjugate's domain)."""
        alpha = self._check_alpha(alpha)
        w = self.w_from_alpha(alpha)
        return L.sum_neg_conj(self.loss_code, alpha, self.y, self.s) / self.n_samples - 0.5 * self.lam * float(w @ w)

    def alpha_from_w(self, w):
        """α_i(w) = −φ_i'(x_i·w): the dual point a primal method reports."""
        return L.neg_deriv(self.loss_code, self.margins(w), self.y, self.s)

    def gap(self, w, alpha) -> float:
        """G(w, α) = P(w) − D(α) ≥ P(w) − P*.

        Evaluated as (1/n) Σ_i FY_φ(z_i, α_i) + λ Σ_j FY_g(w_j, v_j), where
        FY_φ(z, α) = φ(z) + φ*(−α) + αz and, with g(w) = ½‖w‖² + (μ/λ)‖w‖₁,
        FY_g(w, v) = g(w) + g*(v) − vw; both are ≥ 0 and their sum is P − D
        (expand (1/n) αᵀXw = λ vᵀw).
        """
        w = self._check_w(w)
        alpha = self._check_alpha(alpha)
        z = self.X @ w
        loss_part = L.sum_fenchel_young(self.loss_code, z, alpha, self.y, self.s) / self.n_samples
        v = self.v_from_alpha(alpha)
        t = self.l1 / self.lam
        sv = soft_threshold(v, t)
        reg = 0.5 * (w - v) ** 2 if t == 0 else 0.5 * w * w + t * np.abs(w) + 0.5 * sv * sv - v * w
        return float(loss_part + self.lam * np.maximum(reg, 0.0).sum())
