"""Face-off card: primal vs dual coordinate descent on this data (theory.md §4,
Csiba & Richtárik): C_P, C_D, total work T for both samplings, Theorem 3, the
predicted winner and the winner the runs show."""
from __future__ import annotations

import math

import numpy as np
import panel as pn
import param

from ..analysis import FACEOFF_METHODS
from ..state import Experiment
from .banner import NOT_AVAILABLE
from .theory_card import bound_passes
from ...verdict import Spread, faceoff_verdict, reach

PRIMAL_SIDE = ("primal_cd",)
DUAL_SIDE = ("dual_cd", "sdca")


def fmt(x):
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "**no**"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if isinstance(x, (float, np.floating)):
        return "–" if not math.isfinite(x) else f"{x:.4g}"
    return str(x)


def ok(lo, x, hi):
    return "✓" if lo * (1 - 1e-12) <= x <= hi * (1 + 1e-12) else "✗"


def side_of(run):
    return "primal" if run.method in PRIMAL_SIDE else "dual"


def measured_winner(traces, run_status, target, runs):
    """The face-off verdict at ``target`` (cdlab.verdict's rule), or None before any face-off run has a trace.

    Each side (primal_cd vs dual_cd/sdca, any sampling) is represented by its
    run with the smallest median passes-to-ε over the seeds; the verdict
    compares the two sides' seed ranges. A dict: ``verdict`` (a Verdict; None
    when one side ran alone), ``runs`` (label -> RunSpec of the contenders),
    ``sides`` (the sides that ran), and the leader's ``lead`` (its Spread),
    ``label``, ``method``, ``sampling``, ``side`` and ``passes`` (its median);
    None when no face-off run has reached the target.
    """
    face = {run.label: run for run in runs if run.method in PRIMAL_SIDE + DUAL_SIDE
            and run.label in traces and len(traces[run.label])}
    if not face:
        return None
    passes = {label: reach(traces[label], target) for label in face}
    v, chosen = faceoff_verdict(passes, {label: side_of(run) for label, run in face.items()})
    out = dict(verdict=v, runs={label: face[label] for label in chosen.values()}, sides=sorted(chosen))
    if v is None:  # one side alone: no verdict, only what it measured
        lead = Spread(*next((label, tuple(passes[label])) for label in chosen.values()))
        if not np.isfinite(lead.lo):
            return None
    elif v.kind == "none":
        return None
    else:
        lead = v.leader
    run = face[lead.name]
    out.update(lead=lead, label=run.label, method=run.method, sampling=run.sampling, side=side_of(run),
               passes=lead.median)
    return out


def sampling_note(fo, won):
    """Why the winning side's other sampling may win: its bound is close (or '' when the sampling agrees)."""
    pred = fo.prediction["sampling"]
    if won["sampling"] == pred or {won["sampling"], pred} != {"uniform", "importance"}:
        return ""
    side = "P" if won["side"] == "primal" else "D"
    t = {s: getattr(fo, f"T_{side}_{s}") for s in ("uniform", "importance")}
    return (f" (with {won['sampling']} sampling rather than the predicted {pred}: the two samplings' bounds on "
            f"total work differ by a factor {max(t.values()) / min(t.values()):.3g} only)")


