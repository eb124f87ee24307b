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
    assert info["options"] == ", ".join(f"{k}={v!r}" for k, v in result.options.items())
    assert "shrinking=False" in info["options"]  # defaults included: what ran, not only what was typed


def test_solve_on_a_libsvm_path(tmp_path, svm_file):
    out = tmp_path / "t.csv"
    proc = cdlab_cli("solve", svm_file, "--method", "dual_cd", "--loss", "smoothed_hinge", "--lam", "1e-2",
                     "--sampling", "importance", "--option", "update=exact", "--seed", "3", "--max-passes", "5",
                     "--no-progress", "--out", out)
    assert proc.returncode == 0, proc.stderr
    trace = pd.read_csv(out)
    X, y = cdlab.load_dataset(str(svm_file))
    problem = cdlab.Problem(X, y, loss="smoothed_hinge", lam=1e-2)
    result = cdlab.solve(problem, method="dual_cd", sampling="importance", update="exact", seed=3, max_passes=5)
    pd.testing.assert_frame_equal(trace.drop(columns="time"), result.trace.drop(columns="time"), rtol=1e-15)
    assert summary(proc.stdout)["status"] == result.status
    assert "subopt" not in trace and "P - P*" not in proc.stdout


@pytest.mark.parametrize("args, message", [
    (["heart_scale", "--loss", "bogus"], "unknown loss 'bogus'"),
    (["/no/such/file.svm"], "no such svmlight/LIBSVM file: /no/such/file.svm"),
    (["heart_scale", "--method", "nope"], "unknown method 'nope'"),
    (["heart_scale", "--method", "sdca", "-o", "update=exact"], "got unknown option(s) ['update']"),
    (["heart_scale", "--loss", "squared", "--lam", "-1"], "--lam must be finite and ≥ 0, got -1.0"),
    (["heart_scale", "--method", "sdca", "--lam", "0"], "method 'sdca' needs lam > 0"),
    # flags are checked before the data are loaded: the (missing) file is never reached
    (["/no/such/file.svm", "--lam", "nan"], "--lam must be finite and ≥ 0, got nan"),
    (["/no/such/file.svm", "--tol", "nan"], "--tol must be a number, got nan"),
    (["/no/such/file.svm", "--seed", "-1"], "--seed must be an integer ≥ 0, got -1"),
    (["/no/such/file.svm", "--max-time", "-1"], "--max-time must be finite and ≥ 0, got -1.0"),
    (["/no/such/file.svm", "--eval-every", "0"],
     "--eval-every must be 'auto' or a finite number of passes > 0, got 0.0"),
    (["/no/such/file.svm", "--eval-every", "often"],
     "--eval-every must be 'auto' or a finite number of passes > 0, got 'often'"),
    (["/no/such/file.svm", "--max-passes", "inf"], "--max-passes must be finite and > 0, got inf"),
    (["/no/such/file.svm", "--out", "/no/such/dir/trace.csv"], "directory /no/such/dir does not exist"),
    (["/no/such/file.svm", "--out", "/"], "--out / is a directory"),
])
def test_solve_errors_are_one_clear_line_and_exit_2(args, message, capsys):
    # in-process (the same main() as the console script) to spare a Python start per case
    assert main(["solve", *args]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cdlab solve: error: ") and message in lines[0]


def one_error_line(capsys, command):
    """The one error line, last on stderr (after the progress notes cdlab solve prints), no traceback."""
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith(f"cdlab {command}: error: ")]
    assert len(errors) == 1 and err.strip().splitlines()[-1] == errors[0] and "Traceback" not in err, err
    return errors[0]


@pytest.mark.parametrize("args, code, message", [
    # refused before any kernel: SPDC's σ overflows at λ = 1e308 (ZeroDivisionError inside the kernel)
    (["heart_scale", "--method", "spdc", "--lam", "1e308"], 2, "SPDC's parameters (Thm 1)"),
    # L-BFGS-B's workspace for memory 1e7 (a MemoryError inside scipy)
    (["heart_scale", "--method", "lbfgs", "-o", "memory=1e7"], 2, "memory=10000000 needs an L-BFGS-B workspace"),
    # a reference optimum SDCA cannot certify in its budget: a failure of the computation, not of the input
    (["heart_scale", "--loss", "hinge", "--lam", "1e-6", "--reference", "--max-passes", "1"], 1,
     "RuntimeError: reference solve did not certify the optimum"),
])
def test_solve_failures_are_one_line_with_their_exit_code(args, code, message, capsys, monkeypatch, tmp_path):
    """These were tracebacks with exit status 1, the code that meant "diverged"."""
    monkeypatch.setenv("CDLAB_CACHE", str(tmp_path))
    assert main(["solve", "--no-progress", *args]) == code
    assert message in one_error_line(capsys, "solve")


