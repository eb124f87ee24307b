"""Datasets: the registry of real data, the LIBSVM reader, synthetic generators, extreme matrices.

    X, y = load_dataset("a9a")                          # shipped; or any svmlight/LIBSVM file by path
    data = Data(X, y)                                   # checked once; its facts: norms, C_P, C_D, ‖X‖₂²…
    X, y = load_dataset("rcv1.binary")                  # fetched into data_home() on first use
    X, y = load("a9a", normalize="rows")                # any spec (name, path, {"synthetic": {...}}) as the CLI, grid and page read it
    X, y = make_synthetic(1000, 200, density=0.05, col_skew=1.0, normalize="mean")
    X = extreme_matrix(100, 20, kind="primal_worst")    # C_P/C_D → n  (theory.md §4)
    X = binary_extreme(10, 20, omega=50, which="max_CP")
"""
from ..paths import data_home
from .dataset import Data
from .extremes import binary_extreme, extreme_matrix
from .libsvm import DataFileNotFoundError, read_libsvm
from .fetch import fetch_dataset
from .registry import DATASETS, DatasetInfo, dataset_path, list_datasets, shipped_dir
from .source import load, load_dataset
from .synthetic import NORMALIZE, make_synthetic, normalize_data, planted_labels, power_law_counts

__all__ = ["Data", "DATASETS", "NORMALIZE", "load", "DatasetInfo", "DataFileNotFoundError", "data_home", "dataset_path", "fetch_dataset",
           "list_datasets", "load_dataset", "shipped_dir",
           "read_libsvm", "make_synthetic", "normalize_data", "planted_labels", "power_law_counts",
           "extreme_matrix", "binary_extreme"]
