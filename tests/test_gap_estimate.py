"""SDCA's sampled gap estimate (``cdlab.solvers._gap_estimate``): it schedules the checkpoints of a run under
eval_every="auto", and every stop is still the certificate over all examples."""
import numpy as np
import pytest

import cdlab
from cdlab.solvers import _gap_estimate as G
from cdlab.solvers import costs, dual_cd
from cdlab.solvers.budget import far_interval
from _helpers import mean_scaled_dataset


def _problem(loss="logistic", l1=0.0, name="a9a", lam_factor=1.0):
    X, y = mean_scaled_dataset(name)
    if loss == "squared":
        y = X @ np.linspace(-1.0, 1.0, X.shape[1]) + 0.1 * np.cos(np.arange(X.shape[0]))
    return cdlab.Problem(X, y, loss=loss, lam=lam_factor / X.shape[0], l1=l1)


def _state_after(problem, passes, seed=0):
    """An SDCA state (permutation) after ``passes`` passes of steps, with no checkpoint."""
    state = dual_cd.DualCDState(problem, "permutation", np.random.default_rng(seed), update="exact")
    state.run(int(passes * problem.n_samples))
    return state


@pytest.mark.parametrize("loss, l1", [("logistic", 0.0), ("squared", 0.0), ("hinge", 0.0), ("logistic", 1e-4)])
def test_over_every_example_the_estimate_is_the_certified_gap(monkeypatch, loss, l1):
    """With every example in the sample the estimate is Problem's gap at the state's (w, α), up to the drift of
    the state's v from Xᵀα/(λn) (rounding): a cross-check of the formula against Problem's certificate."""
    problem = _problem(loss, l1)
    state = _state_after(problem, 2.5)
    monkeypatch.setattr(G, "ESTIMATE_MIN_ROWS", problem.n_samples)
    estimate = G.GapEstimate(problem)
    assert estimate.rows.shape[0] == problem.n_samples
    gap = problem.gap(state.w, state.alpha)
    assert gap > 1e-6
    assert estimate.estimate(state) == pytest.approx(gap, rel=1e-9)


def test_the_sample_is_a_fixed_sixteenth_and_leaves_the_runs_generator_alone():
    """The sample depends on n only; building and reading the estimate draws nothing from the run's generator:
    the steps after a scheduled checkpoint are those after an unscheduled one."""
    rows = G.sample_rows(32561)
    assert rows.shape[0] == int(np.ceil(32561 / 16)) and np.all(np.diff(rows) > 0)
    assert np.array_equal(rows, G.sample_rows(32561))
    assert np.array_equal(G.sample_rows(200), np.arange(200))
    assert G.sample_rows(1000).shape[0] == G.ESTIMATE_MIN_ROWS
    problem = _problem()
    alphas = []
    for scheduled in (True, False):
        state = _state_after(problem, 1.5, seed=4)
        state.auto_cadence = scheduled
        row = {"passes": state.nnz_touched / problem.nnz, "gap": 1.0, "dual": 0.0, "nnz_touched": state.nnz_touched}
        state.checkpointed(row, 1e-6)
        assert (state.estimate is not None) is scheduled and state.checkpoints_when_due is scheduled
        if scheduled:
            state.certificate_due(1e-6)
        state.run(problem.n_samples)
        alphas.append(state.alpha.copy())
    assert np.array_equal(alphas[0], alphas[1])


@pytest.mark.parametrize("loss, name", [("logistic", "a9a"), ("squared", "a9a"), ("logistic", "rcv1_small")])
def test_auto_certifies_at_fewer_checkpoints_than_the_geometric_cadence(monkeypatch, loss, name):
    """The estimate's run stops on the certificate (gap ≤ tol, the same optimum within tol) with fewer
    checkpoints than the geometric cadence, within a pass and a half of its passes."""
    problem = _problem(loss, name=name)
    tol = 1e-6 * abs(cdlab.reference_optimum(problem, tol=1e-9))
    kwargs = dict(method="sdca", sampling="permutation", tol=tol, max_passes=500)
    scheduled = cdlab.solve(problem, **kwargs)
    monkeypatch.setattr(dual_cd, "estimate_schedules", lambda problem: False)
    geometric = cdlab.solve(problem, **kwargs)
    for res in (scheduled, geometric):
        assert res.converged and res.trace.gap.iloc[-1] <= tol
        assert res.trace.gap.iloc[-1] == pytest.approx(problem.gap(res.w, res.alpha), rel=1e-12)
    assert abs(scheduled.trace.primal.iloc[-1] - geometric.trace.primal.iloc[-1]) <= 2 * tol
    assert len(scheduled.trace) < len(geometric.trace)
    assert scheduled.trace.passes.iloc[-1] <= geometric.trace.passes.iloc[-1] + 1.5


