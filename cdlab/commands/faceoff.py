"""``cdlab faceoff DATA``: primal or dual RCD, which sampling, and the bounds.

    cdlab faceoff a9a --loss logistic --lam 1e-4 --normalize mean
    cdlab faceoff path/to/file.svm --loss squared --lam 1e-3 --eps 1e-8 --json
    cdlab faceoff a9a --normalize mean --run --seeds 5

Prints the face-off quantities of Csiba & Richtárik 2016 (C_P, C_D, per-step
costs, iterations and total work under uniform and importance sampling,
eqs. 10–16), Theorem 3's bounds checked on the data, the iteration bounds of
SDCA, dual RCD and primal RCD at accuracy --eps with their sources, and the
recommendation. Without --run nothing is solved: every number comes from
the data. With --run, primal and dual RCD (uniform and importance sampling)
are solved to --eps on --seeds seeds, and the measured verdict follows the
page's rule (cdlab.verdict): a winner only when the seeds' ranges of
passes-to-ε do not overlap. Seconds exclude numba compilation
(cdlab.timing.warm_solve).

Settings at which a number of the report is not finite (λ = 1e-320: λγn
underflows and every iteration count is inf) are refused, naming the first
such quantities, so the report and --json (standard JSON, no Infinity/NaN)
hold finite numbers only.
"""
from __future__ import annotations

import json
import math

import numpy as np

from .._checks import check_real
from ..data.synthetic import FACEOFF_NORMALIZE, NORMALIZE


def add_parser(subparsers):
    p = subparsers.add_parser(
        "faceoff", help="primal vs dual coordinate descent: quantities, bounds, recommendation",
        description="The face-off of primal and dual randomized coordinate descent (Csiba & Richtárik 2016) "
                    "on a dataset: C_P, C_D, costs and total work under uniform and importance sampling, "
                    "Theorem 3, the coordinate methods' bounds, and which method and sampling to use.")
    p.add_argument("data", metavar="PATH_OR_NAME", help="a registry dataset name (e.g. a9a) or an svmlight/LIBSVM file")
    p.add_argument("--loss", default="logistic", help="a smooth loss: squared, logistic or smoothed_hinge (default logistic)")
    p.add_argument("--lam", type=float, default=None, help="L2 strength λ (default 1/n, the face-off experiments' choice)")
    p.add_argument("--s", type=float, default=1.0, help="smoothing of the smoothed hinge (default 1)")
    p.add_argument("--normalize", default=FACEOFF_NORMALIZE, choices=NORMALIZE,
                   help="rescale X first: none, rows (unit rows) or mean (the default, as on the page: divide by the "
                        "mean example norm, theory.md "
                        "§4's reading of the face-off experiments; the paper's §7 text says 'average column "
                        "norm'). C_P/C_D is scale-free; the scale only moves λγn against the norms")
    p.add_argument("--eps", type=float, default=1e-6, help="accuracy for the iteration bounds (default 1e-6)")
    p.add_argument("--run", action="store_true",
                   help="also solve primal and dual RCD (uniform and importance) to --eps and give the measured "
                        "verdict: a winner only when the seeds' ranges of passes-to-ε do not overlap")
    p.add_argument("--seeds", type=int, default=3, help="with --run: seeds per run, 0, 1, … (default 3)")
    p.add_argument("--max-passes", type=float, default=100.0, help="with --run: pass budget per run (default 100)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    p.set_defaults(func=run)


def report(problem, eps):
    """(dict of everything, list of report lines) for a Problem."""
    from .. import theory

    fo = theory.faceoff(problem)
    bounds = {}
    for method, side in (("sdca", "dual"), ("dual_cd", "dual"), ("primal_cd", "primal")):
        for sampling in ("uniform", "importance"):
            b = theory.bound(method, problem, sampling)
            bounds[f"{method}/{sampling}"] = b.as_dict(eps)
    out = dict(fo.as_dict(), eps=eps, bounds=bounds)

    n, d = problem.n_samples, problem.n_features
    t3 = fo.theorem3
    lines = [f"data      n = {n}, d = {d}, nnz = {problem.nnz} (density {problem.nnz / (n * d):.3g}), "
             f"‖X‖_F² = {fo.frob_sq:.4g}",
             f"problem   loss = {problem.loss} (γ = {problem.gamma:g}), λ = {problem.lam:.3g}, λγn = {fo.c:.4g}",
             f"C_P       {fo.C_P:.6g}    Σ_j ‖f_j‖₀ ‖f_j‖²   (eq. 16)",
             f"C_D       {fo.C_D:.6g}    Σ_i ‖x_i‖₀ ‖x_i‖²",
             f"C_P/C_D   {fo.C_P / fo.C_D:.4g}    (n/d = {n / d:.4g}; Theorem 3 range [1/d, n] = "
             f"[{1 / d:.3g}, {n}]: {'holds' if t3['holds'] else 'VIOLATED'}"
             + ("" if t3["assumption"] else ", but X has zero rows or columns: the theorem does not apply") + ")",
             "",
             f"{'method':<8} {'sampling':<11} {'iterations':>12} {'nnz/step':>10} {'total work':>12} {'passes':>9}"]
    for (side, sampling), row in fo.table().iterrows():
        lines.append(f"{side:<8} {sampling:<11} {row.iterations:12.4g} {row.cost_per_step:10.4g} "
                     f"{row.total_work:12.4g} {row.passes:9.4g}")
    lines += ["(iterations up to the log factor: Theorem 1; work = iterations × cost, eqs. 12–15)", "",
              f"bounds at ε = {eps:g} (expected duality gap; ε₀ = the initial gap, no solve):"]
    for key, b in bounds.items():
        lines.append(f"  {key:<22} {b['iterations']:12.4g} steps {b['passes']:10.4g} passes   [{b['source']}]")
    lines += ["", "recommendation: " + fo.prediction["text"]]
    return out, lines


def nonfinite(obj, path=""):
    """The paths (e.g. ``bounds.sdca/uniform.iterations``) of the non-finite numbers in a nested dict/list."""
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in nonfinite(v, f"{path}.{k}" if path else str(k))]
    if isinstance(obj, (list, tuple)):
        return [p for i, v in enumerate(obj) for p in nonfinite(v, f"{path}[{i}]")]
    if isinstance(obj, (int, float)) and not isinstance(obj, bool) and not math.isfinite(obj):
        return [path]
    import numpy as np

    if isinstance(obj, (np.floating, np.integer)) and not np.isfinite(obj):
        return [path]
    return []


