"""Losses of the margin, their conjugates and exact dual coordinate steps.

Notation of ``shared/reference/theory.md`` §1–3: the loss of example i is
φ_i(z) = φ(z; y_i) with z = x_i·w, α_i is its dual variable (SDCA sign
convention), and the dual objective uses −φ_i*(−α_i).

Every loss is identified by an integer code so that numba kernels dispatch
through small ``inline="always"`` helpers and stay cacheable: a kernel takes
``(loss_code, s)`` as plain arguments and never recompiles per loss.
``s`` is the smoothing parameter of the smoothed hinge (ignored by the others).

+----------------+--------------------------+----------+-----------------------+----------------+
| loss           | φ(z; y)                  | smooth   | −φ*(−α), b = αy       | domain of α    |
+================+==========================+==========+=======================+================+
| squared        | ½(z−y)²                  | γ = 1    | αy − ½α²              | R              |
| logistic       | log(1+e^{−yz})           | γ = 4    | −[b log b+(1−b)log(1−b)] | b ∈ [0,1]   |
| hinge          | max(0, 1−yz)             | L = 1    | αy                    | b ∈ [0,1]      |
| smoothed_hinge | see theory.md §2         | γ = s    | αy − (s/2)α²          | b ∈ [0,1]      |
| absolute       | |z−y|                    | L = 1    | αy                    | α ∈ [−1,1]     |
+----------------+--------------------------+----------+-----------------------+----------------+
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
from numba import njit

SQUARED, LOGISTIC, HINGE, SMOOTHED_HINGE, ABSOLUTE = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class LossInfo:
    """What the Python side needs to know about a loss."""

    name: str
    code: int
    classification: bool  # labels must be ±1
    smooth: bool
    lipschitz: float | None  # L for Lipschitz losses (None when unbounded slope)

    def gamma(self, s: float = 1.0) -> float | None:
        """Smoothness γ: φ' is (1/γ)-Lipschitz. ``None`` for non-smooth losses."""
        return {SQUARED: 1.0, LOGISTIC: 4.0, SMOOTHED_HINGE: s}.get(self.code)

    @property
    def label(self) -> str:
        """The name in prose ("smoothed hinge")."""
        return self.name.replace("_", " ")


LOSSES = {
    "squared": LossInfo("squared", SQUARED, False, True, None),
    "logistic": LossInfo("logistic", LOGISTIC, True, True, 1.0),
    "hinge": LossInfo("hinge", HINGE, True, False, 1.0),
    "smoothed_hinge": LossInfo("smoothed_hinge", SMOOTHED_HINGE, True, True, 1.0),
    "absolute": LossInfo("absolute", ABSOLUTE, False, False, 1.0),
}
# the sets every other module reads (a new loss is added to LOSSES only)
ALL_LOSSES = frozenset(LOSSES)
SMOOTH_LOSSES = frozenset(name for name, info in LOSSES.items() if info.smooth)
CLASSIFICATION_LOSSES = tuple(name for name, info in LOSSES.items() if info.classification)
REGRESSION_LOSSES = tuple(name for name, info in LOSSES.items() if not info.classification)
# for each non-smooth loss, the nearest smooth one (same labels): what to suggest when a method needs γ
NEAREST_SMOOTH = {"hinge": "smoothed_hinge", "absolute": "squared"}
# the losses whose dual coordinate lives in a closed box and whose optimum can sit at its ends
# (``box_gradient``): logistic's b stays inside (0, 1), the squared loss's α is unbounded
BOX_LOSSES = frozenset({"hinge", "smoothed_hinge", "absolute"})
_ALIASES = {"smooth_hinge": "smoothed_hinge", "square": "squared", "least_squares": "squared",
            "log": "logistic", "abs": "absolute"}


def get_loss(name: str) -> LossInfo:
    """Look a loss up by name; raises ``ValueError`` naming the known ones."""
    if not isinstance(name, str):
        raise ValueError(f"loss must be a string, got {type(name).__name__}")
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; choose one of {sorted(LOSSES)}")
    return LOSSES[key]


# --------------------------------------------------------------------------
# scalar helpers, usable from any numba kernel
# --------------------------------------------------------------------------

@njit(inline="always", cache=True)
def _log1pexp(t):
    """log(1 + e^t) without overflow."""
    if t > 0.0:
        return t + math.log1p(math.exp(-t))
    return math.log1p(math.exp(t))


@njit(inline="always", cache=True)
def _sigmoid(t):
    if t >= 0.0:
        return 1.0 / (1.0 + math.exp(-t))
    e = math.exp(t)
    return e / (1.0 + e)


@njit(inline="always", cache=True)
def _sigmoid_pair(t):
    """(σ(t), σ(−t)) = (σ(t), 1 − σ(t)), both to full relative precision, from one exp."""
    e = math.exp(-abs(t))
    big, small = 1.0 / (1.0 + e), e / (1.0 + e)
    if t >= 0.0:
        return big, small
    return small, big


@njit(inline="always", cache=True)
def log1pexp_from_tail(t, tail):
    """log(1 + e^t) = max(t, 0) + tail from tail = log(1 + e^{−|t|}) (``_log1pexp``'s two branches in one)."""
    return t + tail if t > 0.0 else tail


