"""The command line, run as users run it: ``python -m cdlab ...`` in a subprocess."""
import subprocess
import sys

import pandas as pd
import pytest
from sklearn.datasets import dump_svmlight_file

import cdlab
from cdlab.cli import main
from cdlab.data import make_synthetic, normalize_data


def cdlab_cli(*args, cwd=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "cdlab", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def summary(stdout):
    """The summary lines 'name value' printed by cdlab solve."""
    out = {}
    for line in stdout.splitlines():
        name, _, value = line.partition("  ")
        out[name.strip()] = value.strip()
    return out


@pytest.fixture
def svm_file(tmp_path):
    X, y = make_synthetic(50, 10, density=0.5, seed=7)
    path = tmp_path / "data.svm"
    dump_svmlight_file(X, y, str(path))
    return path


def test_help_lists_the_commands():
    proc = cdlab_cli("--help")
    assert proc.returncode == 0
    assert "solve" in proc.stdout and "sweep" in proc.stdout


def test_solve_on_a_registry_dataset(tmp_path):
    out = tmp_path / "trace.csv"
    proc = cdlab_cli("solve", "heart_scale", "--method", "sdca", "--loss", "logistic", "--lam", "1e-2",
                     "--tol", "1e-10", "--max-passes", "300", "--normalize", "--reference", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "passes" in proc.stderr  # the progress bar
    trace = pd.read_csv(out)
    X, y = cdlab.load_dataset("heart_scale")
    problem = cdlab.Problem(normalize_data(X, "rows"), y, loss="logistic", lam=1e-2)
    result = cdlab.solve(problem, method="sdca", tol=1e-10, max_passes=300, reference=True)
    pd.testing.assert_frame_equal(trace.drop(columns="time"), result.trace.drop(columns="time"), rtol=1e-15)
    last = trace.iloc[-1]
    assert last.gap <= 1e-10 and 0 <= last.subopt <= last.gap
    info = summary(proc.stdout)
    assert info["status"] == "converged"
    assert float(info["gap"]) == pytest.approx(last.gap, rel=1e-3)
    assert float(info["P - P*"]) == pytest.approx(last.subopt, rel=1e-3, abs=1e-15)
    assert float(info["passes"].split()[0]) == pytest.approx(last.passes, rel=1e-3)
    assert "seconds" in info


def test_solve_on_a_libsvm_path(tmp_path, svm_file):
    out = tmp_path / "t.csv"
    proc = cdlab_cli("solve", svm_file, "--method", "dual_cd", "--loss", "smoothed_hinge", "--lam", "1e-2",
                     "--sampling", "importance", "--option", "step=exact", "--seed", "3", "--max-passes", "5",
                     "--no-progress", "--out", out)
    assert proc.returncode == 0, proc.stderr
    trace = pd.read_csv(out)
    X, y = cdlab.load_dataset(str(svm_file))
    problem = cdlab.Problem(X, y, loss="smoothed_hinge", lam=1e-2)
    result = cdlab.solve(problem, method="dual_cd", sampling="importance", step="exact", seed=3, max_passes=5)
    pd.testing.assert_frame_equal(trace.drop(columns="time"), result.trace.drop(columns="time"), rtol=1e-15)
    assert summary(proc.stdout)["status"] == result.status
    assert "subopt" not in trace and "P - P*" not in proc.stdout


@pytest.mark.parametrize("args, message", [
    (["heart_scale", "--loss", "bogus"], "unknown loss 'bogus'"),
    (["/no/such/file.svm"], "no such svmlight/LIBSVM file: /no/such/file.svm"),
    (["heart_scale", "--method", "nope"], "unknown method 'nope'"),
    (["heart_scale", "--method", "sdca", "-o", "step=exact"], "got unknown option(s) ['step']"),
    (["heart_scale", "--loss", "squared", "--lam", "-1"], "lam (L2 strength λ) must be finite and ≥ 0"),
])
def test_solve_errors_are_one_clear_line_and_exit_2(args, message, capsys):
    # in-process (the same main() as the console script) to spare a Python start per case
    assert main(["solve", *args]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cdlab solve: error: ") and message in lines[0]


def test_solve_on_a_malformed_file_names_the_line(tmp_path):
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5 2:1\n-1 1:abc\n")
    proc = cdlab_cli("solve", bad)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and str(bad) in proc.stderr and "line 2" in proc.stderr


def test_sweep_command_runs_a_grid_file_and_reports_failures(tmp_path, svm_file):
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"""
datasets: [heart_scale, {svm_file.name}]
normalize: rows
loss: [logistic, hinge]
lam: 1e-2
methods: [sdca, dual_cd]
max_passes: 5
store: results
""")
    dry = cdlab_cli("sweep", grid, "--dry-run")
    assert dry.returncode == 0 and dry.stdout.startswith("8 configurations")
    first = cdlab_cli("sweep", grid, "--workers", "2", "--no-progress")
    # dual_cd's gradient step refuses the non-smooth hinge: recorded, reported, exit status 1
    assert first.returncode == 1, first.stderr
    assert "8 configurations: 8 computed, 0 already in the store, 2 failed" in first.stdout
    assert first.stdout.count("the gradient step needs a smooth loss") == 2
    runs = cdlab.results(tmp_path / "results", what="runs")
    assert len(runs) == 8 and set(runs.dataset) == {"heart_scale", str(svm_file)}
    assert (runs.status == "error").sum() == 2

    bad = tmp_path / "bad.yaml"
    bad.write_text("datasets: [heart_scale]\nmethods: [nope]\n")
    proc = cdlab_cli("sweep", bad)
    assert proc.returncode == 2 and "unknown method 'nope'" in proc.stderr
