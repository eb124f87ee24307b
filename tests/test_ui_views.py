"""The dashboard's views, headless: the HoloViews objects and tables they draw."""
import io

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import pytest

from cdlab.ui import build_app
from cdlab.ui.runner import BOTH
from cdlab.ui.state import Experiment
from cdlab.ui.views import (ConvergenceView, DataView, FaceoffCard, Figure1View, ResultsView, TheoryCard)
from cdlab.ui.views.convergence import convergence_plot
from cdlab.ui.views.data_view import data_plots
from cdlab.ui.views.faceoff import faceoff_markdown, measured_winner
from cdlab.ui.views.figure1 import figure1_plot
from cdlab.ui.views.results import csv_bytes, results_table, to_target
from cdlab.ui.views.theory_card import comparison_markdown, theory_items

hv.extension("bokeh")


@pytest.fixture(scope="module")
def done():
    """A finished face-off on small dense data (n ≫ d)."""
    s = Experiment(source="synthetic", n_samples=200, n_features=10, normalise="mean", max_passes=30.0,
                   log10_tol=-8.0, methods=["primal_cd", "dual_cd"],
                   samplings={"primal_cd": BOTH, "dual_cd": BOTH}, auto_run=False)
    assert s.run(timeout=180)
    assert s.error == ""
    return s


def curves(overlay):
    return {el.label: el for el in overlay if isinstance(el, hv.Curve)}


def test_convergence_overlay_has_runs_and_dashed_bounds(done):
    labels = [r.label for r in done.runs()]
    ov = convergence_plot(done.traces, done.analysis, "passes", "gap", labels, done.target)
    got = curves(ov)
    for label in labels:
        run = got[label]
        trace = done.traces[label]
        np.testing.assert_allclose(run.dimension_values(1), trace.gap[trace.gap > 0])
        np.testing.assert_allclose(run.dimension_values(0), trace.passes[trace.gap > 0])
        bound = got[f"{label} bound"]
        opts = hv.Store.lookup_options("bokeh", bound, "style").kwargs
        assert opts["line_dash"] == "dashed" and opts["color"] == hv.Store.lookup_options(
            "bokeh", run, "style").kwargs["color"]
        # the bound is drawn over the run's range and is decreasing from its ε₀
        bx, by = bound.dimension_values(0), bound.dimension_values(1)
        assert bx[0] == 0 and bx[-1] == pytest.approx(trace.passes.iloc[-1])
        assert np.all(np.diff(by) <= 0) and by[0] > by[-1]
    assert any(isinstance(el, hv.HLine) for el in ov)


def test_convergence_axes_switch(done):
    labels = [r.label for r in done.runs()]
    label = labels[0]
    trace = done.traces[label]
    for xaxis, col in (("steps", "steps"), ("seconds", "time")):
        ov = convergence_plot(done.traces, done.analysis, xaxis, "gap", labels)
        c = curves(ov)[label]
        assert c.kdims[0].name == xaxis
        np.testing.assert_allclose(c.dimension_values(0), trace[col][trace.gap > 0])
        b = curves(ov)[f"{label} bound"].dimension_values(0)
        assert b[-1] == pytest.approx(trace[col].iloc[-1])  # mapped through the run's own trace
    # P − P* needs P*: without it, no curve is drawn; with it, primal − P*
    assert label not in curves(convergence_plot(done.traces, done.analysis, "passes", "subopt", labels))
    pstar = float(min(t.primal.min() for t in done.traces.values())) - 1e-9
    from dataclasses import replace
    ov = convergence_plot(done.traces, replace(done.analysis, p_star=pstar), "passes", "subopt", labels)
    np.testing.assert_allclose(curves(ov)[label].dimension_values(1), trace.primal - pstar)


