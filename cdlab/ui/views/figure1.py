"""Figure 1 of the face-off paper: over n and ω = nnz for this d, the
Theorem 4 upper bound on C_P/C_D for binary data; where it is below 1 primal
CD wins on every binary matrix of that shape (theory.md §4)."""
from __future__ import annotations

import holoviews as hv
import numpy as np
import panel as pn
import param

from ..state import Experiment


def figure1_plot(analysis):
    if analysis is None or analysis.figure1 is None:
        return None
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

    def _plot(self, analysis):
        plot = figure1_plot(analysis)
        return plot if plot is not None else hv.Overlay([hv.QuadMesh([])])

    def __panel__(self):
        # persistent panes whose objects change: one re-render per analysis, in place
        a = self.state.param.analysis
        # (visibility on a wrapper: a HoloViews pane passes its own layout changes on to the Bokeh
        # pane inside it, which Panel 1.9 rejects for stylesheets)
        plot = pn.Column(pn.pane.HoloViews(pn.bind(self._plot, a), sizing_mode="stretch_width", min_height=380),
                         visible=pn.bind(lambda x: x is not None and x.figure1 is not None, a),
                         sizing_mode="stretch_width")
        def note(analysis, error):
            if analysis is None:
                return "*Not available: see the message at the top of the page.*" if error else "*Analysing the data…*"
            return figure1_note(analysis)
        return pn.Column(plot, pn.pane.Markdown(pn.bind(note, a, self.state.param.error), sizing_mode="stretch_width"),
                         sizing_mode="stretch_width")
