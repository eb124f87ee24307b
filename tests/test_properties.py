"""Property test (issue 17): random small problems — dense or sparse, with empty
rows and columns, duplicated and unsorted indices, now and then a malformed
structure — random probability vectors and random method / loss / option sets
from the registry each end in a solve whose status is honest (a converged run's
last gap is ≤ tol) or in one clear ValueError/TypeError: never another
exception, a hang (budgets are small and timed), NaN in the trace, or a
changed input."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cdlab
from cdlab.losses import LOSSES

METHOD_NAMES = sorted(cdlab.METHODS)
STATUSES = {"converged", "max_passes", "max_time", "cancelled", "diverged"}
TOL = 1e-6


@st.composite
def matrices(draw):
    """(X as given to Problem, a copy of every array it holds, whether its structure is malformed)."""
    n, d = draw(st.integers(1, 7)), draw(st.integers(1, 5))
    k = draw(st.integers(0, 2 * n * d))
    rows = np.array(draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)), dtype=np.int32)
    cols = np.array(draw(st.lists(st.integers(0, d - 1), min_size=k, max_size=k)), dtype=np.int32)
    vals = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, -2.0, 0.5, 3e-3, -7.0, 1e3]), min_size=k,
                                  max_size=k)), dtype=np.float64)
    fmt = draw(st.sampled_from(["dense", "csr", "csc", "coo", "object", "float32"]))
    broken = False
    if fmt in ("dense", "object", "float32"):
        X = np.zeros((n, d))
        np.add.at(X, (rows, cols), vals)
        X = X.astype(object) if fmt == "object" else X.astype(np.float32) if fmt == "float32" else X
    elif fmt == "coo":
        X = sp.coo_matrix((vals, (rows, cols)), shape=(n, d))  # duplicates kept, in draw order
    else:
        major, minor = (rows, cols) if fmt == "csr" else (cols, rows)
        order = np.argsort(major, kind="stable")  # grouped by major index, unsorted and duplicated within
        indptr = np.concatenate([[0], np.cumsum(np.bincount(major, minlength=n if fmt == "csr" else d))])
        cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
        X = cls((vals[order], minor[order], indptr.astype(np.int32)), shape=(n, d))
        if k and draw(st.booleans()) and draw(st.booleans()):  # a quarter: corrupt one index
            X.indices[draw(st.integers(0, k - 1))] = draw(st.sampled_from([-1, d + n, 2 ** 30]))
            broken = True
    arrays = [X] if not sp.issparse(X) else [X.data, getattr(X, "indices", None), getattr(X, "indptr", None),
                                               getattr(X, "row", None), getattr(X, "col", None)]
    return X, [None if a is None else np.array(a, copy=True) for a in arrays], broken


@st.composite
def requests(draw):
    X, copies, broken = draw(matrices())
    n, d = X.shape
    method = draw(st.sampled_from(METHOD_NAMES))
    spec = cdlab.METHODS[method]
    # mostly what the method supports (so most draws run), sometimes anything (so refusals are exercised)
    fitting = draw(st.integers(0, 7)) > 0
    loss = draw(st.sampled_from(sorted(spec.losses) if fitting else sorted(LOSSES)))
    if LOSSES[loss].classification:
        y = np.array(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=n, max_size=n)))
    else:
        y = np.array(draw(st.lists(st.floats(-3, 3, allow_nan=False), min_size=n, max_size=n)))
    names = ["uniform", "importance", "permutation", "cyclic", "custom"]
    kind = draw(st.sampled_from(list(spec.samplings) if fitting else names))
    if kind == "custom":
        right = d if spec.kind == "primal" else n
        size = right if fitting else draw(st.sampled_from([n, d]))
        w = np.array(draw(st.lists(st.floats(1e-3, 1.0), min_size=size, max_size=size)))
        dtype = draw(st.sampled_from([np.float64, np.float32]))
        sampling = (w / w.sum()).astype(dtype)
    else:
        sampling = kind
    lam = draw(st.sampled_from([1e-3, 0.1, 1.0] if fitting and spec.needs_lam else [0.0, 1e-3, 0.1, 1.0]))
    l1 = draw(st.sampled_from([0.0, 0.0, 0.01])) if lam > 0 and (spec.supports_l1 or not fitting) else 0.0
    options = {}
    if cdlab.METHODS[method].batch and draw(st.booleans()):
        options["batch_size"] = draw(st.integers(1, n + 1))  # n + 1 is refused
    return dict(X=X, copies=copies, broken=broken, y=y, loss=loss, method=method, sampling=sampling,
                options=options, lam=lam, l1=l1, max_passes=draw(st.sampled_from([1, 3, 8])))


def _unchanged(req, y0, s0):
    X = req["X"]
    arrays = [X] if not sp.issparse(X) else [X.data, getattr(X, "indices", None), getattr(X, "indptr", None),
                                               getattr(X, "row", None), getattr(X, "col", None)]
    for now, before in zip(arrays, req["copies"]):
        if before is not None:
            assert np.array_equal(np.asarray(now, dtype=before.dtype), before) and now.dtype == before.dtype
    assert np.array_equal(req["y"], y0)
    if not isinstance(req["sampling"], str):
        assert np.array_equal(req["sampling"], s0) and req["sampling"].dtype == s0.dtype


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(req=requests())
def test_every_request_ends_certified_or_in_one_clear_error(req):
    y0 = req["y"].copy()
    s0 = None if isinstance(req["sampling"], str) else req["sampling"].copy()
    try:
        problem = cdlab.Problem(req["X"], req["y"], loss=req["loss"], lam=req["lam"], l1=req["l1"])
        assert not req["broken"], "a malformed sparse structure was accepted"
        result = cdlab.solve(problem, method=req["method"], sampling=req["sampling"], max_passes=req["max_passes"],
                             tol=TOL, max_time=2.0, **req["options"])
    except (ValueError, TypeError) as exc:
        message = str(exc)
        assert message and "\n" not in message.strip(), message
    else:
        trace = result.trace
        assert result.status in STATUSES
        assert not trace[["steps", "passes", "primal", "gap"]].isna().any().any(), trace
        assert not trace["dual"].isna().any(), trace
        if result.status == "converged":
            assert trace.gap.iloc[-1] <= TOL
        if result.status == "diverged":
            assert result.message
        assert np.all(np.isfinite(result.w)) and np.all(np.isfinite(trace.passes))
    _unchanged(req, y0, s0)


def test_the_strategy_reaches_solves_and_refusals():
    """The property above is only as good as its draws: both outcomes occur."""
    outcomes = set()

    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(req=requests())
    def probe(req):
        try:
            problem = cdlab.Problem(req["X"], req["y"], loss=req["loss"], lam=req["lam"], l1=req["l1"])
            cdlab.solve(problem, method=req["method"], sampling=req["sampling"], max_passes=1, tol=TOL,
                        max_time=1.0, **req["options"])
            outcomes.add("solved")
        except (ValueError, TypeError):
            outcomes.add("refused")

    probe()
    assert outcomes == {"solved", "refused"}