# 9e-13: below the run's tol (1e-12), above rounding (ESTIMATE_ROUNDING × the start's gap, log 2)
@pytest.mark.parametrize("value", [9e-13, 1e300, 1e-300, 0.0, np.inf, np.nan])
def test_a_wrong_estimate_costs_checkpoints_within_the_caps_bound(monkeypatch, value):
    """A constant estimate carries no rate: calibrated by a checkpoint, its prediction is that checkpoint's gap
    (> tol), so the next is due at the cap; before the first checkpoint a tiny one brings it after a pass. An
    estimate of 0, at rounding level (≤ ESTIMATE_ROUNDING × the start's gap) or not finite says nothing: the
    geometric bound's intervals (budget.far_interval)."""
    problem = _problem("logistic", lam_factor=0.01)  # not certified within the budget at this tol
    monkeypatch.setattr(G.GapEstimate, "estimate", lambda self, state: value)
    res = cdlab.solve(problem, method="sdca", sampling="permutation", tol=1e-12, max_passes=60)
    assert res.status == "max_passes"
    passes = res.trace.passes.to_numpy()
    intervals = np.diff(passes)[:-1]  # the last one ends at the budget
    cap = costs.auto_cap(problem)
    assert cap == 10.0
    if value == 9e-13:
        assert intervals[0] == pytest.approx(1.0) and np.allclose(intervals[1:], cap)
    elif value == 1e300:
        assert np.allclose(intervals, cap)
    else:
        assert np.allclose(intervals, [far_interval(p, cap) for p in passes[:-2]])
    assert len(intervals) >= 4


@pytest.mark.parametrize("method, options", [("sdca", {"sampling": "permutation"}), ("sdca", {}),
                                             ("newton", {"solver": "cholesky"})])
def test_an_unbounded_pass_budget_is_still_certified(method, options):
    """max_passes=inf with a tol: the due loop's budget stays finite arithmetic (n ≥ 512, estimate scheduled)."""
    problem = _problem()
    res = cdlab.solve(problem, method=method, tol=1e-6, max_passes=np.inf, **options)
    assert res.converged and res.trace.gap.iloc[-1] <= 1e-6


def test_the_pass_budget_counts_nonzeros_read_under_importance_sampling():
    """Importance sampling draws the long rows more often: steps / n lags behind nonzeros read / nnz, and the
    budget is the latter, as for every other run."""
    problem = _problem("logistic", name="rcv1_small", lam_factor=0.01)
    res = cdlab.solve(problem, method="dual_cd", sampling="importance", tol=1e-14, max_passes=5)
    assert res.status == "max_passes"
    assert res.trace.passes.iloc[-1] <= 5.0 + 0.05
    assert res.trace.data_passes.iloc[-1] < res.trace.passes.iloc[-1]


def test_an_estimate_informs_above_rounding_of_the_runs_scale():
    """The start's certified gap and the largest estimate set the scale; an estimate at most ESTIMATE_ROUNDING of
    it, 0 or not finite says nothing, and a checkpoint takes no ratio from it."""
    estimate = G.GapEstimate(_problem())
    assert estimate.informs(1e-30)  # no scale yet
    estimate.checkpointed(None, {"passes": 0.0, "gap": 0.5, "nnz_touched": 0}, 1e-6)
    floor = G.ESTIMATE_ROUNDING * 0.5
    assert estimate.informs(1e-3) and estimate.informs(2 * floor)
    for value in (floor, 1e-17, 0.0, np.inf, np.nan):
        assert not estimate.informs(value), value
    state = _state_after(_problem(), 2.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(G.GapEstimate, "estimate", lambda self, state: 1e-17)
        estimate.checkpointed(state, {"passes": 2.0, "gap": 6e-4, "nnz_touched": state.nnz_touched}, 1e-6)
    assert estimate.ratio == 1.0


def test_the_estimate_schedules_only_runs_with_a_tol_under_auto_on_one_thread_without_shrinking():
    problem = _problem()
    assert G.estimate_schedules(problem)
    states = []
    original = dual_cd.DualCDState.checkpointed

    def record(self, row, tol, margins=None):
        original(self, row, tol, margins)
        states.append(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dual_cd.DualCDState, "checkpointed", record)
        for kwargs, scheduled in (({"tol": 1e-6}, True), ({"tol": 0.0, "max_passes": 3}, False),
                                  ({"tol": 1e-6, "eval_every": 1.0}, False),
                                  ({"tol": 1e-6, "n_jobs": 2}, False)):
            states.clear()
            cdlab.solve(problem, method="sdca", sampling="permutation", **kwargs)
            assert states[0].checkpoints_when_due is scheduled, kwargs
        hinge = problem.with_params(loss="hinge")
        states.clear()
        cdlab.solve(hinge, method="sdca", sampling="permutation", shrinking=True, tol=1e-6)
        assert not states[0].schedulable and states[0].estimate is None and not states[0].checkpoints_when_due
    X, y = mean_scaled_dataset("heart_scale")
    assert not G.estimate_schedules(cdlab.Problem(X, y, loss="logistic", lam=1.0 / X.shape[0]))
