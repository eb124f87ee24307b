"""Losses: derivatives by finite differences, conjugates by a numeric inf,
exact dual steps by numeric maximisation, the logistic step at 50 digits."""
import math
import types

import mpmath
import numpy as np
import pytest
import scipy.optimize as so

from cdlab import losses as L

LOSSES = ["squared", "logistic", "hinge", "smoothed_hinge", "absolute"]
S = 0.7  # a smoothed-hinge parameter other than 1, so s-dependence is exercised


def codes():
    return [(name, L.get_loss(name).code) for name in LOSSES]


@pytest.mark.parametrize("name,code", codes())
def test_derivative_matches_finite_differences(name, code):
    rng = np.random.default_rng(0)
    for _ in range(200):
        z, y = rng.normal(0, 2), rng.choice([-1.0, 1.0])
        if code in (L.HINGE, L.ABSOLUTE, L.SMOOTHED_HINGE) and min(abs(1 - y * z), abs(1 - y * z - S), abs(z - y)) < 1e-3:
            continue  # at a kink the derivative is a subgradient only
        h = 1e-6
        fd = (L.loss_value(code, z + h, y, S) - L.loss_value(code, z - h, y, S)) / (2 * h)
        assert L.loss_deriv(code, z, y, S) == pytest.approx(fd, abs=1e-6)


@pytest.mark.parametrize("name,code", codes())
def test_neg_conjugate_is_inf_of_loss_plus_linear(name, code):
    """−φ*(−a) = inf_z φ(z) + a z, checked numerically inside the domain."""
    rng = np.random.default_rng(1)
    for _ in range(40):
        y = rng.choice([-1.0, 1.0])
        a = y * rng.uniform(0.02, 0.98) if code != L.SQUARED else rng.normal()
        if code == L.ABSOLUTE:
            a = rng.uniform(-0.98, 0.98)
        res = so.minimize_scalar(lambda z: L.loss_value(code, z, y, S) + a * z, bounds=(-60, 60),
                                 method="bounded", options=dict(xatol=1e-12))
        # Brent is slow to pin a V-shaped minimum: also try the losses' kinks
        kinks = [y, 1.0 / y, (1.0 - S) / y]
        best = min([res.fun] + [L.loss_value(code, k, y, S) + a * k for k in kinks])
        assert L.neg_conj(code, a, y, S) == pytest.approx(best, abs=1e-9)
    if code != L.SQUARED:
        assert L.neg_conj(code, 1.5 * y if code != L.ABSOLUTE else 1.5, y, S) == -np.inf


def _dual_feasible(code, a, y):
    """a moved into the domain of −φ*(−·) (the table in cdlab/losses.py): R, [−1, 1], or αy ∈ [0, 1]."""
    if code == L.SQUARED:
        return a
    if code == L.ABSOLUTE:
        return min(1.0, max(-1.0, a))
    return min(1.0, max(0.0, a * y)) * y


@pytest.mark.parametrize("name,code", codes())
def test_dual_step_maximises_the_one_dimensional_objective(name, code):
    """Δ maximises −φ*(−(a+Δ)) − Δz − (q/2)Δ² (theory.md §3)."""
    rng = np.random.default_rng(2)
    for _ in range(60):
        y = rng.choice([-1.0, 1.0])
        a = _dual_feasible(code, rng.normal(0, 0.6), y)
        z, q = rng.normal(0, 2), 10 ** rng.uniform(-3, 2)

        def obj(anew):
            return L.neg_conj(code, anew, y, S) - (anew - a) * z - 0.5 * q * (anew - a) ** 2

        a_new = L.dual_step(code, a, z, y, q, S)
        assert np.isfinite(obj(a_new))
        lo, hi = (-1.0, 1.0) if code == L.ABSOLUTE else ((min(0, y), max(0, y)) if code != L.SQUARED else (-50, 50))
        res = so.minimize_scalar(lambda t: -obj(t), bounds=(lo, hi), method="bounded", options=dict(xatol=1e-13))
        assert obj(a_new) >= -res.fun - 1e-10


