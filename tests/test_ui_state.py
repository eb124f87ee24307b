"""The dashboard's state object, headless: settings -> jobs -> traces."""
import threading

import numpy as np
import pandas as pd
import pytest

import cdlab
from cdlab.data import list_datasets
from cdlab.ui import datasource, presets, runner
from cdlab.ui.cache import LRUCache, check_key
from cdlab.ui.runner import BOTH, SQUARED_NORM, plan, sampling_choices
from cdlab.ui.state import RENAMED_KEYS, SYNCED, Experiment, current_link, sync_link

SMALL = dict(source="synthetic", n_samples=120, n_features=12, density=1.0, normalize="mean", max_passes=20.0,
             log10_tol=-8.0)


def small(**extra):
    return Experiment(**{**SMALL, **extra})


def direct(state, run, seed=None):
    """The same run through cdlab.solve, outside the dashboard (on the budget's first seed by default)."""
    a = state.analysis
    from cdlab.ui.runner import sampling_argument
    b = state.budget
    return cdlab.solve(a.problem, method=run.method, sampling=sampling_argument(run, a.problem),
                       max_passes=b.max_passes, tol=b.tol, seed=b.seed if seed is None else seed,
                       eval_every=b.eval_every, **run.options)


def seed_part(trace, seed):
    return trace[trace.seed == seed].drop(columns="seed").reset_index(drop=True)


def test_methods_and_sources_are_discovered():
    s = Experiment()
    assert s.param.methods.objects == sorted(cdlab.METHODS)
    names = list(s.param.source.names.values())
    assert names[0] == datasource.SYNTHETIC and names[-1] == datasource.UPLOAD
    assert set(list_datasets()) <= set(names)
    for m in cdlab.METHODS:
        spec = cdlab.METHODS[m]
        for choice in sampling_choices(m):
            parts = ("uniform", "importance") if choice == BOTH else (choice,)
            for part in parts:
                assert part in spec.samplings or (part == SQUARED_NORM and "custom" in spec.samplings)
    # each name one meaning: the page's p ∝ ‖·‖² is not SPDC's Algorithm 2 ("weighted")
    assert "weighted" in sampling_choices("spdc") and SQUARED_NORM not in sampling_choices("spdc")
    assert SQUARED_NORM in sampling_choices("sdca") and "weighted" not in sampling_choices("sdca")


def test_run_matches_direct_solve_and_certifies():
    s = small(methods=["sdca", "dual_cd"], samplings={"sdca": "uniform", "dual_cd": BOTH})
    assert s.run(timeout=120)
    assert s.error == "" and s.phase == "finished" and s.progress == 1.0
    runs = s.runs()
    assert [r.label for r in runs] == ["sdca (uniform)", "dual_cd (uniform)", "dual_cd (importance)"]
    assert s.budget.seed_list == (0, 1, 2)  # three seeds by default
    for run in runs:
        assert s.run_status[run.label] == "converged"
        assert sorted(s.traces[run.label].seed.unique()) == [0, 1, 2]
        for seed in s.budget.seed_list:  # each seed's curve is cdlab.solve's on that seed
            trace = seed_part(s.traces[run.label], seed)
            assert trace.gap.iloc[-1] <= s.budget.tol
            assert np.all(trace.dual <= trace.primal + 1e-12)
            ref = direct(s, run, seed).trace
            cols = [c for c in ref.columns if c != "time"]
            pd.testing.assert_frame_equal(trace[cols], ref[cols])


def test_partial_traces_stream_before_the_run_ends():
    s = small(methods=["sdca"], samplings={"sdca": "uniform"}, log10_tol=-13.0, max_passes=60.0, auto_run=False)
    s.start(solve=False)
    assert s.wait(60)
    # warm kernels: a run that compiles is re-timed, and its rows restart (see the compile tests below)
    cdlab.solve(s.analysis.problem, method="sdca", max_passes=1.0)
    seen = []
    apply = s._apply
    messages = set()

    def record(live):
        apply(live)
        seen.append({k: len(v) for k, v in s.traces.items()})
        messages.add(s.run_message.get("sdca (uniform)", ""))
    s._make_publisher = lambda: record
    import cdlab.ui.runner as runner
    old, runner.PUBLISH_EVERY = runner.PUBLISH_EVERY, 0.0
    try:
        assert s.run(timeout=120)
    finally:
        runner.PUBLISH_EVERY = old
    final = len(s.traces["sdca (uniform)"])
    lengths = [d.get("sdca (uniform)", 0) for d in seen]
    assert final > 10
    assert any(0 < k < final for k in lengths)  # partial curves were published
    assert lengths == sorted(lengths)  # and they only grow
    assert {"1 of 3 seeds done", "2 of 3 seeds done"} <= messages  # the status line counts the seeds


