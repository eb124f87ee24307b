"""SDCA / Prox-SDCA end to end: certified optima on real and synthetic data,
agreement with independent solvers, and the solver contract (issue 2)."""
import threading

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVR

import cdlab
from independent import dual_optimum, primal_optimum

LOSSES = ["squared", "logistic", "smoothed_hinge", "hinge", "absolute"]
LAM = 1e-3  # with X scaled to unit mean example norm


def synthetic(seed=0, n=2000, d=100, density=0.1):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, data_rvs=rng.standard_normal, format="csr")
    X = X / np.sqrt(X.multiply(X).sum(axis=1)).mean()
    y = np.sign(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n))
    y[y == 0] = 1.0
    return sp.csr_matrix(X), y


def independent_bound(X, y, loss, lam, l1=0.0):
    """An independent estimate of P*: L-BFGS-B on the primal (smooth losses) or
    on the dual (hinge, absolute; a lower bound), liblinear for large absolute-loss data."""
    if loss in ("hinge", "absolute"):
        if loss == "absolute" and l1 == 0 and X.shape[0] > 5000:
            n = X.shape[0]
            est = LinearSVR(loss="epsilon_insensitive", epsilon=0.0, C=1 / (lam * n), fit_intercept=False,
                            tol=1e-12, max_iter=100000, dual=True).fit(X, y)
            return cdlab.Problem(X, y, loss=loss, lam=lam).primal(est.coef_.ravel())
        return dual_optimum(X, y, loss, lam, l1)
    return primal_optimum(X, y, loss, lam, l1)[0]


def certify(X, y, loss, lam, l1=0.0):
    problem = cdlab.Problem(X, y, loss=loss, lam=lam, l1=l1)
    res = cdlab.solve(problem, method="sdca", sampling="permutation", tol=1e-10, max_passes=3000, eval_every=5)
    tr = res.trace
    assert res.converged and tr.gap.iloc[-1] <= 1e-10, res
    # weak duality at every checkpoint (up to rounding of P and D themselves)
    assert (tr.dual <= tr.primal + 1e-14 * tr.primal.abs().max()).all()
    # the recorded gap is P − D
    np.testing.assert_allclose(tr.gap, tr.primal - tr.dual, rtol=1e-9, atol=1e-13)
    ref = independent_bound(X, y, loss, lam, l1)
    P = tr.primal.iloc[-1]
    assert abs(P - ref) <= 1e-8 * abs(P), (loss, P, ref)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("name", ["colon-cancer", "reuters_moneyfx", "a9a"])
def test_sdca_certified_on_real_data(real_data, name, loss):
    X, y = real_data(name)
    certify(X, y, loss, LAM)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("l1", [0.0, 1e-3])
def test_sdca_certified_on_synthetic_data_with_and_without_l1(loss, l1):
    X, y = synthetic()
    certify(X, y, loss, LAM, l1)


@pytest.mark.parametrize("loss", LOSSES)
def test_prox_sdca_elastic_net_on_real_data(real_data, loss):
    X, y = real_data("colon-cancer")
    certify(X, y, loss, 1e-2, l1=1e-3)


@pytest.mark.parametrize("sampling", ["uniform", "permutation", "cyclic"])
def test_every_order_converges_and_equal_seeds_give_equal_traces(sampling):
    X, y = synthetic(1)
    p = cdlab.Problem(X, y, loss="logistic", lam=LAM)
    a = cdlab.solve(p, sampling=sampling, tol=1e-10, max_passes=500, seed=7)
    b = cdlab.solve(p, sampling=sampling, tol=1e-10, max_passes=500, seed=7)
    assert a.converged
    cols = [c for c in a.trace.columns if c != "time"]
    pd.testing.assert_frame_equal(a.trace[cols], b.trace[cols], check_exact=True)
    np.testing.assert_array_equal(a.w, b.w)
    if sampling != "cyclic":  # a different seed gives a different path
        c = cdlab.solve(p, sampling=sampling, tol=1e-10, max_passes=500, seed=8)
        assert not np.array_equal(a.trace.gap.to_numpy()[:3], c.trace.gap.to_numpy()[:3])


