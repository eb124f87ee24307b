"""The solver contract (cdlab.solvers.base): what a MethodSpec declares matches what its state does."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import cdlab
from cdlab.solvers import METHODS
from cdlab.solvers.base import State

PROBE = cdlab.Problem(np.array([[1.0, 0.5], [0.5, 1.0], [1.0, 1.0]]), [1.0, -1.0, 1.0], loss="logistic", lam=1.0)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_axis_is_the_side_the_state_samples(name):
    """A method with custom probabilities takes them over its axis (3 examples or 2 features here)
    and refuses the other length; a method without any takes neither."""
    spec = METHODS[name]
    built = {}
    for axis, size in (("examples", 3), ("features", 2)):
        try:
            spec.make(PROBE, np.full(size, 1.0 / size), np.random.default_rng(0), **spec.options)
            built[axis] = True
        except ValueError:
            built[axis] = False
    if "custom" in spec.samplings:
        assert built == {"examples": spec.axis == "examples", "features": spec.axis == "features"}
    else:  # refused before any state is built
        with pytest.raises(ValueError, match="does not accept custom sampling probabilities"):
            spec.check(PROBE, np.full(3, 1.0 / 3), {})


@pytest.mark.parametrize("name", sorted(METHODS))
def test_options_are_the_states_keywords_with_their_defaults(name):
    """Each option default is written once, in the state's signature; the spec reads it from there."""
    spec = METHODS[name]
    params = inspect.signature(spec.make).parameters
    for option, default in spec.options.items():
        assert params[option].default == default or params[option].default is default
    state = spec.make(PROBE, "uniform", np.random.default_rng(0), **spec.options)
    assert isinstance(state, State)
    assert state.steps == 0  # (APPA's primal-to-dual start already read the data: its nnz are counted)
    # a method that samples nothing takes full-gradient steps, each reading X at least once (newton's CG path:
    # 2 passes per CG iteration), so at most one per pass; a sampling method's steps read a part of X
    assert (spec.axis == "none") == (state.steps_per_pass <= 1)
    res = cdlab.solve(PROBE, name, max_passes=2, tol=0)
    assert res.options == spec.options


def test_an_unknown_option_names_what_the_method_accepts():
    with pytest.raises(ValueError, match=r"method 'accel_appa' got unknown option\(s\) \['kappa_decay'\]"):
        cdlab.solve(PROBE, "accel_appa", kappa_decay=0.5)
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['update'\]; it accepts none"):
        cdlab.solve(PROBE, "primal_cd", update="gradient")
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['update'\]; it accepts \['shrinking'\]"):
        cdlab.solve(PROBE, "sdca", update="gradient")


def test_first_is_the_first_row_at_eps():
    res = cdlab.solve(PROBE, "sdca", max_passes=30, tol=1e-12)
    gaps = res.trace.gap.to_numpy()
    eps = float(np.median(gaps))
    row = res.first(eps)
    k = int(np.flatnonzero(gaps <= eps)[0])
    assert row.gap <= eps and row.steps == res.trace.steps.iloc[k] and (gaps[:k] > eps).all()
    assert res.first(0.0, "gap") is None or res.first(0.0).gap == 0.0
    assert res.first(-1.0) is None


@pytest.mark.parametrize("name", sorted(METHODS))
def test_a_method_refuses_a_loss_exactly_where_its_spec_says(name):
    """MethodSpec.loss_refusal (its loss set and its option-dependent rule) is the whole story: with its
    default options a method builds its state for every loss the spec takes and is refused, before any
    state is built, for every loss it does not. The page asks only the spec."""
    from cdlab.losses import LOSSES
    spec = METHODS[name]
    for loss in LOSSES:
        problem = PROBE.with_params(loss=loss)
        refusal = spec.loss_refusal(loss)
        try:
            spec.check(problem, "uniform", {})
            checked = ""
        except ValueError as exc:
            checked = str(exc)
        assert bool(checked) == bool(refusal), (loss, checked, refusal)
        if not refusal:
            spec.make(problem, "uniform", np.random.default_rng(0), **spec.options)  # no refusal left in make


