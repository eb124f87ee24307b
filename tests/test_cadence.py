"""The checkpoint cadence ``eval_every="auto"`` (``cdlab.solvers.budget``): checkpoints at
geometrically growing intervals, aimed at the pass where the duality gap reaches tol."""
import numpy as np
import pytest

import cdlab
from cdlab.solvers import _box_newton, costs
from cdlab.solvers.budget import AUTO_AIM, AUTO_CAP, AUTO_FIRST, AUTO_FLOOR, AUTO_SHARE, Budget
from _helpers import lbfgs_value, mean_scaled_dataset, scaled_problem

# a cheap-step method of each kind: a checkpoint costs about as much as a pass of steps
METHODS = ["sdca", "dual_cd", "primal_cd", "saga"]


START = {"passes": 0.0, "gap": 1.0}


def row(passes, gap):
    return {"passes": passes, "gap": gap}


def far(passes):
    """The interval the geometric bound allows after ``passes`` passes."""
    return min(max(AUTO_FIRST, AUTO_SHARE * passes), AUTO_CAP)


def test_auto_is_the_default_and_a_number_is_kept():
    assert Budget().eval_every == "auto"
    assert Budget(eval_every=0.5).interval(row(0.0, 1.0), row(1.0, 1.0), row(1.5, 0.1)) == 0.5


def test_auto_intervals_grow_geometrically_up_to_the_cap():
    b = Budget(tol=1e-6)
    assert b.interval(START, None, START) == AUTO_FIRST
    # the gap did not fall, since the previous checkpoint nor since the start: the geometric bound
    assert b.interval(START, row(3.0, 1.0), row(4.0, 1.0)) == far(4.0)
    assert b.interval(START, row(3.0, 1.0), row(4.0, 2.0)) == far(4.0)
    assert b.interval(START, row(40.0, 1.0), row(50.0, 1.0)) == AUTO_CAP
    # tol ≤ 0 runs the budget out: nothing to aim at
    assert Budget(tol=0.0).interval(START, row(4.0, 1e-2), row(8.0, 1e-4)) == far(8.0)


def test_auto_aims_at_the_pass_the_gap_rate_predicts():
    b = Budget(tol=1e-6)
    # the gap fell 100× in 4 passes: from 1e-4 it reaches 1e-6 in 4 more
    assert b.interval(START, row(4.0, 1e-2), row(8.0, 1e-4)) == pytest.approx(AUTO_AIM * 4.0)
    # the gap rose since the previous checkpoint: its rate since the start, 10⁴× in 8 passes
    assert b.interval(START, row(4.0, 1e-5), row(8.0, 1e-4)) == pytest.approx(AUTO_AIM * 4.0)
    # predicted beyond the bound: the bound
    assert b.interval(START, row(4.0, 1e-2), row(8.0, 0.9e-2)) == far(8.0)
    # predicted just ahead: no nearer than the floor
    assert b.interval(START, row(4.0, 1e-2), row(8.0, 1.0001e-6)) == pytest.approx(AUTO_FLOOR * far(8.0))


@pytest.mark.parametrize("value", [0, -1.0, np.inf, np.nan, "often", "Auto", None])
def test_a_bad_eval_every_is_one_clear_error(value):
    with pytest.raises(ValueError, match=r"eval_every must be 'auto' or a finite number of passes > 0, got "):
        Budget(eval_every=value)


@pytest.mark.parametrize("method", METHODS)
def test_auto_certifies_the_optimum_with_fewer_checkpoints_and_a_bounded_overshoot(method):
    problem = scaled_problem("a9a", "logistic")
    p_star = lbfgs_value(problem)
    tol = 1e-6 * abs(p_star)
    every_pass = cdlab.solve(problem, method, tol=tol, max_passes=500, eval_every=1.0)
    checkpoints = []
    auto = cdlab.solve(problem, method, tol=tol, max_passes=500, callback=checkpoints.append)
    assert every_pass.converged and auto.converged, (every_pass, auto)
    last = auto.trace.iloc[-1]
    # certified at the same optimum: P − P* ≤ gap ≤ tol, and D ≤ P* (weak duality)
    assert last.gap <= tol and last.primal - p_star <= tol and last.dual <= p_star + 1e-12
    assert problem.primal(auto.w) == last.primal
    # the callback sees every checkpoint, the trace stores every one (far below MAX_TRACE_ROWS)
    assert len(checkpoints) == len(auto.trace)
    assert len(checkpoints) <= len(every_pass.trace) / 2, (auto.trace.passes.tolist(), len(every_pass.trace))
    # the every-pass run stops at its first certified checkpoint T; auto stops within its bound of T
    first = every_pass.trace.passes.iloc[-1]
    bound = min(max(first + AUTO_FIRST, (1 + AUTO_SHARE) * first), first + AUTO_CAP)
    assert last.passes <= bound, (auto.trace.passes.tolist(), first)


def test_auto_traces_are_reproducible_from_the_seed():
    problem = scaled_problem("heart_scale", "logistic")
    a, b = (cdlab.solve(problem, "sdca", tol=1e-9, seed=4).trace.drop(columns="time") for _ in range(2))
    assert len(a) > 3
    assert a.equals(b)


def test_max_time_ends_a_long_checkpoint_interval():
    problem = scaled_problem("heart_scale", "logistic")
    res = cdlab.solve(problem, "sdca", max_passes=np.inf, tol=0, max_time=0.2, eval_every=1e6)
    assert res.status == "max_time"
    assert res.trace.passes.iloc[-1] < 1e6  # stopped between slices, not after one whole interval


