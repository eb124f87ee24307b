"""Bounds for the baselines the papers compare against (theory.md §8).

Their papers are not in ``shared/papers``; each source names the published
statement the constants come from, and ``note`` says how it maps onto
cdlab's implementation (which iterate, which step).

Common facts used below (L2 problems, l1 = 0):
* each f_i(w) = φ_i(x_i·w) + (λ/2)‖w‖² is L_max-smooth, L_max = R²/γ + λ;
* P is L_P-smooth, L_P = λ + ‖X‖₂²/(γn), so P(w) − P* ≤ (L_P/2)‖w − w*‖²;
* P is λ-strongly convex, so ‖w₀ − w*‖² ≤ 2(P(w₀) − P*)/λ ≤ 2ε₀/λ.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from ._start import primal_eps0
from .bound import Bound, register_bound
from .bounds_cd import _check_options
from .symbols import SYMBOLS as S

n, nnz, lam, gamma, R, F2 = S["n"], S["nnz"], S["lam"], S["gamma"], S["R"], S["F2"]
eps, eps0, L, L_P, mu_F = S["eps"], S["eps0"], S["L"], S["L_P"], S["mu_F"]
eta, epoch, p_refresh = S["eta"], S["epoch"], S["p_refresh"]
L_max = R ** 2 / gamma + lam


def _smooth_l2(method, problem):
    if not problem.is_smooth:
        raise ValueError(f"the {method} bound needs a smooth loss, not {problem.loss!r}")
    if problem.l1 > 0:
        raise ValueError(f"the {method} bound is for l1 = 0 (it uses ∇P(w*) = 0)")
    if problem.lam <= 0:
        raise ValueError(f"the {method} bound needs λ > 0 (strong convexity)")


def _variance_reduced_step(method, step, fixed, hint="", default="linesearch"):
    """The step a SAGA, SVRG or L-SVRG bound is for: ``fixed`` (the theorem's η) for step_size="L_max", or a
    number; ``step=None`` is the method's ``default`` rule. SAG's line search (``cdlab.solvers.step_rules``;
    the default of sag, saga and svrg) picks steps no theorem covers, so it has no bound; ``hint`` ends
    that message."""
    step = default if step is None else step
    if step == "linesearch":
        if default == "linesearch":
            raise ValueError(f"{method}'s default step comes from SAG's line search on L (Schmidt, Le Roux & Bach "
                             f"2017 §4.6), which no theorem covers; the bound is for step_size='L_max' or a number"
                             f"{hint}")
        raise ValueError(f"step_size='linesearch' (SAG's line search on L, Schmidt, Le Roux & Bach 2017 §4.6) is "
                         f"covered by no theorem; {method}'s bound is for its default step_size='L_max' or a number "
                         f"at most that step{hint}")
    return fixed if step == "L_max" else _step_value(step)


def _step_value(step, what="step_size"):
    """A numeric step size."""
    try:
        value = float(step)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a rule's name or a positive number, got {step!r}") from None
    if not value > 0:
        raise ValueError(f"{what} must be > 0, got {value}")
    return value


@register_bound("sgd")
def sgd_bound(problem, sampling="uniform", **options):
    """SGD with the Pegasos step 1/(λt) on an L-Lipschitz loss: ``schedule="pegasos"``, or the
    solver's default ``schedule="auto"`` where it picks Pegasos (``cdlab.solvers.sgd.default_schedule``:
    λ > 0, a loss of bounded slope, no eta0). The inverse step auto picks for the squared loss
    has no bound here.

    Without projection ‖w_t‖ ≤ LR/λ, so every stochastic gradient has norm
    ≤ G = 2LR. Last iterate (what cdlab reports; Shamir & Zhang 2013, Thm 1):
    E[P(w_T) − P*] ≤ 17G²(1 + log T)/(λT). Averaged iterate (Pegasos Thm 1 and
    its expectation corollary): G²(1 + log T)/(2λT). T solves c(1 + log T) = T,
    T = −c·W₋₁(−1/(ec)).
    """
    _check_options("sgd", options, {"schedule", "eta0", "iterate", "reference", "eps0"})
    from ..solvers.sgd import default_schedule

    schedule = options.get("schedule", "auto")
    rule = default_schedule(problem, options.get("eta0")) if schedule == "auto" else schedule
    if rule != "pegasos":
        how = f"schedule={schedule!r}" + (f" (here {rule!r})" if schedule == "auto" else "")
        raise ValueError(f"only the Pegasos step 1/(λt) has a bound, not {how}: a constant step converges to a "
                         "noise ball, and the decaying eta0/√t and inverse eta0/(1 + eta0·λt) steps have no "
                         "bound with constants here")
    if sampling != "uniform":
        raise ValueError(f"the SGD bound needs i.i.d. uniform sampling, not {sampling!r}")
    if problem.loss_info.lipschitz is None or problem.l1 > 0 or problem.lam <= 0:
        raise ValueError(f"the SGD bound needs an L-Lipschitz loss (not {problem.loss!r}), l1 = 0 and λ > 0")
    iterate = options.get("iterate", "last")
    G2 = 4 * L ** 2 * R ** 2
    if iterate == "last":
        c = 17 * G2 / (lam * eps)
        source = "Shamir & Zhang 2013 (ICML), Thm 1 (last iterate, step 1/(λt)), G = 2LR"
    elif iterate == "average":
        c = G2 / (2 * lam * eps)
        source = "Shalev-Shwartz, Singer, Srebro & Cotter 2011 (Pegasos), Thm 1 (averaged iterate), G = 2LR"
    else:
        raise ValueError(f"iterate must be 'last' or 'average', got {iterate!r}")
    expr = sp.Piecewise((1, c <= 1), (-c * sp.LambertW(-1 / (sp.E * c), -1), True))
    eps_start, how = primal_eps0(problem, options.get("reference"), options.get("eps0"))
    return Bound("sgd", problem, sampling, expr, nnz / n, source, "subopt", values={"eps0": eps_start},
                 iterate=iterate, eps0_how=how,
                 note="ε₀ is not used: the bound depends on G²/λ only" + (
                     "; cdlab's sgd reports the last iterate" if iterate == "average" else ""))


# the SVRG whose theorem holds with its default step and refresh rate
LOOPLESS_HINT = "; or run method='lsvrg' (L-SVRG), whose theorem covers its default step 1/(6 L_max) and p = 1/n"


@register_bound("svrg")
def svrg_bound(problem, sampling="uniform", **options):
    """SVRG (Johnson & Zhang 2013, Thm 1): with step η < 1/(4L), L = L_max, inner
    loop m and α = 1/(μη(1 − 2Lη)m) + 2Lη/(1 − 2Lη) < 1,
    E[P(w̃_s) − P*] ≤ α^s (P(w̃₀) − P*) after s epochs (μ = μ_F). For ``step_size="L_max"``
    (η = 1/(10 L_max)) or a number; the default line search has none (``method="lsvrg"`` has:
    :func:`loopless_svrg_bound`)."""
    _check_options("svrg", options, {"step_size", "epoch_length", "reference", "eps0"})
    _smooth_l2("SVRG", problem)
    if sampling != "uniform":
        raise ValueError(f"the SVRG bound needs i.i.d. uniform sampling, not {sampling!r}")
    from .symbols import evaluate
    Lm = evaluate(L_max, problem)
    step = _variance_reduced_step("SVRG", options.get("step_size"), 1.0 / (10.0 * Lm), LOOPLESS_HINT)
    m_in = options.get("epoch_length") or 2 * problem.n_samples
    if step >= 1 / (4 * Lm):
        raise ValueError(f"SVRG Thm 1 needs η < 1/(4 L_max) = {1 / (4 * Lm):.3g}; got η = {step:.3g}")
    alpha = 1 / (mu_F * eta * (1 - 2 * L_max * eta) * epoch) + 2 * L_max * eta / (1 - 2 * L_max * eta)
    a_val = evaluate(alpha, problem, eta=step, epoch=m_in)
    if not a_val < 1:
        mu = evaluate(mu_F, problem)
        need = 1 / (mu * step * (1 - 4 * Lm * step))  # α < 1 ⇔ m > 1/(μη(1 − 4Lη))
        m_half = int(np.ceil(50 * Lm / mu))  # η = 1/(10 L_max), m = 50 L_max/μ: α = 1/4 + 1/4
        raise ValueError(f"SVRG Thm 1 gives no rate here: α = {a_val:.3g} ≥ 1 with η = {step:.3g} and an epoch "
                         f"of {m_in}; it needs an epoch longer than {need:.3g} steps (κ = L_max/μ = {Lm / mu:.3g}; "
                         f"no step helps an epoch shorter than 16κ). For a bound run svrg with step_size='L_max' and "
                         f"epoch_length={m_half} (α = 1/2 at that step), at some cost in practice{LOOPLESS_HINT}")
    eps_start, how = primal_eps0(problem, options.get("reference"), options.get("eps0"))
    expr = epoch * sp.log(eps0 / eps) / sp.log(1 / alpha)
    return Bound("svrg", problem, sampling, expr, nnz / n + nnz / epoch,
                 "Johnson & Zhang 2013 (NIPS), Thm 1 (option II snapshot)", "subopt",
                 values={"eps0": eps_start, "eta": step, "epoch": m_in}, rate_expr=1 - alpha,
                 period_expr=epoch, eps0_how=how,
                 note="the theorem is for option II (snapshot = a random inner iterate); cdlab's svrg uses "
                      "option I (the last iterate), which Thm 1 does not cover. Work: a snapshot costs nnz, "
                      "an inner step ‖x_i‖₀ (both margins in one pass over the row)")


@register_bound("lsvrg")
def loopless_svrg_bound(problem, sampling="uniform", **options):
    """L-SVRG (Kovalev, Horváth & Richtárik 2020, Algorithm 1 and Thm 5): each f_i = φ_i(x_i·w) + (λ/2)‖w‖²
    convex and L-smooth (L = L_max), P μ-strongly convex (μ = μ_F), step η ≤ 1/(6L), refresh probability
    p ∈ (0, 1]: with σ_k = (1/n) Σ_i ‖∇f_i(w̃_k) − ∇f_i(w*)‖² and Φ_k = ‖w_k − w*‖² + (4η²/p) σ_k,

        E[Φ_k] ≤ (1 − ρ)^k Φ₀,    ρ = min(ημ, p/2).

    The paper is not in shared/papers; the constants are those of this derivation (the form of the
    published Thm 5). With D = P(w) − P*, ∇P(w*) = 0 and g = ∇f_i(w) − ∇f_i(w̃) + ∇P(w̃):
    E‖g‖² ≤ 4LD + 2σ (‖∇f_i(w) − ∇f_i(w*)‖² ≤ 2L D_{f_i}(w, w*), a variance ≤ its second moment) and
    ⟨∇P(w), w − w*⟩ ≥ D + (μ/2)‖w − w*‖², so E‖w⁺ − w*‖² ≤ (1 − ημ)‖w − w*‖² − 2η(1 − 2ηL)D + 2η²σ;
    the refresh w̃⁺ = w with probability p gives E σ⁺ ≤ (1 − p)σ + 2pLD; together
    E Φ⁺ ≤ (1 − ημ)‖w − w*‖² + (1 − p/2)(4η²/p)σ − 2η(1 − 6ηL)D, and η ≤ 1/(6L) drops the last term.

    Φ₀ from the start (w̃₀ = w₀): ‖w₀ − w*‖² ≤ 2ε₀/μ and σ₀ ≤ 2L (P(w₀) − P*) ≤ 2Lε₀ (each f_i is convex
    and L-smooth and ∇P(w*) = 0), so Φ₀ ≤ (2/μ + 8η²L/p) ε₀; and P − P* ≤ (L_P/2)‖w − w*‖² ≤ (L_P/2) Φ.
    Hence E[P(w_k) − P*] ≤ (L_P/2)(2/μ + 8η²L/p) ε₀ (1 − ρ)^k. The step is the theorem's 1/(6 L_max)
    (``step_size="L_max"``, the variant's default) or a number ≤ it; p is ``refresh_prob`` (default 1/n).
    Work: a step reads ‖x_i‖₀, a refresh (probability p) nnz, and the full gradient at w₀ nnz once."""
    _check_options("lsvrg", options, {"step_size", "refresh_prob", "reference", "eps0"})
    _smooth_l2("L-SVRG", problem)
    if sampling != "uniform":
        raise ValueError(f"the L-SVRG bound needs i.i.d. uniform sampling, not {sampling!r}")
    from ..solvers.svrg import refresh_probability
    from .symbols import evaluate
    Lm = evaluate(L_max, problem)
    step = _variance_reduced_step("L-SVRG", options.get("step_size"), 1.0 / (6.0 * Lm), default="L_max")
    if step > 1 / (6 * Lm) * (1 + 1e-12):
        raise ValueError(f"L-SVRG's Thm 5 (Kovalev et al. 2020) needs η ≤ 1/(6 L_max) = {1 / (6 * Lm):.3g}; "
                         f"got η = {step:.3g}")
    p_value = refresh_probability(problem, options.get("refresh_prob"))
    rho = sp.Min(eta * mu_F, p_refresh / 2)
    prefactor = (L_P / 2) * (2 / mu_F + 8 * eta ** 2 * L_max / p_refresh)
    eps_start, how = primal_eps0(problem, options.get("reference"), options.get("eps0"))
    return Bound("lsvrg", problem, sampling, sp.log(prefactor * eps0 / eps) / rho, nnz / n + p_refresh * nnz,
                 "Kovalev, Horváth & Richtárik 2020 (ALT), L-SVRG Thm 5; subopt via L_P-smoothness", "subopt",
                 values={"eps0": eps_start, "eta": step, "p_refresh": p_value}, rate_expr=rho,
                 prefactor_expr=prefactor, start_expr=nnz, eps0_how=how,
                 note="the theorem's Lyapunov function bounds ‖w_k − w*‖² and σ_k together (constants derived in "
                      "cdlab.theory.bounds_baselines; the paper is not in shared/papers); cdlab's lsvrg "
                      "is its Algorithm 1 (w̃ ← the iterate the refreshing step started from)")


@register_bound("saga")
def saga_bound(problem, sampling="uniform", **options):
    """SAGA (Defazio, Bach & Lacoste-Julien 2014, Thm 1 with step 1/(3L)):
    E‖w_k − w*‖² ≤ (1 − min(1/(4n), μ/(3L)))^k [‖w₀ − w*‖² + (2n/(3L)) B_f(w₀, w*)],
    L = L_max, μ = λ; with B_f ≤ (L/2)‖w₀ − w*‖² and ‖w₀ − w*‖² ≤ 2ε₀/λ, then
    P − P* ≤ (L_P/2)‖w − w*‖². For ``step_size="L_max"`` (the default line search has none)."""
    _check_options("saga", options, {"step_size", "reference", "eps0"})
    _smooth_l2("SAGA", problem)
    if sampling != "uniform":
        raise ValueError(f"the SAGA bound needs i.i.d. uniform sampling, not {sampling!r}")
    from .symbols import evaluate
    step = _variance_reduced_step("SAGA", options.get("step_size"), None)
    if step is not None and abs(step * 3 * evaluate(L_max, problem) - 1) > 1e-9:
        raise ValueError("the SAGA bound is stated for the step 1/(3 L_max) (step_size='L_max')")
    rho = sp.Min(1 / (4 * n), lam / (3 * L_max))
    prefactor = (L_P / 2) * (2 / lam) * (1 + n / 3)
    eps_start, how = primal_eps0(problem, options.get("reference"), options.get("eps0"))
    return Bound("saga", problem, sampling, sp.log(prefactor * eps0 / eps) / rho, nnz / n,
                 "Defazio, Bach & Lacoste-Julien 2014 (NIPS), Thm 1 (step 1/(3L)); subopt via L_P-smoothness",
                 "subopt", values={"eps0": eps_start}, rate_expr=rho, prefactor_expr=prefactor, eps0_how=how)


def _full_gradient_L(problem, step):
    """(L̂, how): the largest step constant the solver can use (agd.py: backtracking
    from L₀ = ‖X‖_F²/(γn), halving after success, doubling on failure, so every
    accepted L ≤ max(L₀, 2L_f), L_f = ‖X‖₂²/(γn)); or 1/step for a fixed step."""
    L_f = L_P - lam
    if step in (None, "linesearch"):
        return sp.Max(F2 / (gamma * n), 2 * L_f)
    from .symbols import evaluate
    value = _step_value(step)
    if 1 / value < evaluate(L_f, problem):
        raise ValueError(f"a fixed step needs 1/step_size ≥ L_f = ‖X‖₂²/(γn) = {evaluate(L_f, problem):.3g}")
    return sp.Float(1 / value)


@register_bound("gd")
def gd_bound(problem, sampling="uniform", **options):
    """Proximal gradient (Nesterov 2013 §3) with Ψ = (λ/2)‖w‖²: an accepted step
    with constant L gives P(w⁺) − P* ≤ L/(L + λ) (P(w) − P*) (three-point
    inequality of the (L + λ)-strongly convex prox problem with u = (1 − t)w + t w*,
    t = λ/(L + λ)); every accepted L ≤ L̂ (see _full_gradient_L)."""
    _check_options("gd", options, {"step_size", "reference", "eps0"})
    _smooth_l2("gradient descent", problem)
    Lh = _full_gradient_L(problem, options.get("step_size"))
    eps_start, how = primal_eps0(problem, options.get("reference"), options.get("eps0"))
    rate = lam / (Lh + lam)
    return Bound("gd", problem, sampling, sp.log(eps0 / eps) / rate, nnz,
                 "Nesterov 2013 (Math. Program. 140), §3 gradient method; linear rate L/(L+λ) of the "
                 "λ-strongly convex prox step", "subopt", values={"eps0": eps_start}, rate_expr=rate,
                 eps0_how=how)


@register_bound("agd")
def agd_bound(problem, sampling="uniform", **options):
    """Accelerated method (4.9) of Nesterov 2013 with μ = λ, γ_u = 2:
    P(x_k) − P* ≤ (γ_u L_f/2)‖x₀ − x*‖² (1 + sqrt(μ/(2γ_u L_f)))^{−2(k−1)}, with
    γ_u L_f replaced by L̂ ≥ every accepted L, and ‖x₀ − x*‖² ≤ 2ε₀/λ."""
    _check_options("agd", options, {"reference", "eps0"})
    _smooth_l2("accelerated gradient", problem)
    Lh = _full_gradient_L(problem, None)
    q = (1 + sp.sqrt(lam / (2 * Lh))) ** -2
    prefactor = (Lh / lam) / q  # (L̂/2)(2/λ) times q^{-1} for the exponent k − 1
    eps_start, how = primal_eps0(problem, options.get("reference"), options.get("eps0"))
    return Bound("agd", problem, sampling, sp.log(prefactor * eps0 / eps) / -sp.log(q), nnz,
                 "Nesterov 2013 (Math. Program. 140), Thm 6 (accelerated method (4.9), γ_u = 2)", "subopt",
                 values={"eps0": eps_start}, rate_expr=1 - q, prefactor_expr=prefactor, eps0_how=how,
                 note="constants from the published statement (paper not in shared/papers); the line-search "
                      "trials are not counted as work")
