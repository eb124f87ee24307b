"""Honest solver seconds: numba compilation is never counted as solver time (issue 14, item 3).

A kernel's first call in a process compiles it (or loads it from numba's
disk cache), and that happens inside the driver's timed region. Numba takes
its global compiler lock for every compilation and cache load and announces
it as the ``numba:compiler_lock`` event in the calling thread; one listener,
installed at import, counts those events per thread. :func:`warm_solve`
solves, and when its own thread entered the compiler during the solve it
solves again — the kernels are compiled now, and equal seeds give equal
traces but for ``time`` — so the seconds it returns are warm. A result whose
re-run still compiled (which needs a new signature on every call) carries
``trace.attrs["compiled"] = True`` and must not be shown or cached as warm.
"""
from __future__ import annotations

import threading
from collections import defaultdict

import numba.core.event as _event

from .solvers import solve

_LOCK = threading.Lock()
_ENTRIES: defaultdict = defaultdict(int)  # thread ident -> times it entered numba's compiler


class _CompilerWatch(_event.Listener):
    def on_start(self, event):
        ident = threading.get_ident()
        with _LOCK:
            _ENTRIES[ident] += 1

    def on_end(self, event):
        pass


_event.register("numba:compiler_lock", _CompilerWatch())


def compiler_entries() -> int:
    """How many times this thread has entered numba's compiler (compile, cache load or wait for it)."""
    with _LOCK:
        return _ENTRIES.get(threading.get_ident(), 0)


def warm_solve(problem, on_retime=None, **kwargs):
    """``cdlab.solve(problem, **kwargs)`` with warm seconds.

    If the solve entered numba's compiler, ``on_retime()`` (if given) is
    called and the same solve runs again; the returned result is the re-run.
    ``result.trace.attrs`` gets ``compiled`` (whether the returned run still
    entered the compiler) and ``retimed`` (whether a re-run happened).
    """
    before = compiler_entries()
    result = solve(problem, **kwargs)
    retimed = compiler_entries() != before and result.status != "cancelled"
    if retimed:
        if on_retime is not None:
            on_retime()
        before = compiler_entries()
        result = solve(problem, **kwargs)
    result.trace.attrs.update(compiled=compiler_entries() != before, retimed=retimed)
    return result