def test_cancel_stops_a_long_run():
    # λ = 1e-9 and tol 1e-13: SDCA cannot converge within the budget, so only the cancel can end the run early
    s = small(n_samples=3000, n_features=200, methods=["sdca"], samplings={"sdca": "uniform"}, log10_tol=-13.0,
              lam_rule="manual", log10_lam=-9.0, max_passes=2000.0, max_time=600.0, auto_run=False)
    s.start()
    got_rows = threading.Event()
    for _ in range(600):
        if s._worker.live.rows.get("sdca (uniform)"):
            got_rows.set()
            break
        s.wait(0.1)
    assert got_rows.is_set()
    s.cancel()
    assert s.wait(timeout=60)
    assert s.run_status["sdca (uniform)"] == "cancelled"
    assert s.phase == "cancelled" and not s.running
    assert s.traces["sdca (uniform)"].passes.iloc[-1] < 2000


def test_incompatible_choice_is_explained_not_raised():
    s = small(loss="hinge", methods=["primal_cd", "sdca"], samplings={"primal_cd": "uniform", "sdca": "uniform"})
    assert s.run(timeout=120)
    assert s.run_status["primal_cd (uniform)"] == "refused"
    assert "smoothed_hinge" in s.run_message["primal_cd (uniform)"]
    sdca = s.traces["sdca (uniform)"]  # the others still run
    assert s.run_status["sdca (uniform)"] in ("converged", "max_passes")
    assert sdca.gap.iloc[-1] < 1e-2 * sdca.gap.iloc[0]
    assert "primal_cd (uniform)" not in s.traces


def test_l1_refused_only_where_unsupported():
    no_l1 = sorted(m for m, spec in cdlab.METHODS.items() if not spec.supports_l1 and "uniform" in spec.samplings)
    assert no_l1, "the baselines (sgd, svrg, ...) have no l1 support"
    m = no_l1[0]
    s = small(l1=1e-3, methods=["sdca", m], samplings={"sdca": "uniform", m: "uniform"}, auto_run=False)
    s.start(solve=False)
    assert s.wait(60)
    assert "l1" in s.analysis.refusals[f"{m} (uniform)"]
    assert "sdca (uniform)" not in s.analysis.refusals


def test_bad_batch_size_is_explained():
    serial = next(m for m, spec in sorted(cdlab.METHODS.items()) if not spec.batch)
    s = small(methods=[serial], samplings={serial: "uniform"}, batch_sizes={serial: 4}, auto_run=False)
    s.start(solve=False)
    assert s.wait(60)
    assert "mini-batch" in s.analysis.refusals[f"{serial} (uniform, m=4)"]


def test_results_are_cached_on_primitive_keys():
    s = small(methods=["sdca"], samplings={"sdca": "permutation"}, data_seed=7)
    assert s.run(timeout=120)
    first = s.traces["sdca (permutation)"]
    assert s.cached == []
    assert s.run(timeout=120)
    assert s.cached == ["sdca (permutation)"]
    pd.testing.assert_frame_equal(first, s.traces["sdca (permutation)"])
    s.seed = 1  # seeds 1, 2, 3: two are replayed, seed 3 is a new run
    assert s.wait(120)
    assert s.cached == []
    for seed in (1, 2):
        pd.testing.assert_frame_equal(seed_part(first, seed), seed_part(s.traces["sdca (permutation)"], seed))


def compiling_solve(monkeypatch, every_call):
    """Replace the solver behind cdlab.timing.warm_solve by one that compiles a fresh numba function
    in the solving thread first (on its first call, or on every call): a cold kernel, simulated."""
    import numba

    import cdlab.timing as timing
    calls = []
    real = timing.solve

    def solve(problem, **kwargs):
        calls.append(kwargs["seed"])
        if every_call or len(calls) == 1:
            numba.njit(lambda v: v + 1.0)(1.0)  # a new dispatcher: numba compiles it now, in this thread
        return real(problem, **kwargs)
    monkeypatch.setattr(timing, "solve", solve)
    return calls


