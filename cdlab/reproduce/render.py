"""Plots (:class:`cdlab.reproduce._core.Plot`) as Bokeh figures, and the static HTML report.

The page embeds BokehJS itself (``bokeh.resources.INLINE``), so it opens offline in any browser.
"""
from __future__ import annotations

import html
import math

import numpy as np

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf")


def _finite(x, y, logx, logy):
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    if logx:
        keep &= x > 0
    if logy:
        keep &= y > 0
    return x[keep], y[keep]


def figure(plot):
    """A Bokeh figure for one Plot."""
    from bokeh.models import ColorBar, LinearColorMapper, Span
    from bokeh.plotting import figure as bk_figure

    if plot.image is not None:
        xs, ys = np.asarray(plot.image_x), np.asarray(plot.image_y)
        img = np.asarray(plot.image, dtype=float)
        fig = bk_figure(title=plot.title, x_axis_label=plot.xlabel, y_axis_label=plot.ylabel, width=620, height=440,
                        x_range=(xs.min(), xs.max()), y_range=(ys.min(), ys.max()))
        mapper = LinearColorMapper(palette="RdBu11", low=-3, high=3, nan_color="#eeeeee")  # blue below 0
        fig.image(image=[img], x=xs.min(), y=ys.min(), dw=xs.max() - xs.min(), dh=ys.max() - ys.min(),
                  color_mapper=mapper)
        fig.add_layout(ColorBar(color_mapper=mapper, title=plot.image_label), "right")
    else:
        fig = bk_figure(title=plot.title, x_axis_label=plot.xlabel, y_axis_label=plot.ylabel, width=760, height=400,
                        x_axis_type="log" if plot.logx else "linear", y_axis_type="log" if plot.logy else "linear",
                        tools="pan,wheel_zoom,box_zoom,reset,save,hover")
        colors = {}
        for s in plot.series:  # "<label> failed" markers take the colour of the series "<label>"
            base = s.label[:-len(" failed")] if s.label.endswith(" failed") else s.label
            colors.setdefault(base, PALETTE[len(colors) % len(PALETTE)])
        for s in plot.series:
            x, y = _finite(s.x, s.y, plot.logx, plot.logy)
            color = colors[s.label[:-len(" failed")] if s.label.endswith(" failed") else s.label]
            if s.style == "markers":
                fig.scatter(x, y, legend_label=s.label, color=color, size=9)
            else:
                fig.line(x, y, legend_label=s.label, color=color, line_width=2,
                         line_dash="dashed" if s.style == "dashed" else "solid")
        if plot.series:
            fig.legend.click_policy = "hide"
            fig.add_layout(fig.legend[0], "right")
    for value in plot.hlines:
        fig.add_layout(Span(location=float(value), dimension="width", line_color="gray", line_dash="dotted"))
    for value in plot.vlines:
        fig.add_layout(Span(location=float(value), dimension="height", line_color="black", line_dash="dashed"))
    return fig


def _table_html(df, max_rows=60):
    def cell(v):
        if isinstance(v, float):
            return "∞" if v == math.inf else (f"{v:.4g}" if np.isfinite(v) else "—")
        return html.escape(str(v))

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>"
                   for row in df.head(max_rows).itertuples(index=False))
    more = f"<p class='note'>… {len(df) - max_rows} more rows in the CSV</p>" if len(df) > max_rows else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1250px; color: #222; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.reproduced { color: #146c2e; font-weight: bold; }
.differs, .error { color: #b00020; font-weight: bold; }
.note { color: #666; font-size: 13px; }
section.item { border-top: 2px solid #ddd; margin-top: 2em; padding-top: .5em; }
.figure { margin: 1em 0; }
"""


def report_html(outcomes, meta) -> str:
    """The whole report: verdict table, then per item its claim, checks, figures, tables and settings."""
    from bokeh.embed import components
    from bokeh.resources import INLINE

    figs = {}
    for o in outcomes:
        for k, p in enumerate(o.plots):
            figs[f"fig-{o.paper}-{o.name}-{k}"] = figure(p)
    script, divs = components(figs) if figs else ("", {})
    esc = html.escape
    rows = "".join(
        f"<tr><td>{esc(o.paper)}</td><td><a href='#{esc(o.paper)}-{esc(o.name)}'>{esc(o.name)}</a></td>"
        f"<td>{esc(o.paper_says)}</td><td>{esc(o.measured)}</td><td class='{o.verdict}'>{o.verdict}</td>"
        f"<td>{esc(o.reason)}</td></tr>" for o in outcomes)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>cdlab reproduce</title>",
             f"<style>{CSS}</style>", INLINE.render(), script, "</head><body>",
             "<h1>cdlab reproduce: the papers' key results, run again</h1>",
             f"<p class='note'>{esc(meta['command'])} — {esc(meta['when'])}; "
             f"{'quick sizes' if meta['quick'] else 'full sizes'}; each verdict is computed from the checks below "
             "it (reproduced when every check holds). Raw numbers: the CSV files next to this page.</p>",
             "<h2>Verdicts</h2><table id='verdicts'><thead><tr><th>paper</th><th>item</th><th>the paper</th>"
             f"<th>this run</th><th>verdict</th><th>why</th></tr></thead><tbody>{rows}</tbody></table>"]
    for paper, cite in meta["papers"].items():
        mine = [o for o in outcomes if o.paper == paper]
        if not mine:
            continue
        parts.append(f"<h2>{esc(paper)}</h2><p class='note'>{esc(cite)}</p>")
        for o in mine:
            parts.append(f"<section class='item' id='{esc(o.paper)}-{esc(o.name)}' data-verdict='{o.verdict}' "
                         f"data-figures='{len(o.plots)}'>")
            parts.append(f"<h3>{esc(o.title)} — <span class='{o.verdict}'>{o.verdict}</span></h3>")
            parts.append(f"<p><b>The paper:</b> {esc(o.paper_says)}<br><b>This run:</b> {esc(o.measured)}</p>")
            if o.error:
                parts.append(f"<pre>{esc(o.error)}</pre>")
            checks = "".join(f"<tr><td>{esc(c.claim)}</td><td class='{'reproduced' if c.ok else 'differs'}'>"
                             f"{'holds' if c.ok else 'does not hold'}</td><td>{esc(c.detail)}</td></tr>"
                             for c in o.checks)
            parts.append(f"<table><thead><tr><th>check</th><th></th><th>measured</th></tr></thead>"
                         f"<tbody>{checks}</tbody></table>")
            for k in range(len(o.plots)):
                key = f"fig-{o.paper}-{o.name}-{k}"
                parts.append(f"<div class='figure' id='{key}'>{divs[key]}</div>")
            for tname, df in o.tables.items():
                parts.append(f"<h4>table {esc(tname)} <span class='note'>({esc(o.paper)}_{esc(o.name)}_{esc(tname)}"
                             f".csv)</span></h4>" + _table_html(df))
            cached = " (from the cache of an earlier run)" if o.cached else ""
            parts.append(f"<p class='note'>settings: {esc(str(o.settings))}; {o.seconds:.1f} s{cached}</p></section>")
    versions = "".join(f"<tr><td>{esc(k)}</td><td>{esc(str(v))}</td></tr>" for k, v in meta["versions"].items())
    parts.append(f"<h2>Library versions</h2><table id='versions'><tbody>{versions}</tbody></table></body></html>")
    return "\n".join(parts)
