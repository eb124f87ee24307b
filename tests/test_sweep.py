"""cdlab.sweep on a LocalCluster of two worker processes, and the results store.

Every sweep result is checked against an independent one-by-one solve (data
loaded here, Problem built here, cdlab.solve called here): the traces must be
equal in every column but time.
"""
import os
import signal

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.datasets import dump_svmlight_file

import cdlab
from cdlab.data import make_synthetic, normalize_data
from cdlab.experiments import expand_grid, local_cluster
from cdlab.experiments.runner import config_key
from cdlab.experiments.grid import EXAMPLE, load_grid
from cdlab.store import ResultStore

SYN = {"synthetic": {"n_samples": 60, "n_features": 12, "density": 0.5, "seed": 3}, "name": "syn60"}


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client

    with local_cluster(n_workers=2) as cl, Client(cl) as client:
        yield cl, client


@pytest.fixture
def svm_file(tmp_path):
    X, y = make_synthetic(40, 8, density=0.6, seed=5)
    path = tmp_path / "small.svm"
    dump_svmlight_file(X, y, str(path))
    return str(path)


def one_by_one(config):
    """The configuration solved here, without any sweep code."""
    spec = config["dataset"]
    if isinstance(spec, str):
        X, y = cdlab.load_dataset(spec)
    else:
        X, y = make_synthetic(**spec["synthetic"])
    X = normalize_data(X, config["normalize"])
    problem = cdlab.Problem(X, y, loss=config["loss"], lam=config["lam"], l1=config["l1"], s=config["s"])
    result = cdlab.solve(problem, method=config["method"], sampling=config["sampling"],
                         max_passes=config["max_passes"], tol=config["tol"], seed=config["seed"],
                         eval_every=config["eval_every"], **config["options"])
    return problem, result


def assert_same_as_one_by_one(store, keys, configs):
    import hashlib

    for key, config in zip(keys, configs):
        problem, result = one_by_one(config)
        record, trace = store.record(key), store.trace(key)
        assert record["status"] == result.status
        assert record["problem_hash"] == problem.content_hash()
        assert record["w_sha256"] == hashlib.sha256(np.ascontiguousarray(result.w).tobytes()).hexdigest()[:32]
        pd.testing.assert_frame_equal(trace.drop(columns="time"), result.trace.drop(columns="time"),
                                      check_exact=True)


def test_sweep_equals_one_by_one_on_two_worker_processes(cluster, tmp_path, svm_file):
    _, client = cluster
    grid = {"datasets": [SYN, svm_file, "heart_scale"], "normalize": "rows",
            "loss": ["logistic", "smoothed_hinge"], "lam": [1e-2], "methods": ["sdca", "dual_cd"],
            "samplings": ["uniform", "importance"], "seeds": [0, 1], "max_passes": 8, "tol": 1e-12}
    configs = expand_grid(grid)
    assert len(configs) == 3 * 2 * 2 * 2 * 2
    report = cdlab.sweep(grid, store=tmp_path / "store", client=client, progress=False)
    assert len(report.computed) == len(configs) and not report.failed and not report.skipped
    store = report.store
    assert_same_as_one_by_one(store, report.keys, configs)

    runs = report.runs()
    workers = set(client.run(os.getpid).values())
    assert set(runs.pid) == workers and len(workers) == 2 and os.getpid() not in workers

    table = cdlab.results(store)
    assert {"dataset", "loss", "lam", "method", "sampling", "seed", "options", "status"} <= set(table.columns)
    assert {"steps", "passes", "time", "primal", "dual", "gap"} <= set(table.columns)
    assert set(table.dataset) == {"syn60", svm_file, "heart_scale"}
    assert len(table) == sum(len(store.trace(k)) for k in report.keys)
    assert (table.groupby("key").passes.diff().dropna() > 0).all()


def test_second_run_computes_nothing_via_scheduler_address(cluster, tmp_path):
    cl, _ = cluster
    grid = {"datasets": [SYN], "lam": [1e-2, 1e-3], "methods": ["sdca"], "seeds": [0, 1], "max_passes": 5}
    first = cdlab.sweep(grid, store=tmp_path / "s", client=cl.scheduler_address, progress=False)
    assert len(first.computed) == 4
    files = sorted((tmp_path / "s").glob("*.parquet"))
    stamps = [f.stat().st_mtime_ns for f in files]
    called = []
    second = cdlab.sweep(grid, store=tmp_path / "s", client=cl.scheduler_address, progress=False,
                         on_result=called.append)
    assert second.computed == [] and called == [] and sorted(second.skipped) == sorted(first.keys)
    assert second.keys == first.keys
    assert [f.stat().st_mtime_ns for f in files] == stamps
    # a changed grid computes only its new configurations
    third = cdlab.sweep({**grid, "seeds": [0, 1, 2]}, store=tmp_path / "s", client=cl.scheduler_address,
                        progress=False)
    assert len(third.computed) == 2 and len(third.skipped) == 4


