"""benchmarks/race.py: on a tiny problem per loss, every installed peer reaches
cdlab's target P* + 1e-6·|P*| at its converted conventions, cdlab's runs end
certified, and the ratio and memory tables have their columns. (No timing is
asserted: the machine is shared.)"""
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cdlab

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import race  # noqa: E402
from _peers import PEERS, dense  # noqa: E402


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CDLAB_CACHE", str(tmp_path))


@pytest.fixture(autouse=True)
def exact_repeats(monkeypatch):
    """Every call is timed exactly ``repeats`` times, as the tests below count (the short-call rule has its own)."""
    monkeypatch.setattr(race, "SHORT_CALL_S", 0.0)


def counted_ridge(fits):
    """A peer build: scikit-learn's direct Ridge solve (no intercept), recording each fit's tol in ``fits``."""
    from sklearn.linear_model import Ridge

    def build(lam, n, d, tol, threads):
        class Counted(Ridge):
            def fit(self, X, y):
                fits.append(tol)
                return super().fit(X, y)
        return Counted(alpha=lam * n, fit_intercept=False, solver="cholesky")
    return build


@pytest.mark.parametrize("loss", race.LOSSES)
def test_race_machinery_on_a_tiny_problem(loss, monkeypatch):
    # no warm-up here (the race's main() has one): a method's first call may include its compilation,
    # which the cap on slow methods (tested below) must not take for slowness
    monkeypatch.setattr(race, "OURS_FLOOR_S", 600.0)
    case = race.Case("toy", lambda: dense(60, 8, 0), loss, 1.0)
    out = race.race_case(case, repeats=1, threads=(1,), cap=5.0, max_passes=2000, verbose=False)
    info, ours, peers = out["info"], out["ours"], out["peers"]

    X, y = dense(60, 8, 0)
    p_star = cdlab.reference_optimum(race.make_problem(X, y, loss, 1.0), tol=1e-12)
    assert info["eps"] == pytest.approx(race.GAP_REL * abs(p_star), rel=1e-6)
    target = p_star + info["eps"]

    # cdlab: every applicable fixed method is certified at the target
    fixed = ours[ours.solver != "auto"]
    assert len(fixed) == len(race.applicable(race.make_problem(X, y, loss, 1.0))) >= 2
    assert (ours.status == "converged").all(), ours
    assert (ours.gap <= info["eps"]).all() and (ours.primal <= target).all()
    assert info["best"] in set(fixed.solver) and np.isfinite(info["best_s"])

    # every peer of this loss has a row; an installed one reaches the target, a missing one says so
    assert list(peers.peer) == [name for name, *_ in PEERS[loss]]
    for _, row in peers.iterrows():
        if row["note"].startswith("unavailable"):
            continue
        assert row["note"] == "", row.to_dict()
        assert np.isfinite(row["seconds"]) and row["seconds"] > 0
        assert p_star - 1e-9 * abs(p_star) <= row["primal"] <= target, (row["peer"], row["primal"], target)

    table = race.ratio_table({case.label: out})
    assert {"problem", "cdlab best", "cdlab s", "auto ÷ best", "best peer", "best peer ÷ cdlab"} <= set(table.columns)
    assert set(peers.peer) <= set(table.columns)
    # each peer's ratio is to cdlab's best timed in alternation with its fits
    reached = peers[peers.seconds.notna()]
    assert (reached["cdlab s"] > 0).all() and reached["cdlab s"].notna().all()
    assert table["best peer ÷ cdlab"].iloc[0] == pytest.approx((reached.seconds / reached["cdlab s"]).min())
    means = race.geometric_means(table)
    assert "best peer ÷ cdlab" in means
    mem = race.memory_table({case.label: out})
    assert {"cdlab build MB", "cdlab build+solve MB"} <= set(mem.columns)


