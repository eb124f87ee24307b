"""The banner at the top of the page: what stands in the way of the chosen runs (cdlab.ui.advice),
each with the buttons that apply its fixes. Hidden when there is nothing to say."""
from __future__ import annotations

import panel as pn
import param

from ..advice import notices
from ..state import Experiment

WATCHED = ("error", "methods", "samplings", "loss", "run_status", "run_message")


class Banner(pn.viewable.Viewer):
    state = param.ClassSelector(class_=Experiment)

    def _content(self, *values):
        s = self.state
        found = notices(s)
        items = []
        for notice in found:
            buttons = []
            for fix in notice.fixes:
                button = pn.widgets.Button(label=fix.label, color="primary", css_classes=["cdlab-fix"],
                                           margin=(0, 8, 0, 0))
                button.on_click(lambda event, updates=fix.updates: s.param.update(**updates))
                buttons.append(button)
            items.append(pn.pane.Markdown(notice.message, margin=(0, 0, 4, 0), sizing_mode="stretch_width"))
            if buttons:
                items.append(pn.Row(*buttons, margin=(0, 0, 8, 0)))
        return pn.Column(*items, sizing_mode="stretch_width")

    def __panel__(self):
        s = self.state
        deps = [s.param[name] for name in WATCHED]
        body = pn.bind(self._content, *deps)
        visible = pn.bind(lambda *values: bool(notices(s)), *deps)
        return pn.Column(pn.panel(body), visible=visible, css_classes=["cdlab-banner"], sizing_mode="stretch_width",
                         styles={"background": "#fdecea", "border": "1px solid #f5c2c0", "border-radius": "6px",
                                 "padding": "6px 12px"}, margin=(0, 10, 10, 10))