def test_dense_and_sparse_inputs_give_the_same_run():
    X, y = synthetic(2)
    a = cdlab.solve(cdlab.Problem(X, y, lam=LAM), tol=1e-9, seed=3)
    b = cdlab.solve(cdlab.Problem(X.toarray(), y, lam=LAM), tol=1e-9, seed=3)
    np.testing.assert_array_equal(a.w, b.w)


def test_trace_columns_work_counting_and_reference():
    X, y = synthetic(3)
    p = cdlab.Problem(X, y, loss="squared", lam=LAM)
    pstar = cdlab.reference_optimum(p)
    res = cdlab.solve(p, tol=1e-9, reference=pstar, eval_every=1.0)
    tr = res.trace
    for col in ["steps", "nnz_touched", "passes", "data_passes", "time", "primal", "dual", "gap", "subopt"]:
        assert col in tr.columns
    # a step on example i costs ‖x_i‖₀: over whole epochs of uniform draws this averages to nnz/n per step,
    # and exactly: passes = nnz_touched / nnz, data passes = steps / n
    np.testing.assert_allclose(tr.passes, tr.nnz_touched / p.nnz)
    np.testing.assert_allclose(tr.data_passes, tr.steps / p.n_samples)
    assert (np.diff(tr.steps) == p.n_samples).all()
    assert (tr.subopt >= -1e-12).all() and (tr.subopt <= tr.gap + 1e-12).all()
    assert tr.time.is_monotonic_increasing
    # permutation order touches exactly nnz per epoch
    perm = cdlab.solve(p, sampling="permutation", max_passes=3, tol=0)
    np.testing.assert_array_equal(perm.trace.nnz_touched, np.arange(4) * p.nnz)


def test_reference_optimum_is_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("CDLAB_CACHE", str(tmp_path))
    X, y = synthetic(4)
    p = cdlab.Problem(X, y, loss="logistic", lam=LAM)
    pstar = cdlab.reference_optimum(p)
    files = list((tmp_path / "reference").glob("*.json"))
    assert len(files) == 1 and p.content_hash() in files[0].name
    assert pstar == pytest.approx(primal_optimum(X, y, "logistic", LAM)[0], rel=1e-10)
    assert cdlab.reference_optimum(cdlab.Problem(X, y, loss="logistic", lam=LAM)) == pstar  # from the cache


def test_callback_cancel_event_and_time_budget():
    X, y = synthetic(5)
    p = cdlab.Problem(X, y, loss="hinge", lam=1e-5)
    seen = []
    res = cdlab.solve(p, tol=0, max_passes=100, callback=lambda row: seen.append(row) or len(seen) < 4)
    assert res.status == "cancelled" and len(res.trace) == 4 and len(seen) == 4
    ev = threading.Event()
    ev.set()
    assert cdlab.solve(p, tol=0, cancel=ev).status == "cancelled"
    res = cdlab.solve(p, tol=0, max_passes=1e9, max_time=0.05, eval_every=0.1)
    assert res.status == "max_time"
    assert cdlab.solve(p, tol=0, max_passes=2).status == "max_passes"


@pytest.mark.parametrize("sampling", ["uniform", "permutation"])
@pytest.mark.parametrize("max_passes", [0.5, 2.5, 3])
def test_pass_budget_is_not_overshot(real_data, sampling, max_passes):
    """Row costs vary on reuters, so uniform checkpoints land at e.g. 2.98 passes; a whole
    further chunk used to end a 3-pass budget near 4 passes."""
    X, y = real_data("reuters_moneyfx")
    p = cdlab.Problem(X, y, loss="hinge", lam=1e-7)
    for seed in range(3):
        res = cdlab.solve(p, sampling=sampling, tol=0, max_passes=max_passes, seed=seed)
        assert res.status == "max_passes"
        last = res.trace.passes.iloc[-1]
        if sampling == "permutation" and max_passes == int(max_passes):
            assert last == max_passes  # whole epochs touch exactly nnz each
        else:  # a partial epoch touches ≈ its share of nnz: within 2% of a pass (was up to 100%)
            assert abs(last - max_passes) <= 0.02, res.trace.passes.tolist()