@njit(inline="always", cache=True)
def logistic_from_tail(t, e, tail):
    """(log(1 + e^t), σ(t), σ(−t)) from e = e^{−|t|} and tail = log(1 + e) (``log1pexp_from_tail``; the pair is
    (1/(1 + e), e/(1 + e)) in t's order, ``_sigmoid_pair``)."""
    big, small = 1.0 / (1.0 + e), e / (1.0 + e)
    if t >= 0.0:
        return log1pexp_from_tail(t, tail), big, small
    return tail, small, big


@njit(inline="always", cache=True)
def logistic_terms(t):
    """(log(1 + e^t), σ(t), σ(−t)) from one exp, bit for bit ``_log1pexp(t)`` and ``_sigmoid_pair(t)``:
    the logistic loss's value, derivative and curvature at once (t = −yz: φ = log(1 + e^t), φ' = −yσ(t),
    φ'' = σ(t)σ(−t))."""
    e = math.exp(-abs(t))
    return logistic_from_tail(t, e, math.log1p(e))


def numpy_simd(ufunc: str) -> bool:
    """Whether numpy's float64 ``ufunc`` (exp, log1p) runs on AVX-512 here (``np.lib.introspect.opt_func_info``'s
    current target): their only SIMD forms (log1p's by SVML), which numpy's source leaves out of MSVC builds (its
    Windows wheels); elsewhere each entry calls libm. False where numpy cannot say (before 2.0)."""
    if sys.platform == "win32":
        return False
    try:
        current = np.lib.introspect.opt_func_info(f"^{ufunc}$", "float64")[ufunc]["dd"]["current"]
    except (AttributeError, KeyError, TypeError):
        return False
    return "X86_V4" in current or "AVX512" in current


# ``logistic_tails`` takes e^{−|t|} and log(1 + e) from numpy's ufuncs where they are vectorised, else from
# ``exp_neg_abs`` and ``log1p_unit``, whose loops LLVM vectorises: over 5e4 entries on AVX2 without AVX-512, the exp
# 0.14 ms against numpy's 0.64 and the log1p 0.10 against 0.52 (benchmarks/vector_exp_bench.py).
NUMPY_SIMD_EXP = numpy_simd("exp")
NUMPY_SIMD_LOG1P = numpy_simd("log1p")
# e^x = 2^k e^r, x = k ln 2 + r, |r| ≤ ln(2)/2: ln 2 split as fdlibm's exp splits it (k·LN2_HI exact for |k| < 2^21)
_LN2_HI, _LN2_LO, _INV_LN2 = 6.93147180369123816490e-01, 1.90821492927058770002e-10, 1.44269504088896338700e+00
# below this x (with a margin: 2^k leaves the normal exponents below about −709.1) and at NaN, libm's exp
EXP_POLY_FLOOR = -708.0


@njit(cache=True, nogil=True, fastmath={"contract"})
def exp_neg_abs(t, out, scale_bits):
    """out = e^{−|t|} elementwise (``scale_bits``: int64 scratch as long as t; ``out`` not t itself, which the last
    loop reads again). e^r by its Taylor polynomial of degree 13 in Horner form (the remainder r^14/14! < 2^-56 at
    |r| ≤ ln(2)/2), times 2^k written as the bits of a float in a second loop; |t| beyond −EXP_POLY_FLOOR, ±inf and
    NaN by libm's exp. Within one ulp of e^{−|t|}, with or without fused multiply-adds."""
    n = t.shape[0]
    for i in range(n):
        x = max(-abs(t[i]), EXP_POLY_FLOOR)
        k = math.floor(x * _INV_LN2 + 0.5)
        r = (x - k * _LN2_HI) - k * _LN2_LO
        p = 1.0 / 6227020800.0
        for c in (479001600.0, 39916800.0, 3628800.0, 362880.0, 40320.0, 5040.0, 720.0, 120.0, 24.0, 6.0, 2.0, 1.0,
                  1.0):
            p = p * r + 1.0 / c
        out[i] = p
        scale_bits[i] = (np.int64(k) + 1023) << 52
    scale = scale_bits.view(np.float64)
    for i in range(n):
        out[i] *= scale[i]
    for i in range(n):
        if not abs(t[i]) <= -EXP_POLY_FLOOR:
            out[i] = math.exp(-abs(t[i]))


# log(1 + x) = k ln 2 + log(m) + c/u, u = 1 + x = 2^k m with m in [√½, √2) (fdlibm's log1p reduction)
_SQRT2 = 1.4142135623730951


