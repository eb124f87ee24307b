"""The numba primitives every kernel is written in: one home for each.

* ``sparse_dot`` / ``sparse_axpy``: x·w and out += c·x for one compressed row
  (CSR) or column (CSC), given by its slice start:end of indices/data; ``entry``
  reads a stored value, from X's data array or, where every nonzero of X has one
  value, from that value itself (``row_arrays``: no values read).
* ``scalar_soft_threshold``: S_t(x) = sign(x)·max(|x| − t, 0), the prox of
  t|·| (``problem.soft_threshold`` is its vector form, for numpy arrays).
* The lazy O(1) catch-up of a coordinate that k steps left untouched, while
  each of them applied the same affine map x ← a·x + b (SVRG, SAG/SAGA,
  SPDC's Section 4, ASDCA). Two forms, both a^k by one exp of k·log a:
  ``affine_powers`` returns (a^k, Σ_{t<k} a^t) for x ← a^k x + b·Σ a^t,
  exact as ρ = 1 − a → 0 (variance-reduced methods with tiny λη);
  ``toward_fixed_point`` writes the same orbit as x* + a^k (x − x*) around
  the map's fixed point x* (SPDC, ASDCA, whose maps are given that way).
  ``catch_up_dot`` / ``catch_up_all`` apply the first form to a row's
  coordinates (returning the row's dot product) or to every coordinate. A
  kernel builds the powers for k up to its chunk's length once
  (``affine_power_tables``, ``power_table``): one exp per step, not one per
  coordinate caught up.
* ``minibatch_kernel``: the step of a mini-batch method whose primal point is
  updated lazily (SPDC, ASDCA): catch up the batch's coordinates, read each row
  at the method's point, update each row, apply the batch's change to the
  coordinates it touched. The method supplies its 1-D updates as @njit functions.
* ``dense_dot``: a·b for two dense vectors, a loop on the calling thread:
  numpy's ``a @ b`` is a BLAS call that runs on all of BLAS's threads and, on a
  busy machine, can wait milliseconds for them, once per call.
* ``row_dot`` / ``row_axpy``: the same for a row that may be full, read then
  as a dense row (``full_dot``: a vectorised sum); a row kernel's argument
  ``full_rows`` (``full_rows``) picks them, and ``row_margins`` gives Problem the
  margins a checkpoint computes so.
* ``prefetch`` / ``prefetch_row`` / ``prefetch_whole_row``: a hint that brings
  an array's entry, or the first cache lines of a compressed row, or all of
  them, toward the core ahead of its use (LLVM's ``llvm.prefetch``); a kernel
  visiting rows in random order prefetches the row PREFETCH_AHEAD visits
  ahead, whole where X exceeds the last-level cache.
* ``prefetch_full_row_ahead`` / ``prefetch_dense_row_ahead``: a row-order sweep
  over full rows (CSR rows of d entries, or a dense array's rows) prefetches
  every line of the row FULL_ROW_AHEAD rows ahead (``prefetch_full_row``).
* ``loss_grad``: the full gradient in one row-order sweep (agd, gd, svrg's
  snapshot, lbfgs); ``certificate_sweep``: Xw and Xᵀα in one row-order
  sweep (the driver's checkpoints); ``parallel_certificate_sweep`` and
  ``parallel_xt_alpha``: the n_jobs mode's, over row blocks, one per thread.

Every helper is ``inline="always"`` (except the O(d)/O(nnz) sweeps, and
``full_dot``, which keeps its own fast-math flags), so a kernel written with
them compiles to the same loop as one written out.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from .. import losses as L
from .._vector import VECTOR_SUM

# This machine's last-level cache, and the bytes a nonzero of X takes in the kernels' arrays (a float64 value
# and a uint32 index): the cost model (``auto.pass_ns``) and the prefetching rule below read both.
CACHE_BYTES = 32 * 2 ** 20
NNZ_BYTES = 12
# A kernel that visits rows in random order prefetches (``prefetch_row``, ``prefetch_whole_row`` beyond the cache as
# below, and the row's scalars) the row this many visits ahead, while the rows between are read: its lines then come
# from memory or L3 in the shadow of that work. Where a step changes α_i (every step of a smooth loss) it writes v,
# which the next step's x_i·v reads, and the processor cannot run ahead into the next row by itself. Measured (whole
# ``cdlab.solve`` calls to a certified relative gap 1e-6, one thread, medians of 7 interleaved pairs, time without ÷
# with; benchmarks/prefetch_bench.py): SDCA with a random permutation, logistic λ = 1/n, a9a 1.45, ijcnn1 1.51, w8a
# 1.15, the race's text-like problem at 1e7 nonzeros 1.22, phishing, mushrooms, madelon and reuters_moneyfx 0.97–1.06.
# With shrinking (hinge, its epoch's order shuffled up front, so the example ahead is known): the text-like problem at
# 1e7 nonzeros 1.22 (λ = 1/n), and on X between L2 and the last-level cache w8a 0.90, a9a 0.90, ijcnn1 0.81, mushrooms
# 0.97, phishing 0.95, reuters_moneyfx 0.88 (1/n), a9a 0.99 and w8a 1.00 (0.01/n); under the per-visit draw it
# replaced, on other days, a9a 1.16–1.17 and ijcnn1 1.08, then 0.89–1.04 (the gain hangs on how much of the shared L3
# other work holds). Where most steps leave α_i at its bound (the hinge loss) and the rows are cached, the prefetches
# are overhead. The rules: ``dual_cd_chunk`` prefetches for a smooth loss, and for the others where X is
# ``beyond_cache`` (not measured between: the hinge loss without shrinking on X between L2 and the last-level cache,
# a9a and w8a, lost 1–14 % with prefetching in unreliable runs, so it is off there); the shrinking kernel, which runs
# the box losses (the smoothed hinge too), while its active rows exceed the last-level cache (PREFETCH_MIN_NNZ
# nonzeros, as ``exceeds_cache``). Where X exceeds the last-level cache, both prefetch the row ahead whole
# (``prefetch_whole_row``: every line of its data and, unless the problem's rows are read as full rows
# (``full_rows``), of its indices), not its first lines (``prefetch_row``): a text-like row of ~100 nonzeros spans 13
# lines of data and 7 of indices, and the stream prefetcher that would follow the first lines does not start in time.
# Measured (one thread, in-process, interleaved; first lines ÷ whole): whole SDCA calls (permutation) to a certified
# relative gap of 1e-6 on the race's text-like problem at 1e7 nonzeros, λ = 1/n (benchmarks/prefetch_bench.py, medians
# of 5): squared 1.20 (1.05–1.27), logistic 1.07 (0.99–1.24), hinge with shrinking 1.09 (1.00–1.20); 3 passes of it
# (tol 0): squared 1.46–1.51, logistic 1.17–1.23; at 5e7 nonzeros squared 1.18, hinge 1.21; the dense 1e5 × 500
# squared 1.06. Against a pass in row order (sampling="cyclic", the memory floor) the shipped first lines were
# 1.44–1.78× slower at 1e7 and 1.6× at 5e7. On X in the cache ``dual_cd_chunk`` prefetches the first lines as before,
# and the shrinking kernel nothing.
PREFETCH_AHEAD = 2
PREFETCH_MIN_NNZ = CACHE_BYTES // NNZ_BYTES
# ... of a row, the first two lines: entries of ``data`` (float64, 8 a 64-byte line) and ``indices`` (uint32, 16);
# ``prefetch_full_row`` strides by _LINE_BYTES over its array's entry size.
_LINE_BYTES = 64
_DATA_LINE, _INDEX_LINE = 8, 16
# A row-order sweep over full rows prefetches every line of the row this many rows ahead (``prefetch_full_row``): the
# checkpoint's sweep (``certificate_rows``), ``row_margins``, and Newton–CG's gradient-and-diagonal sweeps and
# Hessian-vector products. The processor's stream prefetcher does not cross a 4 KiB page, and a row of 500 doubles is
# about one: without it the sweep waits on memory at each new page. Not applied (not measured): the squared loss's
# dual CG (``_dual_cg``, which runs where d ≥ 2n, rows of thousands of entries); the random-order kernels prefetch the
# row PREFETCH_AHEAD visits ahead instead (its first lines, or all of them beyond the cache). Measured on the race's
# dense 1e5 × 500 rows, one thread (benchmarks/full_row_prefetch_bench.py: interleaved pairs in one process, medians
# of 7, without ÷ with, two runs): the certificate sweep 1.13–1.14, a Hessian-vector product 1.25 (44 → 35 ms; BLAS's
# gemv 29 ms), the gradient-and-diagonal sweep 1.23–1.36; whole Newton–CG calls (logistic, certified relative gap
# 1e-6) 1.17–1.18 at λ = 1/n, 1.20–1.21 at 0.01/n; 1 and 4 rows ahead measured as 2. Only where X ``exceeds_cache``:
# on rows in the last-level cache the prefetches are overhead (madelon, colon-cancer without the gate: the gradient
# sweep 0.65–0.76×, the certificate sweep 0.86–0.88×, whole Newton–CG calls 0.84–0.99×; with it 0.94–1.03).
FULL_ROW_AHEAD = 2


@intrinsic
def prefetch(typingctx, array, index):
    """Hint that ``array[index]`` will be read soon (LLVM's ``llvm.prefetch``: a read, kept in all cache
    levels). No effect on any value, and no fault: the CPU drops a prefetch of an address it cannot read.
    ``array``: a 1-D array, or X's one shared value (a float: ``row_arrays``), a hint of nothing; ``index``: an
    integer."""
    if isinstance(array, types.Float) and isinstance(index, types.Integer):
        # X's one shared value in place of its data array (``row_arrays``): nothing to fetch
        return types.void(array, index), lambda context, builder, signature, args: context.get_dummy_value()
    if not (isinstance(array, types.Array) and array.ndim == 1 and isinstance(index, types.Integer)):
        return None  # numba then reports that no signature matches these arguments

    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        values = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, values, [args[1]], wraparound=False,
                                           boundscheck=False)
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        # the intrinsic is overloaded on its pointer type; llvmlite names it for the IR it writes
        function = builder.module.declare_intrinsic(
            "llvm.prefetch", [byte_pointer], ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]))
        # (address, 0 = read, 3 = highest temporal locality, 1 = data cache)
        builder.call(function, [builder.bitcast(pointer, byte_pointer), ir.Constant(i32, 0), ir.Constant(i32, 3),
                                ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(inline="always", cache=True)
def prefetch_row(indptr, indices, data, i):
    """``prefetch`` the first two lines of row (or column) i's data and indices."""
    start, end = indptr[i], indptr[i + 1]
    if end > start:
        prefetch(data, start)
        prefetch(indices, start)
        if end - start > _DATA_LINE:
            prefetch(data, start + _DATA_LINE)
        if end - start > _INDEX_LINE:
            prefetch(indices, start + _INDEX_LINE)


