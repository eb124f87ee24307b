"""Samplings of coordinates: serial (uniform, importance (face-off eq. 14),
custom) and uniform mini-batches (m distinct indices per step).

A sampler is drawn from in whole chunks by the solver driver so that one
``numpy.random.Generator`` seeded per run fixes the whole trace. Non-uniform
draws use Walker's alias method (Vose's construction): O(m) set-up, O(1) per
draw, vectorised.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._checks import check_choice, check_int
from ._numeric import as_float_array

ORDERS = ("uniform", "permutation", "cyclic")
# In a method's samplings: an array of probabilities is accepted too.
CUSTOM = "custom"
# What ``make_sampler`` builds: the orders, and importance (face-off eq. 14) or
# custom probabilities through an alias table.
SERIAL_SAMPLINGS = ORDERS + ("importance", CUSTOM)


def check_sampling(sampling, allowed, who="this method"):
    """The rule for a sampling argument, in one place: a name in ``allowed``, or an
    array of probabilities when ``allowed`` holds "custom" (their values are
    checked by :func:`check_probabilities` where their length is known).
    ``who`` names what takes the sampling in the message (e.g. "method 'sdca'")."""
    names = [a for a in allowed if a != CUSTOM]
    if isinstance(sampling, str):
        if sampling not in names:
            extra = " or an array of probabilities" if CUSTOM in allowed else ""
            raise ValueError(f"{who} does not support sampling {sampling!r}; use one of {names}{extra}")
    elif CUSTOM not in allowed:
        raise ValueError(f"{who} does not accept custom sampling probabilities; use one of {names}")


def importance_probabilities(norms_sq, lam, gamma, n_samples):
    """Face-off eq. (14): p_j ∝ ‖f_j‖² + λγn (primal) or q_i ∝ ‖x_i‖² + λγn (dual)."""
    w = np.asarray(norms_sq, dtype=float) + lam * gamma * n_samples
    return w / w.sum()


# A probability vector given in float64 (or as integers or Python numbers) must
# sum to 1 within this; one of a lower precision within the square root of its
# machine epsilon (3.5e-4 for float32), the tolerance numpy.random.Generator.choice
# applies, since normalising in float32 leaves errors of that order.
SUM_TOLERANCE = 1e-9

# A checkpoint interval (about one pass) may hold at most this many steps per
# coordinate or nonzero (see Sampler.steps_per_pass).
MAX_STEPS_PER_PASS_FACTOR = 16


def check_probabilities(p, size, what="coordinates"):
    """Validate user probabilities: a 1-D array of real numbers (any numeric
    dtype but bool, or an object array or pandas Series of numbers), finite,
    > 0, of the right length, summing to 1 (within SUM_TOLERANCE, or the
    square root of the machine epsilon of a lower-precision float dtype).
    Returns a float64 copy; a lower-precision input is renormalised to sum to 1."""
    if p is None or isinstance(p, (str, bytes, dict)):
        raise ValueError(f"sampling must be a name or a 1-D array of probabilities, got {p!r}")
    try:
        raw = np.asarray(p)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise ValueError(f"sampling probabilities must be numeric: {exc}") from None
    # The dtype and shape are checked before converting to float, which would
    # silently drop an imaginary part, read True as 1.0, or flatten a matrix.
    if raw.dtype.kind in "bc":
        raise ValueError(f"sampling probabilities must be real numbers, got dtype {raw.dtype}")
    if raw.ndim != 1:
        raise ValueError(f"sampling probabilities must be a 1-D array of length {size}, got shape {raw.shape}")
    if raw.dtype.kind in "USV":
        raise ValueError(f"sampling probabilities must be numeric, got dtype {raw.dtype}")
    p = as_float_array("sampling probabilities", raw, allow_bool=False)
    if p.shape[0] != size:
        raise ValueError(f"sampling probabilities have length {p.shape[0]}, but there are {size} {what}")
    if not np.all(np.isfinite(p)):
        raise ValueError("sampling probabilities contain NaN or inf")
    if np.any(p <= 0):
        k = int(np.argmax(p <= 0))
        raise ValueError(f"sampling probabilities must all be > 0 ({int((p <= 0).sum())} are not); "
                         f"the first is {p[k]:g} at index {k}")
    low_precision = raw.dtype.kind == "f" and raw.dtype.itemsize < 8
    tol = max(SUM_TOLERANCE, float(np.sqrt(np.finfo(raw.dtype).eps))) if low_precision else SUM_TOLERANCE
    if abs(p.sum() - 1.0) > tol:
        raise ValueError(f"sampling probabilities must sum to 1 (within {tol:.2g}); they sum to {p.sum():.12g}")
    if low_precision:
        p /= p.sum()
    return p


class AliasTable:
    """Walker/Vose alias table for O(1) draws from a discrete distribution."""

    def __init__(self, p):
        p = np.asarray(p, dtype=np.float64)
        m = p.shape[0]
        scaled = p * m / p.sum()
        prob = np.ones(m)
        alias = np.arange(m, dtype=np.int64)
        small = [i for i in range(m) if scaled[i] < 1.0]
        large = [i for i in range(m) if scaled[i] >= 1.0]
        while small and large:
            s, g = small.pop(), large.pop()
            prob[s] = scaled[s]
            alias[s] = g
            scaled[g] = scaled[g] + scaled[s] - 1.0
            (small if scaled[g] < 1.0 else large).append(g)
        self.prob, self.alias, self.size = prob, alias, m

    def draw(self, rng: np.random.Generator, k: int) -> np.ndarray:
        idx = rng.integers(0, self.size, k)
        return _alias_pick(idx, rng.random(k), self.prob, self.alias)


@njit(cache=True, nogil=True)
def _alias_pick(idx, u, prob, alias):
    """Column idx[k] keeps its own index with probability prob[idx[k]], else
    its alias; one fused loop (numpy's gathers and where cost ~20 ns a draw,
    as much as a whole dual step on a sparse row)."""
    out = np.empty_like(idx)
    for k in range(idx.shape[0]):
        i = idx[k]
        out[k] = i if u[k] < prob[i] else alias[i]
    return out


@njit(inline="always", cache=True)
def splitmix64_mix(z):
    """SplitMix64's output function (Steele, Lea & Flood 2014, "Fast splittable pseudorandom number generators",
    OOPSLA): a bijection of the 64-bit words that spreads every input bit over the output."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(inline="always", cache=True)
