"""Facts of the papers that sympy checks symbolically (theory.md §4–5).

* ``iid_ratio()``: for i.i.d. dense entries with mean m and variance s²,
  E C_P / E C_D simplifies to n/d (face-off §6.1); ``sparse_iid_ratio()``
  does the same with a Bernoulli(ρ) mask, where the ratio is
  (1 + ρ(n − 1))/(1 + ρ(d − 1)) — n/d only when ρ = 1.
* ``total_work(...)``: the face-off's total work W(p) = max_j v_j/p_j ·
  Σ_j p_j c_j of a serial sampling p (Theorem 1 × eq. 10). Theorem 2:
  importance sampling p ∝ v minimises it, because for every p
  W(p) = Σ_j p_j c_j · max_k v_k/p_k ≥ Σ_j p_j c_j v_j/p_j = W(p_imp).
  ``theorem2_gap()`` states W(p) − W(p_imp) symbolically.
* ``spdc_vs_sdca()``: SPDC's batch complexity 1 + sqrt(κ/n) (m = 1) against
  SDCA's 1 + κ/n: they cross at κ = n, and SPDC is smaller exactly when κ > n.
"""
from __future__ import annotations

import numpy as np
import sympy as sp
from sympy.stats import Bernoulli, E, Normal

from .symbols import SYMBOLS


def iid_ratio():
    """(E C_P, E C_D, simplified E C_P / E C_D) for i.i.d. dense entries ~ N(m, s²).

    Only the first two moments enter: E‖f_j‖₀‖f_j‖² = n · n E[X²] for a dense
    column, E[X²] = m² + s² computed by sympy.stats."""
    n, d = SYMBOLS["n"], SYMBOLS["d"]
    m, s = sp.symbols("m s", positive=True)
    ex2 = sp.simplify(E(Normal("X", m, s) ** 2))
    EC_P = d * n * (n * ex2)
    EC_D = n * d * (d * ex2)
    return EC_P, EC_D, sp.simplify(EC_P / EC_D)


def sparse_iid_ratio():
    """E C_P / E C_D for entries B·V, B ~ Bernoulli(ρ), V ~ N(m, s²), independent.

    ‖f_j‖₀‖f_j‖² = Σ_i Σ_k B_i B_k V_k²: the n diagonal terms have mean ρE[V²],
    the n(n−1) others ρ²E[V²]."""
    n, d = SYMBOLS["n"], SYMBOLS["d"]
    m, s = sp.symbols("m s", positive=True)
    rho = sp.Symbol(r"\rho", positive=True)
    B1, B2, V = Bernoulli("B1", rho), Bernoulli("B2", rho), Normal("V", m, s)
    same = E(B1 * B1 * V ** 2)
    cross = E(B1 * B2 * V ** 2)
    EC_P = d * (n * same + n * (n - 1) * cross)
    EC_D = n * (d * same + d * (d - 1) * cross)
    return sp.simplify(EC_P / EC_D)


def total_work(norms_sq, counts, probs, lam, gamma, n_samples):
    """Face-off total work of a serial sampling: iterations (Thm 1, no log
    factor) × expected cost per step (eq. 10/11), in nonzeros.

    ``norms_sq`` and ``counts`` are ‖f_j‖², ‖f_j‖₀ (primal) or ‖x_i‖², ‖x_i‖₀ (dual)."""
    c = lam * gamma * n_samples
    probs = np.asarray(probs, dtype=float)
    v = (np.asarray(norms_sq, dtype=float) + c) / c
    return float(np.max(v / probs) * (probs @ np.asarray(counts, dtype=float)))


def theorem2_gap(size=3):
    """W(p) − W(p_imp) for a generic sampling p of ``size`` coordinates whose
    ratio v_j/p_j is largest at j = 0, written as Σ_j p_j c_j (v_0/p_0 − v_j/p_j):
    a sum of non-negative terms (sympy returns the identity as True when the
    two forms agree)."""
    p = sp.symbols(f"p0:{size}", positive=True)
    v = sp.symbols(f"v0:{size}", positive=True)
    c = sp.symbols(f"c0:{size}", positive=True)
    W_p = (v[0] / p[0]) * sum(pj * cj for pj, cj in zip(p, c))
    W_imp = sum(vj * cj for vj, cj in zip(v, c))  # importance: v_j/p_j constant = Σ v
    as_terms = sum(p[j] * c[j] * (v[0] / p[0] - v[j] / p[j]) for j in range(size))
    return sp.simplify(W_p - W_imp - as_terms) == 0, as_terms


def spdc_vs_sdca():
    """SPDC vs SDCA batch complexity (m = 1): the crossover κ and where SPDC wins.

    Returns (the positive solutions κ of 1 + sqrt(κ/n) = 1 + κ/n, the set of
    t = κ/n where SPDC's is smaller)."""
    n, kappa = SYMBOLS["n"], SYMBOLS["cond"]
    spdc = 1 + sp.sqrt(kappa / n)
    sdca = 1 + kappa / n
    crossing = sp.solve(sp.Eq(spdc, sdca), kappa)
    t = sp.Symbol("t", positive=True)  # t = κ/n
    wins = sp.solve_univariate_inequality((sdca - spdc).subs(kappa, t * n) > 0, t, relational=False)
    return crossing, wins
