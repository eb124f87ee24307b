"""Solvers: one module per method family, all behind ``cdlab.solve``.

Importing a family module registers its methods in ``METHODS``.
"""
from .base import METHODS, MethodSpec, Result, get_method, register
from .driver import solve
from . import dual_cd  # noqa: F401  (registers sdca, dual_cd)

__all__ = ["METHODS", "MethodSpec", "Result", "get_method", "register", "solve"]
