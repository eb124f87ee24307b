"""The dashboard's views, headless: the frames, HoloViews objects and tables they draw."""
import io

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import pytest

import cdlab
from cdlab.ui import build_app
from cdlab.ui.runner import BOTH, plan
from cdlab.ui.state import Experiment
from cdlab.ui.views import (ConvergenceView, DataView, FaceoffCard, Figure1View, ResultsView, TheoryCard)
from cdlab.ui.views.convergence import (KEY_BOUND, KEY_TARGET, TARGET_SPAN, ConvergenceFigure, convergence_plot,
                                        key_other)
from cdlab.ui.views.data_view import data_plots
from cdlab.ui.views.faceoff import faceoff_markdown, measured_winner
from cdlab.ui.views.figure1 import figure1_note, figure1_plot
from cdlab.ui.views.results import csv_bytes, results_table, settings_lines, to_target
from cdlab.ui.views.theory_card import comparison_markdown, theory_items
from cdlab.ui.views.visibility import is_displayed

hv.extension("bokeh")


@pytest.fixture(scope="module")
def done():
    """A finished face-off on small dense data (n ≫ d)."""
    s = Experiment(source="synthetic", n_samples=200, n_features=10, normalize="mean", max_passes=30.0,
                   log10_tol=-8.0, methods=["primal_cd", "dual_cd"],
                   samplings={"primal_cd": BOTH, "dual_cd": BOTH}, auto_run=False)
    assert s.run(timeout=180)
    assert s.error == ""
    return s


KEYS = (KEY_BOUND, KEY_TARGET, TARGET_SPAN, key_other("subopt"))


def curves(frame):
    return frame.lines


def bands(frame):
    return frame.bands


def first_seed(traces):
    """Each run's first seed alone (a one-seed trace is drawn as it is, without a band)."""
    return {label: t[t.seed == t.seed.min()].drop(columns="seed").reset_index(drop=True)
            for label, t in traces.items()}


def test_convergence_overlay_has_runs_and_dashed_bounds(done):
    labels = [r.label for r in done.runs()]
    traces = first_seed(done.traces)
    ov = convergence_plot(traces, done.analysis, "passes", "gap", labels, done.target)
    assert not bands(ov)
    got = curves(ov)
    for label in labels:
        run = got[label]
        trace = traces[label]
        np.testing.assert_allclose(run.y, trace.gap[trace.gap > 0])
        np.testing.assert_allclose(run.x, trace.passes[trace.gap > 0])
        bound = got[f"{label} bound"]
        assert bound.dash == "dashed" and bound.color == run.color and run.dash == "solid"
        # the bound is drawn over the run's range and is decreasing from its ε₀
        bx, by = bound.x, bound.y
        assert bx[0] == 0 and bx[-1] == pytest.approx(trace.passes.iloc[-1])
        assert np.all(np.diff(by) <= 0) and by[0] > by[-1]
    assert ov.target == done.target
    # the target's invisible span (solid) shares no dashed line's colour: a bound is told by its run's colour
    assert ov.lines[TARGET_SPAN].color not in {ln.color for ln in ov.lines.values() if ln.dash != "solid"}


def test_the_target_is_on_the_axis_when_no_run_reaches_it(done):
    """A target line does not widen the y range: with every run above the target, the plot's y range still
    reaches down to the target (the ill-conditioned preset's 1e-5 was off the axis)."""
    labels = [r.label for r in done.runs()]
    traces = first_seed(done.traces)
    lowest = min(float(t.gap[t.gap > 0].min()) for t in traces.values())
    target = lowest / 100
    ov = convergence_plot(traces, done.analysis, "passes", "gap", labels, target)
    plot = ConvergenceFigure()
    plot.show(ov)
    assert plot.figure.y_range.start <= target < lowest and plot.target.location == target


def test_convergence_axes_switch(done):
    labels = [r.label for r in done.runs()]
    label = labels[0]
    traces = first_seed(done.traces)
    trace = traces[label]
    for xaxis, col in (("steps", "steps"), ("seconds", "time")):
        ov = convergence_plot(traces, done.analysis, xaxis, "gap", labels)
        c = curves(ov)[label]
        assert ov.xaxis == xaxis
        np.testing.assert_allclose(c.x, trace[col][trace.gap > 0])
        b = curves(ov)[f"{label} bound"].x
        assert b[-1] == pytest.approx(trace[col].iloc[-1])  # mapped through the run's own trace
    # P − P* needs P*: without it, no curve is drawn; with it, primal − P*
    assert label not in curves(convergence_plot(traces, done.analysis, "passes", "subopt", labels))
    pstar = float(min(t.primal.min() for t in traces.values())) - 1e-9
    from dataclasses import replace
    ov = convergence_plot(traces, replace(done.analysis, p_star=pstar), "passes", "subopt", labels)
    np.testing.assert_allclose(curves(ov)[label].y, trace.primal - pstar)


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
    # one unit with the theory card: each face-off bound's passes to reach the target ε, from cdlab.theory
    from cdlab import theory
    for method in ("primal_cd", "dual_cd"):
        for sampling in ("uniform", "importance"):
            need = theory.bound(method, p, sampling).passes(done.target)
            assert f"{need:.4g}" in text
    pred = theory.bound(fo.prediction["method"], p, fo.prediction["sampling"]).passes(done.target)
    assert f"its bound reaches gap ≤ {done.target:.0e} in **{pred:.4g} passes**" in text
    assert text.count("per log(1/ε) factor") >= 3  # T is said to be the work per log factor where shown
    won = measured_winner(done.traces, done.run_status, done.target, done.runs())
    table = results_table(done.traces, done.run_status, done.target, done.runs())
    assert won["passes"] == pytest.approx(table["passes to target"].min())
    assert f"Measured winner:** <span class='cdlab-measured'>{won['label']}" in text


