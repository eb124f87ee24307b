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

from . import losses as L
from ._checks import check_real
from .data._input import (BYTES_PER_NONZERO, BYTES_PER_ROW_OR_COLUMN, GiB, check_sparse_structure,  # noqa: F401
                          default_max_bytes, problem_bytes)
from .data.dataset import Data
from .regularizer import regularizer_sums


def soft_threshold(v, t):
    """S_t(v) = sign(v)·max(|v| − t, 0)."""
    if t == 0.0:
        return np.array(v, dtype=float, copy=True)
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def _check_objective(loss, lam, l1, loss_params):
    """Validate the objective's parameters; returns (loss_info, lam, l1, s)."""
    info = L.get_loss(loss)
    unknown = set(loss_params) - {"s"}
    if unknown:
        raise ValueError(f"unknown loss parameter(s) {sorted(unknown)}; only 's' (smoothed hinge) exists")
    s = check_real("smoothing parameter s", loss_params.get("s", 1.0), low=0.0, low_open=True)
    lam = check_real("lam (L2 strength λ)", lam, low=0.0)
    l1 = check_real("l1 (L1 strength μ)", l1, low=0.0)
    if l1 > 0 and lam == 0:
        raise ValueError("l1 > 0 needs lam > 0 (the dual of the elastic net uses S_{μ/λ})")
    return info, lam, l1, s


def _check_labels(info, y):
    if info.classification and not np.all(np.abs(y) == 1.0):
        bad = np.unique(y[np.abs(y) != 1.0])[:5]
        hint = " (labels in {0, 1}? use y = 2*y - 1)" if np.all((y == 0) | (y == 1)) else ""
        raise ValueError(f"loss {info.name!r} needs labels in {{-1, +1}}; found {bad.tolist()}{hint}")


def _check_scale(lam, data):
    """Refuse a λ too small for the data: the dual step's curvature
    q_i = ‖x_i‖²/(λn) (theory.md §3) must be finite in float64."""
    if lam > 0:
        top, n = float(data.row_norms_sq.max()), data.n_samples
        lam_n = lam * n
        if lam_n == 0.0 or not np.isfinite(top / lam_n):
            raise ValueError(f"lam={lam!r} is too small for this data: the dual step's curvature "
                             f"‖x_i‖²/(λn) overflows float64 (max ‖x_i‖² = {top:.3g}, n = {n}); "
                             "use a larger lam, or lam=0 with a method that allows it")