@njit(inline="always", cache=True)
def prefetch_whole_row(indptr, indices, data, i, with_indices):
    """``prefetch`` every line of row (or column) i's data and, ``with_indices``, of its indices."""
    start, end = indptr[i], indptr[i + 1]
    if end > start:
        prefetch_full_row(data, start, end - start)
        if with_indices:
            prefetch_full_row(indices, start, end - start)


@njit(inline="always", cache=True)
def prefetch_full_row(values, start, length):
    """``prefetch`` every line of values[start:start + length] (length ≥ 1): one entry a line (``line_entries``), and
    the last entry, whose line the stride misses where the row does not start on a line. Nothing where ``values`` is
    X's one shared value (a float: ``row_arrays``; ``prefetch`` of it is empty, and so is the loop)."""
    for k in range(start, start + length, line_entries(values)):
        prefetch(values, k)
    prefetch(values, start + length - 1)


def line_entries(values):
    """The entries of ``values`` one 64-byte line holds (8 float64s, 16 float32s or uint32s); 1 for X's one shared
    value (a float: ``entry``)."""
    return 1 if isinstance(values, float) else _LINE_BYTES // values.itemsize


@overload(line_entries, inline="always")
def _line_entries(values):
    if isinstance(values, types.Float):
        return lambda values: 1
    per_line = _LINE_BYTES // (values.dtype.bitwidth // 8)
    return lambda values: per_line