def test_a_run_that_compiled_is_retimed_warm_and_cached_warm_only(monkeypatch):
    from cdlab.ui import runner
    calls = compiling_solve(monkeypatch, every_call=False)
    s = small(methods=["sdca"], samplings={"sdca": "uniform"}, data_seed=31, seeds=2, auto_run=False)
    assert s.run(timeout=120) and s.run_status["sdca (uniform)"] == "converged"
    assert calls == [0, 0, 1]  # seed 0 compiled, so it ran again; seed 1 was warm
    run = s.runs()[0]
    for seed in (0, 1):
        trace, status, _ = runner._RESULTS.get(runner.run_key(s.analysis.problem_key, run, s.budget, seed))
        assert trace.attrs["compiled"] is False and status == "converged"
    assert trace.attrs["retimed"] is False
    assert "compilation" not in s.run_message["sdca (uniform)"]


def test_a_run_that_keeps_compiling_is_marked_and_never_cached(monkeypatch):
    from cdlab.ui import runner
    calls = compiling_solve(monkeypatch, every_call=True)
    s = small(methods=["sdca"], samplings={"sdca": "uniform"}, data_seed=32, seeds=1, auto_run=False)
    assert s.run(timeout=120)
    assert calls == [0, 0]
    assert "include numba compilation" in s.run_message["sdca (uniform)"]
    assert runner._RESULTS.get(runner.run_key(s.analysis.problem_key, s.runs()[0], s.budget, 0)) is None
    assert s.run(timeout=120) and s.cached == [] and calls == [0, 0, 0, 0]  # solved again, not replayed


def test_warm_solve_reports_compilation():
    import numba

    from cdlab.timing import compiler_entries, warm_solve
    problem = cdlab.Problem(np.eye(3), [1.0, -1.0, 1.0], loss="squared", lam=0.1)
    before = compiler_entries()
    numba.njit(lambda v: 2.0 * v)(1.0)
    assert compiler_entries() > before
    res = warm_solve(problem, method="sdca", max_passes=2, tol=0.0)
    warm = warm_solve(problem, method="sdca", max_passes=2, tol=0.0)
    assert warm.trace.attrs["compiled"] is False and warm.trace.attrs["retimed"] is False
    cols = ["steps", "passes", "gap"]
    pd.testing.assert_frame_equal(res.trace[cols], warm.trace[cols])


def test_cache_refuses_array_keys():
    with pytest.raises(ValueError, match="tuples of"):
        check_key(("a", np.zeros(3)))
    cache = LRUCache(2)
    calls = []
    for key in [("a",), ("a",), ("b",), ("c",), ("a",)]:
        cache.get_or_compute(key, lambda: calls.append(1) or len(calls))
    assert len(calls) == 4  # ("a",) was evicted by b, c


def test_two_sessions_run_at_once_without_interfering():
    a = small(data_seed=1, methods=["sdca"], samplings={"sdca": "uniform"}, auto_run=False)
    b = small(data_seed=2, loss="squared", methods=["dual_cd"], samplings={"dual_cd": "importance"}, auto_run=False)
    a.start()
    b.start()
    assert a.wait(120) and b.wait(120)
    assert list(a.traces) == ["sdca (uniform)"] and list(b.traces) == ["dual_cd (importance)"]
    assert a.analysis.problem.loss == "logistic" and b.analysis.problem.loss == "squared"
    for s in (a, b):
        run = s.runs()[0]
        ref = direct(s, run).trace
        np.testing.assert_array_equal(seed_part(s.traces[run.label], 0).gap.to_numpy(), ref.gap.to_numpy())


def test_lambda_rule_and_manual_lambda():
    s = small(auto_run=False)
    s.start(solve=False)
    assert s.wait(60)
    assert s.analysis.problem.lam == pytest.approx(1 / 120)
    assert s.log10_lam == round(np.log10(1 / 120), 2)  # the slider shows the λ in use
    s.param.update(lam_rule="manual", log10_lam=-2.5)
    assert s.wait(60)
    assert s.analysis.problem.lam == pytest.approx(10 ** -2.5)


