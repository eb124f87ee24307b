"""The polish's groups of equal rows and labels (``Data.row_copies``, ``_face_cr.groups``): found exactly (against a
dictionary of the rows, collisions of the hash and real labels included), and moved as one by conjugate residuals
and by projected Newton: on a face made singular only by repeated rows, the grouped polish solves the face's
quadratic where the polish over each example apart refuses it; D never falls, v = Xᵀα/(λn) and the box hold,
members end with equal shares; whole projected Newton solves over groups, from α = 0 and from members at unequal
coordinates, are certified; a face singular in groups too, on an active set too large for projected Newton, is
left alone; a shrinking run on such data is certified at the reference optimum."""
import numpy as np
import pytest
import scipy.sparse as sp

import cdlab
from cdlab.data import _rows
from cdlab.solvers import _box_newton, _face_cr, _shrinking

SINGULAR_LOSSES = ("hinge", "absolute")


def reference_groups(problem, examples):
    """Sorted lists of the examples of ``examples`` whose rows (columns and values) and labels are equal."""
    X = problem.X.tocsr()
    seen = {}
    for i in examples:
        row = X.getrow(i)
        key = (tuple(row.indices), tuple(row.data), problem.y[i])
        seen.setdefault(key, []).append(int(i))
    return sorted(sorted(group) for group in seen.values())


def found_groups(problem, examples):
    group_ptr, members = _face_cr.groups(problem, examples)
    assert sorted(members) == sorted(examples)
    return sorted(sorted(int(i) for i in members[group_ptr[g]:group_ptr[g + 1]]) for g in range(len(group_ptr) - 1))


def repeated_rows(loss, n_base=12, d=30, copies=3, seed=0, density=0.3):
    """A base of n_base random rows, each repeated ``copies`` times with its label (absolute loss: a real
    label), so that the examples (n_base·copies) outnumber the columns while the distinct rows do not."""
    rng = np.random.default_rng(seed)
    base = sp.random(n_base, d, density=density, random_state=seed, format="csr")
    base.data = np.round(base.data * 4) / 4 + 0.25  # few distinct values
    X = sp.vstack([base] * copies).tocsr()
    y_base = np.where(rng.random(n_base) < 0.5, -1.0, 1.0) if loss != "absolute" else rng.standard_normal(n_base)
    return X, np.tile(y_base, copies)


def box_t(problem, alpha):
    return (alpha, -1.0) if problem.loss == "absolute" else (alpha * problem.y, 0.0)


def test_groups_are_exactly_the_equal_rows_with_equal_labels():
    rng = np.random.default_rng(3)
    base = sp.random(40, 15, density=0.2, random_state=3, format="csr")
    base.data = np.round(base.data * 3) / 3
    picks = rng.integers(0, 40, 300)  # many repeats
    X = base[picks].tolil()
    y = np.where(rng.random(300) < 0.3, -1.0, 1.0)  # equal rows with either label
    X[7] = X[5] * (1 + 1e-15)  # equal columns, a value off by an ulp or so: not equal
    X = X.tocsr()
    X.eliminate_zeros()
    problem = cdlab.Problem(X, y, loss="hinge", lam=0.1)
    for examples in (np.arange(300), np.sort(rng.choice(300, 120, replace=False))):
        assert found_groups(problem, examples) == reference_groups(problem, examples)
    copies = problem.data.row_copies
    first = {}
    for i in range(300):  # the first example of an equal row
        first.setdefault((tuple(X.getrow(i).indices), tuple(X.getrow(i).data)), i)
        assert copies[i] == first[(tuple(X.getrow(i).indices), tuple(X.getrow(i).data))]
    assert X.getrow(5).nnz == 0 or copies[7] != copies[5]  # an ulp apart: not equal
    distinct = cdlab.Problem(sp.random(50, 20, density=0.3, random_state=0, format="csr"), np.ones(50), loss="hinge",
                             lam=0.1)
    assert distinct.data.row_copies is None


