"""``cdlab.sweep``: run every configuration of a grid on Dask, into a results store.

How a sweep runs:

1. The grid is expanded on the client (:func:`cdlab.experiments.grid.expand_grid`).
2. Each distinct dataset is fingerprinted by a small task on a worker, which
   loads it and returns ``Data.content_hash()`` and its shape: the data
   never travel through the scheduler, only the hash does. The fingerprint
   of a file is cached in the store under the SHA-256 of the file's content
   (``runner.file_digest``; never its size or mtime, which a rewrite can
   keep), so a re-run whose work is all done starts no cluster at all.
3. Each configuration's key hashes the configuration and that fingerprint;
   keys with a sound result in the store are skipped (failed ones too,
   unless ``retry_failed``), so a second run computes nothing new and a
   sweep killed half-way resumes. A store file that is not a sound result
   is set aside with a warning (:meth:`cdlab.store.ResultStore.load`) and
   its configuration computed again.
4. The remaining configurations are submitted as tasks carrying only their
   configuration; workers load the data themselves (cached per process).
   As each task completes, the client writes its result atomically to the
   store: nothing that finished is ever lost, and only the client writes.
5. A configuration that raises, or runs past its time limit (``time_limit``
   seconds, default ``TIME_LIMIT``, one hour), is recorded with its message
   (and traceback) and does not stop the sweep. The limit is checked at the
   solver's checkpoints; a configuration that reaches none within
   ``KILL_GRACE`` (30 s) past its limit is cancelled and its worker restarted; a worker that dies has its tasks re-run
   elsewhere by the Dask scheduler (a task that kills workers repeatedly is
   recorded as failed with Dask's KilledWorker error).
"""
from __future__ import annotations

import hashlib
import math
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .._checks import check_int
from ..store import ResultStore, results
from .grid import _number, canonical_json, expand_grid, load_grid
from .runner import Deadline, config_key, data_file, error_record, file_digest, fingerprint, run_config

TIME_LIMIT = 3600.0  # seconds per configuration, unless the grid or the caller says otherwise
KILL_GRACE = 30.0  # seconds past its time limit before a configuration that reached no checkpoint is killed


@dataclass
class SweepReport:
    """What a sweep did: ``keys`` (one per configuration, grid order), those
    ``computed`` now, those ``skipped`` (already in the store) and those that
    ``failed`` (now or before)."""

    store: ResultStore
    keys: list = field(default_factory=list)
    computed: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    failed: list = field(default_factory=list)

    def runs(self):
        """One row per configuration of this sweep (see :func:`cdlab.results`)."""
        return results(self.store, what="runs", keys=self.keys)

    def traces(self):
        """The traces of this sweep's configurations, one table."""
        return results(self.store, what="traces", keys=self.keys)

    def __repr__(self):
        return (f"SweepReport({len(self.keys)} configurations: {len(self.computed)} computed, "
                f"{len(self.skipped)} already in {str(self.store.path)!r}, {len(self.failed)} failed)")


def local_cluster(n_workers=2):
    """A LocalCluster of single-threaded worker processes (numba kernels hold no GIL, but one
    thread per process keeps timings honest and a crash confined to one configuration). Its
    processes log only critical events: a configuration's error is in its stored record, and a
    worker that loses the scheduler when the user interrupts the sweep is no error to print."""
    import logging

    from distributed import LocalCluster

    return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                        silence_logs=logging.CRITICAL)


def _connect(client, n_workers):
    """(client, things to close): an existing Client, a scheduler address, or a new LocalCluster."""
    from distributed import Client

    if isinstance(client, Client):
        return client, []
    if isinstance(client, str):
        try:
            c = Client(client, timeout=30)
        except (OSError, TimeoutError) as exc:
            raise ValueError(f"cannot reach the Dask scheduler at {client!r}: {exc}") from None
        return c, [c]
    cluster = local_cluster(n_workers)
    c = Client(cluster)
    return c, [c, cluster]


class _LazyClient:
    """Connects (or starts the local cluster) only when there is work: a re-run whose results are
    all in the store starts nothing."""

    def __init__(self, client, n_workers):
        from distributed import Client

        if client is not None and not isinstance(client, (str, Client)):
            raise ValueError(f"client must be None, a scheduler address or a distributed.Client, got {client!r}")
        if client is None:
            n_workers = check_int("n_workers", n_workers)
        self.spec, self.n_workers, self.client, self.to_close = client, n_workers, None, []

    def get(self):
        if self.client is None:
            self.client, self.to_close = _connect(self.spec, self.n_workers)
        return self.client

    def close(self):
        for thing in self.to_close:
            thing.close()