def _budget_cases():
    """Every registered method with its defaults, and settings whose steps cost far more than
    one row: one-step APPA stages (a primal-to-dual start reads 2·nnz per step), one-step SVRG
    epochs (a snapshot per step), L-SVRG refreshing at every step, whole-data mini-batches."""
    short = dict(stage_passes=1e-9)
    return [(m, {}) for m in sorted(cdlab.METHODS)] + [
        ("appa", short), ("appa", dict(short, inner="svrg")), ("appa", dict(short, warm_start="dual")),
        ("accel_appa", short), ("dual_appa", short), ("svrg", dict(epoch_length=1)),
        ("lsvrg", {}), ("lsvrg", dict(refresh_prob=1.0)),
        ("asdca", dict(batch_size=600)), ("spdc", dict(batch_size=600))]


@pytest.mark.parametrize("method, options", _budget_cases())
@pytest.mark.parametrize("max_passes, eval_every", [(3, 1.0), (2.5, 0.5)])
def test_every_method_honours_the_pass_budget_within_one_checkpoint(method, options, max_passes, eval_every):
    """The run ends at most one checkpoint interval past max_passes, or one step when a single
    step reads more than that (a full-gradient step, a one-step APPA stage). APPA with one-step
    stages declared n steps per pass and ran 10,003 passes of a 3-pass budget."""
    X, y = synthetic(12, n=600, d=40, density=0.2)
    p = cdlab.Problem(X, y, loss="logistic", lam=1e-3)
    res = cdlab.solve(p, method, max_passes=max_passes, eval_every=eval_every, tol=0, **options)
    tr = res.trace
    assert res.status == "max_passes" and len(tr) >= 2
    step_cost = np.max(np.diff(tr.passes) / np.maximum(np.diff(tr.steps), 1))
    assert tr.passes.iloc[-1] <= max_passes + max(eval_every, step_cost) + 1e-9, tr.passes.tolist()


@pytest.mark.parametrize("stop", [False, np.False_, 0, np.int64(0), 0.0, ""])
def test_any_false_value_returned_by_the_callback_cancels(stop):
    X, y = synthetic(13, n=200, d=20)
    p = cdlab.Problem(X, y, loss="logistic", lam=LAM)
    seen = []
    res = cdlab.solve(p, tol=0, max_passes=20, callback=lambda row: stop if seen.append(row) or len(seen) == 3 else None)
    assert res.status == "cancelled" and len(res.trace) == 3
    for keep in (True, np.True_, 1, None):
        assert cdlab.solve(p, tol=0, max_passes=3, callback=lambda row: keep).status == "max_passes"


def test_a_callback_result_without_a_truth_value_is_refused():
    X, y = synthetic(13, n=200, d=20)
    p = cdlab.Problem(X, y, loss="logistic", lam=LAM)
    with pytest.raises(TypeError, match="a callback must return None or a truth value"):
        cdlab.solve(p, max_passes=3, callback=lambda row: np.array([True, False]))


def test_the_callback_gets_a_copy_of_the_row():
    """Writing into the row cannot corrupt the trace or stop the run as converged."""
    X, y = synthetic(14, n=200, d=20)
    p = cdlab.Problem(X, y, loss="logistic", lam=LAM)

    def vandal(row):
        row["gap"], row["primal"], row["passes"] = -1.0, np.nan, 1e9

    res = cdlab.solve(p, tol=1e-12, max_passes=4, seed=2, callback=vandal)
    clean = cdlab.solve(p, tol=1e-12, max_passes=4, seed=2)
    assert res.status == clean.status == "max_passes"
    pd.testing.assert_frame_equal(res.trace.drop(columns="time"), clean.trace.drop(columns="time"))


def test_max_time_counts_callback_and_checkpoint_time():
    """A slow callback (0.05 s a checkpoint, the solver's steps far cheaper) ends a 0.3 s budget
    after a few checkpoints; counting solver time only, the run went on to the pass budget."""
    import time
    X, y = synthetic(15, n=200, d=20)
    p = cdlab.Problem(X, y, loss="hinge", lam=1e-6)
    cdlab.solve(p, max_passes=1, tol=0)  # compiled before timing
    start = time.perf_counter()
    res = cdlab.solve(p, tol=0, max_passes=400, max_time=0.3, callback=lambda row: time.sleep(0.05))
    took = time.perf_counter() - start
    assert res.status == "max_time" and len(res.trace) <= 10 and took < 2.0, (res.status, len(res.trace), took)


