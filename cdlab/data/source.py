"""``load(spec, normalize)``: the one way every entry point (CLI, grid, page,
benchmarks, tests) turns a dataset description into (X, y).

A spec is a registry name or a file path (str), ``{"path": ..., "n_features":
..., "zero_based": ...}`` for a file with reading options, or ``{"synthetic":
{...}}`` with the keywords of :func:`make_synthetic`.
"""
from __future__ import annotations

import os
from pathlib import Path

import scipy.sparse as sp

from .._checks import check_int
from . import registry
from .fetch import fetch_dataset
from .libsvm import DataFileNotFoundError, read_libsvm
from .registry import DATASETS, SHIPPED
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


def load_dataset(name_or_path, n_features=None, zero_based="auto", download=True):
    """Load a registry dataset by name, or any svmlight/LIBSVM file by path.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        A name from `list_datasets()` (looked up first), or a path to a plain, .gz or .bz2 file.
    n_features : int, optional
        Columns of X. For a registry dataset the default is its published d.
    zero_based : bool or "auto"
        For files by path only (registry files are 1-based); see `read_libsvm`.
    download : bool
        For a fetchable registry dataset not yet on this machine: download it into the data home
        first (True, the default) or raise DataFileNotFoundError saying how to get it (False).

    Returns
    -------
    X : scipy.sparse.csr_matrix, float64, shape (n_samples, n_features)
    y : numpy.ndarray, float64, shape (n_samples,)
        Fresh copies: modifying them does not touch the in-memory cache.
    """
    if isinstance(name_or_path, str) and name_or_path in DATASETS:
        info = DATASETS[name_or_path]
        d = info.n_features if n_features is None else check_int("n_features", n_features, minimum=1)
        if d < info.n_features:
            raise ValueError(f"dataset {info.name!r} has {info.n_features} features; n_features={d} is too few")
        if not info.is_available():
            if info.kind == SHIPPED or not download:
                raise registry._missing(info)
            fetch_dataset(info.name)
        st = info.path.stat()
        X, y = registry._load_cached(name_or_path, str(info.path), d, (st.st_ino, st.st_size, st.st_mtime_ns))
        return sp.csr_matrix(X, copy=True), y.copy()
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise ValueError(f"expected a dataset name or a path, got {type(name_or_path).__name__}")
    if isinstance(name_or_path, str) and os.sep not in name_or_path and not Path(name_or_path).exists():
        raise DataFileNotFoundError(
            f"unknown dataset {name_or_path!r} and no file of that name; known datasets: {', '.join(DATASETS)}")
    return read_libsvm(name_or_path, n_features=n_features, zero_based=zero_based)
