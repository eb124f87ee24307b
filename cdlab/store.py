"""The results store: one Parquet file per finished configuration.

    store/
      <key>.parquet     the trace (one row per checkpoint, pages CRC-checksummed); the run record
                        (configuration, status, error and traceback, final values, w summary,
                        timings, host, library versions) as JSON in the file's key-value metadata
                        "cdlab.run", with its SHA-256 in "cdlab.run.sha256"
      quarantine/       files set aside because they were not sound cdlab results
      .fingerprints/    data fingerprints of file datasets (see cdlab.experiments.dask_sweep)

``key`` hashes the configuration and the data's content (``Data.content_hash``),
so a sound file's presence means "this exact work is done": a re-run skips it, and a
sweep killed half-way resumes with everything that had finished.

Why Parquet files and not one DuckDB database: a DuckDB file admits one
writing process at a time and locks other processes out while it is open
for writing, so two sweeps on one store, or a notebook reading while a sweep
writes, would fail; a writer killed mid-transaction leaves a WAL to replay.
A file per result needs no lock at all: each one is written to a temporary
name, flushed to disk (file, then directory) and renamed into place
(``os.replace`` is atomic on POSIX), so readers never see a partial result,
a crash leaves at most a stray temporary file, and concurrent writers of the
same key just replace identical work. Reading stays easy: :func:`results`
returns pandas tables, and DuckDB reads the directory in place (``SELECT *
FROM read_parquet('store/*.parquet', union_by_name=true)``).

Nothing read from the store is trusted: a ``<key>.parquet`` that does not
parse, fails a checksum, carries no cdlab record or the record of another key
is moved into ``quarantine/`` (nothing is deleted) with a :class:`StoreWarning`
naming it, and readers go on with the other files; a sweep then computes that
configuration again. A file the system refuses to read (permissions, I/O
error) is skipped with a warning and left where it is.

Temporaries (``.<name>.<pid>@<host>.<random>.tmp``) are removed by
:meth:`ResultStore.clean_temporaries` (every sweep calls it) when their writer
is a process of this host that no longer runs, or when they are older than
``TMP_MAX_AGE`` (one hour) whoever wrote them: a writer holds its temporary
only for the one write of an in-memory buffer, milliseconds.
"""
from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import re
import socket
import tempfile
import time
import uuid
import warnings
from pathlib import Path

META_KEY = b"cdlab.run"
META_SHA = b"cdlab.run.sha256"  # SHA-256 of the record's JSON: a flipped byte in it is caught
QUARANTINE = "quarantine"
TMP_MAX_AGE = 3600.0  # seconds after which any temporary is a leftover (see the module docstring)
# configuration columns of the tables, in this order
CONFIG_COLUMNS = ["key", "dataset", "normalize", "loss", "s", "lam", "l1", "method", "sampling", "options", "seed",
                  "max_passes", "tol", "eval_every", "max_time", "reference_asked", "tag", "status"]
RUN_COLUMNS = ["error", "message", "passes", "steps", "checkpoints", "primal", "dual", "gap", "reference",
               "w_norm", "w_nnz", "w_head", "w_sha256", "load_seconds", "solve_seconds", "wall_seconds",
               "n_samples", "n_features", "nnz", "data_hash", "problem_hash", "host", "pid", "started", "finished",
               "versions", "traceback"]
INT_COLUMNS = ["steps", "checkpoints", "w_nnz", "n_samples", "n_features", "nnz", "pid"]
_TMP_NAME = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)@(?P<host>[^.]*)\.[^.]+\.tmp$")


class StoreWarning(UserWarning):
    """A file of a results store was set aside (moved into ``quarantine/``) or skipped."""


class _Unsound(Exception):
    """The bytes of a store file are not a sound cdlab result (the reason is the message)."""


