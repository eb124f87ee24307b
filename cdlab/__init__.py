"""cdlab: a laboratory for randomized coordinate methods on L2-regularised ERM.

    problem = cdlab.Problem(X, y, loss="logistic", lam=1e-4)
    result = cdlab.solve(problem, method="sdca", tol=1e-10)
    result.trace          # steps, nnz_touched, passes, time, primal, dual, gap, ...
"""
from ._jit_cache import configure as _configure_kernel_cache

_configure_kernel_cache()  # before any kernel is defined: see cdlab/_jit_cache.py

from .problem import Problem  # noqa: E402
from .solvers import METHODS, Result, solve
from .reference import reference_optimum
from .data import load_dataset
from .experiments import sweep
from .store import results

__all__ = ["Problem", "solve", "Result", "METHODS", "reference_optimum", "load_dataset", "sweep", "results"]
from ._version import __version__


def __getattr__(name):
    """``cdlab.theory`` on first use: the symbolic layer loads sympy (≈ 0.6 s), which a
    solve never needs, so ``import cdlab`` does not import it."""
    if name == "theory":
        import importlib

        return importlib.import_module(".theory", __name__)
    raise AttributeError(f"module 'cdlab' has no attribute {name!r}")