def test_faceoff_card_says_which_methods_its_prediction_compares(done):
    """A plan without both face-off methods (the ill-conditioned preset runs sdca and others) gets the
    prediction with a note naming the methods it compares and which of them the plan runs."""
    assert "prediction below compares" not in faceoff_markdown(done.analysis, {}, {}, done.target, done.runs())
    for methods, which in ((["sdca", "svrg"], "neither primal_cd nor dual_cd"), (["dual_cd", "sdca"], "only dual_cd")):
        runs = plan(methods, {m: "uniform" for m in methods}, {})
        text = faceoff_markdown(done.analysis, {}, {}, done.target, runs)
        assert f"runs {which}: the prediction below compares primal_cd with dual_cd" in text, text
        assert text.index("prediction below compares") < text.index("Predicted winner")


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
        parts = [t for _, t in done.traces[row.run].groupby("seed")]
        assert row.seeds == len(parts) == done.seeds == 3
        # each seed's value is interpolated between its checkpoints around the target; the row holds the
        # median over the seeds (monotone in each seed's value) and their min and max
        brackets = {c: [] for c in ("passes", "time")}
        for t in parts:
            k = int(np.flatnonzero(t.gap.to_numpy() <= done.target)[0])
            for c in brackets:
                brackets[c].append((t[c].iloc[k - 1], t[c].iloc[k]))
        for c, col in (("passes", "passes to target"), ("time", "seconds to target")):
            lo, hi = np.array(brackets[c]).T
            assert np.median(lo) <= row[col] <= np.median(hi)
        lo, hi = np.array(brackets["passes"]).T
        assert lo.min() <= row["min passes to target"] <= hi.min()
        assert lo.max() <= row["max passes to target"] <= hi.max()
        assert row["passes range"] == f"{row['min passes to target']:.3g}–{row['max passes to target']:.3g}"
        assert row["final gap"] == np.median([t.gap.iloc[-1] for t in parts])
    text = csv_bytes(table, done.target, settings_lines(done)).getvalue().decode()
    back = pd.read_csv(io.StringIO(text), comment="#")
    pd.testing.assert_frame_equal(back, table, check_dtype=False)
    header = [line for line in text.splitlines() if line.startswith("#")]
    p = done.analysis.problem
    assert header[0].startswith(f"# data = {done.source}; n = {p.n_samples}, d = {p.n_features}, nnz = {p.nnz}")
    assert f"loss = {p.loss}; lambda = {float(p.lam)!r}" in header[1]  # repr: the float exactly
    assert f"seeds = {', '.join(str(done.seed + k) for k in range(done.seeds))}" in header[2]
    assert header[3].startswith("# versions: cdlab ") and "numba" in header[3]


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
                   normalize="none", methods=["sdca"], samplings={"sdca": "uniform"}, auto_run=False)
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
    # divided by the mean example norm: every nonzero ±c, the same C_P/C_D, still marked
    s.normalize = "mean"
    assert s.wait(60)
    assert s.analysis.binary and len(set(np.abs(s.analysis.problem.X.data))) == 1
    assert any(isinstance(el, hv.Points) for el in figure1_plot(s.analysis))
    s.normalize = "rows"  # unit rows of unequal nonzero counts: nonzeros of different sizes
    assert s.wait(60)
    assert not s.analysis.binary
    assert not any(isinstance(el, hv.Points) for el in figure1_plot(s.analysis))
    assert "not binary" in figure1_note(s.analysis)


def test_registry_binary_data_are_marked_under_the_default_normalisation():
    """mushrooms (0/1 features, 22 per example) divided by its mean norm is binary up to a scale."""
    s = Experiment(source="mushrooms", methods=["sdca"], samplings={"sdca": "uniform"}, auto_run=False)
    assert s.normalize == "mean"
    s.start(solve=False)
    assert s.wait(120) and s.error == ""
    assert s.analysis.binary and "star marks this data" in figure1_note(s.analysis)


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
    assert len([label for label in curves(ov) if label not in KEYS]) == 2 * len(labels)
    assert len(bands(ov)) == len(labels)


def test_convergence_legend_exists_from_the_first_frame(done):
    """BokehJS cannot lay out a legend that first appears after the plot was drawn ("cannot find a
    view for Legend" on every update): the empty first frame must already have labelled key entries."""
    for analysis, traces in ((None, {}), (done.analysis, {})):
        got = curves(convergence_plot(traces, analysis, "passes", "gap", [], 1e-5))
        assert set(got) == {KEY_BOUND, KEY_TARGET}
        for key in got.values():  # one NaN point: a line sample in the legend, nothing drawn
            assert len(key.x) == 1 and np.isnan(key.y).all() and key.legend
    labels = [r.label for r in done.runs()]
    got = curves(convergence_plot(done.traces, done.analysis, "passes", "subopt", labels))
    assert KEY_BOUND in got and KEY_TARGET not in got  # no target line on the P − P* axis