def _fingerprints(lazy, store, configs):
    """Data fingerprint of each distinct (dataset, normalize): from the store's cache for unchanged
    files, otherwise computed on a worker (which loads the data; only the hash comes back)."""
    todo = {}
    for c in configs:
        todo.setdefault(canonical_json([c["dataset"], c["normalize"]]), (c["dataset"], c["normalize"]))
    out, missing = {}, {}
    for k, (spec, how) in todo.items():
        digest = file_digest(data_file(spec))
        ident = None if digest is None else hashlib.sha256(canonical_json([spec, how, digest]).encode()).hexdigest()
        cached = store.fingerprint(ident) if ident else None
        if cached:
            out[k] = cached
        else:
            missing[k] = (spec, how, ident, digest)
    if missing:
        client = lazy.get()
        futures = {k: client.submit(fingerprint, spec, how, pure=False) for k, (spec, how, *_) in missing.items()}
        for k, fut in futures.items():
            try:
                out[k] = fut.result()
            except Exception as exc:  # the worker died repeatedly while loading
                out[k] = {"data_hash": None, "error": f"{type(exc).__name__}: {exc}", "traceback": ""}
            ident, digest = missing[k][2:]
            # cached only when the worker loaded the very content the client hashed
            if out[k]["data_hash"] and ident and out[k].get("file_sha256") == digest:
                store.put_fingerprint(ident, out[k])
    return out


def _progress_bar(total, initial, enabled):
    """tqdm's widget in a notebook when ipywidgets is installed, else its text bar, which terminals and
    notebooks both show (tqdm.auto without ipywidgets would add an "IProgress not found" warning)."""
    try:
        import ipywidgets  # noqa: F401
        from tqdm.auto import tqdm
    except ImportError:
        from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc="cdlab sweep", unit="run", disable=not enabled,
                dynamic_ncols=True)


def _time_limit(grid, time_limit):
    """Seconds per configuration, or None for no limit (see :func:`sweep`)."""
    if time_limit is None:
        if "time_limit" not in grid:
            return TIME_LIMIT
        time_limit = grid["time_limit"]
        if time_limit is None:
            return None
    if isinstance(time_limit, float) and time_limit == math.inf:
        return None
    return _number("time_limit", time_limit, positive=True)


def sweep(grid, store=None, client=None, n_workers=2, progress=True, retry_failed=False, on_result=None,
          time_limit=None):
    """Run every configuration of ``grid`` on Dask and store each result as it finishes.

    Parameters
    ----------
    grid : dict, or path to a YAML/JSON grid file
        (format: :mod:`cdlab.experiments.grid`).
    store : path of the results directory (default: the grid's ``store`` key;
        one of the two is required).
    client : None (a new LocalCluster of ``n_workers`` single-threaded worker
        processes, closed at the end), a scheduler address ``"tcp://host:port"``,
        or a ``distributed.Client`` (left open). Workers need cdlab installed
        and the grid's data paths readable.
    progress : show a progress bar (tqdm: terminal or notebook).
    retry_failed : re-run configurations recorded as failed.
    on_result : callable(record) called after each result is stored.
    time_limit : seconds per configuration (loading its data and solving), or
        ``math.inf`` for none; default the grid's ``time_limit`` key (``null``
        there: none), else ``TIME_LIMIT`` (3600 s). A configuration past it is
        stopped at its next checkpoint and recorded as failed with the reason;
        the limit is not part of the result key, so a larger one needs
        ``retry_failed`` to re-run those configurations.

    Returns
    -------
    SweepReport (``.runs()`` and ``.traces()`` give its tables).
    """
    if isinstance(grid, (str, os.PathLike)):
        grid = load_grid(grid)
    if not isinstance(grid, dict):
        raise ValueError(f"a grid is a mapping or a grid file path, got {type(grid).__name__}")
    configs = expand_grid(grid)
    limit = _time_limit(grid, time_limit)
    if store is None and grid.get("store"):
        store = Path(grid.get("_base_dir") or ".") / str(grid["store"])
    if store is None:
        raise ValueError("sweep needs a store: pass store=DIRECTORY or put 'store:' in the grid")
    store = ResultStore(store)
    report = SweepReport(store)
    if not configs:
        return report

    lazy = _LazyClient(client, n_workers)
    futures = []
    try:
        store.clean_temporaries()
        prints = _fingerprints(lazy, store, configs)
        done, pending = store.keys(), []
        for config in configs:
            fp = prints[canonical_json([config["dataset"], config["normalize"]])]
            key = config_key(config, fp["data_hash"] or "unloadable")
            report.keys.append(key)
            # read whole and checked: a file that is not a sound result is set aside and computed again
            loaded = store.load(key) if key in done else None
            status = None if loaded is None else loaded[0]["status"]
            if status is not None and not (retry_failed and status == "error"):
                report.skipped.append(key)
                if status == "error":
                    report.failed.append(key)
            else:
                pending.append((key, config, fp))
        with _progress_bar(len(report.keys), len(report.skipped), progress) as bar:
            _run(lazy, store, pending, report, bar, on_result, futures, limit)
    finally:
        for fut in futures:
            fut.cancel()
        lazy.close()
    return report


