"""``cdlab faceoff``: the printed numbers equal theory.faceoff on independently loaded data."""
import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

import cdlab
from cdlab import theory
from cdlab.cli import main

HEART = "/work/shared/data/heart_scale.bz2"


def run_json(capsys, *argv):
    assert main(["faceoff", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_faceoff_json_on_a_file_path(capsys):
    out = run_json(capsys, HEART, "--loss", "squared", "--lam", "1e-3", "--eps", "1e-8")
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
    assert main(["faceoff", "heart_scale", "--loss", "logistic", "--normalize", "mean"]) == 0
    text = capsys.readouterr().out
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
    (["heart_scale", "--lam", "-1"], "--lam must be > 0"),
    (["heart_scale", "--eps", "0"], "--eps must be > 0"),
    (["no_such_dataset_xyz"], "unknown dataset"),
])
def test_faceoff_errors_are_clear(capsys, argv, message):
    assert main(["faceoff", *argv]) == 2
    assert message in capsys.readouterr().err