@pytest.mark.parametrize("name,code", [(n, c) for n, c in codes() if n in L.SMOOTH_LOSSES])
def test_linesearch_step_gains_the_floor_steps_gain_and_half_the_exact_steps(name, code):
    """dual_linesearch_step's α stays in the domain, gains at least what the fixed step t = floor along
    d = −φ'(z) − a gains (the face-off bound's step), and, when the best t along d (a bounded 1-D
    maximisation by scipy) is above floor, at least half the exact step's gain. The floor is at most
    s̄_i = γ/(q + γ) (= λγn/(‖x_i‖² + λγn)), the largest step whose gain the bound counts."""
    rng = np.random.default_rng(5)
    gamma = L.LOSSES[name].gamma(S)
    for _ in range(300):
        y = rng.choice([-1.0, 1.0])
        a = _dual_feasible(code, rng.normal(0, 0.6), y)
        z, q = rng.normal(0, 3), 10 ** rng.uniform(-3, 4)
        floor = gamma / (q + gamma) * 10 ** rng.uniform(-3, 0)

        def gain(anew):
            return L.neg_conj(code, anew, y, S) - L.neg_conj(code, a, y, S) - (anew - a) * z - 0.5 * q * (anew - a) ** 2

        d = -L.loss_deriv(code, z, y, S) - a
        a_new = L.dual_linesearch_step(code, a, z, y, q, S, floor)
        if code != L.LOGISTIC:  # a quadratic gain along d: the exact step, which lies on the segment
            assert a_new == L.dual_step(code, a, z, y, q, S)
        assert np.isfinite(gain(a_new)) and gain(a_new) >= 0.0
        assert L.dual_gain(code, a, a_new - a, z, y, q, S) == pytest.approx(gain(a_new), rel=1e-12, abs=1e-14)
        assert gain(a_new) >= gain(a + floor * d) - 1e-12 * (1 + abs(gain(a + floor * d)))
        best = so.minimize_scalar(lambda t: -gain(a + t * d), bounds=(0.0, 1.0), method="bounded",
                                  options=dict(xatol=1e-12))
        if best.x > floor:
            assert gain(a_new) >= 0.5 * -best.fun - 1e-12, (a, z, y, q, floor)


def _logistic_root_mp(b, yz, q):
    mpmath.mp.dps = 60
    b, yz, q = mpmath.mpf(b), mpmath.mpf(yz), mpmath.mpf(q)
    f = lambda t: t + yz + q * (1 / (1 + mpmath.e ** (-t)) - b)  # in t = logit(b⁺), increasing
    lo, hi = -yz - q * (1 - b), -yz + q * b
    for _ in range(400):  # plain bisection at 60 digits: slow but beyond doubt
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    t = (lo + hi) / 2
    return 1 / (1 + mpmath.e ** (-t)), 1 / (1 + mpmath.e ** t)


@pytest.mark.parametrize("b,yz,q", [
    (0.0, 0.3, 1.0), (1.0, -0.3, 1.0), (0.5, 0.0, 1e-8), (0.2, 40.0, 1e-3), (0.9, -40.0, 1e-3),
    (1e-12, 30.0, 1e-6), (1 - 1e-12, -30.0, 1e-6), (1e-13, 27.6, 0.0), (0.3, 5.0, 1e4), (0.7, -3.0, 1e6),
    # b⁺ near 1 with a large q (small λn): σ(t) − b cancelled there, costing up to 1e-8 in 1 − b⁺
    (1.0, 0.2988, 3.6e9), (1 - 1e-12, 0.0, 1e6), (1 - 2 ** -53, 0.03707, 1.69e9), (0.999999, -317.5, 2.94e8),
    (1e-12, -0.1, 5e9), (0.0, 300.0, 1e8),
    # either side of the q beyond which the iteration starts from c − W(q e^c) (W_START_Q, W_START_Q_INSIDE)
    (0.0, -5.0, 999.0), (0.0, 5.0, 1001.0), (0.0, -30.0, 1001.0), (1e-12, -30.0, 9.9e8), (1e-12, -30.0, 1.01e9),
    (1 - 1e-12, 30.0, 9.9e8), (1 - 1e-12, 30.0, 1.01e9), (0.3, 20.0, 9.9e8),
])
def test_logistic_step_accurate_near_the_boundary(b, yz, q):
    """The safeguarded Newton step is accurate to 1e-12 in b⁺ and in 1 − b⁺,
    relatively, even when b⁺ is within 1e-12 of 0 or 1."""
    q = max(q, 1e-300)
    bp, one_minus = L._logistic_step(b, yz, q)
    ref_b, ref_1mb = _logistic_root_mp(b, yz, q)
    assert abs(bp - float(ref_b)) <= 1e-12 * max(float(ref_b), 1e-300) + 1e-300
    assert abs(one_minus - float(ref_1mb)) <= 1e-12 * max(float(ref_1mb), 1e-300) + 1e-300
    assert 0.0 < bp < 1.0 or (bp == 1.0 and one_minus > 0)


