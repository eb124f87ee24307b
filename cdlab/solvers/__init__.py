"""Solvers: one module per method family, all behind ``cdlab.solve``.

Every module in this package that calls ``register(MethodSpec(...))`` adds its
methods to ``METHODS``; modules are imported here automatically, so a new
method family is one new file. ``solve`` is the driver's, behind the
``method="auto"`` dispatch of ``auto.py``.
"""
import importlib
import pkgutil

from .base import METHODS, MethodSpec, Result, get_method, register
from .auto import solve  # the driver's solve, plus method="auto"
from .dual_cd import FACEOFF_OPTIONS

for _mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _mod not in ("base", "driver") and not _mod.startswith("_"):
        importlib.import_module(f"{__name__}.{_mod}")

__all__ = ["FACEOFF_OPTIONS", "METHODS", "MethodSpec", "Result", "get_method", "register", "solve"]
