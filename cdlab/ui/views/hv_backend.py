"""HoloViews with its Bokeh backend, loaded when the first HoloViews plot is drawn (the data's
histograms, Figure 1): importing it and loading the backend take about a second that the first page
does not wait for (the convergence plot is plain Bokeh)."""
from __future__ import annotations

from functools import cache


@cache
def holoviews_bokeh():
    """The ``holoviews`` module with its Bokeh backend loaded and current (once per process)."""
    import holoviews as hv

    hv.extension("bokeh", logo=False)
    # canvas, not WebGL (HoloViews' default): these plots draw at most a few thousand glyphs, which a
    # canvas paints in milliseconds, while each WebGL plot is copied onto its canvas at every repaint,
    # and every plot of the page repaints when a plot arrives (0.4-0.5 s of a run's longest browser stall)
    hv.renderer("bokeh").webgl = False
    return hv