def test_missing_peer_is_reported_not_fatal(monkeypatch):
    monkeypatch.setitem(sys.modules, "snapml", None)  # `import snapml` raises ImportError
    case = race.Case("toy", lambda: dense(40, 6, 1), "hinge", 1.0)
    out = race.race_case(case, repeats=1, threads=(1, 2), cap=5.0, verbose=False)
    notes = dict(zip(out["peers"].peer, out["peers"].note))
    assert notes["snapml"].startswith("unavailable: ModuleNotFoundError")
    assert np.isfinite(out["peers"].set_index("peer").seconds["liblinear dual (LinearSVC)"])


def test_two_thread_table_races_cdlabs_parallel_methods():
    """With threads (1, 2): cdlab's fastest method with a parallel mode, within TWO_THREAD_REACH of its
    fastest, reruns on n_jobs=2, certified; the two-thread table divides the peers' two-thread seconds
    by the faster of cdlab's one- and two-thread best."""
    case = race.Case("toy", lambda: dense(60, 8, 0), "logistic", 1.0)
    out = race.race_case(case, repeats=1, threads=(1, 2), cap=5.0, verbose=False)
    info, ours, ours2, peers = out["info"], out["ours"], out["ours2"], out["peers"]
    parallel = {solver: secs for solver, secs in zip(ours.solver, ours.seconds)
                if solver != "auto" and race.has_parallel_mode(solver)}
    fastest = min(parallel, key=parallel.get)
    rerun = parallel[fastest] <= race.TWO_THREAD_REACH * info["best_s"]
    assert len(ours2) == rerun
    if rerun:
        assert list(ours2.solver) == [fastest]
        assert (ours2.status == "converged").all() and (ours2.gap <= info["eps"]).all(), ours2
        assert info["best2_s"] == min(info["best_s"], ours2.seconds.iloc[0])
        assert info["best2"] in (info["best"], f"{fastest} n_jobs=2")
    two = peers[peers.threads == 2]
    table = race.ratio_table({case.label: out}, threads=2)
    assert len(two.seconds.dropna())  # scikit-learn's lbfgs, a dependency, offers threads
    assert table["cdlab s"].iloc[0] == info["best2_s"]
    assert two["cdlab s"].notna().all()
    assert table["best peer ÷ cdlab"].iloc[0] == pytest.approx((two.seconds / two["cdlab s"]).min())


def test_save_resumes_and_tables_print_what_was_saved(tmp_path, monkeypatch, capsys):
    """``--save DIR`` keeps a finished problem with its settings and a rerun reads it instead of racing
    again; ``--tables DIR`` races nothing and prints the tables over what was saved."""
    monkeypatch.setattr(race, "data_sets", lambda quick: {"toy": lambda: dense(60, 8, 0)})
    monkeypatch.setattr(race, "warm_up", lambda: None)
    args = ["--quick", "--losses", "squared", "--repeats", "1", "--no-threads", "--save", str(tmp_path / "saved")]
    first = race.main(args)
    assert list(first) == ["toy squared λ=1/n"] and len(list((tmp_path / "saved").glob("*.json"))) == 1
    monkeypatch.setattr(race, "race_case", lambda *a, **k: pytest.fail("a saved problem was raced again"))
    again = race.main(args)
    assert again.keys() == first.keys()
    label = "toy squared λ=1/n"
    assert again[label]["info"] == pytest.approx(first[label]["info"], nan_ok=True)
    for key in ("ours", "peers"):  # the JSON file gives back the tables the race printed
        pd.testing.assert_frame_equal(again[label][key], first[label][key], check_dtype=False)
    capsys.readouterr()
    race.main(["--tables", str(tmp_path / "saved"), "--details"])
    out = capsys.readouterr().out
    assert f"=== {label}: n=60, d=8" in out and out.index(f"=== {label}") < out.index("geometric means")
    assert "toy squared λ=1/n" in out and "geometric means" in out and "peak RSS" in out
    # the full race here is toy's 3 losses × 2 λ: one saved, by this cdlab, the five others named as missing
    assert f"coverage: 1 of the race's 6 problems saved; raced by cdlab source digest {race.CDLAB_DIGEST} (1)" in out
    missing = out.split("not saved in these directories: ")[1].splitlines()[0].split("; ")
    assert sorted(missing) == sorted(f"toy {loss} λ={f:g}/n" for loss in race.LOSSES for f in race.LAM_FACTORS
                                     if (loss, f) != ("squared", 1.0))
    with pytest.raises(SystemExit):  # --quick's shortened problems stay out of the repository's results
        race.main(["--quick", "--save"])
    assert "give --save a DIR" in capsys.readouterr().err


