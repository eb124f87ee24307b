"""``cdlab solve DATA``: one certified solve from the command line.

    cdlab solve heart_scale --method sdca --loss logistic --lam 1e-3 --out trace.csv
    cdlab solve path/to/file.svm --loss hinge --lam 1e-4 --sampling permutation --reference

Prints a progress bar (stderr) and a summary (the options the run used, defaults included; passes,
seconds, final gap, P − P* with --reference), and writes the trace as CSV with --out. Exit status
(cdlab/cli.py): 0 done, 1 a failure (e.g. P* not certified), 2 bad input,
3 the run diverged (the summary says so; the trace up to the last finite
checkpoint is still written).
"""
from __future__ import annotations

import json
import os
import sys
import time

from .._checks import check_int, check_real
from ..data.synthetic import NORMALIZE
from ..solvers._threads import check_n_jobs
from ..solvers.budget import Budget, check_eval_every


def add_parser(subparsers):
    p = subparsers.add_parser(
        "solve", help="solve one problem and write its trace",
        description="Solve L2 (+L1) regularised ERM on a dataset with one method; print a summary "
                    "certified by the duality gap and write the trace (one row per checkpoint).")
    p.add_argument("data", metavar="DATA",
                   help="a registry dataset name (e.g. heart_scale) or an svmlight/LIBSVM file")
    p.add_argument("--method", default="sdca", help="a method of cdlab.METHODS, or auto (the face-off and κ pick; default sdca)")
    p.add_argument("--loss", default="logistic", help="squared, logistic, hinge, smoothed_hinge or absolute")
    p.add_argument("--lam", type=float, default=1e-4, help="L2 strength λ (default 1e-4)")
    p.add_argument("--l1", type=float, default=0.0, metavar="MU", help="L1 strength μ (elastic net; default 0)")
    p.add_argument("--s", type=float, default=1.0, help="smoothing of the smoothed hinge (default 1)")
    p.add_argument("--sampling", default=None,
                   help="uniform (the default), importance, permutation, ... (what the method supports); "
                        "auto picks its own")
    p.add_argument("--max-passes", type=float, default=Budget.max_passes,
                   help=f"budget in passes over the nonzeros (default {Budget.max_passes:g})")
    p.add_argument("--tol", type=float, default=Budget.tol, help=f"stop at duality gap ≤ tol (default {Budget.tol:g})")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-jobs", type=int, default=1, metavar="N",
                   help="threads: > 1 runs SDCA / dual CD as PASSCoDe-Wild (lock-free, still certified, "
                        "not bit-reproducible) with parallel certificates, newton with BLAS threads or its CG "
                        "sweeps over row blocks (default 1)")
    p.add_argument("--eval-every", type=eval_every_flag, default=Budget.eval_every,
                   help="checkpoint interval in passes, or auto: geometric, aimed at the pass where the gap "
                        "reaches tol (SDCA / dual CD: where a sampled gap estimate says it may have) "
                        f"(default {Budget.eval_every})")
    p.add_argument("--max-time", type=float, default=Budget.max_time, help="budget in solver seconds")
    p.add_argument("--normalize", nargs="?", const="rows", default="none", choices=NORMALIZE,
                   help="rescale the data: rows (unit rows, the default of a bare --normalize) or mean "
                        "(divide by the mean row norm)")
    p.add_argument("--reference", action="store_true",
                   help="compute P* (certified, cached on disk) and report P − P* (trace column subopt)")
    p.add_argument("--option", "-o", action="append", default=[], metavar="NAME=VALUE",
                   help="a method option, e.g. -o update=exact (repeatable; values parsed as JSON when they can be)")
    p.add_argument("--out", metavar="CSV", help="write the trace to this CSV file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def eval_every_flag(text):
    """--eval-every's value: a number, or the text as typed (auto; check_args refuses anything else)."""
    try:
        return float(text)
    except ValueError:
        return text


def parse_options(items):
    options = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--option expects NAME=VALUE, got {item!r}")
        try:
            options[name] = json.loads(value)
        except json.JSONDecodeError:
            options[name] = value
    return options


def check_args(args):
    """Cheap checks of the flags, named as the user typed them, before loading a possibly large file
    or computing P* (Problem and cdlab.solve check the values again)."""
    check_real("--lam", args.lam, low=0.0)
    check_real("--l1", args.l1, low=0.0)
    check_real("--s", args.s, low=0.0, low_open=True)
    check_real("--max-passes", args.max_passes, low=0.0, low_open=True)
    check_eval_every(args.eval_every, "--eval-every")
    check_real("--tol", args.tol, finite=False)  # --tol -inf means "run the budget out"; NaN is never meant
    check_int("--seed", args.seed, minimum=0)
    check_n_jobs(args.n_jobs)  # the library's rule (-1: every thread), before any data is loaded
    if args.max_time is not None:
        check_real("--max-time", args.max_time, low=0.0)
    if args.out:
        folder = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(folder):
            raise ValueError(f"--out {args.out}: directory {folder} does not exist")
        if os.path.isdir(args.out):
            raise ValueError(f"--out {args.out} is a directory; give a file name such as trace.csv")


def run(args) -> int:
    from tqdm.auto import tqdm

    from ..data import load
    from ..losses import get_loss
    from ..problem import Problem
    from ..solvers import get_method, solve
    from ..solvers.auto import AUTO, choose
    from ..solvers.driver import check_parallel

    # cheap checks first: a typo should not cost loading a large file
    auto = args.method == AUTO
    spec = None if auto else get_method(args.method)
    loss = get_loss(args.loss).name
    options = parse_options(args.option)
    if spec is not None:
        options = spec.current_names(options)
    if auto and options:
        raise ValueError(f"--method auto takes no method options, got {sorted(options)}")
    if auto and args.sampling not in (None, AUTO):
        raise ValueError(f"--method auto picks the sampling too; leave --sampling out, got {args.sampling!r}")
    check_args(args)
    if spec is not None:
        check_parallel(spec, args.n_jobs)
    wall = time.perf_counter()
    X, y = load(args.data, args.normalize)
    problem = Problem(X, y, loss=loss, lam=args.lam, l1=args.l1, s=args.s)
    if auto:
        choice = choose(problem)
        print(f"cdlab solve: auto picked {choice['method']} ({choice['sampling']}): {choice['reason']}",
              file=sys.stderr)
    else:
        spec.check(problem, "uniform" if args.sampling is None else args.sampling, options)
    print(f"cdlab solve: {args.method} ({args.sampling or (AUTO if auto else 'uniform')}) on {args.data} "
          f"(normalize={args.normalize}): {problem!r}", file=sys.stderr)

    reference = None
    if args.reference:
        from ..reference import reference_optimum

        print("computing the reference optimum P* ...", file=sys.stderr)
        reference = reference_optimum(problem)

    bar_format = "{l_bar}{bar}| {n:.3g}/{total:.3g} passes{postfix}"
    with tqdm(total=float(args.max_passes), unit="pass", desc=args.method, disable=args.no_progress,
              file=sys.stderr, dynamic_ncols=True, bar_format=bar_format) as bar:
        def progress(row):
            bar.n = min(float(row["passes"]), float(args.max_passes))
            bar.set_postfix(gap=f"{row['gap']:.2e}", refresh=False)
            bar.refresh()

        result = solve(problem, method=args.method, sampling=args.sampling, max_passes=args.max_passes, tol=args.tol,
                       seed=args.seed, callback=progress, reference=reference, max_time=args.max_time,
                       eval_every=args.eval_every, n_jobs=args.n_jobs, **options)
    wall = time.perf_counter() - wall
    last = result.trace.iloc[-1]
    lines = [("method", f"{result.method} ({result.sampling})" + (f", auto: {result.auto_reason}" if auto else "")),
             ("options", ", ".join(f"{k}={v!r}" for k, v in result.options.items()) or "(none)"),
             ("status", result.status + (f": {result.message}" if result.message else "")),
             ("passes", f"{last.passes:.4g} (data passes {last.data_passes:.4g}, steps {int(last.steps)})"),
             ("seconds", f"{last.time:.4g} in the solver, {wall:.3g} wall (loading and checkpoints included)"),
             ("primal P", f"{last.primal:.15g}"), ("dual D", f"{last.dual:.15g}"), ("gap", f"{last.gap:.3e}")]
    if reference is not None:
        lines.append(("P - P*", f"{last.subopt:.3e}"))
    if args.out:
        result.trace.to_csv(args.out, index=False)
        lines.append(("trace", f"{args.out} ({len(result.trace)} rows)"))
    for name, value in lines:
        print(f"{name:<9} {value}")
    from ..cli import EXIT_DIVERGED, EXIT_OK

    return EXIT_DIVERGED if result.diverged else EXIT_OK
