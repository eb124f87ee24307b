"""n_jobs (issue 16): SDCA / dual CD as PASSCoDe-Wild on two threads, and the parallel
certificate pass, reach the same certified optimum as one thread; the certificate is
P(w(α)) − D(α) at the returned α; bad n_jobs and methods without a parallel mode are refused."""
import threading

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import cdlab
from cdlab.cli import main as cdlab_main
from cdlab.estimators import CDClassifier
from _helpers import lbfgs_value, real_data, sparse_problem
from cdlab.solvers import auto
from cdlab.solvers._kernels import certificate_sweep, parallel_certificate_sweep
from cdlab.solvers._threads import row_blocks
from cdlab.solvers.dual_cd import DualCDState
from cdlab.solvers.driver import parallel_methods
from independent import dual_optimum, dual_value, primal_value, w_of_alpha

TOL = 1e-8


def problem_on(name, loss, l1=0.0):
    X, y = real_data(name)
    if loss == "squared":  # a regression target from the same rows
        y = X @ np.linspace(-1.0, 1.0, X.shape[1]) + 0.1 * y
    return cdlab.Problem(X, y, loss=loss, lam=1.0 / X.shape[0], l1=l1)


def numpy_certificate(problem, alpha):
    """(P(w(α)), D(α), w(α)) written out in numpy from α alone (theory.md §1), nothing from cdlab's kernels."""
    X, y, lam, mu = sp.csr_matrix(problem.X), problem.y, problem.lam, problem.l1
    w = w_of_alpha(X, alpha, lam, mu)
    return primal_value(X, y, problem.loss, lam, mu, w), dual_value(X, y, problem.loss, lam, mu, alpha), w


def check_same_optimum(problem, **kw):
    """n_jobs=2 ends certified at gap ≤ TOL, and its P is within both gaps of the one-thread run's."""
    one = cdlab.solve(problem, tol=TOL, max_passes=3000, **kw)
    two = cdlab.solve(problem, tol=TOL, max_passes=3000, n_jobs=2, **kw)
    g1, g2 = one.trace.iloc[-1], two.trace.iloc[-1]
    assert one.converged and two.converged, (one, two)
    assert g2.gap <= TOL and two.trace.attrs["n_jobs"] == 2
    # both certified: P* lies in [D, P] of each, so the two P differ by at most the larger gap
    assert abs(g2.primal - g1.primal) <= max(g1.gap, g2.gap) + 1e-15, (g1.primal, g2.primal)
    return two


@pytest.mark.parametrize("name", ["a9a", "reuters_moneyfx"])
@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_two_threads_reach_the_independent_optimum(name, loss):
    problem = problem_on(name, loss)
    two = check_same_optimum(problem, method="sdca", sampling="permutation")
    p_ref = lbfgs_value(problem)
    last = two.trace.iloc[-1]
    # the certified interval [D, P] holds the independent optimum (to L-BFGS-B's precision)
    assert last.dual - 1e-12 <= p_ref <= last.primal + 1e-8 * abs(p_ref), (last.dual, p_ref, last.primal)


def test_two_threads_certify_the_hinge_against_the_independent_dual():
    problem = problem_on("a9a", "hinge").with_params(lam=10.0 / 2000)
    two = check_same_optimum(problem, method="sdca", sampling="permutation")
    d_star = dual_optimum(problem.X, problem.y, "hinge", problem.lam)
    last = two.trace.iloc[-1]
    assert last.dual <= d_star + 1e-12 and last.primal - d_star <= 2 * TOL, (last.primal, last.dual, d_star)


@pytest.mark.parametrize("method,sampling,options", [
    ("sdca", "uniform", {}),  # i.i.d. draws: both threads may step one example in a chunk
    ("dual_cd", "importance", {"update": "gradient"}),  # the θ/q_i gradient step
    ("dual_cd", "uniform", {}),  # the default line search
])
def test_other_samplings_and_dual_cd_certify_on_two_threads(method, sampling, options):
    check_same_optimum(problem_on("a9a", "logistic"), method=method, sampling=sampling, **options)


