"""Accelerated mini-batch SDCA's parallel cost model (Shalev-Shwartz & Zhang 2013, Section 3) on the
page's data: runtime and communication per iteration and to the target ε when the examples or the
features are split over s machines (``cdlab.theory.parallel_cost``), for a machine count and a
mini-batch size the reader picks. Evaluated off the event loop, and only while its card is open."""
from __future__ import annotations

import threading

import panel as pn
import param

from ..cache import LRUCache
from ..state import Experiment
from .banner import NOT_AVAILABLE

MAX_MACHINES = 1 << 16
_COSTS = LRUCache(maxsize=32)  # (problem key, machines, batch size, ε) -> (table, note)
HEADER = ("| method, split | per iteration: runtime<br>communication | iterations to ε (bound) | to ε: runtime<br>"
          "communication |\n|---|---|---|---|")


def _num(value) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def cost_table(problem, machines, batch_size, eps):
    """(table, note): Section 3's table on ``problem`` (a Markdown table, ``theory.parallel_cost``'s
    numbers) and a note naming the cheaper way to split ASDCA and what the numbers are; (None, why)
    where the model does not apply (a bound it multiplies does not: non-smooth loss, l1 > 0) or an
    input is out of range."""
    from ... import theory  # sympy: loaded on a worker thread, never with the page
    try:
        frame = theory.parallel_cost(problem, machines, batch_size, eps)
        split = theory.asdca_partition(problem, machines, batch_size)
    except ValueError as exc:
        return None, f"*Not available for this problem:* {exc}"
    rows = [f"| {r.method}, {r.partition} | {_num(r.runtime)}<br>{_num(r.communication)} | {_num(r.iterations)} | "
            f"{_num(r.total_runtime)}<br>{_num(r.total_communication)} |" for r in frame.itertuples()]
    by = frame.set_index(["method", "partition"]).communication
    note = (f"With s = {machines} machines and mini-batch m = {batch_size}, ASDCA's cheaper split is "
            f"**{split}**: its communication per iteration is {_num(by['asdca', split])} against "
            f"{_num(by['asdca', 'features' if split == 'examples' else 'examples'])} (Section 3 chooses between "
            f"d log s and m s log² s). Runtime is in nonzeros processed per node, communication in the "
            f"paper's units (summing d-vectors: d log s; broadcasts: log² s each); the paper states them as "
            f"O(·), so the constants are 1 and log is log₂. Iterations are each method's bound to "
            f"ε = {eps:g} (SDCA, ASDCA Thm 1, AGD) — worst cases, like the bounds drawn beside the curves.")
    return "\n".join([HEADER, *rows]), note


class ParallelCostView(pn.viewable.Viewer):
    """A collapsed card: the reader's machine count and mini-batch size, and the cost table."""

    state = param.ClassSelector(class_=Experiment)
    machines = param.Integer(default=16, bounds=(1, MAX_MACHINES), doc="machines s")
    batch_size = param.Integer(default=64, bounds=(1, None), doc="ASDCA's mini-batch size m")

    def __init__(self, **params):
        super().__init__(**params)
        self._table = pn.pane.Markdown("", sizing_mode="stretch_width")
        self._note = pn.pane.Markdown("", sizing_mode="stretch_width")
        inputs = pn.Row(pn.widgets.IntInput.from_param(self.param.machines, name="machines s", width=140),
                        pn.widgets.IntInput.from_param(self.param.batch_size, name="ASDCA mini-batch m",
                                                       width=160))
        self._card = pn.Card(inputs, self._table, self._note, title="Parallel cost (ASDCA, Section 3)",
                             collapsed=True, sizing_mode="stretch_width")
        self._asked = 0  # the newest evaluation asked for: an older one's answer is dropped
        self.thread = None  # the evaluation under way (tests join it)
        self._card.param.watch(self._refresh, "collapsed")
        self.param.watch(self._refresh, ["machines", "batch_size"])
        self.state.param.watch(self._refresh, ["analysis", "log10_target", "error"])

    def _refresh(self, *events):
        if self._card.collapsed:
            return
        analysis = self.state.analysis
        self._asked += 1
        if analysis is None:
            self._show(self._asked, None, NOT_AVAILABLE if self.state.error else "*Analysing the data…*")
            return
        key = (analysis.problem_key, self.machines, self.batch_size, 10.0 ** self.state.log10_target)
        known = _COSTS.get(key)
        if known is not None:
            self._show(self._asked, *known)
            return
        self._note.object = "*Evaluating the cost model…*"
        show = self.state.on_loop(self._show)
        asked = self._asked

        def evaluate():
            try:
                show(asked, *_COSTS.get_or_compute(key, lambda: cost_table(analysis.problem, *key[1:])))
            except Exception as exc:  # noqa: BLE001 - the card says what failed instead of waiting forever
                show(asked, None, f"*Not available:* {type(exc).__name__}: {exc}")
        self.thread = threading.Thread(target=evaluate, daemon=True, name="cdlab-parallel-cost")
        self.thread.start()

    def _show(self, asked, table, note):
        if asked != self._asked:
            return
        self._table.object = table or ""
        self._note.object = note

    def __panel__(self):
        return self._card
