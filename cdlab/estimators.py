"""scikit-learn estimators on top of :func:`cdlab.solve`.

    from cdlab.estimators import CDClassifier, CDRegressor
    clf = CDClassifier(loss="logistic", lam=1e-4, method="sdca").fit(X, y)
    clf.predict(X), clf.predict_proba(X), clf.score(X, y), clf.gap_

Both minimise the primal of theory.md §1, P(w) = (1/n) Σ φ(x_i·w; y_i) +
(λ/2)‖w‖² + μ‖w‖₁, with the solver, sampling and budget the parameters name,
and keep the certificate of every fit (``gap_``, ``status_``, ``traces_``).

Design choices (and why):

* **Regularisation per example.** ``lam`` is λ of theory.md, so λ = 1/(C·n)
  matches scikit-learn's ``C`` of LogisticRegression / LinearSVC and
  ``alpha = λ·n`` matches Ridge.
* **Intercept.** The dual methods (SDCA and friends) have no room for an
  unregularised bias (it would add the constraint Σα_i = 0 and break the
  single-coordinate steps), so, as liblinear does, ``fit_intercept=True``
  appends a constant feature of value ``intercept_scaling`` whose weight is
  regularised like the others; ``intercept_ = intercept_scaling · w_last``.
* **Labels.** Any labels are accepted; they are mapped to ±1 internally
  (``classes_[1]`` → +1 for a binary problem).
* **Multi-class.** Honest one-vs-rest: one binary problem per class, each
  solved to its own duality-gap certificate; ``decision_function`` returns
  one column per class and ``predict`` takes the arg-max, as scikit-learn's
  linear one-vs-rest models do. ``predict_proba`` (logistic loss only)
  normalises the per-class sigmoids, like LogisticRegression's OvR mode; for
  two classes it is exactly the logistic model's probability.
* **Not converged** within ``max_passes`` → ``ConvergenceWarning`` naming the
  gap reached; the last iterate is kept (its gap is in ``gap_``).
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .losses import CLASSIFICATION_LOSSES, REGRESSION_LOSSES
from .problem import Problem, check_sparse_structure
from .solvers import solve
from .solvers._threads import check_n_jobs


def _store_params(estimator, params):
    """scikit-learn's rule: __init__ stores its arguments unchanged, nothing else."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


class _CDLinearModel(BaseEstimator):
    """What the classifier and the regressor share: validation, the solve, the intercept."""

    _losses: tuple = ()

    def _check_params(self):
        if self.loss not in self._losses:
            raise ValueError(f"{type(self).__name__}: unknown loss {self.loss!r}; choose one of {list(self._losses)}")
        params = self.get_params()
        for name in ("lam", "l1", "s", "tol", "max_passes", "intercept_scaling"):
            value = params.get(name, 1.0)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise ValueError(f"{type(self).__name__}: {name} must be a number, got {value!r}")
        if not self.lam > 0:
            raise ValueError(f"{type(self).__name__}: lam must be > 0, got {self.lam}")
        try:
            check_n_jobs(self.n_jobs)
        except ValueError as exc:
            raise ValueError(f"{type(self).__name__}: {exc}") from None
        if not self.max_passes > 0:
            raise ValueError(f"{type(self).__name__}: max_passes must be > 0, got {self.max_passes}")
        if self.fit_intercept and not self.intercept_scaling > 0:
            raise ValueError(f"{type(self).__name__}: intercept_scaling must be > 0, got {self.intercept_scaling}")

    @staticmethod
    def _check_structure(X):
        """A sparse X's structure is checked before scikit-learn's validation: its
        format conversions and the products in predict run scipy's unchecked C++."""
        if sp.issparse(X):
            check_sparse_structure(X)

    def _validate_X(self, X, reset):
        self._check_structure(X)
        return validate_data(self, X, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, reset=reset)

    def _augment(self, X):
        """Append the constant intercept feature (a regularised bias, as in liblinear)."""
        if not self.fit_intercept:
            return X
        col = np.full((X.shape[0], 1), float(self.intercept_scaling))
        return sp.hstack([X, sp.csr_matrix(col)], format="csr") if sp.issparse(X) else np.hstack([X, col])

    def _solve_one(self, Xa, y_signed):
        """One certified solve; returns (w, Result)."""
        loss_params = {"s": float(self.s)} if self.loss == "smoothed_hinge" else {}
        problem = Problem(Xa, y_signed, loss=self.loss, lam=self.lam, l1=self.l1, **loss_params)
        result = solve(problem, method=self.method, sampling=self.sampling, max_passes=self.max_passes,
                       tol=self.tol, seed=self.seed, n_jobs=self.n_jobs)
        if not result.converged:
            last = result.trace.iloc[-1]
            why = result.message or (f"stopped ({result.status}) at duality gap {last.gap:.3g} > tol={self.tol:g} "
                                     f"after {last.passes:.3g} passes")
            warnings.warn(f"{type(self).__name__} ({self.method}, {self.loss}): {why}; increase max_passes "
                          "or lam, or loosen tol", ConvergenceWarning, stacklevel=3)
        return result.w, result

    def _split(self, W):
        """Split solved weights (one row per problem) into coef_ and intercept_."""
        W = np.atleast_2d(W)
        if self.fit_intercept:
            return W[:, :-1].copy(), W[:, -1] * float(self.intercept_scaling)
        return W.copy(), np.zeros(W.shape[0])

    def _record(self, results):
        self.status_ = [r.status for r in results]
        self.gap_ = np.array([r.trace.gap.iloc[-1] for r in results])
        self.n_iter_ = np.array([r.trace.passes.iloc[-1] for r in results])
        self.traces_ = [r.trace for r in results]

    def _margins(self, X):
        check_is_fitted(self, "coef_")
        X = self._validate_X(X, reset=False)
        return np.asarray(X @ self.coef_.T) + self.intercept_