def test_elastic_net_on_two_threads():
    """Prox-SDCA: w = S_{μ/λ}(v) is recomputed from α at each checkpoint too."""
    problem = problem_on("reuters_moneyfx", "logistic", l1=1e-4)
    two = check_same_optimum(problem, method="sdca", sampling="permutation")
    assert np.any(two.w == 0.0) and np.any(two.w != 0.0)


@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared"])
def test_reported_certificate_is_that_of_w_of_alpha(loss):
    """At checkpoints after 1, 2 and 5 passes: the trace's P, D and gap are P(w(α)), D(α) and their
    difference at the returned α, recomputed here in numpy, and the returned w is w(α)."""
    problem = problem_on("a9a", loss)
    for passes in (1, 2, 5):
        res = cdlab.solve(problem, method="sdca", sampling="permutation", max_passes=passes, tol=0.0, n_jobs=2)
        last = res.trace.iloc[-1]
        primal, dual, w = numpy_certificate(problem, res.alpha)
        np.testing.assert_allclose(res.w, w, rtol=0, atol=1e-12 * max(1.0, np.abs(w).max()))
        scale = max(1.0, abs(primal))
        assert abs(last.primal - primal) <= 1e-12 * scale and abs(last.dual - dual) <= 1e-12 * scale
        assert abs(last.gap - (primal - dual)) <= 1e-11 * scale, (last.gap, primal - dual)


def test_the_certified_point_is_recomputed_from_alpha_not_read_from_the_shared_v():
    """Wild updates that race lose some of their adds to v (on all of a9a, two threads left
    |v − v(α)| near 1 after one epoch): after the resync, iterate() returns w(α) whatever v held. A lost
    update is simulated by corrupting v."""
    problem = problem_on("reuters_moneyfx", "logistic", l1=1e-4)
    state = DualCDState(problem, "permutation", np.random.default_rng(0), update="exact", n_jobs=2)
    state.run(2 * problem.n_samples)
    state.v += np.random.default_rng(1).standard_normal(problem.n_features)
    touched = state.nnz_touched
    state.synchronize()  # what the driver does after the steps, before each checkpoint
    assert state.nnz_touched == touched + problem.nnz  # the resync's pass over X is counted
    w, alpha = state.iterate()
    _, _, w_of_alpha = numpy_certificate(problem, alpha)
    np.testing.assert_allclose(w, w_of_alpha, rtol=0, atol=1e-12)


def test_work_counts_are_summed_over_threads():
    """A random permutation per epoch visits every row once, and each checkpoint's resync reads X
    once: after k epochs and c checkpoint intervals, (k + c)·nnz nonzeros."""
    problem = problem_on("a9a", "logistic")
    res = cdlab.solve(problem, method="sdca", sampling="permutation", max_passes=4, tol=0.0, n_jobs=2)
    trace = res.trace
    epochs = trace.steps / problem.n_samples
    assert (epochs == np.round(epochs)).all() and trace.steps.iloc[-1] > 0
    np.testing.assert_array_equal(trace.nnz_touched, (epochs + np.arange(len(trace))) * problem.nnz)


def test_parallel_certificate_pass_matches_the_serial_one():
    """Both forms of the sweep, including the primal methods' α = α(w), agree to rounding."""
    problem = sparse_problem(n=300, d=50, loss="logistic", lam=1e-2)
    X, rng = problem.X, np.random.default_rng(0)
    w, alpha0 = rng.standard_normal(problem.n_features), rng.standard_normal(problem.n_samples)
    for from_w in (False, True):
        out = []
        for parallel in (False, True):
            alpha, z, v = alpha0.copy(), np.empty(problem.n_samples), np.zeros(problem.n_features)
            args = (*problem.csr_arrays, problem.y, problem.loss_code, problem.s, w, alpha, from_w, z, v)
            if parallel:
                parallel_certificate_sweep(*args, row_blocks(X.indptr, 3), None)
            else:
                certificate_sweep(*args, None)
            out.append((alpha, z, v))
        for serial, par in zip(*out):
            np.testing.assert_allclose(par, serial, rtol=1e-13, atol=1e-13)