@njit(cache=True, nogil=True, fastmath={"contract"}, error_model="numpy")
def log1p_unit(x, out):
    """out = log(1 + x) elementwise for x in [0, 1] (``logistic_tails``' log(1 + e^{−|t|})), by loops LLVM
    vectorises (numpy's error model: no zero-division check in the loop); x outside (0, 1] and NaN by libm's
    log1p in a second loop. fdlibm's log1p in a select instead of branches: u = 1 + x = 2^k m, m in [√½, √2), k in
    {0, 1}; c = x − (u − 1) (exact) corrects u's rounding by c/u; f = m − 1 and s = f/(2 + f), log(m) = 2 atanh(s)
    = f − (f²/2 − s(f²/2 + R)) with R = Σ_{j=1..9} 2 s^{2j}/(2j + 1) (|s| ≤ 0.1716: the series' remainder is below
    2^-55 of the value); ln 2 split as ``exp_neg_abs`` splits it. Within one ulp of log(1 + x) with fused
    multiply-adds (worst 0.99 over 2e7 points), 1.006 without (NUMBA_CPU_FEATURES=-fma, x just below √2 − 1); ``out``
    not x itself, which the second loop reads again."""
    n = x.shape[0]
    for i in range(n):
        u = 1.0 + x[i]
        c = (x[i] - (u - 1.0)) / u
        k = np.float64(u >= _SQRT2)
        f = u * (1.0 - 0.5 * k) - 1.0
        s = f / (2.0 + f)
        z = s * s
        r = 2.0 / 19.0
        for d in (17.0, 15.0, 13.0, 11.0, 9.0, 7.0, 5.0, 3.0):
            r = r * z + 2.0 / d
        half_f2 = 0.5 * f * f
        out[i] = k * _LN2_HI - ((half_f2 - (s * (half_f2 + r * z) + (k * _LN2_LO + c))) - f)
    for i in range(n):
        if not 0.0 < x[i] <= 1.0:  # 0 too: libm keeps −0.0's sign
            out[i] = math.log1p(x[i])


def logistic_tails(t, with_log=True):
    """(e, tail) elementwise over the array t: e = e^{−|t|} and tail = log(1 + e) (None unless ``with_log``), what
    ``logistic_from_tail`` takes: each by numpy's ufunc where it is SIMD (NUMPY_SIMD_EXP, NUMPY_SIMD_LOG1P; AVX-512
    only), else, for a 1-d t, by the vectorised loops of ``exp_neg_abs`` and ``log1p_unit``. A loop over the
    examples that calls libm's scalar exp and log1p spends most of its time in them; numpy's SIMD ufuncs (AVX-512)
    took 0.04 ms for the pair over 5e4 entries where the scalar loop took 0.53, numpy's exp within one ulp of libm's
    values (2e5 entries, |t| from 1e-8 to 800). The loops over every example's logistic terms take them so, called
    from Python: ``Problem``'s sums and a checkpoint's (``sum_loss``, ``certificate_sums`` …), Newton's line search
    and loss weights; a numba kernel's step calls ``logistic_terms``."""
    t = np.asarray(t, dtype=np.float64)
    if NUMPY_SIMD_EXP or t.ndim != 1:
        e = np.exp(-np.abs(t))
    else:
        e = np.empty_like(t)
        exp_neg_abs(t, e, np.empty(t.shape[0], dtype=np.int64))
    if not with_log:
        return e, None
    if NUMPY_SIMD_LOG1P or t.ndim != 1:
        return e, np.log1p(e)
    tail = np.empty_like(e)
    log1p_unit(e, tail)
    return e, tail


@njit(inline="always", cache=True)
def _xlogx(b):
    return b * math.log(b) if b > 0.0 else 0.0


@njit(inline="always", cache=True)
def loss_value(code, z, y, s):
    """φ(z; y)."""
    if code == SQUARED:
        r = z - y
        return 0.5 * r * r
    if code == LOGISTIC:
        return _log1pexp(-y * z)
    if code == HINGE:
        return max(0.0, 1.0 - y * z)
    if code == SMOOTHED_HINGE:
        m = 1.0 - y * z
        if m <= 0.0:
            return 0.0
        if m >= s:
            return m - 0.5 * s
        return m * m / (2.0 * s)
    # ABSOLUTE
    return abs(z - y)


@njit(inline="always", cache=True)
def loss_deriv(code, z, y, s):
    """φ'(z; y) (a subgradient for hinge and absolute loss)."""
    if code == SQUARED:
        return z - y
    if code == LOGISTIC:
        return -y * _sigmoid(-y * z)
    if code == HINGE:
        return -y if y * z < 1.0 else 0.0
    if code == SMOOTHED_HINGE:
        m = 1.0 - y * z
        if m <= 0.0:
            return 0.0
        if m >= s:
            return -y
        return -y * m / s
    # ABSOLUTE
    if z > y:
        return 1.0
    if z < y:
        return -1.0
    return 0.0


@njit(inline="always", cache=True)
def loss_curvature(code, z, y, s):
    """φ''(z; y) for the smooth losses (y² = 1 for the classification ones): 1 (squared),
    σ(yz)σ(−yz) (logistic), 1/s on the smoothed hinge's quadratic piece 0 < 1 − yz < s and 0
    off it (its generalized Hessian: φ' is piecewise linear). 0 for hinge and absolute, whose
    φ' is piecewise constant (no second-order model)."""
    if code == SQUARED:
        return 1.0
    if code == LOGISTIC:
        a, b = _sigmoid_pair(y * z)
        return a * b
    if code == SMOOTHED_HINGE:
        m = 1.0 - y * z
        return 1.0 / s if 0.0 < m < s else 0.0
    return 0.0


