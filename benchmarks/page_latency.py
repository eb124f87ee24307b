"""How responsive the face-off page is, measured in headless Chromium (issue 14, item 4).

Each repetition starts a fresh ``panel serve apps/faceoff.py`` on a free
loopback port (numba's cache warmed first with ``cdlab.ui.warmup.warm_cache``)
and prints:

* first page: seconds from the server process's start to the face-off card
  shown in the browser (target: within 5 s); "of which page": from the page
  request on (the rest is the server's start-up);
* first curve: seconds from the page request to the first curve drawn;
* cached interaction: seconds from a click whose runs all come from the
  result cache to the job reported finished with its curves drawn (target 0.5 s);
* cancel latency: seconds from a Cancel click during a run on synthetic data
  of ``--n`` × ``--d`` dense (≥ 5 M nonzeros) to the status saying cancelled
  (target: 1 s);
* longest stall: the longest main-thread task (PerformanceObserver
  ``longtask`` entries) while that run runs, from the status saying it is
  running (its analysis — histograms, Figure 1, the theory card — and its first
  points arrive in that window) to Cancel (target 0.5 s); "stall incl. load": the same from the big run's
  page request on (the page's first render of that data included).

Then the median and the min–max of each over the repetitions.
Run:  python benchmarks/page_latency.py [--repeat 3] [--run-seconds 12]
"""
import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import playwright.sync_api as playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_browser import ARGS, CHROMIUM, Server, curve_points, job, text  # noqa: E402  (one home for these)

LONGTASKS = """
window.__longtasks = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__longtasks.push([e.startTime, e.duration]);
}).observe({type: 'longtask', buffered: true});
"""
POLL = 0.02  # seconds between looks at the page


def status(page):
    return text(page, ".cdlab-status")


def wait_for(check, timeout, what, page=None):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            seen = "" if page is None else f"; status: {status(page)!r}; curves: {sorted(curve_points(page))}"
            raise RuntimeError(f"timed out waiting for {what}{seen}")
        time.sleep(POLL)


def phase_of(page, after):
    """The phase of the newest job if it is newer than ``after``, else ''."""
    import re
    m = re.search(r"Status:\s*(.*?)\s*(?:…\s*)?\(job (\d+)\)", status(page))
    return m.group(1).strip() if m and int(m.group(2)) > after else ""


def one_repetition(browser, n, d, run_seconds):
    out = {}
    t0 = time.monotonic()
    server = Server()
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.add_init_script(LONGTASKS)
        t_goto = time.monotonic()
        page.goto(server.url, timeout=120_000)
        page.wait_for_selector(".cdlab-faceoff", timeout=120_000)
        out["first page"] = time.monotonic() - t0
        out["of which page"] = time.monotonic() - t_goto
        wait_for(lambda: any(v >= 2 for v in curve_points(page).values()), 120, "a curve")
        out["first curve"] = time.monotonic() - t_goto
        wait_for(lambda: phase_of(page, 0) == "finished", 300, "the first job to finish")

        # a cached interaction: dual_cd to one sampling and back; the way back is all from the cache
        before = job(page)
        page.locator(".cdlab-sampling-dual_cd select").first.select_option(label="uniform")
        wait_for(lambda: phase_of(page, before) == "finished" and "importance" not in
                 " ".join(k for k in curve_points(page) if k.startswith("dual_cd")), 120, "dual_cd uniform only", page)
        before = job(page)
        t = time.monotonic()
        page.locator(".cdlab-sampling-dual_cd select").first.select_option(label="uniform + importance")
        wait_for(lambda: phase_of(page, before) == "finished" and "dual_cd (importance)" in curve_points(page),
                 120, "the cached runs", page)
        out["cached interaction"] = time.monotonic() - t
        assert "from cache" in status(page), status(page)

        # a big run: stream for run_seconds, then Cancel
        query = (f"?n_samples={n}&n_features={d}&density=1.0&max_passes=200.0&log10_tol=-13.0"
                 "&max_time=600.0")
        page.goto(server.url + query, timeout=120_000)
        page.wait_for_selector(".cdlab-faceoff", timeout=120_000)
        wait_for(lambda: phase_of(page, 0).startswith("running "), 300, "the big run to start")
        start = page.evaluate("performance.now()")
        wait_for(lambda: any(v >= 2 for v in curve_points(page).values()), 120, "the big run's first points")
        time.sleep(run_seconds)
        end = page.evaluate("performance.now()")
        tasks = page.evaluate("window.__longtasks")
        out["longest stall"] = max((d for st, d in tasks if start <= st <= end), default=0.0) / 1000
        out["stall incl. load"] = max((d for st, d in tasks if st <= end), default=0.0) / 1000
        before = job(page)
        t = time.monotonic()
        page.locator(".cdlab-cancel button").first.click()
        wait_for(lambda: phase_of(page, before - 1) == "cancelled", 120, "the status to say cancelled", page)
        out["cancel latency"] = time.monotonic() - t
        page.close()
    finally:
        server.close()
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--run-seconds", type=float, default=12.0, help="how long the big run streams")
    args = parser.parse_args()
    if args.n * args.d < 5_000_000:
        parser.error(f"n·d = {args.n * args.d:,}: the big run needs at least 5,000,000 nonzeros")
    print("warming numba's cache: cdlab.ui.warmup.warm_cache()", flush=True)
    subprocess.run([sys.executable, "-c", "from cdlab.ui.warmup import warm_cache; warm_cache()"], cwd=ROOT,
                   check=True)
    results = []
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for k in range(args.repeat):
                r = one_repetition(browser, args.n, args.d, args.run_seconds)
                print(f"run {k + 1}: " + ", ".join(f"{name} {v:.2f} s" for name, v in r.items()), flush=True)
                results.append(r)
        finally:
            browser.close()
    print(f"\n{args.repeat} runs, big run {args.n:,} × {args.d:,} dense ({args.n * args.d:,} nonzeros)")
    targets = {"first page": 5.0, "of which page": None, "first curve": None, "cached interaction": 0.5, "cancel latency": 1.0,
               "longest stall": 0.5, "stall incl. load": None}
    for name, target in targets.items():
        values = [r[name] for r in results]
        goal = f"  (target ≤ {target:g} s)" if target else ""
        print(f"{name:20s} median {statistics.median(values):6.2f} s   min {min(values):6.2f}   "
              f"max {max(values):6.2f}{goal}")


if __name__ == "__main__":
    main()
