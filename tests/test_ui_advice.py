"""The banner's advice (cdlab.ui.advice) and the controls it greys out: what a user who picks an
incompatible loss or no method is told, and that each offered fix, applied, makes the runs go."""
import panel as pn

from cdlab.solvers import METHODS
from cdlab.ui import glossary, presets
from cdlab.ui.advice import loss_notice, loss_reason, notices, refuses_loss
from cdlab.ui.runner import sampling_choices
from cdlab.ui.state import SYNCED, Experiment
from cdlab.ui.views import Banner
from cdlab.ui.views.controls import MethodRow
from cdlab.ui.views.visibility import is_displayed


def small(**extra):
    settings = dict(n_samples=60, n_features=8, max_passes=20.0, log10_tol=-6.0, auto_run=False)
    return Experiment(**{**settings, **extra})


def test_refusals_are_the_methods_own():
    """refuses_loss asks each method (check and state construction) with the page's options."""
    import numpy as np
    import cdlab

    X = np.array([[1.0, 0.5], [0.5, 1.0], [1.0, 1.0]])
    for method in METHODS:
        for loss in ("hinge", "absolute", "logistic"):
            problem = cdlab.Problem(X, [1.0, -1.0, 1.0], loss=loss, lam=1.0)
            try:
                cdlab.solve(problem, method=method, max_passes=0.5)
                runs = True
            except ValueError:
                runs = False
            assert refuses_loss(method, loss) == (not runs), (method, loss)
    assert refuses_loss("dual_cd", "hinge") and not refuses_loss("sdca", "hinge")
    assert "takes squared, logistic, smoothed hinge, not hinge" in loss_reason("primal_cd", "hinge")
    assert loss_reason("sdca", "hinge") == ""


def test_loss_conflict_fixes_make_the_runs_go():
    s = small(loss="hinge", methods=["dual_cd", "primal_cd"],
              samplings={"dual_cd": "uniform", "primal_cd": "uniform"})
    notice = loss_notice(s.methods, s.samplings, s.loss)
    assert "dual_cd and primal_cd do not take the hinge loss" in notice.message
    assert "loss=" not in notice.message and "update=" not in notice.message  # no Python syntax
    labels = [fix.label for fix in notice.fixes]
    assert labels == ["Use the smoothed hinge loss", "Replace dual_cd and primal_cd with sdca"]
    for fix in notice.fixes:
        t = small(loss="hinge", methods=["dual_cd", "primal_cd"],
                  samplings={"dual_cd": "uniform", "primal_cd": "uniform"})
        t.param.update(**fix.updates)
        assert t.run(timeout=120)
        assert notices(t) == [], fix.label
        assert set(t.run_status) == {r.label for r in t.runs()}, fix.label
        assert all(st not in ("refused", "error") and len(t.traces[label]) > 1
                   for label, st in t.run_status.items()), (fix.label, t.run_status)


def test_banner_shows_the_notice_and_its_button_applies_the_fix():
    s = small(loss="hinge", methods=["primal_cd"], samplings={"primal_cd": "uniform"})
    assert s.run(timeout=60)
    banner = pn.panel(Banner(state=s))
    assert is_displayed(banner)
    buttons = banner.select(pn.widgets.Button)
    assert [b.label for b in buttons] == ["Use the smoothed hinge loss", "Replace primal_cd with sdca"]
    text = " ".join(m.object for m in banner.select(pn.pane.Markdown))
    assert "primal_cd does not take the hinge loss" in text
    buttons[0].clicks += 1
    assert s.loss == "smoothed_hinge"
    assert s.run(timeout=60) and not notices(s)


def test_errors_and_an_empty_method_list_reach_the_banner():
    s = small(n_samples=200_000, n_features=200_000, density=1.0)
    s.start()
    assert s.error and notices(s)[0].message.startswith("**Not run:**")
    t = small(methods=[])
    [notice] = notices(t)
    assert "No method chosen" in notice.message and notice.fixes[0].updates["methods"] == ["dual_cd", "primal_cd"]


def test_method_rows_grey_out_explain_and_hide_meaningless_samplings():
    s = small(methods=["sdca"], samplings={"sdca": "uniform"})
    rows = {m: MethodRow(state=s, method=m) for m in METHODS}
    assert not any(r.check.disabled for r in rows.values())
    s.loss = "hinge"
    greyed = {m for m, r in rows.items() if r.check.disabled}
    assert greyed == {m for m in METHODS if refuses_loss(m, "hinge")}
    assert "Not available:" in rows["primal_cd"].help.value and "Not available" not in rows["sdca"].help.value
    s.methods = ["sdca", "primal_cd"]  # a chosen method stays un-greyed, so that it can be unticked
    assert not rows["primal_cd"].check.disabled
    for m, row in rows.items():
        assert m in row.help.value and glossary.METHODS[m][:20] in row.help.value
        one = len(sampling_choices(m)) == 1  # one sampling: named as text, no menu to choose from
        assert (row.sampling is None) == one and (row.fixed is None) == (not one)
        assert (row.batch is None) == (not METHODS[m].batch)
    assert rows["gd"].fixed.object == "full gradient" and rows["asdca"].fixed.object == "uniform"


def test_presets_have_captions_and_the_preset_travels_in_links():
    for name in presets.PRESETS:
        text = presets.caption(name)
        assert "notebooks/0" in text and len(text) > 80, name
    assert "preset" in SYNCED


def test_a_link_naming_a_preset_gets_its_values_unless_it_changes_them():
    name = "sparse news-like skew"
    s = Experiment(auto_run=False)
    with s.quiet():
        s.preset = name  # a hand-written link: ?preset=...
        s.complete_preset({"preset"})
    values = presets.values_of(name)
    assert s.preset == name and all(getattr(s, k) == v for k, v in values.items())
    t = Experiment(auto_run=False)
    with t.quiet():
        t.param.update(preset=name, n_samples=123)  # a link that changed one of the preset's values
        t.complete_preset({"preset", "n_samples"})
    assert t.preset == "custom" and t.n_samples == 123 and t.density == values["density"]