def test_a_slow_fixed_method_is_stopped_at_its_cap_and_not_repeated(monkeypatch):
    """run_ours: with the cap at ~0 (OURS_REACH, OURS_FLOOR_S), auto (run first in each round) reaches a
    certified end, every repeat, and every fixed method, all run after it, stops at its first checkpoint past
    the cap, once, and is shown n/r with its cap. Without auto the first fixed method has nothing to be capped
    by: it runs to its end, the others stop."""
    monkeypatch.setattr(race, "OURS_REACH", 1e-9)
    monkeypatch.setattr(race, "OURS_FLOOR_S", 0.0)
    X, y = dense(300, 40, 1)
    problem = race.make_problem(X, y, "logistic", 0.01)
    eps = 1e-8 * abs(cdlab.reference_optimum(problem, tol=1e-10))
    runs = [("sdca", "permutation", {}), ("primal_cd", "uniform", {}), ("sdca", "uniform", {})]
    ours = race.run_ours(problem, eps, 3, 2000, runs=runs)
    auto = ours.iloc[-1]
    assert auto.solver == "auto" and auto.status == "converged" and np.isfinite(auto.seconds) and auto.gap <= eps
    alone = race.run_ours(problem, eps, 3, 2000, runs=runs, with_auto=False)
    first = alone.iloc[0]
    assert first.status == "converged" and np.isfinite(first.seconds) and first.gap <= eps
    for _, row in [*ours.iloc[:-1].iterrows(), *alone.iloc[1:].iterrows()]:
        assert row.status.startswith("stopped at") and "cap" in row.status and "once" not in row.status, row.to_dict()
        assert np.isnan(row.seconds) and np.isnan(row.spread) and row.gap > eps


def test_a_fixed_method_that_finished_far_behind_is_run_once(monkeypatch):
    """run_ours: a fixed method whose first run converged but took over OURS_REPEAT_REACH × the fastest fixed
    method's first run (here: made to take 0.5 s more, with the floor OURS_FLOOR_S at 0 and no cap) is not
    repeated: one call, its one run's seconds, no spread, and the row says so; nor is one whose first run ended
    at max_passes (here: given one pass), shown n/r; the fastest fixed method and auto run every round."""
    import time

    monkeypatch.setattr(race, "OURS_FLOOR_S", 0.0)
    monkeypatch.setattr(race, "OURS_REACH", 1e9)
    monkeypatch.setattr(race, "compiler_entries", lambda: 0)  # no timed run is taken for a compiling one
    X, y = dense(200, 10, 2)
    problem = race.make_problem(X, y, "squared", 1.0)
    eps = 1e-6 * abs(cdlab.reference_optimum(problem, tol=1e-10))
    calls = []
    real_solve = cdlab.solve
    for sampling in ("permutation", "uniform", "cyclic"):  # compiled (or loaded) before any timed run
        real_solve(problem, method="sdca", sampling=sampling, tol=eps, max_passes=2000)

    def solve(*args, **kwargs):
        calls.append(kwargs.get("sampling", kwargs["method"]))
        if kwargs.get("sampling") == "uniform":
            time.sleep(0.5)
        if kwargs.get("sampling") == "cyclic":
            kwargs["max_passes"] = 1
        return real_solve(*args, **kwargs)

    monkeypatch.setattr(race.cdlab, "solve", solve)
    runs = [("sdca", "permutation", {}), ("sdca", "uniform", {}), ("sdca", "cyclic", {})]
    ours = race.run_ours(problem, eps, 3, 2000, runs=runs)
    assert calls.count("permutation") == 3 and calls.count("uniform") == 1 and calls.count("auto") == 3
    assert calls.count("cyclic") == 1
    fast, slow, short, auto = ours.iloc[0], ours.iloc[1], ours.iloc[2], ours.iloc[3]
    assert short.status == "max_passes (run once)" and np.isnan(short.seconds)
    assert fast.status == "converged" and np.isfinite(fast.spread)
    assert slow.status.startswith("converged (run once") and slow.seconds > 0.5 and np.isnan(slow.spread)
    assert slow.gap <= eps and auto.solver == "auto" and np.isfinite(auto.spread)


