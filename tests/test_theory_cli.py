"""``cdlab faceoff``: the printed numbers equal theory.faceoff on independently loaded data."""
import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

import cdlab
from cdlab import theory
from cdlab.cli import main
from cdlab.data import shipped_dir

HEART = str(shipped_dir() / "heart_scale.bz2")


def run_json(capsys, *argv):
    assert main(["faceoff", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_faceoff_json_on_a_file_path(capsys):
    out = run_json(capsys, HEART, "--loss", "squared", "--lam", "1e-3", "--eps", "1e-8", "--normalize", "none")
    X, y = load_svmlight_file(HEART)  # an independent reader
    P = cdlab.Problem(X, y, loss="squared", lam=1e-3)
    fo = theory.faceoff(P)
    for key in ("C_P", "C_D", "T_P_uniform", "T_D_uniform", "T_P_importance", "T_D_importance",
                "cost_primal_importance", "iters_dual_uniform"):
        assert out[key] == pytest.approx(getattr(fo, key), rel=1e-12), key
    assert out["prediction_method"] == fo.prediction["method"] and out["theorem3_holds"] is True
    b = theory.bound("primal_cd", P, "importance")
    assert out["bounds"]["primal_cd/importance"]["iterations"] == pytest.approx(b.iterations(1e-8), rel=1e-12)
    assert set(out["bounds"]) == {f"{m}/{s}" for m in ("sdca", "dual_cd", "primal_cd")
                                  for s in ("uniform", "importance")}


def test_faceoff_report_on_a_registry_name_with_mean_normalisation(capsys):
    """The page's defaults (rows divided by the mean example norm, λ = 1/n), said in the first line."""
    assert main(["faceoff", "heart_scale", "--loss", "logistic"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == "cdlab faceoff: heart_scale (normalize=mean, λ = 0.0037037 = 1/n)"
    X, y = load_svmlight_file(HEART)
    X = sp.csr_matrix(X)
    X.data /= np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel()).mean()
    P = cdlab.Problem(X, y, loss="logistic", lam=1.0 / X.shape[0])  # default λ = 1/n
    fo = theory.faceoff(P)
    assert f"{fo.C_P:.6g}" in text and f"{fo.C_D:.6g}" in text
    assert "recommendation: " + fo.prediction["text"] in text
    assert "Thm 1(i)" in text and "Shalev-Shwartz & Zhang 2013" in text
    assert "Theorem 3 range" in text and "holds" in text


@pytest.mark.parametrize("argv,message", [
    (["heart_scale", "--loss", "hinge"], "smooth loss"),
    (["heart_scale", "--lam", "-1"], "--lam must be finite and > 0"),
    (["heart_scale", "--lam", "inf"], "--lam must be finite and > 0"),
    (["heart_scale", "--eps", "0"], "--eps must be finite and > 0"),
    (["heart_scale", "--eps", "inf"], "--eps must be finite and > 0"),  # was a sympy TypeError traceback
    (["/nonexistent/dir/file.svm"], "no such svmlight/LIBSVM file"),
    (["heart_scale", "--loss", "nope"], "unknown loss"),
    (["no_such_dataset_xyz"], "unknown dataset"),
])
def test_faceoff_errors_are_clear(capsys, argv, message):
    assert main(["faceoff", *argv]) == 2
    assert message in capsys.readouterr().err


def test_faceoff_on_several_registry_datasets(capsys):
    """Wide sparse (rcv1_small, which has empty feature columns), dense wide (colon-cancer) and
    one-hot (mushrooms): the JSON equals theory.faceoff on the registry data, and the recommended
    side follows C_P/C_D as the total-work formulas say."""
    for name, loss in (("colon-cancer", "squared"), ("rcv1_small", "logistic"), ("mushrooms", "logistic")):
        out = run_json(capsys, name, "--loss", loss, "--normalize", "mean")
        X, y = cdlab.load_dataset(name)
        from cdlab.data import normalize_data
        P = cdlab.Problem(normalize_data(X, "mean"), y.astype(float), loss=loss, lam=1.0 / X.shape[0])
        fo = theory.faceoff(P)
        assert out["C_P"] == pytest.approx(fo.C_P, rel=1e-12) and out["C_D"] == pytest.approx(fo.C_D, rel=1e-12)
        assert out["prediction_text"] == fo.prediction["text"]
        assert out["theorem3_holds"] is True
        assert out["theorem3_assumption"] == bool((P.row_nnz > 0).all() and (P.col_nnz > 0).all())
        best_primal = min(fo.T_P_uniform, fo.T_P_importance)
        best_dual = min(fo.T_D_uniform, fo.T_D_importance)
        assert out["prediction_method"] == ("primal_cd" if best_primal < best_dual else "dual_cd")
