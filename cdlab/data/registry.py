"""The real datasets, by name: the classic small sets shipped inside the package, and larger
classic sets fetched on first use from the LIBSVM binary collection.

Shipped sets live in ``cdlab/data/files`` (provenance and licences in its README.md, checksums in
its SHA256SUMS), so a fresh clone or a wheel has them. Fetchable sets are downloaded into the data
home (``cdlab.paths.data_home()``: ``$CDLAB_DATA_DIR``, else ``<user cache>/cdlab/data``) by
``cdlab.data.fetch.fetch_dataset`` and checked there against their published shape. Any other
svmlight/LIBSVM file is read by path.

``n_features`` is the published d, passed to the reader so that a train file and its test
file get the same columns even when one never uses the last ones.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..paths import data_home
from .libsvm import DataFileNotFoundError, read_libsvm

SHIPPED = "shipped"
FETCH = "fetch"
LIBSVM_BINARY_URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"


@dataclass(frozen=True)
class DatasetInfo:
    """One registry entry. ``nnz`` is the published number of nonzeros (None where the source
    publishes none: then n and d are checked alone); ``download_mb`` the approximate size of the
    compressed file; ``label_map`` maps the file's two labels to ±1 where they are not ±1."""
    name: str
    file: str          # file name inside the shipped directory or the data home
    n_samples: int
    n_features: int
    description: str
    nnz: int | None = None
    kind: str = SHIPPED
    url: str = ""
    download_mb: float = 0.0
    label_map: tuple = field(default=())   # ((file label, ±1), ...)

    @property
    def path(self) -> Path:
        """Where the file is (shipped) or will be (fetchable) on this machine."""
        return (shipped_dir() if self.kind == SHIPPED else data_home()) / self.file

    def is_available(self) -> bool:
        return self.path.is_file()


def _pair(name, n_train, n_test, d, nnz, kind):
    return [DatasetInfo(name, f"{name}.bz2", n_train, d, f"{kind} (train)", nnz=nnz),
            DatasetInfo(f"{name}.t", f"{name}.t.bz2", n_test, d, f"{kind} (test)")]


def _one(name, n, d, nnz, kind):
    return [DatasetInfo(name, f"{name}.bz2", n, d, kind, nnz=nnz)]


def _fetched(name, file, n, d, nnz, download_mb, kind, label_map=()):
    return [DatasetInfo(name, file, n, d, kind, nnz=nnz, kind=FETCH, url=LIBSVM_BINARY_URL + file,
                        download_mb=download_mb, label_map=label_map)]


# shipped: sizes from files/README.md (nnz of the train files); fetchable: shapes from the LIBSVM
# binary collection's page. nnz is checked where recorded; covtype and url publish none that we hold.
DATASETS: dict[str, DatasetInfo] = {info.name: info for info in [
    *_pair("a9a", 32561, 16281, 123, 451592, "adult census, n ≫ d, binary features"),
    *_one("w8a", 49749, 300, 579586, "n ≫ d, binary features, rows may be empty"),
    *_pair("ijcnn1", 49990, 91701, 22, 649869, "IJCNN 2001 challenge, n ≫ d, dense-ish"),
    *_one("mushrooms", 8124, 112, 170604, "UCI mushrooms, binary features"),
    *_one("phishing", 11055, 68, 331650, "UCI phishing websites, unit-norm rows"),
    *_one("heart_scale", 270, 13, 3378, "statlog heart, tiny and dense"),
    *_pair("reuters_moneyfx", 7770, 3299, 8315, 339837,
           "Reuters-21578 money-fx, sparse tf-idf text, unit rows, d ≈ n"),
    *_pair("rcv1_small", 1000, 500, 47236, 77739, "RCV1-v2 sample, sparse tf-idf text, d ≫ n, many empty columns"),
    *_one("colon-cancer", 62, 2000, 124000, "colon microarray, dense, d ≫ n"),
    *_one("madelon", 2000, 500, 999999, "NIPS 2003 madelon, dense, n > d, hard"),
    *_fetched("rcv1.binary", "rcv1_train.binary.bz2", 20242, 47236, 1498952, 13.7,
              "RCV1-v2 train split, sparse tf-idf text, unit rows"),
    *_fetched("news20.binary", "news20.binary.bz2", 19996, 1355191, 9097916, 35.0,
              "news20 two-class, sparse text, d ≫ n"),
    *_fetched("real-sim", "real-sim.bz2", 72309, 20958, 3709083, 33.6,
              "real vs simulated auto/aviation newsgroups, sparse text"),
    *_fetched("covtype.binary", "covtype.libsvm.binary.bz2", 581012, 54, None, 10.9,
              "forest cover type (class 1 vs rest), n ≫ d, unscaled", label_map=((1.0, 1.0), (2.0, -1.0))),
    *_fetched("url", "url_combined.bz2", 2396130, 3231961, None, 1100.0,
              "malicious URLs, very large and sparse (needs several GB of memory)"),
]}