@njit(inline="always", cache=True)
def neg_conj(code, a, y, s):
    """−φ*(−a; y): the dual objective's per-example term (−inf outside the domain)."""
    if code == SQUARED:
        return a * y - 0.5 * a * a
    if code == ABSOLUTE:
        if abs(a) > 1.0:
            return -np.inf
        return a * y
    b = a * y
    if b < 0.0 or b > 1.0:
        return -np.inf
    if code == LOGISTIC:
        return -(_xlogx(b) + _xlogx(1.0 - b))
    if code == HINGE:
        return b
    # SMOOTHED_HINGE
    return b - 0.5 * s * a * a


@njit(inline="always", cache=True)
def fenchel_young(code, z, a, y, s):
    """φ(z) + φ*(−a) + a z ≥ 0, the per-example share of the duality gap.

    Written so that the cancellation at the optimum happens in one place; a
    value below zero can only be rounding and is reported as 0.
    """
    if code == LOGISTIC:
        # φ(z) + b log b + (1−b) log(1−b) − b·yz with b = ay:
        # = b·(log b − log σ(−yz)...) — evaluated as a KL divergence, which
        # is accurate when b is close to σ(−yz).
        b = a * y
        if b < 0.0 or b > 1.0:
            return np.inf
        t = -y * z  # φ = log(1+e^t), optimum b* = σ(t)
        # KL(b || σ(t)) = b log(b/σ(t)) + (1−b) log((1−b)/(1−σ(t)))
        # log σ(t) = −log(1+e^{−t});  log(1−σ(t)) = −log(1+e^{t})
        val = _xlogx(b) + b * _log1pexp(-t) + _xlogx(1.0 - b) + (1.0 - b) * _log1pexp(t)
        return max(val, 0.0)
    val = loss_value(code, z, y, s) - neg_conj(code, a, y, s) + a * z
    return max(val, 0.0)


@njit(inline="always", cache=True)
def _lambert_w_exp(ell):
    """W(e^ℓ), the root w > 0 of w + log w = ℓ, for any real ℓ (e^ℓ itself may overflow).

    Newton on w + log w − ℓ, i.e. w ← w(1 + ℓ − log w)/(1 + w), from ℓ − log ℓ
    (the asymptote for ℓ > 1) or e^ℓ/(1 + e^ℓ) (W(x) ≈ x for small x)."""
    if ell < -700.0:
        return math.exp(ell)  # W(x) = x(1 − x + …) and x < 1e-304
    w = ell - math.log(ell) if ell > 1.0 else math.exp(ell) / (1.0 + math.exp(ell))
    for _ in range(20):
        w_new = w * (1.0 + ell - math.log(w)) / (1.0 + w)
        if abs(w_new - w) <= 1e-15 * w:
            return w_new
        w = w_new
    return w


# The logistic step's Halley iteration stops after a step this small (its error is then < 1e-14;
# _logistic_root_left).
HALLEY_STEP_TOL = 2e-5
# A move of t this small updates the pair (σ(t), σ(−t)) by a polynomial for e^δ (``_sigmoid_pair_moved``)
# instead of an exp: the usual SDCA step's second iteration, after a first step of ~1e-3 from logit b.
POLY_MOVE = 0.02
# |h| and h' below this: their products in the Halley step cannot overflow (``_logistic_root_left``)
SQUARE_SAFE = 1e150


@njit(inline="always", cache=True)
def _sigmoid_pair_moved(sg, sm, delta):
    """(σ(t + δ), σ(−t − δ)) from (σ(t), σ(−t)) for |δ| ≤ POLY_MOVE, without an exp: with E = e^δ,
    σ(t + δ) = σ(t)E/(σ(−t) + σ(t)E) and σ(−t − δ) = σ(−t)/(σ(−t) + σ(t)E), a sum of two positive terms
    (no cancellation), so both keep the pair's relative precision. E by its Taylor polynomial of degree 7:
    the remainder δ⁸/8! ≤ 7e-19 at |δ| ≤ 0.02. With the one-division Halley step, measured on SDCA's steps
    (a9a and reuters_moneyfx, logistic, λ = 1/n, the state after 1, 3 and 6 passes, each step fed the
    previous one's result): 121 → 114, 68 → 64, 59 → 55 ns a step (a9a), 86 → 78, 56 → 51, 59 → 53."""
    e = 1.0 + delta * (1.0 + delta * (0.5 + delta * (1.0 / 6.0 + delta * (1.0 / 24.0 + delta * (
        1.0 / 120.0 + delta * (1.0 / 720.0 + delta * (1.0 / 5040.0)))))))
    up = sg * e
    inv = 1.0 / (sm + up)
    return up * inv, sm * inv


# The start of the iteration (_logistic_root_left): beyond these q it is c − W(q e^c) where that lies right of logit b;
# up to them, one Newton step from c at b = 0 (a coordinate's first visit from α = 0: the root t of t − c + qσ(t)
# lies in [c − q, c]) and logit b at 0 < b < 1. W's logarithms cost more than the iterations they save below these
# q. Measured on the steps of SDCA's first 8 passes (logistic, λ = 1/n to 1e-16/n, mushrooms, phishing, a9a,
# reuters_moneyfx, rcv1_small, the recorded (b, yz, q) replayed): from 8 at b = 0 and W wherever it lay right of
# logit b inside (0, 1), the mean step fell 52-102 → 36-74 ns at λ = 1/n and 0.01/n, 52-114 → 47-101 ns at 1e-4/n to
# 1e-8/n, and stayed within ±3 % at 1e-10/n to 1e-16/n, where q passes 1e9; 1e9 at b = 0 cost up to 1.5× more at
# 1e-6/n and 1e-8/n (a9a, rcv1_small).
W_START_Q = 1e3
W_START_Q_INSIDE = 1e9


