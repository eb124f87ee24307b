"""``cdlab datasets``: the registry's datasets and where they are; ``cdlab datasets fetch NAME``.

    cdlab datasets                      # every dataset: kind, shape, size, whether it is on this machine
    cdlab datasets fetch rcv1.binary    # download one into the data home (resumable, shape-checked)
"""
from __future__ import annotations

import sys


def add_parser(subparsers):
    p = subparsers.add_parser(
        "datasets", help="list the datasets (shipped and fetchable); fetch one",
        description="List every registry dataset with its kind (shipped with cdlab, or fetched on first "
                    "use), its shape, its size and whether it is on this machine; or fetch one into the "
                    "data home ($CDLAB_DATA_DIR, else the user cache directory).")
    p.add_argument("action", nargs="?", choices=["list", "fetch"], default="list")
    p.add_argument("names", nargs="*", metavar="NAME", help="datasets to fetch (with 'fetch')")
    p.add_argument("--force", action="store_true", help="fetch again even if the file is here")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _size(info) -> str:
    if info.is_available():
        return f"{info.path.stat().st_size / 1e6:.1f} MB"
    return f"≈ {info.download_mb:g} MB to fetch"


def table() -> list[tuple]:
    """One row per dataset: name, kind, n, d, nnz, size, here, description."""
    from ..data import DATASETS

    return [(name, info.kind, f"{info.n_samples:,}", f"{info.n_features:,}",
             f"{info.nnz:,}" if info.nnz is not None else "-", _size(info),
             "yes" if info.is_available() else "no", info.description)
            for name, info in DATASETS.items()]


def run(args) -> int:
    from ..data import DATASETS, data_home, fetch_dataset

    if args.action == "list":
        if args.names:
            raise ValueError("'cdlab datasets' lists all datasets; to fetch some, use 'cdlab datasets fetch NAME'")
        header = ("name", "kind", "n", "d", "nnz", "size", "here", "description")
        rows = [header, *table()]
        widths = [max(len(row[k]) for row in rows) for k in range(len(header) - 1)]
        for row in rows:
            print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1])
        print(f"\nshipped sets are inside the package; fetched sets live in {data_home()} "
              "(set CDLAB_DATA_DIR to change it)")
        return 0
    if not args.names:
        raise ValueError("name the dataset(s) to fetch, e.g. 'cdlab datasets fetch rcv1.binary'")
    for name in args.names:  # every name checked before the first download
        if name not in DATASETS or DATASETS[name].kind != "fetch":
            fetchable = ", ".join(n for n, i in DATASETS.items() if i.kind == "fetch")
            raise ValueError(f"{name!r} is not a fetchable dataset; the fetchable ones are {fetchable}")
    for name in args.names:
        path = fetch_dataset(name, force=args.force, show_progress=not args.no_progress and sys.stderr.isatty())
        print(f"{name}: {path}")
    return 0
