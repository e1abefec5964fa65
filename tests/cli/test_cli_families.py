"""``mixeval fit / reliability / significance / report --family NAME --json`` for glmmTMB's families (issue 39):
the fits against glmmTMB, the pairwise ratios against glmmTMB + emmeans, reliability on both scales and the report;
``--family`` takes every family of the registry on every command and names them all when it is unknown."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.cli import main
from mixeval.mixed.families import family_names

DATA = Path(__file__).parents[1] / "mixed" / "fixtures" / "glmmtmb"
FITS = json.loads((DATA / "glmmtmb_fixtures.json").read_text())["cases"]
EMMEANS = json.loads((Path(__file__).parents[1] / "significance" / "fixtures" / "glmmtmb" /
                      "glmmtmb_emmeans.json").read_text())["cases"]

#: family -> (data file, formula, glmmTMB fit, emmeans case)
CASES = {
    "negative_binomial": ("sim_nb.csv", "errors ~ system + x + (1|item) + (1|system:seed)", "sim_nb", "nb"),
    "beta": ("sim_beta.csv", "score ~ system + (1|item) + (1|system:seed)", "sim_beta", "beta"),
    "ordered_beta": ("sim_ordbeta.csv", "f1 ~ system + (1|item) + (1|system:seed)", "sim_ordbeta", None),
    "beta_binomial": ("sim_betabin.csv", "cbind(k, n - k) ~ model + (1|task)", "sim_betabin", "beta_binomial"),
}


def _json(capsys, argv):
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


@pytest.mark.parametrize("family", list(CASES))
def test_fit_family_json_matches_glmmtmb(capsys, family):
    file, formula, fixture, _ = CASES[family]
    ref = FITS[fixture]
    out = _json(capsys, ["fit", str(DATA / file), formula, "--family", family, "--json"])
    assert out["family"] == family
    assert out["loglik"] >= ref["loglik"] - 1e-6 * abs(ref["loglik"])
    assert out["loglik"] == pytest.approx(ref["loglik"], rel=1e-6)
    assert out["dispersion"] == pytest.approx(ref["dispersion"], rel=0.02)
    np.testing.assert_allclose(list(out["fixef"].values()), list(ref["fixef"].values()), atol=1e-3)
    assert {"varcorr", "family_parameters"} <= set(out)


def _small(tmp_path: Path, family: str) -> Path:
    """The family's data cut to 60 items (tasks) and written as a CSV the commands read."""
    file, _, _, _ = CASES[family]
    d = pd.read_csv(DATA / file)
    key = "task" if "task" in d.columns else "item"
    d = d[d[key].isin(sorted(d[key].unique())[:60])]
    path = tmp_path / file
    d.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("family", list(CASES))
def test_reliability_family_json_on_both_scales(capsys, tmp_path, family):
    _, formula, _, _ = CASES[family]
    random = formula.split("~")[1].split("+", 1)[1] if family != "beta_binomial" else " (1|task)"
    response = formula.split("~")[0].strip()
    out = _json(capsys, ["reliability", str(_small(tmp_path, family)), f"{response} ~ 1 +{random}", "--family",
                         family, "--json"])
    scales = {row["scale"] for row in out["coefficients"]}
    assert out["phi_scale"] == "observed" and scales == {"observed", "latent"}
    assert 0 < out["phi"] < 1 and family.replace("_", " ").split()[0] in out["scale"].lower().replace("-", " ")
    latent = _json(capsys, ["reliability", str(_small(tmp_path, family)), f"{response} ~ 1 +{random}", "--family",
                            family, "--scale", "latent", "--json"])
    assert latent["phi_scale"] == "latent" and latent["phi"] != pytest.approx(out["phi"])


@pytest.mark.parametrize("family", [f for f in CASES if CASES[f][3]])
def test_significance_family_json_matches_emmeans_ratios(capsys, family):
    file, formula, _, case = CASES[family]
    ref = EMMEANS[case]["ratio"]
    out = _json(capsys, ["significance", str(DATA / file), formula, "--family", family, "--df", "asymptotic",
                         "--json"])
    rows = pd.DataFrame(out["rows"])
    column = "ratio" if family == "negative_binomial" else "odds_ratio"
    assert list(rows["contrast"]) == ref["contrast"]
    np.testing.assert_allclose(rows[column], ref["ratio"], rtol=2e-4)
    np.testing.assert_allclose(rows["pvalue"], ref["pvalue"], rtol=2e-2, atol=1e-6)
    assert out["glrt"]["df"] == 3 and out["glrt"]["pvalue"] < 0.05


def test_significance_ordered_beta_compares_differences_and_refuses_ratios(capsys, tmp_path):
    path = str(_small(tmp_path, "ordered_beta"))
    formula = CASES["ordered_beta"][1]
    out = _json(capsys, ["significance", path, formula, "--family", "ordered_beta", "--json"])
    assert "estimate" in pd.DataFrame(out["rows"]).columns  # differences of the mean proportions
    assert main(["significance", path, formula, "--family", "ordered_beta", "--scale", "ratio"]) == 2
    assert "--scale ratio is not a scale of --family ordered_beta" in capsys.readouterr().err


@pytest.mark.parametrize("family", list(CASES))
def test_report_family_json(capsys, tmp_path, family):
    path = _small(tmp_path, family)
    if family == "beta_binomial":
        pd.read_csv(path).assign(p=lambda d: d.k / d.n).to_csv(path, index=False)
        score, system, item, facets = "p", "model", "task", []
    else:
        score, system, item, facets = CASES[family][1].split()[0], "system", "item", ["--facet", "system:seed"]
    out = _json(capsys, ["report", str(path), "--score", score, "--system", system, "--item", item, *facets,
                         "--family", family, *(["--weights", "n"] if family == "beta_binomial" else []),
                         "--out", str(tmp_path / "r.html"), "--json"])
    assert out["family"] == family and out["dispersion"] > 0 and "dispersion" in out["family_parameters"]
    assert out["phi_scale"] == "observed" and 0 < out["phi"] < 1
    label = {"negative_binomial": "rate", "beta": "proportion", "ordered_beta": "proportion",
             "beta_binomial": "prob"}[family]
    assert all(label in row for row in out["means"])
    assert (tmp_path / "r.html").stat().st_size > 1000


@pytest.mark.parametrize("command", ["fit", "compare", "confint", "reliability", "significance", "report"])
def test_every_fitting_command_takes_the_registry_and_names_it(capsys, tmp_path, command):
    path = tmp_path / "d.csv"
    pd.DataFrame({"item": [1, 1, 2, 2], "system": list("ABAB"), "y": [1.0, 2, 3, 4]}).to_csv(path, index=False)
    positional = {"fit": ["y ~ system + (1|item)"], "compare": ["y ~ system + (1|item)", "y ~ 1 + (1|item)"],
                  "confint": ["y ~ system + (1|item)"], "reliability": ["y ~ (1|item)"],
                  "significance": ["y ~ system + (1|item)"],
                  "report": ["--score", "y", "--system", "system", "--item", "item", "--out", str(tmp_path / "r.html")]}
    assert main([command, str(path), *positional[command], "--family", "gamma"]) == 2
    err = capsys.readouterr().err
    assert "family 'gamma'" in err and all(name in err for name in family_names())