@njit(inline="always", cache=True)
def prefetch_full_row_ahead(indptr, data, i, hi, d):
    """``prefetch_full_row`` the CSR row FULL_ROW_AHEAD rows after i where it is below ``hi`` and full (d entries),
    and X ``exceeds_cache`` (its ``data`` holds its nonzeros)."""
    ahead = i + FULL_ROW_AHEAD
    if ahead < hi and exceeds_cache(data.shape[0]) and indptr[ahead + 1] - indptr[ahead] == d:
        prefetch_full_row(data, indptr[ahead], d)


@njit(inline="always", cache=True)
def prefetch_dense_row_ahead(flat, i, n, d):
    """``prefetch_full_row`` row i + FULL_ROW_AHEAD of a C-contiguous (n, d) array seen ``flat`` (rows at i·d),
    where it is below n and the n·d entries ``exceeds_cache``."""
    ahead = i + FULL_ROW_AHEAD
    if ahead < n and exceeds_cache(flat.shape[0]):
        prefetch_full_row(flat, ahead * d, d)


@njit(cache=True)
def exceeds_cache(nnz) -> bool:
    """Whether X's arrays with ``nnz`` nonzeros (NNZ_BYTES each) exceed this machine's last-level cache, CACHE_BYTES."""
    return nnz * NNZ_BYTES > CACHE_BYTES


def beyond_cache(problem) -> bool:
    """``exceeds_cache`` for ``problem``'s X."""
    return bool(exceeds_cache(problem.nnz))


def prefetch_ahead(problem) -> int:
    """The ``ahead`` argument of ``dual_cd_chunk``: PREFETCH_AHEAD for a smooth loss or X ``beyond_cache``,
    else 0 (no prefetch)."""
    return PREFETCH_AHEAD if problem.is_smooth or beyond_cache(problem) else 0


# SDCA's first pass prefetches the row ahead whole where it prefetches at all (``whole_row_steps``, ``prefetch_ahead``):
# at a call's start X may have left the caches (benchmarks/race.py collects garbage before each timed call, as a
# program that allocated since its last call has done, and the collector's walk over the heap evicts them), and a
# random visit of a row in no cache waits on memory line by line; the passes after it find X in L2 or L3, where the
# first lines suffice (PREFETCH_AHEAD's comment). Measured (benchmarks/cold_pass_bench.py --repeats 9: SDCA with a
# permutation, logistic, whole calls to a certified relative gap of 1e-6, interleaved pairs in one process, first
# lines ÷ whole first pass; the same passes and P): each call after gc.collect(), λ = 1/n reuters_moneyfx 1.15
# (1.05–1.22), rcv1_small 1.02, mushrooms, phishing, a9a 0.99–1.01, colon-cancer 0.96 (0.85–1.01; 1.5 ms calls);
# λ = 0.01/n 1.00–1.05; without gc.collect() 0.97–1.01. Not taken by the shrinking kernel (hinge λ = 1/n, its first
# epoch's rows ahead whole: reuters_moneyfx 0.98, w8a 0.98, a9a 1.02, each call after gc.collect(); ijcnn1 too noisy
# to tell), whose steps mostly leave α_i at its bound and write nothing the next step reads.
COLD_PASS_WHOLE = True