def test_a_bound_on_another_quantity_is_drawn_apart(done):
    """A bound on P − P* does not bound the gap: on the gap axis it is dash-dot with its own key (the
    ill-conditioned preset's accel_appa gap sat above its dashed P − P* bound, as if broken)."""
    from dataclasses import replace
    labels = [r.label for r in done.runs()]
    label = labels[0]
    bounds = {**done.analysis.bounds, label: replace(done.analysis.bounds[label], quantity="subopt")}
    analysis = replace(done.analysis, bounds=bounds, p_star=float(min(t.primal.min() for t in done.traces.values())))

    def dash(el):
        return el.dash
    got = curves(convergence_plot(done.traces, analysis, "passes", "gap", labels, done.target))
    assert dash(got[f"{label} bound on P − P*"]) == "dashdot" and key_other("subopt") in got
    assert dash(got[f"{labels[1]} bound"]) == "dashed"
    # on the P − P* axis both kinds bound what is drawn (P − P* ≤ gap): all dashed, no extra key
    got = curves(convergence_plot(done.traces, analysis, "passes", "subopt", labels))
    assert dash(got[f"{label} bound"]) == "dashed" and dash(got[f"{labels[1]} bound on gap"]) == "dashed"
    assert key_other("subopt") not in got


def test_histograms_of_equal_and_skewed_counts():
    from cdlab.ui.views.data_view import nnz_histogram
    # dense data: every row has 100 nonzeros -> linear bins from 0, one bar at 100, said in the label
    h = nnz_histogram(np.full(500, 100), "row")
    opts = hv.Store.lookup_options("bokeh", h, "plot").kwargs
    assert not opts["logx"] and opts["xlabel"] == "nonzeros per row (all 100)" and opts["title"] == "500 rows"
    edges, freq = h.edges, h.dimension_values(1)
    assert edges[0] < 0 < 100 - 0.5 < edges[-1] and freq.sum() == 500
    assert edges[np.flatnonzero(freq)[0]] <= 100 <= edges[np.flatnonzero(freq)[0] + 1]
    # a power law over three decades -> log bins with explicit, non-crowded ticks; empty lines counted apart
    counts = np.concatenate([np.random.default_rng(0).zipf(1.8, 2000).clip(1, 3000), np.zeros(7, int)])
    h = nnz_histogram(counts, "column")
    opts = hv.Store.lookup_options("bokeh", h, "plot").kwargs
    assert opts["logx"] and opts["title"] == "2,007 columns, 7 empty"
    assert [t for t, _ in opts["xticks"]] == [1, 10, 100, 1000]
    assert h.dimension_values(1).sum() == 2000
    # one to two decades: 1-2-5 ticks (Bokeh's own log ticker piled up 10, 20, 30, 40, 50 at the end)
    opts = hv.Store.lookup_options("bokeh", nnz_histogram(np.r_[np.ones(399, int), 40], "column"), "plot").kwargs
    assert [t for t, _ in opts["xticks"]] == [1, 2, 5, 10, 20]


def test_results_table_formats_every_number_and_fits(done):
    from cdlab.ui.views.results import SHOWN
    tab = pn.panel(ResultsView(state=done)).select(pn.widgets.Tabulator)[0]
    assert list(tab.value.columns) == SHOWN
    # every number formatted (passes→ε was printed as 10.985253); the seeds' range is text
    assert set(tab.formatters) == set(SHOWN[1:]) and tab.formatters["passes range"] == {"type": "plaintext"}
    assert tab.value["passes range"].str.fullmatch(r"[0-9.e+-]+–[0-9.e+-]+").all()
    assert tab.layout == "fit_columns" and sum(float(w.rstrip("%")) for w in tab.widths.values()) < 100
    # the last column fills the rest of the width, and no empty column for popups (Tabulator adds one
    # with container_popup) shows as a sliver at the right edge
    assert SHOWN[-1] not in tab.widths and set(tab.widths) == set(SHOWN[:-1]) and not tab.container_popup


def seeded(*hits):
    """One trace per seed, gap 1 -> 1e-8 linearly in log and reaching 1e-5 at hits[seed] passes."""
    parts = []
    for seed, hit in enumerate(hits):
        passes = np.linspace(0.0, 2 * hit, 41)
        parts.append(pd.DataFrame(dict(passes=passes, time=passes / 10, steps=passes * 100,
                                       gap=10.0 ** (-5.0 * passes / hit), seed=seed)))
    return pd.concat(parts, ignore_index=True)


def test_faceoff_verdict_is_a_tie_when_the_seed_ranges_overlap(done):
    """The default scenario's 11.095 vs 11.108 passes was called a win: with overlapping seed ranges
    the card says tie, with ranges apart it names the winner, with one seed it names a lead only."""
    runs = [r for r in done.runs() if r.sampling == "uniform"]
    primal, dual = (next(r.label for r in runs if r.method == m) for m in ("primal_cd", "dual_cd"))
    status = {r.label: "converged" for r in runs}
    tie = {primal: seeded(11.0, 11.2, 11.4), dual: seeded(11.1, 10.9, 11.3)}
    text = faceoff_markdown(done.analysis, tie, status, 1e-5, runs)
    assert "a tie within seed-to-seed spread" in text and "wins" not in text
    assert "10.9–11.3" in text and "11–11.4" in text  # both ranges shown (median, then min–max)
    won = measured_winner(tie, status, 1e-5, runs)
    assert won["verdict"].kind == "tie" and won["verdict"].overlapping
    apart = {primal: seeded(11.5, 11.6, 11.7), dual: seeded(11.1, 10.9, 11.3)}
    text = faceoff_markdown(done.analysis, apart, status, 1e-5, runs)
    assert f"Measured winner:** <span class='cdlab-measured'>{dual}</span>" in text
    assert "do not overlap" in text and "the dual side wins, as predicted" in text
    one = {primal: seeded(11.108), dual: seeded(11.095)}
    text = faceoff_markdown(done.analysis, one, status, 1e-5, runs)
    assert "one seed measures no spread" in text and "wins" not in text and "So far" not in text
    running = {r.label: "running" for r in runs}  # later seeds still to come: the verdict is provisional
    assert "So far: seeds are still running" in faceoff_markdown(done.analysis, one, running, 1e-5, runs)