# what a Problem takes from its Data (problem.X is problem.data.X, ...)
DATA_ATTRIBUTES = frozenset({"X", "y", "n_samples", "n_features", "nnz", "row_nnz", "col_nnz", "n_nonempty_columns",
                             "row_norms_sq", "col_norms_sq", "frob_sq", "R", "max_bytes", "shape"})


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
    ``problem.data`` is that :class:`cdlab.data.Data` with its facts (norms,
    counts, C_P, C_D, ‖X‖₂², λ_min); ``problem.X``, ``problem.row_norms_sq``,
    … (``DATA_ATTRIBUTES``) are its arrays, not copies. ``Problem.from_data`` builds
    an objective on a Data already checked.
    """

    def __init__(self, X, y, loss="logistic", lam=1e-4, l1=0.0, max_bytes=None, **loss_params):
        self.loss_info, self.lam, self.l1, self.s = _check_objective(loss, lam, l1, loss_params)
        self.loss = self.loss_info.name
        self._set_data(Data(X, y, max_bytes))

    @classmethod
    def from_data(cls, data, loss="logistic", lam=1e-4, l1=0.0, **loss_params) -> "Problem":
        """The objective of ``loss``, ``lam``, ``l1`` on a :class:`cdlab.data.Data` (shared, not copied)."""
        if not isinstance(data, Data):
            raise TypeError(f"data must be a cdlab.data.Data, got {type(data).__name__}")
        new = object.__new__(cls)
        new.loss_info, new.lam, new.l1, new.s = _check_objective(loss, lam, l1, loss_params)
        new.loss = new.loss_info.name
        new._set_data(data)
        return new

    def _set_data(self, data):
        _check_labels(self.loss_info, data.y)
        _check_scale(self.lam, data)
        self.data = data
        # instance attributes that are the data's own arrays: solvers read them in loops
        self.__dict__.update({name: getattr(data, name) for name in DATA_ATTRIBUTES})
        self._hash = None

    @property
    def X_csc(self):
        """X in CSC, built on first use for the methods that read columns (``Data.X_csc``)."""
        return self.data.X_csc

    @property
    def csr_arrays(self):
        """(indptr, indices, data) of X as the kernels take them (``Data.csr_arrays``)."""
        return self.data.csr_arrays

    @property
    def csc_arrays(self):
        """(indptr, indices, data) of X in CSC as the kernels take them (``Data.csc_arrays``)."""
        return self.data.csc_arrays

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

    def __repr__(self):
        return (f"Problem(n={self.n_samples}, d={self.n_features}, nnz={self.nnz}, loss={self.loss!r}, "
                f"lam={self.lam:g}, l1={self.l1:g}" + (f", s={self.s:g}" if self.loss == "smoothed_hinge" else "") + ")")

    def content_hash(self) -> str:
        """A hash of the data and the objective (used to cache reference optima)."""
        if self._hash is None:
            h = hashlib.sha256()
            self.data.hash_update(h)
            h.update(repr((self.shape, self.loss, self.lam, self.l1, self.s)).encode())
            self._hash = h.hexdigest()[:32]
        return self._hash

    def with_params(self, **changes) -> "Problem":
        """A copy with another loss / lam / l1 / s; the data are shared, not copied."""
        unknown = set(changes) - {"loss", "lam", "l1", "s"}
        if unknown:
            raise ValueError(f"unknown problem parameter(s) {sorted(unknown)}")
        return Problem.from_data(self.data, loss=changes.get("loss", self.loss), lam=changes.get("lam", self.lam),
                                 l1=changes.get("l1", self.l1), s=changes.get("s", self.s))

    def strong_convexity(self) -> float:
        """μ_F, the strong convexity of P without its L1 term: λ for every loss, plus
        λ_min(XᵀX)/n for the squared loss (φ'' = 1); the other losses have no
        positive lower bound on φ''. Raises ValueError where λ_min is too costly."""
        mu = self.lam
        if self.loss == "squared":
            mu += self.data.gram_min_eig / self.n_samples
        return mu

    # ------------------------------------------------------------ objectives
    # Contiguous float64 vectors: numba compiles a kernel once per argument layout, and a vectorised sum
    # (cdlab._vector) may add in another order in a strided version, so P, D and the gap of a strided view
    # would not be a checkpoint's bit for bit.
    def _check_w(self, w, name="w"):
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"{name} must have shape ({self.n_features},), got {w.shape}")
        return w

    def _check_alpha(self, alpha):
        alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        if alpha.shape != (self.n_samples,):
            raise ValueError(f"alpha must have shape ({self.n_samples},), got {alpha.shape}")
        return alpha

    def margins(self, w):
        """z = Xw, summed as a checkpoint sums it (``solvers._kernels.certificate_sweep``): where the kernels read
        full rows as dense ones (``_kernels.full_rows``), by ``_kernels.row_margins``, else by scipy's CSR
        product (the same sums in the same order as the sparse kernels), so the certificates of a trace are
        bit for bit those computed here."""
        from .solvers._kernels import full_rows, row_margins  # here: the solvers' package imports this module

        w = self._check_w(w)
        if full_rows(self) is None:
            return self.X @ w
        z = np.empty(self.n_samples)
        row_margins(*self.csr_arrays, w, z, full_rows(self))
        return z

    @property
    def _l1_ratio(self) -> float:
        """t = μ/λ, the argument of ``regularizer_sums`` (the dual's, so λ > 0)."""
        if self.lam <= 0:
            raise ValueError("the dual needs lam > 0")
        return self.l1 / self.lam

    def primal(self, w, *, z=None) -> float:
        """P(w) of theory.md §1; ``z`` = Xw when the caller has it."""
        w = self._check_w(w)
        if z is None:
            z = self.margins(w)
        # P reads ‖w‖² and ‖w‖₁ only; with the dual's t (where there is a dual) they are a checkpoint's, bit
        # for bit (the sums' loop depends on t = 0 or not)
        sq, ab, _, _ = regularizer_sums(w, w, self._l1_ratio if self.lam > 0 else 0.0)
        return self._primal_from(L.sum_loss(self.loss_code, z, self.y, self.s), sq, ab)

    def _primal_from(self, loss_sum, sq, ab):
        """P from Σ_i φ_i(z_i), ‖w‖² and ‖w‖₁."""
        return loss_sum / self.n_samples + 0.5 * self.lam * sq + self.l1 * ab

    def v_from_alpha(self, alpha):
        """v(α) = Xᵀα/(λn)."""
        if self.lam <= 0:
            raise ValueError("the dual needs lam > 0")
        return (self.X.T @ self._check_alpha(alpha)) / (self.lam * self.n_samples)

    def w_from_alpha(self, alpha):
        """w(α) = S_{μ/λ}(v(α)) (the primal point the dual certifies)."""
        return soft_threshold(self.v_from_alpha(alpha), self._l1_ratio)

    def dual(self, alpha, *, v=None) -> float:
        """D(α) of theory.md §1 (−inf if α leaves the conjugate's domain); ``v`` = v(α)
        when the caller has it."""
        alpha = self._check_alpha(alpha)
        v = self.v_from_alpha(alpha) if v is None else self._check_w(v, "v")
        st_sq = regularizer_sums(v, v, self._l1_ratio)[2]
        return self._dual_from(L.sum_neg_conj(self.loss_code, alpha, self.y, self.s), st_sq)

    def _dual_from(self, neg_conj_sum, st_sq):
        """D from Σ_i −φ_i*(−α_i) and ‖S_{μ/λ}(v)‖²."""
        return neg_conj_sum / self.n_samples - 0.5 * self.lam * st_sq

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
            z = self.margins(w)
        loss_sum = L.sum_fenchel_young(self.loss_code, z, alpha, self.y, self.s)
        v = self.v_from_alpha(alpha) if v is None else self._check_w(v, "v")
        return self._gap_from(loss_sum, regularizer_sums(w, v, self._l1_ratio)[3])

    def _gap_from(self, fy_loss_sum, fy_reg_sum):
        """G from Σ_i FY_φ(z_i, α_i) and Σ_j FY_g(w_j, v_j)."""
        return float(fy_loss_sum / self.n_samples + self.lam * fy_reg_sum)

    def certificates(self, w, alpha, *, z, v, alpha_from_w=False):
        """(P(w), D(α), G(w, α)) from z = Xw and v = v(α), bit for bit :meth:`primal`, :meth:`dual` and
        :meth:`gap`, with the regulariser's four sums in one pass over w and v (``regularizer_sums``):
        what a checkpoint computes. ``alpha_from_w``: α is −φ'(z) (a primal method's dual point), whose
        logistic terms ``losses.certificate_sums_from_w`` computes with fewer transcendental functions, equal
        to those up to rounding."""
        w, alpha, v = self._check_w(w), self._check_alpha(alpha), self._check_w(v, "v")
        sq, ab, st_sq, fy_reg = regularizer_sums(w, v, self._l1_ratio)
        code, y, s = self.loss_code, self.y, self.s
        sums = L.certificate_sums_from_w if alpha_from_w else L.certificate_sums
        loss_sum, conj_sum, fy_sum = sums(code, z, alpha, y, s)
        return self._primal_from(loss_sum, sq, ab), self._dual_from(conj_sum, st_sq), self._gap_from(fy_sum, fy_reg)