def whole_row_steps(problem, n_steps, first_pass_left) -> int:
    """``dual_cd_chunk``'s ``whole_steps``: of a chunk of ``n_steps`` random-order steps, the leading ones whose row
    ahead is prefetched whole (``prefetch_whole_row``) rather than its first lines: every one where X
    ``beyond_cache``, else, under COLD_PASS_WHOLE, those of the run's first pass (``first_pass_left``: its steps not
    yet run)."""
    if beyond_cache(problem):
        return n_steps
    return max(0, min(n_steps, first_pass_left)) if COLD_PASS_WHOLE else 0


def entry(values, p):
    """X's stored value at position p: ``values[p]`` of its data array, or ``values`` itself where it is the one
    value every stored entry shares (a float: ``row_arrays``), so the kernels read no values there."""
    return values if isinstance(values, float) else values[p]


@overload(entry, inline="always")
def _entry(values, p):
    if isinstance(values, types.Float):
        return lambda values, p: values
    return lambda values, p: values[p]


@njit(inline="always", cache=True)
def sparse_dot(indices, data, start, end, w):
    """x·w for the compressed vector x = (indices, data)[start:end] (``data``: X's values, or the one value they
    share: ``entry``)."""
    z = 0.0
    for p in range(start, end):
        z += entry(data, p) * w[indices[p]]
    return z


@njit(inline="always", cache=True)
def sparse_axpy(indices, data, start, end, c, out):
    """out += c·x for the compressed vector x = (indices, data)[start:end] (``data`` as ``sparse_dot``'s)."""
    for p in range(start, end):
        out[indices[p]] += c * entry(data, p)


@njit(fastmath=VECTOR_SUM, cache=True)
def full_dot(values, start, w):
    """Σ_j values[start + j]·w[j] over the len(w) entries of a full row, summed in the vector lanes LLVM picks for
    this processor (``VECTOR_SUM``: fused multiply-adds into several vector accumulators, added at the end).
    Without the flags LLVM may not reorder a sum and emits scalar code, whatever partial sums it is written
    with: a dot pass over dense 1e5 × 500 rows takes 52 ms so, 30 ms vectorised, BLAS's gemv 26 ms (one thread,
    beside other work). Every reader of a full row calls this one function (not inlined by numba, so its
    flags stay its own), with contiguous float64 arrays (or float32 rows: ``newton.product_rows``), and so
    sums a row alike; the order differs from the column order and may differ between processors. The row is
    read through a slice indexed from 0 by a counted loop (indexed as values[start + j], each load carries its
    own offset arithmetic)."""
    d = w.shape[0]
    row = values[start:start + d]
    s = 0.0
    for j in range(d):
        s += row[j] * w[j]
    return s


@njit(inline="always", cache=True)
def row_dot(indices, data, start, end, w):
    """``sparse_dot`` that reads a full row (len(w) entries: its sorted, distinct indices are then
    0, 1, …) as a dense one by ``full_dot``, its indices unread: a third fewer bytes read, contiguous
    loads, a vectorised sum."""
    if end - start == w.shape[0]:
        return full_dot(data, start, w)
    return sparse_dot(indices, data, start, end, w)


@njit(inline="always", cache=True)
def row_axpy(indices, data, start, end, c, out):
    """``sparse_axpy`` that writes a full row as a dense one (``row_dot``)."""
    if end - start == out.shape[0]:
        for p in range(start, end):  # p unsigned, as the CSR's positions: no wrap-around test
            out[p - start] += c * data[p]
        return
    sparse_axpy(indices, data, start, end, c, out)


# A row kernel reads rows with ``row_dot``/``row_axpy`` where this share of the rows or more is full, else with
# ``sparse_dot``/``sparse_axpy``: SDCA's pass was 1.12–1.31× faster so on madelon (all rows but one full) and
# 1.2–1.35× on colon-cancer, while ``row_dot``'s test on every row cost the sparse kernels up to 25 % a pass
# (rcv1_small; benchmarks/kernel_bench.py, alternating trees).
FULL_ROWS_SHARE = 0.5
# ... and where a full row has at least this many entries: a full-row step costs ~40–60 ns more than a sparse one
# whatever its length, which the contiguous reads repay only on long rows. Measured (SDCA's exact step, hinge and
# squared, all rows full, standard normal entries, one thread; full ÷ sparse ns a step): d = 8 2.6–3.0, 13
# 2.2–2.3, 32 1.4–1.7, 64 1.0–1.1, 128 0.78–0.86, 256 0.74–0.77; heart_scale (d = 13, 53 % of rows full) 3.0.
# (Both measured with a single running sum for the full row; not measured again with ``full_dot``'s vectorised one.)
FULL_ROW_MIN_LENGTH = 100