def test_faceoff_card_says_when_the_compared_methods_did_not_run(done):
    """The ill-conditioned preset runs neither primal_cd nor dual_cd: the card says the comparison's
    methods did not run, not that a face-off run missed the target (sdca's run is no face-off)."""
    from cdlab.ui.presets import values_of
    preset = values_of("ill-conditioned κ≫n")
    runs = plan(preset["methods"], preset["samplings"], {})
    assert runs and not any(r.method in ("primal_cd", "dual_cd") for r in runs)
    far = {r.label: seeded(6.0, 6.3, 6.6).groupby("seed").head(15) for r in runs}  # stopped at gap ≈ 1e-3.5
    text = faceoff_markdown(done.analysis, far, {r.label: "max_passes" for r in runs}, 1e-5, runs)
    assert "primal_cd and dual_cd, the methods this comparison is about, did not run" in text
    assert "reached the target" not in text and "more passes" not in text
    # one of them in the plan: the missing one is named
    one = [r for r in done.runs() if r.method == "dual_cd"] + runs
    far.update({r.label: seeded(6.0).head(15) for r in one if r.method == "dual_cd"})
    text = faceoff_markdown(done.analysis, far, {r.label: "max_passes" for r in one}, 1e-5, one)
    assert "did not run" not in text.split("**Measured")[1] and "within its budget" in text

def test_staged_method_draws_only_its_stage_outputs():
    """An APPA trace's mid-stage rows (``inner``) show the inner solver's point, which can sit far above
    F(0): the curve goes through the stage outputs only."""
    x = np.arange(9.0)
    inner = (x % 3) != 0  # stages of three passes
    gap = np.where(inner, 1e3, 10.0 ** -x)
    trace = pd.DataFrame(dict(passes=x, steps=100 * x, time=x + 1e-3, gap=gap, inner=inner, seed=0))
    label = "appa (uniform)"
    drawn = curves(convergence_plot({label: trace}, None, "passes", "gap", [label]))[label]
    np.testing.assert_array_equal(drawn.x, x[~inner])
    np.testing.assert_allclose(drawn.y, 10.0 ** -x[~inner])


def test_seed_band_is_the_median_and_the_range_of_the_seeds(done):
    """Three seeds on one grid, gap = 10^(-k·passes/2) for k = 1, 2, 3 (in any order): the drawn curve
    is the k = 2 seed, the band runs from k = 3 to k = 1."""
    x = np.linspace(0.0, 10.0, 21)
    trace = pd.concat([pd.DataFrame(dict(passes=x, steps=100 * x, time=x / 5 + 1e-3, gap=10.0 ** (-k * x / 2),
                                         seed=seed)) for seed, k in enumerate((3, 1, 2))], ignore_index=True)
    label = "dual_cd (uniform)"
    ov = convergence_plot({label: trace}, None, "passes", "gap", [label], 1e-5)
    median = curves(ov)[label]
    grid = median.x
    assert set(x) <= set(grid)  # every checkpoint, and a finer grid between them
    np.testing.assert_allclose(median.y, 10.0 ** (-grid))
    band = bands(ov)[f"{label} seeds"]
    np.testing.assert_array_equal(band.x, grid)
    np.testing.assert_allclose(band.lo, 10.0 ** (-1.5 * grid))
    np.testing.assert_allclose(band.hi, 10.0 ** (-0.5 * grid))
    assert band.color == median.color
    assert "Median of 3 seeds" in ov.title
    # a seed that stopped early (converged at passes = 5) stays where it stopped: from x = 7.5 on, its held
    # 10^-7.5 is the median of (10^-7.5, 10^(-x/2), 10^(-x))
    short = trace[(trace.seed != 0) | (trace.passes <= 5.0)]
    ov = convergence_plot({label: short}, None, "passes", "gap", [label], 1e-5)
    median = curves(ov)[label]
    xs, ys = median.x, median.y
    assert xs.max() == 10.0 and bands(ov)[f"{label} seeds"].x.max() == 10.0
    np.testing.assert_allclose(ys[xs >= 7.5], 10.0 ** -7.5)
    np.testing.assert_allclose(ys[(xs > 5.0) & (xs < 7.5)], 10.0 ** -xs[(xs > 5.0) & (xs < 7.5)])
    # on the seconds axis the seeds of a fast run may not overlap in time at all: the median still shows
    apart = trace.assign(time=trace.time + trace.seed * 10.0)
    ov = convergence_plot({label: apart}, None, "seconds", "gap", [label], 1e-5, logx=True)
    assert len(curves(ov)[label].x) > 5
    # the seconds axis is on a log scale by default in the page (0 s cannot be drawn there)
    ov = convergence_plot({label: trace}, None, "seconds", "gap", [label], 1e-5, logx=True)
    assert ov.logx
    assert curves(ov)[label].x.min() > 0
    assert not convergence_plot({label: trace}, None, "passes", "gap", [label], 1e-5, logx=True).logx
    assert done.logx and "different units" in convergence_plot({label: trace}, None, "steps", "gap", [label]).xlabel


