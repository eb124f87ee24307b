"""The exact line search of Newton's method on the smoothed hinge (``newton.NewtonState._line_search``).

Along the line w + tΔ, with z = Xw and u = XΔ carried (no pass over X),

    h(t) = Σ_i φ_s(z_i + t u_i) + (nλ/2)‖w + tΔ‖²,
    h'(t) = Σ_i φ_s'(z_i + t u_i) u_i + nλ(w·Δ + t‖Δ‖²),

and the smoothed hinge's φ_s' is piecewise linear (theory.md §2: slope 1/s on its quadratic piece, 0 off
it), so h' is piecewise linear and increasing (h'' ≥ nλ‖Δ‖² > 0). Its root is h's minimiser on the line:
Newton's method on h' lands on it exactly once an iterate lies on the root's linear piece, and a bracket
[lo, hi] with h'(lo) < 0 < h'(hi) keeps every iterate inside (a Newton point outside the bracket gives way
to its midpoint), so the search converges from wherever it starts (Newton's point from t = 0, or the
caller's t where smaller). Each trial is O(n).

The backtracking search (``newton.ARMIJO``, t = 1, ½, ¼, …) alone takes the first sufficient decrease, which on a
piecewise quadratic is often far short of the minimiser once the step crosses kinks. Measured
(``benchmarks/hinge_newton_bench.py --line-search``, s = 0.01, λ = 0.01/n, one thread, backtracking ÷ exact): a9a 626
→ 253 passes, 2.98× the seconds; ijcnn1 78 → 30 passes, 2.62×. Once a trial has bracketed the root, the examples on
one piece over the whole bracket leave the later trials' sweeps (``_settle``): a9a's whole run 200 → 140 ms of line
searches (~13 trials a search, the Newton steps there far too long at s = 0.01 from w = 0).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import losses as L

# trials of Newton's method on h' (a trial: one O(n) sweep of z and u); it ends earlier where |h'(t)| is
# at most ROOT_RTOL × |h'(0)| or the bracket is within ROOT_RTOL of its upper end
MAX_ROOT_TRIALS = 100
ROOT_RTOL = 1e-12


@njit(cache=True, nogil=True, error_model="numpy")
def _slope_and_curvature(margin, rate, live, n_live, s, t):
    """(Σ φ_s'·u, Σ φ_s''·u²) at t over the examples live[:n_live], in margins: m_i(t) = y_i(z_i + t u_i) =
    margin_i + t·rate_i, φ_s'(z_i + t u_i)·u_i = −rate_i·min(1, max(0, (1 − m_i(t))/s)) and φ_s''·u_i² = rate_i²/s
    on the quadratic piece 0 < 1 − m_i(t) < s."""
    slope = 0.0
    curv = 0.0
    for k in range(n_live):
        i = live[k]
        gap = 1.0 - margin[i] - t * rate[i]
        if gap >= s:
            slope -= rate[i]
        elif gap > 0.0:
            slope -= rate[i] * gap / s
            curv += rate[i] * rate[i] / s
    return slope, curv


@njit(cache=True, nogil=True, error_model="numpy")
def _settle(margin, rate, live, n_live, s, lo, hi):
    """Drops from live[:n_live] the examples on one piece over the whole bracket [lo, hi] (m_i(t) is linear in t,
    so its ends decide): on the linear piece they add the constant −rate_i to h' (returned, with the examples
    kept), on the flat one nothing."""
    kept = 0
    slope = 0.0
    for k in range(n_live):
        i = live[k]
        gap_lo = 1.0 - margin[i] - lo * rate[i]
        gap_hi = 1.0 - margin[i] - hi * rate[i]
        if gap_lo >= s and gap_hi >= s:
            slope -= rate[i]
        elif not (gap_lo <= 0.0 and gap_hi <= 0.0):
            live[kept] = i
            kept += 1
    return kept, slope


@njit(cache=True, nogil=True, error_model="numpy")
def smoothed_hinge_line_min(z, u, y, s, n_lam, w_step, step_step, t):
    """(t, the trials it took): the t > 0 minimising h (module docstring), from Newton's point from 0 or ``t`` if
    smaller, given nλ, w·Δ and ‖Δ‖²; out of trials, the bracket's lower end if above 0, else its upper end (the
    caller's halvings then decide); 0 where h'(0) ≥ 0 at rounding (Δ not a descent direction along the carried
    z: the caller's own test found it one, from ∇P). Once a trial has
    bracketed the root, the examples on one piece of φ_s over the whole bracket add a constant to h' and leave
    the sweeps (``_settle``), so the later trials sweep only the examples whose piece the bracket leaves open."""
    n = z.shape[0]
    margin = np.empty(n)
    rate = np.empty(n)
    live = np.empty(n, dtype=np.int64)
    for i in range(n):
        margin[i] = y[i] * z[i]
        rate[i] = y[i] * u[i]
        live[i] = i
    n_live = n
    settled = 0.0  # the settled examples' share of h'
    loss_slope, loss_curv = _slope_and_curvature(margin, rate, live, n_live, s, 0.0)
    slope0 = loss_slope + n_lam * w_step
    if not slope0 < 0.0:  # no descent along the carried z at rounding: no t (the caller keeps its own)
        return 0.0, 1
    t = min(t, -slope0 / (loss_curv + n_lam * step_step))  # Newton's first point from t = 0
    lo, hi = 0.0, -1.0  # hi < 0: no t with h'(t) > 0 found yet
    trials = 1
    while trials < MAX_ROOT_TRIALS:
        trials += 1
        loss_slope, loss_curv = _slope_and_curvature(margin, rate, live, n_live, s, t)
        slope = settled + loss_slope + n_lam * (w_step + t * step_step)
        if abs(slope) <= ROOT_RTOL * abs(slope0):
            return t, trials
        if slope < 0.0:
            lo = t
        else:
            hi = t
        if hi >= 0.0:
            if hi - lo <= ROOT_RTOL * hi:
                return lo, trials
            n_live, share = _settle(margin, rate, live, n_live, s, lo, hi)
            settled += share
        nxt = t - slope / (loss_curv + n_lam * step_step)
        if hi >= 0.0 and not lo < nxt < hi:
            nxt = 0.5 * (lo + hi)
        t = nxt
    return (lo if lo > 0.0 else max(hi, 0.0)), trials  # out of trials: the bracket's end nearest the root found
