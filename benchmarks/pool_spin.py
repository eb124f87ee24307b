"""What a peer's two-thread BLAS fit leaves running: cdlab's call timed right after it, and after itself.

    python benchmarks/pool_spin.py [--data madelon] [--loss squared] [--solvers cholesky lsqr] [--rounds 15]

The race pairs each two-thread peer fit with cdlab calls (``race.timed_pairs``). On the race's problem
(``--data``, λ = 1/n), each round fits scikit-learn's Ridge (``--solvers``, no intercept, α = λn) on two BLAS
threads, then times cdlab's Newton to the race's certified gap on n_jobs=2 and on n_jobs=1; then, as the
baseline, each of those calls right after itself. Printed per solver: the medians, and each call's median after
the peer ÷ after itself. OpenBLAS's threads spin on after a call returns, so a two-thread cdlab call that
follows shares both cores with them; a one-thread call has a core of its own.
"""
import argparse
import os

os.environ.setdefault("NUMBA_NUM_THREADS", "2")  # before numba is imported, as race.py

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cdlab  # noqa: E402
import race  # noqa: E402
from _peers import peer_input, real  # noqa: E402


def seconds(call):
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="madelon")
    ap.add_argument("--loss", default="squared", choices=["squared"])
    ap.add_argument("--solvers", nargs="*", default=["cholesky", "lsqr"])
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    from sklearn.linear_model import Ridge

    X, y = real(args.data)
    problem = race.make_problem(X, y, args.loss, 1.0)
    eps = race.GAP_REL * abs(race.certified_p_star(problem))
    Xp = peer_input(problem.X)
    ours = {n_jobs: (lambda n_jobs=n_jobs: cdlab.solve(problem, method="newton", tol=eps, max_passes=3000,
                                                        n_jobs=n_jobs))
            for n_jobs in (2, 1)}
    for solver in args.solvers:
        def peer():
            with threadpool_limits(2):
                Ridge(alpha=problem.lam * problem.n_samples, solver=solver, fit_intercept=False).fit(Xp, y)
        for call in (peer, *ours.values()):
            call()  # compiled, pools started
        after_peer = {n_jobs: [] for n_jobs in ours}
        after_self = {n_jobs: [] for n_jobs in ours}
        for _ in range(args.rounds):
            for n_jobs, call in ours.items():
                peer()
                after_peer[n_jobs].append(seconds(call))
        for n_jobs, call in ours.items():
            call()
            after_self[n_jobs] = [seconds(call) for _ in range(args.rounds)]
        for n_jobs in ours:
            a, b = np.median(after_peer[n_jobs]), np.median(after_self[n_jobs])
            print(f"{args.data} {args.loss} 1/n, after Ridge {solver} on 2 threads: cdlab newton n_jobs={n_jobs} "
                  f"{a * 1e3:.2f} ms; after itself {b * 1e3:.2f} ms; ratio {a / b:.2f}")


if __name__ == "__main__":
    main()