def test_repeats_for_a_short_call(monkeypatch):
    """repeats_for: a call of SHORT_CALL_S or more keeps --repeats; a shorter one runs until its runs add up to
    about repeats × SHORT_CALL_S, never fewer than repeats nor more than SHORT_CALL_REPEATS."""
    monkeypatch.setattr(race, "SHORT_CALL_S", 0.2)
    monkeypatch.setattr(race, "SHORT_CALL_REPEATS", 15)
    assert race.repeats_for(0.2, 3) == 3 and race.repeats_for(5.0, 3) == 3
    assert race.repeats_for(0.11, 3) == 6 and race.repeats_for(0.07, 3) == 9  # ⌈0.6/0.11⌉, ⌈0.6/0.07⌉
    assert race.repeats_for(0.1, 3) == 6 and race.repeats_for(0.05, 3) == 12  # 3 × 0.2 is 0.6000000000000001
    assert race.repeats_for(0.001, 3) == 15 and race.repeats_for(0.0, 3) == 15
    assert race.repeats_for(0.09, 1) == 3 and race.repeats_for(0.01, 20) == 20


def test_short_calls_run_in_more_rounds(monkeypatch):
    """run_ours: with SHORT_CALL_S above a toy problem's millisecond calls, auto and the fast fixed method run
    SHORT_CALL_REPEATS rounds, interleaved; a method made to take SHORT_CALL_S runs --repeats times. A peer's
    short fit is timed SHORT_CALL_REPEATS times too."""
    import time

    monkeypatch.setattr(race, "SHORT_CALL_S", 0.5)  # 7 runs for a first run under 3 × 0.5 / 7 ≈ 0.21 s
    monkeypatch.setattr(race, "SHORT_CALL_REPEATS", 7)
    monkeypatch.setattr(race, "OURS_FLOOR_S", 600.0)  # no cap, no run-once
    monkeypatch.setattr(race, "compiler_entries", lambda: 0)
    X, y = dense(200, 10, 2)
    problem = race.make_problem(X, y, "squared", 1.0)
    p_star = cdlab.reference_optimum(problem, tol=1e-10)
    eps = 1e-6 * abs(p_star)
    real_solve = cdlab.solve
    for sampling in ("permutation", "uniform"):  # compiled (or loaded) before any timed run, auto's pick too
        real_solve(problem, method="sdca", sampling=sampling, tol=eps, max_passes=2000)
    real_solve(problem, method="auto", tol=eps, max_passes=2000)
    calls = []

    def solve(*args, **kwargs):
        calls.append(kwargs.get("sampling", kwargs["method"]))
        if kwargs.get("sampling") == "uniform":
            time.sleep(0.5)
        return real_solve(*args, **kwargs)

    monkeypatch.setattr(race.cdlab, "solve", solve)
    ours = race.run_ours(problem, eps, 3, 2000, runs=[("sdca", "permutation", {}), ("sdca", "uniform", {})])
    assert calls.count("permutation") == 7 and calls.count("auto") == 7 and calls.count("uniform") == 3
    assert calls[:3] == ["auto", "permutation", "uniform"] and calls[-2:] == ["auto", "permutation"]
    assert (ours.status == "converged").all() and (ours.gap <= eps).all()
    fits = []
    build = counted_ridge(fits)
    row = race.run_peer("ridge", build, problem, X, p_star + eps, 3, 5.0)
    assert np.isfinite(row["seconds"]) and row["note"] == ""
    assert fits == [race.PEER_TOLS[0]] * (1 + 7)  # the loosest tol reaches the target (a direct solve), then 7 timed


