"""SPDC's step sizes and Theorem 1's constants as sympy expressions (Zhang & Xiao 2015), shared by
the plain bound (bounds_accel) and the δ-perturbed one (bounds_spdc_delta)."""
from __future__ import annotations

import sympy as sp

from ..sampling import check_batch_size
from .symbols import SYMBOLS as S

n, lam, gamma, R, Rbar, m = S["n"], S["lam"], S["gamma"], S["R"], S["Rbar"], S["m"]
Dx, Dy = S["Dx"], S["Dy"]

# SPDC's (τ, σ, 1/(1 − θ)): Theorem 1, eq. (10) (uniform, batch m) and Theorem 2 (weighted, m = 1);
# cdlab.solvers.spdc.spdc_parameters computes the same numbers (tests/test_formula_crosscheck.py)
SPDC_PARAMETERS = {
    "uniform": (sp.sqrt(m * gamma / (n * lam)) / (2 * R), sp.sqrt(n * lam / (m * gamma)) / (2 * R),
                n / m + R * sp.sqrt((n / m) / (lam * gamma))),
    "weighted": (sp.sqrt(gamma / (n * lam)) / (4 * Rbar), sp.sqrt(n * lam / gamma) / (4 * Rbar),
                 2 * n + 2 * Rbar * sp.sqrt(n / (lam * gamma))),
}


def spdc_batch_size(problem, options):
    return check_batch_size(options.get("batch_size", 1), problem.n_samples)


def spdc_theorem1():
    """Theorem 1's (τ, σ, 1/(1 − θ), Φ₀) as expressions in m, γ, λ, R and the distances Dx, Dy (eq. 10)."""
    tau, sigma, inv = SPDC_PARAMETERS["uniform"]
    phi0 = (1 / (2 * tau) + lam) * Dx + (1 / (2 * sigma) + gamma) * Dy / m
    return tau, sigma, inv, phi0
