"""What the dashboard knows about the current data before any run: the
problem, its face-off quantities (theory.md §4), each planned run's bound,
the Figure 1 map for its d, and P* when the P − P* axis is asked for.

Computed on the session's worker thread (a dataset can take seconds to load)
and cached on primitive keys.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..data import Data
from ..problem import Problem
from . import datasource
from .cache import LRUCache
from .runner import RunSpec, check, sampling_argument

_DATA = LRUCache(maxsize=6)  # data key -> Data (loss/λ/μ applied by Problem.from_data)
_THEORY = LRUCache(maxsize=64)  # problem key -> face-off; (problem key, run) -> bound
_FIG1 = LRUCache(maxsize=16)  # (d, n_max) -> (n_values, omega_values, map)
_PSTAR = LRUCache(maxsize=64)
FACEOFF_METHODS = ("primal_cd", "dual_cd")  # the face-off's primal and dual RCD (theory.md §4)


def _theory():
    # imported on the worker thread, not with the page: sympy takes a second or two to load
    from .. import theory
    return theory


@dataclass(frozen=True)
class BoundInfo:
    """A run's bound from ``cdlab.theory.bound`` (or why there is none).

    The guaranteed-ε curve is evaluated once, on the worker, over twice the
    pass budget (a sublinear bound inverts its expression numerically, which
    is far too slow to redo on the event loop at every streamed checkpoint).
    """

    label: str
    latex: str = ""
    source: str = ""
    quantity: str = "gap"
    error: str = ""
    bound: object = None  # the theory layer's Bound (passes(eps), ...)
    passes_grid: np.ndarray = None
    eps_grid: np.ndarray = None
    passes_to: dict = field(default_factory=dict, compare=False, repr=False)  # target -> passes (see passes)

    def passes(self, target) -> float:
        """Passes the bound needs to guarantee ε = target on this data (inf if never), remembered per
        target: the cards ask at every update, and the theory layer evaluates it symbolically."""
        if target not in self.passes_to:
            try:
                self.passes_to[target] = float(self.bound.passes(target))
            except (ValueError, ZeroDivisionError, OverflowError):
                self.passes_to[target] = math.inf
        return self.passes_to[target]

    def curve(self, last_passes):
        """(passes, guaranteed ε) over [0, last_passes] (within the grid), or None without a bound."""
        if self.passes_grid is None:
            return None
        last = min(float(last_passes), float(self.passes_grid[-1]))
        inside = self.passes_grid < last
        passes = np.append(self.passes_grid[inside], last)
        # the bound is a step function of the steps done: the value at `last` is that of its step
        eps = np.append(self.eps_grid[inside], self.eps_grid[np.searchsorted(self.passes_grid, last)])
        return passes, eps


@dataclass(frozen=True)
class Analysis:
    data_key: tuple
    problem_key: tuple
    problem: Problem
    note: str = ""
    binary: bool = False
    faceoff: object = None
    faceoff_note: str = ""
    refusals: dict = field(default_factory=dict)  # run label -> reason
    bounds: dict = field(default_factory=dict)  # run label -> BoundInfo
    faceoff_bounds: dict = field(default_factory=dict)  # (method, sampling) -> BoundInfo, primal/dual RCD
    figure1: tuple = None  # (n_values, omega_values, upper-bound map) or None
    figure1_error: str = ""
    p_star: float = None


def build_problem(data_key, loss, lam_rule, log10_lam, l1):
    """(problem, problem_key): λ = 1/n under the "1/n" rule, else 10^log10_lam."""
    data = _DATA.get_or_compute(data_key, lambda: Data(*datasource.load(data_key)[:2]))
    lam = 1.0 / data.n_samples if lam_rule == "1/n" else float(10.0 ** log10_lam)
    problem = Problem.from_data(data, loss=loss, lam=lam, l1=float(l1))
    return problem, (data_key, problem.loss, float(lam), float(l1))


def is_binary(problem) -> bool:
    """Every stored nonzero is ±c for one c > 0: binary data (face-off §6, Figure 1)
    up to a scale. C_P and C_D both scale with c², so C_P/C_D and Theorem 4's
    map do not see c, and data divided by its mean example norm (the default
    normalisation) stay binary; unit rows of unequal length do not."""
    values = np.abs(problem.X.data)
    values = values[values != 0]  # an explicitly stored zero is not a nonzero
    return bool(values.size and np.all(values == values[0]))


def faceoff_of(problem, problem_key):
    """(face-off, note). A non-smooth loss has no γ, so no total work T: its face-off is the
    quantities of X alone (``theory.faceoff_constants``: C_P, C_D, Theorem 3), and the note says why."""
    theory = _theory()
    if problem.is_smooth:
        return _THEORY.get_or_compute(("faceoff", problem_key), lambda: theory.faceoff(problem)), ""
    fo = _THEORY.get_or_compute(("faceoff constants", problem_key[0]), lambda: theory.faceoff_constants(problem))
    return fo, (f"the {problem.loss} loss is not smooth, so the face-off's total-work formulas (which "
                "need γ) do not apply; C_P, C_D and Theorem 3 depend on X only and are shown")


def bound_of(run, problem, problem_key, max_passes):
    """BoundInfo of a run from the theory layer (its error message if it has no bound)."""
    key = ("bound", problem_key, run.method, run.sampling, run.batch_size)

    def compute():
        try:
            return _theory().bound(run.method, problem, sampling_argument(run, problem), **run.options)
        except ValueError as exc:
            return BoundInfo(run.label, error=str(exc))

    b = _THEORY.get_or_compute(key, compute)
    if isinstance(b, BoundInfo):
        return b

    def info():
        grid = np.linspace(0.0, 2.0 * max_passes, 241)
        return BoundInfo(run.label, latex=b.latex(source=False), source=b.source, quantity=b.quantity, bound=b,
                         passes_grid=grid, eps_grid=np.asarray(b.curve(grid), dtype=float))
    # the same BoundInfo for the same run and budget: a new analysis of the same problem redraws no bound
    return _THEORY.get_or_compute(("curve", key, float(max_passes)), info)


def figure1_of(problem):
    """The Theorem 4 upper bound on C_P/C_D over (n, ω) for this d (face-off Figure 1)."""
    d, n = problem.n_features, problem.n_samples
    n_max = int(10 ** np.ceil(np.log10(max(10 * n, 4 * d * d, 100))))

    def compute():
        n_values = np.unique(np.round(np.logspace(0, np.log10(n_max), 90))).astype(np.int64)
        omega_values = np.unique(np.round(np.logspace(np.log10(max(d, 1)), np.log10(float(n_max) * d), 90)))
        grid = _theory().figure1_map(d, n_values, omega_values.astype(np.int64))
        return n_values, omega_values, np.asarray(grid, dtype=float)

    return _FIG1.get_or_compute((int(d), n_max), compute)


def p_star_of(problem, problem_key):
    from ..reference import reference_optimum
    return _PSTAR.get_or_compute(problem_key, lambda: float(reference_optimum(problem)))


def analyse(settings, runs, need_p_star=False):
    """Build the Analysis of ``settings`` (a frozen Settings) for ``runs``."""
    problem, pkey = build_problem(settings.data_key, settings.loss, settings.lam_rule, settings.log10_lam,
                                  settings.l1)
    refusals = {r.label: reason for r in runs if (reason := check(r, problem)) is not None}
    try:
        fo, fo_note = faceoff_of(problem, pkey)
    except ValueError as exc:
        fo, fo_note = None, str(exc)
    bounds = {r.label: bound_of(r, problem, pkey, settings.budget.max_passes) for r in runs
              if r.label not in refusals}
    # the prediction in the plot's and the theory card's unit: each face-off method's bound on passes to ε
    face = [RunSpec(m, s) for m in FACEOFF_METHODS for s in ("uniform", "importance")]
    faceoff_bounds = {} if fo is None or fo_note else {
        (r.method, r.sampling): bound_of(r, problem, pkey, settings.budget.max_passes) for r in face
        if check(r, problem) is None}
    try:
        fig1, fig1_error = figure1_of(problem), ""
    except ValueError as exc:
        fig1, fig1_error = None, str(exc)
    p_star = p_star_of(problem, pkey) if need_p_star else None
    return Analysis(data_key=settings.data_key, problem_key=pkey, problem=problem,
                    note=datasource.load(settings.data_key)[2], binary=is_binary(problem), faceoff=fo,
                    faceoff_note=fo_note, refusals=refusals, bounds=bounds, faceoff_bounds=faceoff_bounds, figure1=fig1,
                    figure1_error=fig1_error, p_star=p_star)
