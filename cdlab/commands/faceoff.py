"""``cdlab faceoff DATA``: primal or dual RCD, which sampling, and the bounds.

    cdlab faceoff a9a --loss logistic --lam 1e-4 --normalize mean
    cdlab faceoff path/to/file.svm --loss squared --lam 1e-3 --eps 1e-8 --json

Prints the face-off quantities of Csiba & Richtárik 2016 (C_P, C_D, per-step
costs, iterations and total work under uniform and importance sampling,
eqs. 10–16), Theorem 3's bounds checked on the data, the iteration bounds of
SDCA, dual RCD and primal RCD at accuracy --eps with their sources, and the
recommendation. Nothing is solved: every number comes from the data.

Settings at which a number of the report is not finite (λ = 1e-320: λγn
underflows and every iteration count is inf) are refused, naming the first
such quantities, so the report and --json (standard JSON, no Infinity/NaN)
hold finite numbers only.
"""
from __future__ import annotations

import json
import math

NORMALIZE = ("none", "rows", "mean")


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
    p.add_argument("--normalize", default="none", choices=NORMALIZE,
                   help="rescale X first: rows (unit rows) or mean (divide by the mean example norm, theory.md "
                        "§4's reading of the face-off experiments; the paper's §7 text says 'average column "
                        "norm'). C_P/C_D is scale-free; the scale only moves λγn against the norms")
    p.add_argument("--eps", type=float, default=1e-6, help="accuracy for the iteration bounds (default 1e-6)")
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


def run(args) -> int:
    from ..data import load_dataset
    from ..losses import get_loss
    from ..problem import Problem

    loss = get_loss(args.loss)  # cheap checks before loading a large file
    if not loss.smooth:
        raise ValueError(f"the face-off needs a smooth loss, not {loss.name!r}: use squared, logistic or smoothed_hinge")
    if not 0 < args.eps < math.inf:
        raise ValueError(f"--eps must be finite and > 0, got {args.eps}")
    if args.lam is not None and not 0 < args.lam < math.inf:
        raise ValueError(f"--lam must be finite and > 0, got {args.lam}")
    X, y = load_dataset(args.data)
    if args.normalize != "none":
        from ..data.synthetic import normalize_data
        X = normalize_data(X, args.normalize)
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
    if args.json:
        print(json.dumps(dict(out, data=str(args.data), normalize=args.normalize), default=float, allow_nan=False))
    else:
        print(f"cdlab faceoff: {args.data}" + (f" (normalize={args.normalize})" if args.normalize != "none" else ""))
        print("\n".join(lines))
    return 0
