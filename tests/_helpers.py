"""Helpers shared by several test modules (a test module never imports another).

* shipped data as problems: ``shipped_problem`` (a LIBSVM file as is), ``sparse_problem``;
* the face-off's scaling and the primal/dual RCD checks: ``scale_rows``, ``real_data``,
  ``scaled_problem``, ``synthetic_problem``, ``skewed``, ``check_certified``,
  ``check_importance_wins``, ``tiny_problem``;
* the bounds' data: ``mean_scaled_dataset``, ``bounds_synthetic``;
* ``first_steps``: the steps at the first checkpoint where a trace column reaches ε;
* ``solve_with_and_without``: a shrinking run with and without one of its polishes;
* the browser: ``CHROMIUM``, ``ARGS``.
"""
import functools

import numpy as np
import scipy.sparse as sp

import cdlab
from cdlab.data import normalize_data, shipped_dir
from independent import primal_optimum

DATA = shipped_dir()


def shipped_problem(name, rows=None, **kw):
    """A Problem on a shared LIBSVM file (first ``rows`` rows)."""
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(str(DATA / f"{name}.bz2"))
    if rows is not None:
        X, y = X[:rows], y[:rows]
    return cdlab.Problem(X, y, **kw)


def sparse_problem(n=40, d=30, density=0.15, seed=0, **kw):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr", data_rvs=rng.standard_normal)
    y = np.sign(rng.standard_normal(n))
    return cdlab.Problem(X, y, **kw)


def first_steps(trace, column, eps):
    """Steps at the first checkpoint where ``column`` ≤ eps (inf if never)."""
    hit = trace[trace[column] <= eps]
    return hit.steps.iloc[0] if len(hit) else np.inf


# ------------------------------------------------ primal / dual RCD (face-off scaling)

LOSSES = ("squared", "logistic", "smoothed_hinge")
# dataset → rows kept: small sets whole, larger ones a leading slice
REAL = {"heart_scale": None, "colon-cancer": None, "a9a": 2000, "reuters_moneyfx": 800}


def scale_rows(X):
    """Divide by the mean example norm (the face-off experiments' scaling)."""
    sq = X.multiply(X).sum(axis=1) if hasattr(X, "multiply") else (X * X).sum(axis=1)
    return X / np.sqrt(np.asarray(sq).ravel()).mean()


def synthetic_problem(loss, n=200, d=50, seed=0, l1=0.0):
    rng = np.random.default_rng(seed)
    X = scale_rows(rng.standard_normal((n, d)))
    t = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n)
    y = t if loss == "squared" else np.where(t >= 0, 1.0, -1.0)
    return cdlab.Problem(X, y, loss=loss, lam=1.0 / n, l1=l1)


@functools.lru_cache(maxsize=None)
def real_data(name):
    """The REAL dataset ``name`` (its leading rows), scaled by their mean example norm."""
    return mean_scaled_dataset(name, REAL[name])


def scaled_problem(name, loss, l1=0.0):
    X, y = real_data(name)
    return cdlab.Problem(X, y, loss=loss, lam=1.0 / X.shape[0], l1=l1)


_LBFGS = {}


def lbfgs_value(problem):
    """P* by L-BFGS-B (tests/independent.py), cached per problem content. Empty
    columns are left out: with λ > 0 their optimal weight is 0 and they add
    nothing to P, but they would double L-BFGS-B's work on sparse slices."""
    key = problem.content_hash()
    if key not in _LBFGS:
        used = problem.col_nnz > 0
        _LBFGS[key] = primal_optimum(problem.X[:, used], problem.y, problem.loss, problem.lam, problem.l1,
                                     problem.s)[0]
    return _LBFGS[key]