def verdict_markdown(won, fo, smooth, target, face):
    """The measured verdict: a winner only when the seeds' ranges of passes-to-ε do not overlap."""
    v, lead = won["verdict"], won["lead"]
    seeds = f"{lead.seeds} seed" + ("s" if lead.seeds > 1 else "")
    ranges = f"<span class='cdlab-measured'>{lead.name}</span>: {lead.text()}"
    if v is not None:
        rival = next(sp for sp in v.spreads if sp.name != lead.name)
        ranges += f" vs {rival.name}: {rival.text()}"
    ranges += f" to gap ≤ {target:.0e} (median over {seeds}, and their range)"
    if v is None or len({side_of(r) for r in face}) < 2:
        return f"**Measured winner:** {ranges} — only the {won['side']} side ran, so this is no face-off yet."
    if v.kind == "tie":
        return (f"**Measured: <span class='cdlab-tie'>a tie within seed-to-seed spread</span>** — {ranges}: the "
                "ranges overlap, so neither side is faster on this data by more than the seeds' spread.")
    if v.kind == "one seed":
        return (f"**Measured (one seed):** {ranges} — {won['side']} is ahead, but one seed measures no spread: "
                "use 2 or more seeds for a verdict.")
    agree = ""
    if smooth:
        predicted_side = "primal" if fo.prediction["method"] in PRIMAL_SIDE else "dual"
        if won["side"] == predicted_side:
            agree = f" — the {won['side']} side wins, as predicted" + sampling_note(fo, won)
        else:
            agree = (f" — **the {won['side']} side wins, not the predicted {predicted_side} side**. The "
                     f"prediction compares the two sides' worst-case bounds on total work (ratio "
                     f"{fo.prediction['ratio']:.3g}); runs beat their bounds by different factors (the "
                     "theory card's measured / bound column), which can overturn a small ratio")
    return f"**Measured winner:** {ranges}; the ranges do not overlap{agree}."


def prediction_markdown(fo, faceoff_bounds, target):
    """The prediction in passes to reach ε (the unit of the theory card and of the plot's dashed bounds),
    then the paper's reason: the total work per log(1/ε) factor, T of eqs. 12–15."""
    pred = fo.prediction
    method, sampling = pred["method"], pred["sampling"]
    other = "dual_cd" if method == "primal_cd" else "primal_cd"
    side = "P" if other == "primal_cd" else "D"
    other_sampling = min(("uniform", "importance"), key=lambda sm: getattr(fo, f"T_{side}_{sm}"))
    head = f"**Predicted winner:** <span class='cdlab-predicted'>{method} ({sampling})</span>"
    mine, theirs = (faceoff_bounds.get(k) for k in ((method, sampling), (other, other_sampling)))
    if mine is not None and theirs is not None and not mine.error and not theirs.error:
        a, b = bound_passes(mine, target), bound_passes(theirs, target)
        head += (f" — its bound reaches gap ≤ {target:.0e} in **{fmt(a)} passes**, {other} ({other_sampling})'s in "
                 f"{fmt(b)}")
        if b < a:
            head += (" (at this ε the two bounds order the sides the other way: their starting gaps ε₀ differ, "
                     "which the per-log(1/ε) work T below leaves out)")
    return f"{head}. Why: {pred['text']}."


def unrun_note(runs):
    """'' when the plan runs both methods the prediction compares (primal_cd and dual_cd), else which of
    them it runs: the prediction is then the theory's word on methods not plotted, not a verdict on the
    ones plotted."""
    ran = [m for m in FACEOFF_METHODS if any(r.method == m for r in runs)]
    if len(ran) == len(FACEOFF_METHODS):
        return ""
    which = f"only {ran[0]}" if ran else "neither primal_cd nor dual_cd"
    return (f"*This scenario runs {which}: the prediction below compares primal_cd with dual_cd — what the "
            "theory says they would do on this data — not the methods plotted.*")


