"""Scenario presets: each sets data, problem and methods to show one regime of
the face-off (theory.md §4) or of the accelerated methods (§5-7)."""
from __future__ import annotations

from ..solvers import METHODS
from . import datasource

_FACEOFF = {"methods": ["primal_cd", "dual_cd"],
            "samplings": {"primal_cd": "uniform + importance", "dual_cd": "uniform + importance"}}

PRESETS = {
    "dense n≫d (dual wins)": dict(
        source=datasource.SYNTHETIC, n_samples=2000, n_features=20, density=1.0, row_skew=0.0, col_skew=0.0,
        value_dist="gaussian", normalize="mean", loss="logistic", lam_rule="1/n", max_passes=30.0, **_FACEOFF),
    # with λ = 1/n and unit-scale rows the dual's extra work C_D/(λγn) ≤ nnz/4, so the two sides nearly
    # tie when d ≫ n; a smaller λ (κ = R²/(λγ) = 2500 ≫ n) lets the C_P ≪ C_D advantage show
    "dense d≫n, small λ (primal wins)": dict(
        source=datasource.SYNTHETIC, n_samples=40, n_features=2000, density=1.0, row_skew=0.0, col_skew=0.0,
        value_dist="gaussian", normalize="mean", loss="logistic", lam_rule="manual", log10_lam=-4.0,
        max_passes=60.0, **_FACEOFF),
    "sparse news-like skew": dict(
        source=datasource.SYNTHETIC, n_samples=2000, n_features=4000, density=0.005, row_skew=1.0,
        col_skew=1.5, value_dist="uniform", normalize="rows", loss="logistic", lam_rule="1/n",
        max_passes=30.0, **_FACEOFF),
    "Theorem 3 extreme: C_P/C_D → n": dict(
        source="extreme: C_P/C_D → n", n_samples=400, n_features=40, normalize="mean", loss="logistic",
        lam_rule="1/n", max_passes=30.0, **_FACEOFF),
    "Theorem 3 extreme: C_P/C_D → 1/d": dict(
        source="extreme: C_P/C_D → 1/d", n_samples=40, n_features=400, normalize="mean",
        loss="logistic", lam_rule="1/n", max_passes=30.0, **_FACEOFF),
    "binary extreme: max C_P (Figure 1)": dict(
        source="binary extreme: max C_P", n_samples=300, n_features=30, omega=900, normalize="none",
        loss="logistic", lam_rule="1/n", max_passes=30.0, **_FACEOFF),
    "ill-conditioned κ≫n": dict(
        source=datasource.SYNTHETIC, n_samples=500, n_features=100, density=1.0, row_skew=0.0, col_skew=0.0,
        value_dist="gaussian", normalize="rows", loss="smoothed_hinge", lam_rule="manual", log10_lam=-6.0,
        max_passes=60.0, methods=["sdca", "asdca", "spdc", "accel_appa", "svrg"],
        samplings={m: "uniform" for m in ["sdca", "asdca", "spdc", "accel_appa", "svrg"]}),
}


# what each preset shows, what to look for, and the notebook that explains it
CAPTIONS = {
    "dense n≫d (dual wins)": (
        "Many examples, few features, dense. Folk wisdom and the theory agree: the dual side (dual_cd) needs "
        "fewer passes, because C_D ≪ C_P when rows are short. Look at the face-off card's ratio and at the two "
        "dual curves reaching the target first.", "02_faceoff"),
    "dense d≫n, small λ (primal wins)": (
        "Few examples, many features, and a small λ (κ ≫ n). Now C_P ≪ C_D and the primal side (primal_cd) wins; "
        "with λ = 1/n the two would nearly tie. Compare the predicted ratio with the measured one.", "02_faceoff"),
    "sparse news-like skew": (
        "Text-like data: sparse, with skewed row and column counts. The dual side wins by about 3× in passes. "
        "Importance sampling (p ∝ ‖·‖², Theorem 2) does not pay here: with unit rows the dual's two samplings "
        "nearly coincide, and on the primal side it keeps drawing the few heavy columns. Compare each run with "
        "its dashed bound.", "05_choosing_a_sampling"),
    "Theorem 3 extreme: C_P/C_D → n": (
        "A matrix built to make the primal side as costly as Theorem 3 allows: C_P/C_D close to n. The dual side "
        "wins by a wide margin whatever the shape.", "02_faceoff"),
    "Theorem 3 extreme: C_P/C_D → 1/d": (
        "The transpose: C_P/C_D close to 1/d, the primal side's best case. primal_cd wins.", "02_faceoff"),
    "binary extreme: max C_P (Figure 1)": (
        "Binary data at the largest C_P Theorem 4 allows for its n, d and ω; the star in Figure 1 marks it on "
        "the map of where primal beats dual on every binary matrix.", "02_faceoff"),
    "ill-conditioned κ≫n": (
        "λ = 10⁻⁶ makes κ ≫ n: SDCA's bound needs about κ/n passes per factor e, the accelerated methods' about "
        "√(κ/n). Within this budget SPDC pulls ahead of SDCA; ASDCA (mini-batch size 1 here) tracks SDCA; "
        "accelerated APPA is drawn at its stage outputs, whose P falls at every stage while their duality gap "
        "first jumps (the dual point of a shifted stage problem certifies them poorly), and SVRG with its "
        "default step lags. Switch the y axis to P − P* to see APPA's progress and the accelerated bounds.",
        "03_acceleration"),
}


def caption(name) -> str:
    """A preset's caption and where to read more ('' for custom settings)."""
    if name not in CAPTIONS:
        return ("Your own settings. Pick a scenario preset to see one regime of the face-off explained, or read "
                "the notebooks (`jupyter lab notebooks/`).")
    text, notebook = CAPTIONS[name]
    return f"{text} *Explained in the notebook `notebooks/{notebook}.ipynb`.*"


NORMALIZATION_LABELS = {"none": "none", "rows": "unit rows", "mean": "divide by the mean example norm"}


def value_kinds():
    from ..data.synthetic import VALUES
    return VALUES


def normalizations():
    """Display name -> value of ``cdlab.data.normalize_data``'s ``how``."""
    from ..data.synthetic import NORMALIZE
    return {NORMALIZATION_LABELS.get(h, h): h for h in NORMALIZE}


def available():
    """The presets whose data source this server has."""
    sources = set(datasource.source_names())
    return [name for name, values in PRESETS.items() if values["source"] in sources]


def values_of(name):
    """The parameter values of a preset, keeping only methods this server has."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {list(PRESETS)}")
    values = dict(PRESETS[name])
    if values["source"] not in datasource.source_names():
        raise ValueError(f"preset {name!r} needs the data source {values['source']!r}, which this server lacks")
    methods = [m for m in values["methods"] if m in METHODS] or ["sdca"]
    values["methods"] = methods
    values["samplings"] = {m: values["samplings"].get(m, "uniform") for m in methods}
    values.setdefault("batch_sizes", {})
    return values
