"""Theory added for issue 19, each against a direct numeric computation written out here.

* ASDCA's parallel cost model (Shalev-Shwartz & Zhang 2013, Section 3's table);
* SPDC with the δ-perturbation (Zhang & Xiao 2015, Section 3.1 and Corollary 2).
"""
import math

import numpy as np
import pytest
import scipy.sparse as sp

import cdlab
from cdlab import theory


def sparse_problem(n=300, d=120, density=0.05, loss="smoothed_hinge", lam=None, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr")
    X = X + sp.csr_matrix((np.ones(n), (np.arange(n), rng.integers(0, d, n))), shape=(n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return cdlab.Problem(X, y, loss=loss, lam=1.0 / n if lam is None else lam)


# ------------------------------------------------------------------ ASDCA Section 3
@pytest.mark.parametrize("machines,batch", [(1, 1), (2, 10), (16, 50), (64, 300)])
def test_parallel_cost_is_the_papers_table_on_the_data(machines, batch):
    p = sparse_problem()
    n, d = p.X.shape
    dbar = p.X.nnz / n  # mean nonzeros of an example
    log_s = math.log2(machines)
    want = {("sdca", "features"): (dbar / machines, machines * log_s ** 2),
            ("asdca", "features"): (batch * dbar / machines, batch * machines * log_s ** 2),
            ("asdca", "examples"): (batch * dbar / machines, d * log_s),
            ("agd", "examples"): (n * dbar / machines, d * log_s)}
    table = theory.parallel_cost(p, machines, batch, eps=1e-6)
    assert [tuple(k) for k in table[["method", "partition"]].to_numpy()] == list(want)
    for row in table.itertuples():
        runtime, comm = want[row.method, row.partition]
        assert row.runtime == pytest.approx(runtime, rel=1e-12)
        assert row.communication == pytest.approx(comm, rel=1e-12, abs=1e-12)
        kw = dict(batch_size=batch) if row.method == "asdca" else {}
        iters = theory.bound(row.method, p, **kw).iterations(1e-6)
        assert row.iterations == pytest.approx(iters, rel=1e-12)
        assert row.total_runtime == pytest.approx(iters * runtime, rel=1e-12)
        assert row.total_communication == pytest.approx(iters * comm, rel=1e-12, abs=1e-12)
    # "we will choose between these two implementations based on the relation between d and m s log s"
    expect = "examples" if d * log_s < batch * machines * log_s ** 2 else "features"
    assert theory.asdca_partition(p, machines, batch) == expect


def test_parallel_cost_asdca_interpolates_between_sdca_and_agd():
    """Section 3: at m = 1 ASDCA split by features costs SDCA's iteration, at m = n split by examples AGD's."""
    p = sparse_problem()
    one = theory.parallel_cost(p, 8, 1).set_index(["method", "partition"])
    full = theory.parallel_cost(p, 8, p.n_samples).set_index(["method", "partition"])
    cols = ["runtime", "communication"]
    assert one.loc[("asdca", "features"), cols].tolist() == pytest.approx(one.loc[("sdca", "features"), cols].tolist())
    assert full.loc[("asdca", "examples"), cols].tolist() == pytest.approx(full.loc[("agd", "examples"), cols].tolist())


def test_parallel_cost_refuses_bad_input():
    p = sparse_problem()
    for bad in (0, 2.5, "4", None):
        with pytest.raises(ValueError, match="machines must be an integer ≥ 1"):
            theory.parallel_cost(p, bad, 1)
    with pytest.raises(ValueError, match="batch_size must be in"):
        theory.parallel_cost(p, 4, p.n_samples + 1)
    with pytest.raises(ValueError, match="smooth"):
        theory.parallel_cost(sparse_problem(loss="hinge"), 4, 1)


# ------------------------------------------------------------------ SPDC with δ > 0
def unit_rows(n=300, d=30, seed=0):
    from cdlab.data import make_synthetic

    return make_synthetic(n, d, normalize="rows", noise=0.3, seed=seed)


@pytest.mark.parametrize("delta,batch", [(0.1, 1), (0.01, 1), (0.01, 10)])
def test_spdc_delta_bound_lam_positive_equals_hand_computation_and_covers_a_run(delta, batch):
    """Non-smooth hinge, λ > 0: Theorem 1 on f_δ (γ = δ) with L_δ = λ + ‖X‖₂²/(δn) and the bias δG²/2."""
    from cdlab.solvers.spdc import spdc_parameters

    X, y = unit_rows()
    p = cdlab.Problem(X, y, loss="hinge", lam=1.0 / X.shape[0])
    n, lam, R, G = p.n_samples, p.lam, p.R, 1.0
    b = theory.bound("spdc", p, delta=delta, batch_size=batch)
    tau, sigma, theta, gamma, lam_eff, _ = spdc_parameters(p, batch, False, delta)  # the solver's own numbers
    assert (gamma, lam_eff) == (delta, lam)
    Dx, Dy = 2 * p.primal(np.zeros(p.n_features)) / lam, n * G ** 2
    phi0 = (1 / (2 * tau) + lam) * Dx + (1 / (2 * sigma) + gamma) * Dy / batch
    L_delta = lam + np.linalg.eigvalsh((X.T @ X).toarray() if sp.issparse(X) else X.T @ X)[-1] / (delta * n)
    amplitude = L_delta / 2 * phi0 / (1 / (2 * tau) + lam)
    assert b.floor == pytest.approx(delta * G ** 2 / 2, rel=1e-12)
    assert b.eps0 == pytest.approx(amplitude, rel=1e-8)
    assert b.rate == pytest.approx(1 - theta, rel=1e-12)
    for eps in (2 * b.floor, 10 * b.floor):
        assert b.iterations(eps) == pytest.approx(np.log(amplitude / (eps - b.floor)) / (1 - theta), rel=1e-8)
    assert b.iterations(b.floor) == np.inf and b.iterations(b.floor / 2) == np.inf
    steps = np.array([0.0, 1e3, 1e5])
    assert b.curve_at_steps(steps) == pytest.approx(b.floor + amplitude * theta ** steps, rel=1e-8)
    # a run: every checkpoint under the curve (P* ≥ SDCA's certified dual value)
    p_star_lower = float(cdlab.solve(p, "sdca", tol=1e-9, max_passes=3000).trace.dual.iloc[-1])
    run = cdlab.solve(p, "spdc", delta=delta, batch_size=batch, tol=0.0, max_passes=60, seed=1, eval_every=3.0)
    excess = run.trace.primal.to_numpy() - p_star_lower
    assert (excess <= b.curve_at_steps(run.trace.steps.to_numpy())).all()


def hinge_lam0_optimum(X, y):
    """argmin_w (1/n) Σ max(0, 1 − y_i x_i·w) as a linear program (no regulariser: Corollary 2's case)."""
    from scipy.optimize import linprog

    X = X.toarray() if sp.issparse(X) else X
    n, d = X.shape
    c = np.r_[np.zeros(d), np.ones(n) / n]
    A = np.hstack([-y[:, None] * X, -np.eye(n)])  # 1 − y_i x_i·w ≤ ξ_i
    res = linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=[(None, None)] * d + [(0, None)] * n, method="highs")
    assert res.status == 0
    return res.x[:d], float(res.fun)


def test_spdc_corollary2_lam_zero_is_the_papers_count_and_covers_a_run():
    X, y = unit_rows(n=200, d=20)
    p = cdlab.Problem(X, y, loss="hinge", lam=0.0)
    w_star, p_star = hinge_lam0_optimum(X, y)
    assert p.primal(w_star) == pytest.approx(p_star, abs=1e-9)
    n, R, G, m = p.n_samples, p.R, 1.0, 1
    C1 = float(w_star @ w_star) + G ** 2
    eps = 0.05
    delta = eps / C1  # Corollary 2's choice
    b = theory.bound("spdc", p, delta=delta, optimum=(w_star, None))
    tau, sigma = np.sqrt(m / n) / (2 * R), np.sqrt(n / m) / (2 * R)  # Section 3.1 with γ = λ = δ
    ratio = (1 / (2 * sigma) + delta) / (1 / (2 * tau) + delta)
    C2 = (G * R) ** 2 * (2 * p.primal(np.zeros(p.n_features)) / delta + ratio * n * G ** 2 / m)
    paper = (n / m + C1 * R / eps * np.sqrt(n / m)) * np.log(4 * C2 / eps ** 2)
    assert b.floor == pytest.approx(eps / 2, rel=1e-12)
    assert b.iterations(eps) == pytest.approx(paper, rel=1e-9)
    run = cdlab.solve(p, "spdc", delta=delta, tol=0.0, max_passes=40, seed=2, eval_every=2.0)
    excess = run.trace.primal.to_numpy() - p_star
    assert (excess <= b.curve_at_steps(run.trace.steps.to_numpy())).all()


def test_spdc_delta_bound_refusals_name_the_problem():
    X, y = unit_rows()
    hinge = cdlab.Problem(X, y, loss="hinge", lam=1e-3)
    with pytest.raises(ValueError, match="pass delta > 0"):
        theory.bound("spdc", hinge)
    with pytest.raises(ValueError, match="smooth loss and lam"):
        theory.bound("spdc", hinge.with_params(loss="logistic"), delta=0.1)
    with pytest.raises(ValueError, match="Algorithm 1"):
        theory.bound("spdc", hinge, sampling="weighted", delta=0.1)
    with pytest.raises(ValueError, match="pass optimum"):
        theory.bound("spdc", hinge.with_params(lam=0.0), delta=0.1)
    with pytest.raises(ValueError, match="delta must be finite and ≥ 0, got nan"):
        theory.bound("spdc", hinge, delta=float("nan"))
