"""Synthetic sparse data with controlled shape, density, skew, values, labels and scaling.

The sparsity pattern is built from two target sequences of nonzero counts, one
for the rows and one for the columns (`power_law_counts`), realised as a random
0/1 matrix with exactly those margins (`_realize`). The face-off paper
(Csiba & Richtárik, Sections 4-7) shows that what decides primal against dual
coordinate descent is how the nonzeros spread over columns versus rows
(C_P = Σ_j ‖f_j‖₀‖f_j‖², C_D = Σ_i ‖x_i‖₀‖x_i‖², theory.md §4): the two skews
are therefore separate knobs.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._checks import check_choice, check_int, check_real, make_rng

VALUES = ("gaussian", "binary", "uniform")
LABELS = ("linear", "random", "regression")
NORMALIZE = ("none", "rows", "mean")
# the face-off experiments' scaling (rows divided by the mean example norm, theory.md §4): the default of the
# page and of `cdlab faceoff`
FACEOFF_NORMALIZE = "mean"


def power_law_counts(total: int, size: int, cap: int, exponent: float, rng, lower: int = 1) -> np.ndarray:
    """Integer counts summing to `total`, following Zipf's rank-size law, in random order.

    The k-th largest count (k = 1..size) is round(clip(s·k^(−exponent), lower, cap)), the
    scale s chosen so that the counts sum to `total` (the rounding keeps the sum exact and
    the bounds). exponent = 0 gives equal counts (they differ by at most 1); exponent 1 makes
    the k-th largest count ∝ 1/k; larger exponents concentrate the nonzeros further.
    """
    if not lower * size <= total <= cap * size:
        raise ValueError(f"cannot spread {total} nonzeros over {size} lines with {lower}..{cap} each")
    log_shape = -exponent * np.log(np.arange(1, size + 1, dtype=np.float64))

    def spread(log_scale):  # in log space so that large exponents underflow to 0 instead of overflowing
        return np.clip(np.exp(log_scale + log_shape), lower, cap)

    # at lo every count is ≤ max(total/size, lower), so the sum is ≤ total; at hi every count is at the cap
    lo, hi = np.log(total / size), np.log(cap) + exponent * np.log(size)
    for _ in range(200):  # bisection: the clipped sum is continuous and nondecreasing in the scale
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if spread(mid).sum() <= total else (lo, mid)
        if hi - lo <= 1e-13:
            break
    real = spread(lo)  # the lower end, so that the floors never exceed the total
    counts = np.floor(real).astype(np.int64)
    # hand the missing units to the largest fractional parts among counts still below the cap
    by_fraction = np.lexsort((np.arange(size), -(real - counts)))
    while (missing := total - int(counts.sum())) > 0:
        eligible = by_fraction[counts[by_fraction] < cap]
        counts[eligible[:missing]] += 1
    return counts[rng.permutation(size)]


def _duplicates(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions holding a second (third, ...) copy of a key, and the sorted distinct keys."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    repeat = sorted_keys[1:] == sorted_keys[:-1]
    return order[1:][repeat], sorted_keys[np.concatenate(([True], ~repeat))]


def _absent(candidates: np.ndarray, distinct_sorted: np.ndarray) -> np.ndarray:
    at = np.searchsorted(distinct_sorted, candidates)
    at = np.minimum(at, distinct_sorted.size - 1)
    return distinct_sorted[at] != candidates


def _first_mask(values: np.ndarray) -> np.ndarray:
    """True at the first occurrence of each value in `values`."""
    mask = np.zeros(values.size, dtype=bool)
    mask[np.unique(values, return_index=True)[1]] = True
    return mask


def _realize(row_counts: np.ndarray, col_counts: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """A random 0/1 pattern (rows, cols) with exactly these row counts and, whenever the repair
    below succeeds (it needs the pair of sequences to be realisable, Gale-Ryser, and stops when it
    stalls), exactly these column counts.

    Configuration model: pair row "stubs" with shuffled column stubs. A repeated cell (i, j) is
    repaired by a degree-preserving swap (i,j),(i',j') -> (i,j'),(i',j) with a partner drawn from a
    row i' that lacks column j, or from a column j' that row i lacks (`_partners`): random partners
    almost never fit when column j or row i is nearly full. Cells the swaps cannot place are moved,
    within their row, to a random free column: row counts stay exact always.
    """
    n, d = row_counts.size, col_counts.size
    rows = np.repeat(np.arange(n, dtype=np.int64), row_counts)  # stays sorted: swaps exchange columns
    cols = np.repeat(np.arange(d, dtype=np.int64), col_counts)[rng.permutation(int(col_counts.sum()))]
    if rows.size == 0:
        return rows, cols
    patience = 2
    while patience > 0:
        dup, distinct = _duplicates(rows * d + cols)
        if dup.size == 0:
            return rows, cols
        q = _partners(rows, cols, dup, row_counts, col_counts, distinct, rng)
        p, q = dup[q >= 0], q[q >= 0]
        new_p, new_q = rows[p] * d + cols[q], rows[q] * d + cols[p]
        ok = ((rows[p] != rows[q]) & (cols[p] != cols[q])
              & _absent(new_p, distinct) & _absent(new_q, distinct))
        p, q, new_p, new_q = p[ok], q[ok], new_p[ok], new_q[ok]
        # swaps of one round must not share a position or create the same cell: first come, first served
        first = _first_mask(np.concatenate((p, q))) & _first_mask(np.concatenate((new_p, new_q)))
        ok = first[: p.size] & first[p.size:]
        p, q = p[ok], q[ok]
        cols[p], cols[q] = cols[q], cols[p].copy()
        if p.size < 0.2 * dup.size:  # stalling: the targets are (nearly) not realisable together
            patience -= 1
    dup, _ = _duplicates(rows * d + cols)
    if dup.size <= _EXHAUSTIVE_LIMIT:
        _exhaustive_swaps(rows, cols, dup, row_counts, n, d, rng)
    _move_to_free_columns(rows, cols, row_counts, d, rng)
    return rows, cols


_EXHAUSTIVE_LIMIT = 200  # each exhaustive repair reads all nonzeros once: afford a few hundred


def _exhaustive_swaps(rows, cols, dup, row_counts, n, d, rng) -> None:
    """For each repeated cell (i, j) left when random partners stall, look at every nonzero for a
    partner (i', j') with row i lacking j' and row i' lacking j, and swap if one exists."""
    starts = _starts(row_counts)
    for p in dup:
        i, j = rows[p], cols[p]
        in_row = np.zeros(d, dtype=bool)
        in_row[cols[starts[i]:starts[i + 1]]] = True
        has_j = np.zeros(n, dtype=bool)
        has_j[rows[cols == j]] = True
        fits = np.flatnonzero(~in_row[cols] & ~has_j[rows])
        if fits.size:
            q = fits[rng.integers(fits.size)]
            cols[p], cols[q] = cols[q], j


def _starts(counts: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(counts)))


def _kth_free(group_of, value_of, n_groups, n_values, queries, rng) -> np.ndarray:
    """For each group in `queries`, a random value of [0, n_values) that the group does not hold
    (-1 if it holds them all), distinct across queries of one group while there are enough free
    values. (group_of, value_of) are the distinct (group, value) pairs, sorted."""
    held = np.bincount(group_of, minlength=n_groups)
    start = _starts(held)
    # the k-th free value of a group is k + #{t : v_t − t ≤ k}, v_0 < v_1 < ... its held values
    # (v_t − t counts the free values below v_t); v_t − t is nondecreasing, so one searchsorted
    # over all groups at once answers every query
    shifted = group_of * (n_values + 1) + value_of - (np.arange(group_of.size) - start[group_of])
    free = n_values - held[queries]
    # queries of one group take consecutive free values from a random offset, so that they differ
    order = np.argsort(queries, kind="stable")
    rank = np.empty(queries.size, dtype=np.int64)
    rank[order] = np.arange(queries.size) - np.searchsorted(queries[order], queries[order])
    offset = np.floor(rng.random(n_groups) * (n_values - held)).astype(np.int64)
    k = (offset[queries] + rank) % np.maximum(free, 1)
    t = np.searchsorted(shifted, queries * (n_values + 1) + k, side="right") - start[queries]
    return np.where(free > 0, k + t, -1)


def _partners(rows, cols, dup, row_counts, col_counts, distinct, rng) -> np.ndarray:
    """A swap partner (an edge position, -1 if none) for each repeated cell (i, j): an edge of a row
    lacking column j, or of a column that row i lacks."""
    n, d = row_counts.size, col_counts.size
    rows_d, cols_d = np.divmod(distinct, d)
    q = np.full(dup.size, -1, dtype=np.int64)
    # the partner must come from the side where a free slot is rare: a row lacking the column when the
    # column is the fuller of the two (a random partner would itself hold that column), else a column
    fill_col = np.bincount(cols_d, minlength=d) / n
    fill_row = np.bincount(rows_d, minlength=n) / d
    by_row = fill_col[cols[dup]] >= fill_row[rows[dup]]
    at = np.flatnonzero(by_row)
    if at.size:
        col_major = np.sort(cols_d * n + rows_d)
        other = _kth_free(col_major // n, col_major % n, d, n, cols[dup[at]], rng)
        ok = other >= 0
        ok[ok] = row_counts[other[ok]] > 0
        other = other[ok]
        q[at[ok]] = _starts(row_counts)[other] + np.floor(rng.random(other.size) * row_counts[other]).astype(np.int64)
    at = np.flatnonzero(~by_row)
    if at.size:
        other = _kth_free(rows_d, cols_d, n, d, rows[dup[at]], rng)
        ok = other >= 0
        ok[ok] = col_counts[other[ok]] > 0
        other = other[ok]
        by_col = np.argsort(cols, kind="stable")
        q[at[ok]] = by_col[_starts(col_counts)[other]
                           + np.floor(rng.random(other.size) * col_counts[other]).astype(np.int64)]
    return q


def _move_to_free_columns(rows, cols, row_counts, d, rng) -> None:
    """Give every repeated cell a column its row does not use yet (in place, row by row)."""
    dup, _ = _duplicates(rows * d + cols)
    if dup.size == 0:
        return
    dup = dup[np.argsort(rows[dup], kind="stable")]
    starts = _starts(row_counts)  # rows is sorted: row i is rows[starts[i]:starts[i+1]]
    for where in np.split(dup, np.flatnonzero(np.diff(rows[dup])) + 1):
        i = rows[where[0]]
        cols[where] = _free_columns(np.unique(cols[starts[i]:starts[i + 1]]), where.size, d, rng)


def _free_columns(used, k, d, rng) -> np.ndarray:
    """k distinct columns drawn uniformly from those not in `used` (sorted)."""
    if used.size + k > d // 2:
        return rng.choice(np.setdiff1d(np.arange(d), used, assume_unique=True), size=k, replace=False)
    found = np.empty(0, dtype=np.int64)  # sparse row: rejection is cheaper than listing the free columns
    while found.size < k:
        draws = rng.integers(0, d, size=2 * k + 8)
        found = np.union1d(found, draws[~np.isin(draws, used)])
    return rng.choice(found, size=k, replace=False)


def _fill_empty_columns(rows, cols, d, rng) -> None:
    """Move one nonzero into each empty column, taken from a column holding ≥ 2 (row counts kept)."""
    counts = np.bincount(cols, minlength=d)
    for j in np.flatnonzero(counts == 0):
        donors = np.flatnonzero(counts[cols] >= 2)
        k = donors[rng.integers(donors.size)]
        counts[cols[k]] -= 1
        cols[k] = j
        counts[j] = 1


def _pattern(n, d, nnz, row_skew, col_skew, allow_empty, rng):
    lower = 0 if allow_empty else 1
    r = power_law_counts(nnz, n, d, row_skew, rng, lower)
    c = power_law_counts(nnz, d, n, col_skew, rng, lower)
    if 2 * nnz <= n * d:
        rows, cols = _realize(r, c, rng)
    else:
        # dense: realise the (sparser) zero pattern, whose margins are d − r and n − c, and complement it
        zr, zc = _realize(d - r, n - c, rng)
        mask = np.ones((n, d), dtype=bool)
        mask[zr, zc] = False
        rows, cols = np.nonzero(mask)
    if not allow_empty:
        _fill_empty_columns(rows, cols, d, rng)
    return rows, cols


def _values(kind, size, rng):
    if kind == "gaussian":
        v = rng.standard_normal(size)
    elif kind == "binary":
        return rng.choice(np.array([-1.0, 1.0]), size=size)
    else:
        v = rng.uniform(-1.0, 1.0, size)
    # a drawn exact 0 would silently change the pattern: redraw it (probability ~1e-16 per entry)
    while np.any(v == 0.0):
        v[v == 0.0] = _values(kind, int(np.sum(v == 0.0)), rng)
    return v


def normalize_data(X, how: str = "rows") -> sp.csr_matrix:
    """A rescaled float64 CSR copy of X (X itself is not modified).

    how : "none" (copy), "rows" (every nonzero row scaled to unit L2 norm; zero rows stay 0),
          "mean" (X divided by the mean example norm R̄ = mean_i ‖x_i‖, so that R̄ becomes 1:
          the scaling of the face-off paper's experiments, Csiba & Richtárik Section 7).
    """
    check_choice("normalize", how, NORMALIZE)
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"cannot normalise an empty matrix of shape {X.shape}")
    if not np.all(np.isfinite(X.data)):
        raise ValueError("X holds NaN or inf")
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    if how == "rows":
        scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        X.data *= np.repeat(scale, np.diff(X.indptr))
    elif how == "mean":
        mean_norm = norms.mean()
        if mean_norm == 0:
            raise ValueError("cannot divide by the mean example norm: X is zero")
        X.data /= mean_norm
    return X


def planted_labels(X, kind: str = "linear", noise: float = 0.1, seed=0, return_coef: bool = False):
    """Labels from a planted linear model w* ~ N(0, I_d), margins z = X w*.

    kind : "linear"     y = sign(z + noise·σ_z·ξ) ∈ {−1, +1} (sign(0) := +1), ξ ~ N(0, 1) i.i.d.,
                        σ_z the standard deviation of z (1 if z is constant), so `noise` is
                        relative: for Gaussian z a label flips with probability arctan(noise)/π;
           "regression" y = z + noise·σ_z·ξ;
           "random"     y = ±1 with probability 1/2 each, independent of X.
    X is not modified. With return_coef, returns (y, w*).
    """
    check_choice("labels", kind, LABELS)
    noise = check_real("noise", noise, low=0.0)
    rng = make_rng(seed)
    X = X if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
    if not np.all(np.isfinite(X.data if sp.issparse(X) else X)):
        raise ValueError("X holds NaN or inf")
    n, d = X.shape
    w_star = rng.standard_normal(d)
    z = np.asarray(X @ w_star, dtype=np.float64).ravel()
    sigma = z.std() if z.std() > 0 else 1.0
    xi = rng.standard_normal(n)
    if kind == "random":
        y = rng.choice(np.array([-1.0, 1.0]), size=n)
    elif kind == "regression":
        y = z + noise * sigma * xi
    else:
        y = np.where(z + noise * sigma * xi >= 0.0, 1.0, -1.0)
    return (y, w_star) if return_coef else y


def make_synthetic(n_samples, n_features, density=1.0, row_skew=0.0, col_skew=0.0, values="gaussian",
                   labels="linear", noise=0.1, normalize="none", seed=0, allow_empty=False):
    """Random sparse data X (CSR float64) and labels y with controlled structure.

    Parameters
    ----------
    n_samples, n_features : int ≥ 1
        n and d.
    density : float in (0, 1]
        nnz = round(density·n·d) exactly. Without allow_empty it must give nnz ≥ max(n, d).
    row_skew, col_skew : float ≥ 0
        Power-law exponents of the row and of the column nonzero counts, separately: the k-th
        fullest row holds ∝ k^(−row_skew) nonzeros (Zipf's rank-size law), clipped to
        [1, n_features] and rounded to sum to nnz (`power_law_counts`); the same for the columns
        with col_skew and [1, n_samples]. 0 = uniform (all rows equal up to 1; likewise columns).
        Row counts are always exact. Column counts are exact unless the repair of the random
        pairing stalls, which happens when the two sequences cannot (or only barely) coexist in
        one 0/1 matrix (e.g. k full rows force every column to hold ≥ k nonzeros); then the
        nonzeros it could not place move to random free columns of their row.
        Which rows and columns are the full ones is random.
    values : "gaussian" (N(0,1)), "binary" (±1, equal odds) or "uniform" (U(−1, 1))
    labels, noise : the label model of `planted_labels`, applied to the returned (normalised) X.
    normalize : "none", "rows" (unit rows) or "mean" (divide by the mean example norm), see `normalize_data`.
    seed : int ≥ 0 or numpy Generator; equal seeds give equal data.
    allow_empty : bool
        If True, counts are clipped to [0, ·] instead of [1, ·], so the sparsest rows and
        columns may be empty; otherwise every row and column holds a nonzero.

    Returns
    -------
    X : scipy.sparse.csr_matrix (float64, sorted indices), y : float64 array (±1 unless regression)
    """
    n = check_int("n_samples", n_samples)
    d = check_int("n_features", n_features)
    density = check_real("density", density, low=0.0, high=1.0, low_open=True)
    row_skew = check_real("row_skew", row_skew, low=0.0)
    col_skew = check_real("col_skew", col_skew, low=0.0)
    check_choice("values", values, VALUES)
    check_choice("labels", labels, LABELS)
    noise = check_real("noise", noise, low=0.0)
    check_choice("normalize", normalize, NORMALIZE)
    if not isinstance(allow_empty, (bool, np.bool_)):
        raise ValueError(f"allow_empty must be True or False, got {allow_empty!r}")
    rng = make_rng(seed)
    nnz = int(round(density * n * d))
    need = 1 if allow_empty else max(n, d)
    if nnz < need:
        raise ValueError(
            f"density={density} gives nnz={nnz} for n={n}, d={d}, but {need} nonzeros are needed "
            + ("(the matrix would be empty)" if allow_empty else
               f"to leave no row or column empty: use density ≥ {need / (n * d):.3g} or allow_empty=True"))
    rows, cols = _pattern(n, d, nnz, row_skew, col_skew, bool(allow_empty), rng)
    X = sp.csr_matrix((_values(values, rows.size, rng), (rows, cols)), shape=(n, d))
    X.sort_indices()
    X = normalize_data(X, normalize)
    y = planted_labels(X, labels, noise, rng)
    return X, y
