"""``cdlab sweep GRID_FILE``: run a grid of configurations on Dask into a results store.

The grid file format is documented in ``cdlab.experiments.grid``.
Exit status: 0 when every configuration of the grid has a result, 1 when
some are recorded as failed, 2 for a bad grid file.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(subparsers):
    from ..experiments import grid

    p = subparsers.add_parser(
        "sweep", help="run a grid of experiments on Dask, into a results store",
        description="Run every configuration of a YAML/JSON grid (datasets × methods × samplings × lam × "
                    "seeds × loss × options) on a local Dask cluster or a remote scheduler. Finished "
                    "configurations are stored one file each and skipped by later runs.",
        epilog="Grid file format (cdlab.experiments.grid), by example:\n\n" + grid.EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("grid", metavar="GRID_FILE", help="the grid, .yaml/.yml or .json")
    p.add_argument("--store", help="results directory (default: the grid's 'store' key, else GRID_FILE's "
                                   "name + '_results' next to it)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler (tcp://host:port); default: a new "
                                                          "local cluster")
    p.add_argument("--workers", type=int, default=2, help="worker processes of the local cluster (default 2)")
    p.add_argument("--retry-failed", action="store_true", help="re-run configurations recorded as failed")
    p.add_argument("--time-limit", metavar="SECONDS", type=_seconds,
                   help="time limit per configuration, or 'none' (default: the grid's 'time_limit', else 3600); "
                        "a configuration past it is recorded as failed")
    p.add_argument("--dry-run", action="store_true", help="list the configurations and exit")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _seconds(text):
    """--time-limit: seconds > 0, or 'none' (math.inf: no limit)."""
    import math

    if text.strip().lower() == "none":
        return math.inf
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0 < value < math.inf):
        raise argparse.ArgumentTypeError(f"a time limit is a number of seconds > 0 or 'none', got {text!r}")
    return value


def run(args) -> int:
    import pandas as pd

    from ..experiments import expand_grid, load_grid, sweep
    from ..experiments.grid import dataset_label

    grid = load_grid(args.grid)
    configs = expand_grid(grid)
    if args.dry_run:
        table = pd.DataFrame(configs).assign(dataset=lambda t: t.dataset.map(dataset_label))
        print(f"{len(configs)} configurations")
        print(table.to_string())
        return 0
    if args.workers < 1:
        raise ValueError(f"--workers must be ≥ 1, got {args.workers}")
    store = args.store or (None if grid.get("store") else Path(args.grid).with_name(Path(args.grid).stem + "_results"))
    try:
        report = sweep(grid, store=store, client=args.scheduler, n_workers=args.workers,
                       progress=not args.no_progress, retry_failed=args.retry_failed, time_limit=args.time_limit)
    except KeyboardInterrupt:  # every result that finished is in the store already
        print("interrupted: the finished configurations are stored; the same command resumes the sweep",
              file=sys.stderr)
        raise
    print(f"{len(report.keys)} configurations: {len(report.computed)} computed, {len(report.skipped)} already "
          f"in the store, {len(report.failed)} failed")
    print(f"store: {report.store.path}")
    if report.failed:
        runs = report.runs().set_index("key").loc[report.failed]
        for key, row in runs.head(10).iterrows():
            print(f"  failed {key[:12]} {row.dataset} {row.loss} lam={row.lam:g} {row.method} {row.sampling} "
                  f"seed={row.seed}: {row.error}")
        if len(runs) > 10:
            print(f"  ... and {len(runs) - 10} more (cdlab.results(store, what='runs'))")
    return 1 if report.failed else 0
