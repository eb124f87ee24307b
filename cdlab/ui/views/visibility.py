"""Showing a changed selection of the models a view already holds by their visibility alone."""
from __future__ import annotations


def set_visible(item, shown):
    """Show or hide a model by its ``visible`` property (for what is not laid out: legend items, glyphs)."""
    item.visible = shown


def set_displayed(pane, shown):
    """Show or hide a Panel pane by its CSS ``display``, leaving its ``visible`` alone: in the browser a
    changed ``visible`` of a laid-out model makes Bokeh lay out and repaint the whole page, once for each
    model changed, where a changed style only resizes the pane (one layout for all that resized)."""
    styles = {**pane.styles, "display": "" if shown else "none"}
    if styles != pane.styles:
        pane.styles = styles


def is_displayed(pane):
    """Whether :func:`set_displayed` left ``pane`` shown."""
    return pane.visible and pane.styles.get("display") != "none"


def show_in_order(held, wanted, show=set_visible, keep_hidden=None):
    """The list a container should hold so that ``wanted`` shows, in its order, and whether it differs
    from ``held``; every item of it is shown or hidden by ``show(item, shown)``. Where ``held`` holds
    every wanted item in this order already, it stays and only visibilities change: a new list of
    models makes Bokeh walk every model of the page. Otherwise the wanted items go first, then the
    rest (hidden), the most recently shown first, at most ``keep_hidden`` of them (None: all), so that
    a container whose items keep changing does not grow without end."""
    place = {id(item): k for k, item in enumerate(held)}
    at = [place.get(id(item)) for item in wanted]
    shown = {id(item) for item in wanted}
    changed = None in at or at != sorted(at)
    if changed:
        rest = [item for item in held if id(item) not in shown]
        held = list(wanted) + rest[:keep_hidden]
    for item in held:
        show(item, id(item) in shown)
    return list(held), changed
