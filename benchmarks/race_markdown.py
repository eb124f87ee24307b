"""A markdown digest of saved race results, one row per problem (issue 16's closing notes).

    python benchmarks/race_markdown.py [DIR ...]

DIR: ``race.py --save`` directories (a later one's copy of a problem replaces an earlier one's); none
named: the repository's results, ``benchmarks/results/race``.
Per problem: cdlab's fastest fixed method on one thread and its seconds, auto ÷ that, the best
peer and best peer ÷ cdlab on one thread and on two, and peak RSS of cdlab (build + solve) and of
that peer; then the geometric means of both tables, as ``race.py --tables`` prints them. A peer's ratio
divides its seconds by cdlab's best timed in alternation with its fits (``race.PAIRED``, the call
``race.PAIRED_CALL``: on two threads the one-thread best may be the faster there) where the problem was
raced so, which may differ from the "cdlab s" shown (that method's own median). Each saved
problem's settings line (cdlab's digest included) is printed first, by ``race.saved_results``, and
the coverage (problems saved of the race's, by digest, and those missing) last, by ``race.print_coverage``.
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import race  # noqa: E402

HEADER = ("| problem | n × d, nnz | cdlab best (1 thread) | cdlab s | auto ÷ best | best peer (1 thread) | "
          "peer ÷ cdlab | cdlab best, 2 threads allowed | best peer (2 threads) | peer ÷ cdlab (2 threads) | "
          "cdlab MB | best peer MB |")


def shown(v, digits=3):
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "n/r"
    return f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def main(directories):
    res, settings = race.saved_results([Path(d) for d in directories] or [race.RESULTS])
    t1 = race.ratio_table(res, 1).set_index("problem")
    t2 = race.ratio_table(res, 2)  # empty where every problem ran with --no-threads
    t2 = t2.set_index("problem") if "problem" in t2.columns else None
    mem = race.memory_table(res).set_index("problem")
    print(HEADER)
    print("|---" * HEADER.count(" | ") + "|---|")
    for label in t1.index:
        r, info = t1.loc[label], res[label]["info"]
        r2 = t2.loc[label] if t2 is not None and label in t2.index else None
        peer = r["best peer"]
        mb = mem.loc[label].get(f"{peer} MB", np.nan) if peer != "n/r" else np.nan
        row = [label, f"{info['n']}×{info['d']}, {info['nnz']:.3g}", r["cdlab best"], shown(r["cdlab s"]),
               shown(r["auto ÷ best"]), peer, shown(r["best peer ÷ cdlab"]),
               f"{r2['cdlab best']} ({shown(r2['cdlab s'])} s)" if r2 is not None else "—",
               r2["best peer"] if r2 is not None else "—", shown(r2["best peer ÷ cdlab"]) if r2 is not None else "—",
               shown(mem.loc[label, "cdlab build+solve MB"]), shown(mb)]
        print("| " + " | ".join(str(x) for x in row) + " |")
    print()
    for threads, table in ((1, t1), (2, t2)):
        if table is None:
            print(f"geometric means, {threads} thread(s): none raced (--no-threads)")
            continue
        means = race.geometric_means(table.reset_index())
        print(f"geometric means, {threads} thread(s): " + "; ".join(f"{k}: {v}" for k, v in means.items()))
    race.print_coverage(settings)


if __name__ == "__main__":
    main(sys.argv[1:])