def test_every_preset_has_its_data_here():
    assert presets.available() == list(presets.PRESETS)
    assert Experiment().param.preset.objects == ["custom", *presets.PRESETS]


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_presets_apply_and_analyse(name):
    s = Experiment(preset=name, auto_run=False)
    values = presets.values_of(name)
    for key, value in values.items():
        assert getattr(s, key) == value
    s.start(solve=False)
    assert s.wait(120)
    assert s.error == "", s.error
    assert s.analysis is not None and set(s.analysis.bounds) | set(s.analysis.refusals) == {r.label for r in s.runs()}


def test_faceoff_presets_predict_their_side():
    expected = {"dense n≫d (dual wins)": "dual_cd", "dense d≫n, small λ (primal wins)": "primal_cd",
                "Theorem 3 extreme: C_P/C_D → n": "dual_cd", "Theorem 3 extreme: C_P/C_D → 1/d": "primal_cd"}
    for name, method in expected.items():
        s = Experiment(preset=name, auto_run=False)
        s.start(solve=False)
        assert s.wait(120)
        assert s.analysis.faceoff.prediction["method"] == method
        if "extreme" in name:  # near the ends of Theorem 3's range
            t3 = s.analysis.faceoff.theorem3
            ratio, n, d = t3["ratio"], s.n_samples, s.n_features
            assert (ratio > 0.5 * n) if name.endswith("n") else (ratio < 2.0 / d)


@pytest.mark.parametrize("name,side", [("dense n≫d (dual wins)", "dual"),
                                       ("dense d≫n, small λ (primal wins)", "primal")])
def test_dense_presets_are_won_by_the_side_their_name_says(name, side):
    from cdlab.ui.views.faceoff import measured_winner
    s = Experiment(preset=name, auto_run=False)
    assert s.run(timeout=300)
    won = measured_winner(s.traces, s.run_status, s.target, s.runs())
    assert won is not None and won["side"] == side
    loser = [r for r in s.runs() if r.method != won["method"]]
    from cdlab.ui.views.results import to_target
    for run in loser:  # by a clear margin: the other side needs ≥ 2× the passes, or never gets there
        hit = to_target(s.traces[run.label], s.target, ("passes",))
        assert hit is None or hit["passes"] >= 2 * won["passes"]


def test_binary_extreme_preset_is_binary_and_extreme():
    from cdlab.theory import binary_extremes
    s = Experiment(preset="binary extreme: max C_P (Figure 1)", auto_run=False)
    s.start(solve=False)
    assert s.wait(120)
    p = s.analysis.problem
    assert s.analysis.binary and p.nnz == s.omega
    assert s.analysis.faceoff.C_P == pytest.approx(binary_extremes(p.n_samples, p.n_features, p.nnz)["max_C_P"])


def test_upload_good_and_bad_files(tmp_path):
    rng = np.random.default_rng(3)
    lines = []
    for i in range(40):
        feats = " ".join(f"{j + 1}:{rng.standard_normal():.6f}" for j in sorted(rng.choice(8, 3, replace=False)))
        lines.append(f"{1 if i % 2 else 0} {feats}")
    s = small(methods=["sdca"], samplings={"sdca": "uniform"}, auto_run=False)
    assert s.upload(("\n".join(lines) + "\n").encode(), "mine.svm")
    assert s.source == datasource.UPLOAD and s.upload_hash
    assert s.wait(60)
    assert s.analysis.problem.shape == (40, 8)
    assert set(np.unique(s.analysis.problem.y)) == {-1.0, 1.0} and "mapped" in s.analysis.note
    before = (s.source, s.upload_hash)
    assert not s.upload(b"1 1:0.5 2:abc\n-1 3:1\n", "broken.svm")
    assert "broken.svm" in s.upload_message and "line 1" in s.upload_message
    assert (s.source, s.upload_hash) == before  # the session goes on with the good data
    assert not s.upload(b"x" * (datasource.UPLOAD_LIMIT_BYTES + 1), "huge.svm")
    assert f"{datasource.UPLOAD_LIMIT_MB} MB" in s.upload_message


