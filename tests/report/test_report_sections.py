"""Tests of the ready-made report sections and of the evaluation-log checks.

Reference numbers: book Tables 3.2, 3.8, 4.1-4.3 as listed in DESIGN.md (lme4/emmeans), and
closed forms computed here by hand.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from mixeval import TestResult, datasets  # noqa: E402
from mixeval.errors import ColumnError, InputError  # noqa: E402
from mixeval.report import (  # noqa: E402
    Figure,
    Note,
    Report,
    Table,
    check_evaluation_log,
    comparison_section,
    conditional_section,
    data_section,
    long_format_hint,
    result_table,
    variance_section,
)


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return datasets.load_demo()


# --------------------------------------------------------------------------- checks


def test_missing_column_lists_available_columns(demo):
    with pytest.raises(ColumnError) as info:
        check_evaluation_log(demo, score="bleu", system="system", item="item")
    message = str(info.value)
    assert "'bleu'" in message
    assert "available columns: item, system, seed, rater, src_length, length_class, score" in message
    assert "wide" not in message  # the demo is long format: no reshaping hint


def test_wide_table_gets_a_long_format_hint(demo):
    wide = demo.pivot_table(index="item", columns="system", values="score").reset_index()
    with pytest.raises(ColumnError) as info:
        check_evaluation_log(wide, score="score", system="system", item="item")
    message = str(info.value)
    assert "available columns: item, baseline, system_a, system_b" in message
    assert "looks wide" in message and "pandas.melt(data, id_vars=['item']" in message
    assert "var_name='system', value_name='score'" in message
    # the hint's recipe works
    long = wide.melt(id_vars=["item"], value_vars=["baseline", "system_a", "system_b"], var_name="system",
                     value_name="score")
    check_evaluation_log(long, score="score", system="system", item="item")
    assert long_format_hint(demo, ["score", "system", "item"]) == ""


def test_bad_roles_are_explained(demo):
    with pytest.raises(InputError, match="more than one role"):
        check_evaluation_log(demo, score="score", system="system", item="system")
    with pytest.raises(InputError, match="must be numeric"):
        check_evaluation_log(demo, score="rater", system="system", item="item")
    with pytest.raises(InputError, match="1 level"):
        check_evaluation_log(demo[demo["system"] == "baseline"], score="score", system="system", item="item")
    check_evaluation_log(demo, score="score", system="system", item="item", facets="rater")  # str facet ok
    with pytest.raises(InputError, match="single level"):
        check_evaluation_log(demo[demo["rater"] == "r1"], score="score", system="system", item="item",
                             facets="rater")
    with pytest.raises(InputError, match="missing value"):
        check_evaluation_log(demo.assign(rater=demo["rater"].where(demo.index != 5)), score="score",
                             system="system", item="item", facets=["rater"])
    with pytest.raises(InputError, match="as many levels as rows"):
        check_evaluation_log(demo.assign(row=np.arange(len(demo))), score="score", system="system", item="row")
    with pytest.raises(TypeError, match="column name"):
        check_evaluation_log(demo, score="score", system=["system"], item="item")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- data section


def test_data_section_on_demo(demo):
    before = demo.copy()
    section = data_section(demo, score="score", system="system", item="item", facets=["seed", "rater"])
    pd.testing.assert_frame_equal(demo, before)
    per_system = section.tables[1].data
    expected = demo.groupby("system")["score"].agg(["size", "mean", "std", "median", "min", "max"])
    np.testing.assert_allclose(per_system[["n", "mean", "sd", "median", "min", "max"]].to_numpy(dtype=float),
                               expected.to_numpy(dtype=float), rtol=1e-12)
    assert per_system.index.tolist() == ["baseline", "system_a", "system_b"]
    design = section.tables[0].data
    assert design["levels"].tolist()[1:] == [3, 200, 3, 4]
    assert section.summary[1].startswith("mean score per system: baseline ")
    assert len(section.figures) == 1
    assert not [b for b in section.blocks if isinstance(b, Note)]  # balanced: no note


def test_data_section_notes_an_unbalanced_design(demo):
    section = data_section(demo.iloc[5:], score="score", system="system", item="item")
    notes = [b for b in section.blocks if isinstance(b, Note)]
    assert len(notes) == 1 and "unbalanced" in notes[0].text and "7 to 12" in notes[0].text


# --------------------------------------------------------------------------- variance section


def test_variance_section_table_3_8_percent():
    vc = pd.DataFrame({"group": ["sentence_id", "Residual"], "variance": [0.09046723, 0.01968357]})
    section = variance_section(vc, formula="ter ~ (1|sentence_id)")
    assert section.summary == ("largest component: sentence_id, 82.13% of the total variance",)
    table = section.tables[0].data
    np.testing.assert_allclose(table["percent"], [82.1303, 17.8697], atol=5e-5)  # 0.09046723 / 0.1101508
    assert "percent" not in vc.columns  # input untouched
    assert not [b for b in section.blocks if isinstance(b, Note)]


def test_variance_section_shows_reference_values_beside_estimates():
    truth = datasets.load_demo_truth()["variance_components"]
    vc = pd.DataFrame({"component": ["item", "item:rater", "rater", "system:seed", "Residual", "extra"],
                       "variance": [58.46, 14.37, 16.84, 1.281, 34.65, 0.0]})
    table = variance_section(vc, reference=truth).tables[0].data
    assert table["true variance"].tolist()[:5] == [64.0, 16.0, 9.0, 2.25, 36.0]
    assert np.isnan(table["true variance"].iloc[5])
    with pytest.raises(InputError, match="not components"):
        variance_section(vc, reference={"residual": 36.0})


def _post_edit_dstudy() -> pd.DataFrame:
    """phi over raters x occasions from the book's Table 3.2 (Post Edit) variance components."""
    s2_s, s2_rs, s2_r, s2_or, s2_e = 0.04787343, 0.01874915, 0.001377437, 0.0006219792, 0.01059404
    rows = [(r, o, s2_s / (s2_s + (s2_r + s2_rs) / r + (s2_or + s2_e) / (r * o)))
            for r in range(1, 11) for o in (1, 2, 3)]
    return pd.DataFrame(rows, columns=["n_rater", "n_occasion", "phi"])


