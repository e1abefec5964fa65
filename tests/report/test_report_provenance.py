"""Every report states its provenance and defines its terms (issue 41, item 10): the mixeval version, the date,
the call or command and the data; the adjustment named, ``effect_size`` defined, the estimated marginal mean
spelled out; no test printed twice; a caveat when the means average over an interaction of the systems."""

from __future__ import annotations

import re
import warnings
from datetime import datetime

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import mixeval  # noqa: E402
from mixeval.cli import main  # noqa: E402
from mixeval.report import Note, Report, Section, build_report  # noqa: E402
from mixeval.study import Study  # noqa: E402


def _log(seed: int = 5) -> pd.DataFrame:
    """40 items in two length classes x 3 systems x 2 nested seeds x 2 raters; system C gains on long items."""
    rng = np.random.default_rng(seed)
    rows = []
    u_item, u_rater = rng.normal(0, 1, 40), {"r1": 0.3, "r2": -0.3}
    u_seed = {(s, k): rng.normal(0, 0.2) for s in "ABC" for k in (1, 2)}
    for i in range(40):
        cls = "short" if i < 20 else "long"
        for s in "ABC":
            for k in (1, 2):
                for r in ("r1", "r2"):
                    gain = {"A": 0.0, "B": 0.3, "C": 0.8 if cls == "long" else 0.0}[s]
                    rows.append((f"i{i:02d}", s, k, r, cls, gain + u_item[i] + u_rater[r] + u_seed[(s, k)]
                                 + rng.normal(0, 0.5)))
    return pd.DataFrame(rows, columns=["item", "system", "seed", "rater", "cls", "score"])


RANDOM = " + (1|item) + (1|system:seed) + (1|rater)"


@pytest.fixture(scope="module")
def interaction_report():
    with pytest.warns(Warning):  # few seeds: the FewLevelsWarning, said once
        return build_report(Study(_log(), "score ~ system * cls" + RANDOM), conditional_on="cls", progress=False)


def test_a_report_states_the_version_the_date_and_the_call(interaction_report):
    meta = interaction_report.meta
    assert meta["mixeval"] == mixeval.__version__
    assert meta["date"].startswith(datetime.now().astimezone().strftime("%Y-%m-%d")[:7])
    assert meta["call"] == ("build_report(Study(data, 'score ~ system * cls + (1|item) + (1|system:seed) + (1|rater)', "
                            "item='item', system='system'), conditional_on='cls')")
    assert meta["rows"] == "480"
    html, text = interaction_report.to_html(), interaction_report.to_text()
    for value in (meta["mixeval"], meta["date"], "conditional_on=&#x27;cls&#x27;"):
        assert value in html
    assert f"mixeval: {mixeval.__version__}" in text


def test_every_report_gets_the_version_and_date_unless_given():
    assert set(Report("plain", (Section("s", (Note("n"),)),)).meta) == {"mixeval", "date"}
    given = Report("plain", (), {"mixeval": "9.9", "date": "then"})
    assert dict(given.meta) == {"mixeval": "9.9", "date": "then"}


def test_the_command_line_report_names_its_command_and_data(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _log().to_csv("scores.csv", index=False)
    argv = ["report", "scores.csv", "--score", "score", "--system", "system", "--item", "item", "--facet", "rater",
            "--facet", "system:seed", "--out", "r.html"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    command = "mixeval " + " ".join(argv)
    assert "data: scores.csv" in html and command in html and "call:" not in html
    assert re.search(r"data: scores\.csv; formula: .*rows: 480", " ".join(text.split()))


def test_the_comparisons_define_their_terms(interaction_report):
    section = interaction_report.section("Do the systems differ?")
    note = next(b.text for b in section.blocks if isinstance(b, Note) and b.text.startswith("Fit:"))
    assert "adjusted by Tukey's method (studentized range) for comparing a family of 3 estimates" in note
    assert "pvalue_unadjusted: the same test without adjustment" in note
    assert "95% confidence interval" in note
    assert "effect_size = estimate / residual SD" in note and "standardised mean difference" in note


def test_the_estimated_marginal_mean_is_spelled_out(interaction_report):
    section = interaction_report.sections[-1]
    means = next(t.data for t in section.tables if t.caption.startswith("Means per"))
    assert "estimated marginal mean" in means.columns and "emmean" not in means.columns
    assert any(isinstance(b, Note) and b.text.startswith("estimated marginal mean: the model's mean")
               for b in section.blocks)
    assert "emmean " not in interaction_report.to_text().replace("emmeans' emmean)", "")


def test_averaging_over_an_interaction_carries_a_caveat(interaction_report):
    section = interaction_report.section("Do the systems differ?")
    cautions = [b.text for b in section.blocks if isinstance(b, Note) and b.kind == "warning"]
    caveats = [text for text in cautions if "average over" in text]  # beside the warnings the fit raised
    assert len(caveats) == 1 and "average over cls" in caveats[0]
    assert "Comparisons conditional on cls" in caveats[0]


def test_no_caveat_without_an_interaction():
    with warnings.catch_warnings():  # whatever the fit warns, the caveat is the point here
        warnings.simplefilter("ignore")
        report = build_report(Study(_log(), "score ~ system + cls" + RANDOM), progress=False)
    section = report.section("Do the systems differ?")
    assert not [b for b in section.blocks if isinstance(b, Note) and "average over" in b.text]


def test_no_test_is_printed_twice(interaction_report):
    """The study's model already has the interaction, so its omnibus test and the conditional 'systems within
    each class' test are one test: it is printed once; and the text shows no test both as a line and a table."""
    text = interaction_report.to_text()
    chi2 = re.findall(r"chi2 = [^,]+, df = \d+", " ".join(text.split()))
    assert len(chi2) == len(set(chi2)) == 2  # the omnibus test and the interaction test
    assert "statistic  df" not in text  # no one-row test table under its own summary line
    conditional = interaction_report.sections[-1]
    assert not any(t.caption.startswith("Test of the systems within") for t in conditional.tables)
    assert any(isinstance(b, Note) and "is the likelihood-ratio test of 'Do the systems differ?'" in b.text
               for b in conditional.blocks)
