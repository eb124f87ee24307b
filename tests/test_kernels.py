"""The kernel toolkit (cdlab/solvers/_kernels.py): the one-pass sweep behind the
driver's checkpoints gives Xw, Xᵀα and α(w) bit for bit as scipy's products and
Problem do, so the trace's certificates are exactly Problem.primal, .dual and .gap."""
import numpy as np
import pytest
import scipy.sparse as sp

import cdlab
from cdlab.solvers._kernels import certificate_sweep

LOSSES = ["squared", "logistic", "hinge", "smoothed_hinge", "absolute"]


def _problem(loss, l1, seed=0):
    rng = np.random.default_rng(seed)
    keep = np.ones(40)
    keep[5] = 0.0  # an empty row
    X = sp.csr_matrix(sp.diags(keep) @ sp.random(40, 25, density=0.3, random_state=seed) * 3.0)
    X.eliminate_zeros()
    y = np.where(rng.standard_normal(40) >= 0, 1.0, -1.0)
    return cdlab.Problem(X, y, loss=loss, lam=0.05, l1=l1)


def _sweep(p, w, alpha, from_w):
    z, xt_alpha = np.full(p.n_samples, np.nan), np.zeros(p.n_features)
    certificate_sweep(p.X.indptr, p.X.indices, p.X.data, p.y, p.loss_code, p.s, w, alpha, from_w, z, xt_alpha)
    return z, xt_alpha


@pytest.mark.parametrize("loss", LOSSES)
def test_sweep_gives_scipys_products_bit_for_bit(loss):
    p = _problem(loss, 0.0)
    rng = np.random.default_rng(1)
    w = rng.standard_normal(p.n_features)
    alpha = p.alpha_from_w(rng.standard_normal(p.n_features))
    z, xt_alpha = _sweep(p, w, alpha, False)
    np.testing.assert_array_equal(z, p.X @ w)
    np.testing.assert_array_equal(xt_alpha / (p.lam * p.n_samples), p.v_from_alpha(alpha))


@pytest.mark.parametrize("loss", LOSSES)
def test_sweep_fills_in_alpha_of_w(loss):
    p = _problem(loss, 0.0, seed=2)
    w = np.random.default_rng(3).standard_normal(p.n_features)
    alpha = np.full(p.n_samples, np.nan)
    _sweep(p, w, alpha, True)
    np.testing.assert_array_equal(alpha, p.alpha_from_w(w))


@pytest.mark.parametrize("method", ["sdca", "primal_cd", "spdc"])
@pytest.mark.parametrize("l1", [0.0, 0.02])
def test_trace_rows_are_the_problems_certificates(method, l1):
    p = _problem("logistic", l1)
    res = cdlab.solve(p, method=method, max_passes=3, tol=0.0, seed=0)
    last = res.trace.iloc[-1]
    assert last.gap > 0
    assert last["primal"] == p.primal(res.w)
    assert last["dual"] == p.dual(res.alpha)
    assert last["gap"] == p.gap(res.w, res.alpha)


def test_power_tables_equal_the_closed_form_inside_and_beyond_them():
    from cdlab.solvers._kernels import (POWER_TABLE_MAX, affine_constants, affine_power_tables, affine_powers,
                                        power_table, tabled_affine_powers, toward_fixed_point)
    for rho in (1e-12, 1e-3, 0.5):
        a, log_a = affine_constants(rho)
        pk, qk = affine_power_tables(a, log_a, rho, 40)
        assert pk.shape == (41,)
        for k in (0, 1, 17, 40, 41, 1000):  # the last two beyond the table
            assert tabled_affine_powers(pk, qk, a, log_a, rho, k) == affine_powers(a, log_a, rho, k)
        powers = power_table(log_a, 40)
        for k in (0, 3, 40, 41, 500):
            assert toward_fixed_point(2.0, k, 0.5, log_a, powers) == toward_fixed_point(2.0, k, 0.5, log_a, powers[:0])
    assert power_table(-1e-3, 10 * POWER_TABLE_MAX).shape == (POWER_TABLE_MAX + 1,)
