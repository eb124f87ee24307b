"""Convergence curves: one per run — the median over its seeds, with their min–max band — and its
bound dashed beside it (theory layer)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import panel as pn
import param

from ...solvers import METHODS
from ...solvers.base import stage_rows
from ...verdict import split_seeds
from ..advice import refuses_loss
from ..state import Experiment, same_traces
from .visibility import show_in_order

# (dark, light) hue pairs: a method's hue, dark for its uniform sampling and light for any other (a plan
# holds at most uniform + importance of one method). Category20 and Category20b, grey last (the key's).
HUES = [("#1f77b4", "#aec7e8"), ("#d62728", "#ff9896"), ("#2ca02c", "#98df8a"), ("#ff7f0e", "#ffbb78"),
        ("#9467bd", "#c5b0d5"), ("#8c564b", "#c49c94"), ("#e377c2", "#f7b6d2"), ("#17becf", "#9edae5"),
        ("#bcbd22", "#dbdb8d"), ("#393b79", "#9c9ede"), ("#637939", "#cedb9c"), ("#8c6d31", "#e7cb94"),
        ("#843c39", "#e7969c"), ("#7b4173", "#de9ed6"), ("#7f7f7f", "#c7c7c7")]
# the face-off's contenders get the clearest hues; every other method takes the next free hue in name order
FIRST_HUES = ("dual_cd", "primal_cd", "sdca")


def run_color(method: str, sampling: str) -> str:
    """A run's colour, fixed by its method and sampling alone (never by the runs beside it): the method's
    hue from its place in FIRST_HUES, then in sorted(cdlab.METHODS), shaded by its sampling."""
    names = [m for m in FIRST_HUES if m in METHODS] + sorted(set(METHODS) - set(FIRST_HUES))
    if method not in names:
        raise ValueError(f"no colour for {method!r}: it is not a method of this server ({', '.join(names)})")
    dark, light = HUES[names.index(method) % len(HUES)]
    return dark if sampling == "uniform" else light
X_COLUMN = {"passes": "passes", "steps": "steps", "seconds": "time"}
X_LABEL = {"passes": "passes (nonzeros touched / nnz)",
           "steps": "steps (a primal step updates a column, a dual step a row: different units)",
           "seconds": "solver seconds (numba compilation excluded)"}
QUANTITY = {"gap": "gap", "subopt": "P − P*", "dual_subopt": "D* − D", "dist": "‖w − w*‖²"}
Y_LABEL = {"gap": "duality gap P(w) − D(α)", "subopt": "P(w) − P*"}


def y_values(trace, yaxis, p_star):
    if yaxis == "gap":
        return trace.gap.to_numpy(dtype=float)
    if p_star is None:
        return np.full(len(trace), np.nan)
    return trace.primal.to_numpy(dtype=float) - p_star


KEY_COLOR = "#555555"
TARGET_COLOR = "#999999"  # the target line's, and its invisible span's (no key shares it)
BAND_POINTS = 200  # grid points of a seed band besides the seeds' own checkpoints
KEY_BOUND = "each run's bound"
KEY_TARGET = "target gap ε"
TARGET_SPAN = "target span"  # the invisible curve that puts the target inside the y range


def comparable(quantity, yaxis):
    """Whether a bound on ``quantity`` bounds what the y-axis shows: a gap bound
    also bounds P − P* (P − P* ≤ gap), a bound on P − P* does not bound the gap."""
    return quantity == yaxis or (quantity == "gap" and yaxis == "subopt")


def key_other(quantity):
    return f"a bound on {QUANTITY[quantity]} only"


def seed_band(trace, xcol, yaxis, p_star, positive_x=False):
    """(x, median, lo, hi) of a run's seeds, or None when nothing is drawable on log axes.

    Each seed's log(y) is interpolated linearly in x onto the union of the
    seeds' x values and an even grid over their span, and held at its last value after its last checkpoint
    (a run that stopped stays where it stopped: on the seconds axis, seeds of a fast run can end before
    another begins). The median is drawn where every seed has started (a median of fewer seeds is not the
    seeds' median), the min–max band wherever at least one has. One seed gives its own curve, band = curve.
    A staged method's mid-stage checkpoints (trace column ``inner``) are not drawn: only its stage outputs.
    """
    series = []
    for part in split_seeds(trace):
        part = stage_rows(part)
        y = y_values(part, yaxis, p_star)
        x = part[xcol].to_numpy(dtype=float)
        keep = np.isfinite(y) & (y > 0) & ((x > 0) if positive_x else True)
        if keep.any():
            series.append((x[keep], np.log(y[keep])))
    if not series:
        return None
    if len(series) == 1:
        x, ly = series[0]
        y = np.exp(ly)
        return x, y, y, y
    # the seeds' own x values and a fine even grid (in log x on a log axis): a band drawn only through
    # sparse points is a polygon whose straight edges cut across where one seed has a long checkpoint gap
    lo_x, hi_x = min(x[0] for x, _ in series), max(x[-1] for x, _ in series)
    fine = np.geomspace(lo_x, hi_x, BAND_POINTS) if positive_x else np.linspace(lo_x, hi_x, BAND_POINTS)
    grid = np.unique(np.concatenate([x for x, _ in series] + [fine]))
    logs = np.full((len(series), grid.size), np.nan)
    for k, (x, ly) in enumerate(series):
        inside = grid >= x[0]
        logs[k, inside] = np.interp(grid[inside], x, ly)  # np.interp holds ly[-1] beyond x[-1]
    have = np.isfinite(logs)
    med = np.full(grid.size, np.nan)
    everyone = have.all(axis=0)
    med[everyone] = np.median(logs[:, everyone], axis=0)
    some = have.any(axis=0)
    lo = np.full(grid.size, np.nan)
    hi = np.full(grid.size, np.nan)
    lo[some] = np.nanmin(logs[:, some], axis=0)
    hi[some] = np.nanmax(logs[:, some], axis=0)
    return grid, np.exp(med), np.exp(lo), np.exp(hi)


@dataclass(frozen=True)
class Line:
    """A curve of the plot: a run's median (solid), its bound (dashed, or dash-dot when it bounds another
    quantity than the axis shows), a legend key (one NaN point: a line sample, nothing drawn) or the
    target's invisible span (alpha 0)."""
    label: str
    x: np.ndarray
    y: np.ndarray
    color: str
    dash: str = "solid"
    width: float = 2.0
    alpha: float = 1.0
    legend: bool = True