def test_bad_synthetic_settings_show_an_error():
    s = small(auto_run=False)
    s.start(solve=False)
    assert s.wait(60) and s.analysis is not None
    s.density = 1e-3  # fewer nonzeros than rows: the generator refuses
    assert s.wait(60)
    assert "density" in s.error and s.phase == "error"
    assert s.analysis is None  # no face-off of the previous data under the new settings
    s.density = 0.5
    assert s.wait(60)
    assert s.error == "" and s.analysis.problem.nnz == round(0.5 * 120 * 12)


def test_synthetic_data_too_large_for_the_page_is_refused_at_once():
    """n and d go to 200,000 each: dense, that is 4·10¹⁰ nonzeros (a MemoryError after minutes of
    swapping on a shared server). Refused before any job, and nothing of the previous data stays."""
    s = small(auto_run=False)
    assert s.run(60) and s.traces and s.analysis is not None
    s.param.update(max_passes=2000.0, log10_tol=-13.0)
    s.start()  # a long run, still going when the settings turn bad
    jobs = s.jobs
    s.param.update(n_samples=200_000, n_features=200_000)
    s.start()
    assert s.jobs == jobs and not s.running and s.phase == "error"
    assert s.wait(60)  # the long run was cancelled, and what it published last is ignored
    assert s.phase == "error" and s.analysis is None and s.traces == {}
    assert f"at most {datasource.MAX_NNZ:,}" in s.error and "40,000,000,000 nonzeros" in s.error
    assert s.analysis is None and s.traces == {} and s.run_status == {}
    s.density = 1e-4  # 4,000,000 nonzeros: allowed (no job run here: the key is what is checked)
    assert s.data_key()[0] == "synthetic"
    with pytest.raises(ValueError, match="ω = 20,000,000"):
        datasource.data_key("binary extreme: max C_P", n_samples=10_000, n_features=10_000, density=1.0,
                            row_skew=0.0, col_skew=0.0, value_dist="gaussian", normalize="none", data_seed=0,
                            omega=20_000_000)


def test_a_preset_name_stays_only_while_its_settings_do():
    s = Experiment(preset="dense n≫d (dual wins)", auto_run=False)
    assert s.preset == "dense n≫d (dual wins)"
    s.preset = "sparse news-like skew"
    assert s.wait(60) and s.preset == "sparse news-like skew"
    s.loss = "squared"
    assert s.preset == "custom"
    assert s.wait(60) and s.n_features == 4000  # the settings stay


def test_url_parameters_round_trip():
    s = Experiment(preset="sparse news-like skew", auto_run=False)
    t = Experiment(auto_run=False)
    with t.quiet():  # as a link is applied: no job (whose analysis would show its λ on the slider) meanwhile
        for name in SYNCED:
            p = s.param[name]
            text = p.serialize(getattr(s, name))
            t.param.update(**{name: p.deserialize(text) if not isinstance(text, str) or name not in (
                "source", "value_dist", "normalize", "loss", "lam_rule", "xaxis", "yaxis", "upload_hash")
                else text})
    assert t.settings() == s.settings() and t.runs() == s.runs()
    assert t.wait(120) and s.wait(120)


def test_a_link_with_the_old_key_spellings_still_restores_its_settings():
    """normalise= and max_seconds= (the keys before the rename) are read as normalize= and max_time=,
    through the page's own link sync (panel's Location, headless); the URL then shows the new keys."""
    from panel.io.location import Location

    assert set(RENAMED_KEYS.values()) <= set(SYNCED) and not set(RENAMED_KEYS) & set(SYNCED)
    defaults = Experiment(auto_run=False)
    old = "?n_samples=150&normalise=rows&max_seconds=12.5&samplings=%7B%22sdca%22%3A+%22uniform%22%7D"
    assert (defaults.normalize, defaults.max_time) != ("rows", 12.5)  # the link changes both
    for search, normalize in ((old, "rows"), (old + "&normalize=none", "none")):  # a new key beats its old one
        location, s = Location(search=search), Experiment(auto_run=False)
        s.hold()
        given = sync_link(location, s)
        assert given == {"n_samples", "normalize", "max_time", "samplings"}
        assert (s.n_samples, s.normalize, s.max_time, s.samplings) == (150, normalize, 12.5, {"sdca": "uniform"})
        assert "normalise" not in location.query_params and "max_seconds" not in location.query_params
        assert location.query_params["max_time"] == 12.5 and location.query_params["normalize"] == normalize
    assert current_link("") == "" and current_link("?loss=hinge") == "?loss=hinge"
    assert current_link(old).startswith("?n_samples=150&normalize=rows&max_time=12.5&samplings=")


