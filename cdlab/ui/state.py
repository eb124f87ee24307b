"""The dashboard's one state object (design.md: one ``param.Parameterized``
experiment, thin views that only read it).

An :class:`Experiment` holds every setting as a primitive parameter (so the
whole scenario syncs to the URL) and every output as a parameter the views
watch. Changing a setting restarts the session's background job; outputs are
written only by :meth:`Experiment._apply`, on the session's event loop when
served (``pn.state.execute``) or directly when used headless in tests.
"""
from __future__ import annotations

import json
import math
import threading
import time
import urllib.parse
import warnings
from contextlib import contextmanager, nullcontext
from functools import partial

import panel as pn
import param
from panel.io.state import set_curdoc

from ..data.synthetic import FACEOFF_NORMALIZE
from ..losses import LOSSES
from ..sampling import check_sampling
from ..solvers import METHODS
from ..verdict import split_seeds
from . import datasource, presets
from .doc_batch import batched
from .job import FINAL, Job, Settings
from .long_lived import freeze_once
from .runner import BOTH, PAGE_DEFAULTS, SQUARED_NORM, Budget, Worker, plan, sampling_choices

INPUTS = ["source", "n_samples", "n_features", "density", "row_skew", "col_skew", "value_dist", "normalize",
          "data_seed", "omega", "upload_hash", "loss", "lam_rule", "log10_lam", "l1", "methods", "samplings",
          "batch_sizes", "max_passes", "log10_tol", "seed", "seeds", "max_time", "yaxis"]
# the upload itself cannot travel in a URL; the preset's name does (applied quietly, it only names the scenario)
SYNCED = ["preset"] + INPUTS[:10] + INPUTS[11:] + ["log10_target", "xaxis", "logx"]
# a link's keys under their old names, read as the new ones for one more release (a link made before the
# rename restores its setting)
RENAMED_KEYS = {"normalise": "normalize", "max_seconds": "max_time"}
# a link's sampling names before the rename, read as the new ones for one more release, with a
# FutureWarning: the page's p ∝ ‖·‖² was "weighted", the name of SPDC's Algorithm 2
RENAMED_SAMPLINGS = {"weighted": SQUARED_NORM}
# While a job streams, the session's event loop waits at least LOOP_SHARE times as long as its last update
# took before the next one: a big plot update (hundreds of ms) makes updates rarer instead of leaving
# no time for the user's clicks.
LOOP_SHARE = 2.0