@dataclass(frozen=True)
class Band:
    """A run's min–max band over its seeds, shaded in the run's colour."""
    label: str
    x: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    color: str
    alpha: float = 0.18


@dataclass(frozen=True)
class Frame:
    """What the convergence plot shows, as plain data (:class:`ConvergenceFigure` draws it)."""
    lines: dict  # label -> Line, in drawing order
    bands: dict  # label -> Band
    target: float | None
    xaxis: str
    logx: bool
    title: str
    xlabel: str
    ylabel: str

    def x_span(self):
        """(lo, hi) of the x values drawn (bands, runs, bounds and the target's span), None if none."""
        return _span([b.x for b in self.bands.values()] + [ln.x for ln in self.lines.values()])

    def y_span(self):
        return _span([v for b in self.bands.values() for v in (b.lo, b.hi)]
                     + [ln.y for ln in self.lines.values()])


def _span(arrays):
    finite = [a[np.isfinite(a)] for a in arrays if len(a)]
    finite = [a for a in finite if a.size]
    if not finite:
        return None
    return float(min(a.min() for a in finite)), float(max(a.max() for a in finite))


def convergence_plot(traces, analysis, xaxis="passes", yaxis="gap", labels=(), target=None, logx=False,
                     colors=None) -> Frame:
    """The run curves (solid: the median over the run's seeds, shaded: their min–max) and bound curves
    (dashed) as a :class:`Frame`.

    Only positive values are drawn (log axis); ``logx`` puts the seconds axis
    on a log scale (only there: passes and steps start at 0). A bound is
    mapped to steps or seconds through its run's first seed (passes -> x by
    interpolation). A bound on another quantity than the axis shows (P − P*
    bounds on the gap axis) is drawn dash-dot, so no run seems to break a
    bound it never had.

    ``colors`` maps a run's label to its colour (:func:`run_color` of its
    method and sampling); a label it lacks takes a colour of the palette.

    The legend always has a key entry for the dashed bounds (and the dotted
    target), from the empty first frame on: single-NaN curves (an empty curve
    gets no line sample in the legend, a NaN point draws nothing).
    """
    xcol = X_COLUMN[xaxis]
    logx = bool(logx) and xaxis == "seconds"
    order = list(labels) + sorted(set(traces) - set(labels))
    lines, bands, others = {}, {}, []
    seeds = 1
    drawn_x = []  # the runs' x values: the target's invisible span covers them
    for k, label in enumerate(order):
        trace = traces.get(label)
        if trace is None or len(trace) == 0:
            continue
        color = (colors or {}).get(label) or HUES[k % len(HUES)][0]
        parts = split_seeds(trace)
        seeds = max(seeds, len(parts))
        band = seed_band(trace, xcol, yaxis, None if analysis is None else analysis.p_star, positive_x=logx)
        if band is None:
            continue  # nothing drawable on a log axis yet (or P* unknown)
        x, med, lo, hi = band
        if len(parts) > 1:
            some = np.isfinite(lo)
            bands[f"{label} seeds"] = Band(f"{label} seeds", x[some], lo[some], hi[some], color)
        drawn = np.isfinite(med)
        drawn_x.append(x[drawn])
        lines[label] = Line(label, x[drawn], med[drawn], color)
        info = None if analysis is None else analysis.bounds.get(label)
        bound = None if info is None else info.curve(max(t.passes.iloc[-1] for t in parts))
        if bound is not None:
            bx, by = bound
            same = comparable(info.quantity, yaxis)
            name = f"{label} bound" + ("" if info.quantity == yaxis else f" on {QUANTITY[info.quantity]}")
            if not same and info.quantity not in others:
                others.append(info.quantity)
            if xcol != "passes":
                first = parts[0]
                bx = np.interp(bx, first.passes.to_numpy(dtype=float), first[xcol].to_numpy(dtype=float))
            ok = np.isfinite(by) & (by > 0) & ((bx > 0) if logx else True)
            lines[name] = Line(name, np.asarray(bx, float)[ok], np.asarray(by, float)[ok], color,
                               dash="dashed" if same else "dashdot", width=1.5, legend=False)
    keys = [(KEY_BOUND, "dashed")] + [(key_other(q), "dashdot") for q in others]
    if target is not None:
        keys.append((KEY_TARGET, "dotted"))
        xs = np.concatenate(drawn_x) if drawn_x else np.empty(0)
        if xs.size:  # a target line does not widen the y range: a transparent span puts the target on the axis
            lines[TARGET_SPAN] = Line(TARGET_SPAN, np.array([xs.min(), xs.max()]), np.array([target, target]),
                                      TARGET_COLOR, alpha=0.0, legend=False)
    for text, dash in keys:
        lines[text] = Line(text, np.array([np.nan]), np.array([np.nan]), KEY_COLOR, dash=dash, width=1.5)
    title = ("Convergence (dashed: each run's bound)" if seeds < 2 else
             f"Median of {seeds} seeds, shaded: their min–max (dashed: bounds)")
    return Frame(lines, bands, target, xaxis, logx, title,
                 xlabel=X_LABEL[xaxis] + (", log scale" if logx else ""), ylabel=Y_LABEL[yaxis])


