"""What the page's words mean: one line per method and per symbol, for the hover help.

Methods: what each does (which coordinate it samples is its MethodSpec's ``axis``).
Symbols: as in theory.md and the face-off paper (Csiba & Richtárik 2016).
"""
from __future__ import annotations

from ..solvers import METHODS as SOLVERS

METHODS = {
    "sdca": ("SDCA / Prox-SDCA: exact maximisation of the dual in one example's coordinate per step "
             "(Shalev-Shwartz & Zhang 2013, 2016). Handles every loss, hinge included."),
    "dual_cd": ("Dual randomized coordinate descent (Quartz, serial; Csiba & Richtárik 2016, Alg. 2): a gradient "
                "step θ/qᵢ in one example's dual coordinate."),
    "primal_cd": ("Primal randomized coordinate descent (NSync; Csiba & Richtárik 2016, Alg. 1): a gradient step "
                  "in one feature wⱼ, reading column fⱼ of X. Needs a smooth loss."),
    "spdc": ("Stochastic primal–dual coordinate method (Zhang & Xiao 2015): a dual coordinate step, a primal "
             "proximal step and an extrapolation; accelerated, 1 + √(κ/n) per pass."),
    "asdca": ("Accelerated mini-batch SDCA (Shalev-Shwartz & Zhang 2013): SDCA on mini-batches of m examples with "
              "Nesterov-style momentum; interpolates between SDCA (m = 1) and accelerated gradient (m = n)."),
    "appa": ("APPA (Frostig, Ge, Kakade & Sidford 2015): approximate proximal point; each stage solves a "
             "better-conditioned problem with SDCA."),
    "accel_appa": "Accelerated APPA (Frostig et al. 2015): APPA's stages with Nesterov extrapolation between them.",
    "dual_appa": "Dual APPA (Frostig et al. 2015, Alg. 3): proximal point on the dual, SDCA inside.",
    "sgd": "Stochastic gradient descent: one example's gradient per step, a decreasing step size.",
    "svrg": "SVRG (Johnson & Zhang 2013): stochastic steps corrected by a full gradient taken once per epoch.",
    "lsvrg": ("Loopless SVRG (Kovalev, Horváth & Richtárik 2020): SVRG whose full gradient is retaken at a random "
              "step (probability 1/n), with the step its theorem covers."),
    "sag": "SAG (Schmidt, Le Roux & Bach 2017): the average of the last gradient seen for every example.",
    "saga": "SAGA (Defazio, Bach & Lacoste-Julien 2014): SAG's table of gradients with an unbiased step.",
    "gd": "Gradient descent: the full gradient at each step (n rows read per step).",
    "agd": "Nesterov's accelerated gradient descent: full gradients with momentum.",
    "lbfgs": "L-BFGS (scipy): a quasi-Newton method on full gradients.",
    "newton": ("Damped Newton: the exact d × d Hessian, solved by Cholesky, with a line search; "
               "for few features: two passes and O(Σ nnz_i² + d³) flops per iteration. On the hinge: "
               "Newton on smoothed hinges whose smoothing shrinks stage by stage, certified by the hinge's gap."),
}

SYMBOLS = {
    "C_P": "C_P = Σⱼ ‖fⱼ‖₀ ‖fⱼ‖² over the columns fⱼ of X: the primal side's data term (face-off eq. 16).",
    "C_D": "C_D = Σᵢ ‖xᵢ‖₀ ‖xᵢ‖² over the rows xᵢ of X: the dual side's data term (face-off eq. 16).",
    "T_P, T_D": ("Total work of primal / dual RCD per factor log(1/ε) of accuracy, in nonzeros touched "
                 "(face-off eq. 15); multiply by log(ε₀/ε) for the work to reach ε."),
    "NSync": "The primal coordinate method of Richtárik & Takáč (arbitrary sampling); here primal_cd.",
    "Quartz": "The primal–dual method of Qu, Richtárik & Zhang; its serial dual form is dual_cd.",
    "κ": "Condition number κ = R²/(λγ), R = maxᵢ‖xᵢ‖: large κ (≫ n) is where acceleration pays.",
    "R_f": "The largest column norm maxⱼ ‖fⱼ‖ (the primal side's R).",
    "γ": "Smoothness of the loss: its derivative is 1/γ-Lipschitz (γ = 1 squared, 4 logistic, s smoothed hinge).",
    "λ": "The L2 regularisation strength; the page's default λ = 1/n is the face-off paper's experiments'.",
    "ε": "The target duality gap: a run is at ε when P(w) − D(α) ≤ ε, which certifies P(w) − P* ≤ ε.",
    "ε₀": "The initial gap (or suboptimality) that a bound's log(ε₀/ε) factor starts from.",
    "pass": "One pass = as many nonzeros of X touched as X has (nnz): the same unit for a row or a column step.",
}


def method_help(method: str) -> str:
    """The method's line here (its MethodSpec's source where it has none) and what it samples (its axis)."""
    spec = SOLVERS[method]
    where = {"examples": "samples examples (rows)", "features": "samples features (columns)",
             "none": "full gradient: samples nothing"}[spec.axis]
    return f"**{method}** — {METHODS.get(method, spec.source)} ({where})"


def samples(method: str) -> bool:
    """Whether a method samples coordinates (full-gradient methods do not)."""
    return SOLVERS[method].axis != "none"


def symbols_markdown() -> str:
    return "\n".join(f"- **{name}**: {text}" for name, text in SYMBOLS.items())