def test_faceoff_card_explains_a_contradiction_and_a_one_sided_run(done):
    """Runs that overturn the prediction are shown with the reason; one side alone is no face-off."""
    fo = done.analysis.faceoff
    assert fo.prediction["method"] == "dual_cd"  # n ≫ d
    runs = done.runs()

    def trace(hit):  # three seeds: gap 1 -> 1e-8 linearly in log, reaching 1e-5 at hit, 1.05 hit, 1.1 hit
        return seeded(hit, 1.05 * hit, 1.1 * hit)
    traces = {r.label: trace(2.0 if r.method == "primal_cd" else 6.0) for r in runs}
    status = {r.label: "converged" for r in runs}
    text = faceoff_markdown(done.analysis, traces, status, 1e-5, runs)
    assert "**the primal side wins, not the predicted dual side**" in text
    assert "worst-case bounds" in text and f"{fo.prediction['ratio']:.3g}" in text
    # the predicted side wins, with the other sampling: said, with how close the two bounds are
    pred = fo.prediction["sampling"]
    other = "uniform" if pred == "importance" else "importance"
    traces = {r.label: trace(2.0 if (r.method, r.sampling) == ("dual_cd", other) else 6.0) for r in runs}
    text = faceoff_markdown(done.analysis, traces, status, 1e-5, runs)
    ratio = max(fo.T_D_uniform, fo.T_D_importance) / min(fo.T_D_uniform, fo.T_D_importance)
    assert "as predicted" in text and f"with {other} sampling rather than the predicted {pred}" in text
    assert f"factor {ratio:.3g}" in text
    dual_only = [r for r in runs if r.method == "dual_cd"]
    text = faceoff_markdown(done.analysis, traces, status, 1e-5, dual_only)
    assert "only the dual side ran" in text and "as predicted" not in text
    # nothing reached the target: "yet" while running, "within its budget" once finished
    far = {r.label: trace(6.0).groupby("seed").head(15) for r in runs}  # stopped at gap ≈ 1e-3.5
    assert "yet" in faceoff_markdown(done.analysis, far, {r.label: "running" for r in runs}, 1e-5, runs)
    done_text = faceoff_markdown(done.analysis, far, {r.label: "max_passes" for r in runs}, 1e-5, runs)
    assert "within its budget" in done_text and "yet" not in done_text


def test_long_bounds_are_set_smaller():
    from cdlab.ui.analysis import BoundInfo
    from cdlab.ui.views.theory_card import latex_source
    short = latex_source(BoundInfo("a", latex=r"T(\epsilon) = n \log\frac{1}{\epsilon}"))
    assert short == r"$$T(\epsilon) = n \log\frac{1}{\epsilon}$$"
    long = latex_source(BoundInfo("b", latex="$$" + r"\frac{x}{y} + " * 40 + "1$$"))
    assert long.startswith(r"$$\scriptsize ") and long.count("$$") == 2


def test_upload_widget_limits_size_in_the_browser_and_reads_text_and_bytes(tmp_path):
    """A FileDropper: the browser refuses a file over the limit (FileInput sent any file whole, and one
    over the websocket's 20 MB message limit closed the session); text/* files arrive as str."""
    from cdlab.ui import datasource
    from cdlab.ui.views import Controls
    s = Experiment(auto_run=False)
    drop = pn.panel(Controls(state=s)).select(pn.widgets.FileDropper)[0]
    assert drop.max_file_size == f"{datasource.UPLOAD_LIMIT_MB}MB" and not drop.multiple
    assert drop.chunk_size < 20 * 10**6
    body = "\n".join(f"{1 if i % 2 else -1} 1:{i / 10:.1f} 3:1" for i in range(20)) + "\n"
    drop.value = {"mine.txt": body}  # decoded by Panel (text/plain)
    assert s.upload_message == "✅ Loaded mine.txt." and s.source == datasource.UPLOAD
    first = s.upload_hash
    drop.value = {"again.svm": body.replace("3:1", "2:1").encode()}
    assert s.upload_message == "✅ Loaded again.svm." and s.upload_hash != first
    drop.value = {}  # the user removed the file: nothing changes
    assert s.upload_message == "✅ Loaded again.svm."
    drop.value = {"bad.svm": b"1 1:x\n"}
    assert s.upload_message.startswith("❌ Not loaded: could not read bad.svm") and s.source == datasource.UPLOAD


def test_density_slider_shows_small_densities():
    from bokeh.models.formatters import PrintfTickFormatter

    from cdlab.ui.views import Controls
    s = Experiment(auto_run=False, density=0.005)
    density = {w.label: w for w in pn.panel(Controls(state=s)).select(pn.widgets.FloatSlider)}["density"]
    assert density.value == 0.005 and density.step == 1e-4
    # the preset's 0.005 read "0.01" at the old 3-decimal step
    assert isinstance(density.format, PrintfTickFormatter) and density.format.format % 0.005 == "0.005"


def test_convergence_axes_follow_each_frame(done):
    """The plot's ranges follow the curves frame by frame (a plot that kept the first frame's x range cut
    the curves of a switch to longer runs at the old end)."""
    labels = [r.label for r in done.runs()]
    short = {k: t[t.passes <= 5.0] for k, t in done.traces.items()}
    plot = ConvergenceFigure()
    for traces in (short, done.traces, short):
        plot.show(convergence_plot(traces, done.analysis, "passes", "gap", labels, done.target))
        x_range, y_range = plot.figure.x_range, plot.figure.y_range
        assert x_range.end == pytest.approx(max(t.passes.max() for t in traces.values()))
        assert y_range.start <= min(t.gap[t.gap > 0].min() for t in traces.values())



