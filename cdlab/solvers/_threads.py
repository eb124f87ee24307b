"""The ``n_jobs`` mode's threads: the argument's rule, and the section every parallel kernel runs in.

``n_jobs`` is the number of blocks a parallel kernel cuts its work into, one per thread
(PASSCoDe's threads, the certificate pass's row blocks). The threads are numba's
(``@njit(parallel=True)``, ``prange``); n_jobs is at most ``numba.config.NUMBA_NUM_THREADS``
(by default the number of cores), so every block has a thread of its own.

numba's threads are set per calling thread (``numba.set_num_threads`` is thread-local), so
:func:`parallel_section` sets them around each launch and restores them after. Of numba's
threading layers, "tbb" and "omp" take launches from several Python threads at once (the page
runs each job in its own thread); "workqueue", the fallback when neither is installed, does
not, so under it (and before the first launch has told which layer numba picked) launches are
serialised by one process-wide lock. ``numba.set_num_threads`` starts numba's thread pool, so a
kernel launched inside :func:`parallel_section` finds it started even where a cached serial kernel
calls a parallel one (loading such a caller from the cache does not start it: numba issue #8578).
"""
from __future__ import annotations

import functools
import numbers
import threading
from contextlib import contextmanager

import numba
import numpy as np

from .._checks import check_int

# launches under a layer that is not thread-safe take this lock, one at a time
_LAUNCH_LOCK = threading.Lock()
THREAD_SAFE_LAYERS = ("tbb", "omp")
_layer = None  # numba.threading_layer(), known once a parallel kernel has run


def check_n_jobs(n_jobs) -> int:
    """n_jobs: an integer from 1 (the serial kernels, bit for bit) to numba's thread count; -1 means
    that count (scikit-learn's convention). A block per thread at most: each block keeps a length-d
    buffer in the parallel passes, so a larger n_jobs would only buy memory."""
    most = numba.config.NUMBA_NUM_THREADS
    if isinstance(n_jobs, numbers.Integral) and not isinstance(n_jobs, bool) and n_jobs == -1:
        return most
    n_jobs = check_int("n_jobs", n_jobs, minimum=1)
    if n_jobs > most:
        raise ValueError(f"n_jobs must be at most {most}, the threads numba may use here (NUMBA_NUM_THREADS, "
                         f"by default the number of cores), or -1 for all of them; got {n_jobs}")
    return n_jobs


@contextmanager
def parallel_section(n_jobs: int):
    """Run a parallel kernel's launch on n_jobs threads (:func:`check_n_jobs` keeps it within
    numba's count), serialised by a process-wide lock unless numba's threading layer is thread-safe."""
    global _layer
    locked = _layer not in THREAD_SAFE_LAYERS
    if locked:
        _LAUNCH_LOCK.acquire()
    try:
        previous = numba.get_num_threads()
        numba.set_num_threads(n_jobs)
        try:
            yield
        finally:
            numba.set_num_threads(previous)
        if _layer is None:
            _layer = numba.threading_layer()
    finally:
        if locked:
            _LAUNCH_LOCK.release()


def row_blocks(indptr, n_blocks: int) -> np.ndarray:
    """Bounds (n_blocks + 1 row indices, 0 to n) that cut the rows of a CSR matrix into
    ``n_blocks`` contiguous blocks of about equal nonzeros, one per thread."""
    targets = indptr[-1] * np.arange(n_blocks + 1) / n_blocks
    bounds = np.searchsorted(indptr, targets, side="left").astype(np.int64)
    bounds[0], bounds[-1] = 0, indptr.shape[0] - 1
    return np.maximum.accumulate(bounds)


@functools.lru_cache(maxsize=1)
def blas_controller():
    """threadpoolctl's view of the process's BLAS libraries, built once: building it reads
    /proc/self/maps (~7 ms, more than a Newton iteration on a small problem). scipy.linalg, whose
    BLAS does Newton's syrk and Cholesky factorisation, is loaded first, so that the controller sees it."""
    import scipy.linalg  # noqa: F401
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


# threadpoolctl's limit is process-wide, saved and restored around each use: runs in several threads (the
# page's sessions, its warm-up) take it one at a time, or their saves and restores interleave and leave the
# process's BLAS at another run's thread count
_BLAS_LIMIT = threading.Lock()


@contextmanager
def blas_threads(n_jobs):
    """The context a run's BLAS and LAPACK calls run in: the process's BLAS limited to its n_jobs threads (one by
    default, the serial code), one run at a time (_BLAS_LIMIT)."""
    with _BLAS_LIMIT, blas_controller().limit(limits=n_jobs, user_api="blas"):
        yield