class ResultStore:
    """A directory of results, one ``<key>.parquet`` each (see the module docstring)."""

    def __init__(self, path):
        if isinstance(path, ResultStore):
            path = path.path
        if not isinstance(path, (str, os.PathLike)):
            raise ValueError(f"a store is a directory path, got {type(path).__name__}")
        self.path = Path(path).expanduser()
        if self.path.exists() and not self.path.is_dir():
            raise ValueError(f"store {self.path} exists and is not a directory")

    def __repr__(self):
        return f"ResultStore({str(self.path)!r}, {len(self.keys())} results)"

    def _file(self, key) -> Path:
        return self.path / f"{key}.parquet"

    def keys(self) -> set[str]:
        """The keys that have a file (not yet read: :meth:`load` checks a file)."""
        if not self.path.is_dir():
            return set()
        return {p.stem for p in self.path.glob("*.parquet") if p.is_file()}

    def __contains__(self, key) -> bool:
        return self._file(key).is_file()

    def put(self, record: dict, trace=None) -> Path:
        """Write one result atomically (temporary file, fsync of file and directory, rename)."""
        import pandas as pd
        import pyarrow as pa
        import pyarrow.parquet as pq

        from .solvers.base import TRACE_COLUMNS

        if trace is None:
            trace = pd.DataFrame({c: pd.Series(dtype="float64") for c in TRACE_COLUMNS})
        table = pa.Table.from_pandas(trace.reset_index(drop=True), preserve_index=False)
        text = json.dumps(record, allow_nan=True).encode()
        meta = dict(table.schema.metadata or {})
        meta[META_KEY] = text
        meta[META_SHA] = hashlib.sha256(text).hexdigest().encode()
        table = table.replace_schema_metadata(meta)
        buf = io.BytesIO()
        pq.write_table(table, buf, write_page_checksum=True)
        _make_dir(self.path)
        return _atomic_write(self.path, self._file(record["key"]).name, buf.getvalue())

    def load(self, key, trace=True):
        """(record, trace DataFrame or None) of one key, or None when the key has no sound file.

        The file is read whole and checked (Parquet structure, page checksums
        when ``trace``, the record's checksum, that it is the record of this
        key); a file that fails is set aside with a :class:`StoreWarning`."""
        path = self._file(key)
        try:
            with open(path, "rb") as f:
                data = f.read()
                opened = os.fstat(f.fileno())
        except FileNotFoundError:
            return None
        except OSError as exc:
            warnings.warn(f"results store: skipped {path}: cannot read it ({exc.strerror or exc})",
                          StoreWarning, stacklevel=2)
            return None
        try:
            return _parse(data, key, trace)
        except _Unsound as exc:
            self._set_aside(path, opened, str(exc))
            return None

    def record(self, key) -> dict:
        """The run record of one key (KeyError when the store has no sound result for it)."""
        loaded = self.load(key, trace=False)
        if loaded is None:
            raise KeyError(f"no result {key} in the store {self.path}")
        return loaded[0]

    def trace(self, key):
        """The trace of one key (pandas DataFrame; empty for a failed run)."""
        loaded = self.load(key)
        if loaded is None:
            raise KeyError(f"no result {key} in the store {self.path}")
        return loaded[1]

    def status(self, key) -> str | None:
        loaded = self.load(key, trace=False)
        return None if loaded is None else loaded[0]["status"]

    def _set_aside(self, path: Path, opened: os.stat_result, reason: str):
        """Move a file that is not a sound result into quarantine/ (under a fresh name if one is taken)."""
        folder = self.path / QUARANTINE
        target = folder / path.name
        try:
            now = os.stat(path)
            if (now.st_ino, now.st_dev) != (opened.st_ino, opened.st_dev):
                return  # replaced since it was read (a writer renamed a new result into place): not this file
            _make_dir(folder)
            if target.exists():
                target = folder / f"{path.stem}.{uuid.uuid4().hex[:8]}{path.suffix}"
            os.rename(path, target)
            _fsync_dir(folder)
            _fsync_dir(self.path)
        except FileNotFoundError:
            return  # another reader set it aside first
        except OSError as exc:
            warnings.warn(f"results store: skipped {path}: {reason}; could not move it into {folder} "
                          f"({exc.strerror or exc})", StoreWarning, stacklevel=3)
            return
        warnings.warn(f"results store: set aside {path}: {reason}; moved to {target}", StoreWarning, stacklevel=3)

    def clean_temporaries(self, max_age=TMP_MAX_AGE) -> list[Path]:
        """Remove leftover temporaries (rule in the module docstring); returns those removed."""
        removed = []
        host, now = _host(), time.time()
        for folder in (self.path, self.path / ".fingerprints"):
            if not folder.is_dir():
                continue
            for tmp in folder.glob(".*.tmp"):
                match = _TMP_NAME.match(tmp.name)
                try:
                    old = now - tmp.stat().st_mtime > max_age
                except FileNotFoundError:
                    continue  # renamed into place or removed meanwhile
                dead = match is not None and match["host"] == host and not _alive(int(match["pid"]))
                if old or dead:
                    tmp.unlink(missing_ok=True)
                    removed.append(tmp)
        return removed

    # Data fingerprints of file datasets, keyed by a hash of (entry, normalisation, file content), so that
    # a re-run whose work is all done needs neither a cluster nor a reload of the data.
    def fingerprint(self, ident) -> dict | None:
        path = self.path / ".fingerprints" / f"{ident}.json"
        try:
            fp = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return fp if isinstance(fp, dict) and isinstance(fp.get("data_hash"), str) else None

    def put_fingerprint(self, ident, fp: dict):
        folder = self.path / ".fingerprints"
        _make_dir(folder)
        _atomic_write(folder, f"{ident}.json", json.dumps(fp).encode())


