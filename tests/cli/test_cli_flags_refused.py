"""Every flag is used or refused, in the CLI's words (flag names, their ranges), before any fit runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mixeval.cli import main


def _error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.fixture(scope="module")
def log_csv(tmp_path_factory):
    """30 items x 2 systems x 2 raters, a score, a 0/1 accuracy and a constant column."""
    rng = np.random.default_rng(0)
    n = 30
    df = pd.DataFrame({"item": np.repeat(np.arange(n), 4), "system": np.tile(["A", "B"], 2 * n),
                       "rater": np.tile([1, 1, 2, 2], n)})
    df["score"] = rng.normal(size=n)[df["item"]] + 0.3 * (df["system"] == "B") + rng.normal(size=4 * n)
    df["acc"] = (df["score"] > 0.2).astype(int)
    df["const"] = 1.0
    path = tmp_path_factory.mktemp("cli") / "log.csv"
    df.to_csv(path, index=False)
    return str(path)


MODEL = "score ~ system + (1|item) + (1|rater)"


@pytest.mark.parametrize("argv, words", [
    (["power", "{csv}", MODEL, "--n", "item=10", "--delta", "nan"], "--delta must be a finite number; got nan"),
    (["power", "{csv}", MODEL, "--n", "item=10", "--delta", "inf"], "--delta must be a finite number; got inf"),
    (["power", "{csv}", MODEL, "--n", "item=10", "--alpha", "2"], "--alpha must lie strictly between 0 and 1"),
    (["power", "{csv}", MODEL, "--n", "item=10", "--nsim", "0"], "--nsim must be a whole number >= 1; got 0"),
    (["power", "{csv}", MODEL, "--n", "rater=1"], "--n rater=1: 1 is too few levels of a random factor"),
    (["power", "{csv}", MODEL, "--n", "item=10", "--target", "1.5"], "--target must lie strictly between 0 and 1"),
    (["confint", "{csv}", MODEL, "--method", "boot", "--nsim", "0"], "--nsim must be a whole number >= 1"),
    (["confint", "{csv}", MODEL, "--method", "boot", "--jobs", "0"], "--jobs must be a positive number"),
    (["confint", "{csv}", MODEL, "--level", "95"], "--level must lie strictly between 0 and 1"),
    (["fit", "{csv}", MODEL, "--link", "probit"], "--link probit needs --family binomial, poisson or ordinal"),
    (["fit", "{csv}", MODEL, "--nagq", "5"], "--nagq 5 needs --family"),
    (["compare", "{csv}", MODEL, "score ~ 1 + (1|item) + (1|rater)", "--link", "log"], "--link log needs --family"),
    (["significance", "{csv}", MODEL, "--link", "probit"], "--link probit needs --family"),
    (["significance", "{csv}", MODEL, "--level", "1.5"], "--level must lie strictly between 0 and 1"),
    (["reliability", "{csv}", "score ~ (1|item) + (1|rater)", "--confidence", "1.2"],
     "--confidence must lie strictly between 0 and 1"),
    (["reliability", "{csv}", "score ~ (1|item) + (1|rater)", "--target", "1.5"],
     "--target must lie strictly between 0 and 1"),
    (["reliability", "{csv}", "score ~ (1|item) + (1|rater)", "--ci", "--nsim", "-3"], "--nsim must be a whole number"),
    (["bootstrap", "{csv}", "--item", "item", "--system", "system", "--score", "score", "--n-resamples", "0"],
     "--n-resamples must be a whole number >= 1"),
    (["bootstrap", "{csv}", "--item", "item", "--system", "system", "--score", "score", "--level", "2"],
     "--level must lie strictly between 0 and 1"),
    (["permutation", "{csv}", "--item", "item", "--system", "system", "--score", "score", "--n-resamples", "-1"],
     "--n-resamples must be a whole number >= 1"),
    (["agreement", "{csv}", "--raters", "score", "acc", "--level", "1.5"], "or 0 for no interval"),
    (["agreement", "{csv}", "--raters", "score", "acc", "--n-resamples", "0"], "--n-resamples must be"),
    (["metric-ci", "--p-control", "0.1", "--p-treatment", "0.2", "--n", "100", "--precision", "0.9", "--for", "0.1",
      "--level", "0"], "--level must lie strictly between 0 and 1"),
    (["circularity", "{csv}", "--target", "score", "--k", "2"], "--k must be a whole number >= 3; got 2"),
    (["circularity", "{csv}", "--target", "score", "--top", "0"], "--top must be a whole number >= 1"),
    (["report", "{csv}", "--score", "score", "--system", "system", "--item", "item", "--out", "/no/such/dir/r.html"],
     "--out /no/such/dir/r.html: the folder '/no/such/dir' does not exist"),
    (["report", "{csv}", "--score", "score", "--system", "system", "--item", "item", "--link", "probit"],
     "--link probit needs --family"),
    (["demo", "--out", "/no/such/dir/r.html"], "the folder '/no/such/dir' does not exist"),
    (["power", "{csv}", MODEL, "--n", "item=10", "--pair", "A,A", "--test", "pairwise"],
     "--pair A,A: a system compared with itself has no difference"),
    (["power", "{csv}", MODEL, "--n", "item=10", "--pair", "A,B"],
     "--pair A,B with --test glrt and no --delta is not used"),
    (["power", "{csv}", MODEL, "--n", "item=10", "--system", "rater"],
     "the compared factor 'rater' (system= / --system) is a random grouping factor"),
    (["significance", "{csv}", MODEL, "--system", "item"], "'item' (system= / --system) is a random grouping factor"),
    (["bootstrap", "{csv}", "--item", "item", "--system", "system"], "needs all of --item, --system and --score"),
    (["bootstrap", "{csv}", "--id", "item", "--item", "item", "--system", "system", "--score", "score"],
     "--id names the item column of a wide file"),
    (["permutation", "{csv}", "--exact", "--n-resamples", "100", "--systems", "score", "acc"],
     "--exact enumerates every swap pattern (nothing is drawn at random), so --n-resamples would not be used"),
    (["agreement", "{csv}", "--raters", "score", "acc", "--level", "0", "--seed", "3"],
     "--level 0 asks for no interval, so --seed"),
    (["agreement", "{csv}", "--unit", "item", "--rater", "rater"], "need all of --unit, --rater and --value"),
    (["agreement", "{csv}", "--raters", "score", "--unit", "item", "--rater", "rater", "--value", "score"],
     "--raters choose columns of a wide table"),
    (["circularity", "{csv}", "--target", "score", "--d2-threshold", "2"], "--d2-threshold is a share"),
    (["circularity", "{csv}", "--target", "score", "--k", "12", "--k-max", "6"],
     "--k-max (6) is below the initial basis dimension --k (12)"),
    (["circularity", "{csv}", "--target", "score", "--k-max", "20", "--no-k-check"],
     "with --no-k-check it is not used"),
    (["report", "{csv}", "--score", "score", "--system", "system", "--item", "item", "--by", "rater", "--labels",
      "a,b"], "--labels names the classes that --cuts makes"),
])
def test_bad_flags_are_refused_in_flag_words(capsys, log_csv, argv, words):
    err = _error(capsys, [a.format(csv=log_csv) for a in argv])
    assert words in err
    for python_name in ("n_resamples", "n_jobs", "exact=", "`level`", "error: level", "got -1.0", "k_max", "`k`",
                        "d2_threshold", "`item`"):
        assert python_name not in err


def test_a_duplicated_header_is_refused_naming_the_column(capsys, tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("y,x,g,y\n1,2,a,5\n2,3,a,6\n3,1,b,7\n4,5,b,8\n5,2,c,9\n6,1,c,1\n")
    err = _error(capsys, ["fit", str(path), "y ~ x + (1|g)"])
    assert "names the column 'y' twice (columns 1 and 4)" in err


def test_exact_permutation_with_too_many_items_says_drop_exact(capsys, tmp_path):
    rng = np.random.default_rng(1)
    path = tmp_path / "wide.csv"
    pd.DataFrame({"A": rng.normal(size=30), "B": rng.normal(size=30)}).to_csv(path, index=False)
    err = _error(capsys, ["permutation", str(path), "--exact"])
    assert "--exact" in err and "30 items" in err and "exact=" not in err


def test_power_of_a_slope_of_a_covariate_is_refused_with_the_alternative(capsys, log_csv):
    """A slope of the system is simulated now; a slope of another column has no values on a new design."""
    err = _error(capsys, ["power", log_csv, "score ~ system + (1 + rater|item)", "--n", "item=10", "--nsim", "5"])
    assert "random slopes of ['rater']" in err and "(1 + system | item)" in err


def test_circularity_on_too_few_rows_is_refused_not_called_circular(capsys, tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "noise.csv"
    pd.DataFrame(rng.normal(size=(12, 4)), columns=list("abcy")).to_csv(path, index=False)
    err = _error(capsys, ["circularity", str(path), "--target", "y"])
    assert "28 coefficients" in err and "12 rows" in err and "--k 4" in err and "k=" not in err


@pytest.mark.parametrize("by, words", [
    ("const", "--by const has a single value (1.0)"),
    ("item", "--by item is a grouping factor of the random part"),
    ("system", "--by system is the compared factor itself"),
])
def test_significance_by_a_constant_a_random_factor_or_the_system_is_refused(capsys, log_csv, by, words):
    err = _error(capsys, ["significance", log_csv, MODEL, "--by", by])
    assert words in err and "rank deficient" not in err


def test_warnings_are_printed_once_as_one_line(capsys, log_csv):
    """A 0/1 response fitted as Gaussian: the FamilyWarning once, no source line, no Python warning header."""
    assert main(["significance", log_csv, "acc ~ system + (1|item)"]) == 0
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert text.count("only takes the values 0 and 1") == 1
    assert "FamilyWarning" not in text and "study = Study(" not in text
    for line in text.splitlines():
        if line.startswith("warning:"):
            assert text.count(line) == 1


def test_agreement_on_constant_ratings_warns_in_one_line_each_in_flag_words(capsys, tmp_path):
    path = tmp_path / "const.csv"
    pd.DataFrame({"r1": [1] * 10, "r2": [1] * 10}).to_csv(path, index=False)
    assert main(["agreement", str(path), "--seed", "1", "--n-resamples", "50"]) == 0
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert lines and all(line.startswith("warning: ") for line in lines)
    assert "--if-undefined zero" in err and "if_undefined=" not in err and "MixevalWarning" not in err


def test_a_non_ascii_response_name_needs_no_backticks(capsys, log_csv, tmp_path):
    path = tmp_path / "accent.csv"
    pd.read_csv(log_csv).rename(columns={"score": "qualité", "system": "système"}).to_csv(path, index=False)
    assert main(["fit", str(path), "qualité ~ système + (1|item)"]) == 0
    assert "systèmeB" in capsys.readouterr().out
    err = _error(capsys, ["fit", str(path), "my score ~ système + (1|item)"])
    assert "backticks (`my score` ~ ...)" in err


def test_metric_ci_with_both_rates_zero_warns_about_the_zero_width_interval(capsys):
    assert main(["metric-ci", "--p-control", "0", "--p-treatment", "0", "--n", "100", "--precision", "0.9",
                 "--for", "0.1"]) == 0
    captured = capsys.readouterr()
    assert "CI [0, 0]" in captured.out
    assert "warning: the uncorrected and calibrated interval(s) have zero width" in captured.err


def test_glmm_significance_footer_states_the_latent_effect_size(capsys, log_csv):
    assert main(["significance", log_csv, "acc ~ system + (1|item)", "--family", "binomial", "--df", "asymptotic"]) == 0
    out = capsys.readouterr().out
    assert "effect_size = log ratio / latent residual SD sqrt(pi^2/3) (logit link) (1.814)" in out
    assert "nan" not in out.lower()


def test_floored_pvalues_print_as_r_does(capsys, tmp_path):
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(40), 3)
    df = pd.DataFrame({"item": g, "system": np.tile(["A", "B", "C"], 40)})
    df["score"] = rng.normal(size=40)[g] + df["system"].map({"A": 0, "B": 5, "C": 10}) + rng.normal(size=120)
    path = tmp_path / "huge.csv"
    df.to_csv(path, index=False)
    assert main(["significance", str(path), "score ~ system + (1|item)"]) == 0
    out = capsys.readouterr().out
    assert "p < 2.2e-16" in out and "2.22045e-16" not in out and out.count("< 2.2e-16") == 7


@pytest.mark.filterwarnings("ignore")
def test_significance_binomial_by_a_numeric_property_tests_the_glmm_interaction(capsys, log_csv, tmp_path):
    """--family binomial --by <numeric>: the GLRT of system x length between binomial GLMMs (ML, as lme4's anova)
    and each system's slope on the logit scale, from glmer fits computed here."""
    import json

    from mixeval.mixed import compare, glmer

    data = pd.read_csv(log_csv)
    data["length"] = np.random.default_rng(2).integers(5, 60, size=len(data)).astype(float)
    path = tmp_path / "len.csv"
    data.to_csv(path, index=False)
    assert main(["significance", str(path), "acc ~ system + (1|item)", "--family", "binomial", "--by", "length",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    full = glmer("acc ~ system * length + (1|item)", data, family="binomial", REML=False)
    additive = glmer("acc ~ system + length + (1|item)", data, family="binomial", REML=False)
    ref = compare(full, additive)
    assert out["glrt"]["df"] == 1 and out["glrt"]["statistic"] == pytest.approx(ref.statistic, rel=1e-4, abs=1e-6)
    coef = dict(zip(full.fixed_names, full.coef))
    slopes = {row["system"]: row["trend"] for row in out["slopes"]}
    assert slopes["A"] == pytest.approx(coef["length"], rel=1e-3)
    assert slopes["B"] == pytest.approx(coef["length"] + coef["systemB:length"], rel=1e-3)
    err = _error(capsys, ["significance", str(path), "acc ~ system + (1|item)", "--family", "binomial", "--by",
                          "length", "--scale", "difference"])
    assert "--scale compares means" in err


def test_significance_control(capsys, tmp_path):
    import json

    from mixeval import lmer
    from mixeval.datasets import load_demo
    from mixeval.significance import contrast

    demo = load_demo()
    path = tmp_path / "demo.csv"
    demo.to_csv(path, index=False)
    formula = "score ~ system + (1|item) + (1|rater)"
    assert main(["significance", str(path), formula, "--control", "baseline", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    want = contrast(lmer(formula, demo), "system", "trt.vs.ctrl", ref="baseline")
    assert out["adjust"] == "dunnettx" and [r["contrast"] for r in out["rows"]] == list(want.table.contrast)
    assert [r["pvalue"] for r in out["rows"]] == pytest.approx(list(want.table.pvalue), rel=1e-10)
    for argv, message in ((["--control", "baseline", "--by", "src_length"], "drop --by"),
                          (["--adjust", "dunnettx"], "is for --control"),
                          (["--control", "nope"], "ref='nope'")):
        assert main(["significance", str(path), formula, *argv]) == 2
        assert message in capsys.readouterr().err


def test_power_pair_of_one_system_and_unused_pair_fail_before_the_fit(capsys, log_csv, monkeypatch):
    """Issue 38 items 7 and 9: refused in the flags' words before any data is read."""
    import mixeval.cli._io as io

    monkeypatch.setattr(io, "read_table", lambda path: pytest.fail("read before the flags were checked"))
    for pair, test in (("B,B", "pairwise"), ("A,B", "glrt")):
        _error(capsys, ["power", log_csv, MODEL, "--n", "item=10", "--pair", pair, "--test", test])


def test_circularity_summary_says_which_thresholds_are_not_met(capsys, tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "noise.csv"
    pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "y"]).to_csv(path, index=False)
    assert main(["circularity", str(path), "--target", "y", "--no-k-check"]) == 0
    out = capsys.readouterr().out
    assert "(below the threshold 0.8)" in out and "(below the threshold 0.95)" in out and "(>= 0.8)" not in out


def test_a_zero_one_circularity_target_fitted_as_gaussian_says_use_binomial(capsys, tmp_path):
    rng = np.random.default_rng(4)
    df = pd.DataFrame(rng.normal(size=(200, 2)), columns=["a", "b"])
    df["y"] = (df["a"] > 0).astype(int)
    path = tmp_path / "binary.csv"
    df.to_csv(path, index=False)
    assert main(["circularity", str(path), "--target", "y", "--no-k-check"]) == 0
    captured = capsys.readouterr()
    assert "warning: the target 'y' only takes the values 0 and 1; --family gaussian fits it" in captured.err
    assert "Pass --family binomial." in captured.err and "family='" not in captured.out + captured.err
