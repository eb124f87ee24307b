"""User arrays to float64, accepting what scikit-learn's ``check_array`` accepts.

Numeric and boolean dtypes convert directly. An object array (what numpy
makes of a pandas DataFrame with int, float and bool columns, or of a list
mixing Python and numpy numbers) converts when every element is a real
number; otherwise the first element that is not (a string, None, pd.NA, a
complex number) is named with its position, and its column label for a
DataFrame. Complex, string, date and other dtypes are refused by dtype.
"""
from __future__ import annotations

import decimal
import numbers

import numpy as np

_REAL_TYPES = (numbers.Real, np.bool_, decimal.Decimal)


def _position(index, shape, columns) -> str:
    if len(shape) == 1:
        return f"index {index[0]}"
    where = f"row {index[0]}, column {index[1]}"
    if columns is not None:
        where += f" ({columns[index[1]]!r})"
    return where


def as_float_array(name: str, value, allow_bool: bool = True, columns=None, copy: bool = True) -> np.ndarray:
    """A float64 array holding ``value``'s numbers: a new array, or with
    ``copy=False`` ``value`` itself when it already is a float64 ndarray (the
    caller then must not write to it).

    Raises ValueError naming ``name`` and, for an object array, the first
    element that is not a real number (with its label from ``columns`` or
    ``value.columns`` for a DataFrame)."""
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged nested sequences
        raise ValueError(f"{name} must be a numeric array: {exc}") from None
    kind = arr.dtype.kind
    if kind in "iuf" or (kind == "b" and allow_bool):
        return np.array(arr, dtype=np.float64, copy=True if copy else None)
    if kind != "O":
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    bad_types = {t for t in map(type, arr.flat)
                 if not issubclass(t, _REAL_TYPES) or (not allow_bool and issubclass(t, (bool, np.bool_)))}
    if bad_types:
        flat = next(k for k, e in enumerate(arr.flat) if type(e) in bad_types)
        index = np.unravel_index(flat, arr.shape)
        element = arr[index]
        columns = getattr(value, "columns", None) if columns is None else columns
        what = "a missing value" if element is None or repr(element) == "<NA>" else type(element).__name__
        raise ValueError(f"{name} must hold real numbers; found {element!r} ({what}) at "
                         f"{_position(index, arr.shape, columns)}")
    try:
        return np.array(arr, dtype=np.float64)
    except (OverflowError, ValueError, TypeError) as exc:  # e.g. an int beyond the float64 range
        raise ValueError(f"{name} must hold real numbers within the float64 range: {exc}") from None
