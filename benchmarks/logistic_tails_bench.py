"""Newton on the logistic loss with its per-example terms from numpy's vectorised exp and log1p
(``losses.logistic_tails``, as shipped) against libm's scalar exp and log1p in a numba loop (the code before).

    python benchmarks/logistic_tails_bench.py [NAME:LOSS:FACTOR ...] [--repeats 7]

Each problem of benchmarks/race.py (rows scaled by the mean example norm, λ = FACTOR/n) is solved by
``method="newton"`` to a certified relative gap of 1e-6 (P* from ``race.certified_p_star``): whole
``cdlab.solve`` calls, certificate included, in interleaved pairs in this one process, BLAS on one thread,
"vector" as shipped and "scalar" with ``newton.line_point``, ``newton.loss_weights`` and
``losses.certificate_sums_from_w`` swapped for the scalar loops below (their logistic branch as it was: one
libm exp and log1p an example inside the kernel). JIT compilation happens before the timing. Printed: median
milliseconds of each, the median of the pairs' ratios (scalar ÷ vector: > 1, the vectorised terms faster) and
their range, the passes of each, and the largest relative difference of the certified P between them.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from numba import njit

from cdlab import losses as L
from cdlab.solvers import newton
from setting_pairs import attribute_main

DEFAULT = ("ijcnn1:logistic:0.01", "ijcnn1:logistic:1", "a9a:logistic:1", "w8a:logistic:1", "mushrooms:logistic:0.01",
           "phishing:logistic:0.01")


@njit(cache=True, nogil=True, error_model="numpy")
def scalar_line_point(code, z, u, y, s, t, deriv=None, curv=None):
    if code != L.LOGISTIC:
        return newton._line_point(code, z, u, y, s, t, deriv, curv)
    value, slope, n = 0.0, 0.0, z.shape[0]
    for i in range(n):
        phi, sg, sm = L.logistic_terms(-y[i] * (z[i] + t * u[i]))
        value += phi
        slope += -y[i] * sg * u[i]
        if deriv is not None:
            deriv[i], curv[i] = newton._logistic_weights(y[i], sg, sm, n)
    return value, slope


@njit(cache=True, nogil=True, error_model="numpy")
def scalar_loss_weights(code, z, y, s, deriv, curv):
    if code != L.LOGISTIC:
        newton._loss_weights(code, z, y, s, deriv, curv)
        return
    n = z.shape[0]
    for i in range(n):
        _, sg, sm = L.logistic_terms(-y[i] * z[i])
        deriv[i], curv[i] = newton._logistic_weights(y[i], sg, sm, n)


@njit(cache=True)
def scalar_sums_from_w(code, z, alpha, y, s):
    if code != L.LOGISTIC:
        return L._certificate_sums(code, z, alpha, y, s)
    loss_acc, conj_acc = 0.0, 0.0
    for i in range(z.shape[0]):
        t = -y[i] * z[i]
        up = L.logistic_terms(t)[0]
        loss_acc += up
        conj_acc += up - alpha[i] * y[i] * t
    return loss_acc, conj_acc, 0.0


class Terms:
    """The three functions, swapped in together: ``attribute_main`` sets one attribute, whose setter this is."""
    SHIPPED = (newton.line_point, newton.loss_weights, L.certificate_sums_from_w)
    SCALAR = (scalar_line_point, scalar_loss_weights, scalar_sums_from_w)

    def __init__(self):
        self._which = self.SHIPPED

    @property
    def which(self):
        return self._which

    @which.setter
    def which(self, functions):
        self._which = functions
        newton.line_point, newton.loss_weights, L.certificate_sums_from_w = functions


def main(argv=None):
    attribute_main(argv, __doc__.splitlines()[0], Terms(), "which", Terms.SCALAR, ("vector", "scalar"), DEFAULT,
                   method="newton")


if __name__ == "__main__":
    main()
