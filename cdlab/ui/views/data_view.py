"""The data: nonzeros per row and per column, and the sampling probabilities
the face-off uses (importance, face-off eq. 14; squared_norm ∝ ‖·‖²)."""
from __future__ import annotations

import numpy as np
import panel as pn
import param

from ...sampling import importance_probabilities
from ..runner import squared_norm_probabilities
from ..state import Experiment
from .banner import NOT_AVAILABLE
from .hv_backend import holoviews_bokeh
from .visibility import set_displayed


def log_ticks(lo, hi):
    """Ticks for a log axis over [lo, hi]: 1-2-5 per decade over up to two decades, else powers of 10."""
    mantissas = (1, 2, 5) if hi / lo <= 100 else (1,)
    ticks = [m * 10**k for k in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
             for m in mantissas]
    return [(t, _tick_label(t)) for t in ticks if lo <= t <= hi]


def _tick_label(t):
    """1,000 below 10⁴; 10⁴, 2×10⁴, … above (short enough for a 200-px axis)."""
    if t < 10_000:
        return f"{t:,}"
    k = len(str(t)) - 1
    power = "10" + str(k).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    mantissa = t // 10**k
    return power if mantissa == 1 else f"{mantissa}×{power}"


def nnz_histogram(counts, what):
    """Histogram of nonzeros per row or column. Counts spread over more than a
    decade (skewed data follow power laws, which linear bins squash into one
    bar) get log-spaced bins on a log axis; a narrow range (dense data: every
    count equal) gets linear bins, whose axis ticks do not pile up."""
    hv = holoviews_bokeh()
    counts = np.asarray(counts)
    empty = int((counts == 0).sum())
    full = counts[counts > 0]
    lo, top = (int(full.min()), int(full.max())) if full.size else (1, 1)
    wide = top >= 10 * lo
    if wide:
        edges = np.unique(np.round(np.logspace(np.log10(lo), np.log10(top + 1), 30)))
    else:  # from 0, so that one count shared by every line shows as a bar at its value
        step = max(1, int(np.ceil((top + 1) / 30)))
        edges = np.arange(0, top + step + 1, step, dtype=float) - 0.5
    freq, edges = np.histogram(full, bins=edges)
    note = f", {empty:,} empty" if empty else ""
    xlabel = f"nonzeros per {what}"
    # explicit ticks on the log axis: over a decade or two Bokeh's log ticker falls back to linear
    # ticks (10, 20, 30, 40, 50) that pile up at the right end of a 200-px plot
    ticks = log_ticks(lo, top + 1) if wide else None
    if full.size and lo == top:
        xlabel += f" (all {top:,})" if not empty else f" (the others {top:,})"
    return hv.Histogram((edges, freq), kdims=[f"nonzeros per {what}"], vdims=["count"]).opts(
        title=f"{len(counts):,} {what}s{note}", xlabel=xlabel, logx=wide, xticks=ticks, responsive=True,
        height=240, shared_axes=False, framewise=True, tools=["hover"],
        color="#4c78a8" if what == "row" else "#f58518")


# points drawn of each sorted curve: the browser drew (and indexed for hover) every one of n, a 2.6–3 s
# main-thread task at n = 50 000; a sorted curve keeps its shape at evenly spaced ranks
PROFILE_POINTS = 1000


def sorted_profile(probs, size):
    """(rank / size, probability × size) of ``probs`` sorted in decreasing order, at most PROFILE_POINTS
    evenly spaced ranks, the first (largest) and last (smallest) always included."""
    ranked = np.sort(probs)[::-1] * size
    keep = np.unique(np.linspace(0, size - 1, min(size, PROFILE_POINTS)).round().astype(np.int64))
    return keep / max(size - 1, 1), ranked[keep]


def sampling_plot(problem):
    """Sorted probabilities × size (uniform = 1) of each non-uniform sampling."""
    hv = holoviews_bokeh()
    curves = []
    gamma = problem.gamma
    for what, norms, size in (("examples q_i", problem.row_norms_sq, problem.n_samples),
                              ("features p_j", problem.col_norms_sq, problem.n_features)):
        if gamma is not None:
            p = importance_probabilities(norms, problem.lam, gamma, problem.n_samples)
            curves.append(hv.Curve(sorted_profile(p, size), kdims=["rank / size"], vdims=["probability × size"],
                                   label=f"importance, {what}"))
        w = squared_norm_probabilities(norms)
        curves.append(hv.Curve(sorted_profile(w, size), kdims=["rank / size"], vdims=["probability × size"],
                               label=f"squared_norm ∝‖·‖², {what}").opts(line_dash="dashed"))
    curves.append(hv.HLine(1.0, label="uniform").opts(color="#999999", line_dash="dotted"))
    return hv.Overlay(curves).opts(
        hv.opts.Overlay(title="Sampling probabilities, sorted (× size: uniform = 1)", responsive=True,
                        # the legend below: at the right it covered the plot's last fifth at 1400 px
                        height=340, logy=True, legend_position="bottom", legend_cols=2, show_grid=True,
                        shared_axes=False, framewise=True),
        hv.opts.Curve(logy=True, tools=["hover"], framewise=True))


def data_plots(analysis):
    """(rows histogram, columns histogram, sampling probabilities) or None."""
    if analysis is None:
        return None
    p = analysis.problem
    return nnz_histogram(p.row_nnz, "row"), nnz_histogram(p.col_nnz, "column"), sampling_plot(p)


class DataView(pn.viewable.Viewer):
    """Persistent panes whose objects are replaced only when what they draw changes: the histograms
    with the data, the sampling probabilities with the problem (λ and the loss's γ weigh them)."""

    state = param.ClassSelector(class_=Experiment)

    def __init__(self, **params):
        super().__init__(**params)
        # no plots (nor HoloViews panes, which load HoloViews) before the first analysis: they cost the
        # first page's time
        self._panes = None
        self._plots = pn.Column(sizing_mode="stretch_width")
        self._waiting = pn.pane.Markdown("")
        self._shown = [None, None, None]
        self.state.param.watch(self._refresh, ["analysis", "error"])
        self._refresh()

    def _refresh(self, *events):
        analysis = self.state.analysis
        set_displayed(self._waiting, analysis is None)
        if analysis is None:
            self._waiting.object = NOT_AVAILABLE if self.state.error else "*Loading the data…*"
            return
        keys = [analysis.data_key, analysis.data_key, analysis.problem_key]
        if keys == self._shown:
            return
        plots = data_plots(analysis)
        if self._panes is None:
            self._panes = [pn.pane.HoloViews(None, sizing_mode="stretch_width") for _ in range(3)]
            rows, cols, probs = self._panes
            self._plots.objects = [pn.Row(rows, cols, sizing_mode="stretch_width"), probs]
        for k, (pane, key) in enumerate(zip(self._panes, keys)):
            if key != self._shown[k]:
                pane.object = plots[k]
        self._shown = keys

    def __panel__(self):
        return pn.Column(self._waiting, self._plots, sizing_mode="stretch_width")
