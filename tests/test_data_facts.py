"""cdlab.data.Data: the data's facts computed once, shared by every objective on them,
and the solver layer free of the symbolic layer."""
import ast
import pathlib

import numpy as np
import pytest
import scipy.sparse as sp

import cdlab
from cdlab.data import Data
from cdlab.theory.symbols import problem_values


def _data(seed=0, n=40, d=15):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.3, random_state=seed, format="csr") + sp.eye(n, d)
    return X, np.sign(rng.standard_normal(n)) + (rng.standard_normal(n) == 0)


def test_facts_match_their_definitions():
    X, y = _data()
    data = Data(X, y)
    A = X.toarray()
    assert np.allclose(data.row_norms_sq, (A ** 2).sum(axis=1))
    assert np.array_equal(data.col_nnz, (A != 0).sum(axis=0))
    assert data.C_P == pytest.approx(float(((A != 0).sum(axis=0) * (A ** 2).sum(axis=0)).sum()), rel=1e-12)
    assert data.C_D == pytest.approx(float(((A != 0).sum(axis=1) * (A ** 2).sum(axis=1)).sum()), rel=1e-12)
    assert data.row_nnz_sq_sum == float(((A != 0).sum(axis=1) ** 2).sum())
    assert data.xty_norm_sq == pytest.approx(float(np.sum((A.T @ y) ** 2)), rel=1e-12)
    eig = np.linalg.eigvalsh(A.T @ A)
    assert data.spectral_norm_sq >= eig[-1] and data.spectral_norm_sq == pytest.approx(eig[-1], rel=1e-8)
    assert data.gram_min_eig == pytest.approx(max(eig[0], 0.0), abs=1e-9)


def _second_eigenvalue(A):
    return float(np.linalg.eigvalsh(A.T @ A)[-2]) / A.shape[0]


