"""A complexity bound: a sympy expression, its source, and its numbers on a Problem.

Every bound in cdlab has the same shape. ``expr`` is the number of iterations
(the solver's ``steps``) after which the theorem guarantees that the
*expected* ``quantity`` is ≤ ε:

* "gap"          P(w_k) − D(α_k) at the pair the trace reports,
* "subopt"       P(w_k) − P*,
* "dual_subopt"  D* − D(α_k),
* "dist"         ‖w_k − w*‖².

``iterate`` says which point: "last" or "average" (SGD, Lipschitz SDCA).
For a linear rate, ``curve`` draws ε(k) = floor + eps0 · (1 − rate)^⌊k/period⌋
(``floor`` = 0 except where a perturbation biases the limit, SPDC with δ > 0), with
``eps0`` = prefactor × ε₀, where ε₀ (``eps_start``) is the honest initial
error the theorem starts from: by default an upper bound computable without
solving (the initial duality gap of the method's own starting point), or
the exact value when a reference optimum is passed. Sublinear bounds are drawn
by inverting ``expr`` numerically.

Work: ``cost_expr`` is the expected number of nonzeros touched per iteration
(amortised over periodic full passes), and ``start_expr`` the nonzeros read
before the first iteration (L-SVRG's full gradient at w₀; 0 elsewhere), so
``work_expr = expr · cost_expr + start_expr`` and ``passes = work / nnz``
(theory.md §9).

A theorem bounds an expectation; one run is one sample. ``iterations(eps,
delta=...)`` gives the high-probability form by Markov's inequality:
E[Q_k] ≤ ε·δ implies P(Q_k > ε) ≤ δ.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.special
import sympy as sp

from .._checks import check_real
from .symbols import SYMBOLS, evaluate

QUANTITIES = ("gap", "subopt", "dual_subopt", "dist")
# sympy's LambertW(x, k) for lambdify (SGD's bound): scipy returns a complex number
_LAMBERTW = {"LambertW": lambda x, k=0: float(np.real(scipy.special.lambertw(x, k)))}


def _tex_escape(text: str) -> str:
    for ch, rep in (("\\", r"\backslash "), ("&", r"\&"), ("%", r"\%"), ("#", r"\#"), ("_", r"\_"),
                    ("{", r"\{"), ("}", r"\}")):
        text = text.replace(ch, rep)
    return text


@dataclass
class Bound:
    method: str
    problem: object
    sampling: object
    expr: sp.Expr
    cost_expr: sp.Expr
    source: str
    quantity: str
    values: dict = field(default_factory=dict)  # symbol name -> float the Problem cannot supply
    rate_expr: object = None  # contraction per period (None: sublinear)
    prefactor_expr: object = sp.Integer(1)
    period_expr: object = sp.Integer(1)  # iterations per contraction (SVRG epoch, APPA stage)
    start_expr: object = sp.Integer(0)  # nonzeros read before the first iteration (module docstring)
    iterate: str = "last"
    exact: bool = True  # False: an O(·) statement with unit constants (the paper's constant is not in our copy)
    note: str = ""
    eps0_how: str = ""
    floor: float = 0.0  # a bias the guarantee never goes below (SPDC with δ > 0: the perturbation's)

    def __post_init__(self):
        if self.quantity not in QUANTITIES:
            raise ValueError(f"quantity must be one of {QUANTITIES}, got {self.quantity!r}")

    # ------------------------------------------------------------ numbers
    def evaluate(self, expr, **extra) -> float:
        """Any expression in SYMBOLS evaluated on this bound's problem and values."""
        return evaluate(expr, self.problem, **{**self.values, **extra})

    @property
    def work_expr(self) -> sp.Expr:
        return self.expr * self.cost_expr + self.start_expr

    @property
    def eps_start(self) -> float:
        """ε₀: the initial error the theorem starts from (see eps0_how)."""
        return float(self.values["eps0"])

    @property
    def eps0(self) -> float:
        """The constant in front of the contraction: prefactor × ε₀."""
        return self.evaluate(self.prefactor_expr) * self.eps_start

    @property
    def rate(self):
        return None if self.rate_expr is None else self.evaluate(self.rate_expr)

    @property
    def period(self) -> float:
        return self.evaluate(self.period_expr)

    @property
    def cost_per_step(self) -> float:
        return self.evaluate(self.cost_expr)

    @property
    def start_cost(self) -> float:
        return self.evaluate(self.start_expr)

    def iterations(self, eps, delta=None) -> float:
        """Iterations after which E[quantity] ≤ eps (or, with ``delta``, the
        quantity itself is ≤ eps with probability ≥ 1 − delta, by Markov)."""
        eps = check_real("eps", eps, low=0.0, low_open=True)  # log(ε₀/ε) is real for finite ε > 0 only
        if delta is not None:
            eps *= check_real("delta", delta, low=0.0, high=1.0, low_open=True)
        return max(0.0, self.evaluate(self.expr, eps=eps))

    def passes(self, eps, delta=None) -> float:
        """Total work of ``iterations(eps)`` in passes (nonzeros touched / nnz)."""
        return (self.iterations(eps, delta) * self.cost_per_step + self.start_cost) / self.problem.nnz

    def steps_from_passes(self, passes):
        work = np.asarray(passes, dtype=float) * self.problem.nnz - self.start_cost
        return np.maximum(work, 0.0) / self.cost_per_step

    def curve(self, passes) -> np.ndarray:
        """The guaranteed expected ``quantity`` after ``passes`` passes (array in, array out).

        Passes are converted to steps with the *expected* cost per step; to draw the bound
        against a trace's own step counter use ``curve_at_steps(trace.steps)``."""
        passes = np.asarray(passes, dtype=float)
        if np.any(np.isnan(passes)) or np.any(passes < 0):
            raise ValueError("passes must be ≥ 0 (not NaN)")
        return self.curve_at_steps(self.steps_from_passes(passes))

    def curve_at_steps(self, steps) -> np.ndarray:
        """The guaranteed expected ``quantity`` after ``steps`` iterations (array in, array out)."""
        k = np.asarray(steps, dtype=float)
        if np.any(np.isnan(k)) or np.any(k < 0):
            raise ValueError("steps must be ≥ 0 (not NaN)")
        if self.rate is not None:
            return self.floor + self.eps0 * (1.0 - self.rate) ** np.floor(k / self.period)
        return self._invert(k)

    def _invert(self, k):
        """ε(k) for a sublinear bound: the smallest ε whose iteration count is ≤ k."""
        f = sp.lambdify(SYMBOLS["eps"], self.expr.subs(
            {SYMBOLS[name]: val for name, val in self._all_values().items()}), [_LAMBERTW, "numpy"])
        out = np.empty_like(k)
        for idx, kk in np.ndenumerate(k):
            lo, hi = -300.0, 300.0  # bisection on log10 ε; the count decreases in ε
            if max(0.0, float(f(10.0 ** hi))) > kk:
                out[idx] = np.inf
                continue
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if max(0.0, float(f(10.0 ** mid))) <= kk:
                    hi = mid
                else:
                    lo = mid
            out[idx] = 10.0 ** hi
        return out

    def _all_values(self):
        from .symbols import problem_values
        by_symbol = {s: name for name, s in SYMBOLS.items()}
        names = {by_symbol[s] for s in self.expr.free_symbols} - {"eps"} - set(self.values)
        return {**problem_values(self.problem, names), **self.values}

    # ------------------------------------------------------------ display
    def latex(self, source=True) -> str:
        tex = r"T(\epsilon) = " + sp.latex(self.expr)
        if source:
            tex += r" \quad \text{" + _tex_escape(self.source) + "}"
        return tex

    def as_dict(self, eps=None) -> dict:
        out = dict(method=self.method, sampling=self.sampling if isinstance(self.sampling, str) else "custom",
                   quantity=self.quantity, iterate=self.iterate, source=self.source, exact=self.exact,
                   note=self.note, expr=str(self.expr), latex=self.latex(source=False),
                   rate=self.rate, eps0=self.eps0, eps_start=self.eps_start, eps0_how=self.eps0_how, floor=self.floor,
                   cost_per_step=self.cost_per_step)
        if eps is not None:
            out.update(eps=eps, iterations=self.iterations(eps), passes=self.passes(eps))
        return out

    def __repr__(self):
        return (f"Bound({self.method!r}, sampling={self.sampling if isinstance(self.sampling, str) else 'custom'!r}, "
                f"quantity={self.quantity!r}, source={self.source!r})")


