"""Experiment grids: the file format, its validation and the Cartesian product.

A grid is a mapping (a YAML or JSON file, or a Python dict). Every key takes
one value or a list of values; lists are crossed (Cartesian product). The
format, by example (``EXAMPLE``, a valid grid file)::

{EXAMPLE}
``datasets`` / ``dataset``, ``methods`` / ``method``, ``samplings`` /
``sampling``, ``seeds`` / ``seed`` and ``loss`` / ``losses`` are synonyms.
A combination a method does not support (say a primal method with the hinge
loss) is not filtered out: it runs, fails with the solver's message and is
recorded as a failed configuration.
"""
from __future__ import annotations

import itertools
import json
import math
import os
from pathlib import Path

from .._checks import check_int, check_real
from ..data.synthetic import NORMALIZE
from ..losses import get_loss
from ..solvers.budget import CURVE_EVAL_EVERY, Budget

EXAMPLE = """\
    datasets:                       # required
      - heart_scale                 # a registry name (cdlab.data.list_datasets())
      - data/my_file.svm.bz2        # an svmlight/LIBSVM path (relative to the grid file)
      - {path: data/test.svm, n_features: 123}
      - {synthetic: {n_samples: 500, n_features: 50, density: 0.1, seed: 0},
         name: sparse500}           # cdlab.data.make_synthetic(**synthetic)
    normalize: none                 # none | rows | mean  (cdlab.data.normalize_data)
    loss: [logistic, smoothed_hinge]
    s: 1.0                          # smoothing of the smoothed hinge (ignored by other losses)
    lam: [1.0e-3, 1.0e-4]           # λ; write 1.0e-3, not 1e-3, or quote it (PyYAML reads 1e-3 as text;
                                    #    numeric strings are accepted for that reason)
    l1: 0.0                         # μ (elastic net)
    methods: [sdca, dual_cd]
    samplings: [uniform, importance]
    seeds: [0, 1, 2]
    options: {}                     # method options of every method: a dict, or a list of dicts (variants)
    method_options:                 # per method, replaces `options` for that method
      dual_cd: [{update: exact}, {update: gradient}]
    max_passes: 50
    tol: 1.0e-8
    eval_every: 1.0
    max_time: null                  # seconds; makes traces depend on the machine's speed
    reference: false                # true: compute P* (cached) and record the subopt column
    tag: ""                         # free text that enters the result key: change it to force new runs
    store: results/                 # where `cdlab sweep` writes (relative to the grid file)
    time_limit: 3600                # seconds per configuration (load + solve; null: none); a configuration
                                    #    past it is recorded as failed; not part of the result key
"""
__doc__ = __doc__.replace("{EXAMPLE}", EXAMPLE)

SYNONYMS = {"dataset": "datasets", "method": "methods", "sampling": "samplings", "seed": "seeds",
            "losses": "loss"}
# the crossed dimensions, in the order configurations are listed
DIMENSIONS = ("datasets", "normalize", "loss", "s", "lam", "l1", "methods", "samplings", "options", "seeds",
              "max_passes", "tol", "eval_every", "max_time", "reference", "tag")
DEFAULTS = {"normalize": "none", "loss": "logistic", "s": 1.0, "lam": 1e-4, "l1": 0.0, "methods": "sdca",
            "samplings": "uniform", "options": {}, "seeds": 0, "max_passes": Budget.max_passes, "tol": Budget.tol,
            "eval_every": CURVE_EVAL_EVERY, "max_time": Budget.max_time, "reference": False, "tag": ""}
OTHER_KEYS = ("method_options", "store", "time_limit")
# the config entry each dimension becomes
CONFIG_NAME = {"datasets": "dataset", "methods": "method", "samplings": "sampling", "seeds": "seed"}


