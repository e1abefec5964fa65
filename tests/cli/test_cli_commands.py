"""The command line: fit, compare, reliability, significance, report, demo (JSON shapes, numbers, errors)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mixeval.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "mixed" / "fixtures"


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_fit_json_matches_lme4_names_and_values(capsys, lme4_fixtures):
    case = lme4_fixtures.fit("syn_nested_site_rater_reml")
    out = _json(capsys, ["fit", str(FIXTURES / case["data"]), case["formula"], "--json"])
    assert {"nobs", "reml", "loglik", "varcorr", "fixef", "singular"} <= set(out)
    assert set(out["varcorr"]) == {"site", "rater:site", "Residual"}  # lme4's names for (1|site/rater)
    ref = {r["group"]: r["variance"] for r in case["varcorr"]}
    for g, v in ref.items():
        assert out["varcorr"][g] == pytest.approx(v, rel=1e-4)
    assert out["loglik"] == pytest.approx(case["loglik"], rel=1e-6)
    assert out["fixef"]["x"] == pytest.approx(case["fixef"]["x"], abs=1e-6)
    assert out["reml"] is True and out["nobs"] == case["nobs"]
    ml = _json(capsys, ["fit", str(FIXTURES / case["data"]), case["formula"], "--ml", "--json"])
    assert ml["reml"] is False and ml["loglik"] == pytest.approx(lme4_fixtures.fit("syn_nested_site_rater_ml")["loglik"], rel=1e-6)


def test_compare_json_table_4_1(capsys, bookdata):
    out = _json(capsys, ["compare", str(bookdata / "mt_ter.csv.gz"), "ter ~ system + (1|sentence_id)",
                         "ter ~ 1 + (1|sentence_id)", "--json"])
    assert out["statistic"] == pytest.approx(34.0895, abs=1e-3)
    assert out["df"] == 2 and out["pvalue"] == pytest.approx(3.96e-8, abs=1e-9)


def test_errors_exit_2_and_name_the_column(capsys, bookdata):
    assert main(["fit", str(bookdata / "mt_ter.csv.gz"), "ter ~ sys + (1|sentence_id)"]) == 2
    err = capsys.readouterr().err
    assert "'sys'" in err and "available columns: sentence_id, system" in err
    assert main(["fit", "no_such.csv", "y ~ 1"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_reliability_json_table_3_2_and_designer(capsys, bookdata, tmp_path):
    import pandas as pd

    ann = pd.read_csv(bookdata / "mt_annotation.csv.gz")
    path = tmp_path / "post.csv"
    ann[ann["mode"] == "Post Edit"].to_csv(path, index=False)
    formula = "score ~ (1|sentence)+(1|rater)+(1|occasion)+(1|rater:sentence)+(1|occasion:rater)+(1|occasion:sentence)"
    out = _json(capsys, ["reliability", str(path), formula, "--item", "sentence", "--n", "rater=2", "occasion=2",
                         "--grid", "rater=1:12", "occasion=1:5", "--json"])
    pct = {r["component"]: r["percent"] for r in out["rows"]}
    assert pct["sentence"] == pytest.approx(60.43, abs=0.01)
    assert out["phi"] == pytest.approx(0.788, abs=0.001)
    assert out["design"]["n"] == {"rater": 3, "occasion": 1}
    assert len(out["dstudy"]) == 60


def test_significance_json_tables_4_2_and_4_3(capsys, bookdata):
    ter = str(bookdata / "mt_ter.csv.gz")
    out = _json(capsys, ["significance", ter, "ter ~ system + (1|sentence_id)", "--json"])
    rows = {r["contrast"]: r for r in out["rows"]}
    assert rows["Marking - PostEdit"]["pvalue"] == pytest.approx(0.1625, abs=1e-4)
    out = _json(capsys, ["significance", ter, "ter ~ system + (1|sentence_id)", "--by", "src_length",
                         "--cuts", "15,55", "--labels", "short,typical,very long", "--json"])
    assert out["glrt"]["statistic"] == pytest.approx(66.52, abs=0.01) and out["glrt"]["df"] == 6
    short = [r["pvalue"] for r in out["rows"] if r["src_length_class"] == "short"]
    assert short == pytest.approx([0.0000, 0.0002, 0.2683], abs=1e-4)


def test_report_on_mt_ter_reproduces_tables_4_1_to_4_3(capsys, bookdata, tmp_path):
    html = tmp_path / "r.html"
    assert main(["report", str(bookdata / "mt_ter.csv.gz"), "--score", "ter", "--system", "system",
                 "--item", "sentence_id", "--by", "src_length", "--cuts", "15,55",
                 "--labels", "short,typical,very long", "--out", str(html)]) == 0
    text = capsys.readouterr().out
    assert re.search(r"chi2 = 34\.0[89]", text)             # Table 4.1 (LMEM)
    assert re.search(r"Marking - PostEdit .* 0\.16[23] ", text)  # Table 4.2's 0.1625 (Tukey), to 3 digits
    assert re.search(r"chi2 = 66\.5[12]", text)               # Table 4.3
    assert html.exists() and "data:image/png;base64" in html.read_text()


def test_report_errors_list_columns_and_hint_long_format(capsys, tmp_path):
    import pandas as pd

    wide = tmp_path / "wide.csv"
    pd.DataFrame({"item": range(6), "sysA": range(6), "sysB": range(6)}).to_csv(wide, index=False)
    assert main(["report", str(wide), "--score", "score", "--system", "system", "--item", "item"]) == 2
    err = capsys.readouterr().err
    assert "available columns: item, sysA, sysB" in err
    assert "melt" in err  # the long-format hint


def test_demo_states_recovery_of_the_true_components(capsys, tmp_path):
    out = _json(capsys, ["demo", "--out", str(tmp_path / "demo.html"), "--json"])
    assert Path(out["html"]).exists()
    assert main(["demo", "--out", str(tmp_path / "demo2.html")]) == 0
    text = capsys.readouterr().out
    zs = [float(z) for z in re.findall(r"\(([+-]\d+\.\d+) SE\)", text)]
    assert len(zs) == 5 and max(abs(z) for z in zs) < 3  # each true variance within 3 SE of its estimate
