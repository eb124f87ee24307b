"""Symbolic facts (theory.facts): the i.i.d. ratio n/d, Theorem 2 (importance sampling
minimises total work) and the κ = n crossover of SPDC and SDCA, each also checked numerically."""
import numpy as np
import pytest
import sympy as sp

import cdlab
from cdlab import theory
from cdlab.theory import facts
from cdlab.theory.symbols import SYMBOLS


def test_iid_ratio_is_n_over_d():
    EC_P, EC_D, ratio = facts.iid_ratio()
    n, d = SYMBOLS["n"], SYMBOLS["d"]
    assert sp.simplify(ratio - n / d) == 0
    m, s = sp.symbols("m s", positive=True)
    assert sp.simplify(EC_P - d * n ** 2 * (m ** 2 + s ** 2)) == 0
    # the same ratio from the entry-level expectation (diagonal and cross terms of ‖f_j‖₀‖f_j‖²,
    # derived by sympy.stats) with a Bernoulli(ρ) mask: dense data (ρ = 1) gives n/d, sparse does not
    sparse = facts.sparse_iid_ratio()
    rho = sp.Symbol(r"\rho", positive=True)
    assert sp.simplify(sparse.subs(rho, 1) - n / d) == 0
    assert sp.simplify(sparse - (1 + rho * (n - 1)) / (1 + rho * (d - 1))) == 0


def test_iid_ratio_by_monte_carlo():
    # E C_P / E C_D for N(m, s²) entries, 300 dense 12×30 matrices: within 3% of n/d
    rng = np.random.default_rng(0)
    n, d, cp, cd = 12, 30, 0.0, 0.0
    for _ in range(300):
        A = 0.7 + 1.3 * rng.standard_normal((n, d))
        cp += n * (A ** 2).sum()  # every column has n nonzeros
        cd += d * (A ** 2).sum()
    assert cp / cd == pytest.approx(n / d, rel=1e-12)  # dense: exactly n/d, sample by sample
    rho, cps, cds = 0.1, [], []
    for _ in range(600):
        A = (rng.random((n, d)) < rho) * (0.7 + 1.3 * rng.standard_normal((n, d)))
        cps.append(((A != 0).sum(0) * (A ** 2).sum(0)).sum())
        cds.append(((A != 0).sum(1) * (A ** 2).sum(1)).sum())
    expected = facts.sparse_iid_ratio().subs({SYMBOLS["n"]: n, SYMBOLS["d"]: d, sp.Symbol(r"\rho", positive=True): rho})
    assert np.mean(cps) / np.mean(cds) == pytest.approx(float(expected), rel=0.03)
    assert float(expected) / (n / d) > 1.2  # sparse i.i.d. data is not n/d: the check can tell


def test_theorem2_symbolic_identity():
    ok, terms = facts.theorem2_gap(4)
    assert ok  # W(p) − W(p_imp) = Σ_j p_j c_j (v_0/p_0 − v_j/p_j), each term ≥ 0 when j = 0 maximises v/p
    assert len(terms.args) == 3


@pytest.mark.parametrize("seed", range(5))
def test_importance_sampling_minimises_total_work(seed):
    """Theorem 2 on random instances: every random perturbation of the importance
    sampling (and uniform sampling) has total work ≥ importance sampling's."""
    rng = np.random.default_rng(seed)
    n, d = rng.integers(20, 80, 2)
    A = (rng.random((n, d)) < rng.uniform(0.05, 0.8)) * rng.standard_normal((n, d)) * np.exp(rng.standard_normal(d))
    A[np.arange(n), rng.integers(0, d, n)] += 1.0
    A[rng.integers(0, n, d), np.arange(d)] += 1.0
    P = cdlab.Problem(A, np.sign(rng.standard_normal(n)), loss="logistic", lam=10.0 ** rng.uniform(-4, -1))
    fo = theory.faceoff(P)
    c = P.lam * P.gamma * n
    for norms, counts, imp_work, size in ((P.col_norms_sq, P.col_nnz, fo.T_P_importance, d),
                                          (P.row_norms_sq, P.row_nnz, fo.T_D_importance, n)):
        p_imp = (norms + c) / (norms + c).sum()
        assert facts.total_work(norms, counts, p_imp, P.lam, P.gamma, n) == pytest.approx(imp_work, rel=1e-12)
        assert facts.total_work(norms, counts, np.full(size, 1 / size), P.lam, P.gamma, n) >= imp_work
        for scale in (1e-3, 1e-1, 1.0):
            for _ in range(40):
                p = p_imp * np.exp(scale * rng.standard_normal(size))
                p /= p.sum()
                assert facts.total_work(norms, counts, p, P.lam, P.gamma, n) >= imp_work * (1 - 1e-12)


def test_spdc_beats_sdca_exactly_when_kappa_exceeds_n():
    crossing, wins = facts.spdc_vs_sdca()
    assert crossing == [SYMBOLS["n"]]
    assert wins == sp.Interval.open(1, sp.oo)
    # numerically: batch complexities of the two theories' expressions
    for n in (100, 10_000):
        for kappa in (0.1 * n, 0.999 * n, 1.001 * n, 50 * n):
            spdc, sdca = 1 + np.sqrt(kappa / n), 1 + kappa / n
            assert (spdc < sdca) == (kappa > n)
