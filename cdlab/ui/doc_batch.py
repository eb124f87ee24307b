"""One batch of changes to a served page's Bokeh document: one message to the browser, and the
document's model index rebuilt at most once, only where the batch changed which models the page holds."""
from __future__ import annotations

from contextlib import contextmanager

import panel as pn


@contextmanager
def batched(doc):
    """Hold ``doc``'s events until the block ends (they reach the browser as one message) and rebuild its
    model index (``doc.models.recompute()``, a walk over every model of the page) once at the end, and only
    if a change in the block added or removed a model reference.

    Bokeh's own ``doc.models.freeze()`` rebuilds the index at its end whether or not anything changed:
    for an update that only changes data and text (most updates of a run) that walk was the largest part
    of the update. Unfrozen, Bokeh rebuilds it once per change that touches a reference instead (a new
    curve's renderer, legend items, a replaced plot). Here every such change only notes that a rebuild
    is due: a model change asks for it through ``models.invalidate()``, Panel's layout updates through
    ``models._push_freeze()`` (``panel.io.document.freeze_doc``, which freezes only for such a change).
    """
    models = doc.models
    due = []

    def note_invalidate():
        due.append(True)

    def note_push():
        due.append(True)
        type(models)._push_freeze(models)

    models._push_freeze()
    models.invalidate, models._push_freeze = note_invalidate, note_push
    try:
        with pn.io.hold(doc):
            yield
    finally:
        del models.invalidate, models._push_freeze
        if due:
            models._pop_freeze()  # the last freeze out rebuilds the index
        else:
            models._freeze_count -= 1