class Experiment(param.Parameterized):
    """Data, problem, methods, budget — and the runs' results."""

    preset = param.Selector(default="custom", objects=["custom", *presets.PRESETS], doc="a scenario")
    # -- data
    source = param.Selector(default=datasource.SYNTHETIC, objects=[datasource.SYNTHETIC])
    n_samples = param.Integer(default=400, bounds=(4, 200_000), doc="n, examples")
    n_features = param.Integer(default=40, bounds=(2, 200_000), doc="d, features")
    density = param.Number(default=1.0, bounds=(1e-4, 1.0))
    row_skew = param.Number(default=0.0, bounds=(0.0, 3.0), doc="power-law skew of row nonzero counts")
    col_skew = param.Number(default=0.0, bounds=(0.0, 3.0), doc="power-law skew of column nonzero counts")
    value_dist = param.Selector(default="gaussian", objects=["gaussian"])
    normalize = param.Selector(default=FACEOFF_NORMALIZE, objects=[FACEOFF_NORMALIZE])
    data_seed = param.Integer(default=0, bounds=(0, None))
    omega = param.Integer(default=0, bounds=(0, None), doc="nonzeros ω of a binary extreme (0: automatic)")
    upload_hash = param.String(default="")
    # -- problem
    loss = param.Selector(default="logistic", objects=list(LOSSES))
    lam_rule = param.Selector(default="1/n", objects=["1/n", "manual"])
    log10_lam = param.Number(default=-3.0, bounds=(-10.0, 1.0))
    l1 = param.Number(default=0.0, bounds=(0.0, None))
    # -- methods
    methods = param.ListSelector(default=[], objects=[], check_on_set=True)
    samplings = param.Dict(default={}, doc="method -> sampling name")
    batch_sizes = param.Dict(default={}, doc="method -> mini-batch size")
    # -- budget and display
    max_passes = param.Number(default=PAGE_DEFAULTS.max_passes, bounds=(0.5, 2000.0))
    log10_tol = param.Number(default=math.log10(PAGE_DEFAULTS.tol), bounds=(-13.0, -1.0),
                             doc="stop a run when gap ≤ 10^this")
    log10_target = param.Number(default=-5.0, bounds=(-13.0, -1.0), doc="the gap the results table times")
    seed = param.Integer(default=0, bounds=(0, None), doc="the first seed of each run")
    seeds = param.Integer(default=3, bounds=(1, 10), doc="seeds per run: the verdict needs their spread")
    max_time = param.Number(default=PAGE_DEFAULTS.max_time, bounds=(0.5, 600.0), doc="time budget per run")
    xaxis = param.Selector(default="passes", objects=["passes", "steps", "seconds"])
    logx = param.Boolean(default=True, doc="log scale on the seconds axis (fast and slow runs both readable)")
    yaxis = param.Selector(default="gap", objects={"duality gap": "gap", "P − P*": "subopt"})
    auto_run = param.Boolean(default=True, doc="run as soon as a setting changes")
    # -- outputs (written by _apply only)
    analysis = param.Parameter(default=None, doc="analysis.Analysis of the current data")
    traces = param.Dict(default={}, doc="run label -> trace DataFrame (partial while running)")
    run_status = param.Dict(default={})
    run_message = param.Dict(default={})
    cached = param.List(default=[])
    progress = param.Number(default=0.0, bounds=(0.0, 1.0))
    running = param.Boolean(default=False)
    phase = param.String(default="")
    jobs = param.Integer(default=0, doc="jobs started in this session (the status line shows it)")
    error = param.String(default="")
    upload_message = param.String(default="")
    fetching = param.Boolean(default=False, doc="a dataset is being downloaded for this session")
    fetch_progress = param.Number(default=0.0, bounds=(0.0, 1.0))
    fetch_message = param.String(default="")

    def __init__(self, **params):
        self._ready = False  # no job while the constructor sets things up
        self._applying_preset = False
        self._worker = Worker()
        # held while a job's update is checked against the current job and applied, and while jobs switch
        self._publishing = threading.RLock()
        self._settings = None
        super().__init__()
        self.param.source.objects = datasource.source_options()
        self.param.preset.objects = ["custom", *presets.available()]
        self.param.methods.objects = sorted(METHODS)
        self.param.value_dist.objects = list(presets.value_kinds())
        self.param.normalize.objects = presets.normalizations()
        self._set_default_methods()
        if params.get("preset", "custom") != "custom":
            self.param.update(**presets.values_of(params["preset"]))
        self.param.update(**params)
        self._ready = True

    def _set_default_methods(self):
        chosen = [m for m in ("primal_cd", "dual_cd") if m in METHODS] or ["sdca"]
        self.param.update(methods=chosen, samplings={m: self.default_sampling(m) for m in chosen})

    @staticmethod
    def default_sampling(method):
        choices = sampling_choices(method)
        return BOTH if BOTH in choices else choices[0]

    # ------------------------------------------------------------ settings
    @property
    def target(self) -> float:
        return 10.0 ** self.log10_target

    @property
    def budget(self) -> Budget:
        return Budget(max_passes=float(self.max_passes), tol=10.0 ** self.log10_tol, seed=int(self.seed),
                      max_time=float(self.max_time), seeds=int(self.seeds))

    def data_key(self):
        return datasource.data_key(self.source, n_samples=self.n_samples, n_features=self.n_features,
                                   density=self.density, row_skew=self.row_skew, col_skew=self.col_skew,
                                   value_dist=self.value_dist, normalize=self.normalize, data_seed=self.data_seed,
                                   omega=self.omega, upload_hash=self.upload_hash)

    def runs(self):
        return plan(self.methods, self.samplings, self.batch_sizes)

    def settings(self) -> Settings:
        return Settings(data_key=self.data_key(), loss=self.loss, lam_rule=self.lam_rule,
                        log10_lam=float(self.log10_lam), l1=float(self.l1), budget=self.budget,
                        need_p_star=self.yaxis == "subopt")

    # ------------------------------------------------------------- actions
    @contextmanager
    def quiet(self):
        """Change settings without starting a job (e.g. while a URL is applied)."""
        ready, self._ready = self._ready, False
        try:
            yield self
        finally:
            self._ready = ready

    def hold(self):
        """Start no job until :meth:`release` (a served page holds from its link's arrival to its first
        job: the browser sends the link back once more when it connects)."""
        self._ready = False

    def release(self):
        self._ready = True

    @param.depends("preset", watch=True)
    def _apply_preset(self):
        if self._ready and self.preset != "custom":
            try:
                values = presets.values_of(self.preset)
            except ValueError as exc:
                self.error = str(exc)
                return
            self._applying_preset = True
            try:
                self.param.update(**values)
            finally:
                self._applying_preset = False

    def complete_preset(self, given):
        """After a link is applied: the settings the link did not give (``given``: its parameter names) take
        the named preset's values; a link that changes one of the preset's values is a custom scenario."""
        if self.preset == "custom":
            return
        try:
            values = presets.values_of(self.preset)
        except ValueError as exc:
            self.param.update(preset="custom", error=str(exc))
            return
        self.param.update(**{k: v for k, v in values.items() if k not in given})
        if any(getattr(self, k) != v for k, v in values.items()):
            self.preset = "custom"

    @param.depends(*INPUTS, watch=True)
    def _inputs_changed(self):
        if not self._ready:
            return
        if not self._applying_preset and self.preset != "custom":
            self.preset = "custom"  # the page no longer shows the named scenario
        self.start(solve=self.auto_run)

    def start(self, solve=True):
        """Start a job for the current settings (cancels the one running)."""
        try:
            settings = self.settings()
        except ValueError as exc:
            with self._publishing:
                self._worker.abandon()  # the job running belongs to settings the page no longer shows
                # no face-off, curves or table of the previous data under the refused settings
                self.param.update(error=str(exc), running=False, phase="error", analysis=None, traces={},
                                  run_status={}, run_message={}, cached=[], progress=0.0)
            return None
        runs = self.runs()
        self._settings = settings
        job = Job(settings, runs, solve)
        with self._publishing, self._one_message():
            self.param.update(error="", running=True, phase="starting", progress=0.0, jobs=self.jobs + 1)
            return self._worker.start(job, self._make_publisher())

    def run(self, timeout=None):
        """Start and wait (headless use); returns True if the job finished."""
        self.start(solve=True)
        return self.wait(timeout)

    def wait(self, timeout=None):
        return self._worker.join(timeout)

    def cancel(self):
        self._worker.cancel()

    def set_sampling(self, method, sampling):
        check_sampling(sampling, sampling_choices(method), f"method {method!r} on this page")
        self.samplings = {**self.samplings, method: sampling}

    def set_batch_size(self, method, batch_size):
        self.batch_sizes = {**self.batch_sizes, method: int(batch_size)}

    def upload(self, content: bytes, filename: str):
        """Use an uploaded LIBSVM file; a bad file leaves a message and the data unchanged."""
        try:
            digest = datasource.parse_upload(content, filename)
        except ValueError as exc:
            self.refuse_upload(f"could not read {filename}: {exc}")
            return False
        note = datasource.upload_note(digest)
        self.upload_message = f"✅ Loaded {filename}" + (f" ({note})." if note else ".")
        self.param.update(source=datasource.UPLOAD, upload_hash=digest)
        return True

    def refuse_upload(self, reason: str):
        """An upload that is not used: the reason, and the data unchanged."""
        self.upload_message = f"❌ Not loaded: {reason}"

    def fetch_data(self):
        """Download the selected fetchable dataset on a background thread (progress in fetch_progress and
        fetch_message), then run; a failure lands in ``error``. Returns the thread (None: nothing to fetch)."""
        name = self.source
        if self.fetching or not datasource.needs_fetch(name):
            return None
        post = self.on_loop(self.param.update)
        self.param.update(fetching=True, fetch_progress=0.0, error="",
                          fetch_message=f"Fetching {name} (≈ {datasource.DATASETS[name].download_mb:g} MB) …")
        last = [0.0]

        def progress(done, total):
            now = time.monotonic()
            if total and now - last[0] > 0.25:  # a few updates a second reach the browser, not one per chunk
                last[0] = now
                post(fetch_progress=min(1.0, done / total),
                     fetch_message=f"Fetching {name}: {done / 1e6:.1f} of {total / 1e6:.1f} MB")

        def work():
            try:
                datasource.fetch(name, progress=progress)
            except (ValueError, OSError) as exc:
                post(fetching=False, fetch_message="", error=str(exc))
                return
            post(fetching=False, fetch_progress=1.0, fetch_message=f"{name} is on this server now.")
            self.on_loop(self._fetched)(name)

        thread = threading.Thread(target=work, name=f"cdlab-fetch-{name}", daemon=True)
        thread.start()
        return thread

    def _fetched(self, name):
        self.param.source.objects = datasource.source_options()
        if self.source == name:
            self.start(solve=self.auto_run)

    # ------------------------------------------------------------- outputs
    def on_loop(self, function):
        """``function`` to call from another thread: scheduled on the session's event loop when served,
        called directly when headless (tests)."""
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:
            return function

        def call(*args, **kwargs):
            if doc.session_context is not None:  # else the tab was closed
                with set_curdoc(doc):
                    pn.state.execute(partial(function, *args, **kwargs), schedule=True)
        return call

    @staticmethod
    def _one_message():
        """A block (on the session's event loop) whose changes reach the browser as one message; headless,
        there is nothing to batch."""
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:
            return nullcontext()
        return batched(doc)

    def _make_publisher(self):
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:
            return self._apply

        lock = threading.Lock()
        # busy: an update waits or runs; running: it has taken its snapshot; dirty: asked for while running;
        # timer: the throttle's timer while an update waits on it
        flags = dict(busy=False, running=False, dirty=False, next=0.0, timer=None)

        def apply(live):
            t0 = time.monotonic()
            with lock:
                flags["running"] = True
            try:
                # the update's changes reach the browser as one message, and Bokeh walks the page's models
                # at most once after it (not once per pane or plot that changed them)
                with batched(doc):
                    self._apply(live)
                if live.done:  # what a job loads on first use (HoloViews, SymPy, the kernels) is loaded now
                    freeze_once("a job has finished")
            finally:
                now = time.monotonic()
                with lock:
                    # the loop spends at most 1/(1 + LOOP_SHARE) of its time on updates: clicks (Cancel) go through
                    flags["next"] = now + LOOP_SHARE * (now - t0)
                    flags["busy"] = flags["running"] = False
                    again = flags["dirty"]
                    flags["dirty"] = False
                if again:
                    publish(live)

        def publish(live):
            if doc.session_context is None:
                return  # the tab was closed (its job is being cancelled)
            with lock:
                # the job's last update does not wait on the throttle (none follows it, so it leaves the
                # loop free for clicks anyway): it replaces an update still waiting on its timer
                if live.done and flags["timer"] is not None and not flags["running"]:
                    flags["timer"].cancel()
                    flags["timer"], flags["busy"] = None, False
                if flags["busy"]:  # a waiting update applies the newest snapshot; a running one follows up
                    flags["dirty"] = flags["dirty"] or flags["running"]
                    return
                flags["busy"] = True
                wait = flags["next"] - time.monotonic()
                if wait > 0 and not live.done:  # too soon after the last update: later, with what is newest then
                    flags["timer"] = threading.Timer(wait, fire, (live,))
                    flags["timer"].daemon = True
                    flags["timer"].start()
                    return
            schedule(live)

        def fire(live):
            with lock:
                if flags["timer"] is None:
                    return  # replaced by the job's last update
                flags["timer"] = None
            schedule(live)

        schedule = self.on_loop(apply)  # the worker thread may not touch Bokeh models: hand over to the loop
        return publish

    def _apply(self, live):
        with self._publishing:  # headless, a worker thread applies: no job switch between check and update
            if live is not self._worker.live:
                return  # a superseded job
            self._apply_current(live)

    def _apply_current(self, live):
        phase, analysis, traces, status, message, done, error, cached = live.snapshot()
        updates = dict(running=not done, phase=phase, error=error,
                       progress=self._progress(live.runs, traces, status, done))
        # the last job's runs stay shown until the new job has analysed its data (no empty frame between)
        shown = analysis is not None or error or done
        if shown:
            updates.update(run_status=status, run_message=message, cached=sorted(cached))
        # only what changed is set: every pane that reads a parameter re-renders when it is set
        updates = {k: v for k, v in updates.items() if not _same(getattr(self, k), v)}
        if shown and not same_traces(self.traces, traces):
            updates["traces"] = traces
        if analysis is not self.analysis and (analysis is not None or error):
            updates["analysis"] = analysis  # None after an error: no stale face-off for other data
        self.param.update(**updates)
        if analysis is not None and self.lam_rule == "1/n":
            with self.quiet():  # the λ slider shows the λ in use (no new job: the problem is the same)
                self.log10_lam = round(math.log10(analysis.problem.lam), 2)

    def _progress(self, runs, traces, status, done):
        if done:
            return 1.0
        if not runs:
            return 0.0
        budget = self._settings.budget
        total = 0.0
        for run in runs:
            st = status.get(run.label)
            if st in FINAL or st in ("refused", "cancelled"):
                total += 1.0
                continue
            for t in split_seeds(traces.get(run.label)):  # each seed is 1/seeds of the run
                frac = t.passes.iloc[-1] / budget.max_passes
                g0, g = t.gap.iloc[0], t.gap.iloc[-1]
                if g0 > budget.tol and g > 0 and math.isfinite(g0):
                    frac = max(frac, math.log(g0 / g) / math.log(g0 / budget.tol))
                total += min(1.0, max(0.0, frac)) / len(budget.seed_list)
        return total / len(runs)