def test_subopt_axis_computes_p_star():
    s = Experiment(source="synthetic", n_samples=100, n_features=10, methods=["sdca"],
                   samplings={"sdca": "uniform"}, yaxis="subopt", auto_run=False)
    assert s.run(timeout=180)
    from cdlab import reference_optimum
    assert s.analysis.p_star == pytest.approx(reference_optimum(s.analysis.problem), rel=1e-12)
    trace = s.traces["sdca (uniform)"]
    # certified: 0 ≤ P − P* ≤ gap at every checkpoint (up to P*'s own 1e-13 certificate)
    sub = trace.primal - s.analysis.p_star
    assert np.all(sub >= -1e-12) and np.all(sub <= trace.gap + 1e-12)


def test_faceoff_card_numbers(done):
    fo = done.analysis.faceoff
    p = done.analysis.problem
    assert fo.C_P == pytest.approx(float(p.col_nnz @ p.col_norms_sq))
    assert fo.C_D == pytest.approx(float(p.row_nnz @ p.row_norms_sq))
    text = faceoff_markdown(done.analysis, done.traces, done.run_status, done.target, done.runs())
    assert f"{fo.C_P:.4g}" in text and f"{fo.C_D:.4g}" in text
    assert f"{fo.T_P_importance:.4g}" in text and f"{fo.T_D_uniform:.4g}" in text
    assert "Predicted winner" in text and fo.prediction["method"] in text
    won = measured_winner(done.traces, done.run_status, done.target, done.runs())
    table = results_table(done.traces, done.run_status, done.target, done.runs())
    assert won["passes"] == pytest.approx(table["passes to target"].min())
    assert f"Measured winner:** <span class='cdlab-measured'>{won['label']}" in text


def test_faceoff_card_for_a_nonsmooth_loss():
    s = Experiment(source="synthetic", n_samples=60, n_features=6, loss="hinge", methods=["sdca"],
                   samplings={"sdca": "uniform"}, auto_run=False)
    s.start(solve=False)
    assert s.wait(60)
    text = faceoff_markdown(s.analysis, {}, {}, s.target, s.runs())
    assert "not smooth" in text and "Theorem 3" in text and "T, uniform" not in text


def test_results_table_and_csv(done):
    table = results_table(done.traces, done.run_status, done.target, done.runs())
    assert list(table.run) == [r.label for r in done.runs()]
    for _, row in table.iterrows():
        trace = done.traces[row.run]
        k = int(np.flatnonzero(trace.gap <= done.target)[0])
        # interpolated between the checkpoints around the target
        assert trace.passes.iloc[k - 1] <= row["passes to target"] <= trace.passes.iloc[k]
        assert trace.time.iloc[k - 1] <= row["seconds to target"] <= trace.time.iloc[k]
        assert row["final gap"] == trace.gap.iloc[-1]
    back = pd.read_csv(io.StringIO(csv_bytes(table, done.target).getvalue().decode()), comment="#")
    pd.testing.assert_frame_equal(back, table, check_dtype=False)


def test_to_target_interpolates_log_gap():
    trace = pd.DataFrame(dict(passes=[0.0, 1.0, 2.0], time=[0.0, 0.1, 0.2], steps=[0, 10, 20],
                              gap=[1.0, 1e-2, 1e-4]))
    assert to_target(trace, 1e-3)["passes"] == pytest.approx(1.5)
    assert to_target(trace, 1e-2)["steps"] == 10
    assert to_target(trace, 1e-5) is None


def test_theory_card_latex_and_values(done):
    items = theory_items(done.analysis, done.runs())
    assert [label for label, _, _ in items] == [r.label for r in done.runs()]
    for label, latex, text in items:
        assert latex.startswith("$$") and r"\epsilon" in latex
        assert done.analysis.bounds[label].source in text
    table = comparison_markdown(done.analysis, done.traces, done.target, done.runs())
    for label, _, _ in items:
        need = done.analysis.bounds[label].bound.passes(done.target)
        assert f"| {label} | {need:.4g} |" in table