def test_rerun_on_files_needs_no_cluster_and_a_changed_file_is_recomputed(cluster, tmp_path, svm_file):
    _, client = cluster
    grid = {"datasets": ["heart_scale", svm_file], "lam": [1e-2], "methods": ["sdca"], "max_passes": 5}
    first = cdlab.sweep(grid, store=tmp_path / "s", client=client, progress=False)
    assert len(first.computed) == 2
    # nothing to do: the fingerprints come from the store, so even an unreachable scheduler is never contacted
    again = cdlab.sweep(grid, store=tmp_path / "s", client="tcp://127.0.0.1:1", progress=False)
    assert again.computed == [] and again.keys == first.keys
    # new content at the same path: a new data hash, so a new key, computed afresh
    X, y = make_synthetic(40, 8, density=0.6, seed=6)
    dump_svmlight_file(X, y, svm_file)
    changed = cdlab.sweep(grid, store=tmp_path / "s", client=client, progress=False)
    assert changed.keys[0] == first.keys[0] and changed.skipped == [first.keys[0]]
    assert changed.computed == [changed.keys[1]] and changed.keys[1] != first.keys[1]
    assert_same_as_one_by_one(changed.store, changed.keys, expand_grid(grid))


def test_failing_configurations_are_recorded_and_do_not_stop_the_sweep(cluster, tmp_path):
    _, client = cluster
    missing = str(tmp_path / "no_such_file.svm")
    grid = {"datasets": [SYN, missing], "loss": ["hinge", "logistic"], "methods": ["sdca", "dual_cd"],
            "lam": 1e-2, "max_passes": 5}
    configs = expand_grid(grid)
    report = cdlab.sweep(grid, store=tmp_path / "s", client=client, progress=False)
    runs = report.runs().set_index("key").loc[report.keys]
    expected_failed = []
    for key, config in zip(report.keys, configs):
        row = runs.loc[key]
        if config["dataset"] == missing:
            with pytest.raises(ValueError) as exc:
                cdlab.load_dataset(missing)
        elif config["method"] == "dual_cd" and config["loss"] == "hinge":
            with pytest.raises(ValueError) as exc:
                one_by_one(config)
        else:
            assert row.status in ("converged", "max_passes") and row.error == ""
            continue
        expected_failed.append(key)
        assert row.status == "error"
        assert row.error == f"{type(exc.value).__name__}: {exc.value}"
        assert "Traceback" in row.traceback
    assert sorted(report.failed) == sorted(expected_failed) and 0 < len(expected_failed) < len(configs)
    assert cdlab.results(report.store).key.nunique() == len(configs) - len(expected_failed)

    again = cdlab.sweep(grid, store=tmp_path / "s", client=client, progress=False)
    assert again.computed == [] and sorted(again.failed) == sorted(expected_failed)
    retried = cdlab.sweep(grid, store=tmp_path / "s", client=client, progress=False, retry_failed=True)
    assert sorted(retried.computed) == sorted(expected_failed)


class Interrupted(Exception):
    pass


def test_interrupted_sweep_resumes_losing_nothing_that_finished(cluster, tmp_path):
    _, client = cluster
    grid = {"datasets": [SYN], "lam": [1e-2, 1e-3, 1e-4], "methods": ["sdca", "dual_cd"], "max_passes": 20}
    seen = []

    def stop_after_two(record):
        seen.append(record["key"])
        if len(seen) == 2:
            raise Interrupted

    with pytest.raises(Interrupted):
        cdlab.sweep(grid, store=tmp_path / "s", client=client, progress=False, on_result=stop_after_two)
    stored = ResultStore(tmp_path / "s").keys()
    assert set(seen) <= stored and len(stored) < 6
    report = cdlab.sweep(grid, store=tmp_path / "s", client=client, progress=False)
    assert sorted(report.skipped) == sorted(stored)
    assert sorted(report.computed) == sorted(set(report.keys) - stored)
    assert_same_as_one_by_one(report.store, report.keys, expand_grid(grid))