def test_logistic_step_accurate_over_a_random_sweep():
    """300 random (b, yz, q), b often within 1e-12 of 0 or 1 and q up to 1e10, against a
    50-digit root (Newton in mpmath from the double result, then checked to bracket)."""
    mpmath.mp.dps = 50
    rng = np.random.default_rng(7)
    edges = [0.0, 1e-300, 1e-16, 1e-12, 1 - 1e-12, 1 - 2 ** -53, 1.0]
    for _ in range(300):
        b = edges[rng.integers(len(edges))] if rng.random() < 0.7 else rng.random()
        yz = rng.choice([-1.0, 1.0]) * 10 ** rng.uniform(-6, 2.7)
        q = 10 ** rng.uniform(-12, 10)
        bp, one_minus = L._logistic_step(b, yz, q)
        B, YZ, Q = mpmath.mpf(b), mpmath.mpf(yz), mpmath.mpf(q)
        f = lambda t: t + YZ + Q * (1 / (1 + mpmath.exp(-t)) - B)
        t = mpmath.findroot(f, mpmath.log(bp) - mpmath.log(one_minus), tol=mpmath.mpf(10) ** -40)
        assert f(t - mpmath.mpf(10) ** -30) < 0 < f(t + mpmath.mpf(10) ** -30)  # a genuine root
        ref_b, ref_1mb = 1 / (1 + mpmath.exp(-t)), 1 / (1 + mpmath.exp(t))
        assert abs(bp - ref_b) <= 1e-12 * ref_b, (b, yz, q)
        assert abs(one_minus - ref_1mb) <= 1e-12 * ref_1mb, (b, yz, q)


def test_logistic_steps_from_the_cached_logit_are_the_steps_from_the_log():
    """SDCA's kernel feeds each step the root t = logit b⁺ its last step returned (``cached_logit``: t where b ≤ ½)
    in place of log(b/(1 − b)): along chains of 60 steps on one coordinate, q up to 1e10 (the W start beyond 1e9),
    chains that stay within 1e-12 of 1 by small moves of yz included, each step agrees with ``_logistic_step``
    from the same b to 1e-12 relatively in b⁺ and in 1 − b⁺, and the root it returns is logit b⁺ to 1e-12."""
    mpmath.mp.dps = 50
    rng = np.random.default_rng(11)
    for chain in range(60):
        b, t = 0.0, 0.0
        near_one = chain % 3 == 0
        for _ in range(60):
            if near_one:  # b⁺ ≈ 1 − 1e-12: yz ≈ −27.6 − q·(1 − b), moved by 1e-6 … 1e-3
                q = 10 ** rng.uniform(-3, 2)
                yz = -27.6 + rng.choice([-1.0, 1.0]) * 10 ** rng.uniform(-6, -3)
            else:
                yz = rng.choice([-1.0, 1.0]) * 10 ** rng.uniform(-3, 1.5)
                q = 10 ** rng.uniform(-6, 10)
            bp, one_minus, t = L.logistic_step_at(b, L.cached_logit(b, t), yz, q)
            ref_b, ref_1mb = L._logistic_step(b, yz, q)
            assert abs(bp - ref_b) <= 1e-12 * ref_b and abs(one_minus - ref_1mb) <= 1e-12 * ref_1mb, (b, yz, q)
            if 0.0 < bp < 1.0:
                exact = mpmath.log(mpmath.mpf(bp)) - mpmath.log(mpmath.mpf(one_minus))
                assert abs(t - exact) <= 1e-12 * (1 + abs(exact)), (b, yz, q, t)
            b = bp
        assert not near_one or 0.0 < 1.0 - b < 1e-9  # the chain did stay near 1


def test_fenchel_young_vanishes_exactly_at_the_dual_point():
    rng = np.random.default_rng(3)
    for name, code in codes():
        for _ in range(20):
            z, y = rng.normal(0, 3), rng.choice([-1.0, 1.0])
            a = -L.loss_deriv(code, z, y, S)
            assert L.fenchel_young(code, z, a, y, S) <= 1e-14
            a2 = _dual_feasible(code, a + 0.1 * rng.normal(), y)
            assert L.fenchel_young(code, z, a2, y, S) >= 0.0