def current_link(search: str) -> str:
    """A link's query string (``?a=1&b=x``) with every old key (RENAMED_KEYS) under its new name; where
    the link gives both spellings, the new one wins. Values are kept as written, but for a sampling
    under its old name (RENAMED_SAMPLINGS), which is renamed with a FutureWarning."""
    pairs = urllib.parse.parse_qsl(search.lstrip("?"), keep_blank_values=True)
    given = {key for key, _ in pairs}
    pairs = [(RENAMED_KEYS.get(key, key), current_samplings(value) if key == "samplings" else value)
             for key, value in pairs if RENAMED_KEYS.get(key) not in given]
    return "?" + urllib.parse.urlencode(pairs) if pairs else ""


def current_samplings(value: str) -> str:
    """A link's ``samplings`` (JSON, method -> sampling) with each old page sampling name under its new
    one, where the method has no sampling of that name of its own (SPDC's "weighted" stays)."""
    try:
        samplings = json.loads(value)
    except ValueError:
        return value  # not JSON: the link sync reports it
    if not isinstance(samplings, dict):
        return value
    renamed = {m: RENAMED_SAMPLINGS[s] for m, s in samplings.items()
               if isinstance(s, str) and s in RENAMED_SAMPLINGS and m in METHODS and s not in sampling_choices(m)}
    for method, new in renamed.items():
        warnings.warn(f"the page's sampling {samplings[method]!r} for {method!r} is now called {new!r} "
                      "(p ∝ ‖·‖²); the old name is read for one more release", FutureWarning, stacklevel=3)
    return json.dumps({**samplings, **renamed}) if renamed else value


def sync_link(location, state, on_error=None) -> set:
    """Apply a link (``location``: panel's Location of the session) to ``state`` and keep the URL in step
    with it from then on; returns the names of the settings the link gave. Old keys are read as their
    new names (:func:`current_link`), and the URL shows the new ones."""
    search = current_link(location.search)
    if search != location.search:
        location.search = search
    given = set(location.query_params)
    location.sync(state, {p: p for p in SYNCED}, on_error=on_error)
    return given


def _same(old, new) -> bool:
    """Whether an output parameter's new value equals its current one (plain values, lists and dicts)."""
    try:
        return type(old) is type(new) and bool(old == new)
    except (TypeError, ValueError):
        return False


def same_traces(old: dict, new: dict) -> bool:
    """Traces only grow while a job runs and are replaced when a run is re-timed or a seed finishes:
    the same labels with frames of equal shape and equal last rows are the same traces."""
    if old.keys() != new.keys():
        return False
    for label, frame in new.items():
        before = old[label]
        if before.shape != frame.shape or list(before.columns) != list(frame.columns):
            return False
        if len(frame) and not before.iloc[-1].equals(frame.iloc[-1]):
            return False
    return True
