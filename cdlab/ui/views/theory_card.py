"""Theory card: each chosen run's bound (LaTeX, from cdlab.theory) and its
value on this data next to what the run measured."""
from __future__ import annotations

import math

import panel as pn
import param

from ..state import Experiment
from .banner import NOT_AVAILABLE
from .visibility import set_displayed, show_in_order
from ...verdict import Spread, reach

# hidden bound panes the card keeps to show again without typesetting them anew (a method unticked and
# ticked again); older ones leave the page, which would otherwise gather one per bound ever shown
HIDDEN_PANES_KEPT = 24


# (LaTeX length, size command): the card is ~400 px wide, and the accelerated methods' bounds (400+
# characters of LaTeX) were cut off at its edge at normal size
LATEX_SIZES = ((320, r"\scriptsize "), (220, r"\small "))


def latex_source(info):
    """The bound's LaTeX as a display-math string for pn.pane.LaTeX, set smaller when long."""
    text = info.latex.strip().strip("$")
    size = next((cmd for length, cmd in LATEX_SIZES if len(text) > length), "")
    return f"$${size}{text}$$"


def bound_passes(info, target):
    """Passes the bound needs to guarantee ε = target on this data (inf if never)."""
    return info.passes(target)


def theory_items(analysis, runs):
    """[(label, latex or None, markdown)] for each planned run."""
    items = []
    if analysis is None:
        return items
    for run in runs:
        if run.label in analysis.refusals:
            items.append((run.label, None, f"**{run.label}** cannot run here: {analysis.refusals[run.label]}"))
            continue
        info = analysis.bounds.get(run.label)
        if info is None:
            continue
        if info.error:
            items.append((run.label, None, f"**{run.label}**: no bound from the theory layer — {info.error}"))
        else:
            items.append((run.label, latex_source(info),
                          f"**{run.label}** — {info.source}; bounds the expected {info.quantity}:"))
    return items


def comparison_markdown(analysis, traces, target, runs):
    """Bound vs measured passes to the target, one row per run with a bound (measured: the median
    over the run's seeds, with their range)."""
    if analysis is None:
        return ""
    rows = ["| run | bound: passes to ε | measured passes | measured / bound |", "|---|---|---|---|"]
    for run in runs:
        info = analysis.bounds.get(run.label)
        if info is None or info.error:
            continue
        need = bound_passes(info, target)
        trace = traces.get(run.label)
        seeds = reach(trace, target) if trace is not None and len(trace) else ()
        spread = Spread(run.label, tuple(seeds)) if len(seeds) else None
        hit = spread is not None and math.isfinite(spread.median)
        got = "–" if not hit else spread.text(unit="")
        ratio = "–" if not hit or not math.isfinite(need) or need <= 0 else f"{spread.median / need:.2g}"
        rows.append(f"| {run.label} | {need:.4g} | {got} | {ratio} |")
    if len(rows) == 2:
        return ""
    return f"**On this data, ε = {target:.0e}:**\n\n" + "\n".join(rows)


def theory_message(analysis, items, error):
    """What the card says when it has no bound to show (None when it has)."""
    if items:
        return None
    if error:
        return NOT_AVAILABLE
    if analysis is None:
        return "*Analysing the data…*"
    return "*Choose methods to see their bounds.*"


class TheoryCard(pn.viewable.Viewer):
    """The bounds are rebuilt only when what they say changes (a LaTeX pane is typeset anew in the
    browser each time it is rebuilt), and always from the state as it is now: a new plan whose job has
    not analysed it yet keeps the bounds of the runs the analysis has."""

    state = param.ClassSelector(class_=Experiment)

    def __init__(self, **params):
        super().__init__(**params)
        self._bounds = pn.Column(sizing_mode="stretch_width", css_classes=["cdlab-theory-bounds"])
        self._compare = pn.pane.Markdown("", sizing_mode="stretch_width", css_classes=["cdlab-theory-compare"])
        self._message = pn.pane.Markdown("", sizing_mode="stretch_width")
        self._shown = None
        self._panes = {}  # (label, latex, text) -> its panes: a bound that stays is not typeset again
        s = self.state
        s.param.watch(self._refresh_bounds, ["analysis", "methods", "samplings", "batch_sizes", "error"])
        s.param.watch(self._refresh_compare, ["analysis", "traces", "log10_target"])
        self._refresh_bounds()
        self._refresh_compare()

    def _refresh_bounds(self, *events):
        s = self.state
        items = theory_items(s.analysis, s.runs())
        said = (theory_message(s.analysis, items, s.error), items)
        if said == self._shown:
            return
        self._shown = said
        message = said[0]
        if message is not None:
            self._message.object = message
            self._show([self._message])
            return
        held = {id(pane) for pane in self._bounds.objects}
        # a bound shown before keeps its panes (shown again, not typeset again) while the column holds them
        self._panes = {item: panes for item, panes in self._panes.items() if id(panes[0]) in held}
        self._panes.update({item: self._item_panes(*item) for item in items if item not in self._panes})
        self._show([pane for item in items for pane in self._panes[item]])

    def _show(self, panes):
        objects, changed = show_in_order(self._bounds.objects, panes, show=set_displayed,
                                         keep_hidden=HIDDEN_PANES_KEPT)
        if changed:
            self._bounds.objects = objects

    @staticmethod
    def _item_panes(label, latex, text):
        panes = [pn.pane.Markdown(text, sizing_mode="stretch_width", margin=(4, 10, 0, 10))]
        if latex:
            panes.append(pn.pane.LaTeX(latex, renderer="mathjax", margin=(0, 10, 6, 10),
                                       sizing_mode="stretch_width", styles={"overflow-x": "auto"}))
        return panes

    def _refresh_compare(self, *events):
        s = self.state
        self._compare.object = comparison_markdown(s.analysis, s.traces, s.target, s.runs())

    def __panel__(self):
        return pn.Card(self._bounds, self._compare, title="Theory: each method's bound", sizing_mode="stretch_width",
                       collapsible=False, css_classes=["cdlab-theory"])