def test_the_figure_redraws_in_place(done):
    """A new frame changes the data of the figure's renderers: a run keeps its renderer, a run the frame
    lacks is hidden with its legend item gone, and one that comes back shows in the same renderer."""
    labels = [r.label for r in done.runs()]
    plot = ConvergenceFigure()
    plot.show(convergence_plot(done.traces, done.analysis, "passes", "gap", labels, done.target))
    renderers = {r.name: r for r in plot.figure.renderers}

    def shown():
        return {r.name for r in plot.figure.renderers if r.visible and r.name in labels}

    def legend():
        return [item.label.value for item in plot.legend.items if item.visible]
    assert shown() == set(labels) and legend() == labels + [KEY_BOUND, KEY_TARGET]
    assert len(renderers[f"{labels[0]} seeds"].data_source.data["y"]) > 2
    some = {label: done.traces[label] for label in labels[:2]}
    plot.show(convergence_plot(some, done.analysis, "passes", "gap", labels[:2], done.target))
    assert shown() == set(labels[:2]) and legend() == labels[:2] + [KEY_BOUND, KEY_TARGET]
    assert not renderers[f"{labels[3]} bound"].visible and not renderers[f"{labels[3]} seeds"].visible
    plot.show(convergence_plot(done.traces, done.analysis, "passes", "gap", labels, done.target))
    assert shown() == set(labels) and {r.name: r for r in plot.figure.renderers} == renderers
    assert legend() == labels + [KEY_BOUND, KEY_TARGET]
    # a run the legend has never held goes into its place, before the keys
    later = {labels[0]: done.traces[labels[0]], "extra (uniform)": done.traces[labels[1]]}
    plot.show(convergence_plot(later, done.analysis, "passes", "gap", list(later), done.target))
    assert legend() == [labels[0], "extra (uniform)", KEY_BOUND, KEY_TARGET]
    with pytest.raises(ValueError, match="logx"):
        plot.show(convergence_plot(done.traces, done.analysis, "seconds", "gap", labels, done.target, logx=True))

def test_the_seconds_axis_is_log_by_default_in_a_plot_of_its_own(done):
    """Bokeh cannot turn a linear axis into a log one in place: the view builds a new plot when the x
    axis changes between linear and log (seconds are log by default, passes and steps never)."""
    view = ConvergenceView(state=done)
    pn.panel(view).get_root()
    assert done.logx and not view.log_seconds
    try:
        done.xaxis = "seconds"
        assert view.log_seconds
        from bokeh.models import LogScale
        figure = view._pane(view.log_seconds).object
        assert isinstance(figure.x_scale, LogScale)
        assert "log scale" in figure.xaxis[0].axis_label
        done.logx = False
        assert not view.log_seconds
        done.param.update(logx=True, xaxis="steps")
        assert not view.log_seconds
    finally:
        done.param.update(xaxis="passes", logx=True)


def curve_colors(overlay):
    return {label: el.color
            for label, el in curves(overlay).items() if "(" in label and "bound" not in label}


def test_a_runs_colour_does_not_change_when_another_method_is_added(done):
    """Colours come from method × sampling, not from a run's place in the plan: dual_cd's runs keep theirs
    when primal_cd is ticked (and goes first in the plan)."""
    s = Experiment(source="synthetic", n_samples=200, n_features=10, methods=["dual_cd"],
                   samplings={"dual_cd": BOTH}, auto_run=False)
    view = ConvergenceView(state=s)

    def colors():
        labels = {r.label for r in s.runs()}
        traces = {k: v for k, v in done.traces.items() if k in labels}
        return curve_colors(view._plot(False, traces, done.analysis, "passes", "gap", -5.0))

    alone = colors()
    assert set(alone) == {"dual_cd (uniform)", "dual_cd (importance)"}
    s.param.update(methods=["primal_cd", "dual_cd"], samplings={"primal_cd": BOTH, "dual_cd": BOTH})
    assert [r.method for r in s.runs()][0] == "primal_cd"
    both = colors()
    assert len(both) == 4 and len(set(both.values())) == 4  # every run its own colour
    assert {k: both[k] for k in alone} == alone
    s.param.update(methods=["primal_cd"], samplings={"primal_cd": BOTH})
    assert curve_colors(view._plot(False, {k: v for k, v in done.traces.items() if k.startswith("primal")},
                                   done.analysis, "passes", "gap", -5.0)) == {k: v for k, v in both.items() if k.startswith("primal")}


def test_run_colors_are_fixed_by_method_and_sampling():
    from cdlab import METHODS
    from cdlab.ui.runner import sampling_choices
    from cdlab.ui.views.convergence import run_color
    pairs = [(m, s) for m in sorted(METHODS) for s in sampling_choices(m) if s in ("uniform", "importance")]
    colors = {p: run_color(*p) for p in pairs}
    # one method's two samplings differ, and the page's default contenders share no colour
    for m in METHODS:
        if (m, "importance") in colors:
            assert colors[(m, "uniform")] != colors[(m, "importance")]
    contenders = [colors[(m, s)] for m in ("primal_cd", "dual_cd", "sdca") for s in ("uniform", "importance")]
    assert len(set(contenders)) == len(contenders)
    with pytest.raises(ValueError, match="no_such_method"):
        run_color("no_such_method", "uniform")


