"""``mixeval preferences``: JSON output equal to the library's fit; user errors are one line, exit code 2."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.cli import main
from mixeval.preferences import bradley_terry

LOG = Path(__file__).resolve().parents[1] / "preferences" / "fixtures" / "arena_log.csv"


def _run(capsys, *argv):
    code = main(["preferences", str(LOG), *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_equals_the_library(capsys):
    code, out, _ = _run(capsys, "--ties", "ordinal", "--position", "fixed", "--reference", "sys00", "--json",
                        "--seed", "1")
    assert code == 0
    got = json.loads(out)
    fit = bradley_terry(pd.read_csv(LOG), ties="ordinal", position="fixed", reference="sys00")
    np.testing.assert_allclose([got["abilities"][s] for s in fit.systems], fit.estimates, rtol=1e-12)
    assert got["thresholds"] == pytest.approx(list(fit.thresholds))
    assert got["loglik"] == pytest.approx(fit.loglik)
    assert got["ranks"]["sys05"]["rank"] == 1 and got["position"]["mode"] == "fixed"


def test_random_position_per_judge(capsys):
    code, out, _ = _run(capsys, "--judge", "judge", "--position", "random", "--json", "--seed", "1")
    assert code == 0
    got = json.loads(out)
    assert list(got["varcorr"]) == ["judge.position"] and got["varcorr"]["judge.position"] > 0


def test_user_errors_are_one_line(capsys):
    code, out, err = _run(capsys, "--position", "random")
    assert code == 2 and err.count("\n") == 1 and "needs judge=" in err
    code, _, err = _run(capsys, "--covariate", "length")
    assert code == 2 and "NAME=COL_A,COL_B" in err


def test_html_report(capsys, tmp_path):
    out_file = tmp_path / "board.html"
    code, out, _ = _run(capsys, "--judge", "judge", "--position", "random", "--html", str(out_file),
                        "--iid-resamples", "20", "--seed", "3", "--json")
    assert code == 0 and json.loads(out)["html"] == str(out_file)
    page = out_file.read_text()
    for heading in ("Leaderboard", "Do the systems differ?", "Pairwise comparisons", "Votes needed",
                    "The naive iid bootstrap beside the model", "data:image/png;base64"):
        assert heading in page
    assert "sys05" in page


def test_html_flags_are_checked_before_the_fit(capsys, tmp_path):
    code, _, err = _run(capsys, "--html", str(tmp_path / "missing" / "board.html"))
    assert code == 2 and "does not exist" in err
    code, _, err = _run(capsys, "--iid-resamples", "50")
    assert code == 2 and "--html" in err
    code, _, err = _run(capsys, "--html", str(tmp_path / "b.html"), "--iid-resamples", "1")
    assert code == 2 and "--iid-resamples" in err


def test_equivalence_tests_equal_the_library(capsys):
    code, out, _ = _run(capsys, "--equivalence", "30", "--elo", "--versus", "sys02", "--json", "--seed", "1")
    assert code == 0
    got = json.loads(out)["margin_tests"]
    fit = bradley_terry(pd.read_csv(LOG))
    ref = fit.contrasts(delta=30, scale="elo", versus="sys02", adjust="holm")
    assert got["null"] == "|difference| >= 30 elo" and got["adjust"] == "holm"
    np.testing.assert_allclose([t["pvalue_adjusted"] for t in got["tests"]], ref.pvalue_adjusted)
    np.testing.assert_allclose([t["estimate"] for t in got["tests"]], ref.estimate)
    code, out, _ = _run(capsys, "--noninferiority", "0.2", "--adjust", "bonferroni", "--seed", "1")
    assert code == 0 and "non-inferiority tests, H0: difference <= -0.2 log-odds" in out
    ref = fit.contrasts(delta=0.2, side=">", adjust="bonferroni")
    assert f"{ref.pvalue_adjusted.iloc[0]:.4g}" in out


def test_margin_flags_are_refused_without_a_margin(capsys):
    for flags in (["--elo"], ["--versus", "sys02"], ["--adjust", "bonferroni"]):
        code, _, err = _run(capsys, *flags)
        assert code == 2 and "--equivalence / --noninferiority" in err
    code, _, err = _run(capsys, "--equivalence", "-1")
    assert code == 2 and "positive" in err
    with pytest.raises(SystemExit):  # argparse: the two margins exclude each other
        main(["preferences", str(LOG), "--equivalence", "0.2", "--noninferiority", "0.2"])


def test_the_seed_is_drawn_and_printed_when_not_given(capsys):
    code, out, _ = _run(capsys)
    assert code == 0
    seed = int(out.split("random seed: ")[1].split()[0])
    code, again, _ = _run(capsys, "--seed", str(seed))
    assert code == 0 and again == out  # the printed seed repeats the run
    code, out, _ = _run(capsys, "--json")
    assert isinstance(json.loads(out)["seed"], int)