def test_no_runs_give_no_rows():
    """run_ours with no runs (race_case's n_jobs=2 rerun when no parallel method is near the best) gives an empty
    table, not an error."""
    X, y = dense(60, 8, 0)
    problem = race.make_problem(X, y, "hinge", 1.0)
    assert race.run_ours(problem, 1e-6, 3, 100, with_auto=False, runs=[]).empty


def test_a_run_that_entered_the_compiler_is_run_again_and_not_counted(monkeypatch):
    """run_ours: a timed run during which numba's compiler was entered (here: made to look so, and to take
    0.3 s more) is run again and its seconds are not kept. SDCA "compiles" on its first call only: 3 calls
    for 2 repeats, fast seconds, a clean status. Newton "compiles" on every call of the first round: it is
    run COMPILED_RERUNS + 1 times there, the last run's seconds are kept, and the row says so although the
    second round ran clean."""
    import time

    X, y = dense(200, 10, 2)
    problem = race.make_problem(X, y, "squared", 1.0)
    eps = 1e-6 * abs(cdlab.reference_optimum(problem, tol=1e-10))
    calls, entries = [], [0]
    real_solve = cdlab.solve

    def solve(*args, **kwargs):
        calls.append(kwargs["method"])
        first_round = kwargs["method"] == "newton" and len([c for c in calls if c == "newton"]) <= race.COMPILED_RERUNS + 1
        if first_round or calls.count(kwargs["method"]) == 1:
            entries[0] += 1  # as numba's compiler_lock event would count
            time.sleep(0.3)
        return real_solve(*args, **kwargs)

    monkeypatch.setattr(race.cdlab, "solve", solve)
    monkeypatch.setattr(race, "compiler_entries", lambda: entries[0])
    runs = [("sdca", "permutation", {}), ("newton", "uniform", {})]
    ours = race.run_ours(problem, eps, 2, 2000, runs=runs, with_auto=False)
    assert calls.count("sdca") == 3  # 2 repeats + the compiled first call run again
    assert calls.count("newton") == race.COMPILED_RERUNS + 1 + 1
    sdca, newton = ours.iloc[0], ours.iloc[1]
    assert sdca.status == "converged" and sdca.seconds < 0.3 and sdca.spread < 1.0
    assert newton.status == "converged (compiled in a timed run)" and np.isfinite(newton.seconds)


