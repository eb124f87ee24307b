"""The data: nonzeros per row and per column, and the sampling probabilities
the face-off uses (importance, face-off eq. 14; weighted ∝ ‖·‖²)."""
from __future__ import annotations

import holoviews as hv
import numpy as np
import panel as pn
import param

from ...sampling import importance_probabilities
from ..runner import weighted_probabilities
from ..state import Experiment


def nnz_histogram(counts, what):
    """Histogram of nonzeros per row or column on log-spaced bins (skewed data
    follow power laws, which linear bins squash into one bar)."""
    counts = np.asarray(counts)
    empty = int((counts == 0).sum())
    full = counts[counts > 0]
    top = int(full.max()) if full.size else 1
    edges = np.unique(np.round(np.logspace(0, np.log10(top + 1), 30)))
    if edges.size < 2:
        edges = np.array([1.0, 2.0])
    freq, edges = np.histogram(full, bins=edges)
    note = f", {empty:,} empty" if empty else ""
    return hv.Histogram((edges, freq), kdims=[f"nonzeros per {what}"], vdims=["count"]).opts(
        title=f"‖{'x_i' if what == 'row' else 'f_j'}‖₀ per {what} ({len(counts):,} {what}s{note})", logx=True,
        responsive=True, height=240, shared_axes=False, framewise=True, tools=["hover"],
        color="#4c78a8" if what == "row" else "#f58518")


def sampling_plot(problem):
    """Sorted probabilities × size (uniform = 1) of each non-uniform sampling."""
    curves = []
    gamma = problem.gamma
    for what, norms, size in (("examples q_i", problem.row_norms_sq, problem.n_samples),
                              ("features p_j", problem.col_norms_sq, problem.n_features)):
        rank = np.linspace(0.0, 1.0, size)
        if gamma is not None:
            p = importance_probabilities(norms, problem.lam, gamma, problem.n_samples)
            curves.append(hv.Curve((rank, np.sort(p)[::-1] * size), kdims=["rank / size"], vdims=["probability × size"],
                                   label=f"importance, {what}"))
        w = weighted_probabilities(norms)
        curves.append(hv.Curve((rank, np.sort(w)[::-1] * size), kdims=["rank / size"], vdims=["probability × size"],
                               label=f"weighted ∝‖·‖², {what}").opts(line_dash="dashed"))
    curves.append(hv.HLine(1.0, label="uniform").opts(color="#999999", line_dash="dotted"))
    return hv.Overlay(curves).opts(
        hv.opts.Overlay(title="Sampling probabilities, sorted (× size: uniform = 1)", responsive=True,
                        height=280, logy=True, legend_position="right", show_grid=True, shared_axes=False,
                        framewise=True),
        hv.opts.Curve(logy=True, tools=["hover"], framewise=True))


def data_plots(analysis):
    """(rows histogram, columns histogram, sampling probabilities) or None."""
    if analysis is None:
        return None
    p = analysis.problem
    return nnz_histogram(p.row_nnz, "row"), nnz_histogram(p.col_nnz, "column"), sampling_plot(p)


class DataView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=Experiment)

    def _part(self, analysis, k):
        plots = data_plots(analysis)
        return plots[k] if plots is not None else hv.Curve([])

    def __panel__(self):
        # persistent panes whose objects change: re-rendered in place on each new analysis
        a = self.state.param.analysis
        rows, cols, probs = (pn.pane.HoloViews(pn.bind(self._part, a, k), sizing_mode="stretch_width")
                             for k in range(3))
        waiting = pn.pane.Markdown("*Loading the data…*", visible=pn.bind(lambda x: x is None, a))
        return pn.Column(waiting, pn.Row(rows, cols, sizing_mode="stretch_width"), probs,
                         sizing_mode="stretch_width")