def test_a_link_with_the_page_sampling_weighted_reads_it_as_squared_norm_with_a_warning():
    """The page's p ∝ ‖·‖² was "weighted" before it was renamed squared_norm: a link with the old name
    restores the new one and warns; SPDC's own "weighted" (its Algorithm 2) is kept, without a warning."""
    from panel.io.location import Location
    import json
    import urllib.parse
    import warnings

    old = {"sdca": "weighted", "spdc": "weighted", "dual_cd": "uniform"}
    search = "?" + urllib.parse.urlencode({"methods": json.dumps(sorted(old)), "samplings": json.dumps(old)})
    location, s = Location(search=search), Experiment(auto_run=False)
    s.hold()
    with pytest.warns(FutureWarning, match="'weighted' for 'sdca' is now called 'squared_norm'") as caught:
        sync_link(location, s)
    assert len([w for w in caught if issubclass(w.category, FutureWarning)]) == 1  # sdca's only
    assert s.samplings == {"sdca": SQUARED_NORM, "spdc": "weighted", "dual_cd": "uniform"}
    assert location.query_params["samplings"] == s.samplings  # the URL shows the new name
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        current = {"sdca": SQUARED_NORM, "spdc": "weighted"}
        assert current_link("?samplings=" + urllib.parse.quote(json.dumps(current))) == \
            "?" + urllib.parse.urlencode({"samplings": json.dumps(current)})


def test_plan_expands_both_samplings():
    runs = plan(["dual_cd", "sdca"], {"dual_cd": BOTH, "sdca": "cyclic"}, {"sdca": 1})
    assert [(r.method, r.sampling) for r in runs] == [("dual_cd", "uniform"), ("dual_cd", "importance"),
                                                       ("sdca", "cyclic")]


def test_every_method_runs_or_is_explained():
    """Each registered method, at each sampling the page offers, on a small smoothed-hinge
    problem: it runs and lowers its gap, or it is refused with a reason before any work."""
    from cdlab.ui.runner import RunSpec, check
    s = small(loss="smoothed_hinge", max_passes=5.0, auto_run=False)
    s.start(solve=False)
    assert s.wait(60)
    problem = s.analysis.problem
    for method in sorted(cdlab.METHODS):
        for sampling in sampling_choices(method):
            if sampling == BOTH:
                continue
            reason = check(RunSpec(method, sampling), problem)
            if reason is not None:
                assert method in reason or sampling in reason
                continue
            s.param.update(methods=[method], samplings={method: sampling})
            assert s.run(timeout=120), method
            label = f"{method} ({sampling})"
            trace = s.traces[label]
            assert s.run_status[label] in ("converged", "max_passes", "max_time"), (label, s.run_message)
            assert trace.gap.iloc[-1] < trace.gap.iloc[0], label


def test_the_page_refuses_newton_where_one_iteration_outlasts_a_cancel(monkeypatch):
    """A run stops only between steps: where one Newton iteration may take (its prediction × STEP_MODEL_SLACK)
    more than STEP_SECONDS the page
    refuses newton with the prediction and the way out, before any work; below it, newton runs."""
    import dataclasses

    from cdlab.solvers import newton
    from cdlab.ui import runner
    problem = cdlab.Problem(*cdlab.load_dataset("heart_scale"), loss="logistic", lam=1e-2)
    assert newton.iteration_ns(problem) * 1e-9 * runner.STEP_MODEL_SLACK < runner.STEP_SECONDS
    assert runner.check(runner.RunSpec("newton", "uniform"), problem) is None
    assert cdlab.METHODS["newton"].step_ns is newton.iteration_ns
    # 200 000 × 4096 at 10 M nonzeros, skewed rows
    asked = []

    def step_ns(p, options=None):
        asked.append(options)
        return 34e9

    monkeypatch.setitem(cdlab.METHODS, "newton", dataclasses.replace(cdlab.METHODS["newton"], step_ns=step_ns))
    run = runner.RunSpec("newton", "uniform")
    reason = runner.check(run, problem)
    assert asked == [run.options]  # the prediction is for the run's own options (newton's inner solver)
    assert "one step of 'newton' is predicted to take 34 s" in reason and "Cholesky" in reason and "sdca" in reason
    assert runner.check(runner.RunSpec("sdca", "uniform"), problem) is None


