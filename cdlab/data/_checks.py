"""Argument checks shared by the data generators: each raises a ValueError naming the argument."""
from __future__ import annotations

import numbers

import numpy as np


def check_int(name: str, value, minimum: int = 1) -> int:
    """An integer ≥ minimum; integral floats such as 1e4 are accepted, bools are not."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, numbers.Real)):
        raise ValueError(f"{name} must be an integer ≥ {minimum}, got {value!r}")
    if not isinstance(value, numbers.Integral):
        if not (np.isfinite(value) and float(value).is_integer()):
            raise ValueError(f"{name} must be an integer ≥ {minimum}, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be an integer ≥ {minimum}, got {value}")
    return value


def check_real(name: str, value, low=None, high=None, low_open=False, high_open=False) -> float:
    """A finite real number in the interval given by low/high (open ends where asked)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    value = float(value)
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        interval = f"{'(' if low_open else '['}{lo}, {hi}{')' if high_open else ']'}"
        raise ValueError(f"{name} must lie in {interval}, got {value}")
    return value


def check_choice(name: str, value, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of {sorted(choices)}")
    return value


def make_rng(seed) -> np.random.Generator:
    """A numpy Generator from a non-negative int seed (or a Generator, used as is)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(check_int("seed", seed, minimum=0))
