import numpy as np

import cdlab


def test_sdca_certifies_small_problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 20))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.sign(X @ rng.standard_normal(20) + 0.1 * rng.standard_normal(200))
    res = cdlab.solve(cdlab.Problem(X, y, loss="logistic", lam=1e-2), tol=1e-10)
    assert res.converged and res.trace.gap.iloc[-1] <= 1e-10