def test_status_line_leaves_a_refused_loss_to_the_banner():
    from cdlab.ui.views.convergence import status_markdown
    status = {"primal_cd (uniform)": "refused", "sdca (uniform)": "refused", "dual_cd (uniform)": "converged"}
    message = {"primal_cd (uniform)": "primal_cd needs a smooth loss; try loss='smoothed_hinge'",
               "sdca (uniform)": "batch size 900 exceeds the 400 examples"}
    md = status_markdown("finished", False, status, message, [], "", 3, explained={"primal_cd (uniform)"})
    assert "- ⚠ primal_cd (uniform): not run (see the message at the top)" in md.splitlines()
    assert "loss=" not in md and "smoothed_hinge" not in md
    # a refusal the banner does not explain keeps its reason here
    assert "sdca (uniform) cannot run:** batch size 900 exceeds the 400 examples" in md
    assert "- dual_cd (uniform): converged" in md


def test_status_line_of_the_page_names_runs_refused_for_the_loss():
    """In the page: hinge with primal_cd and dual_cd, whose refusals the banner explains."""
    s = Experiment(source="synthetic", n_samples=60, n_features=5, loss="hinge", methods=["primal_cd", "sdca"],
                   samplings={"primal_cd": "uniform", "sdca": "uniform"}, seeds=1, max_passes=2.0, auto_run=False)
    assert s.run(timeout=120)
    view = ConvergenceView(state=s)
    md = view._status(s.phase, s.running, s.run_status, s.run_message, s.cached, s.error, s.jobs, s.loss)
    assert "- ⚠ primal_cd (uniform): not run (see the message at the top)" in md
    assert "loss=" not in md and "sdca (uniform): " in md and "sdca (uniform): not run" not in md


def test_a_new_analysis_of_the_same_data_redraws_nothing(done):
    """A job answered from the caches brings a new Analysis of the same data: no plot is redrawn, no
    bound retypeset, no frame sent; a new λ redraws the sampling probabilities only, a new trace the curves."""
    from dataclasses import replace
    views = [cls(state=done) for cls in (ConvergenceView, DataView, Figure1View, TheoryCard)]
    for view in views:
        pn.panel(view).get_root()
    convergence, data, figure1, theory = views
    sent = []
    draw = convergence._figure.show
    convergence._figure.show = lambda frame: (sent.append(frame), draw(frame))
    shown = [figure1._pane.object, [p.object for p in data._panes], list(theory._bounds.objects)]
    original, traces = done.analysis, done.traces
    try:
        done.analysis = replace(original)
        assert sent == []
        assert figure1._pane.object is shown[0]
        assert all(p.object is old for p, old in zip(data._panes, shown[1]))
        assert all(a is b for a, b in zip(theory._bounds.objects, shown[2])) and theory._bounds.objects
        done.analysis = replace(original, problem_key=original.problem_key + ("another λ",))
        assert [p.object is old for p, old in zip(data._panes, shown[1])] == [True, True, False]
        assert figure1._pane.object is shown[0] and sent == []
        label = next(iter(traces))
        done.traces = {**traces, label: traces[label].iloc[:-3]}
        assert len(sent) == 1 and label in curves(sent[0])
    finally:
        done.param.update(analysis=original, traces=traces)


def test_theory_card_shows_the_bounds_once_the_analysis_is_in():
    s = Experiment(source="synthetic", n_samples=60, n_features=6, methods=["dual_cd"],
                   samplings={"dual_cd": "uniform"}, seeds=1, auto_run=False)
    card = TheoryCard(state=s)
    pn.panel(card).get_root()

    def said():
        return " ".join(str(o.object) for o in card._bounds.objects if is_displayed(o))
    assert "Analysing the data" in said()
    s.error = "something the banner explains"
    assert "Not available" in said()
    s.start(solve=False)
    assert s.wait(60) and s.analysis is not None
    assert "**dual_cd (uniform)**" in said() and "Analysing" not in said() and "Not available" not in said()


def test_theory_card_hides_and_shows_again_the_same_panes(done):
    """A method unticked and ticked again (its runs then come from the cache): its bound's panes are
    hidden and shown again, the same panes in the same column, not typeset again."""
    card = TheoryCard(state=done)
    pn.panel(card).get_root()
    methods, samplings = list(done.methods), dict(done.samplings)

    def shown():
        return [o for o in card._bounds.objects if is_displayed(o)]
    before, layout = shown(), list(card._bounds.objects)
    assert any("primal_cd (uniform)" in str(o.object) for o in before)
    with done.quiet():  # the plan changes, the analysis stays (no job: its runs would come from the cache)
        try:
            done.param.update(methods=["dual_cd"], samplings={"dual_cd": samplings["dual_cd"]})
            assert not any("primal_cd" in str(o.object) for o in shown()) and shown()
            assert list(card._bounds.objects) == layout
            # hidden by their style, not by `visible` (which makes the browser lay out the whole page)
            assert all(o.visible for o in layout) and len(shown()) < len(layout)
            done.param.update(methods=methods, samplings=samplings)
            # the same panes again (in the plan's order, which the page's controls may have changed)
            assert {id(o) for o in shown()} == {id(o) for o in before} and len(card._bounds.objects) == len(layout)
            assert [o.object.split("**")[1] for o in shown() if o.object.startswith("**")] == [
                r.label for r in done.runs()]
        finally:
            done.param.update(methods=methods, samplings=samplings)


def test_show_in_order_keeps_the_recent_hidden_items_only():
    """A container whose wanted items keep changing holds the wanted ones, then at most keep_hidden of the
    others, the most recently shown first; without keep_hidden it keeps them all."""
    from cdlab.ui.views.visibility import show_in_order

    class Item:
        visible = True

    items = [Item() for _ in range(10)]
    held = []
    for k in range(10):  # one new item wanted each time: the column would gather all ten
        held, changed = show_in_order(held, [items[k]], keep_hidden=3)
        assert changed and held[0] is items[k] and held[0].visible
    assert held == [items[9], items[8], items[7], items[6]] and not any(i.visible for i in held[1:])
    every, _ = show_in_order(items[1:], [items[0]])
    assert len(every) == 10 and every[0] is items[0]


