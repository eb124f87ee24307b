"""cdlab.theory: sympy derivations, every method's complexity bound, the face-off.

API (the contract with the dashboard, notebooks and CLI)::

    fo = theory.faceoff(problem)                 # C_P, C_D, costs, T_P/T_D, theorem3, prediction
    theory.faceoff_constants(problem)            # C_P, C_D, theorem3 only: any loss (a non-smooth one has no T)
    theory.binary_extremes(n, d, omega); theory.theorem4_bounds(n, d, omega); theory.theorem5(n, d, omega)
    theory.corollary6(n, d); theory.figure1_map(d, n_values, omega_values)
    b = theory.bound(method, problem, sampling="uniform", **options)
    b.expr, b.work_expr, b.source, b.quantity, b.latex(), b.iterations(eps), b.passes(eps), b.curve(passes),
    b.curve_at_steps(steps)
    theory.parallel_cost(problem, machines, batch_size, eps)   # ASDCA Section 3: runtime, communication
    theory.SYMBOLS; theory.evaluate(expr, problem, **extra)

Submodules: ``derivations`` (conjugates, γ, L, exact dual steps from φ),
``facts`` (i.i.d. ratio n/d, Theorem 2, the SPDC/SDCA crossover).
"""
import importlib
import pkgutil

from . import derivations, facts
from .bound import BOUNDS, Bound, bound
# every bounds_*.py module registers its bounds (@register_bound) when imported: a new one is picked up here
for _mod in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("bounds_")):
    importlib.import_module(f"{__name__}.{_mod}")
from .faceoff import (FaceOff, FaceOffConstants, binary_extremes, corollary6, faceoff, faceoff_constants,
                      figure1_map, theorem3_check, theorem4_bounds, theorem5)
from .parallel import PARALLEL_COST, asdca_partition, parallel_cost
from .symbols import SYMBOLS, evaluate

__all__ = ["SYMBOLS", "evaluate", "bound", "Bound", "BOUNDS", "faceoff", "FaceOff", "faceoff_constants",
           "FaceOffConstants", "theorem3_check",
           "binary_extremes", "theorem4_bounds", "theorem5", "corollary6", "figure1_map", "derivations", "facts",
           "parallel_cost", "asdca_partition", "PARALLEL_COST"]
