"""The race (issue 16): cdlab against every peer, timed as a user waits, to the same objective.

    python benchmarks/race.py [--quick] [--only NAME ...] [--repeats 3] [--no-threads] [--save [DIR]]
    python benchmarks/race.py --tables [DIR ...] [--details]

``--save DIR`` keeps each finished problem's results in DIR (one JSON file per
problem, with the settings it ran under, cdlab's source digest included, and
the date); a rerun with the same DIR and settings reads them instead of racing
again, so the full race can be run in pieces, across sessions. The race's
results are kept in the repository, in ``benchmarks/results/race`` (RESULTS):
``--save`` with no DIR saves there. ``--tables [DIR ...]`` races nothing: it
prints the tables over every problem saved in those directories (RESULTS when
none is named), with the settings each ran under, and then how many of the
race's problems they cover, raced by which cdlab source digests, and which are
missing; ``--details`` first prints each problem's own rows, as the race did.

Protocol, per problem (data scaled by the mean example norm; logistic, hinge
= L1-loss SVM max(0, 1 − y x·w), squared ½(x·w − y)²; λ = 1/n and 0.01/n;
no intercept):

1. P* = cdlab.reference_optimum (SDCA to a certified gap ≤ 1e-9·|P*|,
   ``certified_p_star``, cached on disk; not timed; a smooth loss beyond 2e7
   nonzeros: Newton to that gap, not cached). The target is P* + ε with ε = 1e-6·|P*|.
2. cdlab: each fixed method of ``OURS`` (and ``method="auto"``) is timed
   around the whole ``cdlab.solve(problem, ..., tol=ε)`` call: kernel,
   checkpoint certificates and all; it must end certified (duality gap ≤ ε,
   so P − P* ≤ ε). Problem construction (the CSR/CSC copies) is timed once
   and shown apart ("build s"); peers do their own conversion inside fit().
   A fixed method whose first run is still going at OURS_REACH × the fastest
   run finished before it (and at OURS_FLOOR_S) is stopped there (max_time)
   and not repeated: it cannot be the fastest, and is shown as n/r with its
   cap (auto always runs to the end). One whose first run ended without
   converging (at max_passes, say: on one thread a rerun from the same seed
   ends so again), or converged but took at least OURS_FLOOR_S and over
   OURS_REPEAT_REACH × the fastest converged first run of a fixed method, is
   not repeated either, unless that run entered numba's compiler: its one run
   is shown.
3. Each peer (``_peers.PEERS``, at its own conventions converted) is fitted
   at tol 1e-2, 1e-3, … until the P of its coef_ (computed by cdlab) is
   ≤ P* + ε; that tolerance is then timed around fit(). A peer that does not
   get there within the time cap, or raises, or is not installed, is shown as
   n/r with the reason. One whose fit at that tolerance took at least
   OURS_FLOOR_S and over OURS_REPEAT_REACH × the timed call of a faster peer
   on as many threads that reached the target, or over OURS_REPEAT_REACH² ×
   that table's cdlab best, is timed once, as a fixed cdlab method so far
   behind is, and says so: its one run cannot be that table's best peer, nor
   bring a ratio to cdlab under OURS_REPEAT_REACH.
4. Every other timing is repeated (``--repeats``, ≥ 3); a call whose first run
   took under SHORT_CALL_S is repeated until its runs add up to about repeats ×
   SHORT_CALL_S, in at most max(repeats, SHORT_CALL_REPEATS) runs
   (``repeats_for``). The median is reported, with the spread (max − min) /
   median (over more runs for a short call, so wider than a 3-run row's).
   JIT compilation and a first call of
   every peer happen on a toy problem before anything is timed; a timed cdlab
   run that still entered numba's compiler is run again (COMPILED_RERUNS).
5. One thread everywhere (cdlab's n_jobs = 1, which runs no numba threads;
   threadpoolctl limits BLAS and OpenMP to 1, peers' n_jobs/n_threads = 1); a
   second table refits the peers that have threads with 2, against cdlab's
   fastest method with two threads allowed: the fastest of its methods with a
   parallel mode (SDCA, dual CD: PASSCoDe-Wild), if within TWO_THREAD_REACH of
   the fastest on one thread, reruns with n_jobs = 2, the faster of the one-
   and two-thread runs counting (NUMBA_NUM_THREADS=2).
6. Memory: the peak resident set size (RSS) of this process during the call,
   minus the RSS just before it (after gc.collect() and glibc's malloc_trim(0),
   so freed memory is not counted as live), read from Linux's VmHWM after
   resetting it (writing 5 to /proc/self/clear_refs); for cdlab the measured
   region is Problem construction + solve (its CSC copy is part of what a
   user pays).

Ratios are peer seconds ÷ cdlab seconds (> 1: cdlab is faster), against the
fastest fixed cdlab method of that problem; the geometric mean is over the
problems where both finished. Each peer's timed fits alternate with calls of
that method (``timed_pairs``), and its ratio is to the median of those calls,
so that a change in the shared machine's load between cdlab's runs (step 2)
and the peer's falls on both: on this machine the same problem's whole race
read ijcnn1 logistic 1/n at 67 ms for Newton and best peer ÷ cdlab 1.05, and
20 minutes later 42 ms and 1.34. (Problems saved before the pairing have the
table's "cdlab s" as every peer's denominator.) Where n_jobs=2 won in
isolation, a two-thread peer's fits alternate with that run, right after each
fit, and then with the one-thread best, and its ratio is to the faster median
("paired call" names it): an n_jobs=2 call right after a peer's two-thread fit
shares the cores with that peer's BLAS threads, which spin on after it returns
(``race_case``).
"""
from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "2")  # before numba is imported: n_jobs=2's threads