def _parse(data: bytes, key: str, trace: bool):
    """(record, trace or None) from a file's bytes; raises _Unsound with the reason."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not data:
        raise _Unsound("empty file")
    try:
        if trace:
            table = pq.read_table(pa.BufferReader(data), page_checksum_verification=True)
            schema = table.schema
        else:
            schema = pq.read_schema(pa.BufferReader(data))
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError (checksums), ... for damaged bytes
        raise _Unsound(f"not a readable Parquet file ({type(exc).__name__}: {exc})") from None
    meta = schema.metadata or {}
    if META_KEY not in meta:
        raise _Unsound("a Parquet file without a cdlab run record (not written by cdlab)")
    text = meta[META_KEY]
    if META_SHA in meta and hashlib.sha256(text).hexdigest().encode() != meta[META_SHA]:
        raise _Unsound("its run record fails its checksum")
    try:
        record = json.loads(text)
        _flat(record)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise _Unsound(f"its run record is malformed ({type(exc).__name__}: {exc})") from None
    if record["key"] != key or not isinstance(record.get("status"), str):
        raise _Unsound(f"it holds the record of key {record['key']!r}, not of its own name")
    return record, (table.to_pandas() if trace else None)


def _host() -> str:
    return socket.gethostname().replace(".", "_")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _fsync_dir(folder: Path):
    """Flush a directory's entries (a rename) to disk; filesystems that cannot are left as they are."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _make_dir(folder: Path):
    """Create a directory (and its parents), its entry flushed to disk in its parent."""
    if folder.is_dir():
        return
    folder.mkdir(parents=True, exist_ok=True)
    _fsync_dir(folder.parent)


def _atomic_write(folder: Path, name: str, data: bytes) -> Path:
    """Write to a temporary file, flush it to disk, rename it into place, flush the directory:
    all or nothing, and durable once this returns."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.{os.getpid()}@{_host()}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, folder / name)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(folder)
    return folder / name


def _flat(record) -> dict:
    """One table row of a record: configuration columns, then the run's own."""
    config = record["config"]
    row = {"key": record["key"], "dataset": record["dataset"]}
    for name in CONFIG_COLUMNS[2:]:
        if name == "options":
            row[name] = json.dumps(config["options"], sort_keys=True)
        elif name == "reference_asked":
            row[name] = config["reference"]
        elif name == "status":
            row[name] = record["status"]
        else:
            row[name] = config[name]
    for name in RUN_COLUMNS:
        value = record.get(name)
        row[name] = json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value
    return row


def results(store, what="traces", keys=None):
    """The store as one pandas table, for plotting and analysis.

    what="traces" (default): one row per checkpoint of every successful run,
    configuration columns (key, dataset, loss, lam, method, sampling, seed, …,
    status) followed by the trace columns (steps, nnz_touched, passes,
    data_passes, time, primal, dual, gap, and subopt where P* was computed).
    what="runs": one row per configuration, failures included, with the
    error message, final values, w summary, timings, host and versions.
    keys: only these result keys, in this order (e.g. ``report.keys`` of a
    sweep); default every result of the store, sorted by key.
    """
    import pandas as pd

    if what not in ("traces", "runs"):
        raise ValueError(f"what must be 'traces' or 'runs', got {what!r}")
    store = ResultStore(store)
    if not store.path.is_dir():
        raise ValueError(f"no results store at {store.path}")
    have = store.keys()
    chosen = sorted(have) if keys is None else [k for k in dict.fromkeys(keys) if k in have]
    # a file that is not a sound result is set aside with a warning (ResultStore.load) and left out
    if what == "runs":
        loaded = (store.load(k, trace=False) for k in chosen)
        rows = [_flat(record) for record, _ in filter(None, loaded)]
        table = pd.DataFrame(rows, columns=CONFIG_COLUMNS + RUN_COLUMNS)
        # counts stay integers although failed runs have none
        return table.astype({c: "Int64" for c in INT_COLUMNS})
    frames = []
    for k in chosen:
        loaded = store.load(k)
        if loaded is not None and len(loaded[1]):
            record, trace = loaded
            config = {c: v for c, v in _flat(record).items() if c in CONFIG_COLUMNS}
            frames.append(trace.assign(**config)[CONFIG_COLUMNS + list(trace.columns)])
    if not frames:
        from .solvers.base import TRACE_COLUMNS

        return pd.DataFrame(columns=CONFIG_COLUMNS + TRACE_COLUMNS)
    return pd.concat(frames, ignore_index=True)