def test_fetchable_dataset_is_fetched_on_request_then_runs(tmp_path, monkeypatch):
    """A dataset fetched on first use is marked in the data menu, refused with the way out until
    fetched, fetched on request (progress, then a run); a failed fetch lands in the error."""
    import shutil

    from cdlab.data import DATASETS, shipped_dir
    from cdlab.data.registry import DatasetInfo

    monkeypatch.setenv("CDLAB_DATA_DIR", str(tmp_path / "home"))
    served = tmp_path / "served"
    served.mkdir()
    shutil.copy(shipped_dir() / "heart_scale.bz2", served / "toy.bz2")
    monkeypatch.setitem(DATASETS, "toy", DatasetInfo("toy", "toy.bz2", 270, 13, "heart_scale served", nnz=3378,
                                                     kind="fetch", url=(served / "toy.bz2").as_uri(),
                                                     download_mb=0.003))
    monkeypatch.setitem(DATASETS, "gone", DatasetInfo("gone", "gone.bz2", 1, 1, "nowhere", kind="fetch",
                                                      url=(served / "gone.bz2").as_uri()))
    s = small(methods=["sdca"], samplings={"sdca": "uniform"})
    assert s.param.source.names["toy (not here: fetch ≈ 0.003 MB)"] == "toy"
    s.source = "toy"
    assert "toy is not on this server yet: press “Fetch toy”" in s.error and s.analysis is None
    s.fetch_data().join(timeout=60)
    assert s.wait(timeout=120)
    assert s.error == "" and not s.fetching and s.fetch_progress == 1.0
    assert s.analysis.problem.n_samples == 270 and s.run_status["sdca (uniform)"] == "converged"
    assert "toy" in s.param.source.names and (tmp_path / "home" / "toy.bz2").is_file()
    assert s.fetch_data() is None  # nothing left to fetch

    s.source = "gone"
    s.fetch_data().join(timeout=60)
    assert "cannot fetch 'gone'" in s.error and str(served / "gone.bz2") in s.error and not s.fetching


def test_runs_wait_for_the_kernel_warm_up_before_they_are_timed(monkeypatch):
    """While the server's warm-up thread compiles (holding the GIL for long stretches), a job analyses its
    data but times no run; it solves once the warm-up has finished, and a cancel ends the wait."""
    import cdlab.ui.job as job_module
    from cdlab.ui.warmup import Warmup
    compiling = Warmup()
    compiling._thread = threading.current_thread()  # started, never finishing by itself
    monkeypatch.setattr(job_module, "WARMUP", compiling)
    monkeypatch.setattr(runner, "_RESULTS", LRUCache(maxsize=8))  # runs earlier tests cached would not wait
    s = small(methods=["sdca"], samplings={"sdca": "uniform"}, seeds=1, auto_run=False)
    s.start()
    for _ in range(600):
        if s._worker.live.phase.startswith("waiting for numba"):
            break
        s.wait(0.1)
    assert s._worker.live.phase.startswith("waiting for numba") and not s._worker.live.rows
    assert not s.wait(0.5)  # still waiting
    compiling.finished.set()
    assert s.wait(120) and s.phase == "finished" and s.run_status["sdca (uniform)"] == "converged"
    compiling.finished.clear()
    s.seed = 1  # a run the cache does not hold (a cached one is shown at once, without waiting)
    s.start()
    s.cancel()
    assert s.wait(60) and s.phase == "cancelled" and "sdca (uniform)" not in s.traces


def test_a_held_state_starts_no_job_until_released():
    """A served page holds its state from the link's arrival to its first job: settings the browser
    sends meanwhile are taken, but start nothing."""
    s = Experiment(auto_run=False)
    s.hold()
    s.param.update(preset="sparse news-like skew", n_samples=300)
    assert s.jobs == 0 and s.n_samples == 300
    assert s.n_features == 40  # a preset named while held is not applied: complete_preset does that
    s.release()
    s.n_samples = 200
    assert s.jobs == 1
    assert s.wait(60)


