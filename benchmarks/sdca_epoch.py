"""SDCA's time per epoch, side by side with a plain streaming pass and liblinear.

For each dataset it prints seconds per epoch (n coordinate steps) of cdlab's
SDCA kernel for the hinge and logistic losses, and the ratios to
  * a plain numba pass that touches every nonzero twice (x_i·w, then
    w += c·x_i) in row order and in random row order, on the same unsigned
    index views as SDCA's kernel (``Data.csr_arrays``) — the memory traffic an
    SDCA epoch cannot avoid, so the ratio is SDCA's overhead for the loss step;
  * scikit-learn's liblinear dual coordinate solver per iteration (one
    liblinear iteration = one pass over the examples in random order).
JIT compilation happens outside the timed region; each number is the best of
``--repeat`` runs. Run:  python benchmarks/sdca_epoch.py [--quick]
"""
import argparse
import time
import warnings

import numpy as np
from numba import njit
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

import cdlab
from cdlab.data import make_synthetic, normalize_data
from cdlab.data.dataset import kernel_arrays
from cdlab.solvers.dual_cd import DualCDState


@njit(cache=True, nogil=True)
def stream_twice(indptr, indices, data, w, order, c):
    """Read each nonzero of the visited rows twice: a dot product and an update."""
    acc = 0.0
    for k in range(order.shape[0]):
        i = order[k]
        z = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            z += data[p] * w[indices[p]]
        acc += z
        for p in range(indptr[i], indptr[i + 1]):
            w[indices[p]] += c * data[p]
    return acc


def best_of(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def sdca_epoch_seconds(problem, repeat):
    state = DualCDState(problem, "permutation", np.random.default_rng(0), update="exact")
    state.run(min(problem.n_samples, 1000))  # JIT warm-up
    return best_of(lambda: state.run(problem.n_samples), repeat)


def liblinear_seconds_per_iter(X, y, loss, lam, repeat, iters=(2, 7)):
    """Seconds per liblinear iteration, as the difference of two fits (iters[0] and iters[1]
    iterations) over the difference of their iteration counts: the one-off cost of a fit
    (copying X into liblinear's own sparse format, set-up) cancels instead of being spread
    over a handful of iterations, which made liblinear look slower than it is."""
    n = X.shape[0]
    C = 1.0 / (lam * n)  # ½‖w‖² + C Σφ  ⇔  (1/n)Σφ + (λ/2)‖w‖² with λ = 1/(Cn)

    def fit(max_iter):
        if loss == "hinge":
            est = LinearSVC(loss="hinge", C=C, dual=True, fit_intercept=False, tol=1e-30, max_iter=max_iter)
        else:
            est = LogisticRegression(solver="liblinear", dual=True, C=C, fit_intercept=False, tol=1e-30,
                                     max_iter=max_iter)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t0 = time.perf_counter()
            est.fit(X, y)
            return time.perf_counter() - t0, int(np.max(est.n_iter_))

    runs = [min(fit(k) for _ in range(repeat)) for k in iters]
    (t_a, k_a), (t_b, k_b) = runs
    if k_b <= k_a:  # liblinear stopped early: fall back to the plain average
        return t_b / max(k_b, 1)
    return max(t_b - t_a, 1e-12) / (k_b - k_a)


def datasets(quick):
    out = []
    for name in ["a9a", "reuters_moneyfx"]:
        X, y = cdlab.load_dataset(name)
        out.append((name, X, y))
    n, d, density = (100_000, 20_000, 2.5e-4) if quick else (250_000, 40_000, 5e-4)
    X, y = make_synthetic(n, d, density=density, seed=0)
    out.append((f"synthetic sparse {n}x{d}", X, y))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller synthetic problem, fewer repeats")
    ap.add_argument("--repeat", type=int, default=None)
    args = ap.parse_args()
    repeat = args.repeat or (2 if args.quick else 3)
    print(f"{'dataset':<30} {'loss':<9} {'nnz':>10} {'SDCA s/epoch':>13} {'÷ stream row':>13} "
          f"{'÷ stream rand':>14} {'÷ liblinear it':>15}")
    for name, X, y in datasets(args.quick):
        X = normalize_data(X, "mean")
        n = X.shape[0]
        w = np.zeros(X.shape[1])
        rows = np.arange(n)
        perm = np.random.default_rng(1).permutation(n)
        arrays = kernel_arrays(X)  # the unsigned index views SDCA's kernel reads (an equal footing)
        stream_twice(*arrays, w, rows[:10], 1e-9)  # warm-up
        t_row = best_of(lambda: stream_twice(*arrays, w, rows, 1e-9), repeat)
        t_rand = best_of(lambda: stream_twice(*arrays, w, perm, 1e-9), repeat)
        for loss in ["hinge", "logistic"]:
            lam = 1.0 / n
            p = cdlab.Problem(X, y, loss=loss, lam=lam)
            t_sdca = sdca_epoch_seconds(p, repeat)
            t_lib = liblinear_seconds_per_iter(X, y, loss, lam, repeat)
            print(f"{name:<30} {loss:<9} {X.nnz:>10} {t_sdca:>13.4f} {t_sdca / t_row:>13.2f} "
                  f"{t_sdca / t_rand:>14.2f} {t_sdca / t_lib:>15.2f}", flush=True)


if __name__ == "__main__":
    main()
