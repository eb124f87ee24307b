"""Compile (or load from numba's on-disk cache) every method's kernels once
per server process, on a background thread, so the page can say "compiling"
instead of hanging on a first run with a cold cache.

Numba's compiled code is process-wide, so this is the one piece of
process-wide UI state; it only ever moves from "not started" to "finished".
"""
from __future__ import annotations

import threading
import time

import numpy as np

from ..problem import Problem
from ..solvers import METHODS, solve


class Warmup:
    def __init__(self):
        self._lock = threading.Lock()
        self._thread = None
        self.finished = threading.Event()
        self.done = []
        self.current = ""
        self.failed = {}
        self.seconds = None

    @property
    def started(self) -> bool:
        return self._thread is not None

    def wait(self, cancel, poll=0.2):
        """Block until the warm-up has finished or ``cancel`` is set (True: finished)."""
        while not self.finished.wait(poll):
            if cancel.is_set():
                return False
        return True

    def ensure_started(self):
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="cdlab-numba-warmup", daemon=True)
                self._thread.start()
        return self

    def _run(self):
        t0 = time.perf_counter()
        rng = np.random.default_rng(0)
        X = rng.standard_normal((24, 6))
        y = np.where(rng.standard_normal(24) > 0, 1.0, -1.0)
        # X's values, and binary features (nonzeros of one value, which the row kernels take without their values:
        # ``solvers._kernels.row_arrays``, compiled apart), each method's default run on both
        problems = [Problem(X, y, loss="logistic", lam=0.1), Problem(np.maximum(X > 0, np.eye(24, 6)), y,
                                                                     loss="logistic", lam=0.1)]
        for name in sorted(METHODS):
            self.current = name
            spec = METHODS[name]
            try:
                for problem in problems:
                    p = problem if problem.loss in spec.losses else problem.with_params(loss=sorted(spec.losses)[0])
                    solve(p, method=name, max_passes=1.0, tol=0.0, eval_every=1.0)
            except Exception as exc:  # reported in the page, never fatal
                self.failed[name] = f"{type(exc).__name__}: {exc}"
            self.done.append(name)
        self.current = ""
        self.seconds = time.perf_counter() - t0
        self.finished.set()

    def message(self) -> str:
        """'' once finished without failures, else what the page should say."""
        if self.finished.is_set():
            if not self.failed:
                return ""
            return "Kernel warm-up failed for: " + "; ".join(f"{k} ({v})" for k, v in self.failed.items())
        total = len(METHODS)
        return (f"**Compiling numba kernels** (first use in this server process; instant when numba's cache "
                f"is warm): {len(self.done)}/{total} done" + (f", now **{self.current}**" if self.current else "")
                + ". Runs started meanwhile wait for their kernels.")


WARMUP = Warmup()


def warm_cache():
    """Fill numba's on-disk cache before a server starts (``make app``), saying so."""
    print("cdlab: compiling the numba kernels into numba's on-disk cache (once; seconds when already warm) ...",
          flush=True)
    WARMUP._run()
    if WARMUP.failed:
        raise SystemExit(WARMUP.message())
    print(f"cdlab: {len(WARMUP.done)} methods ready in {WARMUP.seconds:.1f} s", flush=True)