def test_gamma_and_unknown_loss():
    assert L.get_loss("squared").gamma() == 1.0
    assert L.get_loss("logistic").gamma() == 4.0
    assert L.get_loss("smoothed_hinge").gamma(0.3) == 0.3
    assert L.get_loss("hinge").gamma() is None
    with pytest.raises(ValueError, match="unknown loss 'huber'"):
        L.get_loss("huber")


def test_logistic_value_does_not_overflow():
    assert L.loss_value(L.LOGISTIC, 1000.0, -1.0, 1.0) == pytest.approx(1000.0)
    assert L.loss_value(L.LOGISTIC, 1000.0, 1.0, 1.0) == pytest.approx(math.exp(-1000.0), abs=1e-300)


def _logistic_root_near(guess, b, yz, q):
    """The root in t = logit(b⁺) at log10(q) + 60 digits (enough to resolve σ(t) − b ~ 1/q),
    by Newton from ``guess`` or, failing that, the bracket's midpoint; checked to change
    sign across it, so it is the unique root of the increasing f."""
    mpmath.mp.dps = 60 + int(max(0.0, math.log10(q)))
    B, YZ, Q = mpmath.mpf(b), mpmath.mpf(yz), mpmath.mpf(q)
    f = lambda t: t + YZ + Q * (1 / (1 + mpmath.exp(-t)) - B)
    for start in (mpmath.mpf(guess), -YZ):
        try:
            t = mpmath.findroot(f, start, verify=False)  # the sign change below is the check
        except (ValueError, ZeroDivisionError):
            continue
        d = mpmath.mpf(10) ** -30 * (1 + abs(t))
        if f(t - d) < 0 < f(t + d):
            return 1 / (1 + mpmath.exp(-t)), 1 / (1 + mpmath.exp(t))
    raise AssertionError(f"no reference root found for b={b}, yz={yz}, q={q}")


@pytest.mark.parametrize("q", [1e28, 1e30, 1e34, 1e60, 1e150, 1e300, 1.7e308])
@pytest.mark.parametrize("b", [0.0, 1e-300, 1e-40, 0.3, 1 - 1e-12, 1.0])
@pytest.mark.parametrize("yz", [-300.0, -5.0, 0.0, 5.0, 300.0])
def test_logistic_step_exact_at_any_curvature(q, b, yz):
    """q = ‖x‖²/(λn) beyond 1e28 (rows scaled by 1e16): Newton started at logit b
    overshot and crept back on the exponential and ran out of iterations, returning
    e.g. 2.7e-27 for b⁺ ≈ 6.5e-29 at q = 1e30; every root is now exact to 1e-12."""
    bp, one_minus = L._logistic_step(b, yz, q)
    guess = math.log(bp) - math.log(one_minus) if bp > 0 and one_minus > 0 else -yz
    ref_b, ref_1mb = _logistic_root_near(guess, b, yz, q)
    assert abs(bp - ref_b) <= 1e-12 * ref_b + 1e-300, (bp, float(ref_b))
    assert abs(one_minus - ref_1mb) <= 1e-12 * ref_1mb + 1e-300, (one_minus, float(ref_1mb))


def test_lambert_w_of_exp_solves_w_plus_log_w():
    for ell in [-800.0, -50.0, -1.0, 0.0, 0.5, 1.0, 2.0, 30.0, 700.0, 1e5]:
        w = L._lambert_w_exp(ell)
        if ell < -700:
            assert w == math.exp(ell)
            continue
        assert abs(w + math.log(w) - ell) <= 1e-13 * max(1.0, abs(ell))


