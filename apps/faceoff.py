"""The face-off dashboard: `panel serve apps/faceoff.py`.

Thin by design: the state object, views and runner live in ``cdlab.ui``.
"""
import panel as pn

from cdlab.ui import build_app

if pn.state.served:
    build_app().servable(title="cdlab face-off")
