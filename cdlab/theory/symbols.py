"""The named sympy symbols every bound is written in, and their values on a Problem.

Names follow theory.md §1. Two clashes between the papers are resolved here:
``kappa`` is APPA's proximal weight (theory.md §1: "in code call that one
kappa"), while the condition number R²/(λγ) of SPDC/APPA is ``cond``; and the
strong convexity of the un-regularised objective F (APPA's μ) is ``mu_F``,
because μ already names the L1 strength.
"""
from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

_pos = dict(positive=True, real=True)

SYMBOLS: dict[str, sp.Symbol] = {
    "n": sp.Symbol("n", integer=True, positive=True),
    "d": sp.Symbol("d", integer=True, positive=True),
    "nnz": sp.Symbol(r"\mathrm{nnz}", **_pos),
    "lam": sp.Symbol(r"\lambda", **_pos),
    "gamma": sp.Symbol(r"\gamma", **_pos),
    "R": sp.Symbol("R", **_pos),  # max_i ‖x_i‖
    "Rbar": sp.Symbol(r"\bar{R}", **_pos),  # mean_i ‖x_i‖
    "Rf": sp.Symbol(r"R_f", **_pos),  # max_j ‖f_j‖ (the column analogue of R)
    "F2": sp.Symbol(r"\|X\|_F^2", **_pos),
    "C_P": sp.Symbol("C_P", **_pos),
    "C_D": sp.Symbol("C_D", **_pos),
    "L": sp.Symbol("L", **_pos),  # Lipschitz constant of a non-smooth loss
    "L_P": sp.Symbol("L_P", **_pos),  # smoothness of P: λ + ‖X‖₂²/(γn)
    "mu_F": sp.Symbol(r"\mu_F", **_pos),  # strong convexity of P (APPA's μ)
    "cond": sp.Symbol(r"\kappa_{c}", **_pos),  # R²/(λγ)
    "kappa": sp.Symbol(r"\kappa", **_pos),  # APPA proximal weight
    "m": sp.Symbol("m", integer=True, positive=True),  # mini-batch size
    "eps": sp.Symbol(r"\epsilon", **_pos),
    "eps0": sp.Symbol(r"\epsilon_0", **_pos),  # initial error of the quantity the theorem starts from
    "theta": sp.Symbol(r"\theta", **_pos),  # contraction of a custom sampling (Thm 1 of the face-off)
    "cost": sp.Symbol(r"\bar{c}", **_pos),  # expected nonzeros per step of a custom sampling
    "eta": sp.Symbol(r"\eta", **_pos),  # step size (SVRG)
    "epoch": sp.Symbol(r"m_{\mathrm{in}}", integer=True, positive=True),  # SVRG inner loop length
    "p_refresh": sp.Symbol("p", **_pos),  # L-SVRG's probability of a refresh at each step
    "machines": sp.Symbol("s", integer=True, positive=True),  # computing nodes (ASDCA Section 3)
    "k": sp.Symbol("k", integer=True, nonnegative=True),
    "delta": sp.Symbol(r"\delta", **_pos),  # failure probability of a high-probability bound
    "Dx": sp.Symbol(r"\|w_0 - w^\star\|^2", **_pos),
    "Dy": sp.Symbol(r"\|\alpha_0 - \alpha^\star\|^2", **_pos),
}

def problem_values(problem, names) -> dict[str, float]:
    """Numbers for the symbol names in ``names`` (only those are computed)."""
    n = problem.n_samples
    out = {}
    cheap = {
        "n": lambda: n,
        "d": lambda: problem.n_features,
        "nnz": lambda: problem.nnz,
        "lam": lambda: problem.lam,
        "R": lambda: problem.R,
        "Rbar": lambda: float(np.sqrt(problem.row_norms_sq).mean()),
        "Rf": lambda: float(np.sqrt(problem.col_norms_sq.max())),
        "F2": lambda: problem.frob_sq,
        "C_P": lambda: problem.data.C_P,
        "C_D": lambda: problem.data.C_D,
    }
    for name in names:
        if name in cheap:
            out[name] = float(cheap[name]())
        elif name == "gamma":
            if problem.gamma is None:
                raise ValueError(f"the {problem.loss} loss is not smooth: γ is undefined")
            out[name] = float(problem.gamma)
        elif name == "L":
            if problem.loss_info.lipschitz is None:
                raise ValueError(f"the {problem.loss} loss is not Lipschitz: L is undefined")
            out[name] = float(problem.loss_info.lipschitz)
        elif name == "L_P":
            if problem.gamma is None:
                raise ValueError(f"the {problem.loss} loss is not smooth: L_P is undefined")
            out[name] = problem.lam + problem.data.spectral_norm_sq / (problem.gamma * n)
        elif name == "mu_F":
            out[name] = problem.strong_convexity()
        elif name == "cond":
            if problem.gamma is None:
                raise ValueError(f"the {problem.loss} loss is not smooth: R²/(λγ) is undefined")
            out[name] = problem.R ** 2 / (problem.lam * problem.gamma)
    return out


def evaluate(expr, problem, **extra) -> float:
    """Substitute ``problem``'s numbers (and ``extra``: name -> value, names as in
    SYMBOLS) into a sympy expression and return a float.

    ``expr`` may also be a Bound: its iteration count with its own values
    (pass ``eps=...``), i.e. ``bound.iterations(eps)`` without the clamp at 0.
    Raises ValueError naming any symbol left without a value.
    """
    if hasattr(expr, "expr") and hasattr(expr, "values"):  # a theory.Bound
        expr, extra = expr.expr, {**expr.values, **extra}
    expr = sp.sympify(expr)
    by_symbol = {s: name for name, s in SYMBOLS.items()}
    unknown = set(extra) - set(SYMBOLS)
    if unknown:
        raise ValueError(f"unknown symbol name(s) {sorted(unknown)}; known: {sorted(SYMBOLS)}")
    free = {by_symbol[s] for s in expr.free_symbols if s in by_symbol}
    foreign = [str(s) for s in expr.free_symbols if s not in by_symbol]
    if foreign:
        raise ValueError(f"expression has symbols outside theory.SYMBOLS: {foreign}")
    values = problem_values(problem, free - set(extra))
    values.update({k: float(v) for k, v in extra.items()})
    missing = free - set(values)
    if missing:
        raise ValueError(f"no value for symbol(s) {sorted(missing)}; pass them as keywords, e.g. "
                         f"evaluate(expr, problem, {sorted(missing)[0]}=...)")
    val = expr.subs({SYMBOLS[k]: v for k, v in values.items() if k in free})
    return _numeric(val)


# Working precisions (decimal digits) tried, in order, where sympy's evalf cannot evaluate a number.
FALLBACK_DPS = (50, 200, 800, 3200)


def _numeric(val) -> float:
    """A closed numeric sympy expression as a float. sympy's evalf raises ZeroDivisionError on a
    logarithm whose argument rounds to 1 at its working precision (log(1 + √(λ/L)) of a rate with
    λ/L ≈ 1e-60); then the expression is evaluated by mpmath at rising precisions until two agree to
    1e-12."""
    try:
        return float(sp.N(val, 17))
    except ZeroDivisionError:
        pass
    fn = sp.lambdify((), val, "mpmath")
    previous = None
    for dps in FALLBACK_DPS:
        with mpmath.workdps(dps):
            try:
                current = float(fn())
            except ZeroDivisionError:
                continue
        if previous is not None and abs(current - previous) <= 1e-12 * abs(current):
            return current
        previous = current
    raise ValueError(f"cannot evaluate {val} to 17 digits with up to {FALLBACK_DPS[-1]} working digits")
