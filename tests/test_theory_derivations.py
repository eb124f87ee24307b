"""Sympy derivations (cdlab.theory.derivations) against the numba losses and scipy.

Certifies: −φ*(−α) derived from φ equals losses.neg_conj and a numeric
supremum (scipy); γ and L derived from φ equal LossInfo; the closed-form SDCA
steps equal losses.dual_step and maximise the 1-D dual objective; the logistic
step's root solves the derived optimality equation.
"""
import math

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import minimize_scalar

from cdlab import losses as L
from cdlab.theory import derivations as D

CASES = [("squared", None), ("absolute", None)] + [(loss, y) for loss in D.CLASSIFICATION for y in (1, -1)]
S_VALUES = (1.0, 0.3)


def _numeric_y(loss, y, rng):
    return float(rng.standard_normal()) if y is None else float(y)


def _interior_alphas(lo, hi, y, rng, k=25):
    """α strictly inside the domain (|b| away from the ends, where the sup is attained)."""
    lo = -3.0 if lo == -sp.oo else float(lo.subs(D.y_sym, y))
    hi = 3.0 if hi == sp.oo else float(hi.subs(D.y_sym, y))
    return lo + (hi - lo) * rng.uniform(0.03, 0.97, k)


@pytest.mark.parametrize("loss,y", CASES)
@pytest.mark.parametrize("s", S_VALUES)
def test_conjugate_matches_numba_and_numeric_sup(loss, y, s):
    rng = np.random.default_rng(0)
    code = L.get_loss(loss).code
    expr = D.neg_conj(loss, y, s)
    for _ in range(3):
        yv = _numeric_y(loss, y, rng)
        f = sp.lambdify(D.alpha, expr.subs(D.y_sym, yv), "math")
        lo, hi = D.dual_domain(loss, y, s)
        for a in _interior_alphas(lo, hi, yv, rng):
            derived = float(f(a))
            assert derived == pytest.approx(L.neg_conj(code, a, yv, s), rel=1e-12, abs=1e-12)
            # −φ*(−α) = inf_z φ(z) + α z, the supremum computed numerically
            res = minimize_scalar(lambda z: L.loss_value(code, z, yv, s) + a * z, bounds=(-60, 60),
                                  method="bounded", options={"xatol": 1e-12})
            assert derived == pytest.approx(res.fun, abs=1e-7)
        # outside the domain the derived term is −∞, like the numba one
        if hi != sp.oo:
            out = float(hi.subs(D.y_sym, yv)) + 0.25
            assert f(out) == -math.inf and L.neg_conj(code, out, yv, s) == -math.inf


@pytest.mark.parametrize("loss,y", CASES)
def test_conjugate_at_the_ends_of_its_domain(loss, y):
    """−φ*(−α) at a finite end of the domain is finite and equals the numba term and
    inf_z φ(z) + αz there (the logistic's Legendre formula is 0·log 0 = nan at b = 0, 1:
    the derived Piecewise must pick the limit branch, not the nan one)."""
    rng = np.random.default_rng(4)
    code = L.get_loss(loss).code
    s = 1.0
    lo, hi = D.dual_domain(loss, y, s)
    for _ in range(3):
        yv = _numeric_y(loss, y, rng)
        expr = D.neg_conj(loss, y, s).subs(D.y_sym, yv)
        f = sp.lambdify(D.alpha, expr, "math")
        for end in (lo, hi):
            if end in (sp.oo, -sp.oo):
                continue
            a = float(end.subs(D.y_sym, yv))
            symbolic = expr.subs(D.alpha, a)
            assert symbolic.is_finite, (a, symbolic)
            assert float(symbolic) == pytest.approx(L.neg_conj(code, a, yv, s), abs=1e-12)
            assert f(a) == pytest.approx(L.neg_conj(code, a, yv, s), abs=1e-12)
            res = minimize_scalar(lambda zz: L.loss_value(code, zz, yv, s) + a * zz, bounds=(-60, 60),
                                  method="bounded", options={"xatol": 1e-12})
            assert float(symbolic) == pytest.approx(res.fun, abs=1e-7)