@njit(inline="always", cache=True)
def _logistic_root_left(b, one_minus_b, c, q, logit_b):
    """The root t of h(t) = t − c + q(σ(t) − b) when σ(c) > b, so that it lies in
    (logit b, c); ``one_minus_b`` is 1 − b to full relative precision and
    ``logit_b`` = log(b/(1 − b)) (−inf for b = 0). Returns (t, σ(t), σ(−t)), the
    pair to full relative precision.

    h is increasing with h' = 1 + qσ(1−σ) ∈ [1, 1 + q/4], and the root is
    bracketed by max(logit b, c − q(σ(c) − b)) below and c above. The
    iteration is Halley's, t ← t − 2h·h'/(2h'² − h·h'') (Householder 1970,
    §4.4), bisecting where it leaves the bracket. With σ̄ = 1 − σ, the second
    and third derivatives qσσ̄(σ̄ − σ) and qσσ̄(1 − 6σσ̄) are below h' in size,
    so the error after a step of δ is, to leading order, below
    (1/4 + 1/6)|δ|³ < |δ|³/2.

    The start (b > 0 and q > W_START_Q_INSIDE, or b = 0 and q > W_START_Q): the
    larger of two points left of the root, logit b and c − W(q e^c), the root of
    t − c + q e^t (≥ h(t) − qb, since σ(t) < e^t). The
    second is what makes the step exact at any q: when q b is small the root sits
    where σ(t) ≈ e^t, about log q below c, and an iteration started from logit b
    overshot to near c and then crept back about 1 per iteration on the
    exponential, so for q beyond ~1e26 it ran out of iterations far from the
    root. Below those q the start is logit b (0 < b < 1) or, at b = 0, one Newton
    step from c, clamped to the bracket (on either side of the root: h is convex
    left of 0), without W's logarithms, which cost more than the iterations they
    save there (W_START_Q's comment).

    Cost in the usual SDCA step (b near the root, so logit b is the start): one
    exp per iteration after the first, whose σ(logit b) = b is known; the pair at
    the root is extrapolated from the last iteration's (below).
    """
    hi = c
    if b > 0.0:
        lo = logit_b
        # c − W(q e^c) > logit b  ⇔  W(q e^c) < g = c − logit b  ⇔  q e^c < g e^g (W(x e^x) = x, W increasing)
        # ⇔  q b < g (1 − b), as e^(g − c) = e^(−logit b) = (1 − b)/b
        use_w = q > W_START_Q_INSIDE and q * b < (c - logit_b) * one_minus_b
        t, sg, sm = logit_b, b, one_minus_b
    else:
        sc, smc = _sigmoid_pair(c)
        lo = c - q * ((1.0 - smc) if c > 0.0 else sc)  # c − q(σ(c) − b) at b = 0
        use_w = q > W_START_Q
        if not use_w:
            v = q * sc
            t = max(c - v / (1.0 + v * smc), lo)  # Newton from c: h(c) = qσ(c), h'(c) = 1 + qσ(c)σ(−c)
            sg, sm = _sigmoid_pair(t)
    if use_w:
        t = min(max(c - _lambert_w_exp(math.log(q) + c), lo), hi)
        sg, sm = _sigmoid_pair(t)
    for _ in range(60):
        # σ(t) − b as (1 − b) − σ(−t) when σ(t) > ½: no cancellation of two numbers near 1
        h = t - c + q * ((one_minus_b - sm) if t > 0.0 else (sg - b))
        if h > 0.0:
            hi = t
        elif h < 0.0:
            lo = t
        else:
            return t, sg, sm
        v = q * sg * sm
        slope = 1.0 + v
        # Halley's step, Newton's −h/h' divided by shrink = 1 − ½·h·h''/h'² (h'' = v(σ(−t) − σ(t))); Newton's
        # where that would more than double it (shrink ≤ ½: far from the root). Where h and h' are below
        # SQUARE_SAFE its one division −h·h'/(h'² − ½·h·h''), the same step: a division fewer on the path
        # from one SDCA step to the next; beyond, the two-division form (|h''/h'| < 1, so no overflow)
        if abs(h) < SQUARE_SAFE and slope < SQUARE_SAFE:
            square = slope * slope
            den = square - 0.5 * h * (v * (sm - sg))
            step = -h * slope / den if den > 0.5 * square else -h / slope
        else:
            newton = -h / slope
            shrink = 1.0 + 0.5 * newton * (v * (sm - sg) / slope)
            step = newton / shrink if shrink > 0.5 else newton
        t_new = t + step
        # The error of t is |t − root| ≈ |t_new − t| = δ, and after the step it is below δ³/2 (docstring):
        # after a step of δ ≤ HALLEY_STEP_TOL = 2e-5 the error in t_new is below 4e-15, hence so is the
        # relative error of b⁺ and 1 − b⁺ (|d log b| = (1 − b)|dt| ≤ |dt|), and no further exp is
        # needed. The pair at t_new is the second-order extrapolation σ(t + δ) = σ(t)(1 + σ(−t)δ +
        # ½σ(−t)(σ(−t) − σ(t))δ² + O(δ³)), σ(−t − δ) = σ(−t)(1 − σ(t)δ + ½σ(t)(σ(t) − σ(−t))δ² + O(δ³)):
        # relative error below δ³/6 ≤ 1.4e-15, with no exp. A t_new outside the bracket is no such
        # step: the bisection below takes over until the bracket itself is that small.
        if abs(step) <= HALLEY_STEP_TOL and lo <= t_new <= hi:
            half = 0.5 * step * step
            return (t_new, sg * (1.0 + sm * step + half * sm * (sm - sg)),
                    sm * (1.0 - sg * step + half * sg * (sg - sm)))
        if not (lo < t_new < hi):
            t_new = 0.5 * (lo + hi)  # safeguard: bisect
        moved = t_new - t
        t = t_new
        if abs(moved) <= POLY_MOVE:
            sg, sm = _sigmoid_pair_moved(sg, sm, moved)
        else:
            sg, sm = _sigmoid_pair(t)
        if hi - lo <= 1e-15 * (1.0 + abs(t)):
            break
    return t, sg, sm