def _finish(store, report, bar, on_result, record, trace=None):
    store.put(record, trace)
    report.computed.append(record["key"])
    if record["status"] == "error":
        report.failed.append(record["key"])
    bar.update(1)
    bar.set_postfix(failed=len(report.failed), refresh=False)
    if on_result is not None:
        on_result(record)


def _run(lazy, store, pending, report, bar, on_result, futures, time_limit):
    submitted = {}
    for key, config, fp in pending:
        if fp["data_hash"] is None:  # its data did not load: nothing to run
            _finish(store, report, bar, on_result, error_record(config, key, None, fp["error"], fp["traceback"]))
            continue
        # a fresh task name per submission: a cancelled task's name may linger on the scheduler
        name = f"cdlab-run-{key[:12]}-{uuid.uuid4().hex[:8]}"
        fut = lazy.get().submit(run_config, config, key, fp["data_hash"], time_limit, key=name)
        submitted[fut.key] = (key, config, fp["data_hash"])
        futures.append(fut)
    if not futures:
        return
    from distributed import wait

    waiting, started = set(futures), {}
    poll = None if time_limit is None else max(1.0, min(10.0, KILL_GRACE / 3))
    while waiting:
        try:
            finished, _ = wait(list(waiting), timeout=poll, return_when="FIRST_COMPLETED")
        except TimeoutError:
            finished = set()
        for fut in finished:
            waiting.discard(fut)
            key, config, data_hash = submitted[fut.key]
            try:
                record, trace = fut.result()
            except Exception as exc:  # raised by Dask itself (KilledWorker, ...), not by the configuration
                record, trace = error_record(config, key, data_hash, f"{type(exc).__name__}: {exc}"), None
            _finish(store, report, bar, on_result, record, trace)
            fut.release()
        if time_limit is not None and waiting:
            for fut in _overdue(lazy.get(), waiting, started, time_limit + KILL_GRACE):
                waiting.discard(fut)
                key, config, data_hash = submitted[fut.key]
                error = Deadline(time_limit).error(f"no checkpoint came within {KILL_GRACE:g} s more; its worker "
                                                   f"{started[fut.key][0]} was restarted")
                _finish(store, report, bar, on_result, error_record(config, key, data_hash, error))


def _executing(dask_worker):
    """Keys of the tasks a worker is running (run on each worker by Client.run)."""
    return [ts.key for ts in dask_worker.state.executing]


def _overdue(client, waiting, started, allowed):
    """The futures of ``waiting`` that have run longer than ``allowed`` seconds since first seen running:
    each is cancelled and its worker restarted (a numba kernel cannot be interrupted any other way)."""
    import time
    import warnings

    by_key = {fut.key: fut for fut in waiting}
    now = time.monotonic()
    try:
        running = client.run(_executing, on_error="ignore")
    except Exception:  # a worker going away: look again at the next poll
        return []
    for addr, keys in running.items():
        for key in keys:
            if key in by_key:
                started.setdefault(key, (addr, now))
    overdue = [by_key[k] for k, (_, t) in started.items() if k in by_key and now - t > allowed]
    for fut in overdue:
        addr = started[fut.key][0]
        fut.cancel()
        try:
            client.restart_workers([addr])
        except Exception as exc:
            warnings.warn(f"could not restart the worker {addr} ({type(exc).__name__}: {exc}); it keeps running "
                          "a configuration past its time limit until that ends", RuntimeWarning, stacklevel=2)
    return overdue
