"""What a worker does for one configuration: load the data itself, solve, summarise.

These functions run inside Dask worker processes (or in this process, for
the one-by-one comparison): only the small configuration travels through the
scheduler, never a matrix. Loaded datasets are kept in a small per-process
cache so that the many configurations of one dataset load it once per worker.
"""
from __future__ import annotations

import hashlib
import math
import os
import platform
import socket
import time
import traceback
from collections import OrderedDict
from datetime import datetime, timezone

import numpy as np

from .grid import canonical_json, dataset_label

W_HEAD = 5  # leading entries of w kept in the summary
_CACHE_SIZE = 3  # datasets kept per worker process
_cache: OrderedDict = OrderedDict()
_DIGESTS_SIZE = 64  # file digests kept per process (see file_digest)
_digests: OrderedDict = OrderedDict()


def data_file(spec) -> str | None:
    """The file behind a dataset entry (None for synthetic data)."""
    from ..data import DATASETS, dataset_path

    if isinstance(spec, str):
        return str(dataset_path(spec)) if spec in DATASETS else spec
    return spec.get("path")


def _stat_hint(st) -> tuple:
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev


def file_digest(path) -> str | None:
    """SHA-256 of a file's content, read in 1 MiB chunks; None when the file cannot be read.

    The content is the identity. Within one process a digest is re-used while
    the file's (path, size, mtime_ns, ctime_ns, inode, device) stay the same:
    a hint that spares re-reading an unchanged file, never carried to another
    process or stored. ctime belongs to the hint because no user call can set
    it back: a file rewritten in place with its size kept and its mtime
    restored (``os.utime``) still shows a new ctime, except for a rewrite
    within the filesystem's timestamp tick (a few ms) of the hashed version.
    """
    if path is None:
        return None
    try:
        before = os.stat(path)
        hint = (os.fspath(path), *_stat_hint(before))
        if hint in _digests:
            _digests.move_to_end(hint)
            return _digests[hint]
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        after = os.stat(path)
    except OSError:
        return None
    digest = h.hexdigest()
    if _stat_hint(after) == hint[1:]:  # not changed while it was read
        _digests[hint] = digest
        while len(_digests) > _DIGESTS_SIZE:
            _digests.popitem(last=False)
    return digest


def base_data(spec, normalize="none"):
    """The dataset as a :class:`cdlab.data.Data` whose content_hash() fingerprints it;
    configurations build their problem on it with ``Problem.from_data`` (data shared, not copied).
    The per-process cache is keyed by the file's content (``file_digest``), so a changed file is reloaded."""
    from ..data import Data, load

    key = canonical_json([spec, normalize, file_digest(data_file(spec))])
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    data = Data(*load(spec, normalize))
    _cache[key] = data
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return data


