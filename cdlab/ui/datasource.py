"""Where the dashboard's data come from: a small primitive key -> (X, y).

A *data key* is a tuple of strings and numbers (see :func:`data_key`); the
matrices are built from it by ``cdlab.data`` and cached on it, so two
sessions asking for the same data share one copy and a scenario fits in a URL.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections import defaultdict

import numpy as np
import scipy.sparse as sp

from ..data import (DATASETS, binary_extreme, extreme_matrix, fetch_dataset, list_datasets, load_dataset,
                    make_synthetic, normalize_data, planted_labels)
from ..data import load as load_spec  # this module's load(key) is the page's cache of data keys
from .cache import LRUCache
from .upload import UPLOAD_LIMIT_BYTES, UPLOAD_LIMIT_MB, check_upload  # noqa: F401 (the page's limits)
# the largest matrix the page generates: ~160 MB as CSR, a few seconds per pass. The n and d inputs go
# to 200,000 each; dense at that size is 4·10¹⁰ nonzeros, which took the (shared) server down with it
MAX_NNZ = 10_000_000
SYNTHETIC = "synthetic"
UPLOAD = "uploaded file"

_DATA = LRUCache(maxsize=12)
_UPLOADS = LRUCache(maxsize=8)  # content hash -> (X, y, note); the bytes themselves are not kept


EXTREMES = {  # display name -> (generator, kind) of cdlab.data's extreme matrices (theory.md §4)
    "extreme: C_P/C_D → n": ("extreme_matrix", "primal_worst"),
    "extreme: C_P/C_D → 1/d": ("extreme_matrix", "dual_worst"),
    "binary extreme: min C_P": ("binary_extreme", "min_CP"),
    "binary extreme: max C_P": ("binary_extreme", "max_CP"),
    "binary extreme: min C_D": ("binary_extreme", "min_CD"),
    "binary extreme: max C_D": ("binary_extreme", "max_CD"),
}


def auto_omega(n, d):
    """ω for a binary extreme when the user leaves it at 0: a few nonzeros per line."""
    return int(min(n * d, 3 * max(n, d)))


def dataset_names() -> list:
    return list_datasets()


def source_names() -> list:
    return [SYNTHETIC, *EXTREMES, *dataset_names(), UPLOAD]


def needs_fetch(source) -> bool:
    """A registry dataset fetched on first use that is not on this server yet."""
    info = DATASETS.get(source)
    return info is not None and info.kind == "fetch" and not info.is_available()


def source_options() -> dict:
    """label -> source for the data menu: a dataset still to fetch says so, with its download size."""
    return {(f"{name} (not here: fetch ≈ {DATASETS[name].download_mb:g} MB)" if needs_fetch(name) else name): name
            for name in source_names()}


_FETCHING = defaultdict(threading.Lock)  # one download per dataset, whichever session asks


def fetch(name, progress=None):
    """Download a fetchable dataset into the data home (cdlab.data.fetch); ValueError on failure."""
    with _FETCHING[name]:
        if needs_fetch(name):
            fetch_dataset(name, progress=progress, show_progress=False)


def data_key(source, *, n_samples, n_features, density, row_skew, col_skew, value_dist, normalize, data_seed,
             omega, upload_hash=""):
    """The primitive key of the data a source and its settings describe."""
    if source == SYNTHETIC:
        _check_size(round(float(density) * int(n_samples) * int(n_features)), "n·d·density")
        return ("synthetic", int(n_samples), int(n_features), float(density), float(row_skew),
                float(col_skew), str(value_dist), str(normalize), int(data_seed))
    if source in EXTREMES:
        generator, kind = EXTREMES[source]
        omega = int(omega) if generator == "binary_extreme" and omega else 0
        _check_size(omega, "ω")
        return ("extreme", generator, kind, int(n_samples), int(n_features), omega, str(normalize), int(data_seed))
    if source == UPLOAD:
        return ("upload", str(upload_hash), str(normalize))
    if source in dataset_names():
        if needs_fetch(source):
            raise ValueError(f"{source} is not on this server yet: press “Fetch {source}” under the data menu to "
                             f"download it (≈ {DATASETS[source].download_mb:g} MB from the LIBSVM collection)")
        return ("dataset", str(source), str(normalize))
    raise ValueError(f"unknown data source {source!r}; choose one of {source_names()}")


def _check_size(nnz, what):
    if nnz > MAX_NNZ:
        raise ValueError(f"{what} = {nnz:,} nonzeros: the dashboard generates at most {MAX_NNZ:,}; lower n, d "
                         "or the density (or call cdlab.data.make_synthetic from Python)")


def load(key):
    """(X, y, note) for a data key, cached; raises ValueError with a user-facing reason."""
    return _DATA.get_or_compute(key, lambda: _build(key))


def _build(key):
    builders = {"synthetic": _synthetic, "extreme": _extreme, "dataset": _dataset, "upload": _uploaded}
    if key[0] not in builders:
        raise ValueError(f"unknown data key {key!r}")
    return builders[key[0]](*key[1:])


def _synthetic(n, d, density, row_skew, col_skew, value_dist, normalize, seed):
    X, y = make_synthetic(n_samples=n, n_features=d, density=density, row_skew=row_skew, col_skew=col_skew,
                          values=value_dist, normalize=normalize, seed=seed)
    return X, y, ""


def _extreme(generator, which, n, d, omega, normalize, seed):
    if generator == "extreme_matrix":
        X, note = extreme_matrix(n, d, kind=which), ""
    else:
        omega = omega or auto_omega(n, d)
        X, note = binary_extreme(n, d, omega, which=which, seed=seed, signed=True), f"binary, ω = {omega:,}"
    X = normalize_data(X, normalize)
    # labels from a planted linear model, as for the synthetic data
    return X, planted_labels(X, "linear", seed=seed), note


def _dataset(name, normalize):
    X, y = load_spec(name, normalize)
    return X, y, DATASETS[name].description


def _uploaded(digest, normalize):
    if not digest:
        raise ValueError("no file uploaded yet: choose a LIBSVM file under 'Your own data'")
    hit = _UPLOADS.get((digest,))
    if hit is None:
        raise ValueError("the uploaded file is no longer in memory; upload it again")
    X, y, note = hit
    return normalize_data(X, normalize), y, note


def parse_upload(content: bytes, filename: str):
    """Parse an uploaded LIBSVM/svmlight file; returns its content hash (the cache key).

    The upload limits (cdlab.ui.upload: raw bytes, decompressed text, nonzeros) are checked before
    parsing. Labels with exactly two values are mapped to -1/+1 (the smaller to -1) so that
    classification losses apply; the page says so. Raises ValueError with the reader's message (file
    and line, never a server path) for a malformed file.
    """
    if content is None or len(content) == 0:
        raise ValueError(f"{filename or 'the upload'} is empty")
    filename = os.path.basename(filename or "") or "upload.svm"
    check_upload(content, filename)
    digest = hashlib.sha256(content).hexdigest()[:24]
    if (digest,) in _UPLOADS:
        return digest
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, filename)
        with open(path, "wb") as fh:
            fh.write(content)
        try:
            X, y = load_dataset(path)
        except ValueError as exc:
            raise ValueError(str(exc).replace(path, filename)) from None
    y = np.asarray(y, dtype=np.float64)
    labels = np.unique(y)
    note = ""
    if len(labels) == 2 and not np.array_equal(labels, [-1.0, 1.0]):
        y = np.where(y == labels[1], 1.0, -1.0)
        note = f"labels {labels[0]:g}/{labels[1]:g} mapped to -1/+1"
    elif len(labels) > 2:
        note = (f"{len(labels)} distinct labels: only the squared and absolute losses apply "
                "(the classification losses need two classes)")
    _UPLOADS.put((digest,), (sp.csr_matrix(X, dtype=np.float64), y, note))
    return digest


def upload_note(digest) -> str:
    """The label note of an upload in memory ('' if none)."""
    hit = _UPLOADS.get((digest,))
    return hit[2] if hit is not None else ""