def json_ready(obj):
    """A nested dict/list with every non-finite number (a run that did not reach ε: inf) as None, so that
    --json stays standard JSON."""
    if isinstance(obj, dict):
        return {k: json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


RUNS = (("primal_cd", "primal"), ("dual_cd", "dual"))
EVAL_EVERY = 0.25  # passes between checkpoints: passes-to-ε is interpolated between two of them


def measured(problem, eps, seeds, max_passes):
    """(dict, report lines): primal and dual RCD under both samplings on ``seeds`` seeds, solved to
    ``eps`` with warm timings, and the measured verdict of :func:`cdlab.verdict.faceoff_verdict`."""
    from ..solvers import FACEOFF_OPTIONS
    from ..timing import warm_solve
    from ..verdict import Spread, faceoff_verdict, reach

    runs, passes, sides = {}, {}, {}
    for method, side in RUNS:
        for sampling in ("uniform", "importance"):
            name = f"{method} ({sampling})"
            results = [warm_solve(problem, method=method, sampling=sampling, max_passes=max_passes, tol=eps,
                                  seed=seed, eval_every=EVAL_EVERY, **FACEOFF_OPTIONS[method])
                       for seed in range(seeds)]
            passes[name] = np.concatenate([reach(r.trace, eps) for r in results])
            seconds = np.concatenate([reach(r.trace, eps, "time") for r in results])
            sides[name] = side
            runs[name] = dict(passes_to_eps=[_finite(v) for v in passes[name]],
                              seconds_to_eps=[_finite(v) for v in seconds],
                              status=[r.status for r in results],
                              compiled=any(r.trace.attrs["compiled"] for r in results))
    v, chosen = faceoff_verdict(passes, sides)
    lines = ["", f"measured at ε = {eps:g} on {seeds} seed{'s' if seeds > 1 else ''} (median, and the range over "
                 "the seeds; seconds exclude numba compilation):",
             f"  {'run':<24} {'passes to ε':>24} {'seconds to ε':>14}"]
    for name, row in runs.items():
        secs = np.array([np.inf if s is None else s for s in row["seconds_to_eps"]])
        med = float(np.median(secs))
        lines.append(f"  {name:<24} {Spread(name, tuple(passes[name])).text(unit=''):>24} "
                     f"{(f'{med:.3g}' if np.isfinite(med) else 'not reached'):>14}"
                     + ("  (timing includes compilation)" if row["compiled"] else ""))
    lead = v.leader
    rival = next((sp for sp in v.spreads if sp.name != lead.name), None) if lead else None
    if v.kind == "none":
        text = f"no run reached ε = {eps:g} within {max_passes:g} passes"
    elif v.kind == "tie":
        text = (f"a tie within seed-to-seed spread: {lead.name} {lead.text()} vs {rival.name} {rival.text()} "
                "(the ranges overlap)")
    elif v.kind == "one seed":
        text = (f"{lead.name} ahead on one seed ({lead.text()} vs {rival.text()}); one seed measures no "
                "spread: use --seeds 2 or more for a verdict")
    else:
        text = (f"{sides[lead.name]} RCD wins: {lead.name} {lead.text()} vs {rival.name} {rival.text()} "
                "(the ranges do not overlap)")
    lines.append("measured verdict: " + text)
    out = dict(seeds=seeds, max_passes=max_passes, runs=runs,
               verdict=dict(kind=v.kind, winner=v.winner, side=sides.get(v.winner), compared=sorted(chosen.values()),
                            text=text))
    return out, lines


def _finite(v):
    """A JSON-safe number: None for a seed that did not reach ε."""
    return float(v) if math.isfinite(v) else None


def run(args) -> int:
    from ..data import load
    from ..losses import get_loss
    from ..problem import Problem

    loss = get_loss(args.loss)  # cheap checks before loading a large file
    if not loss.smooth:
        raise ValueError(f"the face-off needs a smooth loss, not {loss.name!r}: use squared, logistic or smoothed_hinge")
    check_real("--eps", args.eps, low=0.0, low_open=True)
    if args.lam is not None:
        check_real("--lam", args.lam, low=0.0, low_open=True)
    if args.run and not 1 <= args.seeds <= 100:
        raise ValueError(f"--seeds must be between 1 and 100, got {args.seeds}")
    if args.run:
        check_real("--max-passes", args.max_passes, low=0.0, low_open=True)
    X, y = load(args.data, args.normalize)
    lam = 1.0 / X.shape[0] if args.lam is None else args.lam
    problem = Problem(X, y, loss=loss.name, lam=lam, s=args.s)
    import warnings

    import numpy as np

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # an overflow is reported below by the quantities it spoilt, not as numpy warnings
        warnings.simplefilter("ignore", RuntimeWarning)
        out, lines = report(problem, args.eps)
    bad = nonfinite(out)
    if bad:
        raise ValueError(f"at λ = {lam:g} (λγn = {lam * problem.gamma * problem.n_samples:.3g}) and ε = {args.eps:g} "
                         f"the face-off's numbers leave floating point: {', '.join(bad[:3])}"
                         + (f" and {len(bad) - 3} more" if len(bad) > 3 else "") + " are not finite; choose a larger --lam")
    if args.run:
        ran, more = measured(problem, args.eps, args.seeds, args.max_passes)
        out["measured"] = json_ready(ran)
        lines += more
    if args.json:
        print(json.dumps(dict(out, data=str(args.data), normalize=args.normalize), default=float, allow_nan=False))
    else:
        print(f"cdlab faceoff: {args.data} (normalize={args.normalize}, λ = {lam:.6g}"
              + (" = 1/n" if args.lam is None else "") + ")")
        print("\n".join(lines))
    return 0