RANGE_PAD = 0.05  # each end of a range is widened by this fraction of its span (in log units on a log axis)


def padded(span, log):
    """A range's (start, end) around the data's (lo, hi); on a log axis in log units."""
    lo, hi = span
    if log:
        lo, hi = np.log10(lo), np.log10(hi)
    pad = RANGE_PAD * (hi - lo) if hi > lo else 0.5
    lo, hi = lo - pad, hi + pad
    return (10.0 ** lo, 10.0 ** hi) if log else (lo, hi)


class ConvergenceFigure:
    """One Bokeh figure that draws :class:`Frame` objects in place: each curve and band keeps its renderer
    (created the first time its label is drawn, hidden while a frame lacks it), and a new frame only
    replaces the data that changed, the legend's items, the ranges and the labels. An axis's type
    (linear or log) is fixed by the figure: a switch of the seconds axis to log needs a new figure."""

    def __init__(self, logx=False):
        # bokeh.models, not bokeh.plotting (half a second to import, on the first page's path)
        from bokeh.models import (BoxZoomTool, Grid, HoverTool, Legend, LinearAxis, LinearScale, LogAxis,
                                  LogScale, PanTool, Plot, Range1d, ResetTool, SaveTool, Span, Title,
                                  WheelZoomTool)

        self.logx = bool(logx)
        fig = self.figure = Plot(x_range=Range1d(0, 1), y_range=Range1d(1e-6, 1),
                                 x_scale=LogScale() if logx else LinearScale(), y_scale=LogScale(),
                                 title=Title(text=""), sizing_mode="stretch_width", height=480, min_width=300)
        for axis, place in (((LogAxis if logx else LinearAxis)(), "below"), (LogAxis(), "left")):
            fig.add_layout(axis, place)
            fig.add_layout(Grid(dimension=0 if place == "below" else 1, ticker=axis.ticker, grid_line_alpha=0.6))
        self.hover = HoverTool(renderers=[], tooltips=[("", "$name"), ("x", "@x"), ("y", "@y")])
        fig.add_tools(PanTool(), WheelZoomTool(), BoxZoomTool(), SaveTool(), ResetTool(), self.hover)
        # entries 10 px apart, across as well: a long label in the first column stays clear of the second's
        self.legend = Legend(items=[], ncols=2, location="top_left", click_policy="none", spacing=10)
        fig.add_layout(self.legend, "below")
        self.target = Span(location=1.0, dimension="width", line_color=TARGET_COLOR, line_dash="dotted",
                           line_width=1, visible=False)
        fig.add_layout(self.target)
        self._lines, self._bands, self._items = {}, {}, {}

    def _line(self, line):
        from bokeh.models import ColumnDataSource, LegendItem, Line as LineGlyph
        renderer = self._lines.get(line.label)
        if renderer is None:
            renderer = self.figure.add_glyph(ColumnDataSource({"x": [], "y": []}), LineGlyph(x="x", y="y"),
                                             name=line.label)
            self._lines[line.label] = renderer
            if line.alpha > 0 and np.isfinite(line.y).any():
                self.hover.renderers = [*self.hover.renderers, renderer]
            self._items[line.label] = LegendItem(label=line.label, renderers=[renderer])
        glyph = renderer.glyph
        glyph.update(line_color=line.color, line_dash=line.dash, line_width=line.width, line_alpha=line.alpha)
        return renderer

    def _band(self, band):
        from bokeh.models import ColumnDataSource, Patch
        renderer = self._bands.get(band.label)
        if renderer is None:
            renderer = self.figure.add_glyph(ColumnDataSource({"x": [], "y": []}),
                                             Patch(x="x", y="y", line_alpha=0), name=band.label)
            self._bands[band.label] = renderer
            self.figure.renderers = [renderer, *(r for r in self.figure.renderers if r is not renderer)]
        renderer.glyph.update(fill_color=band.color, fill_alpha=band.alpha)
        return renderer

    @staticmethod
    def _set(renderer, data):
        old = renderer.data_source.data
        if old.keys() != data.keys() or any(not np.array_equal(old[k], v, equal_nan=True) for k, v in data.items()):
            renderer.data_source.data = data
        renderer.visible = True

    def show(self, frame: Frame):
        if frame.logx != self.logx:
            raise ValueError(f"a frame with logx={frame.logx} on a figure with logx={self.logx}: Bokeh "
                             "cannot change an axis's type in place (build a new ConvergenceFigure)")
        fig = self.figure
        for label, band in frame.bands.items():
            self._set(self._band(band), {"x": np.concatenate([band.x, band.x[::-1]]),
                                         "y": np.concatenate([band.lo, band.hi[::-1]])})
        for label, line in frame.lines.items():
            self._set(self._line(line), {"x": line.x, "y": line.y})
        for shown, drawn in ((frame.bands, self._bands), (frame.lines, self._lines)):
            for label, renderer in drawn.items():
                if label not in shown and renderer.visible:
                    renderer.visible = False
                    renderer.data_source.data = {"x": [], "y": []}
        wanted = [self._items[label] for label, line in frame.lines.items() if line.legend]
        items, changed = show_in_order(self.legend.items, wanted)
        if changed:
            self.legend.items = items
        self.target.update(location=frame.target if frame.target is not None else 1.0,
                           visible=frame.target is not None)
        for rng, span, log in ((fig.x_range, frame.x_span(), frame.logx), (fig.y_range, frame.y_span(), True)):
            if span is None:
                continue
            # the x axis spans the curves exactly (passes start at 0); log axes and y get a margin
            start, end = span if not log and rng is fig.x_range and span[1] > span[0] else padded(span, log)
            rng.update(start=start, end=end, reset_start=start, reset_end=end)
        fig.title.text = frame.title
        fig.xaxis.axis_label = frame.xlabel
        fig.yaxis.axis_label = frame.ylabel
        self.hover.tooltips = [("", "$name"), (frame.xaxis, "@x{0.[000]}"), ("y", "@y{0.000e}")]