def test_rows_that_share_a_hash_are_told_apart():
    """Every hash equal (collisions everywhere): each row's copy is still the first example of an equal row."""
    base = sp.random(6, 8, density=0.5, random_state=4, format="csr")
    X = base[np.random.default_rng(4).integers(0, 6, 40)].tocsr()
    indptr, indices, data = cdlab.Problem(X, np.ones(40), loss="hinge", lam=0.1).csr_arrays
    hashes = np.zeros(40, np.uint64)
    copies, found = _rows._first_copies(indptr, indices, data, np.argsort(hashes, kind="stable"), hashes)
    first = {}
    for i in range(40):
        key = (tuple(X.getrow(i).indices), tuple(X.getrow(i).data))
        first.setdefault(key, i)
        assert copies[i] == first[key]
    assert found


@pytest.mark.parametrize("loss", SINGULAR_LOSSES)
def test_the_grouped_polish_solves_a_face_singular_only_through_repeated_rows(loss, monkeypatch):
    """With projected Newton off, the polish over examples apart refuses the face; over groups it runs conjugate
    residuals to the face's solution."""
    X, y = repeated_rows(loss)
    problem = cdlab.Problem(X, y, loss=loss, lam=1.0 / X.shape[0])
    n = problem.n_samples
    rng = np.random.default_rng(1)
    t0 = rng.uniform(0.3, 0.7, n) if loss != "absolute" else rng.uniform(-0.4, 0.4, n)
    alpha0 = t0 * y if loss != "absolute" else t0
    face = _face_cr.free_face(problem, alpha0, np.arange(n))
    assert face.size > problem.n_nonempty_columns  # singular as examples: the polish apart refuses it
    monkeypatch.setattr(_box_newton, "BOX_NEWTON_MAX_EXAMPLES", 0)  # conjugate residuals alone
    monkeypatch.setattr(_face_cr, "GROUP_DUPLICATES", False)
    alpha, v = alpha0.copy(), problem.v_from_alpha(alpha0)
    assert _face_cr.polish(problem, alpha, v, np.arange(n), 10**9) == 0
    np.testing.assert_array_equal(alpha, alpha0)
    monkeypatch.setattr(_face_cr, "GROUP_DUPLICATES", True)
    before = problem.dual(alpha)
    assert _face_cr.polish(problem, alpha, v, np.arange(n), 10**9) > 0
    assert problem.dual(alpha) > before
    np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)
    t, low = box_t(problem, alpha)
    assert np.all(t >= low) and np.all(t <= 1.0)
    for group in reference_groups(problem, np.arange(n)):
        assert np.ptp(alpha[group]) == 0.0  # equal shares
    # CR's end: each free group at a zero residual r = a − σ x·v, every other at its bound
    sigma = y if loss != "absolute" else np.ones(n)
    a = np.ones(n) if loss != "absolute" else y
    r = a - sigma * (problem.X @ v)
    free = (t > low + 1e-9) & (t < 1.0 - 1e-9)
    assert free.any()
    np.testing.assert_allclose(r[free], 0.0, atol=1e-8)


@pytest.mark.parametrize("loss", SINGULAR_LOSSES)
def test_projected_newton_over_groups_reaches_the_certified_optimum(loss):
    """More distinct rows than columns (singular even in groups), each repeated: projected Newton over every
    example in groups, from α = 0, ends at a certified gap."""
    X, y = repeated_rows(loss, n_base=40, d=6, copies=3, density=0.6)
    problem = cdlab.Problem(X, y, loss=loss, lam=0.05)
    n = problem.n_samples
    alpha, v = np.zeros(n), np.zeros(problem.n_features)
    group_ptr, members = _face_cr.groups(problem, np.arange(n))
    assert len(group_ptr) - 1 == 40
    _box_newton.box_newton(*problem.csr_arrays, problem.y, problem.loss_code, problem.lam * n,
                           problem.row_norms_sq, alpha, v, group_ptr, members, 10**12, 500)
    assert problem.gap(v, alpha) <= 1e-9 * abs(problem.primal(v))
    np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)


