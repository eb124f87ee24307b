"""``cdlab reproduce [PAPER [ITEM]] --out DIR``: the papers' key tables and figures, run again.

    cdlab reproduce --quick --out report/          # every paper, small sizes (a few minutes)
    cdlab reproduce appa --out report/             # one paper, full sizes
    cdlab reproduce faceoff figure1 --out report/  # one item
    cdlab reproduce --list

Writes DIR/index.html (static; opens offline), DIR/verdicts.csv and one CSV per table. Finished
items are cached in DIR/cache/ (keyed by the item, the sizes, the seed and cdlab's source), so the
same command again reuses them; --force recomputes. The report also shows
the other items already cached in DIR for the same settings. Exit status 0 when every item ran (whatever its
verdict), 1 when some item raised an error.
"""
from __future__ import annotations

import sys


def add_parser(subparsers):
    p = subparsers.add_parser(
        "reproduce", help="regenerate the papers' key tables and figures into a static HTML report",
        description="Run each paper's key results again (face-off, SPDC, ASDCA, APPA, Prox-SDCA) on the data "
                    "available, set them beside the papers' own numbers with a computed verdict, and write a "
                    "static HTML report plus CSV files.")
    p.add_argument("paper", nargs="?", help="one paper: faceoff, spdc, asdca, appa or prox_sdca (default: all)")
    p.add_argument("item", nargs="?", help="one item of that paper (see --list)")
    p.add_argument("--out", default="report", help="output directory (default: report)")
    p.add_argument("--quick", action="store_true", help="small sizes: the whole report in a few minutes")
    p.add_argument("--seed", type=int, default=0, help="random seed of every run (default 0)")
    p.add_argument("--force", action="store_true", help="recompute items found in DIR/cache")
    p.add_argument("--list", action="store_true", help="list the papers and their items, and exit")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    from .. import reproduce

    specs = reproduce.select(args.paper, args.item)  # bad names fail here, before any work
    if args.list:
        for spec in specs:
            print(f"{spec.paper:<10} {spec.name:<18} {spec.title}")
        return 0
    selection = tuple(a for a in (args.paper, args.item) if a is not None)
    command = "cdlab reproduce " + " ".join(sys.argv[2:] if len(sys.argv) > 2 else selection)
    outcomes = reproduce.run(selection, out=args.out, quick=args.quick, seed=args.seed,
                             progress=not args.no_progress, force=args.force, command=command.strip())
    ran = {spec.paper + "/" + spec.name for spec in specs}
    table = reproduce.verdict_table(outcomes)
    for row in table.itertuples():
        if f"{row.paper}/{row.item}" not in ran:
            continue
        print(f"{row.paper:<10} {row.item:<18} {row.verdict:<10} {row.seconds:7.1f} s"
              f"{' (cached)' if row.cached else ''}  {row.reason[:160]}")
    print(f"report: {args.out}/index.html")
    return 1 if (table.verdict == "error").any() else 0
