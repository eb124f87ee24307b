"""The results store against damaged and planted files, data files rewritten behind its back, stray
temporaries, and configurations that run past their time limit (issue 17, item 3)."""
import json
import os
import socket
import stat
import subprocess
import sys
import time

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sklearn.datasets import dump_svmlight_file

import cdlab
from cdlab.cli import main as cli_main
from cdlab.data import make_synthetic
from cdlab.experiments import expand_grid, local_cluster
from cdlab.experiments.runner import file_digest
from cdlab.store import QUARANTINE, ResultStore, StoreWarning

SYN = {"synthetic": {"n_samples": 60, "n_features": 12, "density": 0.5, "seed": 3}, "name": "syn60"}
# dual_cd refuses the hinge loss: two of the eight configurations fail
GRID = {"datasets": [SYN], "loss": ["logistic", "hinge"], "methods": ["sdca", "dual_cd"], "lam": [1e-2, 1e-3],
        "max_passes": 5}


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client

    with local_cluster(n_workers=2) as cl, Client(cl) as client:
        yield cl, client


def one_by_one(config, X=None, y=None):
    if X is None:
        X, y = make_synthetic(**config["dataset"]["synthetic"])
    problem = cdlab.Problem(X, y, loss=config["loss"], lam=config["lam"], l1=config["l1"], s=config["s"])
    return problem, cdlab.solve(problem, method=config["method"], sampling=config["sampling"],
                                max_passes=config["max_passes"], tol=config["tol"], seed=config["seed"],
                                eval_every=config["eval_every"], **config["options"])


def silently_corrupt(data):
    """data with one bit flipped where a reader that skips page checksums returns other numbers, no error."""
    original = pq.read_table(pa.BufferReader(data))
    for i in range(4, len(data)):
        flipped = bytearray(data)
        flipped[i] ^= 1
        try:
            if not pq.read_table(pa.BufferReader(bytes(flipped))).equals(original):
                return bytes(flipped)
        except Exception:  # noqa: S112 - a flip that any reader notices is not the one sought
            continue
    raise AssertionError("no silent corruption found")


def with_record_edited(data, lam):
    """The file with λ changed in its run record, the record's checksum left as it was (a flipped byte)."""
    table = pq.read_table(pa.BufferReader(data))
    meta = dict(table.schema.metadata)
    text = meta[b"cdlab.run"]
    meta[b"cdlab.run"] = text.replace(f'"lam": {json.dumps(lam)}'.encode(), f'"lam": {json.dumps(2 * lam)}'.encode())
    assert meta[b"cdlab.run"] != text
    out = pa.BufferOutputStream()
    pq.write_table(table.replace_schema_metadata(meta), out)
    return out.getvalue().to_pybytes()


