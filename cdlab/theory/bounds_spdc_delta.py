"""SPDC with the δ-perturbation (Zhang & Xiao 2015, Section 3.1, Corollary 2, Table 1).

For a G-Lipschitz loss φ that is not smooth, SPDC runs on f_δ: φ* + (δ/2)(·)² (φ becomes its
Moreau envelope φ_δ, 1/δ-smooth, with φ_δ ≤ φ ≤ φ_δ + δG²/2), and for λ = 0 also g + (δ/2)‖·‖².
Theorem 1 then holds for f_δ with γ := δ (and λ := δ), and the bias of the perturbed optimum x_δ*
adds a floor that does not shrink with the iterations.

* λ > 0, l1 = 0 (Table 1, third row; "handled with the same technique", details omitted in the
  paper, written out here): P ≤ P_δ + δG²/2 and P* ≥ P_δ*, so P(x) − P* ≤ P_δ(x) − P_δ(x_δ*) + δG²/2,
  and P_δ is L_δ-smooth, L_δ = λ + ‖X‖₂²/(δn), with ∇P_δ(x_δ*) = 0:

      E[P(x_T) − P*] ≤ δG²/2 + (L_δ/2) θ^T Φ₀/(1/(2τ) + λ)        (Theorem 1 with γ = δ).

* λ = 0 (Corollary 2, γ = λ = δ, g = μ‖·‖₁ is G_g = μ√d-Lipschitz): P(x_δ*) − P* ≤ δC₁/2 with
  C₁ = ‖x*‖² + G², P is (GR + G_g)-Lipschitz, so

      E[P(x_T) − P*] ≤ δC₁/2 + sqrt(C₂ θ^T),
      C₂ = (GR + G_g)² (‖x⁰ − x_δ*‖² + (1/(2σ) + δ)/(1/(2τ) + δ) ‖y⁰ − y_δ*‖²/m).

  At δ = ε/C₁ the count to ε is (n/m + (C₁R/ε)√(n/m)) log(4C₂/ε²): Corollary 2 as printed. Our copy
  prints the ratio in C₂ as (1/(2σ) + δ)/(1/(2σ) + δ); Theorem 1 divided by its x-weight gives
  the denominator 1/(2τ) + δ used here.

Distances from x⁰ = 0, y⁰ = 0 without solving (losses ≥ 0): ‖x_δ*‖² ≤ 2P(0)/λ (or 2P(0)/δ when
λ = 0; P_δ(x_δ*) ≤ P_δ(0) ≤ P(0)), ‖y_δ*‖² ≤ nG² (|y_i| ≤ G). C₁ needs ‖x*‖² of the unperturbed
problem, which only ``optimum=(w*, α*)`` supplies.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from .._checks import check_real
from ._start import start_values
from .bound import Bound
from .spdc_parameters import spdc_batch_size, spdc_theorem1
from .symbols import SYMBOLS as S, evaluate

eps, eps0, n, m, nnz = S["eps"], S["eps0"], S["n"], S["m"], S["nnz"]


def _check_delta(problem, delta):
    delta = check_real("delta", delta, low=0.0)
    from ..solvers.spdc import spdc_parameters
    spdc_parameters(problem, 1, False, delta)  # the solver's own refusals: delta > 0 where needed, and only there
    if problem.loss_info.lipschitz is None:
        raise ValueError(f"the δ-perturbed SPDC bound needs a Lipschitz loss (Corollary 2's G_φ), not {problem.loss!r}")
    return delta


def spdc_delta_bound(problem, sampling, delta, options) -> Bound:
    """The Section 3.1 bound on E[P(x_T) − P*] of SPDC run with ``delta`` (see the module docstring)."""
    delta = _check_delta(problem, delta)
    if sampling != "uniform":
        raise ValueError(f"the δ-perturbed SPDC bound is for Algorithm 1 (sampling='uniform'), not {sampling!r}")
    if options.get("quantity", "subopt") != "subopt":
        raise ValueError(f"the δ-perturbed SPDC bound controls 'subopt', not {options['quantity']!r}")
    mb = spdc_batch_size(problem, options)
    G = float(problem.loss_info.lipschitz)
    p0 = start_values(problem)[0]
    tau, sigma, inv, phi0 = spdc_theorem1()
    if problem.lam > 0:
        if problem.l1 > 0:
            raise ValueError("the δ-perturbed SPDC bound with λ > 0 uses the smoothness of P_δ: it needs l1 = 0")
        values = {"m": mb, "gamma": delta}
        dx, dy = 2 * p0 / problem.lam, problem.n_samples * G ** 2
        start = evaluate(phi0 / (1 / (2 * tau) + S["lam"]), problem, m=mb, gamma=delta, Dx=dx, Dy=dy)
        L_delta = problem.lam + problem.data.spectral_norm_sq / (delta * problem.n_samples)
        floor, amplitude, rate, periods = delta * G ** 2 / 2, L_delta / 2 * start, 1 / inv, 1
        source = ("Zhang & Xiao 2015 (ICML), Section 3.1 and Table 1 (non-smooth φ, λ-strongly convex g): "
                  "Theorem 1 on f_δ with γ = δ, plus the Moreau-envelope bias δG²/2")
        how = "(L_δ/2)Φ₀/(1/(2τ) + λ), L_δ = λ + ‖X‖₂²/(δn), ‖x_δ*‖² ≤ 2P(0)/λ, ‖y_δ*‖² ≤ nG²"
    else:
        if problem.is_smooth:
            raise ValueError("no bound for SPDC on a smooth loss with lam = 0: Table 1's smooth, non-strongly convex "
                             "row has no constants in the paper (Corollary 2 is for a non-smooth Lipschitz loss)")
        opt = options.get("optimum")
        if opt is None:
            raise ValueError("Corollary 2 (λ = 0) needs ‖x*‖² in C₁ = ‖x*‖² + G²: pass optimum=(w*, α*) of the "
                             "unperturbed problem")
        w_star = np.asarray(opt[0], dtype=float)
        values = {"m": mb, "gamma": delta, "lam": delta}
        c1 = float(w_star @ w_star) + G ** 2
        ratio = evaluate((1 / (2 * sigma) + S["lam"]) / (1 / (2 * tau) + S["lam"]), problem, **values)
        dx, dy = 2 * p0 / delta, problem.n_samples * G ** 2
        lip = G * problem.R + problem.l1 * np.sqrt(problem.n_features)
        c2 = lip ** 2 * (dx + ratio * dy / mb)
        floor, amplitude, rate, periods = delta * c1 / 2, np.sqrt(c2), 1 - sp.sqrt(1 - 1 / inv), 2
        source = "Zhang & Xiao 2015 (ICML), Section 3.1, Corollary 2 (γ = λ = δ)"
        how = (f"sqrt(C₂), C₁ = ‖x*‖² + G² = {c1:.4g} (given optimum), ‖x_δ*‖² ≤ 2P(0)/δ, ‖y_δ*‖² ≤ nG²")
    # T(ε) = periods·(1/(1 − θ))·log(amplitude/(ε − floor)), since θ^T ≤ exp(−T(1 − θ)); none below the floor
    expr = sp.Piecewise((sp.oo, eps <= floor), (periods * inv * sp.log(eps0 / (eps - floor)), True))
    return Bound("spdc", problem, sampling, expr, m * nnz / n, source, "subopt",
                 values={**values, "eps0": amplitude}, rate_expr=rate, eps0_how=how, floor=floor,
                 note=f"δ = {delta:g}: the guarantee never goes below its bias {floor:.3g} (choose δ = ε/C₁ for "
                      "accuracy ε, Corollary 2)")
