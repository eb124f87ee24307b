"""Showing a changed selection of the models a view already holds by their visibility alone."""
from __future__ import annotations


def show_in_order(held, wanted):
    """The list a container should hold so that ``wanted`` shows, in its order, and whether it differs
    from ``held``; every item of it is made visible or hidden. Where ``held`` holds every wanted item in
    this order already, it stays and only visibilities change: a new list of models makes Bokeh walk
    every model of the page. Otherwise the wanted items go first, the rest (hidden) after them."""
    place = {id(item): k for k, item in enumerate(held)}
    at = [place.get(id(item)) for item in wanted]
    shown = {id(item) for item in wanted}
    changed = None in at or at != sorted(at)
    if changed:
        held = list(wanted) + [item for item in held if id(item) not in shown]
    for item in held:
        item.visible = id(item) in shown
    return list(held), changed