def test_data_view_histograms_and_probabilities(done):
    layout = data_plots(done.analysis)
    rows, cols, probs = layout
    assert rows.dimension_values(1).sum() == done.analysis.problem.n_samples
    assert cols.dimension_values(1).sum() == done.analysis.problem.n_features
    imp = {el.label: el for el in probs if isinstance(el, hv.Curve)}
    q = imp["importance, examples q_i"].dimension_values(1)
    assert q.mean() == pytest.approx(1.0)  # probabilities × n sum to n
    assert np.all(np.diff(q) <= 0)


def test_figure1_marks_binary_data_only():
    s = Experiment(source="synthetic", n_samples=50, n_features=8, density=0.3, value_dist="binary",
                   normalise="none", methods=["sdca"], samplings={"sdca": "uniform"}, auto_run=False)
    s.start(solve=False)
    assert s.wait(60)
    assert s.analysis.binary
    ov = figure1_plot(s.analysis)
    mesh = [el for el in ov if isinstance(el, hv.QuadMesh)][0]
    points = [el for el in ov if isinstance(el, hv.Points)][0]
    assert tuple(points.array()[0]) == (50.0, float(s.analysis.problem.nnz))
    n_values, omega_values, grid = s.analysis.figure1
    z = mesh.dimension_values(2, flat=False)
    assert z.shape == grid.shape == (len(omega_values), len(n_values))
    finite = np.isfinite(grid)
    np.testing.assert_allclose(z[finite], np.log10(grid[finite]))
    s.normalise = "mean"  # no longer ±1
    assert s.wait(60)
    assert not s.analysis.binary
    assert not any(isinstance(el, hv.Points) for el in figure1_plot(s.analysis))


def test_views_render_headless(done):
    for view in (ConvergenceView, FaceoffCard, TheoryCard, DataView, Figure1View, ResultsView):
        model = pn.panel(view(state=done)).get_root()
        assert model is not None
    app = build_app(done)
    assert app.state is done


def test_sliders_are_throttled():
    """Dragging a slider (value) does not start runs; releasing it (value_throttled) does."""
    import param

    from cdlab.ui.views import Controls
    s = Experiment(auto_run=False)
    panel = pn.panel(Controls(state=s))
    sliders = {w.label: w for w in panel.select(pn.widgets.FloatSlider)}
    assert set(sliders) >= {"density", "row skew (power law)", "log10 λ", "max passes"}
    density = sliders["density"]
    jobs = s.jobs
    density.value = 0.5
    assert s.density == 1.0 and s.jobs == jobs
    with param.edit_constant(density):  # what the browser sends when the mouse is released
        density.value_throttled = 0.5
    assert s.density == 0.5 and s.jobs == jobs + 1
    # λ: under the 1/n rule the slider only shows the λ in use
    lam = sliders["log10 λ"]
    assert s.wait(60) and lam.disabled and s.lam_rule == "1/n"
    assert lam.value == s.log10_lam == round(np.log10(1 / s.n_samples), 2)
    s.lam_rule = "manual"
    assert not lam.disabled
    with param.edit_constant(lam):
        lam.value_throttled = -5.0
    assert s.log10_lam == -5.0
    assert s.wait(60) and s.analysis.problem.lam == pytest.approx(1e-5)


def test_plots_do_not_reevaluate_bounds(done, monkeypatch):
    """Bound curves are evaluated once on the worker: redrawing a streamed
    checkpoint must not call the theory layer (a sublinear bound takes ~0.4 s)."""
    for info in done.analysis.bounds.values():
        monkeypatch.setattr(info.bound, "curve", lambda *a: pytest.fail("bound re-evaluated in a view"))
    labels = [r.label for r in done.runs()]
    ov = convergence_plot(done.traces, done.analysis, "passes", "gap", labels, done.target)
    assert sum(1 for el in ov if isinstance(el, hv.Curve)) == 2 * len(labels)
