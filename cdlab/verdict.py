"""Measured verdicts with their seed-to-seed spread (issue 14, item 2).

A run repeated on several seeds gives one passes-to-ε per seed. The face-off
page and ``cdlab faceoff --run`` both compare methods through
:func:`verdict`, the one home of the rule:

    a contender wins only when its seeds' range of passes-to-ε lies entirely
    below every other contender's range (the ranges do not overlap);
    otherwise the comparison is a tie within seed-to-seed spread.

One seed measures no spread, so a comparison with a single-seed contender is
reported as a lead on one seed, never as a win. A seed that never reached ε
counts as ∞ passes. This module imports neither numba, sympy nor panel.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SEED = "seed"  # the trace column naming a row's seed when a run is repeated on several seeds


def to_target(trace, target, columns=("passes", "time", "steps")):
    """{column: value} where one trace's gap first reaches ``target``, or None.

    Between the last checkpoint above the target and the first at or below
    it, log(gap) is interpolated linearly in each column, so the answer does
    not snap to the checkpoint grid (the checkpoint itself bounds it above).
    """
    gap = trace.gap.to_numpy(dtype=float)
    hit = np.flatnonzero(gap <= target)
    if hit.size == 0:
        return None
    k = int(hit[0])
    near = {c: trace[c].to_numpy(dtype=float)[max(k - 1, 0):k + 1] for c in columns}  # [k - 1,] k
    out = {c: float(v[-1]) for c, v in near.items()}
    if k > 0 and gap[k - 1] > target and gap[k] > 0:
        t = (np.log(gap[k - 1]) - np.log(target)) / (np.log(gap[k - 1]) - np.log(gap[k]))
        for c, (a, b) in near.items():
            out[c] = float(a + t * (b - a))
    return out


def split_seeds(trace) -> list:
    """The per-seed traces of a run (in seed order); a trace without a seed column is one seed."""
    if trace is None or len(trace) == 0:
        return []
    if SEED not in trace.columns:
        return [trace]
    return [part.reset_index(drop=True) for _, part in trace.groupby(SEED, sort=True)]


def reach(trace, target, column="passes") -> np.ndarray:
    """``column`` at which each seed's gap reaches ``target`` (∞ for a seed that did not)."""
    out = []
    for part in split_seeds(trace):
        hit = to_target(part, target, (column,))
        out.append(math.inf if hit is None else hit[column])
    return np.asarray(out, dtype=float)


@dataclass(frozen=True)
class Spread:
    """One contender's passes-to-ε over its seeds."""

    name: str
    values: tuple

    @property
    def seeds(self) -> int:
        return len(self.values)

    @property
    def lo(self) -> float:
        return min(self.values)

    @property
    def hi(self) -> float:
        return max(self.values)

    @property
    def median(self) -> float:
        return float(np.median(self.values))

    def range_text(self, digits=3) -> str:
        """'10.9–11.3' over the seeds; 'not reached' when no seed reached ε, '5.2–not reached' when some did."""
        def f(v):
            return "not reached" if not math.isfinite(v) else f"{v:.{digits}g}"
        if not math.isfinite(self.lo) or self.lo == self.hi:
            return f(self.lo)
        return f"{f(self.lo)}–{f(self.hi)}"

    def text(self, unit="passes", digits=3) -> str:
        """'11.1 passes (10.9–11.3)': the median and the seeds' range; 'not reached' if no seed reached ε."""
        if not math.isfinite(self.lo):
            return "not reached"
        med = ("not reached by most seeds" if not math.isfinite(self.median)
               else f"{self.median:.{digits}g}" + (f" {unit}" if unit else ""))
        return med if self.seeds == 1 or self.lo == self.hi else f"{med} ({self.range_text(digits)})"


@dataclass(frozen=True)
class Verdict:
    """kind: "winner" (ranges apart), "tie" (ranges overlap), "one seed" (a lead, spread unknown)
    or "none" (no contender reached ε). ``winner`` is the leader's name (None for "none");
    ``overlapping`` names the contenders whose ranges meet the leader's."""

    kind: str
    winner: str | None
    spreads: tuple
    overlapping: tuple = ()

    @property
    def leader(self) -> Spread | None:
        return next((s for s in self.spreads if s.name == self.winner), None)


def verdict(passes: dict) -> Verdict:
    """The measured verdict between contenders: {name: passes-to-ε of each seed (∞ if not reached)}.

    The leader has the smallest median (then the smallest best seed); it is
    the winner only if its largest value is below every other contender's
    smallest. Raises ValueError for fewer than two contenders, a contender
    without seeds, or a NaN or negative value.
    """
    if not isinstance(passes, dict) or len(passes) < 2:
        raise ValueError(f"a verdict needs at least two contenders, got {passes!r}")
    spreads = []
    for name, values in passes.items():
        vals = tuple(float(v) for v in np.atleast_1d(np.asarray(values, dtype=float)))
        if not vals:
            raise ValueError(f"contender {name!r} has no seeds")
        if any(math.isnan(v) or v < 0 for v in vals):
            raise ValueError(f"passes-to-ε must be ≥ 0 or inf, got {vals} for {name!r}")
        spreads.append(Spread(str(name), vals))
    if all(not math.isfinite(s.lo) for s in spreads):
        return Verdict("none", None, tuple(spreads))
    lead = min(spreads, key=lambda s: (s.median, s.lo))
    others = [s for s in spreads if s is not lead]
    overlapping = tuple(s.name for s in others if not lead.hi < s.lo)
    if overlapping:
        kind = "tie"
    elif min(s.seeds for s in spreads) < 2:
        kind = "one seed"
    else:
        kind = "winner"
    return Verdict(kind, lead.name, tuple(spreads), overlapping)


def faceoff_verdict(passes: dict, sides: dict):
    """The face-off's measured verdict: each side ("primal"/"dual") is represented by its run with the
    smallest median passes-to-ε (then the smallest best seed), and :func:`verdict` compares the two.

    ``passes``: {run name: per-seed passes-to-ε}; ``sides``: {run name: side}. Returns
    (Verdict or None when fewer than two sides ran, {side: its representative's name}).
    """
    best = {}
    for name, values in passes.items():
        side = sides[name]
        vals = np.atleast_1d(np.asarray(values, dtype=float))
        key = (float(np.median(vals)), float(vals.min()))
        if side not in best or key < best[side][0]:
            best[side] = (key, name)
    chosen = {side: name for side, (_, name) in best.items()}
    if len(chosen) < 2:
        return None, chosen
    return verdict({name: passes[name] for name in chosen.values()}), chosen