def full_rows(problem):
    """The ``full_rows`` argument of the row kernels: True where at least FULL_ROWS_SHARE of ``problem``'s rows
    are full and d ≥ FULL_ROW_MIN_LENGTH, else None. A kernel tests ``full_rows is None``, a test numba resolves
    when it compiles (a None argument's branch is pruned), so the sparse kernels are the code they were."""
    long_rows = problem.n_features >= FULL_ROW_MIN_LENGTH
    return True if long_rows and problem.data.full_rows_share >= FULL_ROWS_SHARE else None


# The kernels that read rows only through ``entry`` (``sparse_dot``, ``sparse_axpy``, and the sweeps that call it
# themselves) take X's values as ``row_arrays`` hands them: where every stored entry of X has one value c
# (``Data.one_value``: binary or one-hot features, scaled by one number) and the rows are read sparse, c itself, a
# float, for which numba compiles each kernel anew without a read of X's values: two thirds of the bytes of a nonzero.
# The arithmetic is the same (c·w_j summed, δ·c added), so the runs are the same bit for bit. The readers: SDCA's
# steps (``dual_cd_chunk``, ``passcode_chunk``, ``_shrinking.shrinking_chunk``), the checkpoint's sweep
# (``certificate_sweep``), Newton's CG sweeps and products (``newton.jacobi_reads``) and its Hessian's (``gram_sweep``,
# ``densify_rows``, ``_sampled_hessian.gram_rows`` and ``densify_sampled``). Measured (benchmarks/one_value_bench.py
# --repeats 7: method="auto", whole solves to a certified relative gap of 1e-6, interleaved pairs, the same passes and
# P; values ÷ indices): hinge λ = 1/n (SDCA with shrinking) mushrooms 1.24, a9a 1.20, w8a 1.15, phishing 1.13, and
# 0.01/n mushrooms 1.25, w8a 1.05; logistic (Newton) w8a 1/n 1.10 and 0.01/n 1.26, a9a 1.17 and 1.16, mushrooms
# 0.01/n 1.19, phishing 0.01/n 1.04; the rest 0.99–1.03.
# The cache rules (``exceeds_cache``, PREFETCH_MIN_NNZ, auto's rates) still count NNZ_BYTES a nonzero: on one-value X
# of 2.8–8.4 million nonzeros, whose indices fit the last-level cache, the kernels prefetch as beyond it (not measured:
# no race problem lies there).
ONE_VALUE_ROWS = True


def row_arrays(problem):
    """(indptr, indices, values) of X for the kernels that read its values through ``entry``: values is X's data
    array, or the one value every stored entry shares (``Data.one_value``) where ONE_VALUE_ROWS and the rows are
    read sparse (``full_rows`` is None)."""
    indptr, indices, data = problem.csr_arrays
    if not ONE_VALUE_ROWS or full_rows(problem) is not None or problem.data.one_value is None:
        return indptr, indices, data
    return indptr, indices, problem.data.one_value


@njit(inline="always", cache=True)
def scalar_soft_threshold(x, t):
    """S_t(x) = sign(x)·max(|x| − t, 0) for t ≥ 0: the prox of t|·| at x."""
    if x > t:
        return x - t
    if x < -t:
        return x + t
    return 0.0


# --------------------------------------------------------------------------
# lazy catch-up of x ← a x + b repeated k times
# --------------------------------------------------------------------------

@njit(inline="always", cache=True)
def affine_powers(a, log_a, rho, k):
    """(a^k, (1 − a^k)/ρ) for k repetitions of w ← a w + b.

    After k steps w = a^k w + b Σ_{t<k} a^t; with a = 1 − ρ (gradient form) the
    sum is (1 − a^k)/ρ, and with a = 1/(1 + ρ) applied to (w + b) (prox form) it
    is also (1 − a^k)/ρ times b. ``log_a`` = log a, computed with log1p so that
    tiny ρ keeps full precision (expm1 below); a ≤ 0 only happens with a step
    too large to converge and falls back to the plain power.
    """
    if k == 0:
        return 1.0, 0.0
    if rho == 0.0:
        return 1.0, float(k)
    if a > 0.0:
        e = k * log_a
        return math.exp(e), -math.expm1(e) / rho
    pk = a ** k
    return pk, (1.0 - pk) / rho


def affine_constants(rho, prox_form=False):
    """(a, log a) of the per-step linear factor: 1 − ρ, or 1/(1 + ρ) in prox form."""
    if prox_form:
        return 1.0 / (1.0 + rho), -math.log1p(rho)
    a = 1.0 - rho
    return a, (math.log1p(-rho) if rho < 1.0 else 0.0)


# Power tables stop at this many entries (1 MiB for the two of affine_power_tables):
# a larger k, a coordinate left alone that long, is computed by exp.
POWER_TABLE_MAX = 1 << 16