def test_a_diverged_run_has_its_own_exit_code(capsys):
    from cdlab.cli import EXIT_BAD_INPUT, EXIT_DIVERGED, EXIT_FAILED
    assert len({EXIT_DIVERGED, EXIT_BAD_INPUT, EXIT_FAILED, 0}) == 4
    code = main(["solve", "heart_scale", "--method", "sgd", "--loss", "squared", "--lam", "1e-4", "-o", "schedule=pegasos",
                 "--max-passes", "20", "--no-progress"])
    assert code == EXIT_DIVERGED
    out = capsys.readouterr().out
    assert "status    diverged" in out and "smaller step" in out


def test_faceoff_refuses_numbers_beyond_floating_point_and_emits_standard_json(capsys):
    """λ = 1e-320 printed inf/NaN, and --json wrote the non-standard Infinity/NaN."""
    import json
    assert main(["faceoff", "heart_scale", "--lam", "1e-320", "--json"]) == 2
    line = one_error_line(capsys, "faceoff")
    # refused where the data meet λ (Problem: the dual curvature overflows), before any report number
    assert "lam=1e-320 is too small for this data" in line and "use a larger lam" in line

    def refuse(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    assert main(["faceoff", "heart_scale", "--lam", "1e-300", "--json"]) == 0
    out = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert out["lam"] == 1e-300


@pytest.mark.parametrize("text, message", [
    ("datasets: [heart_scale]\noptions: {step: 2024-01-01}\n", "'options.step'"),
    ("datasets: [heart_scale]\noptions: {step: !!set {a, b}}\n", "'options.step'"),
    ("datasets: [heart_scale]\nmethods: [sgd]\noptions: {eta0: .nan}\n", "'options.eta0': nan"),
    (None, "is not a UTF-8 text file"),
    ("dir", "is a directory"),
])
def test_sweep_refuses_bad_grid_files_in_one_line(tmp_path, capsys, text, message):
    path = tmp_path / "grid.yaml"
    if text is None:
        path.write_bytes(bytes(range(128, 256)))
    elif text == "dir":
        path.mkdir()
    else:
        path.write_text(text)
    assert main(["sweep", str(path), "--dry-run"]) == 2
    assert message in one_error_line(capsys, "sweep")


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
    assert first.stdout.count("the gradient step (update='linesearch') needs a smooth loss") == 2
    runs = cdlab.results(tmp_path / "results", what="runs")
    assert len(runs) == 8 and set(runs.dataset) == {"heart_scale", str(svm_file)}
    assert (runs.status == "error").sum() == 2

    bad = tmp_path / "bad.yaml"
    bad.write_text("datasets: [heart_scale]\nmethods: [nope]\n")
    proc = cdlab_cli("sweep", bad)
    assert proc.returncode == 2 and "unknown method 'nope'" in proc.stderr


@pytest.mark.slow
def test_a_killed_sweep_command_resumes_losing_nothing(tmp_path):
    """Ctrl-C (SIGINT) stops `cdlab sweep` with a message and no traceback; SIGKILL stops it dead;
    either way every result that finished is in the store and the same command resumes from it."""
    import glob
    import signal
    import time

    grid = tmp_path / "grid.yaml"
    # configurations of about a second each, so that the signals arrive mid-sweep
    grid.write_text("""
datasets:
  - {synthetic: {n_samples: 1000, n_features: 100, density: 0.5, seed: 1}, name: syn}
lam: 1.0e-3
seeds: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
max_passes: 12000
eval_every: 200.0
tol: 0.0
store: results
""")
    stored = lambda: len(glob.glob(str(tmp_path / "results" / "*.parquet")))  # noqa: E731

    def interrupt(sig, at_least):
        # SIGINT's default disposition in the child, as in a terminal: a suite started in the background
        # (`pytest &`) ignores SIGINT, the child would inherit that, and Python then installs no
        # KeyboardInterrupt handler
        proc = subprocess.Popen([sys.executable, "-m", "cdlab", "sweep", str(grid), "--no-progress"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 600
        while stored() < at_least and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep finished before it could be interrupted"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
        return proc.returncode, out, err

    rc, out, err = interrupt(signal.SIGINT, 1)
    assert rc == 130 and "Traceback" not in err and "interrupted" in err and "resumes" in err
    after_int = stored()
    assert 1 <= after_int < 12
    rc, out, err = interrupt(signal.SIGKILL, after_int + 1)
    assert rc == -signal.SIGKILL
    after_kill = stored()
    assert after_int < after_kill < 12
    proc = cdlab_cli("sweep", grid, "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert f"12 configurations: {12 - after_kill} computed, {after_kill} already in the store, 0 failed" \
        in proc.stdout
    runs = cdlab.results(tmp_path / "results", what="runs")
    assert len(runs) == 12 and (runs.status == "max_passes").all() and sorted(runs.seed) == list(range(12))


def test_faceoff_run_measures_each_seed_and_applies_the_pages_verdict_rule(svm_file, capsys, monkeypatch):
    """``cdlab faceoff --run``: per-seed passes-to-ε as cdlab.solve measures them, and the verdict of
    cdlab.verdict.faceoff_verdict — the page's rule — on exactly those numbers."""
    import json

    import numpy as np

    import cdlab.verdict as verdict_module
    from cdlab.solvers import FACEOFF_OPTIONS
    seen = []
    rule = verdict_module.verdict
    monkeypatch.setattr(verdict_module, "verdict", lambda passes: seen.append(passes) or rule(passes))
    eps = 1e-6
    assert main(["faceoff", str(svm_file), "--loss", "squared", "--lam", "0.01", "--eps", str(eps), "--run", "--normalize", "none",
                 "--seeds", "3", "--max-passes", "200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["measured"]
    X, y = cdlab.load_dataset(str(svm_file))
    problem = cdlab.Problem(X, y, loss="squared", lam=0.01)
    assert set(out["runs"]) == {f"{m} ({s})" for m in ("primal_cd", "dual_cd") for s in ("uniform", "importance")}
    for name, row in out["runs"].items():
        method, sampling = name.rstrip(")").split(" (")
        assert row["status"] == ["converged"] * 3 and row["compiled"] is False
        for seed, got in enumerate(row["passes_to_eps"]):
            trace = cdlab.solve(problem, method=method, sampling=sampling, max_passes=200, tol=eps, seed=seed,
                                eval_every=0.25, **FACEOFF_OPTIONS[method]).trace  # Algorithms 1 and 2
            k = int(np.flatnonzero(trace.gap.to_numpy() <= eps)[0])
            assert trace.passes.iloc[k - 1] <= got <= trace.passes.iloc[k]  # between the checkpoints around ε
    v = out["verdict"]
    assert len(seen) == 1 and sorted(seen[0]) == v["compared"]
    for name in v["compared"]:
        np.testing.assert_allclose(seen[0][name], out["runs"][name]["passes_to_eps"])
    again = rule(seen[0])
    assert (v["kind"], v["winner"]) == (again.kind, again.winner) and v["kind"] in ("winner", "tie")
    assert {out["runs"][n]["passes_to_eps"][0] is not None for n in v["compared"]} == {True}


def test_faceoff_run_on_one_seed_names_a_lead_only(svm_file, capsys):
    assert main(["faceoff", str(svm_file), "--loss", "squared", "--lam", "0.01", "--eps", "1e-6", "--run",
                 "--seeds", "1", "--max-passes", "200"]) == 0
    text = capsys.readouterr().out
    assert "measured verdict: " in text and "ahead on one seed" in text and "wins" not in text
    assert main(["faceoff", str(svm_file), "--loss", "squared", "--run", "--seeds", "0"]) == 2
    assert "--seeds must be between 1 and 100, got 0" in capsys.readouterr().err


@pytest.mark.parametrize("method,old,new", [("dual_cd", "step=exact", "update=exact"),
                                            ("sag", "step=auto", "step_size=L_max")])
def test_solve_takes_an_old_option_spelling_with_a_warning(method, old, new, capsys):
    """``-o step=...`` (the step options' old name, and sag's old value ``auto``) runs as its new spelling."""
    args = ["solve", "heart_scale", "--method", method, "--loss", "logistic", "--lam", "1e-2",
            "--max-passes", "5", "--no-progress", "--seed", "1"]
    assert main(args + ["-o", new]) == 0
    current = summary(capsys.readouterr().out)
    with pytest.warns(FutureWarning, match="is renamed"):
        assert main(args + ["-o", old]) == 0
    former = summary(capsys.readouterr().out)
    assert {k: former[k] for k in ("gap", "passes")} == {k: current[k] for k in ("gap", "passes")}
