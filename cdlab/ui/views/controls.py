"""The sidebar: every setting of the Experiment as a widget (sliders throttled)."""
from __future__ import annotations

import panel as pn
import param
from bokeh.models.formatters import PrintfTickFormatter

from ...solvers import METHODS
from .. import datasource, glossary, presets
from ..advice import loss_reason
from ..runner import sampling_choices
from ..upload import BoundedFileDropper
from ..state import Experiment


class MethodRow(pn.viewable.Viewer):
    """A method's checkbox, sampling and mini-batch size, two-way linked to the state. A row holds only
    the widgets its method uses (each is a model the page builds, sends and lays out, ×17 methods): a
    sampling menu where there is a choice (else ``sampling`` is None and ``fixed`` names the one), a
    mini-batch size where the method takes one (else ``batch`` is None)."""

    state = param.ClassSelector(class_=Experiment)
    method = param.String()

    def __init__(self, **params):
        super().__init__(**params)
        s, m = self.state, self.method
        spec = METHODS[m]
        self.check = pn.widgets.Checkbox(label=m, value=m in s.methods, width=95, margin=(12, 5, 0, 5),
                                         css_classes=[f"cdlab-method-{m}"])
        # a method with one sampling (or none: full gradients) shows it as text, not as a choice
        choices = sampling_choices(m)
        self.sampling = self.fixed = self.batch = None
        if len(choices) > 1:
            self.sampling = pn.widgets.Select(options=choices, value=s.samplings.get(m) or s.default_sampling(m),
                                              width=175, margin=(5, 5), css_classes=[f"cdlab-sampling-{m}"])
            self.sampling.param.watch(self._to_state, "value")
        else:
            self.fixed = pn.pane.Markdown(choices[0] if glossary.samples(m) else "full gradient", width=175,
                                          margin=(12, 10, 0, 10), styles={"color": "#555", "font-size": "0.9em"})
        self.help = pn.widgets.TooltipIcon(value=pn.bind(self._help, s.param.loss), margin=(12, 0, 0, 0),
                                           css_classes=[f"cdlab-help-{m}"])
        self.check.disabled = pn.bind(lambda loss, methods: bool(loss_reason(m, loss)) and m not in methods,
                                      s.param.loss, s.param.methods)
        if spec.batch:
            self.batch = pn.widgets.IntInput(value=int(s.batch_sizes.get(m, 1)), start=1, width=55, margin=(5, 5),
                                             placeholder="batch", css_classes=[f"cdlab-batch-{m}"])
            self.batch.param.watch(self._to_state, "value")
        self.check.param.watch(self._to_state, "value")
        s.param.watch(self._from_state, ["methods", "samplings", "batch_sizes"])

    def _to_state(self, event):
        s, m = self.state, self.method
        if event.obj is self.check:
            chosen = set(s.methods) | {m} if event.new else set(s.methods) - {m}
            updates = {"methods": [x for x in s.param.methods.objects if x in chosen]}
            if event.new and m not in s.samplings:
                sampling = self.sampling.value if self.sampling is not None else sampling_choices(m)[0]
                updates["samplings"] = {**s.samplings, m: sampling}
            s.param.update(**updates)
        elif event.obj is self.sampling:
            s.set_sampling(m, event.new)
        elif event.obj is self.batch and event.new is not None:
            s.set_batch_size(m, max(1, int(event.new)))

    def _from_state(self, *events):
        s, m = self.state, self.method
        self.check.value = m in s.methods
        if self.sampling is not None and s.samplings.get(m) in self.sampling.options:
            self.sampling.value = s.samplings[m]
        if self.batch is not None:
            self.batch.value = int(s.batch_sizes.get(m, 1))

    def _help(self, loss):
        reason = loss_reason(self.method, loss)
        return glossary.method_help(self.method) + (f"\n\n**Not available:** {reason}." if reason else "")

    def __panel__(self):
        return pn.Row(*(w for w in (self.check, self.help, self.sampling, self.fixed, self.batch) if w is not None),
                      margin=0)


