"""The face-off dashboard: `panel serve apps/faceoff.py`."""
import panel as pn

import cdlab


def create_app():
    return pn.Column("# cdlab face-off", f"Methods available: {', '.join(sorted(cdlab.METHODS))}")


if pn.state.served:
    create_app().servable(title="cdlab face-off")