@njit(cache=True, nogil=True, error_model="numpy")
def affine_power_tables(a, log_a, rho, k_max):
    """``affine_powers`` for k = 0..min(k_max, POWER_TABLE_MAX) as two arrays, built
    once per chunk: a chunk of K steps then pays 2K transcendental functions
    instead of two per coordinate it catches up (‖x_i‖₀ per step)."""
    size = min(k_max, POWER_TABLE_MAX) + 1
    pk = np.empty(size)
    qk = np.empty(size)
    for k in range(size):
        pk[k], qk[k] = affine_powers(a, log_a, rho, k)
    return pk, qk


@njit(inline="always", cache=True)
def tabled_affine_powers(pk, qk, a, log_a, rho, k):
    """``affine_powers(a, log_a, rho, k)``, read from its tables when k is within them."""
    if k < pk.shape[0]:
        return pk[k], qk[k]
    return affine_powers(a, log_a, rho, k)


@njit(cache=True, nogil=True)
def power_table(log_r, k_max):
    """r^k = e^{k log r} for k = 0..min(k_max, POWER_TABLE_MAX) (the fixed-point
    form's ``affine_power_tables``)."""
    out = np.empty(min(k_max, POWER_TABLE_MAX) + 1)
    for k in range(out.shape[0]):
        out[k] = math.exp(k * log_r)
    return out


@njit(inline="always", cache=True)
def toward_fixed_point(x, k, fixed, log_r, powers):
    """k steps of x ← fixed + r(x − fixed), r = e^{log_r}: fixed + r^k (x − fixed),
    r^k read from ``powers`` (a ``power_table``, possibly empty) when k is within it."""
    rk = powers[k] if k < powers.shape[0] else math.exp(k * log_r)
    return fixed + rk * (x - fixed)


@njit(inline="always", cache=True)
def catch_up_dot(indices, data, start, end, w, b, b_scale, last, t, a, log_a, rho, pk, qk):
    """Bring w_j for j in row i (positions start:end) to step t — w_j ← a^k w_j +
    b_scale·b_j (1 − a^k)/ρ for the k = t − last[j] missed steps, the factors read
    from ``affine_power_tables`` (pk, qk) — and return x_i·w."""
    z = 0.0
    for p in range(start, end):
        j = indices[p]
        pk_j, qk_j = tabled_affine_powers(pk, qk, a, log_a, rho, t - last[j])
        w[j] = pk_j * w[j] + qk_j * b_scale * b[j]
        last[j] = t
        z += data[p] * w[j]
    return z


@njit(cache=True, nogil=True, error_model="numpy")
def catch_up_all(w, b, last, t, pk, qk, a, log_a, rho):
    """Bring every coordinate to step t (O(d), at chunk ends and epoch ends), the factors read from the
    chunk's ``affine_power_tables`` (pk, qk): a coordinate is at most a chunk behind, so this costs two loads
    per coordinate, not two transcendental functions."""
    for j in range(w.shape[0]):
        k = t - last[j]
        if k != 0:
            pk_j, qk_j = tabled_affine_powers(pk, qk, a, log_a, rho, k)
            w[j] = pk_j * w[j] + qk_j * b[j]
            last[j] = t


# --------------------------------------------------------------------------
# the lazy mini-batch step
# --------------------------------------------------------------------------

