"""Sympy derivations of what ``cdlab.losses`` hand-codes (theory.md §2–3).

For each loss φ(z; y) written as convex pieces in z, sympy derives

* the conjugate φ*(u) = sup_z (u z − φ(z)) by the Legendre transform of each
  strictly convex piece (u = φ'(z) solved for z) and, at each kink z_k, the
  linear branch u z_k − φ(z_k) for u in the subdifferential [φ'(z_k−), φ'(z_k+)];
  +∞ outside [inf φ', sup φ'];
* the dual term −φ*(−α) that D(α) uses, with its domain;
* the smoothness γ = 1 / sup φ'' (None when φ' jumps) and the Lipschitz
  constant L = sup |φ'| (None when unbounded);
* the exact dual coordinate step of SDCA: the maximiser of
  −φ*(−α⁺) − (α⁺ − a) z − (q/2)(α⁺ − a)² over the domain, i.e. the stationary
  point clipped to the domain (exact for a concave function of one variable);
  for the logistic loss the stationarity equation has no closed form and is
  returned as an equation in b⁺ = α⁺ y (theory.md §3's safeguarded-Newton root).

Classification losses are derived for y = +1 and y = −1 separately (their
pieces swap order with the sign of y); regression losses for a symbolic y.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from ..losses import CLASSIFICATION_LOSSES, LOSSES

z = sp.Symbol("z", real=True)
u = sp.Symbol("u", real=True)
alpha = sp.Symbol(r"\alpha", real=True)
a = sp.Symbol("a", real=True)  # current α_i
q = sp.Symbol("q", positive=True)  # ‖x_i‖²/(λn)
y_sym = sp.Symbol("y", real=True)
s_sym = sp.Symbol("s", positive=True)  # smoothed-hinge parameter
b_plus = sp.Symbol("b^{+}", positive=True)

LOSS_NAMES = tuple(LOSSES)
CLASSIFICATION = CLASSIFICATION_LOSSES


def loss_pieces(loss, y=None, s=s_sym):
    """φ(z; y) as consecutive convex pieces [(expr, lo, hi)] in increasing z.

    ``y`` must be +1 or −1 for classification losses; regression losses accept a
    number or default to the symbol y.
    """
    if loss in CLASSIFICATION:
        if y not in (1, -1):
            raise ValueError(f"{loss} is a classification loss: derive it for y = +1 or y = -1, not {y!r}")
    elif y is None:
        y = y_sym
    oo = sp.oo
    if loss == "squared":
        return [((z - y) ** 2 / 2, -oo, oo)]
    if loss == "logistic":
        return [(sp.log(1 + sp.exp(-y * z)), -oo, oo)]
    if loss == "absolute":
        return [(y - z, -oo, y), (z - y, y, oo)]
    m = 1 - y * z  # the hinge's margin violation; its pieces are ordered by y·z
    if loss == "hinge":
        pieces = [(m, -oo, 1), (sp.Integer(0), 1, oo)]  # in t = y z
    elif loss == "smoothed_hinge":
        pieces = [(m - s / 2, -oo, 1 - s), (m ** 2 / (2 * s), 1 - s, 1), (sp.Integer(0), 1, oo)]
    else:
        raise ValueError(f"unknown loss {loss!r}; choose one of {list(LOSS_NAMES)}")
    if y == 1:
        return pieces
    # z = −t: the pieces in t reversed become pieces in z
    return [(e, -hi, -lo) for e, lo, hi in reversed(pieces)]


def _limit(expr, at):
    return sp.limit(expr, z, at) if at in (sp.oo, -sp.oo) else sp.simplify(expr.subs(z, at))


@dataclass
class Conjugate:
    """φ* as branches [(expr in u, u_lo, u_hi)] plus the closed domain [u_min, u_max]."""

    branches: list
    u_min: object
    u_max: object

    def piecewise(self):
        """φ*(u) as a sympy Piecewise (+∞ outside the domain)."""
        parts = [(e, _between(u, lo, hi)) for e, lo, hi in self.branches]
        return sp.Piecewise(*parts, (sp.oo, True))


def _between(x, lo, hi):
    return sp.Eq(x, lo) if sp.simplify(hi - lo) == 0 else (x >= lo) & (x <= hi)


@lru_cache(maxsize=None)
def conjugate(loss, y=None, s=s_sym) -> Conjugate:
    """Derive φ* from the pieces of φ (see the module docstring)."""
    pieces = loss_pieces(loss, y, s)
    branches = []
    for k, (expr, lo, hi) in enumerate(pieces):
        d1 = sp.diff(expr, z)
        d2 = sp.simplify(sp.diff(d1, z))
        if d2 != 0:  # strictly convex piece: Legendre transform
            sols = sp.solve(sp.Eq(d1, u), z)
            if len(sols) != 1:
                raise ValueError(f"{loss}: φ' = u has {len(sols)} solutions on a piece; expected one")
            zu = sols[0]
            u_lo, u_hi = _limit(d1, lo), _limit(d1, hi)
            legendre = sp.simplify(u * zu - expr.subs(z, zu))
            for end, u_end in ((lo, u_lo), (hi, u_hi)):
                if end in (sp.oo, -sp.oo) and u_end.is_finite:  # sup at the domain's open end, as a limit
                    val = sp.limit(legendre, u, u_end, "+" if end == -sp.oo else "-")
                    # listed before the Legendre branch: the Piecewise takes the first match, and the
                    # Legendre formula is 0·log 0 = nan at such an end (logistic: b = 0 or 1)
                    branches.append((val, u_end, u_end))
            branches.append((legendre, u_lo, u_hi))
        if k + 1 < len(pieces):  # kink between this piece and the next
            zk = hi
            left = sp.simplify(d1.subs(z, zk))
            right = sp.simplify(sp.diff(pieces[k + 1][0], z).subs(z, zk))
            if sp.simplify(right - left) != 0:
                branches.append((sp.simplify(u * zk - expr.subs(z, zk)), left, right))
    u_min = _limit(sp.diff(pieces[0][0], z), pieces[0][1])
    u_max = _limit(sp.diff(pieces[-1][0], z), pieces[-1][2])
    return Conjugate(branches, u_min, u_max)


def neg_conj(loss, y=None, s=s_sym):
    """−φ*(−α) as a sympy Piecewise in ``alpha`` (−∞ outside the domain)."""
    conj = conjugate(loss, y, s)
    parts = [(sp.simplify(-e.subs(u, -alpha)), _between(alpha, -hi, -lo)) for e, lo, hi in conj.branches]
    return sp.Piecewise(*parts, (-sp.oo, True))


def dual_domain(loss, y=None, s=s_sym):
    """The closed interval of α where −φ*(−α) is finite: (α_min, α_max)."""
    conj = conjugate(loss, y, s)
    return -conj.u_max, -conj.u_min


@lru_cache(maxsize=None)
def smoothness(loss, y=None, s=s_sym):
    """γ = 1 / sup φ'' (φ' is (1/γ)-Lipschitz); None if φ' jumps at a kink."""
    pieces = loss_pieces(loss, y if loss in CLASSIFICATION else (1 if y is None else y), s)
    sup = sp.Integer(0)
    for k, (expr, lo, hi) in enumerate(pieces):
        d1 = sp.diff(expr, z)
        if k + 1 < len(pieces):
            right = sp.diff(pieces[k + 1][0], z).subs(z, hi)
            if sp.simplify(right - d1.subs(z, hi)) != 0:
                return None
        d2 = sp.simplify(sp.diff(d1, z))
        cands = [_limit(d2, lo), _limit(d2, hi)]
        cands += [d2.subs(z, c) for c in sp.solve(sp.diff(d2, z), z) if c.is_real]
        sup = sp.Max(sup, *cands)
    return sp.simplify(1 / sup)


@lru_cache(maxsize=None)
def lipschitz(loss, y=None, s=s_sym):
    """L = sup |φ'| = max(|inf φ'|, |sup φ'|) (φ' is monotone); None if unbounded."""
    conj = conjugate(loss, y if loss in CLASSIFICATION else (1 if y is None else y), s)
    L = sp.Max(sp.Abs(conj.u_min), sp.Abs(conj.u_max))
    return None if L.has(sp.oo) else sp.simplify(L)


@dataclass
class DualStep:
    """The exact SDCA step for one loss: ``new_alpha`` (closed form, or None) or
    the ``equation`` its root solves (logistic, in b⁺ = α⁺ y)."""

    loss: str
    y: object
    new_alpha: object
    equation: object
    domain: tuple

    @property
    def closed_form(self) -> bool:
        return self.new_alpha is not None


@lru_cache(maxsize=None)
def dual_step(loss, y=None, s=s_sym) -> DualStep:
    """Maximise −φ*(−α⁺) − (α⁺ − a) z − (q/2)(α⁺ − a)² over the domain of α⁺.

    The objective is concave in α⁺; on a domain where −φ*(−·) is one smooth
    branch (true for every loss here) the maximiser is the stationary point
    clipped to the domain.
    """
    conj = conjugate(loss, y, s)
    interior = [(e, lo, hi) for e, lo, hi in conj.branches if sp.simplify(hi - lo) != 0]
    if len(interior) != 1:
        raise ValueError(f"{loss}: −φ* has {len(interior)} branches inside its domain; no single closed form")
    e, lo, hi = interior[0]
    N = sp.simplify(-e.subs(u, -alpha))
    lo_a, hi_a = -hi, -lo
    stationarity = sp.diff(N, alpha) - z - q * (alpha - a)
    if stationarity.is_polynomial(alpha):  # linear in α⁺ for every loss but the logistic
        (sol,) = sp.solve(sp.Eq(stationarity, 0), alpha)
        new = sp.Min(sp.Max(sp.simplify(sol), lo_a), hi_a)
        return DualStep(loss, y, new, sp.Eq(stationarity, 0), (lo_a, hi_a))
    # no closed form (logistic): state the optimality equation in b⁺ = α⁺ y
    yy = y if y is not None else y_sym
    eq = sp.Eq(sp.simplify(stationarity.subs(alpha, b_plus * yy) * yy), 0)
    return DualStep(loss, y, None, eq, (lo_a, hi_a))


def summary(s=s_sym):
    """Every derivation at once (for notebooks): loss -> dict of sympy objects."""
    out = {}
    for loss in LOSS_NAMES:
        y = 1 if loss in CLASSIFICATION else None
        out[loss] = dict(phi=loss_pieces(loss, y, s), neg_conj=neg_conj(loss, y, s),
                         domain=dual_domain(loss, y, s), gamma=smoothness(loss, y, s),
                         L=lipschitz(loss, y, s), step=dual_step(loss, y, s))
    return out