def canonical_json(obj) -> str:
    """The one serialisation that hashes and stores configurations."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def load_grid(path) -> dict:
    """Read a grid file (.yaml/.yml or .json); relative paths in it are taken from its directory."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"grid file {path} is a directory; give a .yaml/.yml or .json file")
    if not path.is_file():
        raise ValueError(f"grid file {path} not found")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"grid file {path} is not a UTF-8 text file (byte {exc.start}: {exc.reason}); "
                         "a grid is YAML or JSON text") from None
    if path.suffix.lower() == ".json":
        try:
            grid = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: invalid JSON: {exc}") from None
    else:
        import yaml

        try:
            grid = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValueError(f"{path}: invalid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(grid, dict):
        raise ValueError(f"{path}: a grid file holds a mapping (datasets: ..., methods: ...), "
                         f"not {type(grid).__name__}")
    return {**grid, "_base_dir": str(path.resolve().parent)}


def _as_list(key, value):
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        raise ValueError(f"grid key {key!r} holds an empty list")
    return values


def _number(key, value, integer=False, positive=False, allow_none=False, signed=False):
    """A finite number (≥ 0, or > 0 with positive, any sign with signed); numeric strings accepted."""
    if value is None and allow_none:
        return None
    if isinstance(value, str):  # PyYAML reads 1e-4 as a string
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"grid key {key!r}: {value!r} is not a number") from None
    name = f"grid key {key!r}"
    if integer:
        return check_int(name, value, minimum=1 if positive else 0)
    return check_real(name, value, low=None if signed else 0.0, low_open=positive)