import argparse  # noqa: E402
import datetime  # noqa: E402
from collections import Counter  # noqa: E402
import ctypes  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import cdlab  # noqa: E402
from cdlab._jit_cache import source_digest  # noqa: E402
from cdlab.timing import compiler_entries  # noqa: E402
from cdlab.data import make_synthetic  # noqa: E402
from _peers import CONVENTIONS, PEERS, dense, peer_input, peer_status, real, scaled  # noqa: E402

# the digest of the cdlab this process imported, read once: files edited while a race runs do not change
# the code it runs, so they must not change the digest its saved problems carry
CDLAB_DIGEST = source_digest()[:12]
# where the race's results are kept, one JSON file per problem: committed, so coverage accumulates across sessions
RESULTS = Path(__file__).resolve().parent / "results" / "race"

GAP_REL = 1e-6          # cdlab's certified gap and the peers' target, relative to |P*|
REFERENCE_TOL = 1e-9    # P* certified to this relative gap (``certified_p_star``)
REFERENCE_PASSES = 50_000  # within this many SDCA passes (a9a hinge at 0.01/n needs more than the default 5000)
REFERENCE_NEWTON_NNZ = 2e7  # P* of a smooth loss on more nonzeros than this by Newton (``certified_p_star``)
PEER_TOLS = tuple(10.0 ** -k for k in range(2, 13))
LAM_FACTORS = (1.0, 0.01)  # λ = factor / n
# the two-thread table reruns on n_jobs=2 the fastest parallel method if it is at most this many times
# slower than the fastest on one thread
TWO_THREAD_REACH = 2.0
# a fixed cdlab method whose first run is still going at this many times the fastest run finished before
# it, and at OURS_FLOOR_S, is stopped there (max_time, which the driver checks between checkpoints, so a
# little later) and not repeated: it is shown as n/r with its cap; auto is never stopped. The floor keeps a
# noisy millisecond run from sinking a method where stopping it would save nothing.
OURS_REACH = 10.0
OURS_FLOOR_S = 1.0
# a fixed cdlab method whose first run converged, took at least OURS_FLOOR_S and more than this many times the
# fastest converged first run of a fixed method, is not repeated (it cannot be the fastest): its one run's seconds
# are shown; nor is one whose first run ended without converging (``runs_not_repeated``); a first run that entered
# numba's compiler is always repeated
OURS_REPEAT_REACH = 2.0
# A call whose first run took under SHORT_CALL_S is timed more than --repeats times: until its runs add up to
# about repeats × SHORT_CALL_S, in at most max(repeats, SHORT_CALL_REPEATS) runs (``repeats_for``). The median of
# 3 millisecond calls on this shared machine is not a measurement: heart_scale hinge 1/n read auto ÷ best 1.47 in
# a race where auto ran the best's method; 41 interleaved pairs of the two calls read 1.03.
SHORT_CALL_S = 0.2
SHORT_CALL_REPEATS = 15
# A timed run of ours that entered numba's compiler is run again, at most this many times (then the last
# one's seconds are kept and the row's status says so).
COMPILED_RERUNS = 2
LOSSES = ("logistic", "hinge", "squared")
# (method, sampling, options): the fixed cdlab methods raced; those that refuse a loss (a smooth
# one needed for the hinge, a box-constrained dual coordinate for SDCA's shrinking) are skipped for it
OURS = [("sdca", "uniform", {}), ("sdca", "permutation", {}), ("sdca", "permutation", {"shrinking": True}),
        ("dual_cd", "importance", {}), ("primal_cd", "uniform", {}), ("primal_cd", "importance", {}),
        ("newton", "uniform", {})]
SHIPPED = ("a9a", "w8a", "ijcnn1", "mushrooms", "phishing", "heart_scale", "reuters_moneyfx",
           "rcv1_small", "colon-cancer", "madelon")


@dataclass
class Case:
    name: str          # data name
    make: Callable     # () -> (X, y)
    loss: str
    lam_factor: float  # λ = lam_factor / n

    @property
    def label(self):
        return f"{self.name} {self.loss} λ={self.lam_factor:g}/n"


# ------------------------------------------------------------------ problems