def test_the_sampled_bulk_eigenvalue_estimate():
    """``gram_bulk_estimate`` (a cost model's input) estimates λ₂(XᵀX)/n, the top of the spectrum with its
    largest eigenvalue set aside: on data of at most SAMPLE_NNZ nonzeros every row is read and it is near λ₂;
    on larger data it reads a seeded sample of rows, the same each time, and the held-out half's
    Rayleigh quotient is near λ₂ — whether the rows share a dominant mean direction (λ₁ ≫ λ₂, which it sets
    aside) or have none and fewer sampled rows than features (where the sample's own eigenvalues are far
    above XᵀX/n's); never above ‖X‖_F²/n; the data are not modified."""
    from cdlab.data import dataset

    X, y = cdlab.load_dataset("heart_scale")
    data = Data(X, y)
    assert data.nnz <= dataset.SAMPLE_NNZ
    second = _second_eigenvalue(X.toarray())
    # six power iterations leave a little of the top direction in the next one: near λ₂, a little above
    assert second * 0.8 <= data.gram_bulk_estimate <= second * 1.1
    rng = np.random.default_rng(0)
    for n, d, mean in ((4000, 50, 0.0), (20_000, 400, 0.0), (4000, 50, 3.0)):
        A = rng.standard_normal((n, d)) * np.linspace(0.5, 1.5, d) + mean  # mean 3: λ₁ ≈ 9d, an outlier
        before = A.copy()
        big, again = Data(A, np.sign(A[:, 0])), Data(A, np.sign(A[:, 0]))
        assert big.nnz > dataset.SAMPLE_NNZ and np.array_equal(A, before)
        second = _second_eigenvalue(A)
        assert 0.5 * second <= big.gram_bulk_estimate <= 1.3 * second
        m = int(n * dataset.SAMPLE_NNZ / big.nnz)
        if mean == 0.0:  # what the held-out half corrects: a sample's own eigenvalues
            assert _second_eigenvalue(A[:m // 2]) > (2.0 if m < d else 1.1) * second
        else:  # what setting λ₁ aside corrects
            assert float(np.linalg.eigvalsh(A.T @ A)[-1]) / n > 100 * second
        assert big.gram_bulk_estimate == again.gram_bulk_estimate <= big.frob_sq / n


def test_the_bulk_estimate_where_there_is_no_second_direction():
    """One row, or rows along one line: no second direction, an estimate of 0 (never NaN)."""
    one = Data(np.array([[1.0, 2.0, 3.0]]), np.array([1.0]))
    assert one.gram_bulk_estimate == 0.0
    column = Data(np.arange(1.0, 7.0).reshape(6, 1), np.ones(6))
    assert column.gram_bulk_estimate == 0.0
    line = Data(np.outer(np.arange(1.0, 9.0), [1.0, -2.0, 0.5]), np.ones(8))
    assert line.gram_bulk_estimate <= 1e-10 * line.frob_sq / line.n_samples


def test_every_objective_on_the_data_shares_it_and_its_cached_facts():
    X, y = _data()
    problem = cdlab.Problem(X, y, loss="squared", lam=0.1)
    other = problem.with_params(loss="logistic", lam=0.01)
    built = cdlab.Problem.from_data(problem.data, loss="hinge", lam=1.0)
    assert other.data is problem.data and built.data is problem.data
    assert other.X is problem.X and built.row_norms_sq is problem.row_norms_sq
    first = problem.data.spectral_norm_sq
    assert "spectral_norm_sq" in vars(problem.data)  # computed once, kept on the data
    assert problem_values(other, ["L_P"])["L_P"] == other.lam + first / (other.gamma * other.n_samples)


def test_theory_reads_the_data_facts():
    X, y = _data(seed=1)
    problem = cdlab.Problem(X, y, loss="squared", lam=0.1)
    values = problem_values(problem, ["C_P", "C_D", "mu_F"])
    assert values["C_P"] == problem.data.C_P and values["C_D"] == problem.data.C_D
    assert values["mu_F"] == problem.strong_convexity() == 0.1 + problem.data.gram_min_eig / problem.n_samples
    assert cdlab.theory.faceoff(problem).C_P == problem.data.C_P


def test_the_store_fingerprint_of_data_is_that_of_its_problem_before_data_existed():
    # store keys were made from Problem(X, y, "squared", lam=0).content_hash(); they stay valid
    X, y = _data(seed=2)
    data = Data(X, y)
    assert data.content_hash() == cdlab.Problem(X, y, loss="squared", lam=0.0).content_hash()
    assert data.content_hash() != Data(X * 2, y).content_hash()


def test_from_data_checks_the_objective_against_the_data():
    X, y = _data()
    data = Data(X, 2 * y)
    with pytest.raises(ValueError, match="needs labels in"):
        cdlab.Problem.from_data(data, loss="logistic")
    with pytest.raises(TypeError, match="data must be a cdlab.data.Data"):
        cdlab.Problem.from_data(X, loss="squared")


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            yield "." * node.level + (node.module or "")
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def test_no_solver_module_imports_the_theory_layer():
    solvers = pathlib.Path(cdlab.__file__).parent / "solvers"
    offenders = {path.name: name for path in solvers.glob("*.py") for name in _imports(path)
                 if name.startswith("..theory") or name.startswith("cdlab.theory")}
    assert offenders == {}


def test_a_fact_being_computed_on_one_data_does_not_hold_up_another():
    """Data's facts are computed per instance with no class-wide lock: while one Data computes a
    fact (held here until released), another Data reads the same fact (functools.cached_property
    on Python 3.11 would make it wait for the first)."""
    import threading

    from cdlab.data.dataset import cached_fact

    assert all(isinstance(vars(Data)[name], cached_fact)
               for name in ("X_csc", "C_P", "C_D", "spectral_norm_sq", "gram_min_eig", "gram_bulk_estimate", "_digest"))
    started, release = threading.Event(), threading.Event()
    X = sp.random(30, 8, density=0.5, random_state=0, format="csr")
    y = np.where(np.arange(30) % 2, 1.0, -1.0)
    slow, fast = Data(X, y), Data(X, y)
    descriptor = vars(Data)["C_P"]
    compute = descriptor.func

    def held(data):
        if data is slow:
            started.set()
            release.wait(30)
        return compute(data)

    descriptor.func = held
    try:
        worker = threading.Thread(target=lambda: slow.C_P)
        worker.start()
        assert started.wait(30)
        answer = {}
        reader = threading.Thread(target=lambda: answer.setdefault("C_P", fast.C_P))
        reader.start()
        reader.join(10)
        assert answer.get("C_P") == pytest.approx(float(fast.col_nnz @ fast.col_norms_sq))
        assert worker.is_alive()  # the first was still computing while the second answered
    finally:
        release.set()
        descriptor.func = compute
        worker.join(30)
    assert slow.C_P == fast.C_P


def test_x_dense_is_a_view_where_every_entry_is_stored_a_copy_where_nearly_and_none_elsewhere():
    """``Data.X_dense``: X as a read-only dense (n, d) array, a view of the CSR values (no copy) where every
    entry is stored, a copy where at least DENSE_MIN_DENSITY of them are, None below; the user's array is
    not modified."""
    from cdlab.data import dataset

    rng = np.random.default_rng(1)
    A = rng.standard_normal((40, 12)) + 3.0  # every entry nonzero
    y = np.where(A[:, 0] > 3.0, 1.0, -1.0)
    before = A.copy()
    full = Data(A, y)
    assert full.is_dense and np.shares_memory(full.X_dense, full.X.data)
    assert not full.X_dense.flags.writeable and full.X_dense.flags.c_contiguous
    np.testing.assert_array_equal(full.X_dense, A)
    nearly = A.copy()
    nearly[3, 5] = nearly[17, 0] = 0.0  # 2 of 480 entries
    kept = Data(nearly, y)
    assert kept.nnz == A.size - 2 >= dataset.DENSE_MIN_DENSITY * A.size
    assert not np.shares_memory(kept.X_dense, kept.X.data) and not kept.X_dense.flags.writeable
    np.testing.assert_array_equal(kept.X_dense, nearly)
    sparse = A.copy()
    sparse[:, :2] = 0.0  # 10 of 12 columns: below DENSE_MIN_DENSITY
    assert not Data(sparse, y).is_dense and Data(sparse, y).X_dense is None
    np.testing.assert_array_equal(A, before)


def test_building_data_copies_x_once():
    """Data keeps one copy of X (12 bytes a nonzero: float64 values, 32-bit indices) and finds its norms and
    any non-finite value without another array the size of X: squaring the values into a copy took 8 bytes a
    nonzero more at the peak, and the finiteness check's mask 1 (tracemalloc traces numpy's allocations)."""
    import tracemalloc

    X = sp.random(20_000, 2_000, density=0.05, random_state=0, format="csr")
    y = np.where(np.arange(X.shape[0]) % 2, 1.0, -1.0)
    Data(X, y)  # the norms' kernel compiled (or loaded) outside the measurement
    tracemalloc.start()
    try:
        data = Data(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12.6 * X.nnz, peak / X.nnz
    A = X.toarray()
    np.testing.assert_allclose(data.row_norms_sq, (A ** 2).sum(axis=1), rtol=1e-13)
    np.testing.assert_array_equal(data.col_norms_sq, np.asarray(X.multiply(X).sum(axis=0)).ravel())


def test_one_value_is_the_value_every_stored_entry_shares_else_none():
    """``Data.one_value``: binary or one-hot features scaled by one number share it (the sparse row kernels then read
    X's indices alone); one entry apart anywhere, or duplicates that the canonical copy sums, and there is none."""
    pattern = sp.random(30, 12, density=0.3, random_state=1, format="csr") + sp.eye(30, 12, format="csr")
    pattern.data[:] = 1.0
    y = np.ones(30)
    assert Data(0.25 * pattern, y).one_value == 0.25 and type(Data(0.25 * pattern, y).one_value) is float
    assert Data(-3.0 * pattern, y).one_value == -3.0
    for k in (1, pattern.nnz - 1):
        other = pattern.copy()
        other.data[k] = 2.0
        assert Data(other, y).one_value is None
    doubled = sp.csr_matrix((np.ones(3), ([0, 0, 1], [2, 2, 3])), shape=(2, 5))  # (0, 2) stored twice: 2.0 after
    assert Data(doubled, y[:2]).one_value is None
    assert Data(np.ones((3, 4)), y[:3]).one_value == 1.0