def minibatch_kernel(catch_up, point, row_update, spread, settle, row_finish):
    """The kernel ``steps(indptr, indices, data, batches, t0, last, st, change)``
    of a mini-batch method whose primal point is updated lazily, made of the
    method's 1-D updates (@njit functions, compiled into it): it runs
    len(batches) steps from global step t0 in place and returns the nonzeros
    touched (Σ_K ‖x_k‖₀ a step, each row counted once). ``change`` is scratch
    of m = batches.shape[1] entries.

    Coordinate j holds its value at step last[j]. Step t, with K = batches[t − t0]
    (distinct rows), is five sweeps over the batch; ``st`` (the method's
    parameters and arrays) is handed to each update:

    1. ``catch_up(st, j, k)``: each j in a row of K with last[j] < t is brought
       over the k = t − last[j] steps in which no row touched it; last[j] = t;
    2. z = Σ_j x_ij ``point(st, j)``, each row read at the method's point, and
       ``row_update(st, i, z)``, the row's own update, which returns its change
       (it may write only what no row's point reads: the row's dual variable);
    3. ``spread(st, i, change, indices, data, start, end)``: the row's change
       spread over x_i (the slice start:end), into what step 4 reads;
    4. ``settle(st, j)``: each j in a row of K, once, takes step t's update;
       last[j] = t + 1;
    5. ``row_finish(st, i, change, indices, data, start, end)``: what a row's
       change does once every coordinate has settled (``no_row_finish``: nothing).

    With one row a step (m = 1) the row's coordinates are distinct and each update reads and writes its own
    coordinate only, so sweeps 1–2 run as one loop and 3–5 as another, coordinate by coordinate: the same
    operations in the same order per coordinate, so the same numbers, reading the row twice instead of five
    times.

    The updates are closed over, not passed at run time: numba does not cache a
    kernel that receives a function as an argument. The kernel is compiled
    without numba's reference counting (``_nrt=False``), so it allocates
    nothing (hence the scratch argument): with it, every update inlined here
    would increment and decrement each array of ``st`` once per coordinate,
    which made the loop up to 2.7× slower than one written out.
    """
    @njit(cache=True, nogil=True, _nrt=False)
    def steps(indptr, indices, data, batches, t0, last, st, change):
        n_steps, m = batches.shape
        touched = 0
        for k in range(n_steps):
            t = t0 + k
            if m == 1:  # one row: its distinct coordinates make sweeps 1–2 and 3–5 one loop each
                i = batches[k, 0]
                start, end = indptr[i], indptr[i + 1]
                zb = 0.0
                for p in range(start, end):
                    j = indices[p]
                    if last[j] < t:
                        catch_up(st, j, t - last[j])
                        last[j] = t
                    zb += data[p] * point(st, j)
                change[0] = row_update(st, i, zb)
                touched += end - start
                for p in range(start, end):
                    j = indices[p]
                    spread(st, i, change[0], indices, data, p, p + 1)
                    settle(st, j)
                    last[j] = t + 1
                    row_finish(st, i, change[0], indices, data, p, p + 1)
                continue
            for b in range(m):
                i = batches[k, b]
                for p in range(indptr[i], indptr[i + 1]):
                    j = indices[p]
                    if last[j] < t:  # the test here, not in the callee, keeps dense rows fast
                        catch_up(st, j, t - last[j])
                        last[j] = t
            for b in range(m):
                i = batches[k, b]
                zb = 0.0
                for p in range(indptr[i], indptr[i + 1]):
                    zb += data[p] * point(st, indices[p])
                change[b] = row_update(st, i, zb)
                touched += indptr[i + 1] - indptr[i]
            for b in range(m):
                i = batches[k, b]
                spread(st, i, change[b], indices, data, indptr[i], indptr[i + 1])
            for b in range(m):
                i = batches[k, b]
                for p in range(indptr[i], indptr[i + 1]):
                    j = indices[p]
                    if last[j] == t:
                        settle(st, j)
                        last[j] = t + 1
            for b in range(m):
                i = batches[k, b]
                row_finish(st, i, change[b], indices, data, indptr[i], indptr[i + 1])
        return touched

    return steps


@njit(inline="always", cache=True)
def no_row_finish(st, i, change, indices, data, start, end):
    """``minibatch_kernel``'s last sweep for a method whose rows are done at their update."""


@njit(fastmath=VECTOR_SUM, cache=True, nogil=True)
def all_finite(x) -> bool:
    """Whether every entry of the vector x is finite (a checkpoint's test of w: ``np.all(np.isfinite(w))``
    first builds a boolean array of len(w)). x_j·0 is ±0 for a finite x_j and NaN for ±inf or NaN, and a sum
    with a NaN term is NaN (``VECTOR_SUM`` keeps both rules), so Σ x_j·0 is 0 exactly when every entry is
    finite: one vectorised pass without a branch (d = 47 236: 4.4 µs, 24 µs a loop that tests each entry)."""
    s = 0.0
    for j in range(x.shape[0]):
        s += x[j] * 0.0
    return s == 0.0


@njit(cache=True, nogil=True)
def any_nonzero(x) -> bool:
    """``x.any()`` for a vector, stopping at the first nonzero entry (a NaN counts, as it does for numpy)."""
    for j in range(x.shape[0]):
        if x[j] != 0.0:
            return True
    return False


@njit(cache=True, nogil=True)
def dense_dot(a, b):
    """a·b for dense vectors of equal length (module docstring: not numpy's BLAS ``@``)."""
    acc = 0.0
    for j in range(a.shape[0]):
        acc += a[j] * b[j]
    return acc


# --------------------------------------------------------------------------
# full gradient
# --------------------------------------------------------------------------

@njit(cache=True, nogil=True, error_model="numpy")
def loss_grad(indptr, indices, data, y, code, s, w, grad, deriv):
    """One row-wise sweep over X: grad = (1/n) Σ_i φ'(x_i·w) x_i, deriv_i = φ'(x_i·w).

    Returns f(w) = (1/n) Σ_i φ(x_i·w). Touches nnz(X) nonzeros.
    """
    n = y.shape[0]
    grad[:] = 0.0
    acc = 0.0
    for i in range(n):
        start, end = indptr[i], indptr[i + 1]
        z = sparse_dot(indices, data, start, end, w)
        acc += L.loss_value(code, z, y[i], s)
        g = L.loss_deriv(code, z, y[i], s)
        deriv[i] = g
        sparse_axpy(indices, data, start, end, g / n, grad)
    return acc / n


# --------------------------------------------------------------------------
# certificates
# --------------------------------------------------------------------------