def test_killing_a_worker_mid_sweep_still_completes_every_configuration(cluster, tmp_path):
    _, client = cluster
    # runs of a fraction of a second each, so that tasks are in flight when the worker dies
    grid = {"datasets": [{"synthetic": {"n_samples": 200, "n_features": 20, "density": 0.5, "seed": 1}}],
            "lam": 1e-3, "seeds": [0, 1, 2, 3, 4, 5], "max_passes": 300, "tol": 0.0}
    killed = []

    def kill_a_busy_worker(record):
        if killed:
            return
        pids = client.run(os.getpid)
        busy = {addr: keys for addr, keys in client.processing().items() if keys}
        addr = next(iter(busy))
        os.kill(pids[addr], signal.SIGKILL)
        killed.append((addr, busy[addr], pids[addr]))

    report = cdlab.sweep(grid, store=tmp_path / "s", client=client, progress=False, on_result=kill_a_busy_worker)
    assert killed and killed[0][1], "a worker with a task in flight was killed"
    assert not report.failed and len(report.computed) == 6
    addr, lost_tasks, dead_pid = killed[0]
    assert addr not in client.scheduler_info()["workers"]
    # the configurations in flight on the dead worker were run again by a live one
    runs = report.runs()
    for task in lost_tasks:
        row = runs[runs.key.str.startswith(task.split("-")[2])]
        assert len(row) == 1 and row.pid.iloc[0] != dead_pid
    assert_same_as_one_by_one(report.store, report.keys, expand_grid(grid))
    client.wait_for_workers(2, timeout=120)  # the nanny restarts it for the next tests


def test_store_ignores_stray_temporary_files_and_reads_back_records(tmp_path):
    store = ResultStore(tmp_path / "s")
    config = expand_grid({"datasets": [SYN]})[0]
    problem, result = one_by_one(config)
    record = {"key": "abc", "config": config, "dataset": "syn60", "status": result.status, "error": ""}
    store.put(record, result.trace)
    (tmp_path / "s" / ".def.123.tmp").write_bytes(b"half a file")
    assert store.keys() == {"abc"} and "abc" in store and "def" not in store
    assert store.record("abc")["config"] == config
    pd.testing.assert_frame_equal(store.trace("abc"), result.trace, check_exact=True)
    runs = cdlab.results(store, what="runs")
    assert list(runs.key) == ["abc"] and runs.lam.iloc[0] == config["lam"]
    with pytest.raises(ValueError, match="what must be"):
        cdlab.results(store, what="nope")
    with pytest.raises(ValueError, match="no results store"):
        cdlab.results(tmp_path / "nowhere")


def test_grid_format_example_and_errors(tmp_path):
    grid = yaml.safe_load(EXAMPLE)
    configs = expand_grid(grid, base_dir=tmp_path)
    per_method = sum(len(grid["method_options"].get(m, [grid["options"]])) for m in grid["methods"])
    n = (len(grid["datasets"]) * len(grid["loss"]) * len(grid["lam"]) * per_method * len(grid["samplings"])
         * len(grid["seeds"]))
    assert len(configs) == n
    assert {c["dataset"]["path"] for c in configs if isinstance(c["dataset"], dict) and "path" in c["dataset"]} \
        == {str(tmp_path / "data" / "test.svm")}
    assert {tuple(sorted(c["options"].items())) for c in configs if c["method"] == "dual_cd"} \
        == {(("update", "exact"),), (("update", "gradient"),)}

    path = tmp_path / "g.yaml"
    path.write_text("datasets: [heart_scale]\nlam: [1e-3, 1e-4]\nloss: smoothed_hinge\ns: [0.5, 1.0]\n")
    configs = expand_grid(load_grid(path))
    assert sorted((c["lam"], c["s"]) for c in configs) == [(1e-4, 0.5), (1e-4, 1.0), (1e-3, 0.5), (1e-3, 1.0)]
    assert len(expand_grid({"datasets": ["heart_scale"], "loss": "logistic", "s": [0.5, 1.0]})) == 1
    # a quoted "false" (YAML text, not a boolean) must not read as True
    path.write_text('datasets: [heart_scale]\nreference: [true, "false", "True"]\n')
    assert [c["reference"] for c in expand_grid(load_grid(path))] == [True, False]

    bad = [({"lam": 1e-3}, "names no datasets"), ({"datasets": ["heart_scale"], "lamda": 1}, "unknown grid key"),
           ({"datasets": ["heart_scale"], "methods": ["nope"]}, "unknown method 'nope'"),
           ({"datasets": ["heart_scale"], "loss": "bogus"}, "unknown loss 'bogus'"),
           ({"datasets": ["heart_scale"], "lam": "abc"}, "'lam': 'abc' is not a number"),
           ({"datasets": ["heart_scale"], "lam": []}, "empty list"),
           ({"datasets": [{"foo": 1}]}, "needs a 'synthetic' or a 'path'"),
           ({"datasets": ["heart_scale"], "reference": 1}, "'reference': 1 is not true or false")]
    for grid, message in bad:
        with pytest.raises(ValueError, match=message):
            expand_grid(grid)
    with pytest.raises(ValueError, match="needs a store"):
        cdlab.sweep({"datasets": ["heart_scale"]})


