"""benchmarks/faceoff_bench.py: the regularisation conversions put every peer
at cdlab's optimum, and a peer library that is missing or fails is reported
in the output instead of crashing the run."""
import sys
from pathlib import Path

import numpy as np
import pytest

import cdlab

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import faceoff_bench as fb  # noqa: E402


def toy(n=80, d=12, seed=0):
    X, y = fb.dense(n, d, seed)
    return cdlab.Problem(X, y, loss="logistic", lam=1.0 / n)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CDLAB_CACHE", str(tmp_path))


@pytest.mark.parametrize("n, d", [(80, 12), (12, 80)])  # snapml's dual and primal modes
def test_conversions_reach_cdlabs_optimum(n, d):
    """C = 1/(λn) (scikit-learn), regularizer = λn (snapml), lambda_1 = λ
    (cyanure): at tol 1e-8 each peer's coef_ has cdlab's P* to 1e-9."""
    pytest.importorskip("snapml")
    pytest.importorskip("cyanure")
    problem = toy(n, d)
    p_star = cdlab.reference_optimum(problem)
    fitted = fb.fit_peers(problem, tols=(1e-8,))
    assert len(fitted) == 5
    for (peer, _), row in fitted.items():
        assert row["note"] == "", (peer, row)
        assert abs(row["primal"] - p_star) <= 1e-9 * abs(p_star), (peer, row["primal"], p_star)


def test_missing_or_failing_peers_are_reported_not_fatal(monkeypatch, capsys):
    # None in sys.modules makes `import snapml` raise ImportError
    monkeypatch.setitem(sys.modules, "snapml", None)
    monkeypatch.setitem(sys.modules, "cyanure", None)
    monkeypatch.setitem(sys.modules, "cyanure.estimators", None)

    def broken(*args):
        raise RuntimeError("solver exploded")

    builders = dict(fb.BUILDERS)
    builders["sklearn saga"] = lambda *a: type("Broken", (), {"fit": broken})()
    monkeypatch.setattr(fb, "BUILDERS", builders)
    assert "snapml: NOT AVAILABLE" in fb.peer_status() and "cyanure: NOT AVAILABLE" in fb.peer_status()

    problem = toy()
    fitted = fb.fit_peers(problem, tols=(1e-6,))
    notes = {peer: row["note"] for (peer, _), row in fitted.items()}
    assert notes["snapml (dual CD)"].startswith("unavailable: ModuleNotFoundError")
    assert notes["cyanure"].startswith("unavailable: ModuleNotFoundError")
    assert notes["sklearn saga"] == "failed: RuntimeError: solver exploded"
    assert np.isfinite(fitted["sklearn lbfgs", 1e-6]["primal"])

    monkeypatch.setattr(fb, "problems", lambda quick: {"toy": lambda: fb.dense(80, 12, 0)})
    fb.main(["--quick"])
    out = capsys.readouterr().out
    assert "unavailable: ModuleNotFoundError" in out and "failed: RuntimeError: solver exploded" in out
    assert "=== summary" in out and "Why cdlab is slower" in out