def check_certified(problem, method, tol=1e-9, max_passes=5000, **options):
    """The run's gap reaches tol, and its P agrees with L-BFGS-B's to 1e-8
    (relative); L-BFGS-B's value respects weak duality against our D."""
    res = cdlab.solve(problem, method=method, tol=tol, max_passes=max_passes, **options)
    last = res.trace.iloc[-1]
    assert res.converged and last.gap <= tol, res
    # the trace's P and gap are those of the returned iterates (at a primal method's α = −φ'(Xw) the gap
    # within rounding: losses.certificate_sums_from_w)
    assert problem.primal(res.w) == last.primal
    if cdlab.METHODS[res.method].kind == "primal":
        assert abs(problem.gap(res.w, res.alpha) - last.gap) <= 1e-13 * max(1.0, abs(last.primal))
    else:
        assert problem.gap(res.w, res.alpha) == last.gap
    p_ref = lbfgs_value(problem)
    assert abs(last.primal - p_ref) <= 1e-8 * abs(p_ref), (last.primal, p_ref)
    assert p_ref >= last.dual - 1e-12, (p_ref, last.dual)
    return res


def passes_to_gap(problem, method, sampling, seed, tol=1e-8, **options):
    res = cdlab.solve(problem, method=method, sampling=sampling, seed=seed, tol=tol, max_passes=3000,
                      eval_every=0.25, **options)
    assert res.converged, res
    return res.trace.passes.iloc[-1]


def skewed(axis, n, d, heavy, scale, seed):
    """Dense logistic data in which a fraction ``heavy`` of the rows (axis 0)
    or columns (axis 1) is ``scale`` times larger than the rest."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    k = int(heavy * X.shape[axis])
    if axis == 0:
        X[:k] *= scale
    else:
        X[:, :k] *= scale
    X = scale_rows(X)
    y = np.where(X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n) >= 0, 1.0, -1.0)
    return cdlab.Problem(X, y, loss="logistic", lam=1.0 / n)


def check_importance_wins(method, problems, **options):
    """Importance needs fewer passes than uniform: by ≥ 1.5× on the median
    over the seeds, and on at least 80% of the seeds individually."""
    ratios = []
    for seed, problem in enumerate(problems):
        uni = passes_to_gap(problem, method, "uniform", seed, **options)
        imp = passes_to_gap(problem, method, "importance", seed, **options)
        ratios.append(uni / imp)
    ratios = np.array(ratios)
    assert np.median(ratios) >= 1.5, ratios
    assert (ratios > 1.0).sum() >= 0.8 * len(ratios), ratios


def tiny_problem():
    """3×4, nnz 7: columns hold 2, 1, 3, 1 nonzeros, rows 2, 1, 4."""
    X = np.array([[1.0, 0, 2, 0], [0, 0, 3, 0], [4, 5, 6, 7]])
    return cdlab.Problem(X, np.array([1.0, -1.0, 1.0]), loss="logistic", lam=0.1)


# ------------------------------------------------ the bounds' data

def mean_scaled_dataset(name, n_max=None):
    """A shipped dataset (its first n_max rows) divided by their mean example norm (face-off §7)."""
    X, y = cdlab.load_dataset(name)
    if n_max:
        X, y = X[:n_max], y[:n_max]
    return normalize_data(X, "mean"), y


def bounds_synthetic(kind, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "dense_skewed_columns":  # n > d, column norms spread over e^±2
        X = rng.standard_normal((400, 30)) * np.exp(rng.standard_normal(30))
    elif kind == "sparse_wide":  # d ≫ n, skewed row lengths
        X = sp.random(80, 600, density=0.05, random_state=rng, data_rvs=rng.standard_normal).toarray()
        X *= np.exp(0.8 * rng.standard_normal(80))[:, None]
        X[np.arange(80), rng.integers(0, 600, 80)] += 1.0
    else:
        raise ValueError(kind)
    X = normalize_data(X, "mean")
    return X, np.sign(X @ rng.standard_normal(X.shape[1]) + 0.3 * rng.standard_normal(X.shape[0]))


# ------------------------------------------------ the browser

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


def solve_with_and_without(monkeypatch, module, name, problem, nothing=0, **kw):
    """(with, without, reads): ``cdlab.solve(problem, "sdca", **kw)`` with ``module.name`` (a polish) counted,
    then with it replaced by one that reads nothing (returns ``nothing``); ``reads`` lists what each call of
    it returned."""
    reads, polish = [], getattr(module, name)
    monkeypatch.setattr(module, name, lambda *args: reads.append(polish(*args)) or reads[-1])
    with_it = cdlab.solve(problem, "sdca", **kw)
    monkeypatch.setattr(module, name, lambda *args: nothing)
    return with_it, cdlab.solve(problem, "sdca", **kw), reads