def shipped_dir() -> Path:
    """The package folder holding the shipped datasets, their README and SHA256SUMS."""
    return Path(__file__).resolve().parent / "files"


def list_datasets(kind: str | None = None) -> list[str]:
    """Names accepted by `load_dataset`, in registry order (``kind``: "shipped", "fetch" or None for all)."""
    return [name for name, info in DATASETS.items() if kind is None or info.kind == kind]


def dataset_path(name: str) -> Path:
    """The file of a registry dataset on this machine (it may not exist yet for a fetchable one)."""
    return DATASETS[name].path


def check_shape(info: DatasetInfo, X, where) -> None:
    """Raise ValueError unless X has the registry's (n, d[, nnz])."""
    found = (X.shape[0], X.shape[1], X.nnz)
    expected = (info.n_samples, info.n_features, info.nnz if info.nnz is not None else X.nnz)
    if found != expected:
        shape = f"n={info.n_samples}, d={info.n_features}" + (f", nnz={info.nnz}" if info.nnz is not None else "")
        raise ValueError(f"dataset {info.name!r}: {where} has n={found[0]}, d={found[1]}, nnz={found[2]}; "
                         f"the published shape is {shape}")


def map_labels(info: DatasetInfo, y: np.ndarray) -> np.ndarray:
    """The file's labels as ±1 (the registry's label map applied, every label checked)."""
    if not info.label_map:
        return y
    mapped = np.full_like(y, np.nan)
    for raw, signed in info.label_map:
        mapped[y == raw] = signed
    if np.isnan(mapped).any():
        raise ValueError(f"dataset {info.name!r}: label {y[np.isnan(mapped)][0]:g} is not one of "
                         f"{[raw for raw, _ in info.label_map]}")
    return mapped


def read_registry_file(info: DatasetInfo, path) -> tuple:
    """(X, y) of a registry file at ``path``, labels mapped to ±1 and shape checked."""
    X, y = read_libsvm(path, n_features=info.n_features, zero_based=False)
    check_shape(info, X, path)
    return X, map_labels(info, y)


@functools.lru_cache(maxsize=32)
def _load_cached(name: str, path: str, n_features: int, stamp: tuple):
    """``stamp`` (inode, size, mtime_ns) keys the cache to the file's version: a file replaced (a
    re-fetch) or rewritten is read again."""
    info = DATASETS[name]
    if n_features == info.n_features:
        X, y = read_registry_file(info, path)
    else:  # a caller asking for more columns (a test file aligned to a train file): rows still checked
        X, y = read_libsvm(path, n_features=n_features, zero_based=False)
        if X.shape[0] != info.n_samples:
            raise ValueError(f"dataset {name!r}: {path} has {X.shape[0]} examples, the registry says {info.n_samples}")
        y = map_labels(info, y)
    # the cache keeps read-only originals; callers get copies
    for array in (X.data, X.indices, X.indptr, y):
        array.flags.writeable = False
    return X, y


def _missing(info: DatasetInfo) -> DataFileNotFoundError:
    if info.kind == SHIPPED:
        return DataFileNotFoundError(f"dataset {info.name!r}: the shipped file {info.path} is missing; "
                                     "reinstall cdlab (pip install -e .)")
    return DataFileNotFoundError(
        f"dataset {info.name!r} is not on this machine: run `cdlab datasets fetch {info.name}` "
        f"(≈ {info.download_mb:g} MB), or place {info.file} from {info.url} in {info.path.parent} "
        "(set CDLAB_DATA_DIR to use another folder)")
