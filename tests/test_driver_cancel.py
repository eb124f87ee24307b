"""The driver cuts each checkpoint interval into slices of about ``SLICE_NNZ`` nonzeros and checks a
``cancel`` event between them: a cancel stops a run within a slice, and the slices depend on the data
only, so a run's trace does not depend on whether it could be cancelled."""
import threading

import numpy as np
import pytest

import cdlab
from cdlab.data import make_synthetic
from cdlab.solvers import driver

COLUMNS = ["steps", "nnz_touched", "passes", "data_passes", "primal", "dual", "gap"]


def small_problem(loss):
    X, y = make_synthetic(40, 8, density=0.6, seed=3)
    return cdlab.Problem(X, y, loss=loss, lam=1e-2)


class Never:
    """A cancel that is never set and counts how often it was asked."""

    def __init__(self):
        self.asked = 0

    def is_set(self):
        self.asked += 1
        return False


@pytest.mark.parametrize("method", sorted(cdlab.METHODS))
def test_a_cancellable_run_has_the_trace_of_one_without_cancel(method, monkeypatch):
    spec = cdlab.METHODS[method]
    loss = "logistic" if "logistic" in spec.losses else sorted(spec.losses)[0]
    sampling = "importance" if "importance" in spec.samplings else "uniform"  # its draws depend on the cuts
    p = small_problem(loss)
    kw = dict(method=method, sampling=sampling, max_passes=3, tol=0, seed=1, eval_every=1.0)
    monkeypatch.setattr(driver, "SLICE_NNZ", 20)  # a few steps per slice on this small problem
    plain = cdlab.solve(p, **kw)
    never = Never()
    watched = cdlab.solve(p, cancel=never, **kw)
    assert watched.status == plain.status
    np.testing.assert_array_equal(watched.trace[COLUMNS].to_numpy(), plain.trace[COLUMNS].to_numpy())
    np.testing.assert_array_equal(watched.w, plain.w)
    # asked between the slices too, not only once per checkpoint
    assert never.asked > len(plain.trace)


def test_a_cancel_set_mid_interval_stops_the_run_within_the_interval(monkeypatch):
    p = small_problem("logistic")
    monkeypatch.setattr(driver, "SLICE_NNZ", 50)

    class AfterAsked(Never):
        def is_set(self):
            super().is_set()
            return self.asked > 5  # set a few slices into the first checkpoint interval

    res = cdlab.solve(p, method="sdca", max_passes=50, tol=0, eval_every=40.0, cancel=AfterAsked())
    assert res.status == "cancelled"
    assert 0 < res.trace.steps.iloc[-1] < 40.0 * p.n_samples  # one interval is 40 passes of n steps


def test_cancel_from_another_thread_ends_a_long_interval_early(monkeypatch):
    p = small_problem("logistic")
    monkeypatch.setattr(driver, "SLICE_NNZ", 10_000)
    ev = threading.Event()
    timer = threading.Timer(0.3, ev.set)
    timer.start()
    res = cdlab.solve(p, method="sdca", max_passes=1e7, tol=0, eval_every=1e6, cancel=ev)
    timer.cancel()
    assert res.status == "cancelled"
    assert res.trace.passes.iloc[-1] < 1e6  # not one whole checkpoint interval