def _flag(key, value) -> bool:
    """A yes/no value: a boolean, or the text true/false (a quoted "false" must not read as True)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(f"grid key {key!r}: {value!r} is not true or false")


def dataset_spec(spec, base_dir=None):
    """Validate one dataset entry and make paths absolute (workers may run elsewhere)."""
    from ..data import DATASETS

    base = Path(base_dir) if base_dir else Path.cwd()
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if isinstance(spec, str):
        if spec in DATASETS:
            return spec
        return str((base / Path(spec).expanduser()).resolve())
    if not isinstance(spec, dict):
        raise ValueError(f"a dataset is a registry name, a path or a mapping, got {spec!r}")
    if "synthetic" in spec:
        unknown = set(spec) - {"synthetic", "name"}
        if unknown or not isinstance(spec["synthetic"], dict):
            raise ValueError(f"a synthetic dataset is {{synthetic: {{make_synthetic arguments}}, name: optional}}; "
                             f"got {spec!r}")
        return {k: spec[k] for k in ("synthetic", "name") if k in spec}
    if "path" in spec:
        unknown = set(spec) - {"path", "n_features", "zero_based", "name"}
        if unknown:
            raise ValueError(f"unknown key(s) {sorted(unknown)} in dataset {spec!r}; "
                             "a file dataset takes path, n_features, zero_based, name")
        return {**spec, "path": dataset_spec(str(spec["path"]), base_dir)}
    raise ValueError(f"a dataset mapping needs a 'synthetic' or a 'path' key, got {spec!r}")


def dataset_label(spec) -> str:
    """A short name for tables and plots."""
    if isinstance(spec, str):
        return spec
    if "name" in spec:
        return str(spec["name"])
    if "path" in spec:
        return spec["path"]
    args = ",".join(f"{k}={v}" for k, v in sorted(spec["synthetic"].items()))
    return f"synthetic({args})"


def json_value(key, value):
    """Check that ``value`` is plain JSON data (None, a bool, a finite number, a string, or lists and
    string-keyed mappings of them): what a configuration may hold to be hashed, stored and sent to
    workers. Raises ValueError naming the offending entry, e.g. ``options.step``."""
    if value is None or isinstance(value, (bool, str)):
        return
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValueError(f"grid key {key!r}: {value!r} is not a finite number")
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            json_value(f"{key}[{i}]", v)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError(f"grid key {key!r}: the name {k!r} is not a string")
            json_value(f"{key}.{k}", v)
        return
    what = type(value).__name__
    hint = " (YAML reads an unquoted 2024-01-01 as a date: quote it)" if what in ("date", "datetime") else ""
    raise ValueError(f"grid key {key!r}: {value!r} is a {what}; values are numbers, strings, booleans, null, "
                     f"lists or mappings{hint}")


def _options_list(key, value):
    variants = _as_list(key, value)
    for i, v in enumerate(variants):
        name = f"{key}[{i}]" if isinstance(value, (list, tuple)) else key
        if not isinstance(v, dict):
            raise ValueError(f"grid key {name!r}: method options are mappings (name: value), got {v!r}")
        json_value(name, v)
    return variants


def _check_grid(grid):
    from ..solvers import METHODS

    grid = {SYNONYMS.get(k, k): v for k, v in grid.items() if k != "_base_dir"}
    unknown = set(grid) - set(DIMENSIONS) - set(OTHER_KEYS)
    if unknown:
        raise ValueError(f"unknown grid key(s) {sorted(unknown)}; known: {sorted(DIMENSIONS + OTHER_KEYS)}")
    if "datasets" not in grid:
        raise ValueError("the grid names no datasets (key 'datasets')")
    grid = {**DEFAULTS, **grid}
    for key in ("methods", "loss", "normalize", "samplings"):
        for value in _as_list(key, grid[key]):
            if not isinstance(value, str):
                raise ValueError(f"grid key {key!r}: {value!r} is not a name")
    for name in _as_list("methods", grid["methods"]):
        if name not in METHODS:
            raise ValueError(f"grid: unknown method {name!r}; available: {sorted(METHODS)}")
    for name in _as_list("loss", grid["loss"]):
        get_loss(name)
    for how in _as_list("normalize", grid["normalize"]):
        if how not in NORMALIZE:
            raise ValueError(f"grid: unknown normalize {how!r}; choose one of {list(NORMALIZE)}")
    for i, spec in enumerate(_as_list("datasets", grid["datasets"])):
        json_value(f"datasets[{i}]", spec)
    for tag in _as_list("tag", grid["tag"]):
        if isinstance(tag, (list, dict)) or tag is None:
            raise ValueError(f"grid key 'tag': {tag!r} is not a text")
        json_value("tag", tag)
    method_options = grid.get("method_options") or {}
    if not isinstance(method_options, dict):
        raise ValueError("grid key 'method_options' maps method names to option mappings")
    for name in method_options:
        if not isinstance(name, str) or name not in METHODS:
            raise ValueError(f"grid key 'method_options': unknown method {name!r}")
    return grid


def expand_grid(grid, base_dir=None) -> list[dict]:
    """All configurations of a grid (a dict, or a path to a grid file), in a stable order.

    A configuration is a flat JSON-able dict with the keys dataset, normalize,
    loss, s, lam, l1, method, sampling, options, seed, max_passes, tol,
    eval_every, max_time, reference, tag. Duplicates (e.g. several ``s`` for
    a loss that ignores it) appear once.
    """
    from ..solvers import METHODS

    if isinstance(grid, (str, os.PathLike)):
        grid = load_grid(grid)
    if not isinstance(grid, dict):
        raise ValueError(f"a grid is a mapping or a grid file path, got {type(grid).__name__}")
    base_dir = base_dir or grid.get("_base_dir")
    grid = _check_grid(grid)
    values = {}
    for key in DIMENSIONS:
        if key == "options":
            continue
        values[key] = _as_list(key, grid[key])
    values["datasets"] = [dataset_spec(d, base_dir) for d in values["datasets"]]
    values["lam"] = [_number("lam", v) for v in values["lam"]]
    values["l1"] = [_number("l1", v) for v in values["l1"]]
    values["s"] = [_number("s", v, positive=True) for v in values["s"]]
    values["seeds"] = [_number("seeds", v, integer=True) for v in values["seeds"]]
    values["max_passes"] = [_number("max_passes", v, positive=True) for v in values["max_passes"]]
    values["tol"] = [_number("tol", v, signed=True) for v in values["tol"]]
    values["eval_every"] = [_number("eval_every", v, positive=True) for v in values["eval_every"]]
    values["max_time"] = [_number("max_time", v, positive=True, allow_none=True) for v in values["max_time"]]
    values["reference"] = [_flag("reference", v) for v in values["reference"]]
    values["tag"] = [str(v) for v in values["tag"]]
    values["loss"] = [get_loss(v).name for v in values["loss"]]

    common_options = _options_list("options", grid["options"])
    per_method = {m: _options_list(f"method_options.{m}", v) for m, v in (grid.get("method_options") or {}).items()}

    configs, seen = [], set()
    keys = [k for k in DIMENSIONS if k != "options"]
    for combo in itertools.product(*(values[k] for k in keys)):
        base = {CONFIG_NAME.get(k, k): v for k, v in zip(keys, combo)}
        if base["loss"] != "smoothed_hinge":
            base["s"] = 1.0  # the other losses ignore s: one configuration, not one per s
        spec = METHODS[base["method"]]
        for options in per_method.get(base["method"], common_options):
            # resolved: old spellings under their current names, every default written out, so that
            # the store key says what ran (a changed default is a new configuration, not a cache hit)
            config = {**base, "options": {**spec.options, **spec.current_names(options)}}
            text = canonical_json(config)
            if text not in seen:
                seen.add(text)
                configs.append(config)
    return configs
