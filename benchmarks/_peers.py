"""What the benchmarks share: the problems (data scaled by the mean example
norm, as in Csiba & Richtárik §7) and the peer libraries at cdlab's objective.

cdlab minimises P(w) = (1/n) Σ φ(x_i·w; y_i) + (λ/2)‖w‖², no intercept. Each
peer is built at its own conventions, converted (``CONVENTIONS``); the
benchmarks check that every peer reaches cdlab's P* (tests/test_faceoff_bench.py,
tests/test_race_bench.py).
"""
from __future__ import annotations

import numpy as np

import cdlab
from cdlab.data import normalize_data

CONVENTIONS = """\
Objective of every run: P(w) = (1/n) Σ φ(x_i·w; y_i) + (λ/2)‖w‖², no intercept; the peers' conventions:
  scikit-learn LogisticRegression, LinearSVC minimise C Σ loss + ½‖w‖²      → C = 1/(λn), fit_intercept=False
  scikit-learn Ridge minimises Σ (y_i − x_i·w)² + α‖w‖² (cdlab: ½(z−y)²)   → α = λn, fit_intercept=False
  snapml LogisticRegression / SupportVectorMachine / LinearRegression minimise Σ loss + (r/2)‖w‖²
                                                                          → regularizer r = λn, fit_intercept=False
      (not stated in its docs; checked: its solution zeroes Xᵀφ'(Xw) + r·w to 1e-7, not (1/n)Xᵀφ' + r·w)
  cyanure Classifier / Regression (penalty='l2') minimise (1/n) Σ loss + (λ₁/2)‖w‖² → lambda_1 = λ,
      fit_intercept=False (its docstring: psi(w) = lambda_1/2 ||w||², the loss averaged over n)"""

LIBRARIES = ("sklearn", "snapml", "cyanure")


# ------------------------------------------------------------------ problems

def scaled(X):
    """X divided by its mean example norm (Csiba & Richtárik §7), as CSR float64."""
    return normalize_data(X, "mean")


def real(name, rows=None):
    X, y = cdlab.load_dataset(name)
    return scaled(X[:rows]), y[:rows]


def labels(X, rng):
    t = X @ rng.standard_normal(X.shape[1]) + 0.5 * rng.standard_normal(X.shape[0])
    return np.where(t >= 0, 1.0, -1.0)


def dense(n, d, seed):
    rng = np.random.default_rng(seed)
    X = scaled(rng.standard_normal((n, d)))
    return X, labels(X, rng)


def peer_input(X):
    """Dense when at least half full (what a user would pass), CSR otherwise."""
    return X.toarray() if X.nnz >= 0.5 * X.shape[0] * X.shape[1] else X


def peer_status():
    """One line per peer library: version, or why it cannot run."""
    lines = []
    for mod in LIBRARIES:
        try:
            m = __import__(mod)
            version = getattr(m, "__version__", None) or getattr(getattr(m, "version", None), "__version__", None)
            lines.append(f"  {mod} {version or '(version unknown)'}")
        except Exception as exc:
            lines.append(f"  {mod}: NOT AVAILABLE ({type(exc).__name__}: {exc}); its rows say 'unavailable' "
                         f"(pip install -e \".[bench]\")")
    return "\n".join(lines)


# --------------------------------------------------------------------- peers
# A builder is (lam, n, d, tol, threads) → an unfitted estimator with fit(X, y) and coef_.

def sklearn_logistic(solver, dual=False):
    def build(lam, n, d, tol, threads=1):
        from sklearn.linear_model import LogisticRegression
        # a fixed random_state: saga and liblinear shuffle, and the tol found must hold on the timed reruns
        return LogisticRegression(solver=solver, dual=dual, C=1.0 / (lam * n), fit_intercept=False,
                                  tol=tol, max_iter=100000, random_state=0)
    return build


def sklearn_linear_svc(lam, n, d, tol, threads=1):
    """liblinear's dual CD for the L1-loss SVM: hinge max(0, 1 − y x·w), cdlab's 'hinge'."""
    from sklearn.svm import LinearSVC
    return LinearSVC(loss="hinge", dual=True, C=1.0 / (lam * n), fit_intercept=False, tol=tol, max_iter=1000000,
                     random_state=0)


def sklearn_ridge(solver):
    def build(lam, n, d, tol, threads=1):
        from sklearn.linear_model import Ridge
        return Ridge(alpha=lam * n, solver=solver, fit_intercept=False, tol=tol, max_iter=100000, random_state=0)
    return build


def snapml_model(kind):
    def build(lam, n, d, tol, threads=1):
        import snapml
        if kind == "hinge":
            return snapml.SupportVectorMachine(regularizer=lam * n, fit_intercept=False, tol=tol,
                                               max_iter=100000, n_jobs=threads)
        cls = snapml.LogisticRegression if kind == "logistic" else snapml.LinearRegression
        # its dual CD for n ≥ d, its primal CD otherwise (snapml's own advice)
        return cls(regularizer=lam * n, fit_intercept=False, dual=n >= d, tol=tol, max_iter=100000,
                   n_jobs=threads)
    return build


def cyanure_model(kind):
    def build(lam, n, d, tol, threads=1):
        if kind == "squared":
            from cyanure.estimators import Regression
            return Regression(penalty="l2", lambda_1=lam, fit_intercept=False, tol=tol, max_iter=100000,
                              n_threads=threads, verbose=False)
        from cyanure.estimators import Classifier
        return Classifier(loss="logistic", penalty="l2", lambda_1=lam, fit_intercept=False, tol=tol,
                          max_iter=100000, n_threads=threads, verbose=False)
    return build


def small_d(n, d):
    """Solvers that form or factor a d×d matrix (newton-cholesky, Ridge cholesky)."""
    return d <= 5000


# loss → [(peer name, builder, has threads, applies(n, d))]; "has threads" means the
# library runs its own threads (n_jobs / n_threads) or BLAS threads on dense data.
PEERS = {
    "logistic": [
        ("liblinear dual", sklearn_logistic("liblinear", dual=True), False, None),
        ("liblinear primal", sklearn_logistic("liblinear"), False, None),
        ("sklearn saga", sklearn_logistic("saga"), False, None),
        ("sklearn lbfgs", sklearn_logistic("lbfgs"), True, None),
        ("sklearn newton-cholesky", sklearn_logistic("newton-cholesky"), True, small_d),
        ("cyanure", cyanure_model("logistic"), True, None),
        ("snapml", snapml_model("logistic"), True, None),
    ],
    "hinge": [
        ("liblinear dual (LinearSVC)", sklearn_linear_svc, False, None),
        ("snapml", snapml_model("hinge"), True, None),
    ],
    "squared": [
        ("Ridge sag", sklearn_ridge("sag"), False, None),
        ("Ridge sparse_cg", sklearn_ridge("sparse_cg"), True, None),
        ("Ridge lsqr", sklearn_ridge("lsqr"), True, None),
        ("Ridge cholesky", sklearn_ridge("cholesky"), True, small_d),
        ("cyanure", cyanure_model("squared"), True, None),
        ("snapml", snapml_model("squared"), True, None),
    ],
}