def fisher_yates_step(perm, pos, end, u):
    """One step of Fisher–Yates (Knuth 1997, TAOCP vol. 2, §3.4.2, Algorithm P) on perm[:end]: slot ``pos``
    takes the entry at the uniform slot pos + ⌊u·(end − pos)⌋ of [pos, end) (u ∈ [0, 1)), which it returns;
    the two swap."""
    j = min(pos + int(u * (end - pos)), end - 1)  # u·m may round up to m
    i = perm[j]
    perm[j] = perm[pos]
    perm[pos] = i
    return i


@njit(cache=True, nogil=True)
def shuffled_draws(perm, pos, u, out):
    """The next len(u) indices of the epochs' random permutations: ``fisher_yates_step`` one position at a
    time, position ``pos`` of the epoch from u[k] ∈ [0, 1); an epoch shuffles the order the last one left in
    ``perm``, so each epoch is a uniformly random permutation, independent of the others. Returns the position
    reached. One uniform an index, against numpy's ``Generator.permutation``, which cost 12–27 ns an index on
    8000–50000 indices and 90 on 270 (more than a sparse SDCA step on short rows, 12–30)."""
    n = perm.shape[0]
    for k in range(u.shape[0]):
        out[k] = fisher_yates_step(perm, pos, n, u[k])
        pos += 1
        if pos == n:
            pos = 0
    return pos