class CDClassifier(ClassifierMixin, _CDLinearModel):
    """Linear classifier trained by a cdlab coordinate method.

    Parameters
    ----------
    loss : {"logistic", "hinge", "smoothed_hinge"}
    lam : float > 0, L2 strength λ (per example: λ = 1/(C n) for scikit-learn's C).
    l1 : float ≥ 0, L1 strength μ (elastic net, Prox-SDCA).
    method : str, a name in ``cdlab.METHODS`` that supports the loss, or "auto" (the
        face-off and κ pick the method and sampling: ``cdlab.solvers.auto``).
    sampling : str or None, a sampling the method supports ("uniform", "importance", ...);
        None: "uniform", or auto's pick with method="auto".
    tol : float, stop when the duality gap ≤ tol.
    max_passes : float, budget in passes over the nonzeros.
    seed : int, seeds the solver: equal seeds give equal models (with n_jobs=1).
    n_jobs : int ≥ 1, threads of the solver's parallel mode (SDCA and dual CD: PASSCoDe-Wild,
        still certified, not bit-reproducible; newton: BLAS threads, or its CG path's row blocks; see
        ``cdlab.solve``). method="auto" runs an SDCA pick on one thread (``auto.SERIAL_PICKS``).
    fit_intercept : bool, append a constant feature (a regularised bias).
    intercept_scaling : float, the value of that feature.
    s : float, smoothing of the smoothed hinge (theory.md §2).

    Attributes
    ----------
    classes_, coef_ (1, d) or (K, d), intercept_, gap_ (final duality gap per
    binary problem), status_, n_iter_ (passes), traces_.
    """

    _losses = CLASSIFICATION_LOSSES

    def __init__(self, loss="logistic", lam=1e-3, l1=0.0, method="sdca", sampling=None, tol=1e-4,
                 max_passes=1000, seed=0, fit_intercept=True, intercept_scaling=1.0, s=1.0, n_jobs=1):
        _store_params(self, locals())

    def fit(self, X, y):
        self._check_params()
        self._check_structure(X)
        X, y = validate_data(self, X, y, accept_sparse=("csr", "csc", "coo"), dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes in the data; "
                             f"got one class only ({self.classes_[0]!r})")
        Xa = self._augment(X)
        # Binary: classes_[1] is the positive class; K > 2: one-vs-rest.
        targets = [1] if len(self.classes_) == 2 else range(len(self.classes_))
        solved = [self._solve_one(Xa, np.where(y_idx == k, 1.0, -1.0)) for k in targets]
        self.coef_, self.intercept_ = self._split(np.array([w for w, _ in solved]))
        self._record([r for _, r in solved])
        return self

    def decision_function(self, X):
        """x·w + b: shape (n,) for two classes, (n, K) for K > 2 (one column per class)."""
        scores = self._margins(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        scores = self.decision_function(X)
        idx = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[idx]

    def _is_logistic(self):
        if self.loss != "logistic":
            raise AttributeError(f"predict_proba needs loss='logistic' (the {self.loss} loss has no probability model)")
        return True

    @available_if(_is_logistic)
    def predict_proba(self, X):
        """Logistic probabilities; one-vs-rest sigmoids normalised to sum to 1 for K > 2."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        p = expit(scores)
        return p / p.sum(axis=1, keepdims=True)

    @available_if(_is_logistic)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class CDRegressor(RegressorMixin, _CDLinearModel):
    """Linear regressor trained by a cdlab coordinate method.

    Parameters as :class:`CDClassifier`, with ``loss`` in {"squared",
    "absolute"}; λ·n is scikit-learn Ridge's ``alpha`` for the squared loss.
    """

    _losses = REGRESSION_LOSSES

    def __init__(self, loss="squared", lam=1e-3, l1=0.0, method="sdca", sampling=None, tol=1e-4,
                 max_passes=1000, seed=0, fit_intercept=True, intercept_scaling=1.0, n_jobs=1):
        _store_params(self, locals())

    def fit(self, X, y):
        self._check_params()
        self._check_structure(X)
        X, y = validate_data(self, X, y, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, y_numeric=True)
        w, result = self._solve_one(self._augment(X), y)
        coef, intercept = self._split(w)
        self.coef_, self.intercept_ = coef[0], float(intercept[0])
        self._record([result])
        return self

    def predict(self, X):
        check_is_fitted(self, "coef_")
        X = self._validate_X(X, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


__all__ = ["CDClassifier", "CDRegressor"]
