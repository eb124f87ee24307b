"""The real datasets of ../shared/data, by name, read in place and cached in memory.

Sizes are those of the data README (`../shared/data/README.md`); `n_features`
is the README's d, passed to the reader so that a train file and its `.t` test
file get the same columns even when the test file never uses the last ones.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import scipy.sparse as sp

from ._checks import check_int
from .libsvm import DataFileNotFoundError, read_libsvm


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    file: str          # file name inside the data directory
    n_samples: int
    n_features: int
    description: str


def _pair(name, n_train, n_test, d, kind):
    return [DatasetInfo(name, f"{name}.bz2", n_train, d, f"{kind} (train)"),
            DatasetInfo(f"{name}.t", f"{name}.t.bz2", n_test, d, f"{kind} (test)")]


def _one(name, n, d, kind):
    return [DatasetInfo(name, f"{name}.bz2", n, d, kind)]


DATASETS: dict[str, DatasetInfo] = {info.name: info for info in [
    *_pair("a9a", 32561, 16281, 123, "adult census, n ≫ d, binary features"),
    *_one("w8a", 49749, 300, "n ≫ d, binary features, rows may be empty"),
    *_pair("ijcnn1", 49990, 91701, 22, "IJCNN 2001 challenge, n ≫ d, dense-ish"),
    *_one("mushrooms", 8124, 112, "UCI mushrooms, binary features"),
    *_one("phishing", 11055, 68, "UCI phishing websites, unit-norm rows"),
    *_one("heart_scale", 270, 13, "statlog heart, tiny and dense"),
    *_pair("reuters_moneyfx", 7770, 3299, 8315, "Reuters-21578 money-fx, sparse tf-idf text, unit rows, d ≈ n"),
    *_pair("rcv1_small", 1000, 500, 47236, "RCV1-v2 sample, sparse tf-idf text, d ≫ n, many empty columns"),
    *_one("colon-cancer", 62, 2000, "colon microarray, dense, d ≫ n"),
    *_one("madelon", 2000, 500, "NIPS 2003 madelon, dense, n > d, hard"),
]}


def list_datasets() -> list[str]:
    """Names accepted by `load_dataset`, in registry order."""
    return list(DATASETS)


def data_dir() -> Path:
    """$CDLAB_DATA_DIR if set, else <repo root>/../shared/data (repo root = parent of the cdlab package)."""
    env = os.environ.get("CDLAB_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


@functools.lru_cache(maxsize=None)
def _load_cached(name: str, directory: str, n_features: int):
    info = DATASETS[name]
    path = Path(directory) / info.file
    if not path.exists():
        raise DataFileNotFoundError(
            f"dataset {name!r}: file {path} not found (set CDLAB_DATA_DIR to the directory holding {info.file})")
    X, y = read_libsvm(path, n_features=n_features, zero_based=False)
    if X.shape[0] != info.n_samples:
        raise ValueError(f"dataset {name!r}: {path} has {X.shape[0]} examples, the registry says {info.n_samples}")
    # the cache keeps read-only originals; callers get copies
    for array in (X.data, X.indices, X.indptr, y):
        array.flags.writeable = False
    return X, y


def load_dataset(name_or_path, n_features=None, zero_based="auto"):
    """Load a registry dataset by name, or any svmlight/LIBSVM file by path.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        A name from `list_datasets()` (looked up first), or a path to a plain, .gz or .bz2 file.
    n_features : int, optional
        Columns of X. For a registry dataset the default is its README d.
    zero_based : bool or "auto"
        For files by path only (registry files are 1-based); see `read_libsvm`.

    Returns
    -------
    X : scipy.sparse.csr_matrix, float64, shape (n_samples, n_features)
    y : numpy.ndarray, float64, shape (n_samples,)
        Fresh copies: modifying them does not touch the in-memory cache.
    """
    if isinstance(name_or_path, str) and name_or_path in DATASETS:
        info = DATASETS[name_or_path]
        d = info.n_features if n_features is None else check_int("n_features", n_features, minimum=1)
        X, y = _load_cached(name_or_path, str(data_dir()), d)
        return sp.csr_matrix(X, copy=True), y.copy()
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise ValueError(f"expected a dataset name or a path, got {type(name_or_path).__name__}")
    if isinstance(name_or_path, str) and os.sep not in name_or_path and not Path(name_or_path).exists():
        raise DataFileNotFoundError(
            f"unknown dataset {name_or_path!r} and no file of that name; known datasets: {', '.join(DATASETS)}")
    return read_libsvm(name_or_path, n_features=n_features, zero_based=zero_based)
