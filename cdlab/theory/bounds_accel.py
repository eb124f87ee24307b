"""Bounds for the accelerated methods: SPDC, ASDCA, the APPA family (theory.md §5–7).

SPDC (Zhang & Xiao 2015). Theorem 1 (Algorithm 1, batch m, uniform):
with τ = sqrt(mγ/(nλ))/(2R), σ = sqrt(nλ/(mγ))/(2R),
θ = 1 − 1/(n/m + R sqrt((n/m)/(λγ))),

    (1/(2τ) + λ) E‖x_t − x*‖² + (1/(4σ) + γ) E‖y_t − y*‖²/m ≤ θ^t Φ₀,
    Φ₀ = (1/(2τ) + λ)‖x₀ − x*‖² + (1/(2σ) + γ)‖y₀ − y*‖²/m,

so E‖x_t − x*‖² ≤ θ^t Φ₀/(1/(2τ) + λ) and, for l1 = 0 (∇P(x*) = 0),
E[P(x_t) − P*] ≤ (L_P/2) E‖x_t − x*‖². Corollary 1's iteration count uses
−log θ ≥ 1 − θ. Theorem 2 (Algorithm 2, weighted) is the same with R̄, τ, σ
of its statement, θ = 1 − 1/(2n + 2R̄ sqrt(n/(λγ))) and the y-weight
(1/(2σ) + 2γ) on the right (as printed in our copy). Distances from x₀ = 0,
y₀ = 0 without a reference optimum: ‖x*‖² ≤ 2(P(0) − P*)/λ ≤ 2G₀/λ and
‖y*‖² = ‖α*‖² ≤ nL² (Lipschitz losses) or ≤ 2nP* ≤ 2nP(0) (squared loss).

ASDCA (Shalev-Shwartz & Zhang 2013, Thm 1): with γ' = γ/R² (φ(x_i·w) is
(R²/γ)-smooth in w) and θ ≤ ¼ min{1, sqrt(γ'λn/m), γ'λn, (γ'λn)^{2/3}/m^{1/3}},
m E ΔP_t + n E ΔD_t ≤ (1 − θm/n)^t (m ΔP₀ + n ΔD₀). Since n ≥ m the gap
ΔP + ΔD of the pair (x_t, α_t) is ≤ (m ΔP + n ΔD)/m, so the same count
(n/(mθ)) log((m ΔP₀ + n ΔD₀)/(mε)) bounds the expected gap.

APPA family (Frostig, Ge, Kakade & Sidford 2015), in mean-loss notation with
proximal weight κ and μ = μ_F the strong convexity of P: Lemma 2.3 (exact):
a stage whose oracle cuts the inner error by c = 2(κ + μ)/μ contracts
P − P* by r = (κ + μ/2)/(κ + μ); with the oracle sized by SDCA's (or SVRG's)
own bound, Algorithm 1's bound is exact. The accelerated and dual variants'
contractions are O(·) statements whose constants are in the appendices, not in
our copy: those two bounds are ``exact=False`` and their ``note`` says which parts are the paper's.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from .._checks import renamed
from ..reference import resolve_reference
from ._start import both_eps0, primal_eps0, start_values
from .bound import Bound, register_bound
from .bounds_cd import _check_options
from .spdc_parameters import SPDC_PARAMETERS, spdc_batch_size, spdc_theorem1
from .symbols import SYMBOLS as S, evaluate

n, nnz, lam, gamma, R, Rbar, F2 = S["n"], S["nnz"], S["lam"], S["gamma"], S["R"], S["Rbar"], S["F2"]
eps, eps0, L_P, mu_F, kappa, m = S["eps"], S["eps0"], S["L_P"], S["mu_F"], S["kappa"], S["m"]
Dx, Dy = S["Dx"], S["Dy"]

def _spdc_distances(problem, options):
    """(‖x₀ − x*‖², ‖y₀ − y*‖², how) from x₀ = 0, y₀ = 0."""
    opt = options.get("optimum")
    if opt is not None:
        w_star, alpha_star = (np.asarray(v, dtype=float) for v in opt)
        return float(w_star @ w_star), float(alpha_star @ alpha_star), "exact, from the given optimum"
    p0, d0, _ = start_values(problem)
    ref = resolve_reference(problem, options.get("reference"))
    excess = (p0 - ref) if ref is not None else (p0 - d0)
    dx = 2 * max(excess, 0.0) / problem.lam
    if problem.loss_info.lipschitz is not None:
        dy = problem.n_samples * problem.loss_info.lipschitz ** 2
    else:  # squared loss: ‖α*‖² = Σ(y_i − z_i*)² = 2n·(mean loss at w*) ≤ 2nP*
        dy = 2 * problem.n_samples * (ref if ref is not None else p0)
    return dx, dy, "upper bounds: ‖w*‖² ≤ 2(P(0) − P*)/λ, ‖α*‖² ≤ nL² (or 2nP* for the squared loss)"


@register_bound("spdc")
def spdc_bound(problem, sampling="uniform", **options):
    """SPDC Theorem 1 (uniform, batch m) or Theorem 2 (sampling='weighted', m = 1); with
    ``delta`` > 0 (a non-smooth loss, or λ = 0) the Section 3.1 bound of ``bounds_spdc_delta``."""
    _check_options("spdc", options, {"batch_size", "delta", "quantity", "reference", "optimum"})
    delta = options.get("delta", 0.0)
    if not problem.is_smooth or problem.lam <= 0 or delta != 0:
        from .bounds_spdc_delta import spdc_delta_bound
        return spdc_delta_bound(problem, sampling, delta, options)
    quantity = options.get("quantity", "subopt" if problem.l1 == 0 else "dist")
    if quantity not in ("subopt", "dist") or (quantity == "subopt" and problem.l1 > 0):
        raise ValueError(f"the SPDC bound controls 'dist' (and 'subopt' when l1 = 0), not {quantity!r}")
    mb = spdc_batch_size(problem, options)
    if not isinstance(sampling, str):
        raise ValueError("SPDC takes sampling 'uniform' (Algorithm 1) or 'weighted' (Algorithm 2), not probabilities")
    if sampling == "uniform":
        tau, sigma, inv, phi0 = spdc_theorem1()
        cost = m * nnz / n
        source = "Zhang & Xiao 2015 (ICML), Thm 1 and Cor. 1 (Algorithm 1)"
    elif sampling == "weighted":
        if mb != 1:
            raise ValueError("SPDC Algorithm 2 (weighted sampling) has batch size 1")
        tau, sigma, inv = SPDC_PARAMETERS["weighted"]
        phi0 = (1 / (2 * tau) + lam) * Dx + (1 / (2 * sigma) + 2 * gamma) * Dy
        p = 0.5 / problem.n_samples + 0.5 * np.sqrt(problem.row_norms_sq) / np.sqrt(problem.row_norms_sq).sum()
        cost = sp.Float(float(p @ problem.row_nnz))
        source = "Zhang & Xiao 2015 (ICML), Thm 2 (Algorithm 2, weighted sampling)"
    else:
        raise ValueError(f"SPDC samplings are 'uniform' (Algorithm 1) and 'weighted' (Algorithm 2), not {sampling!r}")
    dx, dy, how = _spdc_distances(problem, options)
    # ε₀ is Φ₀/(1/(2τ) + λ), the initial error of E‖x − x*‖²
    start = evaluate(phi0 / (1 / (2 * tau) + lam), problem, m=mb, Dx=dx, Dy=dy)
    prefactor = L_P / 2 if quantity == "subopt" else sp.Integer(1)
    return Bound("spdc", problem, sampling, inv * sp.log(prefactor * eps0 / eps), cost, source, quantity,
                 values={"eps0": start, "m": mb}, rate_expr=1 / inv, prefactor_expr=prefactor,
                 eps0_how="Φ₀/(1/(2τ) + λ) with " + how,
                 note="subopt via P − P* ≤ (L_P/2)‖x − x*‖² (l1 = 0)" if quantity == "subopt" else "")


# Theorem 1's largest θ, eq. (3), with γ' = γ/R² (the paper assumes ‖x_i‖ ≤ 1: φ(x_i·w) is then
# (1/γ)-smooth in w; for rows of norm up to R it is (R²/γ)-smooth)
_GLN = gamma / R ** 2 * lam * n
ASDCA_THETA_MAX = sp.Rational(1, 4) * sp.Min(1, sp.sqrt(_GLN / m), _GLN, _GLN ** sp.Rational(2, 3) / m ** sp.Rational(1, 3))


def asdca_theta_max(problem, batch_size):
    """θ_max of eq. (3) on ``problem`` (the sympy ASDCA_THETA_MAX evaluated)."""
    return evaluate(ASDCA_THETA_MAX, problem, m=batch_size)


@register_bound("asdca")
def asdca_bound(problem, sampling="uniform", **options):
    """ASDCA Theorem 1 (see the module docstring)."""
    _check_options("asdca", options, {"batch_size", "theta", "quantity", "reference"})
    if not problem.is_smooth or problem.l1 > 0 or problem.lam <= 0:
        raise ValueError("the ASDCA bound (Thm 1) needs a smooth loss, l1 = 0 and λ > 0")
    if sampling != "uniform":
        raise ValueError(f"ASDCA samples uniform mini-batches, not {sampling!r}")
    quantity = options.get("quantity", "gap")
    if quantity not in ("gap", "subopt"):
        raise ValueError(f"the ASDCA bound controls 'gap' or 'subopt', not {quantity!r}")
    mb = spdc_batch_size(problem, options)
    th_max = asdca_theta_max(problem, mb)
    th = options.get("theta")
    th = th_max if th is None else float(th)
    if not 0 < th <= th_max * (1 + 1e-12):
        raise ValueError(f"ASDCA Thm 1 needs 0 < θ ≤ {th_max:.4g} (eq. 3 with γ' = γ/R²), got θ = {th}")
    dp, dd, how = both_eps0(problem, options.get("reference"))
    start = (mb * dp + problem.n_samples * dd) / mb  # (m ΔP₀ + n ΔD₀)/m
    # the default θ stays symbolic (eq. 3 inside the expression); a user's θ is a value of the symbol θ
    th_sym = ASDCA_THETA_MAX if options.get("theta") is None else S["theta"]
    values = {"eps0": start, "m": mb} if options.get("theta") is None else {"eps0": start, "m": mb, "theta": th}
    return Bound("asdca", problem, sampling, (n / (m * th_sym)) * sp.log(eps0 / eps), m * nnz / n,
                 "Shalev-Shwartz & Zhang 2013 (NIPS), Accelerated mini-batch SDCA, Thm 1 and eq. (3)", quantity,
                 values=values, rate_expr=th_sym * m / n,
                 eps0_how="(m ΔP₀ + n ΔD₀)/m, " + how,
                 note="dense O(d) vector work per iteration is not counted (nonzeros of X only)")


APPA_OPTIONS = {"kappa", "mu", "mu_F", "inner", "stage_passes", "warm_start", "kappa_decay", "kappa_min",
                "dual_start", "reference", "eps0"}


def _appa_common(method, problem, options):
    _check_options(method, options, APPA_OPTIONS)
    if not problem.is_smooth or problem.l1 > 0:
        raise ValueError(f"the {method} bound needs a smooth loss and l1 = 0")
    if float(options.get("kappa_decay", 1.0)) != 1.0:
        raise ValueError(f"the {method} bound is for a fixed κ (kappa_decay = 1)")
    mu = renamed("mu_F", options.get("mu_F"), "mu", options.get("mu"))
    mu = evaluate(mu_F, problem) if mu is None else float(mu)
    if not mu > 0:
        raise ValueError(f"{method} needs P strongly convex (μ_F > 0): λ > 0, or the squared loss with "
                         "XᵀX positive definite (or pass mu_F=...)")
    k = options.get("kappa")
    default_k = problem.R ** 2 / (problem.gamma * problem.n_samples)  # Cor. 2.11's λ = LR², mean notation
    k = (default_k + (2 * mu if method == "accel_appa" else 0.0)) if k is None else float(k)
    if not k > 0:
        raise ValueError(f"kappa (the proximal weight) must be > 0, got {k}")
    if options.get("eps0") is None and options.get("reference") is None and problem.lam == 0:
        # no dual without λ: P(0) − P* ≤ ‖∇P(0)‖²/(2μ) (strong convexity)
        grad = problem.X.T @ (-problem.alpha_from_w(np.zeros(problem.n_features))) / problem.n_samples
        eps_start, how = max(float(grad @ grad) / (2 * mu), 1e-300), "‖∇P(0)‖²/(2μ) ≥ P(0) − P*"
    else:
        eps_start, how = primal_eps0(problem, options.get("reference"), options.get("eps0"))
    return mu, k, eps_start, how


@register_bound("appa")
def appa_bound(problem, sampling="uniform", **options):
    """APPA (Algorithm 1) with an oracle sized by theory (the solver's defaults).

    Stages: Lemma 2.3 with c = 2(κ + μ)/μ contracts E[P − P*] by
    r = (κ + μ/2)/(κ + μ) per stage. Oracle, inner="sdca" (warm_start="primal",
    stage_passes="theory"): SDCA on f_{s,κ} (regulariser λ' = κ + λ) started at
    α = ŷ(s) has initial gap ‖∇f(s)‖²/(2λ') ≤ (L_f/λ')(f(s) − f*), L_f ≤ R²/γ + λ',
    so its gap bound (Q = n + R²/(γλ')) reaches (f(s) − f*)/c after
    ⌈Q log(Q c L_f/λ')⌉ steps; the start costs two passes. inner="svrg": ⌈log₂ c⌉
    epochs of m = ⌈50 L/(μ + κ)⌉ steps at η = 1/(10L) (Johnson & Zhang's factor ≤ 1/2
    per epoch, L = R²/γ + λ + κ), each with a snapshot pass.
    """
    mu, k, eps_start, how = _appa_common("appa", problem, options)
    inner_kind = options.get("inner", "sdca")
    if options.get("stage_passes", "theory") not in (None, "theory"):
        raise ValueError("the APPA bound needs stages sized by theory (stage_passes='theory'); a fixed "
                         "number of passes per stage does not guarantee the oracle's factor c")
    c = 2 * (kappa + mu_F) / mu_F
    r = (kappa + mu_F / 2) / (kappa + mu_F)
    lam1 = kappa + lam
    note = ("every stage meets the oracle's factor in expectation (Lemma 2.3 holds in expectation, footnote 2); "
            "the guarantee is for the stage-end iterates x^(t): checkpoints inside a stage show the inner "
            "solver's point, which can be above the curve")
    if inner_kind == "sdca":
        if options.get("warm_start", "primal") not in (None, "primal"):
            raise ValueError("the APPA bound's SDCA oracle starts from the primal-to-dual map (warm_start='primal')")
        Q = n + R ** 2 / (gamma * lam1)
        stage = sp.ceiling(Q * sp.log(Q * c * (R ** 2 / gamma + lam1) / lam1))
        cost = nnz / n + 2 * nnz / stage
        source = ("Frostig, Ge, Kakade & Sidford 2015 (ICML), Lemma 2.3 / Thm 2.4; SDCA oracle sized by its gap "
                  "bound (Shalev-Shwartz & Zhang 2013)")
    elif inner_kind == "svrg":
        L_in = R ** 2 / gamma + lam1
        m_in = sp.ceiling(50 * L_in / (mu_F + kappa))
        stage = sp.ceiling(sp.log(c, 2)) * m_in
        cost = nnz / n + nnz / m_in
        source = "Frostig, Ge, Kakade & Sidford 2015 (ICML), Lemma 2.3 / Cor. 2.5; SVRG oracle (Johnson & Zhang 2013, Thm 1)"
        note += "; Johnson & Zhang's Thm 1 is for option II, cdlab's SVRG keeps the last iterate (option I)"
    else:
        raise ValueError(f"inner must be 'sdca' or 'svrg', got {inner_kind!r}")
    return Bound("appa", problem, sampling, stage * sp.ceiling(sp.log(eps0 / eps) / -sp.log(r)), cost, source,
                 "subopt", values={"eps0": eps_start, "kappa": k, "mu_F": mu}, rate_expr=1 - r,
                 period_expr=stage, eps0_how=how, note=note)


@register_bound("accel_appa")
def accel_appa_bound(problem, sampling="uniform", **options):
    """Accelerated APPA (Algorithm 2, Thm 2.6): O(sqrt((μ+κ)/μ) log(ε₀/ε)) stages, κ ≥ 2μ,
    each an oracle of factor 4ρ^{3/2}, ρ = (μ + 2κ)/μ, costed as the SDCA oracle above."""
    mu, k, eps_start, how = _appa_common("accel_appa", problem, options)
    if k < 2 * mu:
        raise ValueError(f"accelerated APPA needs κ ≥ 2μ_F = {2 * mu:.3g}, got κ = {k:.3g}")
    rho = (mu_F + 2 * kappa) / mu_F
    lam1 = kappa + lam
    Q = n + R ** 2 / (gamma * lam1)
    stage = Q * sp.log(Q * 4 * rho ** sp.Rational(3, 2) * (R ** 2 / gamma + lam1) / lam1)
    stages = sp.sqrt((mu_F + kappa) / mu_F)
    return Bound("accel_appa", problem, sampling, stage * stages * sp.log(eps0 / eps), nnz / n,
                 "Frostig, Ge, Kakade & Sidford 2015 (ICML), Thm 2.6: oracle factor 4((2κ+μ)/μ)^{3/2} as stated; "
                 "the O(·) constant of the stage count is in Appendix D, which our copy lacks",
                 "subopt", values={"eps0": eps_start, "kappa": k, "mu_F": mu}, rate_expr=1 / stages,
                 period_expr=stage, exact=False, eps0_how=how,
                 note="exact: κ ≥ 2μ and the oracle's factor 4((2κ+μ)/μ)^{3/2} (Thm 2.6). Not exact: the number of "
                      "stages per e-fold of the error, sqrt((μ+κ)/μ), is an O(·) whose constant the paper proves in "
                      "Appendix D, absent from our copy, so it is taken as 1 and the curve is not a guarantee. Stages "
                      "are costed as theory-sized SDCA oracles, whereas cdlab's accel_appa runs one warm-started pass "
                      "per stage by default")


@register_bound("dual_appa")
def dual_appa_bound(problem, sampling="uniform", **options):
    """Dual APPA (Algorithm 3, Thm 2.10): Õ(T_D/(1 − r) log(ε₀/ε)) with r ≈ κ/(κ + μ)."""
    mu, k, eps_start, how = _appa_common("dual_appa", problem, options)
    r = kappa / (kappa + mu_F)  # exact PPA's contraction (Lemma 3.1); the paper's r is in Appendix C
    Q = n + R ** 2 / (gamma * (kappa + lam))
    stage = Q * sp.log(Q)
    return Bound("dual_appa", problem, sampling, stage * sp.log(eps0 / eps) / (1 - r), nnz / n,
                 "Frostig, Ge, Kakade & Sidford 2015 (ICML), Thm 2.10: Õ(·), the constants r and σ are defined in "
                 "Appendix C, eqs. (19)-(20), which our copy lacks",
                 "subopt", values={"eps0": eps_start, "kappa": k, "mu_F": mu}, rate_expr=1 - r,
                 period_expr=stage, exact=False, eps0_how=how,
                 note="not a guarantee: Thm 2.10 is an Õ(·) whose r (< 1, 'depending on κ/(κ + μ)') and oracle factor "
                      "σ = O(poly(n, κ)) are defined in Appendix C, absent from our copy. Here r is exact PPA's "
                      "κ/(κ + μ) (Lemma 3.1) and a warm-started stage is Q log Q SDCA steps, unit constants")
