"""``mixeval confint``, ``mixeval power`` and ``mixeval reliability --ci`` (JSON contracts)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval import lmer
from mixeval.cli import main
from mixeval.uncertainty import confint


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    rng = np.random.default_rng(0)
    item = np.repeat(np.arange(20), 6)
    df = pd.DataFrame({"sentence": item, "system": np.tile(["A", "B"], 60), "rater": np.tile([1, 1, 2, 2, 3, 3], 20)})
    df["score"] = (rng.normal(size=20)[item] + rng.normal(0, 0.3, 3)[df.rater - 1] + 0.3 * (df.system == "B")
                   + rng.normal(0, 0.5, 120))
    path = tmp_path_factory.mktemp("cli") / "scores.csv"
    df.to_csv(path, index=False)
    return path, df


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_confint_wald_json(csv, capsys):
    path, df = csv
    out = _json(capsys, ["confint", str(path), "score ~ system + (1|sentence) + (1|rater)", "--method", "wald", "--json"])
    assert list(out["intervals"]) == ["sd_(Intercept)|sentence", "sd_(Intercept)|rater", "sigma", "(Intercept)", "systemB"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = confint(lmer("score ~ system + (1|sentence) + (1|rater)", df), method="wald").intervals
    assert out["intervals"]["systemB"] == pytest.approx(list(ref["systemB"]))


def test_confint_boot_json_is_seeded(csv, capsys):
    path, _ = csv
    argv = ["confint", str(path), "score ~ system + (1|sentence)", "--method", "boot", "--nsim", "30", "--seed", "4", "--json"]
    a, b = _json(capsys, argv), _json(capsys, argv)
    assert a["intervals"] == b["intervals"] and a["seed"] == 4 and a["n_resamples"] == 30


def test_confint_glmer_profile_json(capsys):
    """``--family binomial``: the GLMM's profile intervals (sd's and fixed effects, no sigma), as the Python call."""
    from pathlib import Path

    from mixeval import glmer

    path = Path(__file__).parents[1] / "mixed" / "fixtures" / "glmer" / "binomial_proportions.csv"
    formula = "prop ~ system + (1|item)"
    out = _json(capsys, ["confint", str(path), formula, "--family", "binomial", "--weights", "trials",
                         "--method", "profile", "--json"])
    assert list(out["intervals"]) == ["sd_(Intercept)|item", "(Intercept)", "systemB", "systemC"]
    fit = glmer(formula, pd.read_csv(path), family="binomial", weights="trials")
    ref = confint(fit, method="profile", progress=False).intervals
    for name, (lo, hi) in ref.items():
        assert out["intervals"][name] == pytest.approx([lo, hi], rel=1e-9)
    wald = _json(capsys, ["confint", str(path), formula, "--family", "binomial", "--weights", "trials", "--method",
                          "wald", "--json"])
    assert wald["intervals"]["systemB"] == pytest.approx(list(confint(fit, method="wald").intervals["systemB"]))


def test_power_json(csv, capsys):
    path, _ = csv
    out = _json(capsys, ["power", str(path), "score ~ system + (1|sentence)", "--delta", "0.3", "--n", "item=10,20",
                         "--nsim", "30", "--seed", "1", "--test", "pairwise", "--json"])
    assert [r["item"] for r in out["rows"]] == [10, 20]
    assert all(0 <= r["power"] <= 1 and r["se"] >= 0 for r in out["rows"])
    assert out["item"] == "sentence"


def test_power_json_of_a_binary_study(csv, capsys, tmp_path):
    """``--family binomial``: the power of a binary benchmark's comparison from the command line (refused before)."""
    _, df = csv
    binary = df.assign(correct=(df["score"] > df["score"].median()).astype(int))
    path = tmp_path / "binary.csv"
    binary.to_csv(path, index=False)
    out = _json(capsys, ["power", str(path), "correct ~ system + (1|sentence)", "--family", "binomial", "--delta",
                         "0.5", "--n", "item=10,20", "--nsim", "10", "--seed", "1", "--json"])
    assert out["family"] == "binomial" and [r["item"] for r in out["rows"]] == [10, 20]
    assert all(r["failed"] == 0 and r["se"] >= 0 for r in out["rows"])


def test_reliability_ci_json(csv, capsys):
    path, _ = csv
    out = _json(capsys, ["reliability", str(path), "score ~ (1|sentence) + (1|rater)", "--ci", "--nsim", "40",
                         "--seed", "2", "--grid", "rater=1:3", "--confidence", "0.9", "--json"])
    lo, hi = out["phi_ci"]
    assert 0 <= lo <= out["phi"] <= hi <= 1
    assert {"phi_lower", "phi_upper", "p_reach"} <= set(out["dstudy"][0])
    assert "p_reach" in out["design"]


def test_power_bad_n(csv, capsys):
    path, _ = csv
    assert main(["power", str(path), "score ~ system + (1|sentence)", "--n", "item=ten"]) == 2
    assert "--n must look like" in capsys.readouterr().err


def test_bootstrap_options_are_refused_without_the_bootstrap():
    import numpy as np
    import pandas as pd
    import pytest

    from mixeval import lmer
    from mixeval.errors import InputError
    from mixeval.uncertainty import confint

    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(15), 4)
    fit = lmer("y ~ 1 + (1|g)", pd.DataFrame({"g": g, "y": rng.normal(size=15)[g] + rng.normal(size=60)}))
    for kwargs in ({"n_resamples": 100}, {"random_state": 1}, {"n_jobs": 2}):
        with pytest.raises(InputError, match="does not resample"):
            confint(fit, method="wald", **kwargs)
    assert confint(fit, method="boot", n_resamples=20, random_state=1).table.shape[0] == 3
