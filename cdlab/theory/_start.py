"""Honest initial errors ε₀ for the bounds (every method here starts at w = 0, α = 0).

Without a reference optimum, ε₀ is replaced by an upper bound that needs no
solve: the duality gap at the starting point. For a dual method
D* − D(0) = P* − D(0) ≤ P(0) − D(0); for a primal method
P(0) − P* ≤ P(0) − D(α) for any α, and we take the better of α = 0 and
α = α(0) = −φ'(0) (the pair a primal method's trace reports at step 0).
Bounds are increasing in ε₀, so the upper bound keeps them valid.
"""
from __future__ import annotations

import numpy as np

from .._checks import check_real
from ..reference import resolve_reference


def start_values(problem):
    w0 = np.zeros(problem.n_features)
    p0 = problem.primal(w0)
    if problem.lam <= 0:
        # no dual without λ: only a reference optimum (or eps0) gives a finite ε₀
        return p0, -np.inf, -np.inf
    d0 = problem.dual(np.zeros(problem.n_samples))
    d_alpha_w0 = problem.dual(problem.alpha_from_w(w0))
    return p0, d0, d_alpha_w0


def _positive(value):
    # ε₀ = 0 means the start is optimal; a tiny floor keeps log(ε₀/ε) defined (→ 0 iterations)
    return max(float(value), 1e-300)


def given_eps0(eps0):
    return check_real("eps0", eps0, low=0.0, low_open=True), "given"


def _eps0(side, problem, reference, eps0):
    if eps0 is not None:
        return given_eps0(eps0)
    p0, d0, da = start_values(problem)
    ref = resolve_reference(problem, reference)
    if side == "dual":
        if ref is not None:
            return _positive(ref - d0), "D* − D(α₀) with the reference optimum"
        return _positive(p0 - d0), "initial duality gap P(0) − D(0) ≥ D* − D(α₀)"
    if ref is not None:
        return _positive(p0 - ref), "P(w₀) − P* with the reference optimum"
    return _positive(p0 - max(d0, da)), "initial duality gap P(0) − max(D(0), D(α(0))) ≥ P(w₀) − P*"


def dual_eps0(problem, reference=None, eps0=None):
    """(ε₀ ≥ D* − D(α₀), how it was obtained) for α₀ = 0."""
    return _eps0("dual", problem, reference, eps0)


def primal_eps0(problem, reference=None, eps0=None):
    """(ε₀ ≥ P(w₀) − P*, how it was obtained) for w₀ = 0."""
    return _eps0("primal", problem, reference, eps0)


def both_eps0(problem, reference=None):
    """(P(0) − P*, D* − D(0)) — exact with a reference, else both bounded by the initial gap."""
    p0, d0, da = start_values(problem)
    ref = resolve_reference(problem, reference)
    if ref is not None:
        return _positive(p0 - ref), _positive(ref - d0), "exact, from the reference optimum"
    gap = _positive(p0 - d0)
    return gap, gap, "both bounded by the initial gap P(0) − D(0)"