@pytest.mark.parametrize("method", ["gd", "agd", "lsvrg", "appa", "sdca"])
def test_auto_intervals_follow_what_a_step_really_costs(monkeypatch, method):
    """A method whose step costs more passes than it declares (gd and agd: a gradient and its line search,
    declared one pass) gets intervals sized by its measured cost: no interval, less its last step, exceeds
    AUTO_CAP by more than half (uneven step costs: line searches, L-SVRG's refreshes, APPA's stage ends);
    at the declared cost gd's came 20 passes apart."""
    X, y = mean_scaled_dataset("heart_scale")
    problem = cdlab.Problem(X, y, loss="logistic", lam=0.01 / X.shape[0])
    monkeypatch.setattr(costs, "CHECKPOINT_OVERHEAD_NS", 0.0)  # the longest interval AUTO_CAP (``auto_cap``)
    tr = cdlab.solve(problem, method, tol=1e-12, max_passes=150).trace
    dp, ds = np.diff(tr.passes.to_numpy()), np.diff(tr.steps.to_numpy())
    assert len(tr) > 8 and np.all(dp - dp / np.maximum(ds, 1) <= 1.5 * AUTO_CAP), tr[["steps", "passes"]]


def test_on_tiny_data_a_checkpoints_fixed_cost_lengthens_the_longest_interval(monkeypatch):
    """Where a checkpoint's fixed cost outweighs AUTO_CAP passes' reads (heart_scale: 3380 nonzeros), the longest
    interval is as many passes as it is worth (``costs.auto_cap``); on larger data it stays AUTO_CAP. A run whose
    gap lingers above tol (the hinge loss at λ = 0.01/n, projected Newton on its singular faces off: a polish
    follows each stalled checkpoint interval, so the cadence would decide how long the gap lingers) then takes
    far fewer checkpoints, certified alike."""
    X, y = mean_scaled_dataset("heart_scale")
    problem = cdlab.Problem(X, y, loss="hinge", lam=0.01 / X.shape[0])
    cap = costs.auto_cap(problem)
    assert cap == pytest.approx(AUTO_CAP * costs.CHECKPOINT_OVERHEAD_NS / (costs.CHECKPOINT_NS_PER_NNZ * problem.nnz))
    rng = np.random.default_rng(0)
    larger = cdlab.Problem(rng.standard_normal((400, 100)), np.ones(400), loss="hinge", lam=1e-3)  # 40 000 nonzeros
    assert cap > 5 * AUTO_CAP and costs.auto_cap(larger) == AUTO_CAP
    tol = 1e-6 * abs(cdlab.reference_optimum(problem, tol=1e-10, max_passes=50_000))
    runs = {}
    monkeypatch.setattr(_box_newton, "BOX_NEWTON_MAX_EXAMPLES", 0)
    for overhead in (costs.CHECKPOINT_OVERHEAD_NS, 0.0):
        monkeypatch.setattr(costs, "CHECKPOINT_OVERHEAD_NS", overhead)
        runs[overhead] = cdlab.solve(problem, "sdca", "permutation", shrinking=True, tol=tol, max_passes=5000)
    long, short = runs.values()
    assert long.converged and short.converged and long.trace.gap.iloc[-1] <= tol
    assert len(long.trace) < len(short.trace) / 3, (len(long.trace), len(short.trace))
    intervals = np.diff(long.trace.passes.to_numpy())
    # a chunk's steps are priced at the active rows' mean length when it starts, and the epochs inside it shrink
    # and restore the set: the longest interval was 92.6 passes against a cap of 91.1 when measured
    assert 2 * AUTO_CAP < intervals.max() <= cap + 2.0


def test_sdca_with_shrinking_checkpoints_first_after_its_own_interval(real_data):
    """SDCA with shrinking's first checkpoint after the start comes SHRUNK_FIRST_INTERVAL passes in, the cadence
    doubling from there (``base.State.first_interval``), where its epochs have not found the certificate due
    before: then the run certifies earlier, at the epoch that found it (tol = 0.3·P: at 3 passes); a state without
    its own first interval starts at AUTO_FIRST."""
    from cdlab.solvers._shrinking import SHRUNK_FIRST_INTERVAL
    X, y = real_data("phishing")
    problem = cdlab.Problem(X, y, loss="hinge", lam=1.0 / X.shape[0])
    run = cdlab.solve(problem, "sdca", sampling="permutation", shrinking=True, tol=1e-9, seed=0, max_passes=500)
    passes = run.trace.passes.tolist()
    assert run.converged and passes[1] == pytest.approx(SHRUNK_FIRST_INTERVAL, rel=0.05)
    assert passes[2] == pytest.approx(2 * SHRUNK_FIRST_INTERVAL, rel=0.05)
    loose = cdlab.solve(problem, "sdca", sampling="permutation", shrinking=True, tol=0.3 * problem.primal(run.w),
                        seed=0, max_passes=500)
    assert loose.converged and len(loose.trace) == 2 and loose.trace.passes.iloc[1] < SHRUNK_FIRST_INTERVAL
    budget = Budget(tol=1e-9)
    assert budget.interval(START, None, START) == AUTO_FIRST
    assert budget.interval(START, None, START, AUTO_CAP, first_interval=4.0) == 4.0
