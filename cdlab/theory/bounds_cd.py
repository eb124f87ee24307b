"""Bounds for the coordinate methods: SDCA, dual RCD, primal RCD (theory.md §3–4).

**Dual (SDCA, dual RCD, any serial sampling q).** With
θ = min_i q_i λγn / (‖x_i‖² + λγn) and w = w(α), the gradient step
Δ = (θ/q_i)(−φ_i'(x_i·w) − α_i) satisfies, by the γ-strong convexity of φ_i*,

    E[D(α⁺) − D(α)] ≥ θ · G(w, α)          (G the duality gap)

(the Prox-SDCA slides' main lemma, Csiba & Richtárik 2016 Thm 1(ii) / Quartz
for general q; SDCA's uniform q gives θ = λγ/(R² + λγn)). The exact step
maximises the same 1-D function so it increases D at least as much. Since
G ≥ D* − D, E[D* − D(α_k)] ≤ (1 − θ)^k ε₀ with ε₀ = D* − D(α₀), and
E[G_k] ≤ (1/θ)·E[D(α_{k+1}) − D(α_k)] ≤ (1/θ)(1 − θ)^k ε₀, hence the
Shalev-Shwartz & Zhang form (theory.md §3)

    k ≥ (1/θ) log((1/θ) ε₀/ε)   ⇒   E[G_k] ≤ ε,     1/θ = n + R²/(λγ) (uniform).

**Primal RCD (NSync, any serial p).** With L_j = ‖f_j‖²/(γn) + λ and the step
−g_j/L_j, E[P(w⁺)] ≤ P(w) − Σ_j p_j g_j²/(2L_j) ≤ P(w) − θ_P ‖∇P(w)‖²/(2λ)
with θ_P = min_j p_j λ/L_j = min_j p_j λγn/(‖f_j‖² + λγn) (Thm 1(i)). For
μ = 0 the gap the trace reports, at α(w) = −φ'(Xw), is exactly
G(w, α(w)) = (λ/2)‖w − v(α(w))‖² = ‖∇P(w)‖²/(2λ) ≥ P(w) − P*. Hence
E[P(w_k) − P*] ≤ (1 − θ_P)^k ε₀ (ε₀ = P(w₀) − P*) and, as for the dual,
E[G_k] ≤ (1/θ_P)(1 − θ_P)^k ε₀.

**Lipschitz losses (SDCA, uniform, exact step).** The same lemma with a
remainder: E[D(α_t) − D(α_{t−1})] ≥ (s/n) E[G_{t−1}] − (s/n)² G/(2λ) for
every s ∈ [0, 1], G ≤ 4L²R². It gives E[D* − D(α_t)] ≤ ε for
t ≥ t₀ + (8L²R²/(λε) − 2n)₊, t₀ = ⌈max(0, n log(λnε₀/(2L²R²)))⌉, and
Shalev-Shwartz & Zhang 2013 Thm 2: the gap of the iterates averaged over
(T₀, T] is ≤ ε in expectation for T ≥ t₀ + n + 20L²R²/(λε).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from ..sampling import check_probabilities
from ._start import dual_eps0, primal_eps0
from .bound import Bound, register_bound
from .symbols import SYMBOLS as S

n, d, nnz, lam, gamma = S["n"], S["d"], S["nnz"], S["lam"], S["gamma"]
R, Rf, F2, C_P, C_D = S["R"], S["Rf"], S["F2"], S["C_P"], S["C_D"]
eps, eps0, theta, cost, L = S["eps"], S["eps0"], S["theta"], S["cost"], S["L"]

SRC_SDCA = "Shalev-Shwartz & Zhang 2013 (JMLR), Thm 1 (smooth losses)"
SRC_DUAL = "Csiba & Richtárik 2016, Thm 1(ii) (Quartz serial, Qu, Richtárik & Zhang 2015); gap form"
SRC_PRIMAL = "Csiba & Richtárik 2016, Thm 1(i) (NSync, Richtárik & Takáč 2015); gap via G(w, α(w)) = ‖∇P(w)‖²/(2λ)"
SRC_LIPSCHITZ = "Shalev-Shwartz & Zhang 2013 (JMLR), Thm 2 (L-Lipschitz losses, averaged iterates)"


def _check_options(method, options, allowed):
    unknown = set(options) - set(allowed)
    if unknown:
        raise ValueError(f"bound for {method!r} got unknown option(s) {sorted(unknown)}; it accepts {sorted(allowed)}")


def sampling_terms(problem, sampling, side):
    """(1/θ, expected nonzeros per step, numeric values) for a serial sampling.

    ``side`` is "dual" (rows, q ∈ Δ_n) or "primal" (columns, p ∈ Δ_d); face-off
    eqs. (7), (10)–(11), (14) and Theorem 1.
    """
    lgn = lam * gamma * n
    if isinstance(sampling, str):
        if sampling == "uniform":
            if side == "dual":
                return n + R ** 2 / (lam * gamma), nnz / n, {}
            return d * (1 + Rf ** 2 / lgn), nnz / d, {}
        if sampling == "importance":
            if side == "dual":
                return n + F2 / lgn, (C_D + lgn * nnz) / (F2 + lgn * n), {}
            return d + F2 / lgn, (C_P + lgn * nnz) / (F2 + lgn * d), {}
        if sampling in ("permutation", "cyclic"):
            raise ValueError(f"no bound for sampling {sampling!r}: the theorems need i.i.d. random coordinates "
                             "(a fixed cyclic order has no such guarantee, and shuffling once is not enough)")
        raise ValueError(f"unknown sampling {sampling!r}; use 'uniform', 'importance' or an array of probabilities")
    size = problem.n_samples if side == "dual" else problem.n_features
    probs = check_probabilities(sampling, size, "examples" if side == "dual" else "features")
    norms = problem.row_norms_sq if side == "dual" else problem.col_norms_sq
    counts = problem.row_nnz if side == "dual" else problem.col_nnz
    c = problem.lam * problem.gamma * problem.n_samples
    th = float(np.min(probs * c / (norms + c)))
    return 1 / theta, cost, {"theta": th, "cost": float(probs @ counts)}


def _linear_bound(method, problem, sampling, side, quantity, eps_pair, source, note=""):
    inv_theta, cost_expr, values = sampling_terms(problem, sampling, side)
    eps_start, how = eps_pair
    values = {**values, "eps0": eps_start}
    prefactor = inv_theta if quantity == "gap" else sp.Integer(1)
    return Bound(method=method, problem=problem, sampling=sampling,
                 expr=inv_theta * sp.log(prefactor * eps0 / eps), cost_expr=cost_expr, source=source,
                 quantity=quantity, values=values, rate_expr=1 / inv_theta, prefactor_expr=prefactor,
                 eps0_how=how, note=note)


def _lipschitz_sdca(method, problem, sampling, quantity, eps_pair):
    if sampling != "uniform":
        raise ValueError(f"the bound for the non-smooth {problem.loss} loss (SDCA Thm 2) covers uniform sampling "
                         "only; importance sampling (face-off eq. 14) needs a smooth loss")
    if problem.loss_info.lipschitz is None:
        raise ValueError(f"the {problem.loss} loss is neither smooth nor Lipschitz: no SDCA bound")
    G = 4 * L ** 2 * R ** 2
    # the recursion runs with s = 1 for t₀ whole steps, so t₀ is the ceiling (the paper's ⌈n log(·)⌉);
    # without it the count and the curve could be one step short of the theorem
    t0 = sp.ceiling(sp.Max(0, n * sp.log(2 * lam * n * eps0 / G)))
    if quantity == "gap":
        expr, iterate, note = t0 + n + 5 * G / (lam * eps), "average", (
            "gap of the iterates averaged over (T₀, T] (the paper's output), not of the last iterate")
    elif quantity == "dual_subopt":
        expr, iterate, note = t0 + sp.Max(0, 2 * G / (lam * eps) - 2 * n), "last", (
            "from the recursion E ε_D(t) ≤ (1 − s/n) ε_D(t−1) + (s/n)² G/(2λ), G = 4L²R²")
    else:
        raise ValueError(f"the Lipschitz-loss SDCA bound controls 'gap' (averaged) or 'dual_subopt', not {quantity!r}")
    eps_start, how = eps_pair
    return Bound(method=method, problem=problem, sampling=sampling, expr=expr, cost_expr=nnz / n,
                 source=SRC_LIPSCHITZ, quantity=quantity, values={"eps0": eps_start}, iterate=iterate,
                 eps0_how=how, note=note)


def _dual_bound(method, problem, sampling, options, source):
    quantity = options.get("quantity", "gap")
    if quantity not in ("gap", "dual_subopt"):
        raise ValueError(f"dual coordinate bounds control 'gap' or 'dual_subopt', not {quantity!r}")
    eps_pair = dual_eps0(problem, options.get("reference"), options.get("eps0"))
    if not problem.is_smooth:
        return _lipschitz_sdca(method, problem, sampling, quantity, eps_pair)
    return _linear_bound(method, problem, sampling, "dual", quantity, eps_pair, source)


@register_bound("sdca")
def sdca_bound(problem, sampling="uniform", **options):
    """SDCA / Prox-SDCA (exact step): smooth losses, any serial sampling; Lipschitz losses, uniform.
    None with ``shrinking=True`` (cdlab.solvers._shrinking): the theorems draw every step from all n
    examples, and shrinking leaves some out for whole epochs."""
    from ..solvers._shrinking import shrinking_flag  # the solver layer, loaded when a bound is asked for

    _check_options("sdca", options, {"reference", "eps0", "quantity", "shrinking"})
    if shrinking_flag(options):
        raise ValueError("no bound for SDCA with shrinking=True: the theorems (Shalev-Shwartz & Zhang 2013, "
                         "Thms 1–2; Csiba & Richtárik 2016) draw every step from all n examples, while shrinking "
                         "skips the examples it left out of its active set for whole epochs (Hsieh et al. 2008 "
                         "prove convergence, not a rate); the run's gap is still certified at every checkpoint")
    options.pop("shrinking", None)
    uniform = isinstance(sampling, str) and sampling == "uniform"  # sampling may be an array
    source = SRC_SDCA if uniform or not problem.is_smooth else SRC_DUAL
    return _dual_bound("sdca", problem, sampling, options, source)


@register_bound("dual_cd")
def dual_cd_bound(problem, sampling="uniform", **options):
    """Dual RCD (Quartz serial): gradient step (smooth losses) or exact step, any serial sampling. The
    per-coordinate step s̄_i = λγn/(‖x_i‖² + λγn) (``update="coordinate"``) has the same bound: its
    lower bound on coordinate i's dual gain is s̄_i G_i, and Σ_i q_i s̄_i G_i ≥ min_k q_k s̄_k Σ_i G_i = θ·n·G.
    So does the line search (``update="linesearch"``, the default): it gains at least what s̄_i's step does."""
    from ..solvers.base import METHODS
    from ..solvers.dual_cd import check_update, gradient_step_loss_rule

    _check_options("dual_cd", options, {"reference", "eps0", "quantity", "update"})
    update = options.pop("update", METHODS["dual_cd"].options["update"])
    check_update(update)
    refusal = gradient_step_loss_rule(problem.loss, {"update": update})
    if refusal:
        raise ValueError(refusal)
    return _dual_bound("dual_cd", problem, sampling, options, SRC_DUAL)


@register_bound("primal_cd")
def primal_cd_bound(problem, sampling="uniform", **options):
    """Primal RCD (NSync serial): smooth losses, μ = 0, any serial sampling."""
    _check_options("primal_cd", options, {"reference", "eps0", "quantity"})
    if not problem.is_smooth:
        raise ValueError(f"primal RCD's bound needs a smooth loss, not {problem.loss!r} "
                         "(try loss='smoothed_hinge')")
    if problem.l1 > 0:
        raise ValueError("primal RCD's bound (face-off Thm 1(i)) is for the L2 problem; with l1 > 0 the gap "
                         "identity G = ‖∇P‖²/(2λ) no longer holds and no bound is implemented")
    quantity = options.get("quantity", "gap")
    if quantity not in ("gap", "subopt"):
        raise ValueError(f"primal RCD's bound controls 'gap' or 'subopt', not {quantity!r}")
    eps_pair = primal_eps0(problem, options.get("reference"), options.get("eps0"))
    return _linear_bound("primal_cd", problem, sampling, "primal", quantity, eps_pair, SRC_PRIMAL)
