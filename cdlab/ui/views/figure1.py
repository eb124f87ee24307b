"""Figure 1 of the face-off paper: over n and ω = nnz for this d, the
Theorem 4 upper bound on C_P/C_D for binary data; where it is below 1 primal
CD wins on every binary matrix of that shape (theory.md §4)."""
from __future__ import annotations

import numpy as np
import panel as pn
import param

from ..state import Experiment
from .banner import NOT_AVAILABLE
from .hv_backend import holoviews_bokeh
from .visibility import set_displayed


def figure1_plot(analysis):
    if analysis is None or analysis.figure1 is None:
        return None
    hv = holoviews_bokeh()
    n_values, omega_values, grid = analysis.figure1
    p = analysis.problem
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.log10(grid)
    finite = z[np.isfinite(z)]
    span = float(np.max(np.abs(finite))) if finite.size else 1.0
    mesh = hv.QuadMesh((n_values.astype(float), omega_values.astype(float), z), ["n", "ω = nnz"],
                       "log10 upper bound on C_P/C_D").opts(
        cmap="RdBu_r", clim=(-span, span), colorbar=True, logx=True, logy=True, responsive=True, min_height=360,
        shared_axes=False, framewise=True,
        tools=["hover"], title=f"Thm 4: max C_P/C_D, binary X, d = {p.n_features:,}")
    layers = [mesh]
    if analysis.binary:
        layers.append(hv.Points([(float(p.n_samples), float(p.nnz))], ["n", "ω = nnz"], label="this data").opts(
            marker="star", size=22, color="#ffd700", line_color="black"))
    return hv.Overlay(layers).opts(hv.opts.Overlay(legend_position="top_left", shared_axes=False, framewise=True))


def figure1_note(analysis):
    if analysis is None:
        return ""
    legend = ("Colour: log10 of the largest C_P/C_D any binary matrix with n rows, d columns and ω nonzeros can "
              "have (Theorem 4); **blue (< 0) means primal CD needs less work than dual CD on every such matrix**. "
              "White: ω infeasible. ")
    if analysis.figure1 is None:
        return f"*Figure 1 unavailable:* {analysis.figure1_error}"
    p = analysis.problem
    if analysis.binary:
        return legend + (f"The star marks this data: n = {p.n_samples:,}, ω = {p.nnz:,} (its nonzeros are all ±c: "
                         "binary up to a scale, which C_P/C_D does not see).")
    return legend + ("This data is not binary (its nonzeros differ in size), so it is not marked: the map is "
                     "the binary-data bound of Theorem 4 for its d.")


class Figure1View(pn.viewable.Viewer):
    state = param.ClassSelector(class_=Experiment)

    def __init__(self, **params):
        super().__init__(**params)
        # (shown and hidden on a wrapper, by its CSS display: a HoloViews pane passes its own layout
        # changes on to the Bokeh pane inside it, which Panel 1.9 rejects for stylesheets)
        # no plot (nor a HoloViews pane, which loads HoloViews) before the first analysis: they cost the
        # first page's time
        self._pane = None
        self._box = pn.Column(sizing_mode="stretch_width", styles={"display": "none"})
        self._note = pn.pane.Markdown("", sizing_mode="stretch_width")
        self._shown = None
        self.state.param.watch(self._refresh, ["analysis", "error"])
        self._refresh()

    @staticmethod
    def _plot(analysis):
        plot = figure1_plot(analysis)
        if plot is None:
            hv = holoviews_bokeh()
            return hv.Overlay([hv.QuadMesh([])])
        return plot

    def _refresh(self, *events):
        """The map is redrawn only when the data change (the same data under a new plan, loss or λ
        keep it: it depends on the data's n, d and nonzeros alone)."""
        analysis = self.state.analysis
        key = None if analysis is None else analysis.data_key
        if key is not None and key != self._shown:
            self._shown = key
            if self._pane is None:
                self._pane = pn.pane.HoloViews(self._plot(analysis), sizing_mode="stretch_width", min_height=380)
                self._box.objects = [self._pane]
            else:
                self._pane.object = self._plot(analysis)
        set_displayed(self._box, analysis is not None and analysis.figure1 is not None)
        if analysis is None:
            note = NOT_AVAILABLE if self.state.error else "*Analysing the data…*"
        else:
            note = figure1_note(analysis)
        self._note.object = note

    def __panel__(self):
        return pn.Column(self._box, self._note, sizing_mode="stretch_width")