@pytest.mark.parametrize("loss, lam_factor", [("logistic", 1.0), ("logistic", 0.01), ("squared", 0.01)])
def test_a_smooth_loss_on_large_data_takes_p_star_from_newton_certified_alike(monkeypatch, loss, lam_factor):
    """Beyond REFERENCE_NEWTON_NNZ a smooth loss's P* is Newton's, certified to REFERENCE_TOL·|P*| as SDCA's is:
    both within that of each other; a first run whose gap is above REFERENCE_TOL·P is refined by a second at
    REFERENCE_TOL·D of the first; the hinge loss still takes SDCA's."""
    X, y = dense(300, 20, 1)
    problem = race.make_problem(X, y, loss, lam_factor)
    by_sdca = race.certified_p_star(problem)
    solve = cdlab.solve
    calls = []

    def newton(p, method, loosen=1.0, **kw):  # ``loosen``: the first call's tol times this
        calls.append((method, kw["tol"]))
        return solve(p, method, **{**kw, "tol": kw["tol"] * (loosen if len(calls) == 1 else 1.0)})

    monkeypatch.setattr(race, "REFERENCE_NEWTON_NNZ", 0)
    monkeypatch.setattr(race.cdlab, "solve", newton)
    by_newton = race.certified_p_star(problem)
    assert calls and {m for m, _ in calls} == {"newton"}
    assert calls[0][1] == pytest.approx(race.REFERENCE_TOL * problem.primal(np.zeros(problem.n_features)))
    assert abs(by_newton - by_sdca) <= 2 * race.REFERENCE_TOL * abs(by_sdca)
    # a first run certified only to 1e-3·P(0): the second, at REFERENCE_TOL·D of the first, certifies
    calls.clear()
    first = solve(problem, "newton", tol=1e-3 * problem.primal(np.zeros(problem.n_features)))
    assert first.trace.gap.iloc[-1] > race.REFERENCE_TOL * abs(by_sdca)  # the refinement is needed
    monkeypatch.setattr(race.cdlab, "solve", lambda p, method, **kw: newton(p, method, loosen=1e6, **kw))
    refined = race.certified_p_star(problem)
    assert len(calls) == 2 and calls[1][1] <= race.REFERENCE_TOL * by_sdca
    assert abs(refined - by_sdca) <= 2 * race.REFERENCE_TOL * abs(by_sdca)
    calls.clear()
    race.certified_p_star(race.make_problem(X, y, "hinge", lam_factor))
    assert not calls  # SDCA's reference_optimum, which does not call race.cdlab.solve


def test_a_peer_far_behind_is_timed_once(monkeypatch):
    """run_peer: a fit at the target's tol that took at least OURS_FLOOR_S and over OURS_REPEAT_REACH × the
    reference is timed once and says so; within reach, or under the floor, it is timed ``repeats`` times. In a
    race, the reference starts at OURS_REPEAT_REACH × cdlab's fastest fixed method and falls to each faster peer."""
    X, y = dense(200, 10, 2)
    problem = race.make_problem(X, y, "squared", 1.0)
    p_star = cdlab.reference_optimum(problem, tol=1e-10)
    target = p_star + 1e-6 * abs(p_star)
    fits = []
    build = counted_ridge(fits)
    monkeypatch.setattr(race, "OURS_FLOOR_S", 0.0)
    row = race.run_peer("ridge", build, problem, X, target, 3, 5.0, reference=1e-12)
    assert len(fits) == 1 + 1 and row["note"].startswith("run once: over 2×") and np.isnan(row["spread"])
    assert np.isfinite(row["seconds"]) and row["primal"] <= target
    fits.clear()
    row = race.run_peer("ridge", build, problem, X, target, 3, 5.0, reference=60.0)
    assert len(fits) == 1 + 3 and row["note"] == "" and np.isfinite(row["spread"])
    monkeypatch.setattr(race, "OURS_FLOOR_S", 60.0)
    fits.clear()
    race.run_peer("ridge", build, problem, X, target, 3, 5.0, reference=1e-12)
    assert len(fits) == 1 + 3