class Controls(pn.viewable.Viewer):
    state = param.ClassSelector(class_=Experiment)

    def _data(self):
        s = self.state
        synthetic = pn.bind(lambda src: src == datasource.SYNTHETIC, s.param.source)
        binary = pn.bind(lambda src: datasource.EXTREMES.get(src, ("",))[0] == "binary_extreme", s.param.source)
        shaped = pn.bind(lambda src: src == datasource.SYNTHETIC or src in datasource.EXTREMES, s.param.source)
        slider = dict(throttled=True, sizing_mode="stretch_width")
        # FileDropper, not FileInput: it refuses a file over the limit in the browser, with a message,
        # and sends the rest in chunks. FileInput sent any file whole, and one larger than the
        # websocket's message limit (20 MB) closed the connection: a dead page, no message.
        upload = BoundedFileDropper(max_file_size=f"{datasource.UPLOAD_LIMIT_MB}MB", multiple=False,
                                        chunk_size=2_000_000, css_classes=["cdlab-upload"],
                                        sizing_mode="stretch_width")

        def on_upload(event):
            for filename, content in (event.new or {}).items():
                # text/* files arrive decoded; the parser wants the bytes
                s.upload(content.encode() if isinstance(content, str) else content, filename)
        upload.param.watch(on_upload, "value")
        upload.param.watch(lambda event: event.new and s.refuse_upload(event.new), "refused")
        return pn.Column(
            pn.widgets.Select.from_param(s.param.source, label="data", sizing_mode="stretch_width",
                                         css_classes=["cdlab-source"]),
            *self._fetch_widgets(),
            pn.Row(pn.widgets.IntInput.from_param(s.param.n_samples, label="n (examples)", visible=shaped, width=150),
                   pn.widgets.IntInput.from_param(s.param.n_features, label="d (features)", visible=shaped,
                                                  width=150)),
            # a fine step and four significant digits: news-like data have densities like 0.005
            pn.widgets.FloatSlider.from_param(s.param.density, label="density", step=1e-4,
                                              format=PrintfTickFormatter(format="%.4g"), visible=synthetic,
                                              **slider),
            pn.widgets.FloatSlider.from_param(s.param.row_skew, label="row skew (power law)", step=0.1,
                                              visible=synthetic, **slider),
            pn.widgets.FloatSlider.from_param(s.param.col_skew, label="column skew (power law)", step=0.1,
                                              visible=synthetic, **slider),
            pn.Row(pn.widgets.Select.from_param(s.param.value_dist, label="values", visible=synthetic, width=140),
                   pn.widgets.IntInput.from_param(s.param.data_seed, label="data seed", visible=synthetic,
                                                  width=100)),
            pn.widgets.IntInput.from_param(s.param.omega, label="ω = nnz of a binary extreme (0 = auto)",
                                           visible=binary, sizing_mode="stretch_width"),
            pn.widgets.Select.from_param(s.param.normalize, label="normalization", sizing_mode="stretch_width"),
            pn.pane.Markdown(f"**Your own data** (LIBSVM/svmlight text, optionally .gz/.bz2; at most "
                             f"{datasource.UPLOAD_LIMIT_MB} MB):", margin=(10, 10, 0, 10)),
            upload,
            pn.pane.Markdown(s.param.upload_message, css_classes=["cdlab-upload-message"]),
            sizing_mode="stretch_width")

    def _fetch_widgets(self):
        """A button to download the selected dataset when it is fetched on first use, and its progress."""
        s = self.state

        def label(source):
            info = datasource.DATASETS.get(source)
            return f"Fetch {source} (≈ {info.download_mb:g} MB)" if info is not None else "Fetch"
        button = pn.widgets.Button(label=pn.bind(label, s.param.source), color="primary",
                                   visible=pn.bind(lambda source, fetching: datasource.needs_fetch(source)
                                                   and not fetching, s.param.source, s.param.fetching),
                                   css_classes=["cdlab-fetch"], sizing_mode="stretch_width")
        button.on_click(lambda event: s.fetch_data())
        bar = pn.indicators.Progress(value=pn.bind(lambda p: int(100 * p), s.param.fetch_progress), max=100,
                                     visible=pn.bind(lambda fetching: fetching, s.param.fetching),
                                     sizing_mode="stretch_width", height=12)
        message = pn.pane.Markdown(s.param.fetch_message, css_classes=["cdlab-fetch-message"],
                                   visible=pn.bind(lambda text: bool(text), s.param.fetch_message), margin=(0, 10))
        return button, bar, message

    def _problem(self):
        s = self.state
        # under λ = 1/n the slider only shows the λ in use; "manual" frees it
        lam = pn.widgets.FloatSlider.from_param(s.param.log10_lam, label="log10 λ", step=0.1, throttled=True,
                                                sizing_mode="stretch_width",
                                                disabled=pn.bind(lambda rule: rule == "1/n", s.param.lam_rule))

        def lam_text(analysis, rule, log10_lam):
            if rule == "1/n":
                if analysis is None:
                    return "λ = 1/n"
                return f"λ = 1/n = {1.0 / analysis.problem.n_samples:.3g}"
            return f"λ = {10.0 ** log10_lam:.3g} (manual)"

        def l1_note(methods, l1):
            no = [m for m in methods if m in METHODS and not METHODS[m].supports_l1]
            if not no:
                return "All chosen methods support l1 (elastic net)."
            return f"Without l1 support: {', '.join(no)}" + (" — they will be refused while l1 > 0." if l1 > 0 else ".")
        return pn.Column(
            pn.widgets.Select.from_param(s.param.loss, label="loss", sizing_mode="stretch_width",
                                         css_classes=["cdlab-loss"]),
            pn.widgets.RadioButtonGroup.from_param(s.param.lam_rule, color="light"),
            lam,
            pn.pane.Markdown(pn.bind(lam_text, s.param.analysis, s.param.lam_rule, s.param.log10_lam),
                             css_classes=["cdlab-lam"]),
            pn.widgets.FloatInput.from_param(s.param.l1, label="l1 (μ, elastic net)", step=1e-4, start=0.0,
                                             sizing_mode="stretch_width"),
            pn.pane.Markdown(pn.bind(l1_note, s.param.methods, s.param.l1), styles={"font-size": "0.85em"}),
            sizing_mode="stretch_width")

    def _methods(self):
        rows = [MethodRow(state=self.state, method=m) for m in sorted(METHODS)]
        head = pn.pane.Markdown("method · sampling · mini-batch", styles={"font-size": "0.85em"}, margin=(0, 10))
        return pn.Column(head, *rows, sizing_mode="stretch_width", css_classes=["cdlab-methods"])

    def _budget(self):
        s = self.state
        return pn.Column(
            pn.widgets.FloatSlider.from_param(s.param.max_passes, label="max passes", step=0.5, throttled=True,
                                              sizing_mode="stretch_width"),
            pn.widgets.FloatSlider.from_param(s.param.log10_tol, label="stop at gap 10^", step=0.5,
                                              throttled=True, sizing_mode="stretch_width"),
            pn.widgets.FloatSlider.from_param(s.param.max_time, label="max seconds per run", step=1,
                                              throttled=True, sizing_mode="stretch_width"),
            pn.widgets.IntInput.from_param(s.param.seed, label="seed", sizing_mode="stretch_width"),
            sizing_mode="stretch_width")

    def __panel__(self):
        s = self.state
        run = pn.widgets.Button(label="Run", color="primary", css_classes=["cdlab-run"], width=80)
        cancel = pn.widgets.Button(label="Cancel", color="danger", css_classes=["cdlab-cancel"], width=80,
                                   disabled=pn.bind(lambda r: not r, s.param.running))
        run.on_click(lambda e: s.start(solve=True))
        cancel.on_click(lambda e: s.cancel())
        auto = pn.widgets.Checkbox.from_param(s.param.auto_run, label="run on every change")
        card = dict(sizing_mode="stretch_width", collapsible=True, margin=(5, 0))
        return pn.Column(
            pn.widgets.Select.from_param(s.param.preset, label="scenario preset", sizing_mode="stretch_width",
                                         css_classes=["cdlab-preset"]),
            pn.pane.Markdown(pn.bind(presets.caption, s.param.preset), css_classes=["cdlab-preset-caption"],
                             styles={"font-size": "0.9em"}, sizing_mode="stretch_width", margin=(0, 10)),
            pn.Row(run, cancel, auto),
            pn.Card(self._data(), title="Data", **card),
            pn.Card(self._problem(), title="Problem", **card),
            pn.Card(self._methods(), title="Methods", **card),
            pn.Card(self._budget(), title="Budget", collapsed=True, **card),
            sizing_mode="stretch_width")