def test_an_infinite_pass_budget_needs_a_finite_stop():
    X, y = synthetic(16, n=200, d=20)
    p = cdlab.Problem(X, y, loss="logistic", lam=LAM)
    for kwargs in (dict(tol=0), dict(tol=-np.inf), dict(tol=0, max_time=np.inf)):
        with pytest.raises(ValueError, match="max_passes=inf needs a finite max_steps or max_time, or tol > 0|"
                                             "max_time must be finite"):
            cdlab.solve(p, max_passes=np.inf, **kwargs)
    with pytest.raises(ValueError, match="max_passes=inf needs"):  # no certificate without λ: gap = inf
        cdlab.solve(cdlab.Problem(X, y, loss="logistic", lam=0.0), "lbfgs", max_passes=np.inf, tol=1e-3)
    assert cdlab.solve(p, max_passes=np.inf, tol=1e-8).status == "converged"
    assert cdlab.solve(p, max_passes=np.inf, tol=0, max_time=0.2, eval_every=0.5).status == "max_time"


def test_a_step_budget_ends_the_run_on_its_step():
    """max_steps is a finite stop of its own, and the run ends exactly there, between checkpoints or not."""
    X, y = synthetic(16, n=200, d=20)
    p = cdlab.Problem(X, y, loss="logistic", lam=LAM)
    for max_steps in (1, 350, 600):  # inside the first interval, between checkpoints, on one
        res = cdlab.solve(p, max_passes=np.inf, max_steps=max_steps, tol=0)
        assert res.status == "max_steps" and res.trace.steps.iloc[-1] == max_steps
        assert (np.diff(res.trace.steps) > 0).all()
    # the pass budget, when it comes first, still ends the run
    assert cdlab.solve(p, max_passes=1, max_steps=10 ** 6, tol=0).status == "max_passes"
    for bad, match in ((0, "an integer ≥ 1, got 0"), (2.5, "an integer ≥ 1, got 2.5"),
                       (-1, "an integer ≥ 1, got -1"), (np.nan, "a number, got nan"), ("9", "a real number")):
        with pytest.raises(ValueError, match=f"max_steps must be {match}"):
            cdlab.solve(p, max_steps=bad)


def test_the_trace_is_thinned_evenly_beyond_its_row_limit(monkeypatch):
    """Past MAX_TRACE_ROWS stored rows every other row is dropped and later checkpoints are stored
    half as often: the trace stays bounded, keeps its first and last rows, and every row it keeps
    is a checkpoint of the same run unthinned (the cadence and the stopping rule are unchanged)."""
    from cdlab.solvers import driver
    X, y = synthetic(17, n=200, d=20)
    p = cdlab.Problem(X, y, loss="hinge", lam=1e-6)
    full = cdlab.solve(p, tol=0, max_passes=50, eval_every=0.25, seed=1).trace.drop(columns="time")
    monkeypatch.setattr(driver, "MAX_TRACE_ROWS", 16)
    thin = cdlab.solve(p, tol=0, max_passes=50, eval_every=0.25, seed=1).trace.drop(columns="time")
    assert len(full) > 8 * 16 and len(thin) <= 16 + 1
    kept = full.steps.searchsorted(thin.steps)
    pd.testing.assert_frame_equal(thin.reset_index(drop=True), full.iloc[kept].reset_index(drop=True))
    assert kept[0] == 0 and kept[-1] == len(full) - 1
    assert len(set(np.diff(kept[:-1]))) == 1  # evenly spaced (the last row may follow sooner)