def fingerprint(spec, normalize="none") -> dict:
    """Content hash and shape of a dataset (and the SHA-256 of its file, ``file_sha256``),
    or the error that loading it raised."""
    t0 = time.perf_counter()
    try:
        digest = file_digest(data_file(spec))
        p = base_data(spec, normalize)
    except Exception as exc:  # recorded against every configuration of this dataset
        return {"data_hash": None, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    return {"data_hash": p.content_hash(), "file_sha256": digest, "n_samples": p.n_samples,
            "n_features": p.n_features, "nnz": p.nnz, "load_seconds": time.perf_counter() - t0}


def config_key(config, data_hash) -> str:
    """The store key: a hash of the configuration and of the data's content (Data.content_hash)."""
    text = canonical_json({"config": config, "data": data_hash})
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def versions() -> dict:
    import numba
    import pandas
    import scipy

    from .._version import __version__

    return {"python": platform.python_version(), "cdlab": __version__, "numpy": np.__version__,
            "scipy": scipy.__version__, "numba": numba.__version__, "pandas": pandas.__version__}


def w_summary(w) -> dict:
    w = np.ascontiguousarray(w, dtype=np.float64)
    return {"w_norm": float(np.linalg.norm(w)), "w_nnz": int(np.count_nonzero(w)),
            "w_head": [float(v) for v in w[:W_HEAD]], "w_sha256": hashlib.sha256(w.tobytes()).hexdigest()[:32]}


def solve_config(config, cancel=None):
    """Solve one configuration here and now; returns (problem, Result). Raises what solve raises.
    ``cancel``: passed to :func:`cdlab.solve` (an object whose ``is_set()`` ends the run at a checkpoint)."""
    from ..problem import Problem
    from ..solvers import solve

    problem = Problem.from_data(base_data(config["dataset"], config["normalize"]),
                                loss=config["loss"], lam=config["lam"], l1=config["l1"], s=config["s"])
    result = solve(problem, method=config["method"], sampling=config["sampling"], max_passes=config["max_passes"],
                   tol=config["tol"], seed=config["seed"], eval_every=config["eval_every"],
                   max_time=config["max_time"], reference=True if config["reference"] else None,
                   cancel=cancel, **config["options"])
    return problem, result


def _now():
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Deadline:
    """A configuration's time limit, counted from its creation; ``is_set()`` once it has passed
    (the ``cancel`` protocol of :func:`cdlab.solve`). ``limit=None``: no limit."""

    def __init__(self, limit=None):
        self.limit = limit
        self.end = math.inf if limit is None else time.perf_counter() + limit

    def is_set(self) -> bool:
        return time.perf_counter() >= self.end

    def error(self, where) -> str:
        return (f"TimeoutError: the configuration exceeded its time limit of {self.limit:g} s ({where}); "
                "raise time_limit (grid key or --time-limit) and run again with retry_failed (--retry-failed)")


def run_config(config, key, data_hash=None, time_limit=None):
    """Run one configuration; never raises. Returns (record, trace DataFrame or None).

    The record holds the configuration, status ("converged", "max_passes", …,
    or "error" with its message and traceback), the final values, a summary
    of w, timings (load, solver time from the trace, wall), where it ran and
    the library versions. ``data_hash``: the fingerprint the key was made
    with; data loaded here with another content hash (the file changed since)
    are an error, never a result filed under that key. ``time_limit``:
    seconds for loading and solving; a run still going when it passes is
    stopped at its next checkpoint and recorded as an error saying so.
    """
    record = {"key": key, "config": config, "dataset": dataset_label(config["dataset"]), "data_hash": data_hash,
              "started": _now(), "host": socket.gethostname(), "pid": os.getpid(), "versions": versions()}
    t0 = time.perf_counter()
    deadline = Deadline(time_limit)

    def failed(error, tb=""):
        record.update(status="error", error=error, traceback=tb, wall_seconds=time.perf_counter() - t0,
                      finished=_now())
        return record, None

    try:
        base = base_data(config["dataset"], config["normalize"])  # timed apart: 0 when this worker has it
        record["load_seconds"] = time.perf_counter() - t0
        if data_hash is not None and base.content_hash() != data_hash:
            return failed(f"ValueError: the data of {record['dataset']} changed after the sweep fingerprinted "
                          f"them (content hash {base.content_hash()}, expected {data_hash}); run the sweep again")
        if deadline.is_set():
            return failed(deadline.error(f"loading the data took {record['load_seconds']:.3g} s"))
        problem, result = solve_config(config, cancel=deadline)
    except Exception as exc:
        return failed(f"{type(exc).__name__}: {exc}", traceback.format_exc())
    last = result.trace.iloc[-1]
    if result.status == "cancelled" and deadline.is_set():
        return failed(deadline.error(f"stopped after {float(last.passes):.4g} passes, "
                                     f"{time.perf_counter() - t0:.3g} s"))
    record.update(
        status=result.status, message=result.message, error="", traceback="",
        problem_hash=problem.content_hash(), n_samples=problem.n_samples, n_features=problem.n_features,
        nnz=problem.nnz, checkpoints=len(result.trace), steps=int(last.steps), passes=float(last.passes),
        primal=float(last.primal), dual=float(last.dual), gap=float(last.gap),
        reference=result.trace.attrs.get("reference"), solve_seconds=float(last.time),
        wall_seconds=time.perf_counter() - t0, finished=_now(), **w_summary(result.w))
    return record, result.trace


def error_record(config, key, data_hash, error, tb=""):
    """The record of a configuration that never ran (its data did not load, its worker died)."""
    return {"key": key, "config": config, "dataset": dataset_label(config["dataset"]), "data_hash": data_hash,
            "status": "error", "error": error, "traceback": tb, "finished": _now(), "versions": versions()}
