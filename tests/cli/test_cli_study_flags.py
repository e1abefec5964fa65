"""``mixeval reliability`` and ``mixeval significance``: flags used or refused (issue 38 item 9 and the rough cases of
these commands), ``--scale`` for ordinal models, ``--levels`` for ratings that are not numbers, and reliability on the
observed scale named beside the latent one, at the data's own design (issue 36 item 9, issue 41 item 3)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mixeval.cli import main


def _error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """40 items x 2 systems x 4 raters: a score, a 0/1 accuracy and a rating in words."""
    rng = np.random.default_rng(7)
    df = pd.DataFrame([(i, s, r) for i in range(40) for s in ("A", "B") for r in range(4)],
                      columns=["item", "system", "rater"])
    latent = rng.normal(size=40)[df.item] + 0.5 * (df.system == "B") + rng.normal(0, 0.4, 4)[df.rater]
    df["score"] = latent + rng.normal(size=len(df))
    df["correct"] = (latent + rng.logistic(size=len(df)) > 0).astype(int)
    df["rating"] = np.array(["bad", "ok", "good"])[np.digitize(latent + rng.logistic(size=len(df)), [-1.0, 1.0])]
    path = tmp_path_factory.mktemp("study") / "logs.csv"
    df.to_csv(path, index=False)
    return str(path)


GAUSS = "score ~ system + (1|item) + (1|rater)"
RATINGS = "rating ~ system + (1|item) + (1|rater)"


@pytest.mark.parametrize("argv, words", [
    (["significance", "{csv}", GAUSS, "--scale", "ratio"], "--scale ratio needs --family binomial, poisson or ordinal"),
    (["significance", "{csv}", GAUSS, "--labels", "a,b"], "--labels a,b names the classes --cuts makes"),
    (["significance", "{csv}", RATINGS, "--family", "ordinal", "--levels", "bad,ok,good", "--scale", "ratio"],
     "--scale ratio is not a scale of --family ordinal"),
    (["significance", "{csv}", "correct ~ system + (1|item)", "--family", "binomial", "--scale", "prob"],
     "--scale prob is not a scale of --family binomial"),
    (["significance", "{csv}", GAUSS, "--levels", "1,2"], "--levels 1,2 orders the categories of ordinal ratings"),
    (["reliability", "{csv}", GAUSS, "--nsim", "10"], "--nsim sets the bootstrap intervals"),
    (["reliability", "{csv}", GAUSS, "--seed", "3"], "--seed sets the bootstrap intervals"),
    (["reliability", "{csv}", GAUSS, "--level", "0.9"], "--level sets the bootstrap intervals"),
    (["reliability", "{csv}", GAUSS, "--scale", "observed"], "a Gaussian model's observed and latent scales coincide"),
    (["reliability", "{csv}", RATINGS, "--family", "ordinal"], "--levels bad,ok,good on the command line"),
])
def test_flags_are_used_or_refused(capsys, logs, argv, words):
    assert words in _error(capsys, [a.format(csv=logs) for a in argv])


def test_ordinal_scale_and_levels_on_the_command_line(capsys, logs):
    out = _json(capsys, ["significance", logs, RATINGS, "--family", "ordinal", "--levels", "bad,ok,good",
                         "--scale", "mean.class", "--json"])
    assert len(out["rows"]) == 1 and "effect_size" not in out["rows"][0]
    assert 0 < abs(out["rows"][0]["estimate"]) < 2  # a difference of expected classes on the 1..3 scale
    rel = _json(capsys, ["reliability", logs, "rating ~ (1|item) + (1|rater)", "--family", "ordinal",
                         "--levels", "bad,ok,good", "--json"])
    assert rel["phi_scale"] == "observed" and rel["data_design"] == {"rater": 4}


def test_reliability_leads_with_the_observed_scale_at_the_datas_design(capsys, logs):
    f = "correct ~ system + (1|item) + (1|rater)"
    out = _json(capsys, ["reliability", logs, f, "--family", "binomial", "--json"])
    first = out["coefficients"][0]
    assert (first["design"], first["scale"], first["n"]) == ("data", "observed", {"rater": 4})
    scales = {(c["design"], c["scale"]): c["phi"] for c in out["coefficients"]}
    assert scales[("data", "observed")] < scales[("data", "latent")]
    assert out["phi"] == scales[("one of each facet", "observed")]
    latent = _json(capsys, ["reliability", logs, f, "--family", "binomial", "--scale", "latent", "--json"])
    assert latent["phi"] == scales[("one of each facet", "latent")]
    assert main(["reliability", logs, f, "--family", "binomial"]) == 0
    text = capsys.readouterr().out
    lines = [line for line in text.splitlines() if line.startswith("phi = ")]
    assert "observed scale at the data's design: rater = 4" in lines[0]
    assert "latent scale at the data's design: rater = 4" in lines[1]


def test_demo_names_the_design_of_every_phi(capsys, tmp_path):
    """issue 41 item 3: the demo's headline phi was for 1 rater x 1 seed while the data have 4 raters x 3 seeds."""
    out = _json(capsys, ["demo", "--out", str(tmp_path / "demo.html"), "--json"])
    assert out["data_design"] == {"seed": 3, "rater": 4} and out["phi_design"] == "one level of each facet"
    assert out["phi_data_design"] > out["phi"]
    assert main(["demo", "--out", str(tmp_path / "demo2.html")]) == 0
    text = capsys.readouterr().out
    assert "phi at the data's design (seed = 3, rater = 4)" in text and "phi at one level of each facet" in text