def text_like(nnz, seed=0):
    """Power-law column counts (Zipf exponent 1, as word frequencies), ~100
    nonzeros per example, d = n/4: a text-like sparse problem with nnz nonzeros."""
    n = int(nnz // 100)
    X, y = make_synthetic(n, max(n // 4, 1000), density=nnz / (n * max(n // 4, 1000)), col_skew=1.0,
                          values="gaussian", seed=seed)
    return scaled(X), y


def data_sets(quick):
    if quick:
        return {"heart_scale": lambda: real("heart_scale"), "colon-cancer": lambda: real("colon-cancer"),
                "rcv1_small": lambda: real("rcv1_small")}
    out = {name: (lambda name=name: real(name)) for name in SHIPPED}
    out["text 1e7 nnz"] = lambda: text_like(1e7)
    out["text 5e7 nnz"] = lambda: text_like(5e7)
    out["dense 1e5×500"] = lambda: dense(100_000, 500, 0)
    return out


def cases(quick):
    out = []
    for name, make in data_sets(quick).items():
        for loss in LOSSES:
            for factor in (LAM_FACTORS[:1] if quick and name != "rcv1_small" else LAM_FACTORS):
                out.append(Case(name, make, loss, factor))
    return out


def make_problem(X, y, loss, lam_factor):
    return cdlab.Problem(X, y, loss=loss, lam=lam_factor / X.shape[0])


def each_problem(makers, losses, only=None):
    """(name, loss, λ factor, problem, ε = GAP_REL·|P*|) for each data set of ``makers`` (name → () -> (X, y),
    each built once; with ``only``, the names starting with one of these) × ``losses`` × LAM_FACTORS."""
    for name, make in makers.items():
        if only and not any(name.startswith(o) for o in only):
            continue
        X, y = make()
        for loss in losses:
            for factor in LAM_FACTORS:
                problem = make_problem(X, y, loss, factor)
                yield name, loss, factor, problem, GAP_REL * abs(certified_p_star(problem))


# --------------------------------------------------------------- measurement

try:
    _LIBC = ctypes.CDLL("libc.so.6")
except OSError:  # not glibc: the baseline may then include freed, unreturned memory
    _LIBC = None


def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    raise OSError(f"{field} not in /proc/self/status")


class PeakRSS:
    """Peak RSS above the starting RSS during the block, in MB (NaN where
    Linux's VmHWM cannot be reset)."""

    def __enter__(self):
        gc.collect()
        if _LIBC is not None:
            _LIBC.malloc_trim(0)  # give freed heap pages back, so the baseline is what is live
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # resets VmHWM to the current RSS
            self.base = _status_kb("VmRSS")
        except OSError:
            self.base = None
        return self

    def __exit__(self, *exc):
        self.mb = np.nan if self.base is None else (_status_kb("VmHWM") - self.base) / 1024.0
        return False


def timed(fn, repeats):
    """(median seconds, spread = (max − min)/median, last return value, peak MB of the first call)."""
    return timed_pairs(fn, (), repeats)[:4]


def timed_pairs(fn, partners, repeats):
    """``timed``'s four values, then the least median seconds over ``partners``, that partner's label (NaN and
    "" if there are none or none of their runs counted) and every partner's median by label. ``partners``:
    (label, call, runs), in order after each of fn's runs, each call timed ``runs`` times, outside fn's memory
    measurement: a peer's fits alternate with cdlab's best calls, so a change in the shared machine's load
    falls on both (``race_case``). A partner run that returns False (not certified) is not counted."""
    times, out, mb = [], None, np.nan
    partner_times = [[] for _ in partners]
    for k in range(repeats):
        with PeakRSS() as mem:
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
        if k == 0:
            mb = mem.mb
        for (_, call, runs), kept in zip(partners, partner_times):
            for _ in range(runs):
                gc.collect()
                t0 = time.perf_counter()
                counted = call()
                if counted is not False:
                    kept.append(time.perf_counter() - t0)
    med = float(np.median(times))
    medians = [float(np.median(kept)) if kept else np.inf for kept in partner_times]
    fastest = int(np.argmin(medians)) if medians else None
    paired, label = ((medians[fastest], partners[fastest][0]) if fastest is not None and np.isfinite(medians[fastest])
                     else (np.nan, ""))
    by_label = {name: m if np.isfinite(m) else np.nan for (name, _, _), m in zip(partners, medians)}
    return med, (max(times) - min(times)) / med if med > 0 else 0.0, out, mb, paired, label, by_label


def repeats_for(first_seconds, repeats):
    """How many runs of a call whose first run took ``first_seconds`` are timed: ``repeats``, or, for a call under
    SHORT_CALL_S, enough that they add up to about repeats × SHORT_CALL_S, at most max(repeats, SHORT_CALL_REPEATS)."""
    if first_seconds >= SHORT_CALL_S:
        return repeats
    # the ratio less a rounding slack: 3 × 0.2 / 0.1 is 6.000000000000001 in floating point
    wanted = math.ceil(repeats * SHORT_CALL_S / first_seconds - 1e-9) if first_seconds > 0 else SHORT_CALL_REPEATS
    return max(repeats, min(SHORT_CALL_REPEATS, wanted))


def solver_label(method, sampling, options):
    """A raced solver's name in the tables: "method sampling", then its options as key=value."""
    return " ".join([method, sampling] + [f"{k}={v}" for k, v in options.items()])


def solver_of(label):
    """(method, sampling, options) of a fixed solver's ``solver_label``."""
    return next(entry for entry in OURS if solver_label(*entry) == label)


def has_parallel_mode(label) -> bool:
    """Whether the fixed solver ``label`` runs with n_jobs > 1 (shrinking runs on one thread)."""
    method, _, options = solver_of(label)
    return cdlab.METHODS[method].parallel and not options.get("shrinking", False)


def applicable(problem):
    """The fixed cdlab methods (OURS entries) that accept this problem."""
    out = []
    for method, sampling, options in OURS:
        spec = cdlab.METHODS[method]
        if (not spec.loss_refusal(problem.loss, options) and not (sampling == "importance" and not problem.is_smooth)
                and not (spec.problem_rule and spec.problem_rule(problem, {**spec.options, **options}))):
            out.append((method, sampling, options))
    return out


def run_ours(problem, eps, repeats, max_passes, with_auto=True, n_jobs=1, runs=None):
    """One row per cdlab method (``runs``: OURS entries, default every applicable
    one): median seconds of the whole solve call to gap ≤ eps, on n_jobs threads.

    The repeats go round-robin over the methods (auto, method 1, 2, …, then again), so
    a change in the shared machine's load falls on every method alike instead of on
    whichever ran during it: auto ÷ best compares runs taken side by side. Auto goes first
    in each round: it is never stopped, and its time caps the fixed methods' first runs
    (OURS_REACH) from the first of them on, where a slow method run before any had finished
    (SDCA on the dense problem's logistic loss) ran uncapped, three times. A fixed method whose first run
    did not converge, or converged far behind the fastest fixed one (``runs_not_repeated``: OURS_REPEAT_REACH,
    OURS_FLOOR_S), is not repeated, unless that run entered numba's compiler. A run (auto's too) whose first run
    took under SHORT_CALL_S runs in more rounds (``repeats_for``), the others sitting those out: those extra
    rounds interleave the short runs with each other only."""
    rows = []
    runs = applicable(problem) if runs is None else list(runs)
    if with_auto:
        runs.append(("auto", "auto", {}))
    calls = [lambda max_time, method=method, sampling=sampling, options=options: cdlab.solve(
        problem, method=method, tol=eps, max_passes=max_passes, seed=0, n_jobs=n_jobs, max_time=max_time,
        **({} if method == "auto" else {"sampling": sampling, **options})) for method, sampling, options in runs]
    times, results = [[] for _ in runs], [None] * len(runs)
    stopped = [False] * len(runs)  # stopped at its cap in the first round: not repeated
    kept_compiled = [False] * len(runs)  # a run whose seconds were kept entered numba's compiler
    caps = [None] * len(runs)  # each first run's max_time (OURS_REACH, OURS_FLOOR_S)
    order = [len(runs) - 1, *range(len(runs) - 1)] if with_auto else range(len(runs))
    once = [False] * len(runs)  # runs_not_repeated after the first round
    wanted = [repeats] * len(runs)  # each run's repeats_for its first run
    round_ = 0
    while round_ < max(wanted, default=0):  # no runs (race_case's n_jobs=2 rerun with none near): no rows
        for k in order:
            call = calls[k]
            if stopped[k] or once[k] or round_ >= wanted[k]:
                continue
            finished = [min(ts) for ts, res in zip(times, results) if ts and res.status == "converged"]
            first = not times[k]  # a method that finished once is repeated in full
            if first and finished and runs[k][0] != "auto":
                caps[k] = max(OURS_REACH * min(finished), OURS_FLOOR_S)
            # A run that entered numba's compiler (a path the warm-up's short runs on a toy problem never
            # reached: CSR rather than dense rows, shrinking's, the face polish's) is run again and its seconds are
            # not kept.
            for _attempt in range(COMPILED_RERUNS + 1):
                gc.collect()  # as timed() does: no collection of the previous run's garbage inside the timing
                entries = compiler_entries()
                t0 = time.perf_counter()
                results[k] = call(caps[k] if first else None)
                seconds = time.perf_counter() - t0
                entered = compiler_entries() != entries
                if not entered:
                    break
            stopped[k] = results[k].status == "max_time"
            kept_compiled[k] = kept_compiled[k] or entered
            times[k].append(seconds)
        round_ += 1
        if round_ == 1:
            once = [skip and not (compiled or cut) for skip, compiled, cut in zip(
                runs_not_repeated(runs, times, results), kept_compiled, stopped)]
            wanted = [repeats_for(ts[0], repeats) for ts in times]
    for (method, sampling, options), ts, res, cut, cap, compiled, single in zip(runs, times, results, stopped, caps,
                                                                                 kept_compiled, once):
        seconds = float(np.median(ts))
        spread = np.nan if cut or single else (max(ts) - min(ts)) / seconds if seconds > 0 else 0.0
        last = res.trace.iloc[-1]
        ok = res.status == "converged"
        status = f"stopped at {seconds:.3g} s (cap {cap:.3g} s, {OURS_REACH:g}× a faster run)" if cut else res.status
        if single:
            status += f" (run once: over {OURS_REPEAT_REACH:g}× the fastest fixed method)" if ok else " (run once)"
        if compiled:
            status += " (compiled in a timed run)"
        rows.append(dict(solver=solver_label(method, sampling, options) if method != "auto" else "auto", seconds=seconds if ok else np.nan,
                         spread=spread, passes=last.passes, gap=last.gap, primal=last.primal,
                         status=status, picked=solver_label(res.method, res.sampling, res.trace.attrs["auto"].get("options", {}))
                         if method == "auto" else ""))
    return pd.DataFrame(rows)


def runs_not_repeated(runs, times, results):
    """For each run, after the first round: whether it is a fixed method whose first run ended without
    converging (not at its cap: those are ``stopped``; at max_passes, which a rerun from the same seed reaches
    again), or converged but took at least OURS_FLOOR_S and more than OURS_REPEAT_REACH × the fastest converged
    first run of a fixed method (auto may pick a method or options outside ``runs``, so its time says nothing
    of which fixed one is fastest)."""
    firsts = [ts[0] for (method, *_), ts, res in zip(runs, times, results)
              if method != "auto" and ts and res.status == "converged"]
    fastest = min(firsts, default=np.inf)
    return [method != "auto" and bool(ts) and (res.status != "converged" or (
        ts[0] >= OURS_FLOOR_S and ts[0] > OURS_REPEAT_REACH * fastest))
        for (method, *_), ts, res in zip(runs, times, results)]


def fit_peer(build, problem, X, tol, threads):
    """Fit one peer; returns (seconds, P of its coef_ by cdlab, note)."""
    est = build(problem.lam, problem.n_samples, problem.n_features, tol, threads)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with threadpool_limits(threads):
            t0 = time.perf_counter()
            est.fit(X, problem.y)
            seconds = time.perf_counter() - t0
    return seconds, problem.primal(np.ravel(est.coef_).astype(np.float64))


def run_peer(name, build, problem, X, target, repeats, cap, threads=1, tols=PEER_TOLS, reference=np.inf,
             partners=()):
    """Tighten the peer's tol until P ≤ target, then time that tol. Returns a row. A fit at that tol that took
    at least OURS_FLOOR_S and over OURS_REPEAT_REACH × ``reference`` is timed once (``race_case``'s reference:
    a faster peer's seconds, or OURS_REPEAT_REACH × cdlab's), as a fixed cdlab method so far behind is: at
    5e7 nonzeros each fit of scikit-learn's Ridge solvers takes 30-60 s. The fit judged is the tol search's last
    (from a cold start, so it may be slower than the timed ones). ``partners``: cdlab's calls the timed fits
    alternate with (``timed_pairs``); the least of their medians is the row's "cdlab s", "cdlab call" names
    that call, and "cdlab s by call" holds each one's median."""
    row = dict(peer=name, threads=threads, seconds=np.nan, spread=np.nan, tol=np.nan, primal=np.nan,
               mb=np.nan, note="", **{"cdlab s": np.nan, "cdlab call": "", "cdlab s by call": {}})
    try:
        build(problem.lam, problem.n_samples, problem.n_features, 1e-3, threads)
    except Exception as exc:  # ImportError, or a library broken at import
        row["note"] = f"unavailable: {type(exc).__name__}: {exc}"
        return row
    try:
        for tol in tols:
            seconds, primal = fit_peer(build, problem, X, tol, threads)
            row.update(primal=primal, tol=tol)
            if primal <= target:
                break
            if seconds > cap:
                row["note"] = f"P − target {primal - target:.2g} at tol {tol:g} after {seconds:.3g} s (cap {cap:.3g} s)"
                return row
        else:
            row["note"] = f"P − target {row['primal'] - target:.2g} at tol {tols[-1]:g}"
            return row
        once = seconds >= OURS_FLOOR_S and seconds > OURS_REPEAT_REACH * reference
        med, spread, (_, primal), mb, ours, call, by_call = timed_pairs(
            lambda: fit_peer(build, problem, X, row["tol"], threads), partners,
            1 if once else repeats_for(seconds, repeats))
        row.update(seconds=med, spread=np.nan if once else spread, primal=primal, mb=mb,
                   **{"cdlab s": ours, "cdlab call": call, "cdlab s by call": by_call})
        if primal > target:  # a randomised peer may land above on a rerun
            row["note"] = "above target on a rerun"
        elif once:
            row["note"] = f"run once: over {OURS_REPEAT_REACH:g}× {reference:.3g} s"
    except Exception as exc:
        row.update(seconds=np.nan, note=f"failed: {type(exc).__name__}: {exc}")
    return row


def best_call(problem, label, eps, max_passes):
    """cdlab's call of the fixed method ``label`` (a ``solver_label``, "… n_jobs=2" for its two-thread run), as
    ``run_ours`` times it, returning whether it converged (a PASSCoDe run on two threads is not reproducible:
    one that did not is not counted by ``timed_pairs``); None for no label."""
    if label is None or label == "n/r":
        return None
    n_jobs = 2 if label.endswith(" n_jobs=2") else 1
    method, sampling, options = solver_of(label.removesuffix(" n_jobs=2"))
    return lambda: cdlab.solve(problem, method=method, sampling=sampling, tol=eps, max_passes=max_passes, seed=0,
                               n_jobs=n_jobs, **options).status == "converged"


def certified_p_star(problem) -> float:
    """P* certified to a duality gap ≤ REFERENCE_TOL·|P*|. ``cdlab.reference_optimum``'s tol is relative to
    max(1, |P|), absolute below |P| = 1, where a first answer is refined by a second call at
    REFERENCE_TOL·|P| (mushrooms hinge 0.01/n, P* ≈ 2e-4: the first is only within 5e-6·|P*|, more than the
    race's ε = 1e-6·|P*|). A smooth loss on more than REFERENCE_NEWTON_NNZ nonzeros is certified by Newton
    instead, not cached (a duality gap certifies P whatever method reached it; SDCA to 1e-9 takes tens of
    minutes there): at REFERENCE_TOL·P(0), then where that gap exceeds REFERENCE_TOL·P again, at REFERENCE_TOL·D
    of that run (0 < D ≤ P* ≤ P for these losses, so the second gap is within REFERENCE_TOL·P*)."""
    if problem.is_smooth and problem.nnz > REFERENCE_NEWTON_NNZ:
        tol = REFERENCE_TOL * abs(problem.primal(np.zeros(problem.n_features)))
        for _ in range(2):
            res = cdlab.solve(problem, "newton", tol=tol, max_passes=REFERENCE_PASSES)
            last = res.trace.iloc[-1]
            if res.converged and last.gap <= REFERENCE_TOL * abs(last.primal):
                return float(last.primal)
            tol = REFERENCE_TOL * last.dual
            if not (res.converged and tol > 0):
                break
        raise RuntimeError(f"Newton did not certify P* to {REFERENCE_TOL:g}·|P*|: {res}")
    p_star = cdlab.reference_optimum(problem, tol=REFERENCE_TOL, max_passes=REFERENCE_PASSES)
    if 0 < abs(p_star) < 1:
        p_star = cdlab.reference_optimum(problem, tol=REFERENCE_TOL * abs(p_star), max_passes=REFERENCE_PASSES)
    return p_star


def race_case(case, repeats=3, threads=(1, 2), cap=60.0, max_passes=2000, verbose=True):
    """Run one problem: returns dict(ours=DataFrame, peers=DataFrame, info=dict)."""
    X, y = case.make()
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        problem = make_problem(X, y, case.loss, case.lam_factor)
        build_s = time.perf_counter() - t0
    build_mb = mem.mb
    p_star = certified_p_star(problem)
    eps = GAP_REL * abs(p_star)
    target = p_star + eps
    ours = run_ours(problem, eps, repeats, max_passes)
    # cdlab's memory: build + one solve of its fastest method, measured together
    fixed = ours[ours.solver != "auto"]
    best = fixed.loc[fixed.seconds.idxmin()] if fixed.seconds.notna().any() else None
    if best is not None:
        method, sampling, options = solver_of(best.solver)
        with PeakRSS() as mem:
            fresh = make_problem(X, y, case.loss, case.lam_factor)
            cdlab.solve(fresh, method=method, sampling=sampling, tol=eps, max_passes=max_passes, seed=0, **options)
        del fresh
        ours_mb = mem.mb
    else:
        ours_mb = np.nan
    # two threads: the fastest method with a parallel mode reruns on n_jobs=2 if it came within
    # TWO_THREAD_REACH of the best on one thread; cdlab's best is the faster of that and the one-thread best
    ours2 = None
    if 2 in threads and best is not None:
        parallel = fixed[[has_parallel_mode(solver) for solver in fixed.solver]]
        near = parallel[parallel.seconds <= TWO_THREAD_REACH * best.seconds].sort_values("seconds")
        ours2 = run_ours(problem, eps, repeats, max_passes, with_auto=False, n_jobs=2,
                         runs=[solver_of(solver) for solver in near.solver[:1]])
    best2, best2_s = (best.solver, best.seconds) if best is not None else ("n/r", np.nan)
    if ours2 is not None and len(ours2) and ours2.seconds.notna().any():
        fastest = ours2.loc[ours2.seconds.idxmin()]
        if fastest.seconds < best2_s:
            best2, best2_s = f"{fastest.solver} n_jobs=2", fastest.seconds
    Xp = peer_input(problem.X)
    best_s = best.seconds if best is not None else np.nan
    peer_cap = max(cap, 50 * best_s) if np.isfinite(best_s) else cap
    # each table's peers alternate with cdlab's best of that table; where n_jobs=2 won in isolation, the
    # two-thread rows with that run right after each peer fit and then the one-thread best, the faster median
    # counting (the table's cdlab is its fastest on at most two threads): an n_jobs=2 call right after a
    # peer's two-thread fit shares both cores with that peer's BLAS threads, which spin on after it returns
    # (madelon squared 1/n: Newton on n_jobs=2 took 60-70 ms right after scikit-learn's Ridge cholesky on two
    # threads, 4-6 ms after itself), and in this order any such spin falls on cdlab's calls, never on a
    # peer's next fit (which follows a one-thread call). A short call runs enough times after each peer run to
    # add up to about SHORT_CALL_S (repeats_for).
    partners = {1: [], 2: []}
    if best is not None:
        for table, labels in ((1, [(best.solver, best_s)]), (2, [(best2, best2_s), (best.solver, best_s)])):
            for label, seconds in dict(labels).items():
                partners[table].append((label, best_call(problem, label, eps, max_passes),
                                        repeats_for(seconds, 1) if np.isfinite(seconds) else 1))
    rows = []
    # run_peer's reference, per thread count: a peer over OURS_REPEAT_REACH × it is timed once; it can then be
    # neither that table's best peer (a faster peer of the same thread count reached the target) nor, by the
    # noise of one run, brought within OURS_REPEAT_REACH of that table's cdlab best
    reference = {1: OURS_REPEAT_REACH * best_s if np.isfinite(best_s) else np.inf,
                 2: OURS_REPEAT_REACH * best2_s if np.isfinite(best2_s) else np.inf}
    for name, build, has_threads, applies in PEERS[case.loss]:
        if applies is not None and not applies(*problem.shape):
            rows.append(dict(peer=name, threads=1, seconds=np.nan, note="not applicable (d > 5000)"))
            continue
        row = run_peer(name, build, problem, Xp, target, repeats, peer_cap, reference=reference[1],
                       partners=partners[1])
        rows.append(row)
        if has_threads and 2 in threads and np.isfinite(row["seconds"]):
            rows.append(run_peer(name, build, problem, Xp, target, repeats, peer_cap, threads=2,
                                 tols=(row["tol"],) + tuple(t for t in PEER_TOLS if t < row["tol"]),
                                 reference=reference[2], partners=partners[2]))
        for r in rows:
            if np.isfinite(r["seconds"]) and r["primal"] <= target:
                reference[r["threads"]] = min(reference[r["threads"]], r["seconds"])
    peers = pd.DataFrame(rows)
    info = dict(label=case.label, n=problem.n_samples, d=problem.n_features, nnz=problem.nnz, lam=problem.lam, p_star=p_star,
                eps=eps, build_s=build_s, build_mb=build_mb, ours_mb=ours_mb,
                best=best.solver if best is not None else "n/r", best_s=best_s, best2=best2, best2_s=best2_s)
    result = dict(ours=ours, ours2=ours2, peers=peers, info=info)
    if verbose:
        print_details(result)
    return result


def print_details(result):
    """One problem's own rows: its shape and target, cdlab's runs (and its n_jobs=2 rerun), the peers'."""
    info, fmt = result["info"], dict(index=False, na_rep="n/r", float_format=lambda v: f"{v:.3g}")
    print(f"\n=== {info['label']}: n={info['n']}, d={info['d']}, nnz={info['nnz']}, λ={info['lam']:.3g}, "
          f"P*={info['p_star']:.10g}, ε={info['eps']:.3g}; Problem built in {info['build_s']:.3g} s "
          f"({info['build_mb']:.0f} MB)")
    print(result["ours"].to_string(**fmt))
    if result["ours2"] is not None:
        print("cdlab, n_jobs=2:\n" + (result["ours2"].to_string(**fmt) if len(result["ours2"]) else
                                      f"(no rerun: no method with a parallel mode within {TWO_THREAD_REACH:g}× the "
                                      f"best on one thread)"))
    print(result["peers"].to_string(**fmt))


# ------------------------------------------------------------------- tables

# ratio_table's columns of the seconds the best peer's ratio divides by (cdlab's best timed in alternation with
# it) and of the call timed so (``race_case``'s partners)
PAIRED = "cdlab s, paired"
PAIRED_CALL = "paired call"


def ratio_table(results, threads=1):
    """One row per problem: cdlab's fastest fixed method (with two threads allowed when threads
    is 2), auto, and peer s ÷ cdlab s per peer (cdlab s: that method's calls paired with the peer's fits
    where the peer's row has them, else the method's own median, "cdlab s"; PAIRED: the best peer's, and
    PAIRED_CALL the cdlab call it was: "cdlab best" where the row has paired seconds but no call, saved before
    the two-thread rows had two partners, and "not paired" where it has none)."""
    rows = []
    for label, r in results.items():
        info, peers, ours = r["info"], r["peers"], r["ours"]
        best, best_s = (info["best"], info["best_s"]) if threads == 1 else (info["best2"], info["best2_s"])
        row = {"problem": label, "cdlab best": best, "cdlab s": best_s}
        auto = ours[ours.solver == "auto"]
        row["auto ÷ best"] = (auto.seconds.iloc[0] / info["best_s"]) if len(auto) else np.nan
        sel = peers[peers.threads == threads]
        if threads != 1 and not len(sel):
            continue
        # each peer against cdlab's best timed in alternation with it (``timed_pairs``) where it was raced so
        paired = sel["cdlab s"] if "cdlab s" in sel.columns else pd.Series(np.nan, index=sel.index)
        against = {p: o if np.isfinite(o) else best_s for p, o in zip(sel.peer, paired)}
        calls = sel["cdlab call"] if "cdlab call" in sel.columns else pd.Series("", index=sel.index)
        called = {p: c if isinstance(c, str) and c else best if np.isfinite(o) else "not paired"
                  for p, c, o in zip(sel.peer, calls, paired)}
        ratios = {p: s / against[p] for p, s in zip(sel.peer, sel.seconds)}
        finite = {p: v for p, v in ratios.items() if np.isfinite(v)}
        row["best peer"] = min(finite, key=finite.get) if finite else "n/r"
        row["best peer ÷ cdlab"] = min(finite.values()) if finite else np.nan
        row[PAIRED] = against[row["best peer"]] if finite else np.nan
        row[PAIRED_CALL] = called[row["best peer"]] if finite else ""
        row.update(ratios)
        rows.append(row)
    return pd.DataFrame(rows)


def geometric_means(table):
    """Geometric mean of each ratio column over the problems where it is finite."""
    out = {}
    for col in table.columns:
        if col in ("problem", "cdlab best", "cdlab s", "best peer", PAIRED, PAIRED_CALL):
            continue
        v = pd.to_numeric(table[col], errors="coerce").to_numpy(float)
        v = v[np.isfinite(v) & (v > 0)]
        if len(v):
            out[col] = f"{np.exp(np.log(v).mean()):.3g} (over {len(v)})"
    return out


def memory_table(results):
    rows = []
    for label, r in results.items():
        row = {"problem": label, "cdlab build MB": r["info"]["build_mb"],
               "cdlab build+solve MB": r["info"]["ours_mb"]}
        sel = r["peers"][r["peers"].threads == 1]
        row.update({f"{p} MB": m for p, m in zip(sel.peer, sel.get("mb", pd.Series(np.nan, index=sel.index)))})
        rows.append(row)
    return pd.DataFrame(rows)


def warm_up():
    X, y = dense(40, 5, 0)
    for loss in LOSSES:
        problem = make_problem(X, y, loss, 1.0)
        for method, sampling, options in applicable(problem):
            cdlab.solve(problem, method=method, sampling=sampling, max_passes=2, **options)
            if has_parallel_mode(solver_label(method, sampling, options)):
                cdlab.solve(problem, method=method, sampling=sampling, max_passes=2, n_jobs=2)
        cdlab.solve(problem, method="auto", max_passes=2)
        for _, build, _, _ in PEERS[loss]:
            try:
                fit_peer(build, problem, X.toarray(), 1e-3, 1)
                fit_peer(build, problem, X, 1e-3, 1)
            except Exception:
                pass  # reported where it matters, in run_peer


def saved_path(directory, case):
    return directory / (re.sub(r"[^A-Za-z0-9.]+", "_", case.label) + ".json")


def _plain(value):
    """``value`` as JSON holds it: numpy scalars as Python's, tuples as lists (so saved and current
    settings compare equal), NaN kept (Python's json reads and writes it)."""
    return json.loads(json.dumps(value, default=lambda v: v.item() if isinstance(v, np.generic) else str(v)))


def save_case(path, result, settings):
    """Write one problem's results with its settings and today's date: its tables as columns and rows,
    a line per row (so a diff of a re-raced problem reads row by row)."""
    line = lambda value: json.dumps(_plain(value), ensure_ascii=False)  # noqa: E731
    parts = [f' "settings": {line(settings)}', f' "saved": {line(datetime.date.today().isoformat())}',
             f' "info": {line(result["info"])}']
    for key in ("ours", "ours2", "peers"):
        table = result[key]
        if table is None:
            parts.append(f' "{key}": null')
            continue
        rows = ",\n  ".join(line(row) for row in table.to_numpy(object).tolist())
        parts.append(f' "{key}": {{"columns": {line(list(table.columns))}, "rows": [\n  {rows}]}}')
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{\n" + ",\n".join(parts) + "\n}\n", encoding="utf-8")


def load_case(path):
    """(results, settings, date saved) of one file written by ``save_case``."""
    record = json.loads(path.read_text(encoding="utf-8"))
    result = {key: None if record[key] is None else pd.DataFrame(record[key]["rows"], columns=record[key]["columns"])
              for key in ("ours", "ours2", "peers")}
    result["info"] = record["info"]
    return result, record["settings"], record["saved"]


def saved_case(directory, case, settings):
    """The case's saved results if ``--save`` holds them under the same settings (else None)."""
    if directory is None or not saved_path(directory, case).exists():
        return None
    result, saved_settings, _ = load_case(saved_path(directory, case))
    if saved_settings != _plain(settings):
        return None
    print(f"\n=== {case.label}: read from {saved_path(directory, case)}")
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="three small data sets, under three minutes")
    ap.add_argument("--only", nargs="*", help="run only the data sets whose name starts with one of these")
    ap.add_argument("--losses", nargs="*", default=list(LOSSES), choices=LOSSES)
    ap.add_argument("--lam-factors", nargs="*", type=float, default=list(LAM_FACTORS), metavar="F",
                    help=f"race only λ = F/n for these F (of {', '.join(f'{f:g}' for f in LAM_FACTORS)})")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-threads", action="store_true", help="skip the two-thread table")
    ap.add_argument("--ours", nargs="*", help="race only these cdlab methods (e.g. sdca dual_cd; auto always runs)")
    ap.add_argument("--save", type=Path, nargs="?", const=RESULTS, metavar="DIR",
                    help="keep each problem's results here (no DIR: the repository's, benchmarks/results/race) and "
                    "reuse those that ran under the same settings")
    ap.add_argument("--tables", nargs="*", type=Path, metavar="DIR",
                    help="race nothing: print the tables over the problems saved in these --save directories "
                    "(none named: benchmarks/results/race)")
    ap.add_argument("--details", action="store_true", help="with --tables: each problem's own rows first")
    args = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # each problem's rows as it finishes, also into a file
    if args.tables is not None:
        results, settings = saved_results(args.tables or [RESULTS])
        if args.details:
            for result in results.values():
                print_details(result)
        print_tables(results, (1, 2))
        print_coverage(settings)
        return results
    if args.repeats < 1:
        ap.error("--repeats must be ≥ 1")
    if args.quick and args.save is not None and args.save.resolve() == RESULTS:
        ap.error("--quick: its shortened problems are not kept with the race's results; give --save a DIR")
    if args.ours:
        unknown = set(args.ours) - {method for method, *_ in OURS}
        if unknown:
            ap.error(f"--ours: not raced: {sorted(unknown)}; choose from {sorted({m for m, *_ in OURS})}")
        OURS[:] = [run for run in OURS if run[0] in args.ours]
    print(CONVENTIONS)
    print("peer libraries:\n" + peer_status())
    print(f"cdlab: whole solve() call to a certified gap ≤ {GAP_REL:g}·|P*|; peers: tol tightened until "
          f"P ≤ P* + {GAP_REL:g}·|P*|; median of {args.repeats} runs (a call under {SHORT_CALL_S:g} s: of up to "
          f"{max(args.repeats, SHORT_CALL_REPEATS)}, adding up to ~{args.repeats * SHORT_CALL_S:g} s); "
          f"NUMBA_NUM_THREADS="
          f"{os.environ.get('NUMBA_NUM_THREADS')} (cdlab's n_jobs=2 only), BLAS/OpenMP limited by threadpoolctl")
    t_start = time.perf_counter()
    with threadpool_limits(1):
        warm_up()
    results = {}
    for case in cases(args.quick):
        if args.only and not any(case.name.startswith(o) for o in args.only):
            continue
        if case.loss not in args.losses or case.lam_factor not in args.lam_factors:
            continue
        settings = dict(repeats=args.repeats, short_calls=(SHORT_CALL_S, SHORT_CALL_REPEATS),
                        threads=() if args.no_threads else (1, 2),
                        cap=10.0 if args.quick else 120.0, max_passes=300 if args.quick else 3000,
                        ours=[solver_label(*run) for run in OURS], reach=(OURS_REACH, OURS_FLOOR_S, OURS_REPEAT_REACH),
                        peers_run_once="per thread count",
                        paired="best call repeats_for its seconds" + (
                            "" if args.no_threads else "; two threads: n_jobs=2's then the one-thread best's, the faster"),
                        cdlab=CDLAB_DIGEST)
        saved = saved_case(args.save, case, settings)
        if saved is not None:
            results[case.label] = saved
            continue
        with threadpool_limits(1):
            try:
                results[case.label] = race_case(case, **{k: settings[k] for k in ("repeats", "threads", "cap",
                                                                                  "max_passes")})
            except RuntimeError as exc:  # no certified P*, so no target: the problem is left out, said so
                print(f"\n=== {case.label}: left out: {exc}", flush=True)
                continue
        if args.save is not None:
            save_case(saved_path(args.save, case), results[case.label], settings)
    print_tables(results, (1,) if args.no_threads else (1, 2))
    print(f"\nrace finished in {time.perf_counter() - t_start:.0f} s")
    return results


def saved_results(directories):
    """({problem label: results}, {problem label: settings}) of every problem saved in ``directories`` (a
    later directory's copy of a problem replaces an earlier one's); each problem's settings are printed."""
    results, settings = {}, {}
    for directory in directories:
        for path in sorted(Path(directory).glob("*.json")):
            result, saved_settings, saved = load_case(path)
            label = result["info"]["label"]
            results[label], settings[label] = result, saved_settings
            print(f"{label}: {path}, saved {saved} ({', '.join(f'{k}={v}' for k, v in saved_settings.items())})")
    return results, settings


def print_coverage(settings):
    """How many of the full race's problems (``cases(quick=False)``) ``settings`` holds, under which cdlab
    source digests, and which problems are missing: tables read from several ``--save`` directories may
    mix problems raced by different versions of cdlab."""
    labels = [case.label for case in cases(False)]
    counts = Counter(settings[label].get("cdlab", "unknown") for label in labels if label in settings)
    digests = dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))  # most problems first
    missing = [label for label in labels if label not in settings]
    print(f"\n=== coverage: {len(labels) - len(missing)} of the race's {len(labels)} problems saved"
          + ("; raced by cdlab source digest " + ", ".join(f"{d} ({k})" for d, k in digests.items())
             if len(digests) else ""))
    print("not saved in these directories: " + ("; ".join(missing) if missing else "none"))


def print_tables(results, thread_counts):
    fmt = dict(index=False, na_rep="n/r", float_format=lambda v: f"{v:.3g}")
    for threads in thread_counts:
        table = ratio_table(results, threads)
        print(f"\n=== peer seconds ÷ cdlab seconds, peers on {threads} thread{'s' if threads > 1 else ''} "
              f"(cdlab: its fastest fixed method on {'1 thread' if threads == 1 else 'n_jobs 1 or 2'}, each peer "
              f"against its calls timed in alternation with that peer's fits"
              f"{'' if threads == 1 else ' (where n_jobs=2 won alone, it and the one-thread best: the faster, the paired call)'}; "
              f"> 1 = cdlab faster; 'auto ÷ best' = "
              f"method='auto' seconds (1 thread) ÷ the one-thread best's)")
        print(table.to_string(**fmt) if len(table) else "(no peer with threads finished)")
        print("geometric means: " + "; ".join(f"{k}: {v}" for k, v in geometric_means(table).items()))
    print("\n=== peak RSS above the process's RSS before the call, MB (peers: one fit at 1 thread)")
    print(memory_table(results).to_string(**fmt))


if __name__ == "__main__":
    main()
