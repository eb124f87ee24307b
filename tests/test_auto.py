"""method="auto" (cdlab.solvers.auto): it takes the face-off's predicted side
on the face-off presets, records what it ran and why, and its runs are
certified (duality gap) and agree with an independent optimum."""
import sys

import numpy as np
import pytest

import cdlab
from cdlab import theory
from cdlab.cli import main
from cdlab.data import make_synthetic
from cdlab.estimators import CDClassifier, CDRegressor
from cdlab.solvers import auto, newton
from cdlab.ui import datasource, presets
from _helpers import mean_scaled_dataset, scaled_problem
from independent import dual_optimum, primal_optimum

FACEOFF_PRESETS = [name for name, v in presets.PRESETS.items() if v["methods"] == ["primal_cd", "dual_cd"]]
DATA_KEYS = ("n_samples", "n_features", "density", "row_skew", "col_skew", "value_dist", "normalize")


def preset_problem(name):
    v = presets.PRESETS[name]
    key = datasource.data_key(v["source"], **{k: v.get(k, 0) for k in DATA_KEYS}, data_seed=0,
                              omega=v.get("omega", 0))
    X, y, _ = datasource.load(key)
    lam = 1.0 / X.shape[0] if v["lam_rule"] == "1/n" else 10.0 ** v["log10_lam"]
    return cdlab.Problem(X, y, loss=v["loss"], lam=lam)


def test_there_are_faceoff_presets_on_both_sides():
    sides = {theory.faceoff(preset_problem(name)).prediction["method"] for name in FACEOFF_PRESETS}
    assert sides == {"primal_cd", "dual_cd"}


@pytest.mark.parametrize("name", FACEOFF_PRESETS)
def test_auto_takes_the_faceoffs_side_and_certifies(name):
    """auto's coordinate method is on the face-off's predicted side, unless its seconds model (the side's bound
    × the loss's pass cost) puts the other side PRIMAL_MARGIN× ahead: then the face-off side's method must
    certify in more passes than auto's (a deterministic check that the override was right, not just cheaper
    per pass), and the reason says why. Newton replaces the coordinate pick only where predicted faster. The
    run is certified and agrees with an independent optimum."""
    problem = preset_problem(name)
    predicted = theory.faceoff(problem).prediction["method"]
    face_side = "primal" if predicted == "primal_cd" else "dual"
    first = auto.first_order_choice(problem)
    if first["side"] != face_side:
        # the one override the seconds model makes on these presets: toward SDCA, whose exact step the dual bound
        # understates, when primal CD's passes are dearer
        assert (face_side, first["side"]) == ("primal", "dual")
        assert f"not {auto.PRIMAL_MARGIN:g}× below" in first["reason"] and "the dual side" in first["reason"]
        runs = [cdlab.solve(problem, method=m, sampling="permutation", tol=1e-9, max_passes=3000)
                for m in ("primal_cd", "sdca")]
        assert all(r.converged for r in runs) and runs[1].trace.passes.iloc[-1] < runs[0].trace.passes.iloc[-1]
    else:
        assert first["method"] == {"primal_cd": "primal_cd", "dual_cd": "sdca"}[predicted]
    choice = auto.choose(problem)
    assert choice["method"] in (first["method"], "newton")
    res = cdlab.solve(problem, method="auto", tol=1e-9, max_passes=3000)
    assert res.method == choice["method"] and res.trace.attrs["auto"]["side"] == choice["side"]
    assert res.auto_reason and res.auto_reason == res.trace.attrs["auto"]["reason"]
    assert res.trace.attrs["auto"]["method"] == res.method and res.trace.attrs["auto"]["sampling"] == res.sampling
    assert res.converged and res.trace.gap.iloc[-1] <= 1e-9
    p_ind, _ = primal_optimum(problem.X, problem.y, problem.loss, problem.lam)
    assert res.trace.primal.iloc[-1] - 1e-9 <= p_ind + 1e-7  # the independent solver is the less precise one
    assert p_ind >= res.trace.dual.iloc[-1] - 1e-7


