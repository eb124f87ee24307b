"""cdlab.data: the dataset registry against the data README, the LIBSVM reader's errors, the
synthetic generators' promises, and the extreme matrices against theory.md §4 (and brute force)."""
import bz2
import gzip
import hashlib
import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import cdlab
from cdlab.data import (DATASETS, DataFileNotFoundError, binary_extreme, data_home, extreme_matrix,
                        list_datasets, load_dataset, make_synthetic, normalize_data, planted_labels,
                        power_law_counts, read_libsvm, shipped_dir)


# ---------------------------------------------------------------- helpers

def counts(X):
    X = sp.csr_matrix(X)
    return np.diff(X.indptr), np.diff(X.tocsc().indptr)


def row_norms(X):
    return np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())


def face_off_constants(X):
    """C_P = Σ_j ‖f_j‖₀‖f_j‖², C_D = Σ_i ‖x_i‖₀‖x_i‖² (theory.md §4 (16)), straight from a dense copy."""
    A = np.asarray(sp.csr_matrix(X).toarray())
    nz = A != 0
    return float((nz.sum(0) * (A ** 2).sum(0)).sum()), float((nz.sum(1) * (A ** 2).sum(1)).sum())


def readme_table():
    """name -> {n, d[, nnz, pos, neg]} parsed from the data README (nnz and labels: train files only)."""
    table = {}
    text = (shipped_dir() / "README.md").read_text()
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 7 or not cells[1][:1].isdigit():
            continue
        names = [s.strip() for s in cells[0].split(",")]
        names = [names[0]] + [names[0] + s if s.startswith(".") else s for s in names[1:]]
        sizes = [int(s) for s in cells[1].split(",")]
        pos, neg = (int(s) for s in cells[5].split("/"))
        for k, (name, n) in enumerate(zip(names, sizes)):
            table[name] = {"n": n, "d": int(cells[2])}
            if k == 0:
                table[name].update(nnz=int(cells[3]), pos=pos, neg=neg)
    return table


README = readme_table()


# ---------------------------------------------------------------- registry

def test_registry_matches_readme_and_shipped_directory():
    shipped = {name: info for name, info in DATASETS.items() if info.kind == "shipped"}
    assert set(README) == set(shipped) == set(list_datasets("shipped"))
    for name, info in shipped.items():
        assert (info.n_samples, info.n_features) == (README[name]["n"], README[name]["d"]), name
        assert info.nnz == README[name].get("nnz"), name
        assert info.path == shipped_dir() / info.file and info.path.is_file()
    listed = {line.split()[-1].lstrip("*") for line in (shipped_dir() / "SHA256SUMS").read_text().splitlines()
              if line.strip()}
    assert listed == {info.file for info in shipped.values()}