def faceoff_markdown(analysis, traces, run_status, target, runs, error=""):
    """The card's text (Markdown tables)."""
    if analysis is None:
        return (NOT_AVAILABLE if error
                else "*Analysing the data…*")
    fo = analysis.faceoff
    p = analysis.problem
    head = f"**Data:** n = {p.n_samples:,}, d = {p.n_features:,}, nnz = {p.nnz:,}, λ = {p.lam:.3g}, loss = {p.loss}"
    if analysis.note:
        head += f" — {analysis.note}"
    if fo is None:
        return head + f"\n\n*No face-off quantities:* {analysis.faceoff_note}"
    smooth = not analysis.faceoff_note
    lines = [head, "", "| | primal CD (NSync) | dual CD (Quartz) |", "|---|---|---|",
             f"| C (eq. 16) | {fmt(fo.C_P)} | {fmt(fo.C_D)} |"]
    if smooth:
        lines += [f"| T, uniform (eqs. 12–13): work per log(1/ε) factor | {fmt(fo.T_P_uniform)} | "
                  f"{fmt(fo.T_D_uniform)} |",
                  f"| T, importance (eq. 15): work per log(1/ε) factor | {fmt(fo.T_P_importance)} | "
                  f"{fmt(fo.T_D_importance)} |"]
        need = {k: bound_passes(info, target) for k, info in analysis.faceoff_bounds.items() if not info.error}
        for sampling in ("uniform", "importance"):
            cells = [fmt(need.get((m, sampling))) for m in ("primal_cd", "dual_cd")]
            lines.append(f"| **bound: passes to ε = {target:.0e}**, {sampling} | {cells[0]} | {cells[1]} |")
    t3 = fo.theorem3
    lines += ["", "**Theorem 3** (no zero rows or columns" + ("" if t3["assumption"] else
              " — *not the case here, so it need not hold*") + "):", "",
              "| | lower | value | upper | |", "|---|---|---|---|---|",
              f"| C_P | ‖X‖²_F = {fmt(t3['C_P_lower'])} | {fmt(fo.C_P)} | n‖X‖²_F = {fmt(t3['C_P_upper'])} | "
              f"{ok(t3['C_P_lower'], fo.C_P, t3['C_P_upper'])} |",
              f"| C_D | ‖X‖²_F = {fmt(t3['C_D_lower'])} | {fmt(fo.C_D)} | d‖X‖²_F = {fmt(t3['C_D_upper'])} | "
              f"{ok(t3['C_D_lower'], fo.C_D, t3['C_D_upper'])} |",
              f"| C_P/C_D | 1/d = {fmt(t3['ratio_lower'])} | **{fmt(t3['ratio'])}** | n = {fmt(t3['ratio_upper'])} | "
              f"{ok(t3['ratio_lower'], t3['ratio'], t3['ratio_upper'])} |"]
    face = [r for r in runs if r.method in PRIMAL_SIDE + DUAL_SIDE]
    if smooth:
        note = unrun_note(runs)
        if note:
            lines += ["", note]
        lines += ["", prediction_markdown(fo, analysis.faceoff_bounds, target)]
    else:
        lines += ["", f"*{analysis.faceoff_note}*"]
    won = measured_winner(traces, run_status, target, runs)
    going = any(run_status.get(r.label) in ("queued", "running") for r in face)
    if won is not None:
        lines += ["", verdict_markdown(won, fo, smooth, target, face)
                  + (" *So far: seeds are still running.*" if going else "")]
    else:
        compared = any(r.method in FACEOFF_METHODS for r in runs)
        why = (f"none to measure — {' and '.join(FACEOFF_METHODS)}, the methods this comparison is about, did "
               "not run in this scenario (tick both to race them)" if not compared
               else f"no face-off run has reached the target gap {target:.0e} yet" if going
               else f"no face-off run reached the target gap {target:.0e} within its budget (more passes, "
                    "a larger target or a larger λ would settle it)")
        lines += ["", f"**Measured winner:** {why}"]
    return "\n".join(lines)


class FaceoffCard(pn.viewable.Viewer):
    state = param.ClassSelector(class_=Experiment)

    def _text(self, analysis, traces, run_status, log10_target, error):
        return faceoff_markdown(analysis, traces, run_status, 10.0 ** log10_target, self.state.runs(), error)

    def __panel__(self):
        s = self.state
        md = pn.pane.Markdown(pn.bind(self._text, s.param.analysis, s.param.traces, s.param.run_status,
                                      s.param.log10_target, s.param.error), css_classes=["cdlab-faceoff"],
                              sizing_mode="stretch_width")
        return pn.Card(md, title="Face-off: primal vs dual", sizing_mode="stretch_width", collapsible=False)
