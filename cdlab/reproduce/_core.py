"""The pieces every reproduction shares: what an item returns, its checks, its plots.

An item is a function ``item(ctx) -> Outcome`` registered with :func:`item`.
Its verdict is never written by hand: it is "reproduced" when every
:class:`Check` (a claim of the paper turned into a comparison on this run's
numbers) holds, "differs" otherwise, with the failing checks' measured
numbers as the reason.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from ..solvers.base import first_row

PAPERS = {
    "faceoff": "Csiba & Richtárik 2016, Coordinate descent face-off: primal or dual? (arXiv:1605.08982)",
    "spdc": "Zhang & Xiao 2015, Stochastic primal-dual coordinate method for regularized ERM (ICML)",
    "asdca": "Shalev-Shwartz & Zhang 2013, Accelerated mini-batch stochastic dual coordinate ascent (NIPS)",
    "appa": "Frostig, Ge, Kakade & Sidford 2015, Un-regularizing: approximate proximal point and faster "
            "stochastic algorithms for ERM (ICML)",
    "prox_sdca": "Shalev-Shwartz & Zhang, Proximal SDCA (slides; SDCA, JMLR 2013)",
}
ITEMS: dict = {}  # (paper, name) -> ItemSpec, in registration order


@dataclass(frozen=True)
class ItemSpec:
    paper: str
    name: str
    title: str
    func: object


def item(paper, name, title):
    """Register ``func(ctx) -> Outcome`` as item ``name`` of ``paper``."""
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; choose from {sorted(PAPERS)}")

    def deco(func):
        ITEMS[paper, name] = ItemSpec(paper, name, title, func)
        return func
    return deco


@dataclass
class Context:
    """How an item runs: ``quick`` (small sizes, the test suite's and --quick's), ``seed``, and
    ``bar(iterable, desc)``, a progress bar over its runs."""

    quick: bool = False
    seed: int = 0
    progress: bool = True

    def bar(self, iterable, desc, total=None):
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, leave=False, disable=not self.progress, position=1)


@dataclass
class Check:
    """One claim of the paper, checked on this run: ``claim`` (the paper's statement), ``ok``,
    ``detail`` (the measured numbers behind the answer)."""

    claim: str
    ok: bool
    detail: str

    def __post_init__(self):
        self.ok = bool(self.ok)


@dataclass
class Series:
    """One line or set of markers of a plot. ``style``: "line", "dashed" or "markers"."""

    label: str
    x: list
    y: list
    style: str = "line"

    def __post_init__(self):
        self.x = [float(v) for v in np.asarray(self.x, dtype=float)]
        self.y = [float(v) for v in np.asarray(self.y, dtype=float)]


@dataclass
class Plot:
    """A figure as data (rendered by :mod:`cdlab.reproduce.render`): x–y series, or with ``image``
    (a 2-D list, rows along y) a heat map over ``image_x`` × ``image_y``."""

    title: str
    xlabel: str
    ylabel: str
    series: list = field(default_factory=list)
    logx: bool = False
    logy: bool = False
    hlines: list = field(default_factory=list)
    vlines: list = field(default_factory=list)
    image: list | None = None
    image_x: list | None = None
    image_y: list | None = None
    image_label: str = ""


@dataclass
class Outcome:
    """What an item produced: the paper's claim (``paper_says``), this run's headline
    (``measured``), tables, plots, checks and the settings it ran with."""

    paper_says: str
    measured: str
    tables: dict
    plots: list
    checks: list
    settings: dict
    paper: str = ""  # these three are set by the runner from the item's registration
    name: str = ""
    title: str = ""
    seconds: float = 0.0
    cached: bool = False
    error: str = ""

    @property
    def verdict(self) -> str:
        if self.error:
            return "error"
        return "reproduced" if self.checks and all(c.ok for c in self.checks) else "differs"

    @property
    def reason(self) -> str:
        if self.error:
            return self.error
        if not self.checks:
            return "no check ran"
        failed = [c for c in self.checks if not c.ok]
        if failed:
            return "; ".join(f"{c.claim} — NOT SO: {c.detail}" for c in failed)
        return "; ".join(c.detail for c in self.checks)

    def to_json(self) -> dict:
        out = asdict(self)
        # CSV text, not pandas' JSON, which writes ±inf ("not reached") as null
        out["tables"] = {k: v.to_csv(index=False, float_format="%.17g") for k, v in self.tables.items()}
        return out

    @classmethod
    def from_json(cls, data) -> "Outcome":
        import io

        data = dict(data)
        data["tables"] = {k: pd.read_csv(io.StringIO(v)) for k, v in data["tables"].items()}
        data["plots"] = [Plot(**dict(p, series=[Series(**s) for s in p["series"]])) for p in data["plots"]]
        data["checks"] = [Check(**c) for c in data["checks"]]
        return cls(**data)


def first(trace, column, eps, value="passes"):
    """``value`` at the first checkpoint where ``column`` ≤ eps (inf if the run never got there)."""
    row = first_row(trace, eps, column)
    return math.inf if row is None else float(row[value])


def floor(values, tiny=1e-16):
    """Values for a log axis: rounding can make P − P* a hair negative at the optimum."""
    return np.maximum(np.asarray(values, dtype=float), tiny)


def fmt(v, digits=3):
    """A number for a verdict line: inf as 'not reached'."""
    if v is None:
        return "—"
    if isinstance(v, (float, np.floating)) and not np.isfinite(v):
        return "not reached" if v > 0 else str(v)
    return f"{v:.{digits}g}"