@njit(inline="always", cache=True)
def _logistic_step(b, yz, q):
    """Root b⁺ ∈ (0,1) of log(b⁺/(1−b⁺)) + yz + q(b⁺ − b) = 0, for any q > 0: ``logistic_step_at`` with
    logit b = log(b/(1 − b)) computed here. Returns (b⁺, 1 − b⁺)."""
    bn, one_minus_bn, _ = logistic_step_at(b, logit_of(b), yz, q)
    return bn, one_minus_bn


@njit(inline="always", cache=True)
def logit_of(b):
    """log(b/(1 − b)) for 0 < b < 1 (one rounding in the quotient: ≤ 1.2e-16), else 0 (``logistic_step_at`` reads
    no logit there)."""
    return math.log(b / (1.0 - b)) if 0.0 < b < 1.0 else 0.0


@njit(inline="always", cache=True)
def cached_logit(b, t):
    """The logit ``logistic_step_at`` takes at the stored b, given the root t of the step that produced it: t itself
    where b ≤ ½, ``logit_of(b)`` above, where the stored b holds 1 − b only to its ulp (relative ulp(b)/(1 − b), up
    to 1e-4 at 1 − b ~ 1e-12), so that the root of the unrounded b⁺ would start the next step ~ulp(b)/(1 − b)
    off the b it steps from."""
    return t if b <= 0.5 else logit_of(b)


@njit(inline="always", cache=True)
def logistic_step_at(b, logit_b, yz, q):
    """Root b⁺ ∈ (0,1) of log(b⁺/(1−b⁺)) + yz + q(b⁺ − b) = 0, for any q > 0, given ``logit_b`` = log(b/(1 − b))
    where 0 < b < 1 (unread at b = 0 or 1): SDCA's kernel keeps each coordinate's last root, so a step reads its
    logit instead of a log (``dual_cd.dual_cd_chunk``).

    Solved in t = logit(b⁺): h(t) = t + yz + q(σ(t) − b). With c = −yz, the
    root lies left of c when c > logit b, i.e. σ(c) > b (then b < b⁺ < σ(c)),
    and right of it otherwise; the second case is the first under t → −t,
    b → 1 − b, c → −c, so one solver (``_logistic_root_left``) serves both.
    σ(t) keeps full relative precision of b⁺ and of 1 − b⁺ (= σ(−t)) even when
    b⁺ is within 1e-12 of 0 or 1, or q is near the float64 maximum.
    Returns (b⁺, 1 − b⁺, t), t = logit b⁺ (c where b⁺ is σ(c) rounded to 0 or 1).
    """
    c = -yz
    # 1 − b is exact for b ≥ ½ (Sterbenz); for b < ½ its rounding is relative 1e-16
    one_minus_b = 1.0 - b
    if b > 0.0 and one_minus_b > 0.0:
        if c == logit_b:
            return b, one_minus_b, logit_b
        # the mirrored problem's root t' is −t, and (σ(t), σ(−t)) = (σ(−t'), σ(t')): the pair swaps
        mirrored = c < logit_b
        low, high, low_logit = (one_minus_b, b, -logit_b) if mirrored else (b, one_minus_b, logit_b)
    else:
        # b = 0 (the root is right of logit b = −∞) or b = 1 (left of +∞), unless σ(c) itself is 0 or 1
        sc, smc = _sigmoid_pair(c)
        if (sc == 0.0) if b <= 0.0 else (smc == 0.0):
            return sc, smc, c
        mirrored = not b <= 0.0
        low, high, low_logit = 0.0, 1.0, -np.inf
    # one call site: numba copies an inlined function's IR at each call site, and the kernels' compile time with it
    t, sg, sm = _logistic_root_left(low, high, -c if mirrored else c, q, low_logit)
    if mirrored:
        return sm, sg, -t
    return sg, sm, t