def test_auto_follows_the_faceoff_on_every_preset_but_one():
    """The override above is the exception: on every preset but "dense d≫n, small λ (primal wins)" auto's
    coordinate method is on the face-off's side (there, measured: SDCA certifies in 5 passes and primal CD in
    21, each primal pass ~10× dearer on the logistic loss); a primal preset stays primal."""
    exception = "dense d≫n, small λ (primal wins)"
    assert exception in FACEOFF_PRESETS
    for name in FACEOFF_PRESETS:
        problem = preset_problem(name)
        face_side = "primal" if theory.faceoff(problem).prediction["method"] == "primal_cd" else "dual"
        side = auto.first_order_choice(problem)["side"]
        assert (side == face_side) == (name != exception), name
    assert any(auto.first_order_choice(preset_problem(name))["side"] == "primal" for name in FACEOFF_PRESETS)


@pytest.mark.parametrize("name", FACEOFF_PRESETS)
def test_face_off_work_is_the_theory_layers(name):
    problem = preset_problem(name)
    fo, work = theory.faceoff(problem), auto.faceoff_work(problem)
    for side, letter in (("primal", "P"), ("dual", "D")):
        for sampling in ("uniform", "importance"):
            assert work[side, sampling] == pytest.approx(getattr(fo, f"T_{letter}_{sampling}"), rel=1e-12)
    assert (work["C_P"], work["C_D"]) == pytest.approx((fo.C_P, fo.C_D), rel=1e-12)


