"""``method="auto"``'s picks against a saved race, without racing again.

    python benchmarks/auto_offline.py [DIR] [--big]

For every problem saved in DIR by ``race.py --save`` (default: benchmarks/results/race) it builds the problem
again, asks the installed cdlab's ``auto.choose`` what it would run, and looks
that pick up among the race's timed fixed methods: pick ÷ best fixed seconds,
beside the ratio auto measured in that race. Only the cost model is evaluated:
the seconds are the saved run's, at the cdlab it was raced with (its digest is
printed), so a pick whose kernel has changed since, or a Newton run whose
inner solver (Cholesky or CG) the installed cdlab would choose differently from
the saved one, needs a race to be measured; both are flagged ("inner solver
now ..." and the digests). ``--big`` includes the text-like problem at 5e7
nonzeros (about a minute and 3 GB to build).
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

from cdlab._jit_cache import source_digest
from cdlab.solvers import auto, newton
from race import RESULTS, data_sets, load_case, make_problem, solver_label


def saved(directory):
    """(settings, result) of each problem saved in ``directory`` by ``race.py --save``, by label."""
    out = {}
    for path in sorted(Path(directory).glob("*.json")):
        result, settings, _ = load_case(path)
        out[result["info"]["label"]] = {"settings": settings, "result": result}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", nargs="?", default=RESULTS)
    ap.add_argument("--big", action="store_true", help="include the text-like problem at 5e7 nonzeros")
    args = ap.parse_args(argv)
    makers = data_sets(False)
    entries = saved(args.directory)
    digests = sorted({str(e["settings"].get("cdlab")) for e in entries.values()})
    print(f"saved at cdlab {', '.join(digests)}; evaluated with cdlab {source_digest()[:12]}")
    ratios, built = [], {}
    for label, entry in entries.items():
        if "5e7" in label and not args.big:
            continue
        name = next(k for k in sorted(makers, key=len, reverse=True) if label.startswith(k))
        loss, factor = re.search(r" (\w+) λ=([\d.e-]+)/n", label).groups()
        if name not in built:
            built = {name: makers[name]()}
        problem = make_problem(*built[name], loss, float(factor))
        choice = auto.choose(problem)
        ours = entry["result"]["ours"]
        fixed = ours[ours.solver != "auto"].dropna(subset=["seconds"])
        best = float(fixed.seconds.min())
        pick = solver_label(choice["method"], choice["sampling"], choice.get("options", {}))
        row = ours[ours.solver == pick]
        seconds = float(row.seconds.iloc[0]) if len(row) else np.nan
        raced = ours[ours.solver == "auto"]
        then = float(raced.seconds.iloc[0]) / best if len(raced) else np.nan
        note = f"  (inner solver now {newton.inner_solver(problem)})" if choice["method"] == "newton" else ""
        ratio = seconds / best
        ratios.append(ratio)
        flag = "  > 1.3" if ratio > 1.3 else ""
        print(f"{label:36s} pick {pick:34s} ÷ best {ratio:5.2f}   raced auto ÷ best {then:5.2f}{note}{flag}")
    r = np.array([x for x in ratios if np.isfinite(x)])
    print(f"\npick ÷ best fixed: geometric mean {np.exp(np.log(r).mean()):.3f}, worst {r.max():.2f}, "
          f"> 1.3 on {int((r > 1.3).sum())} of {len(r)} (not timed: {len(ratios) - len(r)})")


if __name__ == "__main__":
    main()