@njit(inline="always", cache=True)
def dual_step(code, a, z, y, q, s):
    """Exact dual coordinate step of theory.md §3.

    Maximises −φ*(−(a+Δ)) − Δz − (q/2)Δ² over Δ with z = x_i·w and
    q = ‖x_i‖²/(λn); returns the new α_i = a + Δ. A zero row (q = 0) gets the
    maximiser of −φ*(−α) − αz, i.e. α = −φ'(z) (any subgradient for
    non-smooth losses).
    """
    if q <= 0.0:
        return -loss_deriv(code, z, y, s)
    if code == SQUARED:
        return a + (y - z - a) / (1.0 + q)
    if code == ABSOLUTE:
        return min(1.0, max(-1.0, a + (y - z) / q))
    b = a * y
    yz = y * z
    if code == HINGE:
        bn = min(1.0, max(0.0, b + (1.0 - yz) / q))
    elif code == SMOOTHED_HINGE:
        bn = min(1.0, max(0.0, b + (1.0 - yz - s * b) / (s + q)))
    else:  # LOGISTIC
        bn, _ = _logistic_step(b, yz, q)
    return y * bn


@njit(inline="always", cache=True)
def _gain_from(base, code, a, delta, z, y, q, s):
    """``dual_gain`` with base = −φ*(−a) given."""
    return neg_conj(code, a + delta, y, s) - base - delta * z - 0.5 * q * delta * delta


@njit(inline="always", cache=True)
def dual_gain(code, a, delta, z, y, q, s):
    """n × the dual gain's lower bound of the step α_i: a → a + Δ, the function ``dual_step`` maximises:
    −φ*(−(a+Δ)) + φ*(−a) − Δz − (q/2)Δ² (exact when μ = 0; Prox-SDCA's bound from g*'s 1-smoothness
    otherwise). −inf outside the loss's dual domain."""
    return _gain_from(neg_conj(code, a, y, s), code, a, delta, z, y, q, s)


@njit(inline="always", cache=True)
def dual_linesearch_step(code, a, z, y, q, s, floor):
    """New α_i of a line search along the gradient step's direction d = −φ'(z) − a (face-off
    Algorithm 2), theory.md §4, for a smooth loss; ``floor`` ≤ 1 is the fixed step whose gain the
    face-off bound counts. The exact step (``dual_step``) lies on the segment a + t·d, t ∈ [0, 1]: the
    maximiser of a concave function plus −(q/2)(α − a)² lies between a and that function's own maximiser
    −φ'(z) (q = 0 puts it at t = 1). So it gains at least what t = floor gains, and where the gain along d
    is a quadratic (squared loss, smoothed hinge: −φ*(−α) is quadratic on the domain) the search is that
    step, in closed form. For the logistic loss t = 1, 1/2, 1/4, … is tried while the gain grows and
    t > floor, and the best of those and t = floor is taken: at least the floor's gain, and, once the
    exact t* > floor, at least half the exact step's gain (a grid point lies in (t*/2, t*]; concavity),
    with at most log₂(1/floor) + 2 gains evaluated. Every t ∈ [0, 1] stays in the dual domain: a + d =
    −φ'(z) is in it and the domain is convex."""
    d = -loss_deriv(code, z, y, s) - a
    if d == 0.0:
        return a
    if code != LOGISTIC:
        return dual_step(code, a, z, y, q, s)
    base = neg_conj(code, a, y, s)
    best_t = floor
    best = _gain_from(base, code, a, floor * d, z, y, q, s)
    t, last = 1.0, -np.inf
    while t > floor:
        g = _gain_from(base, code, a, t * d, z, y, q, s)
        if g <= last:  # past the maximiser along d: the gains only fall from here (concave in t)
            break
        if g > best:
            best, best_t = g, t
        last = g
        t *= 0.5
    return a + best_t * d


@njit(inline="always", cache=True)
def box_gradient(code, a, z, y, s):
    """(G, side) for a loss of BOX_LOSSES at α_i = a and z = x_i·w: its box coordinate is t = αy ∈ [0, 1]
    (hinge, smoothed hinge) or t = α ∈ [−1, 1] (absolute), G the derivative along t of the
    minimised dual −n·D, i.e. of −(−φ*(−α)) + αz: G = yz − 1 + s·t (the hinge with s = 0) or z − y; side
    is −1 at the lower end, +1 at the upper end, 0 inside. The exact step (``dual_step``) is
    t⁺ = clip(t − G/(‖x_i‖²/(λn) (+ s)))."""
    if code == ABSOLUTE:
        t, g, low = a, z - y, -1.0
    else:
        t = a * y
        g = y * z - 1.0 + (s * t if code == SMOOTHED_HINGE else 0.0)
        low = 0.0
    side = -1 if t <= low else (1 if t >= 1.0 else 0)
    return g, side


# --------------------------------------------------------------------------
# vector forms used by Problem and at checkpoints
# --------------------------------------------------------------------------

def sum_loss(code, z, y, s):
    """Σ_i φ(z_i; y_i); the logistic terms from ``logistic_tails``."""
    if code != LOGISTIC:
        return _sum_loss(code, z, y, s)
    t = -y * z
    return _logistic_sums(t, logistic_tails(t)[1], None, y)[0]


