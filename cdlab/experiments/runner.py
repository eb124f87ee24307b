"""What a worker does for one configuration: load the data itself, solve, summarise.

These functions run inside Dask worker processes (or in this process, for
the one-by-one comparison): only the small configuration travels through the
scheduler, never a matrix. Loaded datasets are kept in a small per-process
cache so that the many configurations of one dataset load it once per worker.
"""
from __future__ import annotations

import hashlib
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


def load_data(spec, normalize="none"):
    """(X, y) of a dataset entry of the grid (see cdlab.experiments.grid)."""
    from ..data import load_dataset, make_synthetic, normalize_data

    if isinstance(spec, str):
        X, y = load_dataset(spec)
    elif "synthetic" in spec:
        X, y = make_synthetic(**spec["synthetic"])
    else:
        X, y = load_dataset(spec["path"], n_features=spec.get("n_features"),
                            zero_based=spec.get("zero_based", "auto"))
    if normalize != "none":
        X = normalize_data(X, normalize)
    return X, y


def file_stamp(spec):
    """(size, mtime) of the file behind a dataset entry, so that a long-lived worker reloads a changed file."""
    from ..data import DATASETS, dataset_path

    if isinstance(spec, str):
        path = dataset_path(spec) if spec in DATASETS else spec
    elif "path" in spec:
        path = spec["path"]
    else:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def base_problem(spec, normalize="none"):
    """The dataset as a Problem (squared loss, λ = 0) whose content_hash() fingerprints the data;
    configurations derive their problem from it with ``with_params`` (data shared, not copied)."""
    from ..problem import Problem

    key = canonical_json([spec, normalize, file_stamp(spec)])
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    X, y = load_data(spec, normalize)
    problem = Problem(X, y, loss="squared", lam=0.0)
    _cache[key] = problem
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return problem


def fingerprint(spec, normalize="none") -> dict:
    """Content hash and shape of a dataset, or the error that loading it raised."""
    t0 = time.perf_counter()
    try:
        p = base_problem(spec, normalize)
    except Exception as exc:  # recorded against every configuration of this dataset
        return {"data_hash": None, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    return {"data_hash": p.content_hash(), "n_samples": p.n_samples, "n_features": p.n_features, "nnz": p.nnz,
            "load_seconds": time.perf_counter() - t0}


def config_key(config, data_hash) -> str:
    """The store key: a hash of the configuration and of the data's content (Problem.content_hash)."""
    text = canonical_json({"config": config, "data": data_hash})
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def versions() -> dict:
    import numba
    import pandas
    import scipy

    import cdlab

    return {"python": platform.python_version(), "cdlab": cdlab.__version__, "numpy": np.__version__,
            "scipy": scipy.__version__, "numba": numba.__version__, "pandas": pandas.__version__}


def w_summary(w) -> dict:
    w = np.ascontiguousarray(w, dtype=np.float64)
    return {"w_norm": float(np.linalg.norm(w)), "w_nnz": int(np.count_nonzero(w)),
            "w_head": [float(v) for v in w[:W_HEAD]], "w_sha256": hashlib.sha256(w.tobytes()).hexdigest()[:32]}


def solve_config(config):
    """Solve one configuration here and now; returns (problem, Result). Raises what solve raises."""
    from ..solvers import solve

    problem = base_problem(config["dataset"], config["normalize"]).with_params(
        loss=config["loss"], lam=config["lam"], l1=config["l1"], s=config["s"])
    result = solve(problem, method=config["method"], sampling=config["sampling"], max_passes=config["max_passes"],
                   tol=config["tol"], seed=config["seed"], eval_every=config["eval_every"],
                   max_time=config["max_time"], reference=True if config["reference"] else None,
                   **config["options"])
    return problem, result


def _now():
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def run_config(config, key, data_hash=None):
    """Run one configuration; never raises. Returns (record, trace DataFrame or None).

    The record holds the configuration, status ("converged", "max_passes", …,
    or "error" with its message and traceback), the final values, a summary
    of w, timings (load, solver time from the trace, wall), where it ran and
    the library versions.
    """
    record = {"key": key, "config": config, "dataset": dataset_label(config["dataset"]), "data_hash": data_hash,
              "started": _now(), "host": socket.gethostname(), "pid": os.getpid(), "versions": versions()}
    t0 = time.perf_counter()
    try:
        base_problem(config["dataset"], config["normalize"])  # timed apart: 0 when this worker has it
        record["load_seconds"] = time.perf_counter() - t0
        problem, result = solve_config(config)
    except Exception as exc:
        record.update(status="error", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(),
                      wall_seconds=time.perf_counter() - t0, finished=_now())
        return record, None
    last = result.trace.iloc[-1]
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
