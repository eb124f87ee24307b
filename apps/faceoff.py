"""The face-off dashboard: `panel serve apps/faceoff.py`.

Thin by design: the state object, views and runner live in ``cdlab.ui``.
"""
import panel as pn

from cdlab.ui import build_app

if pn.state.served:
    # Bokeh indexes the page's models once, when the whole page is built (unfrozen, it re-indexed the
    # document at each card and pane added, each time walking every model built so far)
    with pn.state.curdoc.models.freeze():
        build_app().servable(title="cdlab face-off")