def test_peer_fits_alternate_with_cdlabs_best_call(monkeypatch):
    """timed_pairs runs the peer's fit and each partner call in turn and gives the least partner median and its
    label; best_call is the fixed method a label names, with n_jobs=2 for the two-thread table's "… n_jobs=2"."""
    log = []
    clock = [0.0]
    monkeypatch.setattr(race, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))

    def call(name, seconds, result=None):
        def run():
            log.append(name)
            clock[0] += seconds
            return result
        return run
    out = race.timed_pairs(call("peer", 1.0, "fit"), [("two", call("two", 0.3), 2), ("one", call("one", 0.2), 1)], 3)
    assert log == ["peer", "two", "two", "one"] * 3 and out[2] == "fit"
    assert out[0] == pytest.approx(1.0) and out[1] == pytest.approx(0.0, abs=1e-12)
    assert out[4:6] == (pytest.approx(0.2), "one") and out[6] == {"two": pytest.approx(0.3), "one": pytest.approx(0.2)}
    # a partner none of whose runs certified is not counted: the other's median is
    out = race.timed_pairs(call("peer", 1.0), [("one", call("one", 0.1, False), 1), ("two", call("two", 0.3), 1)], 2)
    assert out[4:6] == (pytest.approx(0.3), "two") and np.isnan(out[6]["one"])
    assert np.isnan(race.timed_pairs(call("peer", 1.0), [("one", call("one", 0.1, False), 1)], 2)[4])
    assert race.timed_pairs(call("peer", 1.0), (), 2)[4:] == (pytest.approx(np.nan, nan_ok=True), "", {})
    assert len(race.timed(call("peer", 1.0), 2)) == 4
    seen = []

    class Converged:
        status = "converged"
    monkeypatch.setattr(race.cdlab, "solve", lambda problem, **kwargs: seen.append(kwargs) or Converged())
    assert race.best_call("problem", "sdca permutation shrinking=True", 1e-3, 10)() is True
    race.best_call("problem", "sdca permutation n_jobs=2", 1e-3, 10)()
    assert seen[0] == dict(method="sdca", sampling="permutation", tol=1e-3, max_passes=10, seed=0, n_jobs=1,
                           shrinking=True)
    assert seen[1] == dict(method="sdca", sampling="permutation", tol=1e-3, max_passes=10, seed=0, n_jobs=2)
    assert race.best_call("problem", None, 1e-3, 10) is None and race.best_call("problem", "n/r", 1e-3, 10) is None


def test_a_peers_reference_is_the_fastest_of_its_thread_count(monkeypatch):
    """race_case's run-once reference for a peer: OURS_REPEAT_REACH × cdlab's best of the table's thread count,
    then the fastest peer of that thread count that reached the target; a peer above it is not a reference."""
    seen = []

    def run_peer(name, build, problem, X, target, repeats, cap, threads=1, tols=None, reference=None, partners=()):
        seen.append((name, threads, reference))
        seconds = {("a", 1): 5.0, ("a", 2): 0.5, ("b", 1): 3.0, ("b", 2): 7.0, ("c", 1): 1.0, ("d", 1): 4.0}[name, threads]
        return dict(peer=name, threads=threads, seconds=seconds, spread=0.0, tol=1e-3,
                    primal=target + (1.0 if name == "c" else -1e-12), mb=0.0, note="", **{"cdlab s": 1.0})

    monkeypatch.setattr(race, "run_peer", run_peer)
    monkeypatch.setattr(race, "OURS_REPEAT_REACH", 1e9)  # cdlab's reference far above every peer's seconds
    monkeypatch.setitem(race.PEERS, "squared", [("a", None, True, None), ("b", None, True, None),
                                                 ("c", None, False, None), ("d", None, False, None)])
    case = race.Case("toy", lambda: dense(60, 8, 0), "squared", 1.0)
    out = race.race_case(case, repeats=1, threads=(1, 2), cap=5.0, verbose=False)
    best_s, best2_s = out["info"]["best_s"], out["info"]["best2_s"]
    # c (1 s) is above the target: not a reference; a's 0.5 s on two threads is not the one-thread table's
    assert seen == [("a", 1, 1e9 * best_s), ("a", 2, 1e9 * best2_s), ("b", 1, 5.0), ("b", 2, 0.5), ("c", 1, 3.0),
                    ("d", 1, 3.0)]


