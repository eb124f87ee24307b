"""The face-off dashboard (issue 7; design.md "The dashboard").

    from cdlab.ui import Experiment, build_app
    state = Experiment(preset="dense n≫d (dual wins)")
    state.run()                      # headless: blocks until the runs finish
    build_app(state).servable()      # or `panel serve apps/faceoff.py`
"""
from .state import Experiment

__all__ = ["Experiment", "build_app"]


def build_app(state=None):
    from .app import build_app as _build
    return _build(state)
