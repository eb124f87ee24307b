"""Argument rules shared by the whole package: each returns the checked value
or raises one ValueError naming the argument and what it must be.

    check_int("n_samples", 1e4)                  -> 10000  (integral floats accepted, bools not)
    check_real("lam", lam, low=0.0)              -> a finite float ≥ 0
    check_real("max_bytes", b, low=0.0, low_open=True, finite=False)  -> > 0, inf allowed
    check_choice("kind", kind, ("a", "b"))
    mu_F = renamed("mu_F", mu_F, "mu", mu)      # an old spelling: accepted, with a FutureWarning

Wording: "… must be a real number, got 'x'" for a value that is no number,
"… must be finite and ≥ 0, got -1.0" for one outside its range, "… must be
an integer ≥ 1, got 2.5" for a count.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np


def _scalar(value):
    """value as a Python/numpy number, a 0-d numeric array unwrapped; None if it is no real number."""
    if type(value) is float or type(value) is int:  # the common case, without the ABC checks below
        return value
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return None
    return value


def check_int(name: str, value, minimum: int = 1) -> int:
    """An integer ≥ minimum; integral floats such as 1e4 are accepted, bools are not."""
    number = _scalar(value)
    if number is None or not (isinstance(number, numbers.Integral)
                              or (math.isfinite(number) and float(number).is_integer())):
        raise ValueError(f"{name} must be an integer ≥ {minimum}, got {value!r}")
    number = int(number)
    if number < minimum:
        raise ValueError(f"{name} must be an integer ≥ {minimum}, got {number}")
    return number


def _interval(low, high, low_open, high_open) -> str:
    if high is None:
        return f"{'>' if low_open else '≥'} {low:g}"
    if low is None:
        return f"{'<' if high_open else '≤'} {high:g}"
    return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def check_real(name: str, value, low=None, high=None, low_open=False, high_open=False, finite=True) -> float:
    """A real number (finite unless finite=False; NaN never) in the interval given by
    low/high, open ends where asked."""
    number = _scalar(value)
    if number is None:
        raise ValueError(f"{name} must be a real number, got {value!r}")
    number = float(number)
    too_low = low is not None and (number <= low if low_open else number < low)
    too_high = high is not None and (number >= high if high_open else number > high)
    if math.isnan(number) or (finite and not math.isfinite(number)) or too_low or too_high:
        rules = (["finite"] if finite else []) + ([] if low is None and high is None else
                                                 [_interval(low, high, low_open, high_open)])
        raise ValueError(f"{name} must be {' and '.join(rules) or 'a number'}, got {number!r}")
    return number


def check_choice(name: str, value, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of {sorted(choices)}")
    return value


def make_rng(seed) -> np.random.Generator:
    """A numpy Generator from a non-negative int seed (or a Generator, used as is)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(check_int("seed", seed, minimum=0))


def renamed(new: str, new_value, old: str, old_value):
    """The value of an option given under its new name ``new`` or, for one more
    release, its old name ``old`` (None meaning "not given"); the old name warns."""
    if old_value is None:
        return new_value
    if new_value is not None:
        raise ValueError(f"{old} is the old name of {new}; pass {new} only")
    warnings.warn(f"{old}= is renamed {new}=; the old name will be removed in the next release",
                  FutureWarning, stacklevel=3)
    return old_value