def test_parallel_certificate_pass_sums_full_rows_as_problem_does():
    """On rows read as full (``_kernels.full_rows``) the parallel sweep's margins are bit for bit
    ``Problem.margins`` (both by ``row_dot``'s one vectorised sum, ``full_dot``), as the serial sweep's are."""
    from cdlab.solvers._kernels import full_rows

    rng = np.random.default_rng(2)
    X = rng.standard_normal((120, 103))
    X[rng.random(X.shape) < 0.002] = 0.0  # a few rows not full
    problem = cdlab.Problem(X, np.where(X[:, 0] >= 0, 1.0, -1.0), loss="logistic", lam=1e-2)
    assert full_rows(problem) is True and problem.data.full_rows_share < 1.0
    w = rng.standard_normal(103)
    alpha, z, v = np.empty(120), np.empty(120), np.zeros(103)
    args = (*problem.csr_arrays, problem.y, problem.loss_code, problem.s, w, alpha, True, z, v)
    parallel_certificate_sweep(*args, row_blocks(problem.X.indptr, 3), True)
    assert np.array_equal(z, problem.margins(w))
    np.testing.assert_allclose(z, problem.X @ w, rtol=1e-12, atol=1e-12)


def test_row_blocks_cut_rows_by_nonzeros():
    indptr = np.array([0, 5, 6, 7, 8, 20])
    for k in (1, 2, 3, 7):
        bounds = row_blocks(indptr, k)
        assert bounds[0] == 0 and bounds[-1] == 5 and len(bounds) == k + 1 and np.all(np.diff(bounds) >= 0)


def test_one_thread_is_the_serial_run_bit_for_bit():
    problem = problem_on("a9a", "logistic")
    runs = [cdlab.solve(problem, method="sdca", max_passes=3, tol=0.0, seed=4, **kw) for kw in ({}, {"n_jobs": 1})]
    pd.testing.assert_frame_equal(runs[0].trace.drop(columns="time"), runs[1].trace.drop(columns="time"))
    np.testing.assert_array_equal(runs[0].alpha, runs[1].alpha)
    np.testing.assert_array_equal(runs[0].w, runs[1].w)
    last = runs[1].trace.iloc[-1]
    assert problem.primal(runs[1].w) == last.primal and problem.gap(runs[1].w, runs[1].alpha) == last.gap


def test_concurrent_two_thread_runs_from_python_threads():
    """The page runs jobs in Python threads: two n_jobs=2 runs at once both end certified."""
    problem = problem_on("reuters_moneyfx", "logistic")
    results = [None, None]

    def work(k):
        results[k] = cdlab.solve(problem, method="sdca", sampling="permutation", tol=TOL, max_passes=3000,
                                 seed=k, n_jobs=2)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is not None and r.converged and r.trace.gap.iloc[-1] <= TOL for r in results), results


@pytest.mark.parametrize("bad", [0, -3, 1.5, "2", True, None])
def test_bad_n_jobs_is_one_clear_error(bad):
    problem = sparse_problem(loss="logistic", lam=1e-2)
    with pytest.raises(ValueError, match=r"^n_jobs must be an integer ≥ 1, got "):
        cdlab.solve(problem, method="sdca", n_jobs=bad)
    with pytest.raises(ValueError, match=r"^CDClassifier: n_jobs must be an integer ≥ 1, got "):
        CDClassifier(n_jobs=bad).fit(problem.X, problem.y)


def test_a_method_without_a_parallel_mode_refuses_two_threads():
    problem = sparse_problem(loss="logistic", lam=1e-2)
    assert parallel_methods() == ["dual_cd", "newton", "sdca"]
    for method in sorted(set(cdlab.METHODS) - set(parallel_methods())):
        with pytest.raises(ValueError, match=rf"^method '{method}' has no parallel mode, so n_jobs must be 1, "
                                             r"got 2; methods with one: \['dual_cd', 'newton', 'sdca'\]$"):
            cdlab.solve(problem, method=method, n_jobs=2)
        cdlab.solve(problem, method=method, n_jobs=1, max_passes=1)  # one thread is every method's