def test_auto_does_not_import_the_symbolic_layer():
    import subprocess
    code = ("import sys, cdlab; from cdlab.data import make_synthetic; X, y = make_synthetic(50, 5, seed=0); "
            "cdlab.solve(cdlab.Problem(X, y, lam=0.1), method='auto', max_passes=2); print('sympy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("loss", ["hinge", "absolute"])
def test_nonsmooth_loss_runs_sdca_with_reshuffling_certified(loss):
    X, y = make_synthetic(120, 10, seed=1, normalize="rows")
    if loss == "absolute":
        y = X @ np.linspace(-1, 1, 10) + 0.1 * np.random.default_rng(0).standard_normal(120)
    problem = cdlab.Problem(X, y, loss=loss, lam=0.05)
    res = cdlab.solve(problem, method="auto", tol=1e-8, max_passes=5000)
    assert (res.method, res.sampling) == ("sdca", "permutation") and "not smooth" in res.auto_reason
    assert res.options["shrinking"] is True and res.trace.attrs["auto"]["options"] == {"shrinking": True}
    assert "shrinking" in res.auto_reason and res.converged
    d_ind = dual_optimum(problem.X, problem.y, loss, problem.lam)
    assert abs(res.trace.dual.iloc[-1] - d_ind) <= 1e-6
    # shrinking has no parallel mode: n_jobs=2 runs it on one thread, and the reason says so
    two = cdlab.solve(problem, method="auto", tol=1e-8, max_passes=5000, n_jobs=2)
    assert two.converged and two.trace.attrs["n_jobs"] == 1 and two.options["shrinking"] is True
    assert "n_jobs=2 not used: shrinking runs on one thread" in two.auto_reason


def test_large_kappa_accelerates_on_the_dual_side_only_without_l1():
    """The first-order pick at a large κ is accelerated SDCA; Newton's CG path (products growing as √κ, not
    κ) is predicted far faster still and replaces it (measured on this problem, one thread: newton certified a
    gap ≤ 1e-6·P(0) in 1.7 s, 1715 passes; ASDCA had not in 3000 passes, 21.5 s)."""
    X, y = make_synthetic(6000, newton.MAX_FEATURES + 100, density=1e-3, seed=2, normalize="rows")
    problem = cdlab.Problem(X, y, loss="logistic", lam=1e-10)
    kappa = problem.R ** 2 / (problem.lam * problem.gamma * problem.n_samples)
    assert kappa > auto.KAPPA_ACCELERATE
    first = auto.first_order_choice(problem)
    assert first["side"] == "dual" == theory.faceoff(problem).prediction["method"].replace("_cd", "")
    assert (first["method"], first["accelerated"]) == ("asdca", True) and "κ" in first["reason"]
    choice = auto.choose(problem)
    assert (choice["method"], choice["inner_solver"]) == ("newton", "cg") and "conjugate gradients" in choice["reason"]
    assert choice["predicted_seconds"]["newton"] < choice["predicted_seconds"]["asdca"]
    res = cdlab.solve(problem, method="auto", max_passes=3)
    assert res.method == "newton" and res.trace.attrs["auto"]["inner_solver"] == "cg"
    assert auto.choose(problem.with_params(l1=1e-6))["method"] == "sdca"  # no Newton with l1, no ASDCA either
    small = auto.first_order_choice(problem.with_params(lam=1.0))
    assert small["method"] == "sdca" and small["accelerated"] is False
    # and there Newton (CG) replaces it: measured 1.3 ms against SDCA's 1.6 (one thread, median of 5)
    assert auto.choose(problem.with_params(lam=1.0))["method"] == "newton"


def test_importance_only_when_its_bound_wins_by_the_margin():
    # a few heavy rows: importance's bound is far below uniform's on the dual side
    X, y = make_synthetic(400, 30, seed=3, row_skew=1.5, normalize="mean")
    problem = cdlab.Problem(X, y, loss="logistic", lam=1.0 / 400)
    work = auto.faceoff_work(problem)
    choice = auto.first_order_choice(problem)
    side = choice["side"]
    expected = "importance" if work[side, "uniform"] > auto.IMPORTANCE_MARGIN * work[side, "importance"] \
        else "permutation"
    assert choice["sampling"] == expected
    # equal row norms: a tie, so uniform (run as a permutation)
    Xe, ye = make_synthetic(300, 10, seed=4, normalize="rows")
    assert auto.first_order_choice(cdlab.Problem(Xe, ye, loss="logistic", lam=1.0 / 300))["sampling"] == "permutation"


def test_a_bound_below_the_margin_keeps_the_permutation():
    """w8a, logistic, λ = 1/n: importance's bound is between 2× and IMPORTANCE_MARGIN× below uniform's, and
    the race measured the permutation there in 8 passes against importance's 18.5: auto runs the permutation."""
    from _helpers import mean_scaled_dataset

    X, y = mean_scaled_dataset("w8a")
    problem = cdlab.Problem(X, y, loss="logistic", lam=1.0 / X.shape[0])
    work = auto.faceoff_work(problem)
    choice = auto.first_order_choice(problem)
    assert choice["side"] == "dual" and choice["faceoff_sampling"] == "uniform"
    assert 2.0 < work["dual", "uniform"] / work["dual", "importance"] < auto.IMPORTANCE_MARGIN
    assert (choice["method"], choice["sampling"]) == ("sdca", "permutation")


def test_auto_refuses_what_it_cannot_honour():
    X, y = make_synthetic(50, 5, seed=0)
    problem = cdlab.Problem(X, y, lam=0.1)
    with pytest.raises(ValueError, match="picks the sampling too"):
        cdlab.solve(problem, method="auto", sampling="importance")
    with pytest.raises(ValueError, match="takes no method options"):
        cdlab.solve(problem, method="auto", step="exact")
    with pytest.raises(ValueError, match="needs lam > 0"):
        cdlab.solve(problem.with_params(lam=0.0), method="auto")
    # a named method is untouched by the dispatch: sampling=None is uniform
    assert cdlab.solve(problem, method="sdca", max_passes=1).sampling == "uniform"


def test_estimators_accept_auto():
    X, y = make_synthetic(150, 8, seed=5, normalize="rows")
    clf = CDClassifier(method="auto", lam=1e-2, tol=1e-8).fit(X, y)
    assert clf.status_ == ["converged"] and clf.gap_[0] <= 1e-8
    assert clf.traces_[0].attrs["auto"]["method"] in cdlab.METHODS
    reg = CDRegressor(method="auto", lam=1e-2, tol=1e-8).fit(X, X @ np.arange(8.0))
    assert reg.status_ == ["converged"]


def test_cli_solve_auto(capsys):
    assert main(["solve", "heart_scale", "--method", "auto", "--lam", "1e-2", "--tol", "1e-9", "--no-progress"]) == 0
    out = capsys.readouterr()
    assert "auto picked" in out.err and "auto: face-off" in out.out and "converged" in out.out
    assert main(["solve", "heart_scale", "--method", "auto", "--sampling", "importance", "--no-progress"]) == 2
    assert "picks the sampling too" in capsys.readouterr().err


def test_a_close_primal_call_goes_to_sdca_and_says_why():
    """rcv1_small, logistic, λ = 1/n: the primal bound is below the dual one, but the predicted seconds (at
    each side's pass cost) not PRIMAL_MARGIN× below, so auto runs SDCA (whose exact step gains at least what
    the bounded dual step does) and says so; the run is certified."""
    X, y = cdlab.load_dataset("rcv1_small")
    problem = cdlab.Problem(X, y, loss="logistic", lam=1.0 / X.shape[0])
    work = auto.faceoff_work(problem)
    primal = min(work["primal", "uniform"], work["primal", "importance"])
    dual = min(work["dual", "uniform"], work["dual", "importance"])
    assert primal < dual < auto.PRIMAL_MARGIN * primal
    assert theory.faceoff(problem).prediction["method"] == "primal_cd"
    res = cdlab.solve(problem, method="auto", tol=1e-8)
    assert res.method == "sdca" and res.status == "converged" and res.trace.gap.iloc[-1] <= 1e-8
    assert f"not {auto.PRIMAL_MARGIN:g}× below" in res.auto_reason and "the dual side" in res.auto_reason
    # SDCA's parallel mode measured slower than one thread (auto.SERIAL_PICKS): n_jobs=2 runs the pick on one
    # thread, the very run n_jobs=1 gives (the serial kernel is reproducible from the seed), and says so
    two = cdlab.solve(problem, method="auto", tol=1e-8, n_jobs=2)
    assert two.method == "sdca" and two.trace.attrs["n_jobs"] == 1 and "sdca" in auto.SERIAL_PICKS
    assert "n_jobs=2 not used: sdca's parallel mode (PASSCoDe-Wild) measured slower" in two.auto_reason
    columns = [c for c in res.trace.columns if c != "time"]
    assert two.trace[columns].equals(res.trace[columns]) and np.array_equal(two.w, res.w)


@pytest.mark.parametrize("loss", ["logistic", "squared", "smoothed_hinge"])
def test_newton_on_few_features_and_a_small_lam_and_says_why(loss):
    """Few features and κ large: Newton's predicted seconds (a few iterations of a d × d solve) are far
    below the first-order pick's (passes growing with κ); auto runs it, certified, and says why."""
    X, y = make_synthetic(8000, 20, seed=7, normalize="rows")
    if loss == "squared":
        y = X @ np.linspace(-1, 1, 20) + 0.1 * np.random.default_rng(1).standard_normal(8000)
    problem = cdlab.Problem(X, y, loss=loss, lam=3e-4 / 8000)  # Newton's inner solver: Cholesky, by the cost model
    assert newton.inner_solver(problem) == "cholesky"
    choice = auto.choose(problem)
    assert choice["method"] == "newton" and choice["side"] == "primal"
    seconds = choice["predicted_seconds"]
    first = auto.first_order_choice(problem)["method"]
    assert seconds["newton"] < seconds[first]
    res = cdlab.solve(problem, method="auto", tol=1e-9)
    assert res.method == "newton" and res.converged and res.trace.gap.iloc[-1] <= 1e-9
    meta = res.trace.attrs["auto"]
    assert meta["method"] == "newton" and meta["reason"] == res.auto_reason
    assert "face-off" in res.auto_reason and f"d = 20 features damped Newton is predicted faster" in res.auto_reason
    assert f"against {seconds[first]:.3g} s for {first}" in res.auto_reason
    p_ind, _ = primal_optimum(problem.X, problem.y, problem.loss, problem.lam, s=problem.s)
    assert abs(res.trace.primal.iloc[-1] - p_ind) <= 1e-7 * abs(p_ind)
    # Newton's BLAS threads are its parallel mode: auto runs it on the threads it is given
    two = cdlab.solve(problem, method="auto", tol=1e-9, n_jobs=2)
    assert two.method == "newton" and two.trace.attrs["n_jobs"] == 2 and "not used" not in two.auto_reason


def test_no_newton_where_it_cannot_run_or_would_lose():
    X, y = make_synthetic(2000, 20, seed=7, normalize="rows")
    small_lam = cdlab.Problem(X, y, loss="logistic", lam=1e-3 / 2000)
    assert auto.choose(small_lam)["method"] == "newton"
    assert auto.choose(small_lam.with_params(l1=1e-6))["method"] != "newton"  # l1: no prox-Newton
    # the hinge: Newton on smoothed hinges where _hinge_newton.auto_reason says (tests/test_hinge_newton.py), never
    # with l1
    assert auto.choose(small_lam.with_params(loss="hinge", l1=1e-6))["method"] == "sdca"
    # well conditioned (λ = 1/n): still Newton, predicted and measured faster (6 iterations, 2.6 ms, against
    # SDCA's 8 passes, 3.7 ms; one thread, median of 5)
    well = auto.choose(small_lam.with_params(lam=1.0 / 2000))
    assert well["method"] == "newton" and well["predicted_seconds"]["newton"] < well["predicted_seconds"]["sdca"]
    # many features: the d³ factorisation loses to coordinate steps even at a small λ (colon-cancer,
    # rows scaled by their mean norm as in the race)
    colon = scaled_problem("colon-cancer", "logistic")
    colon = colon.with_params(lam=1e-2 / colon.n_samples)
    assert colon.n_features <= newton.MAX_FEATURES and auto.choose(colon)["method"] != "newton"


def test_newton_cg_where_predicted_cheaper_certified_and_says_why():
    """rcv1_small (47 236 features, beyond Cholesky's MAX_FEATURES), squared loss, λ = 0.01/n: CG (on the dual
    system, d ≥ DUAL_CG_RATIO·n) is predicted faster than SDCA (and measured 2.2× faster: benchmarks/race.py,
    15.5 against 33.6 ms); auto runs it, certified, agreeing with an independent optimum, and says why; n_jobs=2 runs it on one
    thread (the dual system's CG has no parallel mode) and says so."""
    X, y = mean_scaled_dataset("rcv1_small")
    problem = cdlab.Problem(X, y, loss="squared", lam=0.01 / X.shape[0])
    choice = auto.choose(problem)
    assert (choice["method"], choice["inner_solver"]) == ("newton", "cg")
    seconds = choice["predicted_seconds"]
    assert seconds["newton"] < seconds["sdca"]
    res = cdlab.solve(problem, method="auto", tol=1e-10, max_passes=1000)  # P − P* ≤ 1e-10, within 1e-7·P*
    assert res.method == "newton" and res.converged and res.trace.gap.iloc[-1] <= 1e-10
    assert "Newton with conjugate gradients" in res.auto_reason and res.trace.attrs["auto"]["inner_solver"] == "cg"
    p_ind, _ = primal_optimum(problem.X[:, problem.col_nnz > 0], problem.y, problem.loss, problem.lam)
    assert abs(res.trace.primal.iloc[-1] - p_ind) <= 1e-7 * abs(p_ind)
    two = cdlab.solve(problem, method="auto", tol=1e-6, max_passes=1000, n_jobs=2)
    assert two.method == "newton" and two.trace.attrs["n_jobs"] == 1
    assert "n_jobs=2 not used: newton's CG on the dual system runs on one thread" in two.auto_reason


@pytest.mark.parametrize("name, loss, lam_factor", [
    ("rcv1_small", "squared", 1.0), ("rcv1_small", "logistic", 1.0), ("rcv1_small", "logistic", 0.01),
    ("rcv1_small", "smoothed_hinge", 0.01), ("reuters_moneyfx", "squared", 1.0),
    ("colon-cancer", "logistic", 0.01), ("a9a", "logistic", 1.0), ("mushrooms", "logistic", 1.0),
    ("phishing", "logistic", 1.0), ("reuters_moneyfx", "logistic", 1.0)])
def test_no_newton_cg_where_it_measured_no_faster(name, loss, lam_factor):
    """Where Newton's CG path measured slower than the first-order pick (benchmarks/auto_calibration.py and
    newton_cg_bench.py: 1.16–1.8× on these, 7× for the smoothed hinge; benchmarks/race.py on the logistic 1/n ones
    of a9a, mushrooms, phishing and reuters_moneyfx: 1.3–1.5×), auto does not run it: it keeps the first-order pick,
    or on a9a logistic 1/n runs Newton's Cholesky path with its sampled Hessian (25 ms measured against SDCA's 33 and
    CG's 44: auto_calibration.py, newton.CG_MARGIN's comment). Rows scaled by their mean norm, as in the race."""
    X, y = mean_scaled_dataset(name)
    problem = cdlab.Problem(X, y, loss=loss, lam=lam_factor / X.shape[0])
    choice = auto.choose(problem)
    if (name, loss, lam_factor) == ("a9a", "logistic", 1.0):
        assert choice["method"] == "newton" and choice["inner_solver"] == "cholesky"
        assert f"sampled from {newton.sample_size(problem)} of the {problem.n_samples} rows" in choice["reason"]
        return
    assert choice["method"] == auto.first_order_choice(problem)["method"] != "newton"


def test_separable_cap_is_the_dual_bound_at_lambda_one_over_n():
    """SDCA's logistic bound is capped, in passes, at its value for λ = 1/n where n ≤ SEPARABLE_SHARE·d, and
    not capped elsewhere (more examples than that, or the squared loss)."""
    X, y = mean_scaled_dataset("colon-cancer")  # n = 62, d = 2000
    small = cdlab.Problem(X, y, loss="logistic", lam=0.01 / X.shape[0])
    at_one_over_n = small.with_params(lam=1.0 / X.shape[0])
    cap = auto.separable_cap(small)
    assert cap == pytest.approx(auto.faceoff_work(at_one_over_n)["dual", "uniform"] / small.nnz, rel=1e-12)
    assert cap < auto.faceoff_work(small)["dual", "uniform"] / small.nnz / 10
    assert auto.separable_cap(small.with_params(loss="squared")) == np.inf
    Xn, yn = make_synthetic(400, 40, seed=3, normalize="rows")
    assert auto.separable_cap(cdlab.Problem(Xn, yn, loss="logistic", lam=1e-6)) == np.inf


def test_cg_products_are_capped_by_finite_termination():
    """CG ends within rank + 1 ≤ min(n, d) + 1 iterations a Newton step, however large κ: the prediction never
    exceeds it, and a run on few features at a tiny λ takes no more (deterministic count)."""
    X, labels = make_synthetic(2000, 12, seed=7, normalize="rows")
    problem = cdlab.Problem(X, X @ np.linspace(-1, 1, 12), loss="squared", lam=1e-9)
    assert newton.cg_products(problem) == 13
    res = cdlab.solve(problem, method="newton", solver="cg", tol=1e-10, max_passes=1000)
    assert res.converged and res.trace.steps.iloc[-1] <= 2 * 13  # floating point may take a few more
    logistic = cdlab.Problem(X, labels, loss="logistic", lam=1e-9)
    assert newton.cg_products(logistic) == pytest.approx(newton.newton_iterations(logistic) * 13, rel=1e-12)


@pytest.mark.parametrize("method, schedule", [("sdca", "geometric"), ("sdca", "estimate"), ("newton", "due")])
def test_auto_checkpoints_counts_the_drivers_checkpoints(monkeypatch, method, schedule):
    """costs.auto_checkpoints replays the driver's far rule: a run's checkpoints are its count over the run's
    passes, or up to two more (the near rule aims a checkpoint or two at the pass where the gap reaches tol);
    SDCA checkpointing when its estimate says: costs.due_checkpoints, or one more (a checkpoint the estimate
    brought too early); Newton checkpointing after its due steps: the start's and DUE_CHECKPOINTS, one fewer or
    more."""
    from cdlab.solvers import costs, dual_cd
    from cdlab.solvers._gap_estimate import estimate_schedules

    X, y = mean_scaled_dataset("a9a")
    problem = cdlab.Problem(X, y, loss="logistic", lam=1.0 / X.shape[0])
    assert estimate_schedules(problem)
    if schedule == "geometric":
        monkeypatch.setattr(dual_cd, "estimate_schedules", lambda problem: False)
    res = cdlab.solve(problem, method=method, sampling="permutation" if method == "sdca" else "uniform",
                      tol=1e-6 * 0.35, max_passes=500, **({"solver": "cholesky"} if method == "newton" else {}))
    passes = res.trace.passes.iloc[-1]
    assert res.converged
    if method == "newton":
        predicted = newton.solve_checkpoints(problem, "cholesky")
        assert predicted == newton.DUE_CHECKPOINTS + 1
        assert abs(len(res.trace) - predicted) <= 1
        return
    if schedule == "estimate":
        predicted = costs.due_checkpoints(passes, costs.auto_cap(problem))
        assert predicted <= len(res.trace) <= predicted + 1
        return
    predicted = costs.auto_checkpoints(passes, 0.0, costs.auto_cap(problem))
    assert predicted <= len(res.trace) <= predicted + 2
