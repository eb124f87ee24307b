"""The results store: one Parquet file per finished configuration.

    store/
      <key>.parquet     the trace (one row per checkpoint); the run record (configuration,
                        status, error and traceback, final values, w summary, timings, host,
                        library versions) as JSON in the file's key-value metadata "cdlab.run"

``key`` hashes the configuration and the data's content (``Problem.content_hash``),
so a file's presence means "this exact work is done": a re-run skips it, and a
sweep killed half-way resumes with everything that had finished.

Why Parquet files and not one DuckDB database: a DuckDB file admits one
writing process at a time and locks other processes out while it is open
for writing, so two sweeps on one store, or a notebook reading while a sweep
writes, would fail; a writer killed mid-transaction leaves a WAL to replay.
A file per result needs no lock at all: each one is written to a temporary
name, flushed to disk and renamed into place (``os.replace`` is atomic on
POSIX), so readers never see a partial result, a crash leaves at most a
stray temporary file, and concurrent writers of the same key just replace
identical work. Reading stays easy: :func:`results` returns pandas tables,
and DuckDB reads the directory in place (``SELECT * FROM
read_parquet('store/*.parquet', union_by_name=true)``).
"""
from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path

META_KEY = b"cdlab.run"
# configuration columns of the tables, in this order
CONFIG_COLUMNS = ["key", "dataset", "normalize", "loss", "s", "lam", "l1", "method", "sampling", "options", "seed",
                  "max_passes", "tol", "eval_every", "max_time", "reference_asked", "tag", "status"]
RUN_COLUMNS = ["error", "message", "passes", "steps", "checkpoints", "primal", "dual", "gap", "reference",
               "w_norm", "w_nnz", "w_head", "w_sha256", "load_seconds", "solve_seconds", "wall_seconds",
               "n_samples", "n_features", "nnz", "data_hash", "problem_hash", "host", "pid", "started", "finished",
               "versions", "traceback"]
INT_COLUMNS = ["steps", "checkpoints", "w_nnz", "n_samples", "n_features", "nnz", "pid"]


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
        if not self.path.is_dir():
            return set()
        return {p.stem for p in self.path.glob("*.parquet")}

    def __contains__(self, key) -> bool:
        return self._file(key).exists()

    def put(self, record: dict, trace=None) -> Path:
        """Write one result atomically (temporary file, fsync, rename)."""
        import pandas as pd
        import pyarrow as pa
        import pyarrow.parquet as pq

        from .solvers.base import TRACE_COLUMNS

        if trace is None:
            trace = pd.DataFrame({c: pd.Series(dtype="float64") for c in TRACE_COLUMNS})
        table = pa.Table.from_pandas(trace.reset_index(drop=True), preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[META_KEY] = json.dumps(record, allow_nan=True).encode()
        table = table.replace_schema_metadata(meta)
        buf = io.BytesIO()
        pq.write_table(table, buf)
        self.path.mkdir(parents=True, exist_ok=True)
        return _atomic_write(self.path, self._file(record["key"]).name, buf.getvalue())

    def record(self, key) -> dict:
        """The run record of one key."""
        import pyarrow.parquet as pq

        return json.loads(pq.read_schema(self._file(key)).metadata[META_KEY])

    def trace(self, key):
        """The trace of one key (pandas DataFrame; empty for a failed run)."""
        import pyarrow.parquet as pq

        return pq.read_table(self._file(key)).to_pandas()

    def status(self, key) -> str | None:
        return self.record(key)["status"] if key in self else None

    # Data fingerprints of file datasets, keyed by (entry, normalisation, file size and mtime), so that
    # a re-run whose work is all done needs neither a cluster nor a reload of the data.
    def fingerprint(self, ident) -> dict | None:
        path = self.path / ".fingerprints" / f"{ident}.json"
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return None

    def put_fingerprint(self, ident, fp: dict):
        folder = self.path / ".fingerprints"
        folder.mkdir(parents=True, exist_ok=True)
        _atomic_write(folder, f"{ident}.json", json.dumps(fp).encode())


def _atomic_write(folder: Path, name: str, data: bytes) -> Path:
    """Write to a temporary file, flush it to disk, rename it into place: all or nothing."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, folder / name)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
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
    if what == "runs":
        table = pd.DataFrame([_flat(store.record(k)) for k in chosen], columns=CONFIG_COLUMNS + RUN_COLUMNS)
        # counts stay integers although failed runs have none
        return table.astype({c: "Int64" for c in INT_COLUMNS})
    import pyarrow.parquet as pq

    frames = []
    for k in chosen:
        table = pq.read_table(store._file(k))
        if table.num_rows:
            record = json.loads(table.schema.metadata[META_KEY])
            config = {c: v for c, v in _flat(record).items() if c in CONFIG_COLUMNS}
            trace = table.to_pandas()
            frames.append(trace.assign(**config)[CONFIG_COLUMNS + list(trace.columns)])
    if not frames:
        from .solvers.base import TRACE_COLUMNS

        return pd.DataFrame(columns=CONFIG_COLUMNS + TRACE_COLUMNS)
    return pd.concat(frames, ignore_index=True)
