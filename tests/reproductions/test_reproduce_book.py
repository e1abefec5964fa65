"""`mixeval reproduce` recomputes the book's tables from the book data (reference values: DESIGN.md / R)."""

from __future__ import annotations

import json

import pytest

from mixeval import reproductions
from mixeval.cli import main


def _pct(name, bookdata):
    table = reproductions.get(name)(bookdata)
    return table.set_index("component").percent


def _percent_of(values: dict[str, float]) -> dict[str, float]:
    total = sum(values.values())
    return {k: 100 * v / total for k, v in values.items()}


def test_tables_3_1_3_2_3_8_3_10(bookdata):
    assert _pct("table-3.1", bookdata)["sentence"] == pytest.approx(12.05, abs=0.01)
    assert _pct("table-3.2", bookdata)["sentence"] == pytest.approx(60.43, abs=0.01)
    assert _pct("table-3.8", bookdata)["sentence_id"] == pytest.approx(82.13, abs=0.01)
    assert _pct("table-3.10", bookdata)["sentence_id"] == pytest.approx(86.03, abs=0.01)


def test_table_3_11_all_components(bookdata):
    # DESIGN.md (lme4 1.1-31): variances of Table 3.11
    ref = _percent_of({"sentence_id": 0.1087306, "learning_rate": 4.133e-4, "encoder_dropout": 9.784e-5,
                       "decoder_dropout_hidden": 1.475e-5, "decoder_dropout": 6.716e-6, "seed": 1.663e-6,
                       "Residual": 0.01730428})
    ours = _pct("table-3.11", bookdata)
    for k, v in ref.items():
        assert ours[k] == pytest.approx(v, abs=0.01), k


def test_table_3_9_with_the_confounded_pair(bookdata):
    # encoder_dropout and decoder_dropout_hidden partition the partial grid identically: only their sum is
    # identified (lme4 splits it arbitrarily: 1.251e-4 / 1.278e-4 in DESIGN.md)
    ref = _percent_of({"sentence_id": 0.09049537, "learning_rate": 8.010e-4, "pair": 1.278e-4 + 1.251e-4,
                       "seed": 1.326e-5, "decoder_dropout": 0.0, "Residual": 0.01894499})
    ours = _pct("table-3.9", bookdata)
    pair = ours["encoder_dropout"] + ours["decoder_dropout_hidden"]
    assert pair == pytest.approx(ref["pair"], abs=0.01)
    for k in ("sentence_id", "learning_rate", "seed", "decoder_dropout", "Residual"):
        assert ours[k] == pytest.approx(ref[k], abs=0.01), k


def test_table_3_4_against_lme4_at_its_optimum(bookdata):
    # DESIGN.md's 31.07 % / 61.09 % are lme4's default optimiser stopping on a flat ridge; lme4 with a tight
    # optimiser (tests/mixed/fixtures/make_lme4_tight_fixtures.R) and mixeval reach a lower REML criterion with
    # hidden_number 30.99 %. The book's own Table 3.4 prints 31.0 % and 61.2 %.
    tight = json.loads((__import__("pathlib").Path(__file__).parents[1] / "mixed" / "fixtures" /
                        "lme4_tight_fixtures.json").read_text())
    ref = _percent_of(next(f for f in tight["fits"] if f["name"] == "table3.4_liver_reml")["variances"])
    ours = _pct("table-3.4", bookdata)
    for k, v in ref.items():
        assert ours[k] == pytest.approx(v, abs=0.01), k
    assert ours["hidden_number"] == pytest.approx(31.0, abs=0.05)  # book Table 3.4
    assert ours["Residual"] == pytest.approx(61.2, abs=0.05)


def test_table_4_1(bookdata):
    t = reproductions.get("table-4.1")(bookdata)
    assert t.statistic[0] == pytest.approx(1.3206, abs=5e-5)
    assert t.statistic[1] == pytest.approx(34.09, abs=5e-3)
    assert t.pvalue[0] == pytest.approx(0.517, abs=5e-4)
    assert t.pvalue[1] == pytest.approx(3.96e-8, abs=1e-4)
    assert t.df.tolist() == [2, 2]


def test_figure_3_3(bookdata):
    t = reproductions.get("figure-3.3")(bookdata)
    assert len(t) == 2 * 12 * 5
    one = t[(t.rater == 1) & (t.instantiation == 1)].set_index("mode").phi
    assert one["Post Edit"] == pytest.approx(0.60, abs=0.01)
    assert one["Marking"] == pytest.approx(0.12, abs=0.01)


def test_cli_json_rows(bookdata, capsys):
    assert main(["reproduce", "table-3.1", "--data", str(bookdata), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert {"component", "variance", "percent"} <= set(rows[0])
    assert main(["reproduce", "table-4.1", "--data", str(bookdata), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert {"statistic", "df", "pvalue"} <= set(rows[0])
    assert main(["reproduce", "no-such-table"]) == 2
    assert "available: figure-3.3" in capsys.readouterr().err


def test_table_4_2_tukey(bookdata):
    t = reproductions.get("table-4.2")(bookdata).set_index("contrast")
    assert t.loc["Baseline - Marking", "estimate"] == pytest.approx(0.01234, abs=5e-6)
    assert t.loc["Baseline - Marking", "se"] == pytest.approx(0.00211, abs=5e-6)
    assert t.loc["Baseline - Marking", "pvalue"] < 1e-4
    assert t.loc["Baseline - PostEdit", "estimate"] == pytest.approx(0.00962, abs=5e-6)
    assert t.loc["Baseline - PostEdit", "pvalue"] < 1e-4
    assert t.loc["Marking - PostEdit", "estimate"] == pytest.approx(-0.00272, abs=5e-6)
    assert t.loc["Marking - PostEdit", "se"] == pytest.approx(0.00149, abs=5e-6)
    assert t.loc["Marking - PostEdit", "pvalue"] == pytest.approx(0.1625, abs=1e-4)


def test_table_4_3_tukey_by_class(bookdata):
    t = reproductions.get("table-4.3")(bookdata)
    expected = {  # DESIGN.md: Tukey p per class, contrasts in emmeans order
        "short": [0.0000, 0.0002, 0.2683],
        "typical": [0.0175, 0.2098, 0.3052],
        "very long": [0.0003, 0.0000, 0.0252],
    }
    for cls, ps in expected.items():
        got = t[t["by"] == cls].pvalue.tolist()
        assert got == pytest.approx(ps, abs=1e-4), cls


def test_figure_3_5_meta_parameter_by_class(bookdata, lme4_fixtures):
    t = reproductions.get("figure-3.5")(bookdata)
    ref = lme4_fixtures.section("emmeans", "figure3.5_delta_by_class")["contrasts"]["tukey"]
    for row, r in zip(t.itertuples(), ref):
        assert row.by == r["src_length_class"]
        assert row.estimate == pytest.approx(r["estimate"], abs=1e-6)
        assert row.se == pytest.approx(r["SE"], rel=1e-4)
        assert row.pvalue == pytest.approx(r["p_value"], abs=1e-4)