# an option's old name, its new name and a value for each: accepted for a release, with a FutureWarning
RENAMED = [("dual_cd", "step", "update", "exact"), ("sgd", "step", "schedule", "constant"),
           ("gd", "step", "step_size", 0.1), ("sag", "step", "step_size", "L_max"),
           ("saga", "step", "step_size", "L_max"), ("svrg", "step", "step_size", "L_max")]


def test_each_step_concept_has_one_name():
    """dual_cd's update rule is ``update``, SGD's schedule ``schedule`` (its size ``eta0``), the step size of
    gd, sag, saga and svrg ``step_size``; no method takes ``step`` under its own name any more."""
    assert {(m, old, new) for m, old, new, _ in RENAMED} == {
        (m, old, new) for m, spec in METHODS.items() for old, new in spec.renamed.items()}
    for name, spec in METHODS.items():
        assert "step" not in spec.options, name
        assert set(spec.renamed.values()) <= set(spec.options), name


@pytest.mark.parametrize("method,old,new,value", RENAMED, ids=[r[0] for r in RENAMED])
def test_an_old_option_name_warns_and_runs_as_the_new_one(method, old, new, value):
    problem = cdlab.Problem(*cdlab.load_dataset("heart_scale"), loss="logistic", lam=1e-2)
    extra = {"eta0": 0.1} if method == "sgd" else {}
    current = cdlab.solve(problem, method, max_passes=3, seed=1, **{new: value}, **extra)
    with pytest.warns(FutureWarning, match=f"{old}= is renamed {new}="):
        former = cdlab.solve(problem, method, max_passes=3, seed=1, **{old: value}, **extra)
    assert former.options == current.options and old not in former.options
    cols = [c for c in current.trace.columns if c != "time"]
    assert former.trace[cols].equals(current.trace[cols])
    with pytest.raises(ValueError, match=f"{old} is the old name of {new}; pass {new} only"):
        cdlab.solve(problem, method, **{old: value, new: value}, **extra)


def test_a_bound_takes_the_old_option_name_with_a_warning():
    from cdlab import theory
    problem = cdlab.Problem(*cdlab.load_dataset("heart_scale"), loss="logistic", lam=1e-2)
    with pytest.warns(FutureWarning, match="step= is renamed update="):
        former = theory.bound("dual_cd", problem, step="exact")
    assert former.iterations(1e-6) == theory.bound("dual_cd", problem, update="exact").iterations(1e-6)
    with pytest.warns(FutureWarning, match="step= is renamed step_size="):
        former = theory.bound("saga", problem, step="L_max")
    assert former.iterations(1e-6) == theory.bound("saga", problem, step_size="L_max").iterations(1e-6)


@pytest.mark.parametrize("method", ["sag", "saga", "svrg"])
def test_the_old_step_value_auto_is_the_L_max_rule_with_a_warning(method):
    """``step="auto"`` was the name of the L_max rule; it runs (and bounds) as ``step_size="L_max"``."""
    from cdlab import theory
    problem = cdlab.Problem(*cdlab.load_dataset("heart_scale"), loss="logistic", lam=1e-2)
    current = cdlab.solve(problem, method, max_passes=3, seed=1, step_size="L_max")
    with pytest.warns(FutureWarning, match="step_size='auto' is renamed step_size='L_max'"):
        former = cdlab.solve(problem, method, max_passes=3, seed=1, step="auto")
    assert former.options == current.options
    cols = [c for c in current.trace.columns if c != "time"]
    assert former.trace[cols].equals(current.trace[cols])
    if method != "sag":  # sag has no bound of its own
        extra = {"epoch_length": 20000} if method == "svrg" else {}  # an epoch long enough for Thm 1
        with pytest.warns(FutureWarning, match="step_size='auto' is renamed"):
            bound = theory.bound(method, problem, step_size="auto", **extra)
        assert bound.iterations(1e-6) == theory.bound(method, problem, step_size="L_max", **extra).iterations(1e-6)


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
@pytest.mark.parametrize("update", [None, "bogus"])
def test_a_bad_update_is_named_before_any_loss_rule(loss, update):
    """An update rule that does not exist is the error, whatever the loss."""
    problem = cdlab.Problem(*cdlab.load_dataset("heart_scale"), loss=loss, lam=1e-2)
    with pytest.raises(ValueError, match=r"^update must be one of \['linesearch', 'gradient', 'coordinate', 'exact'\]"):
        cdlab.solve(problem, "dual_cd", update=update, max_passes=1)


