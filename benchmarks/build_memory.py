"""Peak memory of building a Problem, as the race measures it (``race.PeakRSS``), on the race's large problems.

    python benchmarks/build_memory.py [--nnz 1e7 5e7] [--kinds text dense]

Per problem: the peak RSS above the process's RSS before ``cdlab.Problem(X, y)`` (X already in memory, as a
user's would be), and the part of it that is the Problem's own copy of X (CSR values and 32-bit indices:
12 bytes a nonzero), so the rest is what the build allocates on the way. Two builds each, after one of a
small slice that compiles (or loads) the kernels a build runs.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cdlab  # noqa: E402
import race  # noqa: E402


def data(kind, nnz):
    if kind == "text":
        return race.text_like(nnz)
    return race.dense(int(nnz // 500), 500, 0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nnz", nargs="*", type=float, default=[1e7, 5e7])
    ap.add_argument("--kinds", nargs="*", default=["text", "dense"], choices=["text", "dense"])
    args = ap.parse_args(argv)
    for kind in args.kinds:
        for nnz in args.nnz:
            X, y = data(kind, nnz)
            cdlab.Problem(X[:100], y[:100], loss="squared", lam=1e-3)
            for _ in range(2):
                with race.PeakRSS() as mem:
                    problem = cdlab.Problem(X, y, loss="squared", lam=1.0 / X.shape[0])
                copy = (problem.X.data.nbytes + problem.X.indices.nbytes + problem.X.indptr.nbytes) / 2 ** 20
                print(f"{kind} {nnz:g} nonzeros: build peak {mem.mb:.0f} MB, of which the copy of X {copy:.0f} MB")
                del problem
            del X, y


if __name__ == "__main__":
    main()