@pytest.mark.parametrize("two_thread_wins", [False, True])
def test_two_thread_peers_alternate_with_both_of_cdlabs_bests(monkeypatch, two_thread_wins):
    """A one-thread peer alternates with cdlab's one-thread best; a two-thread peer, where n_jobs=2 won in
    isolation, with that run first and then the one-thread best, each call run repeats_for its own seconds; the
    ratio table divides by the faster paired median and names its call (PAIRED_CALL)."""
    seen = {}

    def run_peer(name, build, problem, X, target, repeats, cap, threads=1, tols=None, reference=None, partners=()):
        seen[threads] = [(label, runs) for label, _, runs in partners]
        by_call = {label: 0.1 if label == out_info["best"] else 0.3 for label, _, _ in partners}
        call = min(by_call, key=by_call.get)
        return dict(peer=name, threads=threads, seconds=1.0, spread=0.0, tol=1e-3, primal=target - 1e-12, mb=0.0,
                    note="", **{"cdlab s": by_call[call], "cdlab call": call, "cdlab s by call": by_call})

    real_run_ours = race.run_ours
    out_info = {}

    def run_ours(problem, eps, repeats, max_passes, with_auto=True, n_jobs=1, runs=None):
        out = real_run_ours(problem, eps, repeats, max_passes, with_auto=with_auto, n_jobs=n_jobs, runs=runs)
        if n_jobs == 1:
            fixed = out[out.solver != "auto"]
            out_info["best"] = fixed.loc[fixed.seconds.idxmin(), "solver"]
        else:  # the two-thread rerun far faster, or far slower, than every one-thread run
            out["seconds"] = 1e-9 if two_thread_wins else 1e9
        return out

    monkeypatch.setattr(race, "run_peer", run_peer)
    monkeypatch.setattr(race, "run_ours", run_ours)
    monkeypatch.setattr(race, "TWO_THREAD_REACH", np.inf)  # a parallel method always reruns on n_jobs=2
    monkeypatch.setattr(race, "OURS_FLOOR_S", 600.0)  # no method is stopped or run once
    monkeypatch.setattr(race, "SHORT_CALL_S", 0.2)  # partner runs by seconds: 1e-9 s runs the most
    monkeypatch.setitem(race.PEERS, "logistic", [("a", None, True, None)])
    case = race.Case("toy", lambda: dense(60, 8, 0), "logistic", 1.0)
    out = race.race_case(case, repeats=1, threads=(1, 2), cap=5.0, verbose=False)
    info = out["info"]
    assert info["best"] == out_info["best"] and (info["best2"] != info["best"]) == two_thread_wins
    runs = {label: race.repeats_for(seconds, 1) for label, seconds in ((info["best"], info["best_s"]),
                                                                        (info["best2"], info["best2_s"]))}
    if two_thread_wins:
        assert runs[info["best2"]] == race.SHORT_CALL_REPEATS
    assert seen[1] == [(info["best"], runs[info["best"]])]
    assert seen[2] == ([(info["best2"], runs[info["best2"]])] if two_thread_wins else []) + [
        (info["best"], runs[info["best"]])]
    two = race.ratio_table({case.label: out}, threads=2)
    assert two[race.PAIRED_CALL].iloc[0] == info["best"] and two[race.PAIRED].iloc[0] == pytest.approx(0.1)
    assert two["best peer ÷ cdlab"].iloc[0] == pytest.approx(10.0)


def test_ratio_table_names_the_paired_call_of_rows_saved_before_it():
    """Rows saved without "cdlab call": the table's best is the paired call where they have paired seconds, and
    "not paired" where they have none (the table's own "cdlab s" is then the denominator)."""
    info = dict(best="sdca permutation", best_s=0.5, best2="sdca permutation n_jobs=2", best2_s=0.25)
    ours = pd.DataFrame({"solver": ["auto"], "seconds": [0.5]})
    for paired, call, against in ((0.4, "sdca permutation n_jobs=2", 0.4), (np.nan, "not paired", 0.25)):
        peers = pd.DataFrame({"peer": ["p"], "threads": [2], "seconds": [1.0], "cdlab s": [paired]})
        table = race.ratio_table({"toy": dict(info=info, peers=peers, ours=ours)}, threads=2)
        assert table[race.PAIRED_CALL].iloc[0] == call
        assert table["best peer ÷ cdlab"].iloc[0] == pytest.approx(1.0 / against)
