"""The banner at the top of the page: what stands in the way of the chosen runs (cdlab.ui.advice),
each with the buttons that apply its fixes. Hidden when there is nothing to say.

The banner is rebuilt only when what it says changes (not at every progress update of a run), so a
button stays the same button between the moment it is drawn and the moment it is clicked. It is shown
and hidden by its CSS display (:func:`.visibility.set_displayed`): hidden, it takes no space."""
from __future__ import annotations

import panel as pn
import param

from ..advice import notices
from ..state import Experiment
from .visibility import set_displayed

WATCHED = ("error", "methods", "samplings", "loss", "run_status", "run_message")
# what a card says in place of its content while the banner explains an error
NOT_AVAILABLE = "*Not available: see the message at the top of the page.*"


class Banner(pn.viewable.Viewer):
    state = param.ClassSelector(class_=Experiment)

    def __init__(self, **params):
        super().__init__(**params)
        self._shown = None
        self._column = pn.Column(css_classes=["cdlab-banner"], sizing_mode="stretch_width",
                                 styles={"background": "#fdecea", "border": "1px solid #f5c2c0",
                                         "border-radius": "6px", "padding": "6px 12px", "display": "none"},
                                 margin=(0, 10, 10, 10))
        self.state.param.watch(self._refresh, list(WATCHED))
        self._refresh()

    def _items(self, found):
        s = self.state
        items = []
        for notice in found:
            items.append(pn.pane.Markdown(notice.message, margin=(0, 0, 4, 0), sizing_mode="stretch_width"))
            buttons = []
            for fix in notice.fixes:
                button = pn.widgets.Button(label=fix.label, color="primary", css_classes=["cdlab-fix"],
                                           margin=(0, 8, 0, 0))
                button.on_click(lambda event, updates=fix.updates: s.param.update(**updates))
                buttons.append(button)
            if buttons:
                items.append(pn.Row(*buttons, margin=(0, 0, 8, 0)))
        return items

    def _refresh(self, *events):
        found = notices(self.state)
        if found == self._shown:
            return
        self._shown = found
        self._column.objects = self._items(found)
        set_displayed(self._column, bool(found))

    def __panel__(self):
        return self._column
