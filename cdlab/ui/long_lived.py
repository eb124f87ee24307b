"""The server process's long-lived objects, kept out of the garbage collector's full collections.

A full collection of the cyclic garbage collector walks every object it tracks: in the face-off
server, every module, class and function of Panel, Bokeh, HoloViews, SymPy, pandas and numba. Each
such walk took 0.2–0.5 s, a pause of the session's event loop (a click's update, a run's streaming)
several times a minute. ``gc.freeze`` moves the objects alive now into a permanent generation that
collections skip: objects freed by reference counting are still freed, but a frozen object in a
reference cycle is never collected, so each stage freezes once per process only.
"""
from __future__ import annotations

import gc
import threading

_FROZEN = set()
_LOCK = threading.Lock()


def freeze_once(stage: str) -> bool:
    """``gc.freeze()`` the first time ``stage`` is reached in this process (True then, else False)."""
    with _LOCK:
        if stage in _FROZEN:
            return False
        _FROZEN.add(stage)
    gc.freeze()
    return True
