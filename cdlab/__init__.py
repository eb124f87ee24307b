"""cdlab: a laboratory for randomized coordinate methods on L2-regularised ERM.

    problem = cdlab.Problem(X, y, loss="logistic", lam=1e-4)
    result = cdlab.solve(problem, method="sdca", tol=1e-10)
    result.trace          # steps, nnz_touched, passes, time, primal, dual, gap, ...
"""
from .problem import Problem
from .solvers import METHODS, Result, solve
from .reference import reference_optimum
from .data import load_dataset
from .experiments import sweep
from .store import results

__all__ = ["Problem", "solve", "Result", "METHODS", "reference_optimum", "load_dataset", "sweep", "results"]
from ._version import __version__