def test_shipped_files_match_their_checksums():
    for line in (shipped_dir() / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split()
        assert hashlib.sha256((shipped_dir() / name.lstrip("*")).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("name", sorted(README))
def test_every_dataset_loads_as_the_readme_says(name):
    X, y = load_dataset(name)
    expected = README[name]
    assert isinstance(X, sp.csr_matrix) and X.dtype == np.float64 and y.dtype == np.float64
    assert X.shape == (expected["n"], expected["d"])
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert np.all(np.isfinite(X.data))
    if "nnz" in expected:
        assert X.nnz == expected["nnz"]
        assert (int((y == 1).sum()), int((y == -1).sum())) == (expected["pos"], expected["neg"])


def test_train_and_test_files_share_columns():
    for name in ("a9a", "ijcnn1", "reuters_moneyfx", "rcv1_small"):
        assert load_dataset(name)[0].shape[1] == load_dataset(name + ".t")[0].shape[1]


def test_cache_hands_out_independent_copies():
    X, y = load_dataset("heart_scale")
    X.data[:] = 7.0
    y[:] = 0.0
    X2, y2 = load_dataset("heart_scale")
    assert not np.any(X2.data == 7.0) and set(np.unique(y2)) == {-1.0, 1.0}
    assert X2.data is not load_dataset("heart_scale")[0].data


def test_data_home_default_and_env_var(tmp_path, monkeypatch):
    monkeypatch.delenv("CDLAB_DATA_DIR", raising=False)
    monkeypatch.setenv("CDLAB_CACHE", str(tmp_path / "cache"))
    assert data_home() == tmp_path / "cache" / "data"
    monkeypatch.setenv("CDLAB_DATA_DIR", str(tmp_path))
    assert data_home() == tmp_path
    # shipped sets do not depend on the data home; fetchable ones are looked up there
    assert load_dataset("heart_scale")[0].shape == (270, 13)
    with pytest.raises(DataFileNotFoundError, match=r"cdlab datasets fetch rcv1.binary.*"
                                                    + re.escape(str(tmp_path))):
        load_dataset("rcv1.binary", download=False)


def test_fetchable_file_of_the_wrong_shape_is_refused(tmp_path, monkeypatch):
    """A file placed by hand in the data home is checked against the published shape when loaded."""
    monkeypatch.setenv("CDLAB_DATA_DIR", str(tmp_path))
    with bz2.open(tmp_path / DATASETS["real-sim"].file, "wb") as f:
        f.write(b"1 1:0.5\n-1 2:0.25\n")
    with pytest.raises(ValueError, match=r"n=2, d=20958, nnz=2; the published shape is n=72309, d=20958"):
        load_dataset("real-sim")


def test_label_map_of_a_fetchable_set(tmp_path, monkeypatch):
    """covtype.binary's labels 1/2 become +1/-1; any other label is named."""
    from cdlab.data.registry import DatasetInfo, map_labels

    info = DatasetInfo("toy", "toy.bz2", 3, 2, "toy", kind="fetch", label_map=((1.0, 1.0), (2.0, -1.0)))
    np.testing.assert_array_equal(map_labels(info, np.array([1.0, 2.0, 2.0])), [1.0, -1.0, -1.0])
    with pytest.raises(ValueError, match="label 3 is not one of"):
        map_labels(info, np.array([1.0, 3.0]))


def test_unknown_name_and_missing_path(tmp_path):
    with pytest.raises(ValueError, match="known datasets: .*a9a.*madelon"):
        load_dataset("a9b")
    missing = tmp_path / "nope.svm"
    with pytest.raises(FileNotFoundError, match=re.escape(str(missing))):
        load_dataset(missing)
    with pytest.raises(ValueError, match="nope.svm"):
        load_dataset(str(missing))
    with pytest.raises(ValueError, match="dataset name or a path"):
        load_dataset(42)
    with pytest.raises(ValueError, match="not a file"):
        load_dataset(tmp_path)


# ---------------------------------------------------------------- reading files by path

GOOD = b"# a comment line\n+1 qid:3 1:0.5 3:-2 # trailing comment\n\n-1 2:1e-3\n1 1:1 2:2 3:3\n"


@pytest.mark.parametrize("suffix", [".txt", ".bz2", ".gz"])
def test_valid_file_by_path(tmp_path, suffix):
    path = tmp_path / f"good{suffix}"
    opener = {".txt": open, ".bz2": bz2.open, ".gz": gzip.open}[suffix]
    with opener(path, "wb") as f:
        f.write(GOOD)
    X, y = load_dataset(path)
    assert isinstance(X, sp.csr_matrix) and X.dtype == np.float64
    np.testing.assert_array_equal(X.toarray(), [[0.5, 0, -2], [0, 1e-3, 0], [1, 2, 3]])
    np.testing.assert_array_equal(y, [1, -1, 1])
    X5, _ = load_dataset(str(path), n_features=5)
    assert X5.shape == (3, 5)
    np.testing.assert_array_equal(X5.toarray()[:, :3], X.toarray())
    X0, _ = read_libsvm(path, zero_based=True)
    assert X0.shape == (3, 4) and X0[0, 1] == 0.5


MALFORMED = [  # (content, 1-based line of the first bad line, what the message must say)
    (b"1 1:2\n-1 2:1\n# fine\n\n1 a:b\n", 5, "feature index 'a' is not an integer"),
    (b"1 1:2\n1 3:x\n", 2, "value of feature 3 'x' is not a number"),
    (b"1 1:2\n\nabc 1:1\n", 3, "label 'abc' is not a number"),
    (b"1 1:2\n1 2:1 1:3\n", 2, "strictly increasing, got 2 then 1"),
    (b"1 1:2\n1 2:1 2:3\n", 2, "strictly increasing, got 2 then 2"),
    (b"-1 1:1\n1 1:2 junk\n", 2, "token 'junk' is not of the form index:value"),
    (b"1 1:2\n1 -4:2\n", 2, "feature index -4 is out of range"),
    (b"1 1:2\n1 2:nan\n", 2, "'nan' is not finite"),
    (b"1 1:2\ninf 2:1\n", 2, "label 'inf' is not finite"),
    (b"1 1:2\n1 99999999999999999999:1\n", 2, "out of range"),
    ("1 1:2\n-1 2:1 é:3\n".encode(), 2, "feature index 'é' is not an integer: '-1 2:1 é:3'"),  # not 'Ã©'
    (b"1 1:2\n-1 2:\xff\n", 2, "value of feature 2 '\ufffd' is not a number"),
]


@pytest.mark.parametrize("content,line,what", MALFORMED)
@pytest.mark.parametrize("suffix", [".txt", ".bz2"])
def test_malformed_file_names_file_and_line(tmp_path, content, line, what, suffix):
    path = tmp_path / f"bad{suffix}"
    with (bz2.open if suffix == ".bz2" else open)(path, "wb") as f:
        f.write(content)
    with pytest.raises(ValueError) as info:
        load_dataset(path)
    message = str(info.value)
    assert str(path) in message and f"line {line}:" in message and what in message, message


def test_malformed_against_n_features_and_base(tmp_path):
    path = tmp_path / "wide.svm"
    path.write_bytes(b"1 1:1\n-1 2:1\n1 1:1 4:2\n-1 5:1\n")
    with pytest.raises(ValueError, match=r"wide.svm, line 3: feature index 4 does not fit n_features=3"):
        load_dataset(path, n_features=3)
    zero = tmp_path / "zero.svm"
    zero.write_bytes(b"1 1:1\n-1 0:1\n")
    assert load_dataset(zero)[0].shape == (2, 2)  # "auto": an index 0 makes the file 0-based
    with pytest.raises(ValueError, match=r"zero.svm, line 2: feature index 0 in a file read as 1-based"):
        load_dataset(zero, zero_based=False)


def test_unreadable_and_empty_files(tmp_path):
    corrupt = tmp_path / "corrupt.bz2"
    corrupt.write_bytes(b"this is not bzip2")
    with pytest.raises(ValueError, match="corrupt.bz2: cannot read"):
        load_dataset(corrupt)
    empty = tmp_path / "empty.svm"
    empty.write_bytes(b"# only a comment\n\n")
    with pytest.raises(ValueError, match="empty.svm: the file holds no examples"):
        load_dataset(empty)


# ---------------------------------------------------------------- synthetic data

@pytest.mark.parametrize("n,d,density", [(400, 60, 0.1), (60, 400, 0.05), (300, 200, 0.8), (50, 40, 1.0),
                                         (500, 500, 0.002)])
@pytest.mark.parametrize("values", ["gaussian", "binary", "uniform"])
def test_synthetic_shape_density_values(n, d, density, values):
    X, y = make_synthetic(n, d, density=density, values=values, seed=3)
    assert isinstance(X, sp.csr_matrix) and X.dtype == np.float64 and X.has_sorted_indices
    assert X.shape == (n, d) and X.nnz == round(density * n * d)
    rows, cols = counts(X)
    assert rows.min() >= 1 and cols.min() >= 1
    assert rows.max() - rows.min() <= 1 and cols.max() - cols.min() <= 1  # skew 0: uniform counts
    assert np.all(X.data != 0)
    if values == "binary":
        assert set(np.unique(X.data)) <= {-1.0, 1.0}
    elif values == "uniform":
        assert np.all(np.abs(X.data) < 1) and abs(X.data.mean()) < 4 * np.sqrt(1 / 3 / X.nnz)
    else:
        assert abs(X.data.mean()) < 4 / np.sqrt(X.nnz) and abs(X.data.std() - 1) < 4 / np.sqrt(X.nnz)
    assert set(np.unique(y)) <= {-1.0, 1.0}


def test_power_law_counts_follow_the_documented_law():
    rng = np.random.default_rng(0)
    for total, size, cap, exponent in [(5000, 400, 300, 0.0), (5000, 400, 300, 1.0), (20000, 1000, 60, 0.7),
                                       (3000, 1000, 400, 1.5), (999, 7, 200, 0.5)]:
        c = power_law_counts(total, size, cap, exponent, rng)
        assert c.sum() == total and c.min() >= 1 and c.max() <= cap
        s = np.sort(c)[::-1]
        if exponent == 0:
            assert s[0] - s[-1] <= 1
        # one scale for every unclipped rank k: |count_k − scale·k^(−exponent)| < 1, i.e. the
        # intervals ((count_k − 1)·k^exponent, (count_k + 1)·k^exponent) share a point
        k = np.arange(1, size + 1, dtype=float)
        inner = (s > 1) & (s < cap)
        assert inner.sum() >= 3
        assert np.max((s[inner] - 1) * k[inner] ** exponent) < np.min((s[inner] + 1) * k[inner] ** exponent)


@pytest.mark.parametrize("n,d,density,row_skew,col_skew", [(2000, 300, 0.02, 0.0, 1.0), (300, 2000, 0.02, 1.0, 0.0),
                                                           (400, 300, 0.7, 0.0, 1.5), (1000, 1000, 0.01, 0.6, 0.6)])
def test_synthetic_counts_hit_their_targets(n, d, density, row_skew, col_skew):
    X, _ = make_synthetic(n, d, density=density, row_skew=row_skew, col_skew=col_skew, seed=1)
    rows, cols = counts(X)
    nnz = round(density * n * d)
    rng = np.random.default_rng(123)  # the targets' sorted values do not depend on the draw
    np.testing.assert_array_equal(np.sort(rows), np.sort(power_law_counts(nnz, n, d, row_skew, rng)))
    np.testing.assert_array_equal(np.sort(cols), np.sort(power_law_counts(nnz, d, n, col_skew, rng)))


def test_column_skew_skews_columns_only_and_row_skew_rows_only():
    def spread(c):
        return c.max() / np.median(c)
    col_ratio, row_ratio = [], []
    for skew in [0.0, 0.5, 1.0, 1.5, 2.0]:
        rows, cols = counts(make_synthetic(3000, 400, density=0.02, col_skew=skew, seed=0)[0])
        assert rows.max() - rows.min() <= 1 and cols.min() >= 1
        col_ratio.append(spread(cols))
        rows, cols = counts(make_synthetic(400, 3000, density=0.02, row_skew=skew, seed=0)[0])
        assert cols.max() - cols.min() <= 1 and rows.min() >= 1
        row_ratio.append(spread(rows))
    assert col_ratio[0] < 1.05 and row_ratio[0] < 1.05
    assert np.all(np.diff(col_ratio) > 0) and np.all(np.diff(row_ratio) > 0)
    assert col_ratio[-1] > 50 and row_ratio[-1] > 50


def test_both_skews_still_give_exact_rows_and_no_empty_line():
    X, _ = make_synthetic(2000, 1500, density=0.01, row_skew=1.5, col_skew=1.5, seed=4)
    rows, cols = counts(X)
    assert X.nnz == 30000 and rows.min() >= 1 and cols.min() >= 1
    target = power_law_counts(30000, 2000, 1500, 1.5, np.random.default_rng(0))
    np.testing.assert_array_equal(np.sort(rows), np.sort(target))


def test_allow_empty():
    with pytest.raises(ValueError, match="no row or column empty"):
        make_synthetic(100, 2000, density=0.001)
    X, _ = make_synthetic(100, 2000, density=0.001, col_skew=1.0, allow_empty=True)
    rows, cols = counts(X)
    assert X.nnz == 200 and (cols == 0).any()


def test_synthetic_is_reproducible():
    a = make_synthetic(300, 80, density=0.1, col_skew=0.8, seed=7)
    b = make_synthetic(300, 80, density=0.1, col_skew=0.8, seed=7)
    c = make_synthetic(300, 80, density=0.1, col_skew=0.8, seed=8)
    assert (a[0] != b[0]).nnz == 0 and np.array_equal(a[1], b[1])
    assert (a[0] != c[0]).nnz > 0


@pytest.mark.parametrize("labels", ["linear", "random", "regression"])
def test_label_models(labels):
    X, y = make_synthetic(2000, 30, density=0.5, labels=labels, seed=2)
    assert y.shape == (2000,) and y.dtype == np.float64
    if labels == "regression":
        assert len(np.unique(y)) == 2000
    else:
        assert set(np.unique(y)) == {-1.0, 1.0}
        assert 0.3 < (y == 1).mean() < 0.7


def test_linear_labels_flip_at_the_documented_rate():
    X, _ = make_synthetic(20000, 40, density=1.0, seed=5)
    y0, w = planted_labels(X, "linear", noise=0.0, seed=11, return_coef=True)
    np.testing.assert_array_equal(y0, np.where(X @ w >= 0, 1.0, -1.0))
    y, w2 = planted_labels(X, "linear", noise=0.5, seed=11, return_coef=True)
    assert np.array_equal(w, w2)
    flipped = np.mean(y != y0)
    expected = math.atan(0.5) / math.pi  # z Gaussian (dense Gaussian rows), independent Gaussian noise
    assert abs(flipped - expected) < 4 * math.sqrt(expected * (1 - expected) / 20000)
    yr, wr = planted_labels(X, "regression", noise=0.0, seed=11, return_coef=True)
    np.testing.assert_allclose(yr, X @ wr, rtol=1e-12)


def test_normalisation():
    X, _ = make_synthetic(500, 50, density=0.2, normalize="rows", seed=1)
    np.testing.assert_allclose(row_norms(X), 1.0, rtol=1e-12)
    X, _ = make_synthetic(500, 50, density=0.2, normalize="mean", seed=1)
    norms = row_norms(X)
    assert abs(norms.mean() - 1.0) < 1e-12 and norms.std() > 0.01
    Z = sp.csr_matrix(np.array([[3.0, 4.0], [0.0, 0.0], [0.0, 2.0]]))
    np.testing.assert_allclose(normalize_data(Z, "rows").toarray(), [[0.6, 0.8], [0, 0], [0, 1]])
    np.testing.assert_allclose(normalize_data(Z, "mean").toarray(), Z.toarray() / (7 / 3))
    np.testing.assert_array_equal(normalize_data(Z, "none").toarray(), Z.toarray())


def test_arrays_given_by_the_user_are_not_modified():
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((40, 7))
    dense[dense < 0.3] = 0.0
    for X in (dense, sp.csr_matrix(dense), sp.csc_matrix(dense), sp.coo_matrix(dense)):
        before = X.copy()
        if not sp.issparse(X):
            X.flags.writeable = False  # a write attempt would raise
        for how in ("none", "rows", "mean"):
            out = normalize_data(X, how)
            assert out is not X
            if sp.issparse(X):
                assert not np.shares_memory(out.data, X.data)
        for kind in ("linear", "random", "regression"):
            planted_labels(X, kind, noise=0.3, seed=1)
        if sp.issparse(X):
            assert (X != before).nnz == 0 and X.format == before.format
        else:
            np.testing.assert_array_equal(X, before)


# ---------------------------------------------------------------- extreme matrices (theory.md §4)

@pytest.mark.parametrize("n,d", [(50, 30), (30, 50), (2, 9), (200, 3)])
def test_extreme_matrices_approach_n_and_one_over_d(n, d):
    previous = {"primal_worst": np.inf, "dual_worst": np.inf}
    for eps in [1e-1, 1e-2, 1e-4, 1e-6, 1e-8]:
        for kind, limit in [("primal_worst", n), ("dual_worst", 1 / d)]:
            X = extreme_matrix(n, d, kind=kind, eps=eps)
            rows, cols = counts(X)
            assert X.shape == (n, d) and rows.min() >= 1 and cols.min() >= 1
            cp, cd = face_off_constants(X)
            frob = float((X.toarray() ** 2).sum())
            # Theorem 3, then the docstring's exact values
            assert frob * (1 - 1e-12) <= cp <= n * frob * (1 + 1e-12)
            assert frob * (1 - 1e-12) <= cd <= d * frob * (1 + 1e-12)
            if kind == "primal_worst":
                exact = (n * (n - 1 + eps ** 2) + (d - 1) * eps ** 2, (n - 1) + d ** 2 * eps ** 2)
            else:
                exact = ((d - 1) + n ** 2 * eps ** 2, d * (d - 1 + eps ** 2) + (n - 1) * eps ** 2)
            np.testing.assert_allclose((cp, cd), exact, rtol=1e-12)
            gap = abs(cp / cd / limit - 1)
            assert gap < previous[kind]
            previous[kind] = gap
    assert previous["primal_worst"] < 1e-8 and previous["dual_worst"] < 1e-8


def theory_min(n, d, omega):
    """theory.md §4: min C_P = (d−r)a² + r(a+1)², a = ⌊ω/d⌋, r = ω − ad."""
    a, r = divmod(omega, d)
    return (d - r) * a ** 2 + r * (a + 1) ** 2


def theory_max(n, d, omega):
    """theory.md §4: max C_P = t n² + (1+ρ)² + (d−t−1), t = ⌊(ω−d)/(n−1)⌋, ρ = ω−d−t(n−1).
    Undefined for n = 1 (division by n − 1): there every column holds one cell and C_P = ω = d."""
    if n == 1:
        return omega
    t, rho = divmod(omega - d, n - 1)
    return t * n ** 2 + (1 + rho) ** 2 + (d - t - 1)


def check_binary(X, n, d, omega, signed):
    rows, cols = counts(X)
    assert X.shape == (n, d) and X.nnz == omega and rows.min() >= 1 and cols.min() >= 1
    assert set(np.unique(X.data)) <= ({-1.0, 1.0} if signed else {1.0})
    return int((cols ** 2).sum()), int((rows ** 2).sum())


GRID = [(n, d, omega) for n in range(1, 7) for d in range(1, 7) for omega in range(max(n, d), n * d + 1)]
GRID += [(30, 50, 50), (30, 50, 77), (30, 50, 700), (30, 50, 1500), (50, 7, 51), (50, 7, 349), (1, 9, 9),
         (9, 1, 9), (40, 40, 1599)]


@pytest.mark.parametrize("signed", [False, True])
def test_binary_extremes_equal_the_closed_forms(signed):
    for n, d, omega in GRID:
        seed = n * 100 + d
        cp_min, cd_at_cp_min = check_binary(binary_extreme(n, d, omega, "min_CP", seed, signed), n, d, omega, signed)
        cp_max, _ = check_binary(binary_extreme(n, d, omega, "max_CP", seed, signed), n, d, omega, signed)
        _, cd_min = check_binary(binary_extreme(n, d, omega, "min_CD", seed, signed), n, d, omega, signed)
        _, cd_max = check_binary(binary_extreme(n, d, omega, "max_CD", seed, signed), n, d, omega, signed)
        assert (cp_min, cp_max) == (theory_min(n, d, omega), theory_max(n, d, omega)), (n, d, omega)
        assert (cd_min, cd_max) == (theory_min(d, n, omega), theory_max(d, n, omega)), (n, d, omega)
        assert cd_at_cp_min == cd_min  # the even layout is at both minima at once
        # C_P and C_D agree with the general definition (16) on the ±1 / 0-1 matrix itself
        X = binary_extreme(n, d, omega, "max_CP", seed, signed)
        assert face_off_constants(X)[0] == cp_max


def test_closed_forms_are_the_true_extremes_by_brute_force():
    """Every binary n×d matrix (n·d ≤ 12) with no empty row or column, grouped by ω."""
    for n, d in [(1, 4), (4, 1), (2, 2), (2, 3), (3, 2), (2, 5), (3, 3), (3, 4), (4, 3), (2, 6), (6, 2)]:
        bits = np.array(list(itertools.product([0, 1], repeat=n * d)), dtype=np.int64).reshape(-1, n, d)
        rows, cols = bits.sum(2), bits.sum(1)
        ok = (rows >= 1).all(1) & (cols >= 1).all(1)
        omega, cp, cd = bits[ok].sum((1, 2)), (cols[ok] ** 2).sum(1), (rows[ok] ** 2).sum(1)
        for w in np.unique(omega):
            sel = omega == w
            truth = (cp[sel].min(), cp[sel].max(), cd[sel].min(), cd[sel].max())
            built = (check_binary(binary_extreme(n, d, w, "min_CP"), n, d, w, False)[0],
                     check_binary(binary_extreme(n, d, w, "max_CP"), n, d, w, False)[0],
                     check_binary(binary_extreme(n, d, w, "min_CD"), n, d, w, False)[1],
                     check_binary(binary_extreme(n, d, w, "max_CD"), n, d, w, False)[1])
            assert built == truth, (n, d, w)
            assert truth == (theory_min(n, d, w), theory_max(n, d, w), theory_min(d, n, w), theory_max(d, n, w))
        assert np.array_equal(np.unique(omega), np.arange(max(n, d), n * d + 1))  # exactly the feasible ω


# ---------------------------------------------------------------- validation

BAD_CALLS = [
    (make_synthetic, (0, 5), {}, "n_samples must be an integer ≥ 1"),
    (make_synthetic, (5, 2.5), {}, "n_features must be an integer"),
    (make_synthetic, (True, 5), {}, "n_samples must be an integer"),
    (make_synthetic, (5, 5), {"density": 0.0}, r"density must be finite and in \(0, 1\], got 0.0"),
    (make_synthetic, (5, 5), {"density": 1.5}, r"density must be finite and in \(0, 1\], got 1.5"),
    (make_synthetic, (5, 5), {"density": float("nan")}, r"density must be finite and in \(0, 1\], got nan"),
    (make_synthetic, (5, 5), {"row_skew": -1}, "row_skew must be finite and ≥ 0, got -1.0"),
    (make_synthetic, (5, 5), {"col_skew": float("inf")}, "col_skew must be finite and ≥ 0, got inf"),
    (make_synthetic, (5, 5), {"values": "poisson"}, "unknown values 'poisson'"),
    (make_synthetic, (5, 5), {"labels": "multiclass"}, "unknown labels 'multiclass'"),
    (make_synthetic, (5, 5), {"normalize": "l1"}, "unknown normalize 'l1'"),
    (make_synthetic, (5, 5), {"noise": -0.1}, "noise must be finite and ≥ 0, got -0.1"),
    (make_synthetic, (5, 5), {"seed": -3}, "seed must be an integer ≥ 0"),
    (make_synthetic, (5, 5), {"allow_empty": "yes"}, "allow_empty must be True or False"),
    (make_synthetic, (10, 10), {"density": 0.001, "allow_empty": True}, "the matrix would be empty"),
    (extreme_matrix, (0, 3), {}, "n must be an integer ≥ 1"),
    (extreme_matrix, (3, 3), {"kind": "worst"}, "unknown kind 'worst'"),
    (extreme_matrix, (3, 3), {"eps": 0.0}, r"eps must be finite and in \(0, 1\), got 0.0"),
    (extreme_matrix, (3, 3), {"eps": 1.0}, r"eps must be finite and in \(0, 1\), got 1.0"),
    (binary_extreme, (3, 4, 3), {}, r"omega=3 .* infeasible .* max\(n, d\) = 4 ≤ omega ≤ n·d = 12"),
    (binary_extreme, (3, 4, 13), {}, "omega=13 nonzeros is infeasible"),
    (binary_extreme, (3, 4, 6), {"which": "max_C"}, "unknown which 'max_C'"),
    (binary_extreme, (3, 4, 6), {"signed": 1}, "signed must be True or False"),
    (binary_extreme, (3, 0, 6), {}, "d must be an integer ≥ 1"),
    (normalize_data, (np.ones((2, 2)), "unit"), {}, "unknown normalize 'unit'"),
    (normalize_data, (np.array([[np.nan, 1.0]]),), {}, "NaN or inf"),
    (normalize_data, (np.zeros((3, 2)), "mean"), {}, "X is zero"),
    (planted_labels, (np.ones((2, 2)), "ordinal"), {}, "unknown labels 'ordinal'"),
    (planted_labels, (np.ones(3),), {}, "2-dimensional"),
    (planted_labels, (sp.csr_matrix(np.array([[1.0, np.inf]])),), {}, "NaN or inf"),
    (load_dataset, ("a9a",), {"n_features": 0}, "n_features must be an integer ≥ 1"),
    (load_dataset, ("a9a",), {"n_features": 100}, "has 123 features; n_features=100 is too few"),
    (read_libsvm, (__file__,), {"zero_based": "maybe"}, "zero_based must be"),
]


@pytest.mark.parametrize("func,args,kwargs,message", BAD_CALLS)
def test_bad_input_raises_a_named_value_error(func, args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        func(*args, **kwargs)


def test_feature_index_far_beyond_the_nonzeros_is_refused(tmp_path):
    """Issue 17 H1: a two-line file holding index 10⁹ made `cdlab solve` allocate GiBs."""
    from cdlab.data import libsvm

    path = tmp_path / "wide.svm"
    path.write_text("# a comment line first\n1 1000000000:1\n-1 1:1\n")
    limit = max(libsvm.FEATURES_FLOOR, libsvm.FEATURES_PER_NONZERO * 2)
    with pytest.raises(ValueError, match=re.escape(
            f"wide.svm, line 2: feature index 1000000000 implies 1000000000 features, far beyond the 2 "
            f"nonzeros the file holds (at most max({libsvm.FEATURES_FLOOR}, {libsvm.FEATURES_PER_NONZERO} × nnz) "
            f"= {limit} without n_features); pass n_features=1000000000 explicitly")):
        cdlab.load_dataset(path)
    X, y = cdlab.load_dataset(path, n_features=10 ** 9)  # asked for explicitly: read as is
    assert X.shape == (2, 10 ** 9) and X.nnz == 2
    with pytest.raises(ValueError, match="more than max_bytes"):  # and Problem's budget has the last word
        cdlab.Problem(X, y, max_bytes=4 * 2 ** 30)
    path.write_text(f"1 {libsvm.FEATURES_FLOOR}:1\n-1 1:1\n")  # up to the floor is fine whatever the nnz
    assert cdlab.load_dataset(path)[0].shape == (2, libsvm.FEATURES_FLOOR)


def test_load_reads_every_kind_of_spec_as_the_entry_points_do(tmp_path):
    from cdlab.data import load

    X, y = load("heart_scale")
    X2, y2 = load_dataset("heart_scale")
    assert (X != X2).nnz == 0 and np.array_equal(y, y2)
    Xr, _ = load("heart_scale", "rows")
    assert (Xr != normalize_data(X, "rows")).nnz == 0
    path = tmp_path / "tiny.svm"
    path.write_text("1 1:2 3:1\n-1 2:1\n")
    Xp, yp = load({"path": str(path), "n_features": 4, "zero_based": False})
    assert Xp.shape == (2, 4) and yp.tolist() == [1.0, -1.0]
    Xs, ys = load({"synthetic": {"n_samples": 7, "n_features": 3, "seed": 1}}, "mean")
    Xm, ym = make_synthetic(7, 3, seed=1)
    assert (Xs != normalize_data(Xm, "mean")).nnz == 0 and np.array_equal(ys, ym)
    with pytest.raises(ValueError, match="a dataset is a name, a path"):
        load({"file": "x"})
    with pytest.raises(ValueError, match="unknown normalize 'unit'"):
        load("heart_scale", "unit")
