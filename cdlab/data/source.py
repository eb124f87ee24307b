"""``load(spec, normalize)``: the one way every entry point (CLI, grid, page,
benchmarks, tests) turns a dataset description into (X, y).

A spec is a registry name or a file path (str), ``{"path": ..., "n_features":
..., "zero_based": ...}`` for a file with reading options, or ``{"synthetic":
{...}}`` with the keywords of :func:`make_synthetic`.
"""
from __future__ import annotations

from .registry import load_dataset
from .synthetic import NORMALIZE, make_synthetic, normalize_data  # noqa: F401  (NORMALIZE: the choices)


def load(spec, normalize="none"):
    """(X, y) of ``spec``, rescaled by ``normalize`` (one of NORMALIZE: "none", "rows", "mean")."""
    if isinstance(spec, str):
        X, y = load_dataset(spec)
    elif isinstance(spec, dict) and "synthetic" in spec:
        X, y = make_synthetic(**spec["synthetic"])
    elif isinstance(spec, dict) and "path" in spec:
        X, y = load_dataset(spec["path"], n_features=spec.get("n_features"),
                            zero_based=spec.get("zero_based", "auto"))
    else:
        raise ValueError(f"a dataset is a name, a path, {{'path': ...}} or {{'synthetic': {{...}}}}; got {spec!r}")
    if normalize != "none":
        X = normalize_data(X, normalize)
    return X, y