@pytest.mark.parametrize("loss", SINGULAR_LOSSES)
def test_a_shrinking_run_on_repeated_rows_is_certified_at_the_reference_optimum(loss, monkeypatch):
    """Its polishes find the repeated rows (fewer groups than examples), and every run is certified. The cadence
    starts at 1 pass (the driver's AUTO_FIRST): at shrinking's own first interval these runs certify before a
    checkpoint sees a stall, so none polishes."""
    monkeypatch.setattr(_shrinking, "SHRUNK_FIRST_INTERVAL", 1.0)
    X, y = repeated_rows(loss, n_base=60, d=80, copies=4, seed=2, density=0.1)
    problem = cdlab.Problem(X, y, loss=loss, lam=0.01 / X.shape[0])
    reference = cdlab.reference_optimum(problem)
    tol = 1e-6 * abs(reference)
    found, groups = [], _face_cr.groups
    monkeypatch.setattr(_face_cr, "groups", lambda p, examples: (
        lambda out: found.append((len(examples), len(out[0]) - 1)) or out)(groups(p, examples)))
    for seed in range(3):
        res = cdlab.solve(problem, "sdca", "permutation", shrinking=True, tol=tol, max_passes=5000, seed=seed)
        assert res.converged and problem.gap(res.w, res.alpha) <= tol
        assert abs(res.trace.primal.iloc[-1] - reference) <= 2 * tol
        assert np.all(np.diff(res.trace.dual) >= -1e-15)
    assert any(n_groups < n_examples for n_examples, n_groups in found), found


def test_labels_split_groups_of_equal_rows_for_the_absolute_loss():
    """Equal rows with different real labels are different groups (the linear term −y·Δ differs)."""
    rng = np.random.default_rng(5)
    base = sp.random(10, 6, density=0.5, random_state=5, format="csr")
    X = base[rng.integers(0, 10, 80)].tocsr()
    y = rng.choice([-0.5, 0.25, 1.5], 80)
    problem = cdlab.Problem(X, y, loss="absolute", lam=0.1)
    assert found_groups(problem, np.arange(80)) == reference_groups(problem, np.arange(80))
    assert len(reference_groups(problem, np.arange(80))) > len(set(map(tuple, X.toarray())))  # labels split some


@pytest.mark.parametrize("loss", SINGULAR_LOSSES)
def test_projected_newton_over_groups_from_unequal_members_reaches_the_certified_optimum(loss):
    """Members of a group start at different box coordinates (some at a bound, some inside): the groups' sums
    carry them, the run ends at a certified gap with equal shares in each group."""
    X, y = repeated_rows(loss, n_base=40, d=6, copies=3, density=0.6)
    problem = cdlab.Problem(X, y, loss=loss, lam=0.05)
    n = problem.n_samples
    rng = np.random.default_rng(6)
    t = rng.choice([0.0, 0.5, 1.0], n) if loss != "absolute" else rng.choice([-1.0, 0.3, 1.0], n)
    alpha = t * y if loss != "absolute" else t
    v = problem.v_from_alpha(alpha)
    group_ptr, members = _face_cr.groups(problem, np.arange(n))
    _box_newton.box_newton(*problem.csr_arrays, problem.y, problem.loss_code, problem.lam * n,
                           problem.row_norms_sq, alpha, v, group_ptr, members, 10**12, 500)
    assert problem.gap(v, alpha) <= 1e-9 * abs(problem.primal(v))
    np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)
    for group in reference_groups(problem, np.arange(n)):
        assert np.ptp(alpha[group]) == 0.0


def test_a_face_singular_in_groups_too_on_a_large_active_set_is_left_alone():
    """More groups than columns on the face, and more groups than projected Newton takes: nothing is read or
    moved."""
    rng = np.random.default_rng(7)
    base = sp.csr_matrix(rng.standard_normal((_box_newton.BOX_NEWTON_MAX_EXAMPLES + 40, 5)))
    X = sp.vstack([base, base]).tocsr()
    y = np.tile(np.where(rng.random(base.shape[0]) < 0.5, -1.0, 1.0), 2)
    problem = cdlab.Problem(X, y, loss="hinge", lam=0.01)
    alpha = 0.5 * y
    v = problem.v_from_alpha(alpha)
    group_ptr, _ = _face_cr.groups(problem, np.arange(problem.n_samples))
    assert len(group_ptr) - 1 == base.shape[0] > problem.n_nonempty_columns
    assert _face_cr.polish(problem, alpha, v, np.arange(problem.n_samples), 10**12) == 0
    np.testing.assert_array_equal(alpha, 0.5 * y)
