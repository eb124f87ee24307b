"""The regulariser's sums in P, D and the gap (theory.md §1), as numba loops.

With t = μ/λ the regulariser is λ·g(w), g(w) = ½‖w‖² + t‖w‖₁, whose conjugate
is g*(v) = ½‖S_t(v)‖². ``Problem`` evaluates these sums at every checkpoint of a
run. They are numba loops, not numpy's ``w @ w`` (BLAS ``ddot``): BLAS runs a
dot product of tens of thousands of entries on all its threads, and on a busy
machine each such call waited milliseconds for threads that spin or sleep,
more than the whole certificate pass costs. A loop on the calling thread costs
the same O(d) whatever the BLAS thread settings.
"""
from __future__ import annotations

from numba import njit

from ._vector import VECTOR_SUM


@njit(inline="always", cache=True)
def _soft_threshold_sq(u, t):
    """max(|u| − t, 0)², or NaN for a NaN u (numpy's sums keep a NaN)."""
    m = abs(u) - t
    return 0.0 if m <= 0.0 else m * m


@njit(inline="always", cache=True)
def _fenchel_young_term(x, u, t):
    """FY_g(x, u) = g(x) + g*(u) − ux (before clipping), for t > 0 (``regularizer_sums`` writes t = 0's
    case)."""
    m = abs(u) - t
    if m <= 0.0:
        m = 0.0
    return 0.5 * x * x + t * abs(x) + 0.5 * m * m - u * x


@njit(fastmath=VECTOR_SUM, cache=True, nogil=True)
def regularizer_sums(w, v, t):
    """(‖w‖², ‖w‖₁, ‖S_t(v)‖², Σ_j FY_g(w_j, v_j)) in one pass: ‖S_t(v)‖² = 2 g*(v) without forming
    S_t(v), and each Fenchel–Young term FY_g(w_j, v_j) = g(w_j) + g*(v_j) − v_j w_j ≥ 0 clipped at 0 (a
    negative one is rounding); a NaN entry gives a NaN sum. The one home of these sums: P, D and the gap
    read theirs from here, a checkpoint all four, so a trace's P, D and gap are ``Problem``'s bit for bit
    (``_vector``: a vectorised sum's order is its compiled version's). At t = 0 the loop has no branch and is
    vectorised (d = 47 236: 12 µs, 53 µs a scalar loop)."""
    sq = 0.0
    ab = 0.0
    st = 0.0
    fy = 0.0
    if t == 0.0:
        # the same terms without branches: S_0(u)² = |u|·|u| = u·u and FY = ½(x − u)² ≥ 0 needs no clip
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
