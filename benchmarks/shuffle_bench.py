"""Shrinking's epochs shuffled up front by an in-kernel generator (``_shrinking.shuffle_active``, as shipped)
against the order it replaced: one numpy uniform a visit, drawn into an array per chunk, each visit
drawing its example from the slots not yet visited.

    python benchmarks/shuffle_bench.py [NAME:FACTOR ...] [--repeats 3] [--seeds 10] [--before REV]

The replaced order is ``cdlab/solvers/_shrinking.py`` as of git revision REV (default 3083b62, the last
with it), loaded from ``git show`` into this process as ``cdlab.solvers._shrinking_before``; SDCA runs it
through an adapter that hands its ``advance`` the run's generator. Each problem of benchmarks/race.py (data
scaled by the mean example norm, hinge loss, λ = FACTOR/n) is solved by SDCA with shrinking (the race's
hinge method) to a certified relative gap of 1e-6: whole ``cdlab.solve`` calls, certificate included, in
interleaved pairs in this one process (both without ``_shrinking.DUE_SHARE``'s due epochs, which the replaced
module predates), each call running the seeds 0 … SEEDS − 1 (the two orders are two
random paths, and a path's passes vary with its seed: reuters_moneyfx 1/n 47–431 over 12 seeds). JIT
compilation happens before the timing. Printed: median milliseconds of each call, the median of the pairs'
ratios (before ÷ shuffled: > 1, shuffled faster) and their range, the passes of each (median and range),
the largest relative difference of the certified P, and the ratio of the time a pass (each call's time
over its passes, medians).
"""
from __future__ import annotations

import argparse
import atexit
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from race import certified_p_star, data_sets, make_problem  # first: it sets numba's thread count
from cdlab.solvers import _shrinking, dual_cd
from full_row_prefetch_bench import interleaved
from setting_pairs import pair_header, pair_line, setting_pairs

DEFAULT = ("w8a:1", "mushrooms:1", "ijcnn1:1", "a9a:1", "reuters_moneyfx:1", "rcv1_small:1", "phishing:1",
           "madelon:1", "rcv1_small:0.01", "heart_scale:0.01")
MODULE = "cdlab/solvers/_shrinking.py"


def before_active_set(rev):
    """The ActiveSet of ``_shrinking`` at git revision ``rev``, behind the shipped constructor and ``advance``."""
    root = Path(__file__).resolve().parent.parent
    source = subprocess.run(["git", "show", f"{rev}:{MODULE}"], cwd=root, check=True, capture_output=True,
                            text=True).stdout
    directory = tempfile.mkdtemp()
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    path = Path(directory) / "_shrinking_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("cdlab.solvers._shrinking_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)

    class Before(module.ActiveSet):
        def __init__(self, problem, rng):
            super().__init__(problem)
            self.rng = rng
            self.ran = 0

        def advance(self, p, alpha, v, w, thresh, n_steps):
            self.ran = n_steps  # the replaced kernel ran every visit asked
            return super().advance(p, alpha, v, w, thresh, self.rng, n_steps)

        def checkpointed(self, tol=0.0, auto_cadence=False, problem=None, alpha=None, margins=None):
            super().checkpointed(0.0)  # a gap of 0: the old checkpoint's restore never asked (main's comment)

    return Before


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problems", nargs="*", default=list(DEFAULT), metavar="NAME:FACTOR",
                    help="a data set of benchmarks/race.py and its λ·n, e.g. a9a:1")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--before", default="3083b62", metavar="REV")
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error(f"--seeds must be at least 1, got {args.seeds}")
    sets = data_sets(False)
    labels = ("shuffled", "before")
    shipped = _shrinking.ActiveSet
    # both orders without the due epochs (``_shrinking.DUE_SHARE``) and the checkpoints' readmissions
    # (``_shrinking.READMIT``), which came after the replaced order, and the old set without its checkpoints'
    # restores: the pair differs in the order alone
    _shrinking.DUE_SHARE = _shrinking.NEVER_DUE
    _shrinking.READMIT = False
    put = lambda value: setattr(dual_cd, "ActiveSet", value)  # noqa: E731
    before = before_active_set(args.before)
    print(pair_header(30, labels) + ", per-pass ratio")
    for spec in args.problems:
        name, factor = spec.rsplit(":", 1)
        X, y = sets[name]()
        problem = make_problem(X, y, "hinge", float(factor))
        tol = 1e-6 * abs(certified_p_star(problem))
        timed, seen = setting_pairs(put, shipped, before, labels, problem, seeds=range(args.seeds),
                                    method="sdca", sampling="permutation", shrinking=True, tol=tol, max_passes=5000)
        for timing in interleaved(timed, args.repeats).values():
            # passes of one call (all its seeds), as the median call's time covers them
            per_call = {k: sum(s[0] for s in seen[k][:args.seeds]) for k in labels}
            per_pass = (timing[1] / per_call["before"]) / (timing[0] / per_call["shuffled"])
            print(pair_line(f"{name} hinge λ={float(factor):g}/n", 30, timing, seen, labels)
                  + f", {per_pass:.2f}", flush=True)


if __name__ == "__main__":
    main()