class Sampler:
    """Draws coordinate indices for a serial method.

    ``kind`` is "uniform" (i.i.d. with replacement), "permutation" (a fresh
    random permutation per epoch), "cyclic" (0, 1, …, m−1 repeated) or
    "probabilities" (i.i.d. from ``probs`` through an alias table: importance,
    custom probabilities, SPDC's Algorithm 2).
    """

    KINDS = ORDERS + ("probabilities",)

    def __init__(self, size, kind="uniform", probs=None, what="coordinates"):
        self.size, self.kind, self.what = int(size), check_choice("sampler kind", kind, self.KINDS), what
        self.probs = np.full(self.size, 1.0 / self.size) if probs is None else np.asarray(probs, float)
        self._alias = AliasTable(self.probs) if kind == "probabilities" else None
        self._pos = 0  # position inside the current epoch for permutation / cyclic
        self._perm = None

    def steps_per_pass(self, nnz_per_index):
        """Steps that touch about nnz(X) nonzeros: nnz / Σ_k p_k‖·_k‖₀.

        The expected cost of a step is eq. (10) / (11) of the face-off paper,
        Σ_j p_j‖f_j‖₀ or Σ_i q_i‖x_i‖₀: under importance sampling on data whose
        heavy coordinates are also dense, a step costs far more than
        nnz/size, and checkpoints spaced ``size`` steps apart would be
        several passes apart.

        Probabilities that put nearly all their mass on coordinates without
        nonzeros make a pass take unboundedly many steps (and a checkpoint
        interval draw that many indices at once); more than
        MAX_STEPS_PER_PASS_FACTOR × max(size, nnz) steps — uniform sampling
        takes ``size``, any sampling without empty coordinates at most nnz —
        is refused with a ValueError saying where the mass is."""
        nnz_per_index = np.asarray(nnz_per_index, dtype=float)
        what = self.what
        cost = float(self.probs @ nnz_per_index)
        total = float(nnz_per_index.sum())
        limit = MAX_STEPS_PER_PASS_FACTOR * max(self.size, total)
        if cost <= 0 or total / cost > limit:
            empty = float(self.probs[nnz_per_index == 0].sum())
            steps = "infinitely many" if cost <= 0 else f"{total / cost:.3g}"
            raise ValueError(f"the sampling probabilities put {empty:.12g} of their mass on {what} without "
                             f"nonzeros: one pass over the data would take {steps} steps, more than "
                             f"{MAX_STEPS_PER_PASS_FACTOR} × max({self.size} {what}, {int(total)} nonzeros); "
                             f"give the {what} that hold data more probability")
        return max(1, int(round(total / cost)))

    def draw(self, rng: np.random.Generator, k: int) -> np.ndarray:
        if self.kind == "uniform":
            return rng.integers(0, self.size, k)
        if self.kind == "probabilities":
            return self._alias.draw(rng, k)
        out = np.empty(k, dtype=np.int64)
        if self.kind == "permutation":
            if self._perm is None:
                self._perm = np.arange(self.size)
            self._pos = shuffled_draws(self._perm, self._pos, rng.random(k), out)
            return out
        filled = 0
        while filled < k:
            if self._perm is None:
                self._perm = np.arange(self.size)
            take = min(k - filled, self.size - self._pos)
            out[filled:filled + take] = self._perm[self._pos:self._pos + take]
            filled += take
            self._pos = (self._pos + take) % self.size
        return out


def make_sampler(sampling, size, importance_norms_sq=None, lam=0.0, gamma=1.0, n_samples=1,
                 what="coordinates"):
    """Build a Sampler from the user's ``sampling`` argument: a name of
    SERIAL_SAMPLINGS or an array of probabilities. Which of them a method
    accepts is its MethodSpec's ``samplings``, checked (by :func:`check_sampling`)
    before its state is built."""
    check_sampling(sampling, SERIAL_SAMPLINGS, "a serial sampler")
    if isinstance(sampling, str):
        if sampling == "importance":
            if importance_norms_sq is None:
                raise ValueError("importance sampling is not defined for this method")
            return Sampler(size, "probabilities", importance_probabilities(importance_norms_sq, lam, gamma, n_samples),
                           what=what)
        return Sampler(size, sampling, what=what)
    return Sampler(size, "probabilities", check_probabilities(sampling, size, what), what=what)


class BatchSampler:
    """Uniform mini-batches: each draw is ``batch_size`` distinct indices out of
    ``size``, every such subset equally likely (the "τ-nice" sampling of the
    arbitrary-sampling papers; SPDC and ASDCA use it), so index i lands in a
    batch with probability batch_size/size.

    ``draw(rng, k)`` returns a (k, batch_size) int64 array, one batch per row,
    from the run's Generator only, so equal seeds give equal batches.
    """

    def __init__(self, size, batch_size):
        self.size = int(size)
        self.batch_size = check_batch_size(batch_size, self.size)

    def draw(self, rng: np.random.Generator, k: int) -> np.ndarray:
        m, size = self.batch_size, self.size
        if m == 1:
            return rng.integers(0, size, (k, 1))
        if m * m > size:
            # Duplicates would be likely, so rejection would waste draws:
            # a partial shuffle per batch costs O(size), at most O(m²).
            return np.stack([rng.choice(size, m, replace=False) for _ in range(k)]) if k else \
                np.empty((0, m), dtype=np.int64)
        # m² ≤ size: a batch drawn with replacement has no repeat with
        # probability ≥ 1/2, so redrawing the rows with a repeat terminates
        # fast; conditioning i.i.d. draws on "all distinct" is exactly uniform
        # over ordered m-subsets.
        out = rng.integers(0, size, (k, m))
        bad = _rows_with_repeats(out)
        while bad.size:
            out[bad] = rng.integers(0, size, (bad.size, m))
            bad = bad[_rows_with_repeats(out[bad])]
        return out


def _rows_with_repeats(a):
    s = np.sort(a, axis=1)
    return np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))


def check_batch_size(batch_size, size):
    """A mini-batch size: an integer in [1, size] (integral floats such as 4.0 accepted)."""
    m = check_int("batch_size", batch_size)
    if m > size:
        raise ValueError(f"batch_size must be in [1, {size}], got {m}")
    return m