@njit(cache=True, nogil=True, error_model="numpy")
def certificate_rows(indptr, indices, data, y, code, s, w, alpha, alpha_from_w, z, xt_alpha, lo, hi, full_rows):
    """``certificate_sweep`` over the rows lo..hi − 1 only. The row's work stays written out in this loop: numba
    compiles it 3–6× slower as an inline helper called per row (a9a, ijcnn1, w8a)."""
    for i in range(lo, hi):
        start, end = indptr[i], indptr[i + 1]
        if full_rows is None:
            zi = sparse_dot(indices, data, start, end, w)
        else:
            prefetch_full_row_ahead(indptr, data, i, hi, w.shape[0])
            zi = row_dot(indices, data, start, end, w)
        z[i] = zi
        if alpha_from_w:
            alpha[i] = -L.loss_deriv(code, zi, y[i], s)
        if alpha[i] != 0.0:  # a zero α_i adds nothing (hinge: the examples beyond the margin)
            if full_rows is None:
                sparse_axpy(indices, data, start, end, alpha[i], xt_alpha)
            else:
                row_axpy(indices, data, start, end, alpha[i], xt_alpha)


@njit(cache=True, nogil=True, error_model="numpy")
def certificate_sweep(indptr, indices, data, y, code, s, w, alpha, alpha_from_w, z, xt_alpha, full_rows):
    """What a checkpoint reads of X, in one row-order sweep: z = Xw and
    xt_alpha = Xᵀα (to be zero on entry), each row read once for z_i = x_i·w and
    once for xt_alpha += α_i x_i while it is hot. ``alpha_from_w``: first set
    α_i = −φ_i'(z_i), the dual point of a primal method. z is summed as
    ``Problem.margins`` sums it (scipy's CSR product, or ``row_dot`` where
    ``full_rows``) and Xᵀα in the order of scipy's CSC product, so P, D and the gap
    that ``Problem`` computes from these are bit for bit the ones it computes from w
    and α alone. ``full_rows``: see ``full_rows``."""
    certificate_rows(indptr, indices, data, y, code, s, w, alpha, alpha_from_w, z, xt_alpha, 0, y.shape[0],
                     full_rows)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def parallel_certificate_sweep(indptr, indices, data, y, code, s, w, alpha, alpha_from_w, z, xt_alpha, bounds,
                               full_rows):
    """``certificate_sweep`` with the rows cut into the blocks of ``bounds``
    (``_threads.row_blocks``), one per thread: z and α are written row by row,
    disjoint across blocks; each block sums its own Xᵀα, and the partial sums are
    added in block order (so a run's sums do not depend on thread timing)."""
    n_blocks = bounds.shape[0] - 1
    partial = np.zeros((n_blocks, xt_alpha.shape[0]))
    for b in prange(n_blocks):
        certificate_rows(indptr, indices, data, y, code, s, w, alpha, alpha_from_w, z, partial[b],
                         bounds[b], bounds[b + 1], full_rows)
    add_blocks(partial, n_blocks, None, xt_alpha)


@njit(cache=True, nogil=True, error_model="numpy")
def row_margins(indptr, indices, data, w, z, full_rows):
    """z = Xw row by row, summed as ``certificate_sweep`` sums it (``row_dot`` where ``full_rows``, else
    ``sparse_dot``: scipy's CSR product's sums), for ``Problem.margins`` and Newton's XΔ; ``data``: X's values, or
    the one value they share (``row_arrays``)."""
    for i in range(z.shape[0]):
        if full_rows is None:
            z[i] = sparse_dot(indices, data, indptr[i], indptr[i + 1], w)
        else:
            prefetch_full_row_ahead(indptr, data, i, z.shape[0], w.shape[0])
            z[i] = row_dot(indices, data, indptr[i], indptr[i + 1], w)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def parallel_xt_alpha(indptr, indices, data, alpha, out, bounds):
    """out += Xᵀα over the row blocks of ``bounds``, one per thread, each summing its
    own partial product, added in block order."""
    n_blocks = bounds.shape[0] - 1
    partial = np.zeros((n_blocks, out.shape[0]))
    for b in prange(n_blocks):
        part = partial[b]
        for i in range(bounds[b], bounds[b + 1]):
            sparse_axpy(indices, data, indptr[i], indptr[i + 1], alpha[i], part)
    add_blocks(partial, n_blocks, None, out)


@njit(cache=True, nogil=True, error_model="numpy")
def add_blocks(partial, n_blocks, cols, out):
    """out[j] += partial[0, j] + … + partial[n_blocks − 1, j], added to out one block at a time in block order, for
    j in ``cols`` (every entry where cols is None, a branch numba prunes): how the n_jobs mode's row-block sweeps
    add their blocks' partial sums, so a run's sums do not depend on thread timing. Not a parallel kernel: its
    loops stay loops inside one."""
    if cols is None:
        for b in range(n_blocks):
            for j in range(out.shape[0]):
                out[j] += partial[b, j]
    else:
        for j in cols:
            acc = out[j]
            for b in range(n_blocks):
                acc += partial[b, j]
            out[j] = acc