@pytest.mark.parametrize("loss", D.LOSS_NAMES)
def test_smoothness_and_lipschitz_match_loss_info(loss):
    info = L.get_loss(loss)
    for y in ((1, -1) if loss in D.CLASSIFICATION else (None,)):
        for s in S_VALUES:
            gamma = D.smoothness(loss, y, s)
            assert (gamma is None) == (not info.smooth)
            if gamma is not None:
                assert float(gamma) == pytest.approx(info.gamma(s), rel=1e-14)
            lip = D.lipschitz(loss, y, s)
            assert (lip is None) == (info.lipschitz is None)
            if lip is not None:
                assert float(lip) == pytest.approx(info.lipschitz, rel=1e-14)


def test_smoothness_is_the_sup_of_the_second_derivative_numerically():
    # logistic: φ'' = σ(1 − σ) peaks at 1/4 (γ = 4) — checked on a grid, not only symbolically
    z = np.linspace(-10, 10, 20001)
    sig = 1 / (1 + np.exp(-z))
    assert 1 / (sig * (1 - sig)).max() == pytest.approx(float(D.smoothness("logistic", 1, 1.0)), rel=1e-6)


def _one_d_objective(code, a, z, yv, q, s):
    return lambda ap: -(L.neg_conj(code, ap, yv, s) - (ap - a) * z - 0.5 * q * (ap - a) ** 2)


@pytest.mark.parametrize("loss,y", [c for c in CASES if c[0] != "logistic"])
@pytest.mark.parametrize("s", S_VALUES)
def test_closed_form_dual_step_matches_numba_and_maximises(loss, y, s):
    rng = np.random.default_rng(1)
    code = L.get_loss(loss).code
    step = D.dual_step(loss, y, s)
    assert step.closed_form
    f = sp.lambdify((D.a, D.z, D.q, D.y_sym), step.new_alpha, "math")
    lo, hi = D.dual_domain(loss, y, s)
    for _ in range(60):
        yv = _numeric_y(loss, y, rng)
        a = float(_interior_alphas(lo, hi, yv, rng, 1)[0])
        zv, qv = 2.0 * rng.standard_normal(), float(np.exp(rng.uniform(-3, 3)))
        new = f(a, zv, qv, yv)
        assert new == pytest.approx(L.dual_step(code, a, zv, yv, qv, s), rel=1e-12, abs=1e-13)
        lo_v = -8.0 if lo == -sp.oo else float(lo.subs(D.y_sym, yv))
        hi_v = 8.0 if hi == sp.oo else float(hi.subs(D.y_sym, yv))
        obj = _one_d_objective(code, a, zv, yv, qv, s)
        res = minimize_scalar(obj, bounds=(lo_v, hi_v), method="bounded", options={"xatol": 1e-12})
        assert obj(new) <= res.fun + 1e-9


@pytest.mark.parametrize("y", (1, -1))
def test_logistic_step_solves_the_derived_equation(y):
    rng = np.random.default_rng(2)
    step = D.dual_step("logistic", y, 1.0)
    assert not step.closed_form
    residual = sp.lambdify((D.b_plus, D.a, D.z, D.q), step.equation.lhs - step.equation.rhs, "math")
    code = L.LOGISTIC
    for _ in range(60):
        a = y * rng.uniform(0.01, 0.99)
        zv, qv = 3.0 * rng.standard_normal(), float(np.exp(rng.uniform(-3, 3)))
        new = L.dual_step(code, a, zv, float(y), qv, 1.0)
        b = new * y
        assert 0 < b < 1
        assert abs(residual(b, a, zv, qv)) < 1e-9
        obj = _one_d_objective(code, a, zv, float(y), qv, 1.0)
        lo, hi = (0.0, 1.0) if y == 1 else (-1.0, 0.0)
        res = minimize_scalar(obj, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
        assert obj(new) <= res.fun + 1e-10


def test_unknown_loss_and_bad_label_raise():
    with pytest.raises(ValueError, match="unknown loss"):
        D.loss_pieces("huber")
    with pytest.raises(ValueError, match="y = \\+1 or y = -1"):
        D.loss_pieces("hinge", 0.5)