def status_markdown(phase, running, run_status, run_message, cached, error, jobs=0, explained=()):
    """The status line and one line per run that is not a plain success. A refused run whose label is in
    ``explained`` (the banner at the top says why, and what to change) is only named here."""
    lines = []
    if error:
        lines.append(f"**Error:** {error}")
    if phase:
        lines.append(f"**Status:** {phase}" + (" …" if running else "") + f" <small>(job {jobs})</small>")
    for label, st in run_status.items():
        msg = run_message.get(label, "")
        tag = " (from cache)" if label in cached else ""
        if st == "refused" and label in explained:
            lines.append(f"- ⚠ {label}: not run (see the message at the top)")
        elif st == "refused":
            lines.append(f"- ⚠ **{label} cannot run:** {msg}")
        elif msg:
            lines.append(f"- {label}: {st}{tag} — {msg}")
        else:
            lines.append(f"- {label}: {st}{tag}")
    return "\n".join(lines)


class ConvergenceView(pn.viewable.Viewer):
    """The plot is one :class:`ConvergenceFigure` whose data change in place: a frame is drawn only when
    what it is drawn from changed (a run's checkpoints, a bound, the axes, the plan), and only its changed
    data go to the browser; no pane is rebuilt. Only a switch between a linear and a log x axis builds a
    new figure."""

    state = param.ClassSelector(class_=Experiment)
    log_seconds = param.Boolean(default=False, doc="the seconds axis is shown and on a log scale")

    def __init__(self, **params):
        super().__init__(**params)
        self._figure, self._drawn_from = None, None
        self.state.param.watch(self._axis_type, ["xaxis", "logx"])
        self._axis_type()
        self.state.param.watch(self._redraw, ["traces", "analysis", "xaxis", "yaxis", "log10_target", "logx"])

    def _axis_type(self, *events):
        self.log_seconds = self.state.xaxis == "seconds" and self.state.logx

    def _frame(self, logx):
        s = self.state
        return self._plot(logx, s.traces, s.analysis, s.xaxis, s.yaxis, s.log10_target)

    def _inputs(self, logx):
        """What a frame is drawn from, cheap to compare: the traces (compared as the state compares
        them), each planned run's colour and bound (one BoundInfo per run and budget), P* and the axes."""
        s, a = self.state, self.state.analysis
        runs = tuple((r.label, run_color(r.method, r.sampling)) for r in s.runs())
        bounds = None if a is None else (a.p_star, tuple((label, id(info)) for label, info in a.bounds.items()))
        return s.traces, (logx, s.xaxis, s.yaxis, s.log10_target, runs, bounds)

    def _redraw(self, *events):
        s = self.state
        if self._figure is None or self._figure.logx != (s.xaxis == "seconds" and s.logx):
            return  # a new figure is coming (see _pane)
        traces, rest = self._inputs(self._figure.logx)
        if same_traces(self._drawn_from[0], traces) and rest == self._drawn_from[1]:
            return
        self._drawn_from = traces, rest
        self._figure.show(self._frame(self._figure.logx))

    def _plot(self, logx, traces, analysis, xaxis, yaxis, log10_target):
        """The frame of what the runs produced (redrawn when their traces or the axes change, not when a
        control changes the plan: the new plan's job publishes its own traces)."""
        runs = self.state.runs()
        target = 10.0 ** log10_target if yaxis == "gap" else None
        return convergence_plot(traces, analysis, xaxis, yaxis, [r.label for r in runs], target, logx,
                                colors={r.label: run_color(r.method, r.sampling) for r in runs})

    def _status(self, phase, running, run_status, run_message, cached, error, jobs, loss):
        explained = {r.label for r in self.state.runs()
                     if run_status.get(r.label) == "refused" and refuses_loss(r.method, loss)}
        return status_markdown(phase, running, run_status, run_message, cached, error, jobs, explained)

    def _pane(self, log_seconds):
        """A new figure when the x axis changes between linear and log: Bokeh cannot change an axis's
        type in place."""
        self._figure = ConvergenceFigure(log_seconds)
        self._drawn_from = self._inputs(log_seconds)
        self._figure.show(self._frame(log_seconds))
        return pn.pane.Bokeh(self._figure.figure, sizing_mode="stretch_width", min_height=380)

    def __panel__(self):
        s = self.state
        progress = pn.indicators.Progress(
            value=pn.bind(lambda p: int(round(100 * p)), s.param.progress), max=100,
            active=s.param.running, sizing_mode="stretch_width", height=14, css_classes=["cdlab-progress"])
        status = pn.pane.Markdown(pn.bind(self._status, s.param.phase, s.param.running, s.param.run_status,
                                          s.param.run_message, s.param.cached, s.param.error, s.param.jobs,
                                          s.param.loss),
                                  css_classes=["cdlab-status"], sizing_mode="stretch_width")
        radio = pn.widgets.RadioButtonGroup.from_param
        logx = pn.widgets.Checkbox.from_param(s.param.logx, name="log seconds", css_classes=["cdlab-logx"],
                                              visible=s.param.xaxis.rx() == "seconds", align="center")
        axes = pn.Row(radio(s.param.xaxis, color="light", css_classes=["cdlab-xaxis"]), logx,
                      radio(s.param.yaxis, color="light", css_classes=["cdlab-yaxis"]))
        plot = pn.panel(pn.bind(self._pane, self.param.log_seconds), sizing_mode="stretch_width")
        return pn.Column(axes, progress, plot, status, sizing_mode="stretch_width")