def test_variance_section_phi_dstudy_and_singular_note():
    vc = pd.DataFrame({"component": ["sentence", "rater:sentence", "rater", "instantiation:rater",
                                     "instantiation", "Residual"],
                       "variance": [0.04787343, 0.01874915, 0.001377437, 0.0006219792, 0.0, 0.01059404]})
    grid = _post_edit_dstudy()
    section = variance_section(vc, phi={"phi": 0.6043, "relative": 0.65}, dstudy=grid, dstudy_x="n_rater",
                               dstudy_trace="n_occasion")
    assert section.summary[0] == "largest component: sentence, 60.43% of the total variance"  # book: 60.43%
    assert "reliability phi = 0.6043" in section.summary and "reliability relative = 0.65" in section.summary
    # by hand: 2 raters x 1 occasion: delta = 0.020126/2 + 0.011216/2 = 0.015671, phi = 0.7534 < 0.8;
    # 2 x 2: 0.7881; 2 x 3: 0.8005 (6 ratings); 3 x 1: delta = 0.010447, phi = 0.8209 (3 ratings): cheapest
    phi_3_1 = grid.query("n_rater == 3 and n_occasion == 1")["phi"].item()
    assert phi_3_1 == pytest.approx(0.04787343 / (0.04787343 + 0.020126587 / 3 + 0.0112160192 / 3), rel=1e-12)
    assert round(phi_3_1, 4) == 0.8209
    assert grid.query("n_rater == 2 and n_occasion == 1")["phi"].item() < 0.8
    assert section.summary[-1] == "smallest design with phi >= 0.8: n_rater = 3, n_occasion = 1 (phi = 0.821)"
    notes = [b for b in section.blocks if isinstance(b, Note)]
    assert notes[0].kind == "warning" and "instantiation estimated at 0" in notes[0].text
    assert len(section.figures) == 2
    with pytest.raises(InputError, match="dstudy_x"):
        variance_section(vc, dstudy=grid)
    unreachable = variance_section(vc, dstudy=grid, dstudy_x="n_rater", dstudy_trace="n_occasion", threshold=0.99)
    assert unreachable.summary[-1] == "no design in the D-study grid reaches phi >= 0.99"


def test_variance_section_dstudy_y_picks_the_coefficient_column():
    """``dstudy_y`` plots and thresholds another coefficient of the grid (here the relative one)."""
    vc = pd.DataFrame({"component": ["sentence", "Residual"], "variance": [0.04787343, 0.01059404]})
    grid = _post_edit_dstudy()
    s2_s, s2_rs, s2_e = 0.04787343, 0.01874915, 0.01059404  # relative error: interactions with sentence only
    grid["relative"] = s2_s / (s2_s + s2_rs / grid["n_rater"] + s2_e / (grid["n_rater"] * grid["n_occasion"]))
    # by hand: 2 x 1: 0.04787343 / (0.04787343 + 0.009374575 + 0.00529702) = 0.76542 >= 0.76 (phi there: 0.7534);
    # 1 x 2: 0.6654; so the cheapest design reaching 0.76 is 2 raters x 1 occasion
    section = variance_section(vc, dstudy=grid, dstudy_x="n_rater", dstudy_trace="n_occasion",
                               dstudy_y="relative", threshold=0.76)
    assert section.summary[-1] == "smallest design with relative >= 0.76: n_rater = 2, n_occasion = 1 (relative = 0.765)"
    assert section.figures[-1].caption == "D-study: relative against n_rater"


# --------------------------------------------------------------------------- significance