def test_the_first_page_does_not_load_holoviews():
    """The convergence plot is plain Bokeh; HoloViews (about a second to import and load its backend) is
    loaded by the first plot drawn with it, once the data are analysed, not by building the page."""
    import subprocess
    import sys
    code = ("import sys; from cdlab.ui import build_app; build_app(); "
            "assert 'holoviews' not in sys.modules, 'building the page imported holoviews'; "
            "assert 'sympy' not in sys.modules and 'cdlab.theory' not in sys.modules, 'building the page imported sympy'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)


# ------------------------------------------------------------ the parallel cost model

def test_parallel_cost_card_evaluates_section_3_only_when_open(done):
    """ASDCA's cost model (Section 3) on the page's data, for the reader's s and m: nothing is evaluated
    while the card is closed; open, its table is theory.parallel_cost's numbers and its note names
    theory.asdca_partition's split; a change of s re-evaluates it."""
    from cdlab import theory
    from cdlab.ui.views import ParallelCostView
    view = ParallelCostView(state=done)
    pn.panel(view).get_root()
    view.machines = 8
    assert view.thread is None and view._note.object == ""
    view._card.collapsed = False
    view.thread.join(60)
    eps = 10.0 ** done.log10_target
    expected = theory.parallel_cost(done.analysis.problem, 8, 64, eps)
    rows = [line.strip("|").split("|") for line in view._table.object.splitlines()[2:]]
    assert [r[0].strip() for r in rows] == [f"{m}, {p}" for m, p in zip(expected.method, expected.partition)]
    number = lambda text: float(text.strip().replace(",", ""))  # noqa: E731
    np.testing.assert_allclose([number(r[2]) for r in rows], expected.iterations, rtol=1e-2)
    np.testing.assert_allclose([number(r[1].split("<br>")[1]) for r in rows], expected.communication, rtol=1e-2)
    split = theory.asdca_partition(done.analysis.problem, 8, 64)
    assert f"cheaper split is **{split}**" in view._note.object and "s = 8 machines" in view._note.object
    view.machines = 1024
    if view.thread.is_alive():
        view.thread.join(60)
    assert "s = 1024 machines" in view._note.object


def test_parallel_cost_says_why_it_does_not_apply():
    """A mini-batch larger than n, or a loss whose bounds the model multiplies do not exist (hinge: no
    smoothness for ASDCA's bound), gets the reason instead of a table."""
    from cdlab.ui.views.parallel_cost import cost_table
    X = np.random.default_rng(0).standard_normal((30, 5))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    table, note = cost_table(cdlab.Problem(X, y, loss="logistic", lam=0.1), 4, 31, 1e-6)
    assert table is None and "Not available" in note and "31" in note
    table, note = cost_table(cdlab.Problem(X, y, loss="hinge", lam=0.1), 4, 8, 1e-6)
    assert table is None and "Not available" in note


def test_banner_waiting_note_and_figure1_show_and_hide_by_their_display():
    """The banner, the data card's waiting note and Figure 1's map are shown and hidden by their CSS
    display, never by `visible` (a changed visible makes the browser lay out the whole page): the
    banner is shown for an error and gone with it, the note until the analysis is in, the map after."""
    from cdlab.ui.views import Banner
    s = Experiment(source="synthetic", n_samples=60, n_features=6, methods=["dual_cd"],
                   samplings={"dual_cd": "uniform"}, seeds=1, auto_run=False)
    banner, data, figure1 = Banner(state=s), DataView(state=s), Figure1View(state=s)
    for view in (banner, data, figure1):
        pn.panel(view).get_root()
    panes = (banner._column, data._waiting, figure1._box)

    def displayed():
        assert all(p.visible for p in panes)
        return [is_displayed(p) for p in panes]
    assert displayed() == [False, True, False] and "Loading" in data._waiting.object
    s.error = "something went wrong"
    assert displayed() == [True, True, False] and "Not available" in data._waiting.object
    s.error = ""
    s.start(solve=False)
    assert s.wait(60) and s.analysis is not None and s.analysis.figure1 is not None
    assert displayed() == [False, False, True]


def test_sampling_plot_draws_a_bounded_profile_of_each_sorted_curve():
    """At most PROFILE_POINTS points per sorted probability curve (every one of n = 50 000 made a 3 s browser task),
    with the largest and smallest probabilities kept and the ranks spanning [0, 1]; small sizes drawn whole."""
    from cdlab.ui.views.data_view import PROFILE_POINTS, sorted_profile
    rng = np.random.default_rng(0)
    probs = rng.pareto(1.5, 50_000) + 1e-3
    probs /= probs.sum()
    rank, scaled = sorted_profile(probs, probs.size)
    assert len(rank) <= PROFILE_POINTS and rank[0] == 0.0 and rank[-1] == 1.0
    assert scaled[0] == probs.max() * probs.size and scaled[-1] == probs.min() * probs.size
    assert np.all(np.diff(scaled) <= 0) and np.all(np.diff(rank) > 0)
    small = np.array([0.5, 0.2, 0.3])
    rank, scaled = sorted_profile(small, 3)
    np.testing.assert_allclose(rank, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(scaled, [1.5, 0.9, 0.6])