@pytest.mark.parametrize("shape,picked", [((40, 4000), "primal_cd"), ((400, 40), "sdca")])
def test_auto_with_two_threads_uses_them_only_where_its_pick_can(shape, picked):
    """A pick without a parallel mode runs on one thread, and so does an SDCA pick, whose parallel mode measured
    slower than one thread (``auto.SERIAL_PICKS``); the reason says which. (l1 > 0: Newton, which the squared
    loss with d = 400 would otherwise get, takes no l1; Newton's threads: test_auto, test_newton.)"""
    problem = sparse_problem(*shape, density=0.05, loss="squared", lam=1e-2, l1=1e-4)
    res = cdlab.solve(problem, method="auto", n_jobs=2, tol=TOL, max_passes=3000)
    assert res.converged and res.method == picked and res.trace.attrs["n_jobs"] == 1
    if picked in parallel_methods():
        assert picked in auto.SERIAL_PICKS
        assert f"n_jobs=2 not used: {picked}'s parallel mode (PASSCoDe-Wild) measured slower" in res.auto_reason
    else:
        assert f"n_jobs=2 not used: {picked} has no parallel mode" in res.auto_reason


def test_estimator_and_cli_take_n_jobs(capsys, tmp_path):
    problem = problem_on("a9a", "logistic")
    clf = CDClassifier(lam=problem.lam, tol=TOL, n_jobs=2, fit_intercept=False).fit(problem.X, problem.y)
    assert clf.gap_[0] <= TOL and clf.traces_[0].attrs["n_jobs"] == 2
    assert cdlab_main(["solve", "heart_scale", "--n-jobs", "2", "--tol", "1e-9", "--no-progress",
                           "--max-passes", "3000"]) == 0
    assert cdlab_main(["solve", "heart_scale", "--method", "primal_cd", "--n-jobs", "2"]) == 2
    err = capsys.readouterr().err
    assert "cdlab solve: error: method 'primal_cd' has no parallel mode" in err
    import numba  # the library's n_jobs rule: at most numba's threads, checked before the data is read
    assert cdlab_main(["solve", "no-such-file.svm", "--n-jobs", str(numba.config.NUMBA_NUM_THREADS + 1)]) == 2
    assert "n_jobs must be at most" in capsys.readouterr().err


@pytest.mark.parametrize("layer,serialised", [("workqueue", True), ("omp", False), ("tbb", False)])
def test_launches_are_serialised_only_under_a_layer_that_is_not_thread_safe(monkeypatch, layer, serialised):
    """numba's workqueue layer cannot take launches from two Python threads at once: under it a
    second parallel section waits for the first; under omp or tbb it does not."""
    from cdlab.solvers import _threads
    monkeypatch.setattr(_threads, "_layer", layer)
    inside, release, second_in = threading.Event(), threading.Event(), threading.Event()

    def first():
        with _threads.parallel_section(2):
            inside.set()
            release.wait(30)

    def second():
        with _threads.parallel_section(2):
            second_in.set()

    a = threading.Thread(target=first)
    a.start()
    assert inside.wait(30)
    b = threading.Thread(target=second)
    b.start()
    # serialised: it cannot enter while the first holds the lock (0.5 s of trying); else it enters (≤ 30 s)
    entered_while_held = second_in.wait(0.5 if serialised else 30)
    release.set()
    a.join(30)
    b.join(30)
    assert second_in.is_set() and entered_while_held is not serialised


def test_n_jobs_is_at_most_numbas_threads_and_minus_one_means_all():
    """More blocks than threads would only buy memory (a length-d buffer per block): refused by name,
    before any allocation; -1 is every thread numba may use (scikit-learn's convention)."""
    import numba

    from cdlab.solvers._threads import check_n_jobs
    most = numba.config.NUMBA_NUM_THREADS
    problem = sparse_problem(loss="logistic", lam=1e-2)
    for bad in (most + 1, 10 ** 13):
        with pytest.raises(ValueError, match=rf"^n_jobs must be at most {most}, the threads numba may use"):
            cdlab.solve(problem, method="sdca", n_jobs=bad)
    assert check_n_jobs(-1) == most and check_n_jobs(np.int64(-1)) == most
    with pytest.raises(ValueError, match=r"^n_jobs must be an integer ≥ 1, got "):
        check_n_jobs(np.array([-1, 2]))
