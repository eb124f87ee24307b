"""Formulas written both in a solver (numbers it runs with) and in the theory
layer (sympy, for its bound): the two must give the same numbers, so that a
run and its bound are about the same algorithm."""
import numpy as np
import pytest

import cdlab
from cdlab import theory
from cdlab.solvers.appa import sdca_oracle_steps, svrg_oracle_epochs
from cdlab.solvers.asdca import asdca_theta
from cdlab.solvers.spdc import spdc_parameters
from cdlab.theory.bounds_accel import asdca_theta_max
from cdlab.theory.spdc_parameters import SPDC_PARAMETERS
from cdlab.theory.symbols import evaluate


def _problem(loss="smoothed_hinge", lam=1e-3, n=60, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.2, 3.0, size=(n, 1))  # unequal row norms: R ≠ R̄
    return cdlab.Problem(X, np.sign(rng.standard_normal(n)), loss=loss, lam=lam)


@pytest.mark.parametrize("sampling, m", [("uniform", 1), ("uniform", 7), ("weighted", 1)])
@pytest.mark.parametrize("loss, lam", [("smoothed_hinge", 1e-3), ("logistic", 0.1), ("squared", 1e-5)])
def test_spdc_tau_sigma_theta(sampling, m, loss, lam):
    problem = _problem(loss, lam)
    tau, sigma, theta, *_ = spdc_parameters(problem, m, weighted=sampling == "weighted")
    tau_t, sigma_t, inv_t = (evaluate(e, problem, m=m) for e in SPDC_PARAMETERS[sampling])
    assert tau == pytest.approx(tau_t, rel=1e-13)
    assert sigma == pytest.approx(sigma_t, rel=1e-13)
    assert 1.0 - theta == pytest.approx(1.0 / inv_t, rel=1e-9)
    bound = theory.bound("spdc", problem, sampling, batch_size=m)
    assert bound.rate == pytest.approx(1.0 - theta, rel=1e-9)  # the bound contracts by the run's θ


@pytest.mark.parametrize("m", [1, 4, 60])
@pytest.mark.parametrize("lam", [1e-4, 1e-1, 10.0])
def test_asdca_theta(m, lam):
    problem = _problem("squared", lam)
    assert asdca_theta(problem, m) == pytest.approx(asdca_theta_max(problem, m), rel=1e-12)


@pytest.mark.parametrize("lam", [0.0, 1e-2])
def test_appa_default_kappa_and_stage_length(lam):
    problem = _problem("squared", lam, n=80, d=5, seed=1)
    rng = np.random.default_rng(0)
    for method in ("appa", "accel_appa", "dual_appa"):
        state = cdlab.METHODS[method].make(problem, "uniform", rng)
        assert state.kappa == pytest.approx(theory.bound(method, problem).values["kappa"], rel=1e-12), method
    state = cdlab.METHODS["appa"].make(problem, "uniform", rng)  # inner SDCA, stages sized by theory
    bound = theory.bound("appa", problem)
    mu = bound.values["mu_F"]
    assert mu == problem.strong_convexity()
    assert state.stage_len == sdca_oracle_steps(problem, state.kappa, 2 * (state.kappa + mu) / mu)
    assert state.stage_len == bound.period
    state = cdlab.METHODS["appa"].make(problem, "uniform", rng, inner="svrg")
    bound = theory.bound("appa", problem, inner="svrg")
    epoch, epochs = svrg_oracle_epochs(problem, state.kappa, mu, 2 * (state.kappa + mu) / mu)
    assert state.stage_len == epoch * epochs == bound.period