def test_reference_cache_key_location_tolerance_and_concurrency(tmp_path, monkeypatch):
    monkeypatch.delenv("CDLAB_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    from cdlab.reference import cache_dir
    assert cache_dir() == tmp_path / "xdg" / "cdlab" / "reference"
    monkeypatch.setenv("CDLAB_CACHE", str(tmp_path / "c"))
    X, y = synthetic(8, n=300, d=30)
    p = cdlab.Problem(X, y, loss="squared", lam=1e-2)
    # concurrent writers: one valid entry, every thread the same value
    values = []
    threads = [threading.Thread(target=lambda: values.append(cdlab.reference_optimum(p))) for _ in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    entries = list((tmp_path / "c" / "reference").iterdir())
    assert len(values) == 4 and len(set(values)) == 1
    assert [e.name for e in entries] == [f"{p.content_hash()}.json"]
    # a changed problem gets its own entry
    cdlab.reference_optimum(p.with_params(lam=2e-2))
    assert len(list((tmp_path / "c" / "reference").glob("*.json"))) == 2
    # an entry certified more loosely than asked for is not trusted
    entry = tmp_path / "c" / "reference" / f"{p.content_hash()}.json"
    entry.write_text('{"primal": 123.0, "gap": 1e-6}')
    assert cdlab.reference_optimum(p, tol=1e-4) == 123.0
    assert cdlab.reference_optimum(p) == values[0]
    # an unusable cache location costs the cache, not the answer
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("CDLAB_CACHE", str(blocker))
    with pytest.warns(RuntimeWarning, match="not cached"):
        assert cdlab.reference_optimum(p) == values[0]


def test_reference_false_means_none():
    X, y = synthetic(6, n=50, d=10)
    res = cdlab.solve(cdlab.Problem(X, y, loss="hinge", lam=LAM), reference=False, max_passes=2)
    assert "subopt" not in res.trace.columns


@pytest.mark.parametrize("kwargs, match", [
    (dict(method="trust_region"), "unknown method"),
    (dict(sampling="weighted"), "does not support sampling"),
    (dict(sampling=np.ones(3) / 3), "length 3"),
    (dict(foo=1), "unknown option"),
    (dict(max_passes=0), "max_passes"),
    (dict(method="dual_cd", update="gradient"), "smooth loss"),
    (dict(sampling="importance"), "smooth loss"),
    (dict(reference="abc"), "reference must be a real number, got 'abc'"),
    (dict(reference=np.nan), "reference must be finite, got nan"),
    (dict(tol="1e-3"), "tol must be a real number"),
    (dict(tol=np.nan), "tol must be a number"),
    (dict(max_time="1"), "max_time must be a real number"),
    (dict(max_time=-1.0), "max_time must be finite and ≥ 0"),
    (dict(eval_every=np.inf), "eval_every must be 'auto' or a finite number of passes > 0, got inf"),
    (dict(eval_every="often"), "eval_every must be 'auto' or a finite number of passes > 0, got 'often'"),
    (dict(max_passes=None), "max_passes must be a real number, got None"),
    (dict(callback=3), "callback must be callable"),
    (dict(cancel=True), "cancel must have an is_set"),
    (dict(seed=-1), "seed must be None or a non-negative integer"),
    (dict(seed=1.5), "seed must be None or a non-negative integer"),
])
def test_solve_refuses_bad_requests_before_work(kwargs, match):
    X, y = synthetic(6, n=50, d=10)
    p = cdlab.Problem(X, y, loss="hinge", lam=LAM)
    with pytest.raises(ValueError, match=match):
        cdlab.solve(p, **kwargs)


def test_lam_zero_is_refused_by_sdca():
    X, y = synthetic(7, n=50, d=10)
    with pytest.raises(ValueError, match="needs lam > 0"):
        cdlab.solve(cdlab.Problem(X, y, lam=0.0))


@pytest.mark.parametrize("scale", [1e8, 1e16])
def test_badly_scaled_rows_are_slow_convergence_not_divergence(scale):
    """Rows scaled by 1e8 or 1e16 make ‖x_i‖²/(λn) huge: P(w(α)) can dwarf P(w₀) while SDCA's
    exact steps still raise D(α) at every checkpoint. The run ends on its budget with the gap
    it reached (a dual method diverges only when D falls or an iterate is not finite)."""
    X, y = cdlab.load_dataset("heart_scale")
    problem = cdlab.Problem(X.toarray() * scale, y, loss="logistic", lam=1e-2)
    res = cdlab.solve(problem, "sdca", max_passes=20, tol=1e-8, seed=0)
    assert res.status == "max_passes" and res.message == ""
    dual = res.trace.dual.to_numpy()
    assert np.all(np.diff(dual) >= -1e-12 * np.abs(dual[1:])) and dual[-1] > dual[0]
    numeric = res.trace[["primal", "dual", "gap"]].to_numpy()
    assert np.all(np.isfinite(numeric)) and np.all(res.trace.dual <= res.trace.primal)