@pytest.mark.parametrize("text, message", [
    ("options: {step: 2024-01-01}", "'options.step': .* is a date; .* quote it"),
    ("options: {step: !!set {a, b}}", "'options.step': .* is a set"),
    ("methods: [sgd]\noptions: {eta0: .nan}", "'options.eta0': nan is not a finite number"),
    ("methods: [sgd]\noptions: [{eta0: 0.1}, {eta0: .inf}]", r"'options\[1\].eta0': inf is not a finite number"),
    ("method_options: {dual_cd: [{step: exact}, {step: [1, .nan]}]}",
     r"'method_options.dual_cd\[1\].step\[1\]': nan is not a finite number"),
    ("datasets: [{synthetic: {n_samples: .nan}}]", r"'datasets\[0\].synthetic.n_samples': nan is not a finite"),
    ("methods: [[sdca]]", "'methods': \\['sdca'\\] is not a name"),
    ("samplings: [{a: 1}]", "'samplings': .* is not a name"),
    ("tag: {a: 1}", "'tag': .* is not a text"),
])
def test_grid_values_are_checked_key_by_key(tmp_path, text, message):
    """Values a configuration cannot hold (YAML dates and sets, NaN, nested names) are refused
    naming the entry; they were TypeErrors from the JSON encoder or messages naming no key."""
    path = tmp_path / "g.yaml"
    path.write_text(("" if text.startswith("datasets") else "datasets: [heart_scale]\n") + text + "\n")
    with pytest.raises(ValueError, match=message):
        expand_grid(load_grid(path))


def test_a_grid_path_that_is_not_a_text_file_is_refused(tmp_path):
    binary = tmp_path / "grid.yaml"
    binary.write_bytes(bytes(range(128, 256)) * 4)
    with pytest.raises(ValueError, match="grid file .*grid.yaml is not a UTF-8 text file"):
        load_grid(binary)
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    with pytest.raises(ValueError, match="grid file .*folder.yaml is a directory"):
        load_grid(folder)


def test_progress_bar_in_a_notebook_shows_progress_without_warnings():
    """The sweep's bar in a Jupyter kernel: a bar (a widget when ipywidgets is installed, text
    otherwise), and no 'IProgress not found' warning from tqdm.auto."""
    import nbformat
    from nbclient import NotebookClient

    code = ("from cdlab.experiments.dask_sweep import _progress_bar\n"
            "with _progress_bar(3, 1, True) as bar:\n"
            "    bar.update(2)\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = nb.cells[0].outputs
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    widgets = [o for o in outputs if o.output_type == "display_data"
               and "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert "IProgress" not in text and "Warning" not in text
    assert widgets or "3/3" in text


def test_a_configuration_carries_its_resolved_options():
    """A configuration (and so its store key) names what runs: an old spelling under its current name, and
    every default written out, so a result computed under another default is never taken for this one."""
    grid = {"datasets": ["heart_scale"], "methods": ["dual_cd", "sag"]}
    with pytest.warns(FutureWarning, match="step= is renamed"):
        old = expand_grid({**grid, "method_options": {"dual_cd": {"step": "exact"}}})
    new = expand_grid({**grid, "method_options": {"dual_cd": {"update": "exact"}}})
    assert old == new
    options = {c["method"]: c["options"] for c in new}
    assert options == {"dual_cd": {"update": "exact"}, "sag": {"step_size": "linesearch"}}
    assert config_key(new[1], "h") != config_key({**new[1], "options": {"step_size": "L_max"}}, "h")