def dead_pid():
    """The pid of a process of this host that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def host():
    return socket.gethostname().replace(".", "_")


def test_damaged_and_foreign_files_are_set_aside_and_no_finished_result_is_lost(cluster, tmp_path):
    cl, client = cluster
    root = tmp_path / "s"
    first = cdlab.sweep(GRID, store=root, client=client, progress=False)
    store = first.store
    configs = dict(zip(first.keys, expand_grid(GRID)))
    failed = sorted(first.failed)
    ok = [k for k in first.keys if k not in failed]
    assert len(failed) == 2 and len(ok) == 6
    traces = {k: store.trace(k) for k in ok}
    runs_before = first.runs().set_index("key")

    # the damage: a truncated, a zero-byte, a corrupt data page, a record edited to another valid JSON,
    # a zero-byte failure, a foreign Parquet file and a copy of a result under another key's name
    damaged = {}

    def damage(name, data):
        (root / name).write_bytes(data)
        damaged[name] = data

    whole = {k: (root / f"{k}.parquet").read_bytes() for k in first.keys}
    damage(f"{ok[0]}.parquet", whole[ok[0]][:len(whole[ok[0]]) // 2])
    damage(f"{ok[1]}.parquet", b"")
    damage(f"{ok[2]}.parquet", silently_corrupt(whole[ok[2]]))
    damage(f"{ok[3]}.parquet", with_record_edited(whole[ok[3]], configs[ok[3]]["lam"]))
    damage(f"{failed[0]}.parquet", b"")
    foreign = pa.BufferOutputStream()
    pq.write_table(pa.table({"x": [1.0, 2.0]}), foreign)
    damage("foreign.parquet", foreign.getvalue().to_pybytes())
    damage("0" * 32 + ".parquet", whole[ok[4]])
    intact = [k for k in first.keys if f"{k}.parquet" not in damaged]
    intact_ok = [k for k in intact if k in ok]
    stamps = {k: (root / f"{k}.parquet").stat().st_mtime_ns for k in intact}

    with pytest.warns(StoreWarning) as caught:
        table = cdlab.results(store)
    messages = [str(w.message) for w in caught]
    for name in damaged:
        assert sum(str(root / name) in m for m in messages) == 1
    assert set(table.key) == set(intact_ok)
    for k in intact_ok:
        rows = table[table.key == k][list(traces[k].columns)].reset_index(drop=True)
        pd.testing.assert_frame_equal(rows, traces[k], check_exact=True)
    # set aside, not deleted: every damaged file is in quarantine/ byte for byte
    assert sorted(p.name for p in (root / QUARANTINE).iterdir()) == sorted(damaged)
    for name, data in damaged.items():
        assert (root / QUARANTINE / name).read_bytes() == data and not (root / name).exists()

    runs = cdlab.results(store, what="runs")
    assert sorted(runs.key) == sorted(intact)
    pd.testing.assert_frame_equal(runs.set_index("key").loc[intact], runs_before.loc[intact])

    # a re-run computes exactly the configurations whose files were set aside, and touches no other file
    again = cdlab.sweep(GRID, store=root, client=client, progress=False)
    assert again.keys == first.keys
    assert sorted(again.computed) == sorted(set(first.keys) - set(intact)) and sorted(again.skipped) == sorted(intact)
    assert sorted(again.failed) == failed
    assert {k: (root / f"{k}.parquet").stat().st_mtime_ns for k in intact} == stamps
    for k in set(ok) - set(intact):
        problem, result = one_by_one(configs[k])
        pd.testing.assert_frame_equal(store.trace(k).drop(columns="time"), result.trace.drop(columns="time"),
                                      check_exact=True)

    # --retry-failed, through the command line, on a store with a new damaged file
    (root / f"{ok[5]}.parquet").write_bytes(b"PAR1")
    grid_file = tmp_path / "grid.json"
    grid_file.write_text(json.dumps(GRID))
    with pytest.warns(StoreWarning, match=f"{ok[5]}.parquet"):
        code = cli_main(["sweep", str(grid_file), "--store", str(root), "--scheduler", cl.scheduler_address,
                         "--retry-failed", "--no-progress"])
    assert code == 1  # the hinge configurations of dual_cd fail again, as they must
    assert sorted(ResultStore(root).keys()) == sorted(first.keys)
    assert ResultStore(root).status(ok[5]) == runs_before.loc[ok[5], "status"]
    assert len(cdlab.results(root).key.unique()) == len(ok)


def test_a_data_file_rewritten_with_the_same_size_and_mtime_is_computed_afresh(cluster, tmp_path):
    _, client = cluster
    X, y = make_synthetic(40, 8, density=0.6, seed=5)
    path = tmp_path / "small.svm"
    dump_svmlight_file(X, y, str(path))
    grid = {"datasets": [str(path)], "lam": [1e-2], "methods": ["sdca"], "max_passes": 5}
    first = cdlab.sweep(grid, store=tmp_path / "s", client=client, progress=False)
    assert len(first.computed) == 1

    # one digit of one value changed in place: same size, same inode, mtime set back
    X1, _ = cdlab.load_dataset(str(path))
    before = os.stat(path)
    data = bytearray(path.read_bytes())
    at = data.index(b".") + 1
    data[at] = ord("0") + (data[at] - ord("0") + 1) % 10
    time.sleep(0.05)  # past the filesystem's timestamp tick, as any real rewrite is
    with open(path, "r+b") as f:
        f.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)

    second = cdlab.sweep(grid, store=tmp_path / "s", client=client, progress=False)
    assert second.computed == second.keys and second.keys[0] != first.keys[0]
    X2, y2 = cdlab.load_dataset(str(path))
    assert (X2 != X1).nnz == 1
    problem, result = one_by_one(expand_grid(grid)[0], X2, y2)
    record = second.store.record(second.keys[0])
    assert record["problem_hash"] == problem.content_hash()
    pd.testing.assert_frame_equal(second.store.trace(second.keys[0]).drop(columns="time"),
                                  result.trace.drop(columns="time"), check_exact=True)
    # and the unchanged file is recognised by its content: nothing to compute
    assert cdlab.sweep(grid, store=tmp_path / "s", client="tcp://127.0.0.1:1", progress=False).computed == []


def test_file_digest_is_the_content_whatever_size_and_mtime_say(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"1 1:0.25\n")
    first = file_digest(path)
    assert file_digest(path) == first
    st = os.stat(path)
    time.sleep(0.05)
    with open(path, "r+b") as f:
        f.write(b"1 1:0.75\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert file_digest(path) != first
    assert file_digest(tmp_path / "missing") is None


def test_writes_flush_file_and_directory(tmp_path, monkeypatch):
    store = ResultStore(tmp_path / "s")
    config = expand_grid({"datasets": [SYN]})[0]
    _, result = one_by_one(config)
    store.put({"key": "a", "config": config, "dataset": "syn60", "status": result.status}, result.trace)
    synced, fsync = [], os.fsync

    def spy(fd):
        synced.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    store.put({"key": "b", "config": config, "dataset": "syn60", "status": result.status}, result.trace)
    assert synced == ["file", "dir"]
    assert store.keys() == {"a", "b"} and not list((tmp_path / "s").glob(".*.tmp"))


def test_stale_temporaries_are_cleaned_and_live_ones_kept(cluster, tmp_path):
    _, client = cluster
    root = tmp_path / "s"
    first = cdlab.sweep({"datasets": [SYN], "max_passes": 3}, store=root, client=client, progress=False)
    (root / ".fingerprints").mkdir(exist_ok=True)
    hour_ago = time.time() - 2 * 3600
    names = {
        "live": f".{'a' * 32}.parquet.{os.getpid()}@{host()}.k3j4h5g6.tmp",  # this process: a live writer
        "dead": f".{'b' * 32}.parquet.{dead_pid()}@{host()}.k3j4h5g6.tmp",
        "other host, fresh": f".{'c' * 32}.parquet.123@elsewhere.k3j4h5g6.tmp",
        "other host, old": f".{'d' * 32}.parquet.123@elsewhere.k3j4h5g6.tmp",
        "unnamed, fresh": ".e.123.tmp",
        "unnamed, old": ".f.123.tmp",
    }
    for what, name in names.items():
        (root / name).write_bytes(b"half a file")
        if "old" in what:
            os.utime(root / name, (hour_ago, hour_ago))
    dead_fp = root / ".fingerprints" / f".x.json.{dead_pid()}@{host()}.k3j4h5g6.tmp"
    dead_fp.write_bytes(b"{")
    # a re-run cleans them
    again = cdlab.sweep({"datasets": [SYN], "max_passes": 3}, store=root, client=client, progress=False)
    assert again.skipped == first.keys
    left = {p.name for p in root.glob(".*.tmp")}
    assert left == {names["live"], names["other host, fresh"], names["unnamed, fresh"]}
    assert not dead_fp.exists()


def test_a_configuration_past_its_time_limit_is_recorded_as_failed_and_the_sweep_goes_on(cluster, tmp_path):
    _, client = cluster
    # 10⁶ passes with a checkpoint each: minutes of work, stopped at the checkpoint after 1 s
    grid = {"datasets": [SYN], "lam": 1e-3, "max_passes": [5, 1e6], "tol": 0.0, "time_limit": 1.0}
    t0 = time.perf_counter()
    report = cdlab.sweep(grid, store=tmp_path / "s", client=client, progress=False)
    assert time.perf_counter() - t0 < 60
    configs = expand_grid(grid)
    assert len(report.computed) == 2 and report.failed == [report.keys[1]]
    runs = report.runs().set_index("key")
    short, long = runs.loc[report.keys[0]], runs.loc[report.keys[1]]
    assert short.status == "max_passes" and short.error == ""
    assert long.status == "error" and long.error.startswith("TimeoutError:")
    assert "time limit of 1 s" in long.error and long.wall_seconds >= 1.0
    problem, result = one_by_one(configs[0])
    pd.testing.assert_frame_equal(report.store.trace(report.keys[0]).drop(columns="time"),
                                  result.trace.drop(columns="time"), check_exact=True)
    # the limit is no part of the key: a larger one re-runs the failure only with retry_failed
    again = cdlab.sweep({**grid, "max_passes": [5]}, store=tmp_path / "s", client=client, progress=False,
                        time_limit=30.0)
    assert again.keys == report.keys[:1] and again.computed == []
    for bad in (0, -1, "abc", True):
        with pytest.raises(ValueError, match="time_limit"):
            cdlab.sweep({**grid, "time_limit": bad}, store=tmp_path / "s", client=client, progress=False)
    grid_file = tmp_path / "grid.json"
    grid_file.write_text(json.dumps(grid))
    with pytest.raises(SystemExit) as exit_:
        cli_main(["sweep", str(grid_file), "--time-limit", "0"])
    assert exit_.value.code == 2


def test_a_configuration_with_a_huge_checkpoint_interval_is_stopped_at_its_time_limit(cluster, tmp_path,
                                                                                       monkeypatch):
    """Within a checkpoint interval the driver checks the cancel between slices of its work, so the time
    limit stops the run there; were a run deaf to it, the worker would be restarted after KILL_GRACE."""
    from cdlab.experiments import dask_sweep

    _, client = cluster
    monkeypatch.setattr(dask_sweep, "KILL_GRACE", 2.0)
    # one checkpoint interval of 5·10⁴ passes over 10⁶ nonzeros: about a minute without a checkpoint
    dense = {"synthetic": {"n_samples": 200, "n_features": 5000, "density": 1.0, "seed": 0}, "name": "dense"}
    grid = {"datasets": [dense], "lam": 1e-3, "max_passes": 5e4, "eval_every": 5e4, "tol": 0.0,
            "methods": "dual_cd", "time_limit": 1.0}
    t0 = time.perf_counter()
    report = cdlab.sweep(grid, store=tmp_path / "s", client=client, progress=False)
    assert time.perf_counter() - t0 < 40
    assert len(report.computed) == 1 and report.failed == report.keys
    error = report.runs().error.iloc[0]
    assert error.startswith("TimeoutError:") and "time limit of 1 s" in error
    assert "was restarted" in error or "stopped after" in error, error
    client.wait_for_workers(2, timeout=120)
    # the cluster still works
    after = cdlab.sweep({"datasets": [SYN], "max_passes": 3}, store=tmp_path / "s", client=client, progress=False)
    assert len(after.computed) == 1 and not after.failed
