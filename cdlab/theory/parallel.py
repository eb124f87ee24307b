"""The parallel cost model of accelerated mini-batch SDCA (Shalev-Shwartz & Zhang 2013, Section 3).

With s machines, each holding 1/s of the data, and d̄ = nnz/n the mean number of nonzeros of an
example, the paper's table gives each iteration's runtime and communication time:

    method  partition   runtime     communication
    SDCA    features    d̄/s         s log² s
    ASDCA   features    m d̄/s       m s log² s
    ASDCA   examples    m d̄/s       d log s
    AGD     examples    n d̄/s       d log s

from three facts (Section 3, first bullets): s vectors of R^d are summed in time d log s (a tree
all-reduce); one node broadcasts c bits to all in time c log² s (hypercube); all nodes broadcast
c bits each in time c s log² s. Splitting the features, a node computes its part of x_i·w (d̄/s
work) and every node broadcasts its scalar (s log² s); splitting the examples, a node computes the
gradient over its m/s (or n/s) examples and the d-vectors are all-reduced (d log s). The paper
states these as O(·) with unit constants; ``log`` is log₂ here (the hypercube's dimension).

Multiplied by each method's iteration bound (``theory.bound``: SDCA Thm of Shalev-Shwartz & Zhang,
ASDCA Thm 1, AGD Nesterov's Thm 6) they give the total runtime and communication to reach ε.
"""
from __future__ import annotations

import pandas as pd
import sympy as sp

from .bound import bound
from .._checks import check_int
from ..sampling import check_batch_size
from .symbols import SYMBOLS as S, evaluate

n, d, nnz, m = S["n"], S["d"], S["nnz"], S["m"]
machines = S["machines"]
_dbar = nnz / n
_log2 = sp.log(machines, 2)

# (method, partition) -> (runtime per iteration, communication per iteration): Section 3's table
PARALLEL_COST = {
    ("sdca", "features"): (_dbar / machines, machines * _log2 ** 2),
    ("asdca", "features"): (m * _dbar / machines, m * machines * _log2 ** 2),
    ("asdca", "examples"): (m * _dbar / machines, d * _log2),
    ("agd", "examples"): (n * _dbar / machines, d * _log2),
}
SOURCE = "Shalev-Shwartz & Zhang 2013 (NIPS), Accelerated mini-batch SDCA, Section 3 (table of runtime and communication)"


def parallel_cost(problem, machines, batch_size, eps=1e-6) -> pd.DataFrame:
    """Section 3's table on ``problem`` with ``machines`` nodes and ASDCA's mini-batch ``batch_size``.

    One row per (method, partition): ``runtime`` and ``communication`` per iteration, ``iterations``
    (the method's bound to ε, ``theory.bound(...).iterations(eps)``) and their products
    ``total_runtime``, ``total_communication``. Raises ValueError where a bound does not apply
    (a non-smooth loss, l1 > 0, λ = 0) or for a machine count or batch size that is not a positive
    integer (the batch at most n).
    """
    s = check_int("machines", machines)
    mb = check_batch_size(batch_size, problem.n_samples)
    iterations = {"sdca": bound("sdca", problem).iterations(eps),
                  "asdca": bound("asdca", problem, batch_size=mb).iterations(eps),
                  "agd": bound("agd", problem).iterations(eps)}
    rows = []
    for (method, partition), (runtime, comm) in PARALLEL_COST.items():
        r = evaluate(runtime, problem, machines=s, m=mb)
        c = evaluate(comm, problem, machines=s, m=mb)
        it = iterations[method]
        rows.append(dict(method=method, partition=partition, machines=s, batch_size=mb if method == "asdca" else None,
                         runtime=r, communication=c, iterations=it, total_runtime=it * r,
                         total_communication=it * c))
    return pd.DataFrame(rows)


def asdca_partition(problem, machines, batch_size) -> str:
    """The cheaper way to split ASDCA's work by Section 3 ("we will choose between these two
    implementations based on the relation between d and m s log s"): 'examples' when its
    communication d log s is below the features split's m s log² s, else 'features'."""
    s = check_int("machines", machines)
    by_examples = evaluate(PARALLEL_COST["asdca", "examples"][1], problem, machines=s, m=batch_size)
    by_features = evaluate(PARALLEL_COST["asdca", "features"][1], problem, machines=s, m=batch_size)
    return "examples" if by_examples < by_features else "features"