@njit(cache=True)
def _sum_loss(code, z, y, s):
    acc = 0.0
    for i in range(z.shape[0]):
        acc += loss_value(code, z[i], y[i], s)
    return acc


@njit(cache=True)
def sum_neg_conj(code, alpha, y, s):
    acc = 0.0
    for i in range(alpha.shape[0]):
        acc += neg_conj(code, alpha[i], y[i], s)
    return acc


def sum_fenchel_young(code, z, alpha, y, s):
    """Σ_i ``fenchel_young``; the logistic terms' log(1 + e^{±t}) from ``logistic_tails``."""
    if code != LOGISTIC:
        return _sum_fenchel_young(code, z, alpha, y, s)
    t = -y * z
    return _logistic_sums(t, logistic_tails(t)[1], alpha, y)[2]


@njit(cache=True)
def _sum_fenchel_young(code, z, alpha, y, s):
    acc = 0.0
    for i in range(z.shape[0]):
        acc += fenchel_young(code, z[i], alpha[i], y[i], s)
    return acc


def certificate_sums(code, z, alpha, y, s):
    """(``sum_loss``, ``sum_neg_conj``, ``sum_fenchel_young``) in one loop, bit for bit the three: a
    checkpoint's per-example work. The logistic terms share their transcendentals: with t = −yz and
    b = αy, log(1 + e^{±t}) = max(±t, 0) + log1p(e^{−|t|}) (one exp and one log1p for both signs, from
    ``logistic_tails``) and b log b, (1 − b) log(1 − b) are shared by −φ* and the Fenchel–Young term: 4
    transcendental functions an example instead of 10."""
    if code != LOGISTIC:
        return _certificate_sums(code, z, alpha, y, s)
    t = -y * z
    return _logistic_sums(t, logistic_tails(t)[1], alpha, y)


@njit(cache=True)
def _certificate_sums(code, z, alpha, y, s):
    loss_acc, conj_acc, fy_acc = 0.0, 0.0, 0.0
    for i in range(z.shape[0]):
        loss_acc += loss_value(code, z[i], y[i], s)
        conj_acc += neg_conj(code, alpha[i], y[i], s)
        fy_acc += fenchel_young(code, z[i], alpha[i], y[i], s)
    return loss_acc, conj_acc, fy_acc


@njit(cache=True)
def _logistic_sums(t, tail, alpha, y):
    """The logistic loss's (Σ φ, Σ −φ*, Σ Fenchel–Young) at t = −yz, from ``logistic_tails``' tail = log1p(e^{−|t|})
    (``fenchel_young``'s formula with log(1 + e^{±t}) = max(±t, 0) + tail, ``neg_conj``'s); the loss sum alone
    where α is None."""
    loss_acc, conj_acc, fy_acc = 0.0, 0.0, 0.0
    for i in range(t.shape[0]):
        up = log1pexp_from_tail(t[i], tail[i])  # φ(z)
        loss_acc += up
        if alpha is None:
            continue
        down = log1pexp_from_tail(-t[i], tail[i])
        b = alpha[i] * y[i]
        if b < 0.0 or b > 1.0:
            conj_acc += -np.inf
            fy_acc += np.inf
            continue
        xb, x1b = _xlogx(b), _xlogx(1.0 - b)
        conj_acc += -(xb + x1b)
        fy_acc += max(xb + b * down + x1b + (1.0 - b) * up, 0.0)
    return loss_acc, conj_acc, fy_acc


def certificate_sums_from_w(code, z, alpha, y, s):
    """``certificate_sums`` at α = −φ'(z) (a primal method's dual point, ``neg_deriv``). The logistic loss's
    terms from one exp and one log1p an example (``logistic_tails``) instead of four functions: with t = −yz and
    b = αy = σ(t), log b = −log(1 + e^{−t}) = t − φ(z) and log(1 − b) = −φ(z), so −φ*(−α) = −(b log b + (1 − b)
    log(1 − b)) = φ(z) − b·t, and the Fenchel–Young term φ(z) + φ*(−α) + αz = b·t + αz is 0 (its equality case
    at α = −φ'(z)). Equal to ``certificate_sums`` up to rounding: both are first-order exact in α's rounding
    (∂/∂b of either conjugate form is −t at b = σ(t)). The other losses: ``certificate_sums``."""
    if code != LOGISTIC:
        return certificate_sums(code, z, alpha, y, s)
    t = -y * z
    return _logistic_sums_from_w(t, logistic_tails(t)[1], alpha, y)


@njit(cache=True)
def _logistic_sums_from_w(t, tail, alpha, y):
    """``certificate_sums_from_w``'s logistic sums from ``logistic_tails``' tail at t = −yz."""
    loss_acc, conj_acc = 0.0, 0.0
    for i in range(t.shape[0]):
        up = log1pexp_from_tail(t[i], tail[i])
        loss_acc += up
        conj_acc += up - alpha[i] * y[i] * t[i]
    return loss_acc, conj_acc, 0.0


@njit(cache=True)
def neg_deriv(code, z, y, s):
    """α(w) = −φ'(z) elementwise (lies in the conjugate's domain)."""
    out = np.empty_like(z)
    for i in range(z.shape[0]):
        out[i] = -loss_deriv(code, z[i], y[i], s)
    return out
