"""``Data``: a checked (X, y) and every fact about it that solvers, the theory
layer, the page and the CLI read (theory.md §1, §4), computed once.

    data = Data(X, y)
    data.row_norms_sq, data.col_norms_sq       ‖x_i‖², ‖f_j‖²
    data.row_nnz, data.col_nnz, data.nnz       ‖x_i‖₀, ‖f_j‖₀
    data.n_nonempty_columns                    #{j : ‖f_j‖₀ > 0}, the columns with a nonzero
    data.frob_sq, data.R                       ‖X‖_F², max_i ‖x_i‖
    data.C_P, data.C_D                         face-off eq. (16)
    data.row_nnz_sq_sum                        Σ_i ‖x_i‖₀², the multiply-adds of XᵀDX over the rows (×2)
    data.xty, data.xty_norm_sq                 Xᵀy (Newton's start), ‖Xᵀy‖² (its gap at w = 0, a cost model's input)
    data.spectral_norm_sq, data.gram_min_eig   ‖X‖₂², λ_min(XᵀX)
    data.gram_bulk_estimate                    ≈ λ₂(XᵀX)/n from a sample of rows (cost models)
    data.csr_arrays, data.csc_arrays           X's arrays as the numba kernels take them
    data.one_value                             the value every nonzero of X shares (binary features), else None
    data.row_copies                            each example's first example of an equal row (None: all distinct)
    data.X_dense                               X as a dense row-major array where it is (nearly) dense, else None
    data.X_dense_f32                           X_dense rounded to float32 (the CG path's products, far gradients)

The linear-algebra facts are computed on first use and kept on the object;
a ``Problem`` holds its Data, and ``Problem.with_params`` shares it, so every
objective built on the same data reuses them. Nothing here depends on a loss
or on λ.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np
import scipy.sparse.linalg as spla
from numba import njit

from ._input import as_csr, as_labels, check_max_bytes, first_nonfinite
from ._rows import row_copies

# the largest d for which λ_min(XᵀX) is computed (a dense d×d eigenproblem)
GRAM_MIN_MAX_FEATURES = 3000
# the Gram matrix is formed densely when its smaller side is at most this
SPECTRAL_DENSE_MAX = 500
# ``gram_bulk_estimate``: power iterations on a sample of rows holding about SAMPLE_NNZ nonzeros (every row when
# X has no more), drawn by a generator seeded with SAMPLE_SEED; SAMPLE_ITERATIONS products XᵀXv for each of the
# Gram's top two directions
SAMPLE_NNZ = 20_000
SAMPLE_ITERATIONS = 6
SAMPLE_SEED = 0
# ``X_dense``: X is kept as a dense (n, d) array too where at least this share of its n·d entries is stored
# (the copy then costs at most 8/DENSE_MIN_DENSITY bytes a nonzero, and ``X_dense_f32`` 4/DENSE_MIN_DENSITY where
# the CG path builds it, within BYTES_PER_NONZERO's budget; where
# every entry is stored it is a view of the CSR values, no copy). A Hessian-vector product over madelon
# (2000 × 500) took 1.41 ms through the CSR arrays and 0.47 ms over the dense rows, over a dense 1e5 × 500
# 91 ms and 33 ms (``solvers._newton_cg``; one thread, best of 7): no index loads, contiguous rows.
DENSE_MIN_DENSITY = 0.9


@njit(cache=True, nogil=True)
def _shared_value(values):
    """values[0] where every entry equals it, else 0.0 (no stored entry of a canonical X is 0)."""
    first = values[0]
    for k in range(1, values.shape[0]):
        if values[k] != first:
            return 0.0
    return first


class cached_fact:
    """A fact computed on first use and kept on the instance: ``functools.cached_property``
    without the lock Python 3.11 holds per attribute *of the class* while computing, under which
    every Data's first read of a fact waits for any other Data computing it (one page session's
    ‖X‖₂² on large data would hold up every other session's). A fact is a pure function of the
    data, so two threads computing it at once store the same value."""

    def __init__(self, func):
        self.func = func
        self.__doc__ = func.__doc__

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = self.func(obj)
        obj.__dict__[self.name] = value  # the instance's entry now shadows this non-data descriptor
        return value


def unsigned_view(a):
    """``a`` (an index array: CSR's indptr or indices, a list of positions) as unsigned integers of its
    width, a view. numba indexes an array by a signed integer with a test for a negative (wrap-around)
    index, by an unsigned one without: SDCA's epoch ran 1.4–1.9× faster so (rcv1_small, w8a,
    reuters_moneyfx, madelon; ``benchmarks/kernel_bench.py``), bit for bit the same."""
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def kernel_arrays(M):
    """(indptr, indices, data) of the compressed matrix M, its index arrays as ``unsigned_view``s."""
    return unsigned_view(M.indptr), unsigned_view(M.indices), M.data


@njit(cache=True, nogil=True)
def _sampled_power_iterations(indptr, indices, data, n_features, rows, v, iterations, against):
    """The top eigenvalue of X_S X_Sᵀ (that of X_SᵀX_S) for the rows S = ``rows`` of the CSR X, approached from
    below by ``iterations`` power iterations from the unit vector v of length |S| (updated in place), in the
    row space: O(nnz(X_S) + |S|) an iteration, the d-long scratch reset on the sample's columns only. Each
    iterate is projected off the unit vector ``against`` (an eigenvector of X_S X_Sᵀ, or zeros): the top
    eigenvalue of the rest of the spectrum then."""
    m = rows.shape[0]
    t = np.zeros(n_features)
    u = np.empty(m)
    top = 0.0
    for _ in range(iterations):
        for k in range(m):
            i = rows[k]
            for p in range(indptr[i], indptr[i + 1]):
                t[indices[p]] += v[k] * data[p]
        acc = 0.0
        for k in range(m):
            i = rows[k]
            z = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                z += data[p] * t[indices[p]]
            u[k] = z
        c = 0.0
        for k in range(m):
            c += u[k] * against[k]
        for k in range(m):
            u[k] -= c * against[k]
            acc += u[k] * u[k]
        for k in range(m):
            i = rows[k]
            for p in range(indptr[i], indptr[i + 1]):
                t[indices[p]] = 0.0
        top = math.sqrt(acc)
        if top == 0.0:
            return 0.0
        for k in range(m):
            v[k] = u[k] / top
    return top


@njit(cache=True, nogil=True)
def _held_out_rayleigh(indptr, indices, data, n_features, rows, v, held_out):
    """uᵀ(X_HᵀX_H)u/|H| for the rows H = ``held_out`` of the CSR X and u = X_Sᵀv/‖X_Sᵀv‖, v a vector over the rows
    S = ``rows`` (their top eigenvector, from ``_sampled_power_iterations``): O(nnz(X_S) + nnz(X_H) + d)."""
    t = np.zeros(n_features)
    for k in range(rows.shape[0]):
        i = rows[k]
        for p in range(indptr[i], indptr[i + 1]):
            t[indices[p]] += v[k] * data[p]
    norm_sq = 0.0
    for j in range(n_features):
        norm_sq += t[j] * t[j]
    if norm_sq == 0.0:
        return 0.0
    acc = 0.0
    for k in range(held_out.shape[0]):
        i = held_out[k]
        z = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            z += data[p] * t[indices[p]]
        acc += z * z
    return acc / (norm_sq * held_out.shape[0])


@njit(cache=True, nogil=True)
def _row_and_column_sums(indptr, indices, data, n_features):
    """(‖x_i‖² per row, ‖f_j‖² per column, nonzeros per column, the index of the first non-finite stored value
    or −1) of a CSR X in one read of it, with no array the size of X: squaring X's values into a copy first
    and counting columns by np.bincount (which widens 32-bit indices to 64) each took 8 bytes a nonzero
    more at the peak of building a Problem, 400 MB at 5e7 nonzeros. Each sum adds its squares in storage
    order (a column's as scipy's product with a vector of ones did; a row's where scipy summed pairwise, so a
    row's norm may differ from that in its last bits); an overflow gives inf (``_check_norms`` refuses it)."""
    n = indptr.shape[0] - 1
    rows = np.zeros(n)
    cols = np.zeros(n_features)
    counts = np.zeros(n_features, np.int64)
    first_bad = -1
    for i in range(n):
        acc = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            x = data[p]
            if first_bad < 0 and not np.isfinite(x):
                first_bad = p
            square = x * x
            acc += square
            j = indices[p]
            cols[j] += square
            counts[j] += 1
        rows[i] = acc
    return rows, cols, counts, first_bad


def _check_norms(row_norms_sq, col_norms_sq):
    """Refuse data whose squared norms overflow float64."""
    for norms, what in ((row_norms_sq, "row"), (col_norms_sq, "column")):
        if not np.all(np.isfinite(norms)):
            k = int(np.argmax(~np.isfinite(norms)))
            raise ValueError(f"X is too large in scale for float64: the squared norm of {what} {k} overflows; "
                             "rescale X")
    if not np.isfinite(row_norms_sq.sum()):
        raise ValueError("X is too large in scale for float64: its squared Frobenius norm overflows; rescale X")


class Data:
    """The data of a problem: X (n × d) and y (n), copied and checked.

    Parameters
    ----------
    X, y, max_bytes : as for :class:`cdlab.Problem` (which builds its Data from them).

    The user's X and y are copied, never modified; the copy of X is
    canonical (CSR, sorted indices, duplicates summed, no explicit zeros).
    """

    def __init__(self, X, y, max_bytes=None):
        self.max_bytes = check_max_bytes(max_bytes)
        X = as_csr(X, self.max_bytes)
        n, d = X.shape
        if n == 0 or d == 0:
            raise ValueError(f"X is empty (shape {X.shape})")
        row_norms_sq, col_norms_sq, col_nnz, first_bad = _row_and_column_sums(*kernel_arrays(X), d)
        if first_bad >= 0:
            raise ValueError(f"X contains {first_nonfinite(X)}")
        if X.nnz == 0:
            # nothing to learn, and a pass (nnz nonzeros touched) would be undefined
            raise ValueError(f"X has no nonzero entries (shape {X.shape}): every example is zero")
        self.y = as_labels(y, n)
        _check_norms(row_norms_sq, col_norms_sq)

        self.X = X
        self.n_samples, self.n_features = n, d
        self.nnz = int(X.nnz)
        self.row_nnz = np.diff(X.indptr).astype(np.int64)
        self.col_nnz = col_nnz
        self.n_nonempty_columns = int(np.count_nonzero(self.col_nnz))
        self.row_norms_sq, self.col_norms_sq = row_norms_sq, col_norms_sq
        self.frob_sq = float(self.row_norms_sq.sum())
        self.R = float(np.sqrt(self.row_norms_sq.max()))

    @cached_fact
    def X_csc(self):
        """X in CSC (sorted indices): built on first use and kept, for the methods that read
        columns (``MethodSpec.axis == "features"``). It doubles X's memory, so nothing that
        reads rows only (the dual methods, the certificates, Xᵀα as ``X.T @ α``) asks for it."""
        Xc = self.X.tocsc()
        Xc.sort_indices()
        return Xc

    @cached_fact
    def full_rows_share(self) -> float:
        """The share of rows with every entry stored (d nonzeros): the kernels for full rows run where
        it is large (``solvers._kernels.full_rows``)."""
        return float(np.count_nonzero(self.row_nnz == self.n_features)) / self.n_samples

    @cached_fact
    def one_value(self):
        """The value every stored entry of X shares (X = c·B for a 0/1 pattern B, as one-hot or binary features
        scaled by one number), or None where two differ: the sparse row kernels then read X's indices alone
        (``solvers._kernels.row_arrays``). One pass over the values where they are all equal, else it stops at the
        first that differs."""
        value = _shared_value(self.X.data)
        return None if value == 0.0 else value

    @property
    def is_dense(self) -> bool:
        """Whether X is kept as dense rows too (``X_dense``): at least DENSE_MIN_DENSITY of its entries stored."""
        return self.nnz >= DENSE_MIN_DENSITY * self.n_samples * self.n_features

    @cached_fact
    def X_dense(self):
        """X as a C-contiguous dense (n, d) float64 array where at least DENSE_MIN_DENSITY of its entries are
        stored, else None: a view of the CSR values (read-only, no copy) where every entry is stored, since
        the canonical CSR then holds row i's values at i·d … i·d + d − 1 in column order; a copy otherwise."""
        n, d = self.n_samples, self.n_features
        if not self.is_dense:
            return None
        if self.nnz == n * d:
            view = self.X.data.reshape(n, d)
            view.flags.writeable = False
            return view
        out = self.X.toarray()
        out.flags.writeable = False
        return out

    @cached_fact
    def X_dense_f32(self):
        """``X_dense`` rounded to float32 (read-only; 4 bytes an entry, a copy), or None where X is not kept dense:
        for sweeps whose result is itself an approximation (the Hessian-vector products of Newton–CG and of the squared
        loss's CG, refined on ``X_dense`` where its solution does not certify: ``solvers.newton.product_rows``; the
        gradients of Newton–CG's steps far from the optimum: ``solvers.newton.NewtonState._gradient_rounds``), never
        for a certificate."""
        if self.X_dense is None:
            return None
        out = self.X_dense.astype(np.float32)
        out.flags.writeable = False
        return out

    @cached_fact
    def csr_arrays(self):
        """X's CSR arrays as every row-reading kernel takes them (``kernel_arrays``: views, no copy)."""
        return kernel_arrays(self.X)

    @cached_fact
    def csc_arrays(self):
        """``X_csc``'s arrays as the column-reading kernels take them (``kernel_arrays``)."""
        return kernel_arrays(self.X_csc)

    @property
    def shape(self):
        return self.n_samples, self.n_features

    def __repr__(self):
        return f"Data(n={self.n_samples}, d={self.n_features}, nnz={self.nnz})"

    # ------------------------------------------------------------ face-off (16)
    @cached_fact
    def C_P(self) -> float:
        """C_P = Σ_j ‖f_j‖₀ ‖f_j‖² (face-off eq. 16)."""
        return float(self.col_nnz @ self.col_norms_sq)

    @cached_fact
    def C_D(self) -> float:
        """C_D = Σ_i ‖x_i‖₀ ‖x_i‖² (face-off eq. 16)."""
        return float(self.row_nnz @ self.row_norms_sq)

    @cached_fact
    def row_nnz_sq_sum(self) -> float:
        """Σ_i ‖x_i‖₀² (int64: exact, and no BLAS call, whose idle threads a call may wait on), twice the
        multiply-adds of a sparse sweep forming XᵀDX: a cost model's input (``solvers.newton.hessian_ns``), read
        several times by each Newton or auto call."""
        return float(self.row_nnz @ self.row_nnz)

    def has_fact(self, name) -> bool:
        """Whether the cached fact ``name`` (a ``cached_fact`` of this class) has been computed for this Data."""
        return name in self.__dict__

    @cached_fact
    def xty(self):
        """Xᵀy (read-only; one read of X), summed row by row in X's storage order (scipy's product with Xᵀ, a CSC
        view), as a serial certificate sweep sums Xᵀα: at w = 0 the logistic, squared and smoothed hinge losses'
        α(0) = −φ'(0) is a multiple of y, so Newton's start certifies from it (``solvers.newton.NewtonState.
        _sums_at_zero``, which counts the read where it is the first to ask)."""
        xty = self.X.T @ self.y
        xty.flags.writeable = False
        return xty

    @cached_fact
    def xty_norm_sq(self) -> float:
        """‖Xᵀy‖² (``xty``): with labels ±1 the logistic loss's duality gap at w = 0 is ‖Xᵀy‖²/(8λn²)
        (``solvers.newton.logistic_start_gap``)."""
        return float(self.xty @ self.xty)

    @cached_fact
    def row_copies(self):
        """For each example the first example whose row is equal to its own (the same columns and values; itself
        where there is none), or None where all rows are distinct (``_rows``: one read of X, not counted in a
        solver's passes, like ‖x_i‖²). SDCA's polish moves the examples of equal rows and labels as one
        (``solvers._face_cr.groups``)."""
        return row_copies(*self.csr_arrays)

    # ------------------------------------------------------------ spectrum
    @cached_fact
    def spectral_norm_sq(self) -> float:
        """‖X‖₂² (largest eigenvalue of XᵀX), padded by 1e-9 relative so that it is
        an upper bound despite the eigen-solver's tolerance."""
        X = self.X
        n, d = X.shape
        if min(n, d) <= SPECTRAL_DENSE_MAX:  # the smaller Gram matrix, formed sparse, is small and dense
            G = (X @ X.T) if n <= d else (X.T @ X)
            val = float(np.linalg.eigvalsh(G.toarray())[-1])
        else:
            op = spla.LinearOperator((d, d), matvec=lambda v: X.T @ (X @ v), dtype=float)
            val = float(spla.eigsh(op, k=1, which="LA", tol=1e-10, return_eigenvectors=False)[0])
        return val * (1 + 1e-9)

    @cached_fact
    def gram_bulk_estimate(self) -> float:
        """An estimate of λ₂(XᵀX)/n, the top of XᵀX/n's spectrum once its largest eigenvalue is set aside (an
        outlier, such as the rows' mean direction, that conjugate gradients clear in one product: Nocedal &
        Wright 2006, §5.1), for cost models only (never a bound a result rests on); at most ‖X‖_F²/n.
        SAMPLE_ITERATIONS power iterations from a seeded random start find the top direction of the Gram of
        rows S, then as many, each iterate projected off it, the next one, u. On X of at most SAMPLE_NNZ
        nonzeros (or fewer than 4 rows) S is every row and the estimate is ‖X_S u‖²/n (heart_scale: 1.06 λ₂, the top
        direction found in six iterations not quite set aside). On larger X, m rows drawn without replacement
        (about SAMPLE_NNZ nonzeros) are split in two halves, S and H, and the estimate is H's Rayleigh quotient
        ‖X_H u‖²/|H|, whose expectation is uᵀ(XᵀX/n)u: a sample's own eigenvalues overestimate an isotropic Gram's
        by about (1 + √(d/m))² for m rows (dense 1e5 × 500: the 40 rows' top eigenvalue 16× λ₁), the held-out
        half's do not. 0 where S has no second direction (one row, or rows along one line). A few hundred
        thousand multiply-adds however large X is (beyond SAMPLE_NNZ nonzeros on fewer than 4 rows: 24 sweeps)."""
        n, d = self.n_samples, self.n_features
        rng = np.random.default_rng(SAMPLE_SEED)
        if self.nnz <= SAMPLE_NNZ or n < 4:
            rows = held_out = np.arange(n)
        else:
            m = max(4, min(n, int(n * SAMPLE_NNZ / self.nnz)))
            drawn = rng.choice(n, size=m, replace=False)
            rows, held_out = np.sort(drawn[:m // 2]), np.sort(drawn[m // 2:])
        if rows.shape[0] < 2:
            return 0.0
        top = rng.standard_normal(rows.shape[0])
        top /= np.linalg.norm(top)
        first = _sampled_power_iterations(*self.csr_arrays, d, rows, top, SAMPLE_ITERATIONS, np.zeros_like(top))
        second = rng.standard_normal(rows.shape[0])
        second -= (second @ top) * top
        norm = np.linalg.norm(second)
        if not (first > 0.0 and norm > 0.0):
            return 0.0
        second /= norm
        if _sampled_power_iterations(*self.csr_arrays, d, rows, second, SAMPLE_ITERATIONS, top) <= 1e-12 * first:
            return 0.0  # rank one: the second direction is rounding
        return min(_held_out_rayleigh(*self.csr_arrays, d, rows, second, held_out), self.frob_sq / n)

    @cached_fact
    def gram_min_eig(self) -> float:
        """λ_min(XᵀX) (0 whenever d > n), floored at 0. Raises ValueError when
        d > GRAM_MIN_MAX_FEATURES ≤ n (too costly; not cached, so it raises each time)."""
        n, d = self.X.shape
        if d > n:
            return 0.0
        if d > GRAM_MIN_MAX_FEATURES:
            raise ValueError(f"λ_min(XᵀX) for d = {d} features is too costly here; pass mu_F=... explicitly")
        X = self.X
        return max(float(np.linalg.eigvalsh((X.T @ X).toarray())[0]), 0.0)

    # ------------------------------------------------------------ identity
    def hash_update(self, h):
        """Feed the data's arrays into a hashlib object (the content part of a content hash)."""
        for arr in (self.X.indptr, self.X.indices, self.X.data, self.y):
            h.update(np.ascontiguousarray(arr).tobytes())

    @cached_fact
    def _digest(self) -> str:
        h = hashlib.sha256()
        self.hash_update(h)
        # the tail Problem.content_hash adds for squared loss, λ = μ = 0, s = 1: store keys
        # made from that problem's hash before Data existed stay valid
        h.update(repr((self.shape, "squared", 0.0, 0.0, 1.0)).encode())
        return h.hexdigest()[:32]

    def content_hash(self) -> str:
        """A hash of X and y (the store's data fingerprint)."""
        return self._digest
