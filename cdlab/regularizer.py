"""The regulariser's sums in P, D and the gap (theory.md §1), as numba loops.

With t = μ/λ the regulariser is λ·g(w), g(w) = ½‖w‖² + t‖w‖₁, whose conjugate
is g*(v) = ½‖S_t(v)‖². ``Problem`` evaluates these sums at every checkpoint of a
run. They are plain loops, not numpy's ``w @ w`` (BLAS ``ddot``): BLAS runs a
dot product of tens of thousands of entries on all its threads, and on a busy
machine each such call waited milliseconds for threads that spin or sleep,
more than the whole certificate pass costs. A loop on the calling thread costs
the same O(d) whatever the BLAS thread settings.
"""
from __future__ import annotations

from numba import njit


@njit(inline="always", cache=True)
def _soft_threshold_sq(u, t):
    """max(|u| − t, 0)², or NaN for a NaN u (numpy's sums keep a NaN)."""
    m = abs(u) - t
    return 0.0 if m <= 0.0 else m * m


@njit(inline="always", cache=True)
def _fenchel_young_term(x, u, t):
    """FY_g(x, u) = g(x) + g*(u) − ux (before clipping); with t = 0, ½(x − u)²."""
    if t == 0.0:
        return 0.5 * (x - u) * (x - u)
    m = abs(u) - t
    if m <= 0.0:
        m = 0.0
    return 0.5 * x * x + t * abs(x) + 0.5 * m * m - u * x


@njit(cache=True, nogil=True)
def squares_and_abs_sums(w):
    """(‖w‖², ‖w‖₁) in one pass."""
    sq = 0.0
    ab = 0.0
    for j in range(w.shape[0]):
        x = w[j]
        sq += x * x
        ab += abs(x)
    return sq, ab


@njit(cache=True, nogil=True)
def soft_threshold_sq_norm(v, t):
    """‖S_t(v)‖² = Σ_j max(|v_j| − t, 0)² = 2 g*(v), without forming S_t(v)."""
    acc = 0.0
    for j in range(v.shape[0]):
        acc += _soft_threshold_sq(v[j], t)
    return acc


@njit(cache=True, nogil=True)
def fenchel_young_sum(w, v, t):
    """Σ_j FY_g(w_j, v_j) with FY_g(w, v) = g(w) + g*(v) − vw ≥ 0, each term
    clipped at 0 (a negative one is rounding); a NaN is kept. With t = 0 a term is ½(w − v)²."""
    acc = 0.0
    for j in range(w.shape[0]):
        term = _fenchel_young_term(w[j], v[j], t)
        if not term <= 0.0:
            acc += term
    return acc


@njit(cache=True, nogil=True)
def regularizer_sums(w, v, t):
    """(‖w‖², ‖w‖₁, ‖S_t(v)‖², Σ_j FY_g(w_j, v_j)): the sums of the three functions above in one pass,
    each added up in the same order, so bit for bit theirs. A checkpoint needs all four; one loop runs
    four independent chains of additions where three loops each waited on one (a chain of dependent
    additions is bound by the adder's latency, not by memory)."""
    sq = 0.0
    ab = 0.0
    st = 0.0
    fy = 0.0
    if t == 0.0:
        # the same terms without branches (1.6× faster at d = 47 236, rcv1_small): S_0(u)² = |u|·|u| = u·u
        # and FY = ½(x − u)² ≥ 0, so a term the general loop skips (≤ 0) is +0.0 here, and adding +0.0 to a
        # sum that starts at +0.0 leaves it unchanged; a NaN is added alike
        for j in range(w.shape[0]):
            x, u = w[j], v[j]
            sq += x * x
            ab += abs(x)
            st += u * u
            fy += 0.5 * (x - u) * (x - u)
        return sq, ab, st, fy
    for j in range(w.shape[0]):
        x, u = w[j], v[j]
        sq += x * x
        ab += abs(x)
        st += _soft_threshold_sq(u, t)
        term = _fenchel_young_term(x, u, t)
        if not term <= 0.0:
            fy += term
    return sq, ab, st, fy
