"""Step rules on unnormalised shipped data: passes to the duality gap 1e-6, side by side.

For each (dataset as shipped, no row scaling; loss; λ = factor/n) it runs SDCA, and SAG, SAGA
and SVRG with their default step (SAG's line search on L, ``cdlab.solvers.step_rules``) and with
``step_size="L_max"`` (η from max_i ‖x_i‖²/γ, the step their theorems are stated for), L-SVRG
(``method="lsvrg"``, its theorem's step 1/(6 L_max) by default, and with the line search), and
dual_cd with its default (``update="linesearch"``), ``update="gradient"`` (face-off Algorithm 2) and
``update="coordinate"``. It prints the passes
each run needed for gap ≤ 1e-6 ("—" if not within the budget) and its final gap, one per seed
(separated by "/"). Counts of passes do not depend on the machine.
Run:  python benchmarks/raw_steps.py [--passes 300] [--seeds 1] [--methods svrg]
"""
import argparse

import cdlab

CASES = [("colon-cancer", None, "logistic", 1.0), ("colon-cancer", None, "logistic", 0.01),
         ("mushrooms", 2000, "logistic", 1.0), ("mushrooms", 2000, "logistic", 0.01),
         ("w8a", 3000, "logistic", 1.0), ("w8a", 3000, "squared", 1.0),
         ("ijcnn1", 3000, "logistic", 0.01), ("ijcnn1", 3000, "squared", 0.01),
         ("heart_scale", None, "logistic", 0.01), ("heart_scale", None, "squared", 1.0)]
RUNS = [("sdca", {}), ("sag", {}), ("sag", {"step_size": "L_max"}), ("saga", {}), ("saga", {"step_size": "L_max"}),
        ("svrg", {}), ("svrg", {"step_size": "L_max"}), ("lsvrg", {}),
        ("lsvrg", {"step_size": "linesearch"}), ("dual_cd", {}), ("dual_cd", {"update": "gradient"}),
        ("dual_cd", {"update": "coordinate"})]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=float, default=300.0)
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0 … N−1 for each run")
    parser.add_argument("--methods", nargs="+", help="only these methods' runs (default: all)")
    args = parser.parse_args()
    runs = [(m, o) for m, o in RUNS if not args.methods or m in args.methods]
    names = [m + "".join(f" {v}" for v in o.values()) for m, o in runs]
    width = max(22, 11 * args.seeds)
    print(f"{'data':<26}" + "".join(f"{n:>{width}}" for n in names))
    for name, rows, loss, factor in CASES:
        X, y = cdlab.load_dataset(name)
        X, y = (X, y) if rows is None else (X[:rows], y[:rows])
        problem = cdlab.Problem(X, y, loss=loss, lam=factor / X.shape[0])
        cells = []
        for method, options in runs:
            got = []
            for seed in range(args.seeds):
                res = cdlab.solve(problem, method, tol=1e-6, max_passes=args.passes, seed=seed, eval_every=1.0,
                                  **options)  # a checkpoint every pass: the count is the pass it certified
                last = res.trace.iloc[-1]
                got.append(f"{last.passes:.0f}" if res.converged else f"— ({last.gap:.0e})")
            cells.append("/".join(got))
        label = f"{name}{'' if rows is None else f'[:{rows}]'} {loss} {factor:g}/n"
        print(f"{label:<26}" + "".join(f"{c:>{width}}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