def test_loss_sets_are_read_from_the_loss_table():
    """Adding a loss touches LOSSES only: every set other modules use is derived from it."""
    from cdlab import estimators
    from cdlab.solvers import base
    from cdlab.theory import derivations
    from cdlab.ui import advice

    assert L.ALL_LOSSES == set(L.LOSSES) == set(derivations.LOSS_NAMES) == set(advice.LOSS_NAMES)
    assert L.SMOOTH_LOSSES == {name for name, info in L.LOSSES.items() if info.gamma() is not None}
    assert set(L.CLASSIFICATION_LOSSES) == {name for name, info in L.LOSSES.items() if info.classification}
    assert set(L.CLASSIFICATION_LOSSES) | set(L.REGRESSION_LOSSES) == L.ALL_LOSSES
    assert estimators.CDClassifier._losses == L.CLASSIFICATION_LOSSES == derivations.CLASSIFICATION
    assert estimators.CDRegressor._losses == L.REGRESSION_LOSSES
    assert base.ALL_LOSSES is L.ALL_LOSSES and base.SMOOTH_LOSSES is L.SMOOTH_LOSSES
    for loss, smooth in L.NEAREST_SMOOTH.items():  # a suggestion keeps the labels and gains γ
        assert not L.LOSSES[loss].smooth and L.LOSSES[smooth].smooth
        assert L.LOSSES[loss].classification == L.LOSSES[smooth].classification
    assert set(L.NEAREST_SMOOTH) == L.ALL_LOSSES - L.SMOOTH_LOSSES


