"""Results table: passes (median and seed range) and seconds to the target gap, final gap; CSV download."""
from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import panel as pn
import param
from bokeh.models.widgets.tables import ScientificFormatter

from ...verdict import Spread, split_seeds, to_target
from ..state import Experiment

__all__ = ["to_target", "results_table", "csv_bytes", "settings_lines", "ResultsView"]

# the page shows what the issue asks for (the run statuses are listed under the plot); the CSV has all.
# With several seeds a "to target" value is the median over the seeds, and "passes range" their min–max.
SHOWN = ["run", "passes to target", "passes range", "seconds to target", "final gap"]
NUMERIC = ["passes to target", "seconds to target", "final gap"]
COLUMNS = ["run", "method", "sampling", "status", "passes to target", "passes range", "min passes to target",
           "max passes to target", "seconds to target", "steps to target", "final gap", "passes", "seconds", "seeds"]


def _median(values):
    """Median of the per-seed values; NaN when it is not finite (half the seeds or more did not reach)."""
    med = float(np.median(values)) if len(values) else np.nan
    return med if np.isfinite(med) else np.nan


def spread_text(spread):
    """The seeds' range of passes to ε ('–' for one seed that reached it)."""
    if spread.seeds < 2 and math.isfinite(spread.lo):
        return "–"
    return spread.range_text()


def results_table(traces, run_status, target, runs=()):
    """One row per run (planned runs first, in order); seed-wise values summarised over the run's seeds."""
    meta = {r.label: r for r in runs}
    rows = []
    for label in list(meta) + sorted(set(traces) - set(meta)):
        run = meta.get(label)
        method, sampling = (run.method, run.sampling) if run else (label.split(" ")[0], "")
        row = dict(run=label, method=method, sampling=sampling, status=run_status.get(label, ""),
                   **{"passes range": ""})
        parts = split_seeds(traces.get(label))
        if parts:
            hits = [to_target(t, target) or {} for t in parts]
            at = {c: np.array([h.get(c, np.inf) for h in hits]) for c in ("passes", "time", "steps")}
            spread = Spread(label, tuple(at["passes"]))
            row.update({"seeds": len(parts), "passes to target": _median(at["passes"]),
                        "passes range": spread_text(spread),
                        "min passes to target": spread.lo, "max passes to target": spread.hi,
                        "seconds to target": _median(at["time"]), "steps to target": _median(at["steps"]),
                        "final gap": float(np.median([t.gap.iloc[-1] for t in parts])),
                        "passes": float(np.median([t.passes.iloc[-1] for t in parts])),
                        "seconds": float(np.median([t.time.iloc[-1] for t in parts]))})
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def settings_lines(state) -> list[str]:
    """What reproduces the table: the data, the problem, the runs' budget and seeds, library versions."""
    from importlib.metadata import PackageNotFoundError, version

    a = state.analysis
    data = f"data = {state.source}"
    if a is not None:
        p = a.problem
        data += f"; n = {p.n_samples}, d = {p.n_features}, nnz = {p.nnz}; data key = {a.data_key!r}"
    seeds = ", ".join(str(state.seed + k) for k in range(state.seeds))
    versions = []
    for package in ("cdlab", "numpy", "scipy", "numba", "panel"):
        try:
            versions.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            versions.append(f"{package} (not installed as a package)")
    lam = a.problem.lam if a is not None else 10.0 ** state.log10_lam
    return [data,
            f"normalization = {state.normalize}; loss = {state.loss}; lambda = {float(lam)!r} ({state.lam_rule}); "
            f"l1 = {state.l1:g}",
            f"runs = {', '.join(r.label for r in state.runs())}; seeds = {seeds}; max passes = {state.max_passes:g}; "
            f"stop at gap = {10.0 ** state.log10_tol:g}; max seconds per run = {state.max_time:g}",
            "versions: " + ", ".join(versions)]


def csv_bytes(table: pd.DataFrame, target: float, settings=()) -> io.BytesIO:
    buf = io.StringIO()
    for line in settings:
        buf.write(f"# {line}\n")
    buf.write(f"# target gap = {target:g}; passes = nonzeros touched / nnz(X); seconds exclude checkpoints and "
              "numba compilation; 'to target' values interpolate log(gap) between the two checkpoints around "
              "the target and are medians over the run's seeds (min/max: the seeds' range; inf: not reached)\n")
    table.to_csv(buf, index=False)
    return io.BytesIO(buf.getvalue().encode())


class ResultsView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=Experiment)

    def _table(self, traces, run_status, log10_target):
        return results_table(traces, run_status, 10.0 ** log10_target, self.state.runs())

    def _refresh(self, tab):
        """The table's rows, sent to the browser only when they change (not at every checkpoint of a run
        that has not reached the target yet)."""
        s = self.state
        shown = self._table(s.traces, s.run_status, s.log10_target)[SHOWN]
        if not shown.equals(tab.value):
            tab.value = shown

    def __panel__(self):
        s = self.state
        tab = pn.widgets.Tabulator(self._table(s.traces, s.run_status, s.log10_target)[SHOWN], disabled=True, show_index=False, sizing_mode="stretch_width",
                                   titles={"passes to target": "passes→ε", "passes range": "seeds' range",
                                           "seconds to target": "secs→ε"},
                                   # columns share the card's width, in a smaller font: pixel widths cut
                                   # "final gap" and long run labels off at 1400 px
                                   layout="fit_columns", sortable=False,
                                   # the last column takes what is left; no popups (nothing is edited),
                                   # so no empty column for them, which showed as a sliver at the right edge
                                   widths={"run": "31%", "passes to target": "16%", "passes range": "20%",
                                           "seconds to target": "14%"}, container_popup=False,
                                   stylesheets=[".tabulator-cell, .tabulator-col-title { font-size: 12.5px; }"],
                                   # the range is text: without its own formatter Tabulator takes the
                                   # column for a number from the first (empty) frame and shows NaN
                                   formatters={**{c: ScientificFormatter(precision=3, power_limit_low=-3)
                                                  for c in NUMERIC}, "passes range": {"type": "plaintext"}},
                                   css_classes=["cdlab-results"])
        s.param.watch(lambda *events: self._refresh(tab), ["traces", "run_status", "log10_target"])
        download = pn.widgets.FileDownload(
            callback=lambda: csv_bytes(self._table(s.traces, s.run_status, s.log10_target), s.target,
                                       settings_lines(s)),
            filename="cdlab_faceoff_results.csv", label="Download CSV", color="primary", width=140,
            css_classes=["cdlab-results-download"])
        target = pn.widgets.FloatSlider.from_param(s.param.log10_target, label="target gap ε (log10)", step=0.5,
                                                   throttled=True, width=220)
        seeds = pn.widgets.IntInput.from_param(s.param.seeds, name="seeds per run", width=110,
                                               css_classes=["cdlab-seeds"],
                                               description="each run is repeated on this many seeds (the band "
                                                           "around its curve); a side wins only when its seeds' "
                                                           "passes to ε all beat the other side's")
        # a FlexBox wraps the three controls onto two lines where the card is narrow
        return pn.Column(pn.FlexBox(target, seeds, download, align_items="center"), tab,
                         sizing_mode="stretch_width")
