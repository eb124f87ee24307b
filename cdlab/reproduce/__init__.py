"""``cdlab reproduce``: each paper's key tables and figures run again, beside the paper's own numbers.

    outcomes = cdlab.reproduce.run(out="report/", quick=True)          # every item
    outcomes = cdlab.reproduce.run(["appa"], out="report/")              # one paper
    outcomes = cdlab.reproduce.run(["faceoff", "figure1"], out="report/")  # one item

One module per paper (``faceoff``, ``spdc``, ``asdca``, ``appa``, ``prox_sdca``); each item is a
function ``(ctx) -> Outcome`` whose verdict comes from checks on its own run (``_core``). ``run``
writes ``out/index.html`` (static, BokehJS inlined: opens offline), one CSV per table and
``verdicts.csv`` (every item with a result in ``out`` for the same sizes, seed and code, so running
one paper after another builds one report). Finished items are cached in ``out/cache/`` under a key of the item, the sizes
(quick or full), the seed and the source of the whole ``cdlab`` package, so a re-run reuses them
and any code change recomputes.
"""
from __future__ import annotations

import hashlib
import json
import platform
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

from ._core import ITEMS, PAPERS, Check, Context, Outcome, Plot, Series
from . import faceoff, faceoff_confidence, spdc, asdca, appa, prox_sdca  # noqa: E402,F401  (each registers its items)

__all__ = ["ITEMS", "PAPERS", "Check", "Context", "Outcome", "Plot", "Series", "select", "run", "verdict_table"]


def select(paper=None, name=None):
    """The items of ``paper`` (all papers when None), or the one ``name`` of it."""
    if paper is None:
        if name is not None:
            raise ValueError("an item needs its paper: cdlab reproduce PAPER ITEM")
        return list(ITEMS.values())
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; choose from {', '.join(PAPERS)}")
    mine = [spec for (p, _), spec in ITEMS.items() if p == paper]
    if name is None:
        return mine
    if (paper, name) not in ITEMS:
        raise ValueError(f"paper {paper!r} has no item {name!r}; its items: {', '.join(s.name for s in mine)}")
    return [ITEMS[paper, name]]


def code_fingerprint() -> str:
    """SHA-256 of every .py file of the cdlab package (the dashboard's excepted): a cached item is
    reused only by the same code."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        if "ui" in path.relative_to(root).parts[:1]:
            continue
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def versions() -> dict:
    import importlib.metadata as md

    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for pkg in ("cdlab", "numpy", "scipy", "pandas", "numba", "sympy", "bokeh", "scikit-learn", "tqdm"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def _cache_path(out, spec, ctx, fingerprint):
    key = hashlib.sha256(json.dumps([spec.paper, spec.name, ctx.quick, ctx.seed, fingerprint]).encode()).hexdigest()
    return Path(out) / "cache" / f"{spec.paper}.{spec.name}.{key[:20]}.json"


def run_item(spec, ctx) -> Outcome:
    """Run one item; an exception becomes an Outcome with verdict "error" and its traceback."""
    t0 = time.perf_counter()
    try:
        outcome = spec.func(ctx)
    except Exception as exc:  # one broken item must not lose the others' report
        outcome = Outcome(paper_says="", measured="", tables={}, plots=[], checks=[], settings={},
                          error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    outcome.paper, outcome.name, outcome.title = spec.paper, spec.name, spec.title
    outcome.seconds = time.perf_counter() - t0
    return outcome


def run(selection=(), out="report", quick=False, seed=0, progress=True, force=False, command=None):
    """Run the selected items (``selection``: (), (paper,) or (paper, item)), reusing cached ones
    unless ``force``; write the report into ``out``, with the cached results of the other items too.
    Returns the list of Outcomes in the report."""
    from tqdm.auto import tqdm

    from .render import report_html

    specs = select(*selection)
    out = Path(out)
    (out / "cache").mkdir(parents=True, exist_ok=True)
    ctx = Context(quick=quick, seed=seed, progress=progress)
    fingerprint = code_fingerprint()
    outcomes = []
    bar = tqdm(specs, desc="cdlab reproduce", disable=not progress, position=0)
    for spec in bar:
        bar.set_postfix_str(f"{spec.paper}/{spec.name}")
        path = _cache_path(out, spec, ctx, fingerprint)
        if path.is_file() and not force:
            outcome = Outcome.from_json(json.loads(path.read_text()))
            outcome.cached = True
        else:
            outcome = run_item(spec, ctx)
            if not outcome.error:  # an error is recomputed next time
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(outcome.to_json()))
                tmp.replace(path)
        outcomes.append(outcome)
    # the report shows every item with a result for these settings and this code: those just run,
    # and the others' cached results from earlier runs into the same directory
    ran = {(o.paper, o.name) for o in outcomes}
    for key, spec in ITEMS.items():
        path = _cache_path(out, spec, ctx, fingerprint)
        if key not in ran and path.is_file():
            outcome = Outcome.from_json(json.loads(path.read_text()))
            outcome.cached = True
            outcomes.append(outcome)
    order = list(ITEMS)
    outcomes.sort(key=lambda o: order.index((o.paper, o.name)))
    write_report(outcomes, out, dict(
        command=command or f"cdlab.reproduce.run({tuple(selection)!r}, quick={quick})", quick=quick,
        when=datetime.now(timezone.utc).isoformat(timespec="seconds"), papers=PAPERS, versions=versions()),
        report_html)
    return outcomes


def verdict_table(outcomes):
    import pandas as pd

    return pd.DataFrame([dict(paper=o.paper, item=o.name, verdict=o.verdict, paper_says=o.paper_says,
                              measured=o.measured, reason=o.reason, seconds=round(o.seconds, 2), cached=o.cached)
                         for o in outcomes])


def write_report(outcomes, out, meta, report_html):
    """index.html, verdicts.csv and one CSV per table (``<paper>_<item>_<table>.csv``)."""
    out = Path(out)
    for o in outcomes:
        for name, df in o.tables.items():
            df.to_csv(out / f"{o.paper}_{o.name}_{name}.csv", index=False)
    verdict_table(outcomes).to_csv(out / "verdicts.csv", index=False)
    (out / "index.html").write_text(report_html(outcomes, meta), encoding="utf-8")