TABLE_4_2 = pd.DataFrame({
    "contrast": ["Baseline - Marking", "Baseline - PostEdit", "Marking - PostEdit"],
    "estimate": [0.01234, 0.00962, -0.00272],
    "p.value": [1e-5, 2e-5, 0.1625],
})


def test_comparison_section_table_4_1_and_4_2():
    glrt = TestResult(statistic=34.09, pvalue=3.96e-8, df=2, method="GLRT")
    section = comparison_section(glrt, pairwise=TABLE_4_2, hypothesis="ter ~ system + (1|sentence_id) vs ter ~ 1 + (1|sentence_id)")
    assert section.summary == ("GLRT: chi2 = 34.09, df = 2, p = 3.96e-08",
                               "2 of 3 pairwise differences have p < 0.05")
    omnibus = section.tables[0].data
    assert omnibus.to_dict("records") == [{"test": "GLRT", "statistic": 34.09, "df": 2.0, "p.value": 3.96e-8}]
    assert section.text_tables  # the pairwise table is printed in the text summary
    tiny = comparison_section(TestResult(statistic=397.3, pvalue=1e-80, df=6, method="GLRT"))
    assert tiny.summary == ("GLRT: chi2 = 397.3, df = 6, p < 2.2e-16",)
    no_p = comparison_section(glrt, pairwise=TABLE_4_2.drop(columns="p.value"))
    assert len(no_p.summary) == 1
    with pytest.raises(TypeError, match="TestResult"):
        result_table({"statistic": 1.0})  # type: ignore[arg-type]


def test_conditional_section_table_4_3():
    # Tukey p-values per length class, book Table 4.3 (0.0000 written as 1e-5)
    contrasts = pd.DataFrame({
        "cls": np.repeat(["short", "typical", "very long"], 3),
        "contrast": ["Baseline - Marking", "Baseline - PostEdit", "Marking - PostEdit"] * 3,
        "p.value": [1e-5, 0.0002, 0.2683, 0.0175, 0.2098, 0.3052, 0.0003, 1e-5, 0.0252],
    })
    means = pd.DataFrame({"cls": np.repeat(["short", "typical", "very long"], 3),
                          "system": ["Baseline", "Marking", "PostEdit"] * 3,
                          "emmean": [0.35, 0.33, 0.34, 0.38, 0.37, 0.37, 0.45, 0.42, 0.43],
                          "SE": [0.01] * 9})
    glrt = TestResult(statistic=66.52, pvalue=2.1e-12, df=6, method="GLRT")
    interaction = TestResult(statistic=20.5, pvalue=4.0e-4, df=4, method="GLRT")
    section = conditional_section(means, x="cls", trace="system", y="emmean", se="SE", contrasts=contrasts, glrt=glrt,
                                  interaction=interaction)
    assert section.title == "Comparisons conditional on cls"
    assert section.summary == (
        "test of the systems within each cls (system * cls against cls): chi2 = 66.52, df = 6, p = 2.1e-12",
        "test of the interaction (system * cls against system + cls): chi2 = 20.5, df = 4, p = 0.0004",
        "2 of 3 pairwise differences for cls = short have p < 0.05",
        "1 of 3 pairwise differences for cls = typical have p < 0.05",
        "3 of 3 pairwise differences for cls = very long have p < 0.05",
    )
    assert [t.caption for t in section.tables] == [
        "Test of the systems within each cls (system * cls against cls)",
        "Test of the interaction (system * cls against system + cls)",
        "Means per cls and system", "Pairwise comparisons within each cls"]
    assert [t.data["df"].iloc[0] for t in section.tables[:2]] == [6, 4]
    assert len(section.figures) == 1


def test_full_report_from_sections_renders(demo):
    vc = pd.DataFrame({"component": ["item", "system:seed", "rater", "item:rater", "residual"],
                       "variance": [58.46, 1.281, 16.84, 14.37, 34.65]})
    report = Report(
        "Demo evaluation",
        (
            data_section(demo, score="score", system="system", item="item", facets=["seed", "rater"]),
            variance_section(vc, phi=0.5),
            comparison_section(TestResult(statistic=20.0, pvalue=4.5e-5, df=2, method="GLRT"), pairwise=TABLE_4_2),
        ),
        meta={"data": "demo_mt.csv"},
    )
    html = report.to_html()
    assert html.count("<img ") == 2 and html.count("<table ") == 2 + 2 + 2
    text = report.to_text()
    assert "- 7,200 rows: 200 items x 3 systems; facets: seed (3 levels), rater (4 levels)" in text
    assert "- GLRT: chi2 = 20, df = 2, p = 4.5e-05" in text
    assert "Baseline - Marking" in text  # pairwise table printed
    assert [len(s.figures) for s in report.sections] == [1, 1, 0]
    assert all(isinstance(b, Table) for b in report.sections[2].blocks)
    assert isinstance(report.sections[0].blocks[2], Figure)
