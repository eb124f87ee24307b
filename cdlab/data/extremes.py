"""Matrices at the extremes of the face-off quantities (Csiba & Richtárik, theory.md §4).

    C_P = Σ_j ‖f_j‖₀ ‖f_j‖²  (columns f_j),    C_D = Σ_i ‖x_i‖₀ ‖x_i‖²  (rows x_i)      (16)

Theorem 3 (no zero rows or columns): 1/d ≤ C_P/C_D ≤ n. `extreme_matrix` approaches both
ends; `binary_extreme` attains the minimum and the maximum of C_P and of C_D over binary
matrices with n rows, d columns and ω nonzeros, none of them empty (Theorem 4 and the
closed forms of theory.md §4).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._checks import check_choice, check_int, check_real, make_rng

EXTREME_KINDS = ("primal_worst", "dual_worst")
BINARY_WHICH = ("min_CP", "max_CP", "min_CD", "max_CD")


def _primal_worst(n: int, d: int, eps: float) -> sp.csr_matrix:
    # rows 1..n-1 hold a single 1 in column 0; row 0 holds eps in every column, which keeps
    # columns 1..d-1 nonempty while adding only d²ε² to C_D (its ‖x_0‖₀ = d is paid on ε² mass)
    rows = np.concatenate((np.zeros(d, dtype=np.int64), np.arange(1, n, dtype=np.int64)))
    cols = np.concatenate((np.arange(d, dtype=np.int64), np.zeros(n - 1, dtype=np.int64)))
    vals = np.concatenate((np.full(d, eps), np.ones(n - 1)))
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, d))
    X.sort_indices()
    return X


def extreme_matrix(n, d, kind: str = "primal_worst", eps: float = 1e-3) -> sp.csr_matrix:
    """An n×d matrix, no empty row or column, with C_P/C_D near n or near 1/d (Theorem 3).

    kind="primal_worst": column 0 carries the mass (X[i,0] = 1 for i ≥ 1), row 0 is ε in every
        column. Then C_P = n(n−1+ε²) + (d−1)ε², C_D = (n−1) + d²ε², so C_P/C_D → n as ε → 0
        when n ≥ 2 (for n = 1 the ratio is 1/d whatever ε: one row admits nothing else).
        Importance-sampled primal RCD pays C_P/(λγn) on top of nnz, dual RCD only C_D/(λγn).
    kind="dual_worst": the transpose pattern (row 0 carries the mass, column 0 is ε in every
        row): C_P = (d−1) + n²ε², C_D = d(d−1+ε²) + (n−1)ε², so C_P/C_D → 1/d when d ≥ 2.
    eps : float in (0, 1).
    """
    n = check_int("n", n)
    d = check_int("d", d)
    check_choice("kind", kind, EXTREME_KINDS)
    eps = check_real("eps", eps, low=0.0, high=1.0, low_open=True, high_open=True)
    if kind == "primal_worst":
        return _primal_worst(n, d, eps)
    return sp.csr_matrix(_primal_worst(d, n, eps).T)


def _check_omega(n: int, d: int, omega) -> int:
    omega = check_int("omega", omega)
    if not max(n, d) <= omega <= n * d:
        raise ValueError(f"omega={omega} nonzeros is infeasible for n={n}, d={d} with no empty row or column: "
                         f"need max(n, d) = {max(n, d)} ≤ omega ≤ n·d = {n * d}")
    return omega


def _min_cp_pattern(n: int, d: int, omega: int):
    # column counts a or a+1 (a = ⌊ω/d⌋): the even spread. Cells are laid out column after column
    # and row (k mod n) for the k-th cell: a column (≤ n cells) never meets a row twice, and the rows
    # get ⌊ω/n⌋ or ⌈ω/n⌉ cells, ≥ 1 as ω ≥ n. So this pattern is also at the minimum of C_D.
    a, r = divmod(omega, d)
    counts = np.full(d, a, dtype=np.int64)
    counts[:r] += 1
    cols = np.repeat(np.arange(d, dtype=np.int64), counts)
    rows = np.arange(omega, dtype=np.int64) % n
    return rows, cols


def _max_cp_pattern(n: int, d: int, omega: int):
    # t full columns, one column with 1 + ρ cells, d − t − 1 single cells (theory.md §4), placed so that
    # every row is hit: the full columns cover all rows when t ≥ 1; when t = 0 the column of 1 + ρ
    # covers rows 0..ρ and the singles take rows ρ+1, ρ+2, ... (ρ + d ≥ n because ω ≥ n).
    if n == 1:  # the closed form divides by n − 1; one row forces every column to hold exactly one cell
        return np.zeros(d, dtype=np.int64), np.arange(d, dtype=np.int64)
    t, rho = divmod(omega - d, n - 1)
    rows = [np.tile(np.arange(n, dtype=np.int64), t)]
    cols = [np.repeat(np.arange(t, dtype=np.int64), n)]
    if t < d:
        rows.append(np.arange(rho + 1, dtype=np.int64))
        cols.append(np.full(rho + 1, t, dtype=np.int64))
        singles = np.arange(t + 1, d, dtype=np.int64)
        rows.append((rho + 1 + np.arange(singles.size, dtype=np.int64)) % n)
        cols.append(singles)
    return np.concatenate(rows), np.concatenate(cols)


def binary_extreme(n, d, omega, which: str = "min_CP", seed=0, signed: bool = False) -> sp.csr_matrix:
    """A binary n×d matrix with omega nonzeros, no empty row or column, at an extreme of C_P or C_D.

    For binary data C_P = Σ_j ‖f_j‖₀² and C_D = Σ_i ‖x_i‖₀² (theory.md §4, Theorem 4).
    which : "min_CP"  column counts spread evenly: C_P = (d−r)a² + r(a+1)², a = ⌊ω/d⌋, r = ω − ad
                      (the rows are spread evenly too, so C_D is at its minimum as well);
            "max_CP"  t = ⌊(ω−d)/(n−1)⌋ full columns, one with 1+ρ, ρ = ω−d−t(n−1), the rest single:
                      C_P = t n² + (1+ρ)² + (d−t−1); for n = 1 the closed form is undefined and
                      C_P = ω = d (every column holds its one cell);
            "min_CD", "max_CD": the same with rows and columns (n and d) swapped.
    seed : rows and columns are randomly permuted (counts, hence C_P and C_D, are unchanged).
    signed : entries ±1 at random instead of 1 (C_P and C_D depend on squares only).
    """
    n = check_int("n", n)
    d = check_int("d", d)
    omega = _check_omega(n, d, omega)
    check_choice("which", which, BINARY_WHICH)
    if not isinstance(signed, (bool, np.bool_)):
        raise ValueError(f"signed must be True or False, got {signed!r}")
    rng = make_rng(seed)
    build = _min_cp_pattern if which.startswith("min") else _max_cp_pattern
    if which.endswith("CP"):
        rows, cols = build(n, d, omega)
    else:
        cols, rows = build(d, n, omega)  # C_D of X is C_P of Xᵀ
    rows, cols = rng.permutation(n)[rows], rng.permutation(d)[cols]
    vals = rng.choice(np.array([-1.0, 1.0]), size=omega) if signed else np.ones(omega)
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, d))
    X.sort_indices()
    return X
