"""SDCA's sampled gap estimate (``cdlab.solvers._gap_estimate``): it schedules the checkpoints of a run under
eval_every="auto", and every stop is still the certificate over all examples."""
import numpy as np
import pytest

import cdlab
from cdlab.solvers import _gap_estimate as G
from cdlab.solvers import costs, dual_cd
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
    rows = G.sample_rows(32561)
    assert rows.shape[0] == int(np.ceil(32561 / 16)) and np.all(np.diff(rows) > 0)
    assert np.array_equal(rows, G.sample_rows(32561))
    assert np.array_equal(G.sample_rows(200), np.arange(200))
    assert G.sample_rows(1000).shape[0] == G.ESTIMATE_MIN_ROWS
    problem = _problem()
    runs = [cdlab.solve(problem, method="sdca", sampling="permutation", tol=1e-7, seed=3) for _ in range(2)]
    assert runs[0].trace.drop(columns="time").equals(runs[1].trace.drop(columns="time"))


@pytest.mark.parametrize("loss, name", [("logistic", "a9a"), ("squared", "a9a"), ("logistic", "rcv1_small")])
def test_auto_certifies_at_fewer_checkpoints_than_the_geometric_cadence(monkeypatch, loss, name):
    """The estimate's run stops on the certificate (gap ≤ tol, the same optimum within tol) with fewer
    checkpoints than the geometric cadence, within a pass and a half of its passes."""
    problem = _problem(loss, name=name)
    tol = 1e-6 * abs(cdlab.reference_optimum(problem, tol=1e-9))
    kwargs = dict(method="sdca", sampling="permutation", tol=tol, max_passes=500)
    scheduled = cdlab.solve(problem, **kwargs)
    monkeypatch.setattr(dual_cd, "GapEstimate", lambda problem: None)
    geometric = cdlab.solve(problem, **kwargs)
    for res in (scheduled, geometric):
        assert res.converged and res.trace.gap.iloc[-1] <= tol
        assert res.trace.gap.iloc[-1] == pytest.approx(problem.gap(res.w, res.alpha), rel=1e-12)
    assert abs(scheduled.trace.primal.iloc[-1] - geometric.trace.primal.iloc[-1]) <= 2 * tol
    assert len(scheduled.trace) < len(geometric.trace)
    assert scheduled.trace.passes.iloc[-1] <= geometric.trace.passes.iloc[-1] + 1.5


@pytest.mark.parametrize("value, most_rows", [(0.0, None), (np.inf, 2 + 60 // 10)])
def test_a_wrong_estimate_costs_checkpoints_never_a_wrong_stop(monkeypatch, value, most_rows):
    """An estimate of 0 brings a checkpoint after every pass, one of ∞ one every cap passes: either way the run
    stops only where the certified gap is ≤ tol."""
    problem = _problem("logistic", lam_factor=0.01)
    tol = 1e-6 * abs(cdlab.reference_optimum(problem, tol=1e-9))
    monkeypatch.setattr(G.GapEstimate, "estimate", lambda self, state: value)
    res = cdlab.solve(problem, method="sdca", sampling="permutation", tol=tol, max_passes=60)
    gaps, passes = res.trace.gap.to_numpy(), res.trace.passes.to_numpy()
    assert np.all(gaps[:-1] > tol)
    if res.converged:
        assert gaps[-1] <= tol
    if most_rows is None:
        assert np.allclose(np.diff(passes), 1.0)  # one checkpoint a pass
    else:
        assert costs.auto_cap(problem) == 10.0 and len(res.trace) <= most_rows
        assert np.all(np.diff(passes)[:-1] >= 10.0 - 1e-9)


def test_the_estimate_schedules_only_runs_with_a_tol_under_auto_on_one_thread_without_shrinking():
    problem = _problem()
    assert G.estimate_schedules(problem)
    states = []
    original = dual_cd.DualCDState.checkpointed

    def record(self, row, tol):
        original(self, row, tol)
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
        assert states[0].estimate is None and not states[0].checkpoints_when_due
    X, y = mean_scaled_dataset("heart_scale")
    assert not G.estimate_schedules(cdlab.Problem(X, y, loss="logistic", lam=1.0 / X.shape[0]))