def test_an_old_option_name_given_as_none_is_the_default():
    """``step=None`` meant "the default" (svrg's documented spelling); it still does, as the new name's
    None does."""
    problem = cdlab.Problem(*cdlab.load_dataset("heart_scale"), loss="logistic", lam=1e-2)
    default = cdlab.solve(problem, "svrg", max_passes=3, seed=1)
    former = cdlab.solve(problem, "svrg", step=None, max_passes=3, seed=1)
    assert former.options == default.options
    cols = [c for c in default.trace.columns if c != "time"]
    assert former.trace[cols].equals(default.trace[cols])


@pytest.mark.parametrize("name", sorted(METHODS))
def test_the_trace_columns_have_their_types(name):
    """Every method's trace: steps and nnz_touched are integer counts, passes, time and the certificates
    floats (``subopt`` given ``reference=``), and a staged method's ``inner`` is boolean; one row a checkpoint."""
    spec = METHODS[name]
    res = cdlab.solve(PROBE, name, max_passes=3, reference=0.5, **spec.options)
    trace = res.trace
    assert len(trace) >= 2
    for column in ("steps", "nnz_touched"):
        assert trace[column].dtype.kind in "iu", (column, trace[column].dtype)
    for column in ("passes", "time", "primal", "dual", "gap", "subopt"):
        assert trace[column].dtype == np.float64, (column, trace[column].dtype)
    assert trace["data_passes"].dtype.kind in "iuf"
    if "inner" in trace.columns:
        assert trace["inner"].dtype == bool
    np.testing.assert_array_equal(trace.subopt, trace.primal - 0.5)


@pytest.mark.parametrize("fast", [True, False])
def test_the_trace_frame_is_the_public_constructors(fast, monkeypatch):
    """``driver.trace_frame`` (pandas' ``_from_arrays``, or the public constructor where pandas has none) gives
    the frame ``pd.DataFrame`` builds from the same columns: labels, dtypes and values; and a frame's columns
    can be renamed or added without touching the next frame's (the labels are shared, never mutated)."""
    import pandas as pd

    from cdlab.solvers import driver

    built = []
    if fast:
        from_arrays = pd.DataFrame._from_arrays
        monkeypatch.setattr(pd.DataFrame, "_from_arrays",
                            classmethod(lambda cls, *a, **k: built.append(1) or from_arrays(*a, **k)))
    else:
        monkeypatch.delattr(pd.DataFrame, "_from_arrays", raising=False)
    columns = ("steps", "nnz_touched", "passes", "gap", "inner")
    arrays = [np.array([0, 7]), np.array([0, 12]), np.array([0.0, 1.5]), np.array([1.0, 1e-9]),
              np.array([False, True])]
    frame = driver.trace_frame(arrays, columns)
    pd.testing.assert_frame_equal(frame, pd.DataFrame(dict(zip(columns, arrays))))
    assert len(built) == fast  # the fast path ran where pandas has it
    frame.columns.name = "checkpoint"
    frame["extra"] = 1.0
    frame.columns = frame.columns.str.replace("gap", "G")
    again = driver.trace_frame(arrays, columns)
    assert list(again.columns) == list(columns) and again.columns.name is None
