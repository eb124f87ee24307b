"""The face-off dashboard in a real browser: `panel serve apps/faceoff.py` on a
loopback port, headless Debian Chromium driven by Playwright.

Screenshots of every preset land in tests/screenshots/ (git-ignored); a failing
test leaves one of its page there too.
"""
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import playwright.sync_api as playwright
import pytest

from _helpers import ARGS, CHROMIUM
from cdlab.ui import datasource

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "tests" / "screenshots"
LOAD = 120_000  # ms: generous, the machine is shared
RUN = 180_000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`python -m panel serve apps/faceoff.py` on a free loopback port."""

    def __init__(self, env=None):
        self.port = free_port()
        self.log_path = SHOTS / f"serve-{self.port}.log"
        SHOTS.mkdir(exist_ok=True)
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "panel", "serve", "apps/faceoff.py", "--address", "127.0.0.1", "--port",
             str(self.port), f"--allow-websocket-origin=127.0.0.1:{self.port}"],
            cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"panel serve exited: {self.log_path.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.3)
        else:
            raise RuntimeError("panel serve did not open its port")
        self.url = f"http://127.0.0.1:{self.port}/faceoff"

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()

    def errors(self):
        """Tracebacks through the app's own code that the server logged (there should be none).

        Bokeh and tornado also log tracebacks of their own when a test closes a tab while
        messages are in flight (closed streams, a session already gone); those do not pass
        through cdlab and are not the app's.
        """
        found = re.findall(r"Traceback \(most recent call last\):\n(?:[ \t].*\n)*.*", self.log_path.read_text())
        ours = (str(ROOT / "cdlab"), str(ROOT / "apps"))
        return [t for t in found if any(path in t for path in ours)]


@pytest.fixture(scope="module")
def server():
    srv = Server()
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def browser():
    # a missing browser fails these tests (never a skip): `make chromium` installs Debian's
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: install Debian's chromium (make chromium)"
    with playwright.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def new_page(browser, **options):
    """A page that records the JavaScript errors thrown in it (``page.js_errors``) and the errors logged
    to its console (``page.console_errors``: e.g. BokehJS's "reference ... isn't known")."""
    pg = browser.new_page(**options)
    pg.js_errors, pg.console_errors = [], []
    pg.on("pageerror", lambda exc: pg.js_errors.append(str(exc)))
    pg.on("console", lambda msg: pg.console_errors.append(msg.text) if msg.type == "error" else None)
    return pg


@pytest.fixture
def page(browser, server, request):
    pg = new_page(browser, viewport={"width": 1500, "height": 1000})
    yield pg
    if request.node.rep_call.failed if hasattr(request.node, "rep_call") else False:
        pg.screenshot(path=str(SHOTS / f"FAILED-{request.node.name}.png"))
    pg.close()
    assert server.errors() == []
    # e.g. BokehJS's "cannot find a view for Legend" at every update of a plot whose legend
    # appeared after its first frame
    assert pg.js_errors == []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # noqa: D103  (lets the page fixture see a failure)
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


# ------------------------------------------------------------------ helpers
DEEP_TEXT = r"""(css) => {
    // Panel renders into shadow roots: collect the visible text below the host, roots included
    const hosts = [];
    const find = (root) => {
        for (const el of root.querySelectorAll('*')) {
            if (el.matches(css)) hosts.push(el);
            if (el.shadowRoot) find(el.shadowRoot);
        }
    };
    find(document);
    if (!hosts.length) return null;
    const walk = (node) => {
        let out = '';
        if (node.shadowRoot) out += walk(node.shadowRoot);
        for (const child of node.childNodes) {
            if (child.nodeType === Node.TEXT_NODE) out += child.textContent;
            else if (child.nodeType === Node.ELEMENT_NODE && !['STYLE', 'SCRIPT'].includes(child.tagName)) {
                const block = getComputedStyle(child).display !== 'inline';
                out += (block ? '\n' : '') + walk(child);
            }
        }
        return out;
    };
    return walk(hosts[0]).replace(/[ \t]+/g, ' ').replace(/\n\s*\n+/g, '\n').trim();
}"""


def text(page, css):
    """The text a Panel component shows (its shadow roots included); '' if it is not there yet."""
    return page.evaluate(DEEP_TEXT, css) or ""


def job(page):
    m = re.search(r"\(job (\d+)\)", text(page, ".cdlab-status"))
    return int(m.group(1)) if m else 0


def wait_done(page, after=None, timeout=RUN, phase="finished"):
    """Wait until a job newer than ``after`` reports ``phase``; returns its number."""
    deadline = time.monotonic() + timeout / 1000
    while time.monotonic() < deadline:
        t = text(page, ".cdlab-status")
        if t:
            m = re.search(r"Status:\s*(.*?)\s*\(job (\d+)\)", t)
            if m and (after is None or int(m.group(2)) > after) and m.group(1).strip() == phase:
                return int(m.group(2))
        page.wait_for_timeout(250)
    raise AssertionError(f"no job reached {phase!r}; status: {text(page, '.cdlab-status')}")


def open_app(page, server, query=""):
    page.goto(server.url + query, timeout=LOAD)
    page.wait_for_selector(".cdlab-faceoff", timeout=LOAD)
    return wait_done(page)


def select(page, css, label):
    before = job(page)
    page.locator(f"{css} select").first.select_option(label=label)
    return before


def curve_points(page):
    """{curve: number of points} of the convergence plot, read from BokehJS: solid lines by
    their legend label, each dashed bound as "<label> bound" (it shares its run's colour)."""
    return page.evaluate("""() => {
        const solid = {}, dashed = [], out = {};
        for (const doc of Bokeh.documents) {
          for (const m of doc._all_models.values()) {
            if (!(m.glyph && m.glyph.type === 'Line' && m.data_source && m.data_source.data.y)) continue;
            if (!m.visible) continue;  // a curve of an earlier plan, hidden
            const n = m.data_source.data.y.length, color = String(m.glyph.line_color.value ?? m.glyph.line_color);
            const dash = m.glyph.line_dash.value ?? m.glyph.line_dash;
            if (dash && dash.length) dashed.push([color, n]);
            else if (m.name) { solid[color] = m.name; out[m.name] = n; }
          }
        }
        for (const [color, n] of dashed) if (solid[color]) out[solid[color] + ' bound'] = n;
        return out;
    }""")


def legend_labels(page):
    """The labels the legends show: items of a Legend whose curves are visible (a curve of an earlier
    plan may stay in the document, hidden)."""
    return page.evaluate("""() => {
        const out = [];
        for (const doc of Bokeh.documents)
          for (const m of doc._all_models.values())
            if (m.type === 'Legend')
              for (const item of m.items)
                if (item.label && item.visible !== false && item.renderers.some(r => r.visible))
                  out.push(item.label.value || String(item.label));
        return out;
    }""")


def plot_titles(page):
    return page.evaluate("""() => {
        const out = [];
        for (const doc of Bokeh.documents)
          for (const m of doc._all_models.values())
            if (m.type === 'Title' && m.text) out.push(m.text);
        return out;
    }""")


def faceoff_text(page):
    return text(page, ".cdlab-faceoff")


def eventually(check, timeout=30.0, page=None):
    """Poll ``check()`` until it returns a truthy value (the plot redraws after the status line)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.25)


# ------------------------------------------------------------------ tests
def test_page_loads_runs_and_shows_the_faceoff(page, server):
    open_app(page, server)
    fo = faceoff_text(page)
    assert "C (eq. 16)" in fo and "Predicted winner" in fo and "Measured" in fo
    runs = ["primal_cd (uniform)", "primal_cd (importance)", "dual_cd (uniform)", "dual_cd (importance)"]
    assert eventually(lambda: set(runs) <= set(legend_labels(page))), legend_labels(page)
    points = curve_points(page)
    for run in runs:  # each run and its dashed bound
        assert points[run] > 5 and points[f"{run} bound"] > 5
    assert "Traceback" not in page.content()


def test_change_data_sampling_and_methods(page, server):
    open_app(page, server)
    first = faceoff_text(page)
    before = select(page, ".cdlab-preset", "dense d≫n, small λ (primal wins)")
    wait_done(page, before)
    second = faceoff_text(page)
    assert "n = 40, d = 2,000" in second and second != first
    assert re.search(r"Predicted winner:\*?\*?\s*primal_cd", second.replace("\n", " "))
    # the dual method with uniform sampling only, and SDCA added
    before = select(page, ".cdlab-sampling-dual_cd", "uniform")
    wait_done(page, before)
    before = job(page)
    page.locator(".cdlab-method-sdca input[type=checkbox]").first.check()
    wait_done(page, before)
    want = {"primal_cd (uniform)", "primal_cd (importance)", "dual_cd (uniform)", "sdca (uniform)",
            "sdca (importance)"}
    assert eventually(lambda: set(curve_points(page)) >= want and "dual_cd (importance)" not in curve_points(page)), \
        curve_points(page)
    table = text(page, ".cdlab-results")
    assert "sdca (uniform)" in table
    # another data source: a registry dataset
    points_before = curve_points(page)
    before = select(page, ".cdlab-source", "heart_scale")
    wait_done(page, before)
    assert "n = 270, d = 13" in faceoff_text(page)
    # the status line is set before the plot's last redraw: wait for the redrawn curves
    assert eventually(lambda: (lambda now: now != points_before and now and all(v > 1 for v in now.values()))(
        curve_points(page))), (points_before, curve_points(page))


def test_results_download_as_csv(page, server):
    open_app(page, server)
    with page.expect_download(timeout=LOAD) as info:
        page.locator(".cdlab-results-download").first.click()
    download = info.value
    assert download.suggested_filename == "cdlab_faceoff_results.csv"
    lines = Path(download.path()).read_text().splitlines()
    header = [line for line in lines if line.startswith("#")]
    body = [line for line in lines if not line.startswith("#")]
    assert header[0].startswith("# data = synthetic; n = 400, d = 40, nnz = 16000")
    assert "loss = logistic; lambda = 0.0025 (1/n)" in header[1] and "seeds = 0, 1, 2" in header[2]
    assert header[3].startswith("# versions: cdlab ") and header[-1].startswith("# target gap = 1e-05")
    assert body[0].split(",")[:5] == ["run", "method", "sampling", "status", "passes to target"]
    runs = {line.split(",")[0] for line in body[1:]}
    assert runs == {"primal_cd (uniform)", "primal_cd (importance)", "dual_cd (uniform)", "dual_cd (importance)"}


def test_upload_a_file_and_a_broken_one(page, server, tmp_path):
    open_app(page, server)
    good = tmp_path / "mine.svm"
    lines = [f"{1 if i % 3 else -1} 1:{(i % 7) / 7:.3f} {2 + i % 5}:1 9:{(i % 4) / 4 + 0.1:.2f}" for i in range(60)]
    good.write_text("\n".join(lines) + "\n")
    before = job(page)
    page.locator(".cdlab-upload input[type=file]").first.set_input_files(str(good))
    page.wait_for_selector("text=Loaded mine.svm", timeout=LOAD)
    wait_done(page, before)
    assert "n = 60, d = 9" in faceoff_text(page)
    bad = tmp_path / "broken.svm"
    bad.write_text("1 1:0.5 2:oops\n")
    page.locator(".cdlab-upload input[type=file]").first.set_input_files(str(bad))
    page.wait_for_selector("text=Could not read broken.svm", timeout=LOAD)
    msg = text(page, ".cdlab-upload-message")
    assert "line 1" in msg
    # the session goes on, on the good data
    before = job(page)
    page.locator(".cdlab-run button").first.click()
    wait_done(page, before)
    assert "n = 60, d = 9" in faceoff_text(page)
    # over the stated limit: refused in the browser, with a message (a 30 MB file sent whole used to
    # close the websocket: a dead page and no message); nothing reaches the server
    limit = datasource.UPLOAD_LIMIT_MB
    page.wait_for_selector(f"text=at most {limit} MB", timeout=10_000)  # the limit is stated
    huge = {"name": "huge.svm", "mimeType": "application/octet-stream", "buffer": b"1 1:1\n" * (2 * 10**6)}  # 12 MB
    page.locator(".cdlab-upload input[type=file]").first.set_input_files(huge)
    page.wait_for_selector("text=File is too large", timeout=LOAD)
    assert f"Maximum file size is {limit} MB" in text(page, ".cdlab-upload")
    assert "huge.svm" not in text(page, ".cdlab-upload-message")
    before = job(page)
    page.locator(".cdlab-run button").first.click()
    wait_done(page, before)
    assert "n = 60, d = 9" in faceoff_text(page)


def test_compressed_bomb_is_refused_by_the_server(page, server, tmp_path):
    """A 100 kB .gz holding 100 MB of text (17 M nonzeros) passes the browser's 10 MB limit; the server
    counts its decompressed bytes and nonzeros as the chunks arrive and drops it, its memory staying
    within 150 MB of what it was (parsed, such a file took gigabytes)."""
    import gzip

    import psutil

    open_app(page, server)
    wait_done(page)
    bomb = tmp_path / "bomb.svm.gz"
    bomb.write_bytes(gzip.compress(b"1 1:1\n" * (100 * 10**6 // 6), compresslevel=9))
    server_process = psutil.Process(server.proc.pid)
    rss_before = server_process.memory_info().rss
    page.locator(".cdlab-upload input[type=file]").first.set_input_files(str(bomb))
    page.wait_for_selector("text=Not loaded: bomb.svm.gz holds over 2,000,000 nonzeros", timeout=LOAD)
    assert server_process.memory_info().rss - rss_before < 150 * 2**20
    assert "bomb" not in faceoff_text(page)


def test_banner_names_the_problem_and_its_button_fixes_it(page, server):
    """hinge with primal_cd and dual_cd: a banner at the top says why, methods that cannot take hinge
    are greyed out unless chosen, and one click on the offered fix makes every run go."""
    open_app(page, server)
    before = select(page, ".cdlab-loss", "hinge")
    wait_done(page, before)
    banner = text(page, ".cdlab-banner")
    assert "primal_cd and dual_cd do not take the hinge loss" in banner and "loss=" not in banner
    assert page.locator(".cdlab-method-gd input").first.is_disabled()  # not chosen, cannot take hinge
    assert not page.locator(".cdlab-method-primal_cd input").first.is_disabled()  # chosen: can be unticked
    assert not page.locator(".cdlab-method-sdca input").first.is_disabled()
    before = job(page)
    page.locator(".cdlab-fix button", has_text="Use the smoothed hinge loss").first.click()
    wait_done(page, before)
    assert page.locator(".cdlab-loss select").first.input_value() == "smoothed_hinge"
    assert eventually(lambda: not page.locator(".cdlab-banner").first.is_visible())
    status = text(page, ".cdlab-status")
    runs = [line for line in status.splitlines() if line.startswith(("primal_cd (", "dual_cd ("))]
    assert len(runs) == 4 and all(re.match(r"\S+ \(\w+\): (converged|max_passes)", line) for line in runs), status


def test_layout_holds_at_1024_px(browser, server):
    """At 1024 px the cards go below the plot instead of over it."""
    pg = new_page(browser, viewport={"width": 1024, "height": 900})
    try:
        open_app(pg, server)
        plot = pg.locator(".cdlab-plots").first.bounding_box()
        card = pg.locator(".cdlab-cards").first.bounding_box()
        assert plot["width"] >= 500
        overlap_x = min(plot["x"] + plot["width"], card["x"] + card["width"]) - max(plot["x"], card["x"])
        overlap_y = min(plot["y"] + plot["height"], card["y"] + card["height"]) - max(plot["y"], card["y"])
        assert overlap_x <= 0 or overlap_y <= 0, (plot, card)
        assert pg.js_errors == []
    finally:
        pg.close()


CUT_TITLES = r"""() => {
    // the results table's column titles whose text is wider than their box (shown cut, with an ellipsis);
    // the filler column after the last has no title
    const out = [];
    const walk = (root) => {
        for (const el of root.querySelectorAll('*')) {
            if (el.classList.contains('tabulator-col-title') && el.textContent.trim() && el.scrollWidth > el.clientWidth)
                out.push(el.textContent);
            if (el.shadowRoot) walk(el.shadowRoot);
        }
    };
    walk(document);
    return out;
}"""


def test_results_titles_are_whole_at_every_width(browser, server):
    """No column title of the results table is cut ("passes→ε" was "passe…" at 1400 px)."""
    for width in (1024, 1400, 1920):
        pg = new_page(browser, viewport={"width": width, "height": 1000})
        try:
            open_app(pg, server)
            assert "passes→ε" in text(pg, ".cdlab-results")
            assert pg.evaluate(CUT_TITLES) == [], width
        finally:
            pg.close()


def test_incompatible_choice_is_explained(page, server):
    open_app(page, server)
    before = select(page, ".cdlab-loss", "hinge")
    wait_done(page, before)
    status = text(page, ".cdlab-status")
    # the banner explains the refusal and its way out; the status line only names the runs, no Python
    assert "primal_cd (uniform): not run (see the message at the top)" in status and "loss=" not in status
    assert "do not take the hinge loss" in text(page, ".cdlab-banner")
    assert "Traceback" not in page.content()
    assert "not smooth" in faceoff_text(page)


def test_cancel_a_long_run(page, server):
    # ill-conditioned (λ = 1e-9, κ ≫ n) with no reachable tolerance: runs for minutes unless cancelled
    query = ("?n_samples=20000&n_features=100&max_passes=2000.0&log10_tol=-13.0&max_time=600.0"
             "&lam_rule=manual&log10_lam=-9.0"
             "&methods=%5B%22sdca%22%5D&samplings=%7B%22sdca%22%3A+%22uniform%22%7D")
    page.goto(server.url + query, timeout=LOAD)
    page.wait_for_selector(".cdlab-faceoff", timeout=LOAD)
    deadline = time.monotonic() + RUN / 1000
    while "Status: running sdca" not in text(page, ".cdlab-status"):
        assert time.monotonic() < deadline, text(page, ".cdlab-status")
        page.wait_for_timeout(250)
    # partial curves stream while the run goes on
    first = eventually(lambda: curve_points(page).get("sdca (uniform)", 0) >= 2, timeout=60)
    assert first
    n1 = curve_points(page)["sdca (uniform)"]
    assert eventually(lambda: curve_points(page)["sdca (uniform)"] > n1, timeout=60)
    assert "Status: running sdca" in text(page, ".cdlab-status")
    page.locator(".cdlab-cancel button").first.click()
    wait_done(page, phase="cancelled", timeout=60_000)
    assert "sdca (uniform): cancelled" in text(page, ".cdlab-status")


def test_cancel_at_the_page_size_limit(page, server):
    """Cancel during a run on the largest data the page generates: the job ends as cancelled, not finished
    (at 5.75 M nonzeros a Cancel click was not delivered for 24 s and the job ran to its end)."""
    n, d = datasource.MAX_NNZ // 100, 100  # dense: exactly the limit
    # ill-conditioned (λ = 1e-9) with no reachable tolerance: minutes of work unless cancelled
    # (the page's largest budget on five seeds: a pass over 10⁷ nonzeros takes about 0.1 s here)
    query = (f"?n_samples={n}&n_features={d}&density=1.0&max_passes=2000.0&log10_tol=-13.0&max_time=600.0"
             "&lam_rule=manual&log10_lam=-9.0&methods=%5B%22dual_cd%22%5D&samplings=%7B%22dual_cd%22%3A+%22uniform%22%7D&seeds=5")
    page.goto(server.url + query, timeout=LOAD)
    page.wait_for_selector(".cdlab-faceoff", timeout=LOAD)
    assert f"n = {n:,}, d = {d}" in faceoff_text(page) or eventually(
        lambda: f"n = {n:,}, d = {d}" in faceoff_text(page), timeout=RUN / 1000), faceoff_text(page)
    deadline = time.monotonic() + RUN / 1000
    while "Status: running dual_cd" not in text(page, ".cdlab-status"):
        assert time.monotonic() < deadline, text(page, ".cdlab-status")
        page.wait_for_timeout(250)
    assert eventually(lambda: curve_points(page).get("dual_cd (uniform)", 0) >= 2, timeout=120)
    # (the link's settings may start a second job at load: the button is briefly disabled between jobs)
    page.locator(".cdlab-cancel button").first.click(timeout=RUN)
    wait_done(page, phase="cancelled", timeout=120_000)
    status = text(page, ".cdlab-status")
    assert "dual_cd (uniform): cancelled" in status and "finished" not in status, status


def curve_colours(page):
    """{run label: colour} of the visible solid curves of the convergence plot."""
    return {name: colour for colour, name in page.evaluate("""() => {
        const out = [];
        for (const doc of Bokeh.documents)
          for (const m of doc._all_models.values()) {
            if (!(m.glyph && m.glyph.type === 'Line' && m.visible && m.name && m.data_source)) continue;
            const dash = m.glyph.line_dash.value ?? m.glyph.line_dash;
            if (dash && dash.length) continue;
            if (m.data_source.data.y && m.data_source.data.y.length > 1)
              out.push([String(m.glyph.line_color.value ?? m.glyph.line_color), m.name]);
          }
        return out;
    }""") if "(" in name}


def test_colours_stable_across_method_changes(page, server):
    """A run keeps its colour when another method is added or one is removed."""
    open_app(page, server)
    runs = ["primal_cd (uniform)", "primal_cd (importance)", "dual_cd (uniform)", "dual_cd (importance)"]
    assert eventually(lambda: set(runs) <= set(curve_colours(page))), curve_colours(page)
    first = curve_colours(page)
    assert len({first[r] for r in runs}) == len(runs)
    before = job(page)
    page.locator(".cdlab-method-sdca input[type=checkbox]").first.check()
    wait_done(page, before)
    assert eventually(lambda: "sdca (uniform)" in curve_colours(page)), curve_colours(page)
    added = curve_colours(page)
    assert {r: added[r] for r in runs} == {r: first[r] for r in runs}
    assert added["sdca (uniform)"] not in {first[r] for r in runs}
    before = job(page)
    page.locator(".cdlab-method-primal_cd input[type=checkbox]").first.uncheck()
    wait_done(page, before)
    assert eventually(lambda: not any(k.startswith("primal_cd") for k in curve_colours(page))), curve_colours(page)
    removed = curve_colours(page)
    for r in ("dual_cd (uniform)", "dual_cd (importance)", "sdca (uniform)"):
        assert removed[r] == added[r], (r, removed, added)


def test_two_sessions_at_once(browser, server):
    a, b = new_page(browser), new_page(browser)
    try:
        a.goto(server.url, timeout=LOAD)
        b.goto(server.url + "?loss=squared&n_samples=150&n_features=30", timeout=LOAD)
        for p in (a, b):
            p.wait_for_selector(".cdlab-faceoff", timeout=LOAD)
        wait_done(b)
        wait_done(a)
        ja, jb = job(a), job(b)
        before_a = select(a, ".cdlab-preset", "dense n≫d (dual wins)")
        before_b = select(b, ".cdlab-source", "heart_scale")
        wait_done(a, before_a)
        wait_done(b, before_b)
        fa, fb = faceoff_text(a), faceoff_text(b)
        assert "n = 2,000, d = 20" in fa and "loss = logistic" in fa
        assert "n = 270, d = 13" in fb and "loss = squared" in fb
        assert job(a) > ja and job(b) > jb
        assert a.js_errors == [] and b.js_errors == []
    finally:
        a.close()
        b.close()


def test_url_carries_the_scenario(page, server, browser):
    open_app(page, server)
    before = select(page, ".cdlab-preset", "sparse news-like skew")
    wait_done(page, before)
    url = page.url
    assert "n_features=4000" in url and "col_skew=1.5" in url and "preset=sparse" in url
    other = new_page(browser)
    try:
        other.goto(url, timeout=LOAD)
        other.wait_for_selector(".cdlab-faceoff", timeout=LOAD)
        wait_done(other)
        assert faceoff_text(other).split("\n")[0] == faceoff_text(page).split("\n")[0]
        # the link names its scenario, and the scenario's caption is there
        assert other.locator(".cdlab-preset select").first.input_value() == "sparse news-like skew"
        assert "Importance sampling" in text(other, ".cdlab-preset-caption")
    finally:
        other.close()


def figure_ids(page):
    """The ids of the Bokeh figures in the page (a rebuilt plot is a new figure with a new id; the
    convergence plot is a bokeh.models.Plot, the HoloViews plots are figures)."""
    return sorted(page.evaluate("""() => {
        const out = [];
        for (const doc of Bokeh.documents)
          for (const m of doc._all_models.values()) if (m.type === 'Figure' || m.type === 'Plot') out.push(m.id);
        return out;
    }"""))


def test_a_preset_link_starts_one_job_and_logs_no_error(browser, server):
    """A shared link is applied once, before the first job: the browser sending the link back when it
    connects starts no second job, and a link that changes one of its preset's values is custom."""
    import urllib.parse
    name = "sparse news-like skew"
    for query, preset in ((f"?preset={urllib.parse.quote(name)}", name),
                          (f"?preset={urllib.parse.quote(name)}&max_passes=12.0", "custom")):
        pg = new_page(browser, viewport={"width": 1400, "height": 1000})
        try:
            pg.goto(server.url + query, timeout=LOAD)
            pg.wait_for_selector(".cdlab-faceoff", timeout=LOAD)
            wait_done(pg)
            pg.wait_for_timeout(3000)  # a second job would have started by now
            assert job(pg) == 1, text(pg, ".cdlab-status")
            assert "n = 2,000, d = 4,000" in faceoff_text(pg)
            assert pg.locator(".cdlab-preset select").first.input_value() == preset
            # the page writes its settings back into the URL (after the first job, under load later)
            url_preset = lambda: urllib.parse.parse_qs(urllib.parse.urlsplit(pg.url).query).get("preset")
            assert eventually(lambda: url_preset() == [preset]), pg.url
            assert pg.js_errors == [] and pg.console_errors == []
        finally:
            pg.close()


def test_a_cached_interaction_rebuilds_no_plot(page, server):
    """Runs answered from the cache change the curves in place: every figure of the page (convergence,
    Figure 1, the data's histograms) is the same Bokeh figure before and after."""
    open_app(page, server)
    # convergence, Figure 1, two histograms and the sampling probabilities (drawn after the status line)
    assert eventually(lambda: len(figure_ids(page)) == 5), figure_ids(page)
    figures = figure_ids(page)
    for sampling, shown in (("uniform", False), ("uniform + importance", True)):
        before = select(page, ".cdlab-sampling-dual_cd", sampling)
        wait_done(page, before)
        assert eventually(lambda: ("dual_cd (importance)" in curve_points(page)) == shown), curve_points(page)
        assert "from cache" in text(page, ".cdlab-status"), text(page, ".cdlab-status")
        assert figure_ids(page) == figures
    assert page.console_errors == []


def test_a_broken_link_says_so(page, server):
    page.goto(server.url + "?methods=%5B%22no_such_method%22%5D&n_samples=300", timeout=LOAD)
    page.wait_for_selector(".cdlab-faceoff", timeout=LOAD)
    wait_done(page)
    notice = text(page, ".cdlab-notice")
    assert "could not be applied" in notice and "methods" in notice
    assert "n = 400, d = 40" in faceoff_text(page)  # the defaults, and the session goes on


CONTENT_HEIGHT = """() => Math.max(...[document.body, ...document.querySelectorAll('#main, #sidebar, #content')]
    .map(e => e.scrollHeight))"""  # the template scrolls inside its own containers

TABLE_OVERFLOW = """() => {
    const found = [];
    const find = (root) => { for (const el of root.querySelectorAll('*')) {
        if (el.classList && el.classList.contains('tabulator-tableholder')) found.push(el.scrollWidth - el.clientWidth);
        if (el.shadowRoot) find(el.shadowRoot); } };
    find(document);
    return found;
}"""


def convergence_x_span(page):
    """(x range end, largest x of a visible curve) of the convergence plot."""
    return page.evaluate("""() => {
        for (const doc of Bokeh.documents)
          for (const m of doc._all_models.values())
            if ((m.type === 'Figure' || m.type === 'Plot') && m.title && /^(Convergence|Median of)/.test(String(m.title.text))) {
              let last = 0;
              for (const r of m.renderers)
                if (r.visible && r.data_source && r.data_source.data.x)
                  for (const x of r.data_source.data.x) if (Number.isFinite(x)) last = Math.max(last, x);
              return [m.x_range.end, last];
            }
        return [0, 1];
    }""")


def full_page_screenshot(page, path, width=1400):
    """The whole page at ``width`` px: the viewport grows to the content, then shrinks back."""
    page.set_viewport_size({"width": width, "height": page.evaluate(CONTENT_HEIGHT) + 40})
    page.wait_for_timeout(2000)  # responsive plots re-lay out, canvases paint
    page.set_viewport_size({"width": width, "height": page.evaluate(CONTENT_HEIGHT) + 40})
    page.wait_for_timeout(1500)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": width, "height": 1000})


def test_preset_screenshots(page, server):
    from cdlab.ui.presets import PRESETS
    page.set_viewport_size({"width": 1400, "height": 1000})
    open_app(page, server)
    for name, values in PRESETS.items():
        before = select(page, ".cdlab-preset", name)
        wait_done(page, before)
        n, d = values["n_samples"], values["n_features"]
        assert eventually(lambda: {f"d = {d:,}", f"{n:,} rows"} <= {
            part for t in plot_titles(page) for part in (f"d = {d:,}", f"{n:,} rows") if part in t}), \
            plot_titles(page)
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        full_page_screenshot(page, SHOTS / f"preset-{slug}.png")
        assert "Error:" not in text(page, ".cdlab-status")
        assert eventually(lambda: sum(curve_points(page).values()) > 0)
        # every run has its curve and a legend entry; the legend says what the dashed lines are
        runs = [label for label in legend_labels(page) if "(" in label]
        assert runs and set(runs) <= set(curve_points(page)), (runs, curve_points(page))
        assert "each run's bound" in legend_labels(page)
        for css in (".cdlab-faceoff", ".cdlab-results", ".cdlab-theory"):
            assert not re.search(r"\bnan\b", text(page, css), re.I), (css, text(page, css))
        # the x axis reaches the end of the longest curve (it kept the previous scenario's range)
        assert eventually(lambda: convergence_x_span(page)[0] >= convergence_x_span(page)[1] * 0.999), \
            convergence_x_span(page)
        # the results table fits its card (its last columns were cut off at 1400 px)
        assert all(over <= 1 for over in page.evaluate(TABLE_OVERFLOW)), page.evaluate(TABLE_OVERFLOW)


def test_cold_numba_cache_says_compiling_and_times_no_compilation(browser, tmp_path):
    srv = Server(env={"NUMBA_CACHE_DIR": str(tmp_path / "numba")})
    pg = new_page(browser)
    try:
        pg.goto(srv.url, timeout=LOAD)
        pg.wait_for_selector("text=Compiling numba kernels", timeout=LOAD)
        # no run is timed while the kernels compile (a compiling thread holds the GIL) ... The page's first job
        # waits for numba's compiler lock too, for the kernels of its analysis, behind whole kernels the warm-up
        # compiles (SDCA's took 130 s on a cold cache): the compile's timeout
        pg.wait_for_selector("text=waiting for numba's kernels to compile", timeout=600_000)
        assert "Status: running" not in text(pg, ".cdlab-status")
        pg.wait_for_selector(".cdlab-compiling", state="hidden", timeout=600_000)
        wait_done(pg, timeout=600_000)
        # ... and a run that still compiled was re-timed warm, never shown with compile seconds
        assert "numba compilation" not in text(pg, ".cdlab-status")
        assert srv.errors() == [] and pg.js_errors == []
    finally:
        pg.close()
        srv.close()


def axis_labels(page):
    return page.evaluate("""() => {
        const out = [];
        for (const doc of Bokeh.documents)
          for (const m of doc._all_models.values())
            if (m.type && m.type.endsWith('Axis') && m.axis_label && m.visible) out.push(String(m.axis_label));
        return out;
    }""")


def test_axes_switch_in_the_page(page, server):
    """P − P* (the job computes P* first) and seconds: the curves are redrawn, labelled, with bounds."""
    open_app(page, server)
    before = job(page)
    page.locator(".cdlab-yaxis button", has_text="P − P*").first.click()
    wait_done(page, before)
    assert eventually(lambda: "P(w) − P*" in axis_labels(page)), axis_labels(page)
    runs = ["primal_cd (uniform)", "primal_cd (importance)", "dual_cd (uniform)", "dual_cd (importance)"]
    assert eventually(lambda: all(curve_points(page).get(r, 0) > 5 and curve_points(page).get(f"{r} bound", 0) > 5
                                  for r in runs)), curve_points(page)
    page.locator(".cdlab-xaxis button", has_text="seconds").first.click()
    # seconds are on a log axis by default: Bokeh cannot change an axis type in place, so the switch
    # builds a new plot (seconds, not the fraction of a second of a frame update, on a loaded machine)
    assert eventually(lambda: any(label.startswith("solver seconds") and label.endswith("log scale")
                                  for label in axis_labels(page)), timeout=90), axis_labels(page)
    assert eventually(lambda: all(curve_points(page).get(r, 0) > 5 for r in runs)), curve_points(page)


def seed_bands(page):
    """Colours of the visible filled seed bands (Patch glyphs) of the convergence plot."""
    return page.evaluate("""() => {
        const out = [];
        for (const doc of Bokeh.documents)
          for (const m of doc._all_models.values())
            if (m.glyph && m.glyph.type === 'Patch' && m.visible && m.data_source && m.data_source.data.y
                && m.data_source.data.y.length > 2)
              out.push(String(m.glyph.fill_color.value ?? m.glyph.fill_color));
        return out;
    }""")


def test_seed_spread_band_and_a_tie_verdict(page, server):
    """The default scenario (11.095 vs 11.108 passes on one seed was called a win): on three seeds each
    curve has its min–max band and the card says tie; one seed draws no band and names a lead only."""
    open_app(page, server)
    card = faceoff_text(page)
    assert "a tie within seed-to-seed spread" in card and "wins" not in card, card
    runs = ["primal_cd (uniform)", "primal_cd (importance)", "dual_cd (uniform)", "dual_cd (importance)"]
    assert eventually(lambda: all(curve_points(page).get(r, 0) > 5 for r in runs)), curve_points(page)
    assert eventually(lambda: len(set(seed_bands(page))) == len(runs)), seed_bands(page)
    assert any("Median of 3 seeds" in t for t in plot_titles(page)), plot_titles(page)
    assert re.search(r"\d–\d", text(page, ".cdlab-results")), text(page, ".cdlab-results")
    before = job(page)
    seeds = page.locator(".cdlab-seeds input").first
    seeds.fill("1")
    seeds.press("Enter")
    wait_done(page, before)
    assert eventually(lambda: "one seed measures no spread" in faceoff_text(page)), faceoff_text(page)
    assert eventually(lambda: not seed_bands(page)), seed_bands(page)
    assert "wins" not in faceoff_text(page)
