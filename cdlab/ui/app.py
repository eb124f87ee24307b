"""Assemble the face-off page from the state object and its views."""
from __future__ import annotations

import panel as pn

from .state import Experiment, sync_link
from . import glossary
from .long_lived import freeze_once
from .views import (Banner, Controls, ConvergenceView, DataView, FaceoffCard, Figure1View, ParallelCostView,
                    ResultsView, TheoryCard)
from .warmup import WARMUP

INTRO = ("Primal or dual coordinate descent — which wins on *your* data, with which sampling, and how far is "
         "each method from its bound? Every curve is certified by the duality gap. Pick a scenario or your own "
         "data on the left.")


def build_app(state: Experiment | None = None):
    """The page for one session (call once per session: nothing is shared)."""
    served = pn.state.curdoc is not None and pn.state.curdoc.session_context is not None
    if served:
        freeze_once("the page's libraries are imported")  # full collections skip them from now on
    # (no HoloViews here: the views that draw with it load it when they first draw, after the first page)
    pn.extension("tabulator", "mathjax", "filedropper", notifications=False)
    state = state if state is not None else Experiment()
    compiling = pn.pane.Alert(WARMUP.message(), alert_type="warning", visible=False,
                              css_classes=["cdlab-compiling"], sizing_mode="stretch_width")
    notice = pn.pane.Alert("", alert_type="danger", visible=False, css_classes=["cdlab-notice"],
                           sizing_mode="stretch_width")
    # two columns that wrap: where the page is narrower than about 1340 px the cards go under the plot
    plots = pn.Column(ConvergenceView(state=state),
                      pn.Card(ResultsView(state=state), title="Results", collapsible=False,
                              sizing_mode="stretch_width"),
                      pn.Card(DataView(state=state), title="Data: nonzeros and sampling", collapsible=False,
                              sizing_mode="stretch_width"), sizing_mode="stretch_width", min_width=500,
                      styles={"flex": "1 1 500px"}, css_classes=["cdlab-plots"])
    cards = pn.Column(FaceoffCard(state=state), TheoryCard(state=state),
                      pn.Card(Figure1View(state=state), title="Figure 1: binary data map", collapsible=False,
                              sizing_mode="stretch_width"),
                      ParallelCostView(state=state),
                      pn.Card(pn.pane.Markdown(glossary.symbols_markdown(), sizing_mode="stretch_width"),
                              title="Symbols", collapsed=True, sizing_mode="stretch_width"),
                      sizing_mode="stretch_width", min_width=360, styles={"flex": "0 1 420px"},
                      css_classes=["cdlab-cards"])
    main = [
        compiling,
        notice,
        Banner(state=state),
        pn.pane.Markdown(INTRO, sizing_mode="stretch_width"),
        pn.FlexBox(plots, cards, flex_wrap="wrap", align_items="flex-start", sizing_mode="stretch_width"),
    ]
    template = pn.template.BootstrapTemplate(title="cdlab face-off: primal vs dual coordinate descent",
                                             sidebar=[Controls(state=state)], main=main, sidebar_width=400)
    if served:
        _serve_session(state, compiling, notice)
    template.state = state  # for tests and notebooks: the page's experiment
    return template


def _serve_session(state, compiling, notice):
    """Per-session wiring: URL sync, kernel warm-up notice, first run, clean-up."""
    def sync_failed(values):
        notice.object = (f"This link's settings could not be applied ({', '.join(sorted(values))}: a value is "
                         "out of range or names something this server does not have); the page shows the "
                         "defaults instead.")
        notice.visible = True

    # no job until the page has loaded: the browser sends the link back when it connects, and a preset
    # named there would otherwise be applied again (one link, one job)
    state.hold()
    # the link's own settings, read before sync writes every synced setting into the URL
    given = sync_link(pn.state.location, state, on_error=sync_failed)
    state.complete_preset(given)

    def poll():
        text = WARMUP.message()
        compiling.object, compiling.visible = text, bool(text)
        if WARMUP.finished.is_set() and callback is not None:
            callback.stop()
    callback = None
    poll()
    if not WARMUP.finished.is_set():
        callback = pn.state.add_periodic_callback(poll, period=500)

    def first_job():
        # the kernels load once the page is shown: a thread loading them holds the GIL while the page's
        # models are built and sent (a run waits for them: Job)
        WARMUP.ensure_started()
        state.complete_preset(given)  # the link as the browser sent it back may name the preset again
        state.release()
        state.start(solve=state.auto_run)
    pn.state.onload(first_job)
    pn.state.on_session_destroyed(lambda ctx: state.cancel())