def _certificate_inputs(name, seed, n=5000):
    """(code, rng, y, z) for the certificate-sum tests: labels of the loss's kind, z from 0 to ±800 across
    eleven decades (exp(−|t|) under- and overflowing at the ends)."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], n) if name != "squared" else rng.standard_normal(n)
    z = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 2.9, n)
    z[:6] = [0.0, -0.0, 800.0, -800.0, 1e-300, -40.0]
    return L.LOSSES[name].code, rng, y, z


@pytest.mark.parametrize("name", LOSSES)
def test_certificate_sums_are_bit_for_bit_the_three_sums(name):
    """``certificate_sums`` (a checkpoint's one loop, the logistic terms sharing their exp and logs) equals
    ``sum_loss``, ``sum_neg_conj`` and ``sum_fenchel_young`` exactly: z from 0 to ±800 (exp(−|t|) under- and
    overflowing elsewhere), αy at and beyond its domain's ends, and each sum's infinity where α leaves it."""
    code, rng, y, z = _certificate_inputs(name, seed=11)
    n = z.shape[0]
    b = rng.uniform(0.0, 1.0, n)
    b[6:12] = [0.0, 1.0, 1e-300, 1 - 2 ** -53, 0.5, 1e-17]
    alpha = b * y
    got = L.certificate_sums(code, z, alpha, y, S)
    assert got == (L.sum_loss(code, z, y, S), L.sum_neg_conj(code, alpha, y, S),
                   L.sum_fenchel_young(code, z, alpha, y, S))
    assert np.all(np.isfinite(got))
    alpha[20] = 1.5 * y[20] if name != "squared" else alpha[20]  # outside the dual domain (none for squared)
    got = L.certificate_sums(code, z, alpha, y, S)
    assert got == (L.sum_loss(code, z, y, S), L.sum_neg_conj(code, alpha, y, S),
                   L.sum_fenchel_young(code, z, alpha, y, S))


@pytest.mark.parametrize("name", LOSSES)
def test_certificate_sums_at_the_primal_dual_point_equal_the_three_sums(name):
    """``certificate_sums_from_w`` (α = −φ'(z), a primal method's checkpoint): the loss sum bit for bit
    ``sum_loss``, the conjugate's within rounding of ``sum_neg_conj`` (relative 1e-13 of the loss sum, which
    bounds its terms' size), the Fenchel–Young sum 0 where ``sum_fenchel_young`` leaves only rounding; z from 0
    to ±800, where α = −φ'(z) reaches its domain's ends; the other losses exactly ``certificate_sums``."""
    code, _, y, z = _certificate_inputs(name, seed=12)
    alpha = L.neg_deriv(code, z, y, S)
    got = L.certificate_sums_from_w(code, z, alpha, y, S)
    want = L.certificate_sums(code, z, alpha, y, S)
    if name != "logistic":
        assert got == want
        return
    loss, conj, fenchel_young = got
    assert loss == L.sum_loss(code, z, y, S) and fenchel_young == 0.0
    assert abs(conj - L.sum_neg_conj(code, alpha, y, S)) <= 1e-13 * loss
    assert 0.0 <= want[2] <= 1e-13 * loss  # what the general formula leaves: rounding


def test_logistic_terms_are_bit_for_bit_the_separate_functions():
    """``logistic_terms`` (Newton's one exp an example) is ``_log1pexp`` and ``_sigmoid_pair`` exactly."""
    rng = np.random.default_rng(12)
    ts = np.concatenate([[0.0, -0.0, 1e-300, -1e-300, 36.7, -36.7, 745.0, -745.0, 800.0, -800.0],
                         rng.standard_normal(2000) * 10.0 ** rng.uniform(-8, 2.9, 2000)])
    for t in ts:
        assert L.logistic_terms(t) == (L._log1pexp(t), *L._sigmoid_pair(t)), t


def _exp_cases():
    rng = np.random.default_rng(13)
    return np.concatenate([[0.0, -0.0, 5e-324, 1e-300, 0.5 * math.log(2.0), -0.5 * math.log(2.0), 1.0, 36.7, 707.9,
                            -708.0, 708.0, 708.4, 744.4, -745.1, 745.2, 800.0, np.inf, -np.inf, np.nan],
                           rng.standard_normal(3000) * 10.0 ** rng.uniform(-8, 2.9, 3000)])


def test_exp_neg_abs_is_within_one_ulp_of_the_exact_exponential():
    """``exp_neg_abs`` (the vectorised e^{−|t|} of ``logistic_tails``) against 40-digit values: within one ulp of
    each (at random |t| and at |t| a hair off (k + ½)·ln 2, where |r| is largest), subnormal results
    (708 < |t| < 745) within one unit of the smallest subnormal, e^{−|t|} = 0 where it underflows, 0 at ±inf, NaN
    at NaN; -0.0 and 0.0 give 1 exactly."""
    mpmath.mp.dps = 40
    ts = np.concatenate([_exp_cases(), (np.arange(1, 1000) + 0.5) * math.log(2.0) * (1.0 + 1e-15)])
    out = np.empty_like(ts)
    L.exp_neg_abs(ts, out, np.empty(ts.shape[0], dtype=np.int64))
    for t, got in zip(ts, out):
        if math.isnan(t):
            assert math.isnan(got)
            continue
        exact = float(mpmath.exp(-abs(mpmath.mpf(t)))) if math.isfinite(t) else 0.0
        if exact >= 2.2250738585072014e-308:
            assert abs(got - exact) <= np.spacing(exact), t
        else:
            assert abs(got - exact) <= 5e-324, t
    assert out[0] == 1.0 and out[1] == 1.0


def test_log1p_unit_is_within_one_ulp_of_the_exact_logarithm():
    """``log1p_unit`` (the vectorised log(1 + e) of ``logistic_tails``) against 40-digit values over its range
    [0, 1]: within one ulp of each (uniform x, x = e^{−|t|} down to subnormals, and x a hair either side of √2 − 1,
    where the reduction switches k); 0 at 0 and at x below 2^-53 exactly x; outside (0, 1] and at NaN libm's log1p
    bit for bit (−0.0 kept)."""
    mpmath.mp.dps = 40
    rng = np.random.default_rng(17)
    edge = math.sqrt(2.0) - 1.0
    xs = np.concatenate([[0.0, 5e-324, 1e-300, 2.0 ** -53, 2.0 ** -52, 0.5, 1.0], rng.uniform(0.0, 1.0, 2000),
                         np.exp(-rng.uniform(0.0, 745.0, 2000)), edge + np.arange(-300, 300) * 2.0 ** -53])
    out = np.empty_like(xs)
    L.log1p_unit(xs, out)
    for x, got in zip(xs, out):
        exact = float(mpmath.log1p(mpmath.mpf(x)))
        assert abs(got - exact) <= (np.spacing(exact) if exact else 0.0), x
    assert out[0] == 0.0 and out[1] == 5e-324 and out[2] == 1e-300
    outside = np.array([-0.0, -1.0, -0.5, -1e-300, 1.0 + 2.0 ** -52, 3.0, 1e308, np.inf, np.nan])
    got = np.empty_like(outside)
    L.log1p_unit(outside, got)
    libm = [-math.inf if x == -1.0 else math.log1p(x) for x in outside]  # Python raises where libm gives −inf
    np.testing.assert_array_equal(got, libm)
    assert math.copysign(1.0, got[0]) == -1.0


@pytest.mark.parametrize("simd_log1p", [False, True])
@pytest.mark.parametrize("simd_exp", [False, True])
def test_logistic_tails_agree_whichever_ufuncs_they_take(monkeypatch, simd_exp, simd_log1p):
    """``logistic_tails`` under either NUMPY_SIMD_EXP and NUMPY_SIMD_LOG1P (numpy's ufunc, or for a 1-d t the loops
    of ``exp_neg_abs`` and ``log1p_unit``) gives e within 2 ulps of libm's e^{−|t|} (``math.exp``) and tail numpy's
    log1p of its e (within 2 ulps from ``log1p_unit``: each within one of the exact value), on a 1-d array and on a
    2-d one (numpy's ufuncs either way); the loops run exactly where the flags and a 1-d t ask for them."""
    monkeypatch.setattr(L, "NUMPY_SIMD_EXP", simd_exp)
    monkeypatch.setattr(L, "NUMPY_SIMD_LOG1P", simd_log1p)
    calls = []
    for name in ("exp_neg_abs", "log1p_unit"):
        kernel = getattr(L, name)
        monkeypatch.setattr(L, name, lambda *args, kernel=kernel, name=name: (calls.append(name), kernel(*args))[1])
    ts = _exp_cases()
    ts = ts[~np.isnan(ts)]
    for shaped in (ts, ts[:3000].reshape(60, 50)):
        calls.clear()
        e, tail = L.logistic_tails(shaped)
        loops = shaped.ndim == 1
        assert calls == [name for name, simd in (("exp_neg_abs", simd_exp), ("log1p_unit", simd_log1p))
                         if loops and not simd]
        exact = np.vectorize(lambda t: math.exp(-abs(t)))(shaped)
        assert np.all(np.abs(e - exact) <= 2 * np.spacing(exact))
        if loops and not simd_log1p:
            assert np.all(np.abs(tail - np.log1p(e)) <= 2 * np.spacing(np.log1p(e)))
        else:
            np.testing.assert_array_equal(tail, np.log1p(e))
        assert tail.shape == shaped.shape
        assert L.logistic_tails(shaped, with_log=False)[1] is None


def test_numpy_simd_reads_numpys_dispatch(monkeypatch):
    """NUMPY_SIMD_EXP and NUMPY_SIMD_LOG1P are true only where numpy's float64 ufunc runs on an AVX-512 target, and
    false where numpy cannot say (no ``np.lib.introspect``) and on Windows (whose MSVC-built numpy has neither SIMD
    form on any target)."""
    def info(ufunc, target):
        return lambda *args: {ufunc: {"dd": {"current": target}}}
    for ufunc in ("exp", "log1p"):
        monkeypatch.setattr(np.lib, "introspect", types.SimpleNamespace(opt_func_info=info(ufunc, "X86_V4")),
                            raising=False)
        monkeypatch.setattr(L.sys, "platform", "win32")
        assert L.numpy_simd(ufunc) is False
        monkeypatch.setattr(L.sys, "platform", "linux")
        for target, want in (("X86_V4", True), ("AVX512F", True), ("AVX512_SKX", True), ("X86_V3", False),
                             ("baseline(X86_V2)", False)):
            monkeypatch.setattr(np.lib, "introspect", types.SimpleNamespace(opt_func_info=info(ufunc, target)),
                                raising=False)
            assert L.numpy_simd(ufunc) is want
        monkeypatch.setattr(np.lib, "introspect", types.SimpleNamespace(), raising=False)
        assert L.numpy_simd(ufunc) is False


def test_sigmoid_pair_moved_keeps_full_relative_precision():
    """The exp-free update of (σ(t), σ(−t)) by a move δ, |δ| ≤ POLY_MOVE (the logistic step's usual second
    iteration), against 50-digit values, at t where either member is tiny: both within 4e-15 relatively."""
    mpmath.mp.dps = 50
    worst = 0.0
    for t in (-700.0, -30.0, -3.0, -1e-3, 0.0, 2e-7, 0.7, 25.0, 650.0):
        sg, sm = L._sigmoid_pair(t)
        for delta in (-L.POLY_MOVE, -3.3e-3, -1e-9, 0.0, 1e-12, 7e-4, L.POLY_MOVE):
            new_sg, new_sm = L._sigmoid_pair_moved(sg, sm, delta)
            # the reference moves the double pair itself: the update's own error, not the start's
            T = mpmath.log(mpmath.mpf(sg)) - mpmath.log(mpmath.mpf(sm)) + mpmath.mpf(delta)
            ref_sg, ref_sm = 1 / (1 + mpmath.exp(-T)), 1 / (1 + mpmath.exp(T))
            worst = max(worst, float(abs(new_sg - ref_sg) / ref_sg), float(abs(new_sm - ref_sm) / ref_sm))
    assert worst <= 4e-15, worst
