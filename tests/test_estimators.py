"""cdlab.estimators: scikit-learn's own estimator checks, and agreement with
scikit-learn's solvers on the same objective (λ = 1/(C n), alpha = λ n)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, make_classification, make_regression
from sklearn.linear_model import ElasticNet, LogisticRegression, Ridge
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from cdlab import Problem
from cdlab.estimators import CDClassifier, CDRegressor

CHECKED = [
    "CDClassifier()",
    "CDClassifier(loss='hinge')",
    "CDClassifier(loss='smoothed_hinge', method='dual_cd', sampling='importance')",
    "CDRegressor()",
    "CDRegressor(loss='absolute', sampling='permutation')",
]

_RUN_CHECKS = """
import json, sys, warnings
warnings.simplefilter("ignore")
from sklearn.utils.estimator_checks import check_estimator
from cdlab.estimators import CDClassifier, CDRegressor
out = check_estimator(eval(sys.argv[1]), on_fail=None, on_skip=None)
print(json.dumps([[r["check_name"], r["status"], repr(r["exception"])[:500]] for r in out]))
"""


@pytest.mark.parametrize("estimator", CHECKED)
def test_check_estimator_passes_every_check(estimator):
    # A fresh interpreter with SCIPY_ARRAY_API=1 (it must be set before scipy is
    # imported), so that check_array_api_input runs instead of being skipped:
    # every one of scikit-learn's checks runs and none is declared as failing.
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    proc = subprocess.run([sys.executable, "-c", _RUN_CHECKS, estimator], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(results) > 40
    not_passed = [r for r in results if r[1] != "passed"]
    assert not_passed == []


def _certified_radius(gap, lam):
    """λ-strong convexity: ‖w − w*‖ ≤ sqrt(2 (P(w) − P*)/λ) ≤ sqrt(2 gap/λ)."""
    return float(np.sqrt(2 * np.max(gap) / lam))


def _exact_logreg(C):
    return LogisticRegression(C=C, fit_intercept=False, solver="newton-cholesky", tol=1e-14, max_iter=1000)


def _binary(n=120, d=8, seed=0):
    X, y = make_classification(n, d, n_informative=5, random_state=seed)
    return StandardScaler().fit_transform(X), y


def test_logistic_matches_sklearn_and_certifies():
    X, y = _binary()
    lam = 1e-2
    clf = CDClassifier(loss="logistic", lam=lam, tol=1e-14, max_passes=5000, fit_intercept=False).fit(X, y)
    assert clf.status_ == ["converged"] and clf.gap_[0] <= 1e-14
    ref = _exact_logreg(1 / (lam * len(y))).fit(X, y)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=0, atol=_certified_radius(clf.gap_, lam))
    tol = _certified_radius(clf.gap_, lam) * np.linalg.norm(X, axis=1).max()
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X), rtol=0, atol=tol)
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X))


def test_intercept_is_a_regularised_constant_feature():
    X, y = _binary(seed=1)
    lam, scaling = 1e-2, 2.0
    clf = CDClassifier(lam=lam, tol=1e-14, max_passes=5000, intercept_scaling=scaling).fit(X, y)
    Xa = np.hstack([X, np.full((len(y), 1), scaling)])
    ref = _exact_logreg(1 / (lam * len(y))).fit(Xa, y)
    radius = _certified_radius(clf.gap_, lam)
    w = np.r_[clf.coef_[0], clf.intercept_[0] / scaling]
    assert np.linalg.norm(w - ref.coef_[0]) <= radius
    np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(Xa), rtol=0,
                               atol=radius * np.linalg.norm(Xa, axis=1).max())


def test_multiclass_is_one_vs_rest():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    lam = 1e-2
    clf = CDClassifier(lam=lam, tol=1e-13, max_passes=5000, fit_intercept=False).fit(X, names)
    assert list(clf.classes_) == ["setosa", "versicolor", "virginica"]
    assert clf.coef_.shape == (3, 4) and all(s == "converged" for s in clf.status_)
    ref = OneVsRestClassifier(_exact_logreg(1 / (lam * len(y)))).fit(X, names)
    np.testing.assert_allclose(clf.coef_, np.vstack([e.coef_ for e in ref.estimators_]), rtol=0,
                               atol=_certified_radius(clf.gap_, lam))
    # margins move by at most radius·max‖x_i‖, and the probabilities by less
    tol = _certified_radius(clf.gap_, lam) * np.linalg.norm(X, axis=1).max()
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X), rtol=0, atol=tol)
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X))
    assert clf.decision_function(X).shape == (150, 3)


def test_hinge_reaches_the_certified_optimum_liblinear_approaches():
    X, y = _binary(seed=2)
    lam = 1e-2
    clf = CDClassifier(loss="hinge", lam=lam, tol=1e-10, max_passes=20000, fit_intercept=False,
                       sampling="permutation").fit(X, y)
    assert clf.status_ == ["converged"]
    assert not hasattr(clf, "predict_proba")
    svc = LinearSVC(loss="hinge", C=1 / (lam * len(y)), fit_intercept=False, dual=True, tol=1e-10,
                    max_iter=100000).fit(X, y)
    prob = Problem(X, np.where(y == 1, 1.0, -1.0), loss="hinge", lam=lam)
    p_cd, p_svc = prob.primal(clf.coef_[0]), prob.primal(svc.coef_[0])
    # the gap certifies P(w_cd) − P* ≤ 1e-10, so no solver can do better than that
    assert p_svc >= p_cd - 1e-10
    # λ-strong convexity: ‖w − w*‖² ≤ 2 (P(w) − P*)/λ for both points
    bound = np.sqrt(2 * 1e-10 / lam) + np.sqrt(2 * (p_svc - p_cd + 1e-10) / lam)
    assert np.linalg.norm(clf.coef_[0] - svc.coef_[0]) <= bound


def test_ridge_and_elastic_net_match_sklearn():
    X, y = make_regression(100, 6, n_informative=3, noise=1.0, random_state=0)
    X = StandardScaler().fit_transform(X)
    y = (y - y.mean()) / y.std()
    lam = 1e-2
    reg = CDRegressor(lam=lam, tol=1e-14, max_passes=5000, fit_intercept=False).fit(X, y)
    ridge = Ridge(alpha=lam * len(y), fit_intercept=False, tol=1e-14).fit(X, y)
    radius = _certified_radius(reg.gap_, lam)
    np.testing.assert_allclose(reg.coef_, ridge.coef_, rtol=0, atol=radius)
    np.testing.assert_allclose(reg.predict(X), ridge.predict(X), rtol=0, atol=radius * np.linalg.norm(X, axis=1).max())
    assert reg.score(X, y) == pytest.approx(ridge.score(X, y), rel=1e-6)

    mu = 5e-2
    net = CDRegressor(lam=lam, l1=mu, tol=1e-14, max_passes=5000, fit_intercept=False).fit(X, y)
    alpha, ratio = lam + mu, mu / (lam + mu)
    ref = ElasticNet(alpha=alpha, l1_ratio=ratio, fit_intercept=False, tol=1e-14, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(net.coef_, ref.coef_, rtol=0, atol=_certified_radius(net.gap_, lam))
    assert 0 < (ref.coef_ == 0).sum() < len(ref.coef_)
    np.testing.assert_array_equal(net.coef_ == 0, ref.coef_ == 0)


def test_sparse_input_gives_the_dense_model():
    X, y = _binary(seed=3)
    X[np.abs(X) < 0.7] = 0.0
    dense = CDClassifier(loss="smoothed_hinge", lam=1e-2, tol=1e-12, max_passes=2000).fit(X, y)
    sparse = CDClassifier(loss="smoothed_hinge", lam=1e-2, tol=1e-12, max_passes=2000).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(dense.coef_, sparse.coef_)
    np.testing.assert_array_equal(dense.predict(sp.csc_matrix(X)), sparse.predict(X))


def test_bad_parameters_raise_clear_errors():
    X, y = _binary()
    with pytest.raises(ValueError, match="unknown loss 'squared'"):
        CDClassifier(loss="squared").fit(X, y)
    with pytest.raises(ValueError, match="unknown loss 'logistic'"):
        CDRegressor(loss="logistic").fit(X, y.astype(float))
    with pytest.raises(ValueError, match="lam must be > 0"):
        CDClassifier(lam=0.0).fit(X, y)
    with pytest.raises(ValueError, match="method 'sdca' does not support sampling 'bogus'"):
        CDClassifier(sampling="bogus").fit(X, y)
    with pytest.raises(ValueError, match="unknown method"):
        CDClassifier(method="nope").fit(X, y)
    with pytest.raises(ValueError, match="one class only"):
        CDClassifier().fit(X, np.zeros(len(y)))


def test_malformed_sparse_input_is_refused_before_scikit_learn_and_scipy():
    """Issue 17 H2 through the estimators: sklearn's validation converts formats and
    predict multiplies with scipy's C++ routines, which do not check indices."""
    bad = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), [0, 5, 1], [0, 2, 3]), shape=(2, 3))
    with pytest.raises(ValueError, match=r"indices\[1\] = 5 is out of range \[0, 3\)"):
        CDClassifier().fit(bad, [0, 1])
    coo = sp.coo_matrix(([1.0, 2.0], ([0, 1], [0, 1])), shape=(2, 3))
    coo.col = np.array([0, 9], dtype=np.int32)
    with pytest.raises(ValueError, match=r"col\[1\] = 9 is out of range"):
        CDRegressor().fit(coo, [0.5, 1.0])
    X, y = make_classification(n_samples=40, n_features=3, n_informative=2, n_redundant=0, random_state=0)
    clf = CDClassifier(lam=1e-2, max_passes=200, tol=1e-3).fit(X, y)
    with pytest.raises(ValueError, match="out of range"):
        clf.predict(sp.csr_matrix((np.array([1.0, 2.0, 3.0]), [0, 5, 1], [0, 2, 3]), shape=(2, 3)))


def test_object_and_mixed_dataframe_input_fits_like_floats():
    import pandas as pd

    X, y = make_classification(n_samples=40, n_features=3, n_informative=2, n_redundant=0, random_state=0)
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "flag": X[:, 2] > 0})
    want = CDClassifier(lam=1e-2, max_passes=200, tol=1e-3).fit(df.astype(float), y)
    labels = pd.Series(np.where(y == 1, "yes", "no"), dtype=object)  # sklearn's own rule: object y of labels
    got = CDClassifier(lam=1e-2, max_passes=200, tol=1e-3).fit(df, labels)
    np.testing.assert_array_equal(got.coef_, want.coef_)
    assert list(got.classes_) == ["no", "yes"] and df["flag"].dtype == bool
