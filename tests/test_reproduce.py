"""``cdlab reproduce``: the papers' key results regenerated into a static report.

The quick report is built once per session by the command itself (a subprocess, as a user runs
it); every item's verdict is asserted with its reason, the CSV files hold the numbers behind it,
and the page opens in headless Chromium with every figure drawn and no JavaScript error.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cdlab import reproduce
from cdlab.reproduce import Check, Outcome, Plot, Series

ROOT = Path(__file__).resolve().parents[1]
# Items whose paper claim this run does not reproduce, with the check that says so. A verdict
# that changes either way fails the test: update the report's text and this list together.
KNOWN_DIFFERENCES = {
    ("spdc", "lambda_sweep"): "faster than AFG for relatively large λ",
    ("asdca", "minibatch"): "ASDCA interpolates",
}


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    proc = subprocess.run([sys.executable, "-m", "cdlab", "reproduce", "--quick", "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc


@pytest.mark.slow
def test_quick_report_runs_and_writes_every_item(quick_report):
    out, proc = quick_report
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert [tuple(k) for k in verdicts[["paper", "item"]].to_numpy()] == list(reproduce.ITEMS)
    assert "cdlab reproduce" in proc.stderr  # the progress bar (tqdm writes to stderr)
    assert (out / "index.html").stat().st_size > 100_000  # BokehJS is inlined
    for paper, name in reproduce.ITEMS:
        assert list(out.glob(f"{paper}_{name}_*.csv")), f"no CSV for {paper}/{name}"
        assert len(list((out / "cache").glob(f"{paper}.{name}.*.json"))) == 1


@pytest.mark.slow
@pytest.mark.parametrize("key", list(reproduce.ITEMS), ids="/".join)
def test_each_items_verdict(quick_report, key):
    out, _ = quick_report
    row = pd.read_csv(out / "verdicts.csv").set_index(["paper", "item"]).loc[key]
    if key in KNOWN_DIFFERENCES:
        assert row.verdict == "differs", f"{key} now {row.verdict}: {row.reason}"
        assert KNOWN_DIFFERENCES[key] in row.reason, row.reason
    else:
        assert row.verdict == "reproduced", f"{key}: {row.reason}"


@pytest.mark.slow
def test_csv_numbers_are_the_verdicts_numbers(quick_report):
    out, _ = quick_report
    rows = pd.read_csv(out / "faceoff_table1_rows.csv").set_index("data")
    news = rows.loc["reuters_moneyfx"]  # the paper's news: d > n, yet dual RCD wins
    assert news.d > news.n and news.predicted == "dual_cd" and news.passes_dual < news.passes_primal
    sweep = pd.read_csv(out / "appa_figure3_squared_sweep.csv")
    sgd = sweep[sweep.method == "sgd"].sort_values("theta")
    assert sgd.failed.iloc[-1] and not sgd.failed.iloc[0]  # a threshold inside the grid
    assert not sweep[sweep.method == "sdca"].failed.any()


@pytest.mark.slow
def test_rerun_reuses_the_cache(quick_report):
    out, _ = quick_report
    proc = subprocess.run([sys.executable, "-m", "cdlab", "reproduce", "appa", "--quick", "--out", str(out),
                           "--no-progress"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("(cached)") == 2, proc.stdout


@pytest.mark.slow
@pytest.mark.browser
def test_report_opens_in_chromium_with_every_figure(quick_report):
    import playwright.sync_api as playwright

    from _helpers import ARGS, CHROMIUM

    out, _ = quick_report
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: install Debian's chromium (make chromium)"
    n_figures = sum(len(o.plots) for o in [reproduce.Outcome.from_json(json.loads(p.read_text()))
                                           for p in (out / "cache").glob("*.json")])
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors, requests = [], []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("request", lambda req: requests.append(req.url))
        page.goto((out / "index.html").as_uri())
        figures = page.locator("div.figure")
        assert figures.count() == n_figures > 10
        for k in range(n_figures):  # BokehJS drew a canvas into every figure (it pierces the shadow DOM)
            figures.nth(k).scroll_into_view_if_needed()
            figures.nth(k).locator("canvas").first.wait_for(state="attached", timeout=60_000)
        sections = page.locator("section.item")
        assert sections.count() == len(reproduce.ITEMS)
        assert page.locator("#verdicts tbody tr").count() == len(reproduce.ITEMS)
        assert "numpy" in page.locator("#versions").inner_text()
        browser.close()
    assert errors == []
    assert all(u.startswith("file://") for u in requests), [u for u in requests if not u.startswith("file://")]


def _outcome(ok):
    return Outcome(paper_says="p", measured="m", tables={"t": pd.DataFrame({"a": [1.0, np.inf]})},
                   plots=[Plot("t", "x", "y", series=[Series("s", [1, 2], [3, np.nan])])],
                   checks=[Check("claim A", True, "a = 1"), Check("claim B", ok, "b = 2")], settings={})


def test_verdict_is_computed_from_the_checks():
    assert _outcome(True).verdict == "reproduced" and "a = 1" in _outcome(True).reason
    bad = _outcome(False)
    assert bad.verdict == "differs" and bad.reason == "claim B — NOT SO: b = 2"
    empty = Outcome(paper_says="", measured="", tables={}, plots=[], checks=[], settings={})
    assert empty.verdict == "differs" and empty.reason == "no check ran"


def test_outcome_round_trips_through_the_cache_format():
    o = _outcome(False)
    back = Outcome.from_json(json.loads(json.dumps(o.to_json())))
    assert back.verdict == "differs" and back.reason == o.reason
    pd.testing.assert_frame_equal(back.tables["t"], o.tables["t"])
    assert back.plots[0].series[0].y[0] == 3.0 and np.isnan(back.plots[0].series[0].y[1])


def test_bad_selection_names_the_choices():
    with pytest.raises(ValueError, match="unknown paper 'nope'; choose from faceoff"):
        reproduce.select("nope")
    with pytest.raises(ValueError, match="paper 'appa' has no item 'x'; its items: figure3_squared"):
        reproduce.select("appa", "x")


def test_cli_bad_paper_is_one_clear_error():
    proc = subprocess.run([sys.executable, "-m", "cdlab", "reproduce", "nope", "--out", "unused"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "unknown paper 'nope'" in proc.stderr and "Traceback" not in proc.stderr
    assert not (ROOT / "unused").exists()


def test_an_item_that_raises_is_reported_not_fatal(tmp_path):
    def broken(ctx):
        raise RuntimeError("boom")

    spec = reproduce._core.ItemSpec("appa", "broken", "a broken item", broken)
    o = reproduce.run_item(spec, reproduce.Context(quick=True, progress=False))
    assert o.verdict == "error" and "RuntimeError: boom" in o.reason
