"""Certificate sweeps that leave out the rows beyond the margin (``cdlab.solvers._margin_bounds``): P, D, the gap
and whole runs the same bit for bit as with every row read, fewer rows read, and every row left out truly beyond
the margin."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import event, given, settings, strategies as st

import cdlab
from cdlab.solvers import _margin_bounds, driver
from cdlab.solvers._kernels import certificate_sweep, full_rows, row_arrays

COLUMNS = ["steps", "nnz_touched", "passes", "data_passes", "primal", "dual", "gap"]


def _runs(problem, monkeypatch, **kw):
    """The run with bounds and without, and the nonzeros each bounded sweep read."""
    reads, shipped = [], _margin_bounds.bounded_certificate_sweep

    def spy(*args):
        reads.append(shipped(*args))
        return reads[-1]

    monkeypatch.setattr(_margin_bounds, "bounded_certificate_sweep", spy)
    out = []
    for on in (True, False):
        monkeypatch.setattr(_margin_bounds, "MARGIN_BOUNDS", on)
        out.append(cdlab.solve(problem, **kw))
    return out, reads


@pytest.mark.parametrize("name, loss, lam, options", [
    ("a9a", "hinge", 1.0, {"shrinking": True}),
    ("w8a", "hinge", 1.0, {"shrinking": True}),
    ("mushrooms", "hinge", 0.01, {"shrinking": True}),
    ("colon-cancer", "hinge", 0.01, {"shrinking": True}),
    ("phishing", "smoothed_hinge", 1.0, {"shrinking": True}),
    ("heart_scale", "hinge", 1.0, {}),
    ("phishing", "hinge", 0.01, {"method": "newton", "sampling": "uniform"}),
])
def test_a_run_is_the_same_bit_for_bit_with_fewer_rows_read(real_data, monkeypatch, name, loss, lam, options):
    X, y = real_data(name)
    problem = cdlab.Problem(X, y, loss=loss, lam=lam / X.shape[0])
    options = {"method": "sdca", "sampling": "permutation", **options}
    (bounded, full), reads = _runs(problem, monkeypatch, tol=1e-9, max_passes=3000, seed=0, **options)
    assert bounded.converged and full.converged
    for column in COLUMNS:
        assert np.array_equal(bounded.trace[column].to_numpy(), full.trace[column].to_numpy()), column
    assert np.array_equal(bounded.w, full.w) and np.array_equal(bounded.alpha, full.alpha)
    # every checkpoint swept with bounds (but SDCA's start, at w = 0 and α = 0, which reads no row; Newton starts at
    # α(0) ≠ 0), the first reading every row, later ones leaving rows out
    starts = 1 if options["method"] == "sdca" else 0
    assert len(reads) == len(bounded.trace) - starts, (reads, starts)
    assert reads[0] == problem.nnz and min(reads) < problem.nnz, reads


def test_the_bounds_are_kept_only_for_a_run_with_a_dual_point_on_a_loss_flat_beyond_the_margin(real_data,
                                                                                               monkeypatch):
    X, y = real_data("heart_scale")
    monkeypatch.setattr(_margin_bounds, "MARGIN_BOUNDS", True)
    made = []
    shipped = _margin_bounds.MarginBounds

    class Spy(shipped):
        def __init__(self, problem):
            made.append(problem.loss)
            super().__init__(problem)

    monkeypatch.setattr(driver, "MarginBounds", Spy)
    wide, y_wide = real_data("rcv1_small")  # 1.6 nonzeros a feature
    for X_, y_, loss, method, n_jobs in [(X, y, "hinge", "sdca", 1), (X, y, "smoothed_hinge", "sdca", 1),
                                         (X, y, "logistic", "sdca", 1), (X, y, "absolute", "sdca", 1),
                                         (X, y, "hinge", "newton", 1), (X, y, "hinge", "sdca", 2),
                                         (wide, y_wide, "hinge", "sdca", 1)]:
        made.clear()
        problem = cdlab.Problem(X_, y_, loss=loss, lam=0.01)
        res = cdlab.solve(problem, method, tol=1e-6, max_passes=500, seed=0, n_jobs=n_jobs)
        assert res.converged, res
        # Newton on the hinge loss reports its dual point too (``_hinge_newton``)
        kept = loss in ("hinge", "smoothed_hinge") and n_jobs == 1 and X_ is X
        assert made == ([loss] if kept else []), (loss, method, n_jobs, X_.shape)
    assert wide.nnz < _margin_bounds.MIN_NNZ_PER_FEATURE * wide.shape[1]
    assert X.nnz >= _margin_bounds.MIN_NNZ_PER_FEATURE * X.shape[1]


@st.composite
def _sweeps(draw):
    """X (rows of varied norms, some empty), labels, and a walk of points w with duals α half zero."""
    seed = draw(st.integers(0, 2 ** 31 - 1))
    rng = np.random.default_rng(seed)
    n, d = draw(st.integers(1, 30)), draw(st.integers(1, 12))
    X = sp.random(n, d, density=draw(st.floats(0.05, 1.0)), random_state=rng, format="csr")
    if X.nnz == 0:  # cdlab refuses an X without nonzeros
        X = sp.csr_matrix(([1.0], ([0], [0])), shape=(n, d))
    X = sp.csr_matrix(sp.diags(10.0 ** rng.uniform(-3, 3, n)) @ X)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    w = rng.standard_normal(d) * 10.0 ** draw(st.floats(-2, 3))
    rows = np.flatnonzero(np.diff(X.indptr))
    if rows.size and draw(st.booleans()):  # one row's margin within 1e-9 of 1
        i = rows[draw(st.integers(0, rows.size - 1))]
        margin = y[i] * (X[i] @ w)[0]
        if margin != 0.0:
            w = w * (1.0 + draw(st.floats(-1e-9, 1e-9))) / margin
    walk = [w]
    for _ in range(draw(st.integers(1, 6))):
        walk.append(walk[-1] + rng.standard_normal(d) * np.linalg.norm(w) * 10.0 ** draw(st.floats(-16, 0)))
    alphas = [np.where(rng.random(n) < 0.6, 0.0, rng.random(n) * y) for _ in walk]
    return X, y, walk, alphas


@settings(max_examples=200, deadline=None)
@given(_sweeps(), st.sampled_from(["hinge", "smoothed_hinge"]))
def test_each_sweep_gives_the_full_sweeps_sums_and_leaves_out_only_rows_beyond_the_margin(case, loss):
    """Against the full sweep at each point of a walk (steps from 1e-16 to 1 times ‖w‖, rows scaled 1e-3 to 1e3, one
    margin within 1e-9 of 1 where drawn): the same loss sum and Xᵀα bit for bit, and each row left out
    has α_i = 0 and an exact margin (in rationals) ≥ 1."""
    from fractions import Fraction

    X, y, walk, alphas = case
    problem = cdlab.Problem(X, y, loss=loss, lam=0.1)
    bounds = _margin_bounds.MarginBounds(problem)
    arrays = row_arrays(problem)
    for w, alpha in zip(walk, alphas):
        z, xt = np.zeros(problem.n_samples), np.zeros(problem.n_features)
        before = bounds.bound.copy()
        bounds.sweep(arrays, problem.y, problem.loss_code, problem.s, w, alpha, z, xt, full_rows(problem))
        z_full, xt_full = np.zeros(problem.n_samples), np.zeros(problem.n_features)
        certificate_sweep(*arrays, problem.y, problem.loss_code, problem.s, w, alpha.copy(), False, z_full, xt_full,
                          full_rows(problem))
        assert np.array_equal(xt, xt_full)
        assert problem.certificates(w, alpha, z=z, v=xt) == problem.certificates(w, alpha, z=z_full, v=xt_full)
        left_out = bounds.bound != problem.y * z_full  # a row read keeps its computed margin as its bound
        event(f"rows left out: {'some' if left_out.any() else 'none'}")
        for i in np.flatnonzero(left_out):
            row = problem.X.getrow(i)
            exact = sum(Fraction(float(v)) * Fraction(float(w[j])) for j, v in zip(row.indices, row.data))
            assert alpha[i] == 0.0 and Fraction(float(y[i])) * exact >= 1, (i, before[i])


def test_a_row_is_left_out_only_where_its_lowered_bound_clears_the_rounding_allowance():
    """The decision at its edge: row 0's bound lowered by ‖x_0‖·shift and rounded down is left out at 1 + ‖x_0‖·clearance
    and above, read just below (and where α_0 ≠ 0, however high its bound); a left-out bound falls at every sweep
    even where ‖x_0‖·shift is far below half its ulp, so sub-ulp steps cannot pile up unseen."""
    X = sp.csr_matrix(np.array([[3.0, 4.0], [1.0, 0.0]]))
    problem = cdlab.Problem(X, np.array([1.0, -1.0]), loss="hinge", lam=0.1)
    arrays, w, norm = row_arrays(problem), np.array([0.5, 0.5]), 5.0
    shift, clearance = 1e-3, 1e-6

    def sweep(bound0, alpha0=0.0, step=shift):
        bound = np.array([bound0, -np.inf])
        z, xt = np.zeros(2), np.zeros(2)
        read = _margin_bounds.bounded_certificate_sweep(*arrays, problem.y, problem.loss_code, problem.s, w,
                                                        np.array([alpha0, 0.0]), z, xt, None,
                                                        np.sqrt(problem.row_norms_sq), step, clearance, bound)
        return read, bound[0]

    edge = 1.0 + norm * clearance + norm * shift
    above = np.nextafter(edge, np.inf) * (1 + 4 * np.finfo(float).eps)
    assert sweep(above)[0] == 1  # only row 1 (one nonzero) read
    assert sweep(np.nextafter(1.0 + norm * clearance, -np.inf) + norm * shift)[0] == 3
    assert sweep(1e6, alpha0=0.5)[0] == 3
    bound = 2.0
    for _ in range(5):
        read, lowered = sweep(bound, step=1e-300)
        assert read == 1 and lowered < bound
        bound = lowered