# ---------------------------------------------------------------- registry
BOUNDS: dict = {}
NO_BOUND = {
    "sag": "SAG's guarantee (Schmidt, Le Roux & Bach) is not in the project's papers; no bound is implemented",
    "lbfgs": "L-BFGS has no global linear-rate bound of the kind the papers give",
    "newton": ("damped Newton's global linear phase (Boyd & Vandenberghe §9.5.3) has constants — the Hessian's "
               "Lipschitz constant and the strong convexity over the sublevel set — that cannot be evaluated on "
               "the user's data, and its quadratic local convergence is not a rate to ε from the start"),
}


def register_bound(name):
    def deco(fn):
        BOUNDS[name] = fn
        return fn
    return deco


def bound(method, problem, sampling="uniform", **options) -> Bound:
    """The complexity bound of ``method`` on ``problem`` (see the module docstring).

    ``options`` are the method's options that change its guarantee
    (``batch_size``, ``step_size``, ``update``, ``kappa``, ...; an old name the
    method's spec lists as ``renamed`` is accepted with a FutureWarning) plus ``reference`` (P*, or
    True to compute it), ``eps0`` (override ε₀) and ``quantity``.
    Raises ValueError for an unknown method, a loss or sampling the theorem
    does not cover, or parameters outside its assumptions.
    """
    if method in NO_BOUND:
        raise ValueError(f"no bound for {method!r}: {NO_BOUND[method]}")
    if method not in BOUNDS:
        raise ValueError(f"unknown method {method!r}; bounds exist for {sorted(BOUNDS)}")
    from ..solvers import METHODS
    if method in METHODS:
        options = METHODS[method].current_names(options)
    return BOUNDS[method](problem, sampling, **options)
