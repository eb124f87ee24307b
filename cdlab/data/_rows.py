"""Equal rows of X: for each example the first example whose row is its own (``Data.row_copies``).

Rows are hashed (a 64-bit hash of each row's length and its (column, value's bits) pairs in order, mixed by
SplitMix64's output function, ``sampling.splitmix64_mix``), sorted by hash, and each row of a run of equal hashes
compared entry by entry with the run's first rows of each content: equal rows always share a hash, and unequal rows
that share one (a collision) are told apart. A read of X, a sort of n hashes and a second read of the rows that
repeat.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..sampling import splitmix64_mix


@njit(cache=True, nogil=True)
def _row_hashes(indptr, indices, bits):
    """Each row's hash: its length and its (column, value's bits) pairs in order."""
    n = indptr.shape[0] - 1
    out = np.empty(n, np.uint64)
    for i in range(n):
        h = splitmix64_mix(np.uint64(indptr[i + 1] - indptr[i]))
        for p in range(indptr[i], indptr[i + 1]):
            pair = np.uint64(indices[p]) + np.uint64(bits[p]) * np.uint64(0x9E3779B97F4A7C15)
            h = splitmix64_mix(h ^ splitmix64_mix(pair))
        out[i] = h
    return out


@njit(cache=True, nogil=True)
def _same_row(indptr, indices, data, i, j):
    """Whether rows i and j hold the same columns in the same order with the same values."""
    if indptr[i + 1] - indptr[i] != indptr[j + 1] - indptr[j]:
        return False
    for p in range(indptr[i + 1] - indptr[i]):
        if indices[indptr[i] + p] != indices[indptr[j] + p] or data[indptr[i] + p] != data[indptr[j] + p]:
            return False
    return True


@njit(cache=True, nogil=True)
def _first_copies(indptr, indices, data, order, hashes):
    """copies[i]: the first example (in ``order``, the rows sorted by hash, stably) of i's run of equal hashes
    whose row equals i's, else i. Returns (copies, whether some row has a copy)."""
    n = order.shape[0]
    copies = np.arange(n)
    found = False
    first = 0
    for k in range(1, n):
        if hashes[order[k]] != hashes[order[k - 1]]:
            first = k
            continue
        i = order[k]
        for f in range(first, k):  # the run's rows before it: a collision leaves a second row family in the run
            j = order[f]
            if copies[j] == j and _same_row(indptr, indices, data, j, i):
                copies[i] = j
                found = True
                break
    return copies, found


def row_copies(indptr, indices, data):
    """For each example the first example whose row equals its own (itself where none), or None where no two
    rows are equal (the module docstring)."""
    hashes = _row_hashes(indptr, indices, data.view(np.dtype(f"u{data.itemsize}")))
    order = np.argsort(hashes, kind="stable")
    copies, found = _first_copies(indptr, indices, data, order, hashes)
    return copies if found else None