def test_a_job_answered_from_the_cache_shows_every_run_with_its_analysis():
    """Runs the cache holds come with the analysis, in one update (not one update per run and seed),
    and a job with nothing left to solve has no update between its first and its last."""
    from cdlab.ui.job import Job
    from cdlab.ui.runner import Worker
    s = small(seeds=2, auto_run=False)
    assert s.run(120) and s.phase == "finished"
    seen = []
    worker = Worker()
    live = worker.start(Job(s.settings(), s.runs()), lambda lv: seen.append(
        (lv.analysis is not None, {k: len(v) for k, v in lv.rows.items()}, lv.done)))
    assert worker.join(120)
    assert len(seen) == 2 and not seen[0][0] and seen[0][1] == {}
    assert seen[1] == (True, {label: len(trace) for label, trace in s.traces.items()}, True)
    assert live.phase == "finished" and live.cached == set(s.traces)


def test_a_link_whose_sampling_is_not_a_name_is_left_to_the_links_own_check():
    """Renaming old sampling names reads only names: a list where a name belongs is not an exception of
    its own (the link sync reports it as a bad value), and the link is returned unchanged."""
    import json
    import urllib.parse

    from cdlab.ui.state import current_link
    search = "?" + urllib.parse.urlencode({"samplings": json.dumps({"sdca": [1, 2], "dual_cd": "weighted"})})
    with pytest.warns(FutureWarning, match="'weighted' for 'dual_cd'"):
        out = urllib.parse.parse_qs(current_link(search).lstrip("?"))
    assert json.loads(out["samplings"][0]) == {"sdca": [1, 2], "dual_cd": SQUARED_NORM}


def test_a_batch_rebuilds_the_documents_model_index_only_for_a_changed_reference(monkeypatch):
    """An update that only changes data and text leaves Bokeh's model index alone (a walk over every
    model of the page); one that adds models rebuilds it once, however many changes it holds, and
    the new models are in the document after it."""
    from bokeh.document import Document
    from bokeh.models import ColumnDataSource, Div, Legend, LegendItem
    from cdlab.ui.doc_batch import batched
    doc = Document()
    source, legend, div = ColumnDataSource({"x": [1.0]}), Legend(items=[]), Div(text="a")
    for model in (source, legend, div):
        doc.add_root(model)
    rebuilt = []
    recompute = doc.models.recompute
    monkeypatch.setattr(doc.models, "recompute", lambda: (rebuilt.append(1), recompute()))
    with batched(doc):
        source.data = {"x": [1.0, 2.0]}
        div.text = "b"
    assert rebuilt == [] and source.data["x"] == [1.0, 2.0]
    items = [LegendItem(label="one"), LegendItem(label="two")]
    with batched(doc):
        legend.items = [items[0]]
        legend.items = list(items)
        div.text = "c"
    assert rebuilt == [1]
    assert all(doc.get_model_by_id(item.id) is item for item in items)
    legend.items = [items[0]]  # outside a batch Bokeh rebuilds the index at each such change, as before
    assert rebuilt == [1, 1] and doc.get_model_by_id(items[1].id) is None


def test_each_stage_moves_the_live_objects_out_of_full_collections_once(monkeypatch):
    """A served page freezes what is alive (gc.freeze) once per stage and process: a stage reached again
    freezes nothing more (a frozen object in a cycle is never collected), a new stage what came since.
    The freeze count is no witness of a call (a frozen object freed by reference counting lowers it),
    so the test counts gc.freeze's calls and asks the collector which objects it still walks."""
    import gc
    from cdlab.ui import long_lived
    monkeypatch.setattr(long_lived, "_FROZEN", set())
    calls, freeze = [], gc.freeze
    monkeypatch.setattr(gc, "freeze", lambda: (calls.append(1), freeze())[1])

    def walked(objects):
        """How many of ``objects`` the collector's generations hold (a frozen object is in none)."""
        tracked = {id(o) for o in gc.get_objects()}
        return sum(id(o) in tracked for o in objects)

    try:
        before = [[] for _ in range(1000)]
        assert walked(before) == len(before)
        assert long_lived.freeze_once("libraries") and calls == [1] and walked(before) == 0
        since = [[] for _ in range(1000)]
        assert not long_lived.freeze_once("libraries") and calls == [1] and walked(since) == len(since)
        assert long_lived.freeze_once("first job") and calls == [1, 1] and walked(since) == 0
    finally:
        gc.unfreeze()
