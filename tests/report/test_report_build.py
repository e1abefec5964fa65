"""build_report: a Study's numbers end up unchanged in the report's tables and summary lines."""

from __future__ import annotations

import importlib.util

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from mixeval.errors import InputError  # noqa: E402
from mixeval.report import Note, build_report, default_dstudy_grid  # noqa: E402

study_module = pytest.importorskip("mixeval.study", reason="mixeval.study (the lead's Study) is not there yet")
HAS_PAIRWISE = importlib.util.find_spec("mixeval.significance") is not None


def _small_log(seed: int = 3) -> pd.DataFrame:
    """30 items x 3 systems x 2 seeds (nested) x 2 raters; known components, small enough to fit fast."""
    rng = np.random.default_rng(seed)
    systems, seeds, raters = ["A", "B", "C"], [1, 2], ["r1", "r2"]
    u_item = rng.normal(0, 1.0, 30)
    u_rater = dict(zip(raters, rng.normal(0, 0.5, 2)))
    u_seed = {(s, k): rng.normal(0, 0.3) for s in systems for k in seeds}
    u_item_rater = rng.normal(0, 0.4, (30, 2))
    effect = {"A": 0.0, "B": 0.5, "C": 0.8}
    rows = [
        (f"i{i:02d}", s, k, r, 5 + 3 * i, effect[s] + u_item[i] + u_rater[r] + u_seed[(s, k)]
         + u_item_rater[i, j] + rng.normal(0, 0.6))
        for i in range(30) for s in systems for k in seeds for j, r in enumerate(raters)
    ]
    return pd.DataFrame(rows, columns=["item", "system", "seed", "rater", "length", "score"])


@pytest.fixture(scope="module")
def study():
    return study_module.Study(_small_log(), "score ~ system + (1|item) + (1|system:seed) + (1|rater) + (1|item:rater)")


@pytest.fixture(scope="module")
def report(study):
    return build_report(study, progress=False)


def test_sections_and_meta(report, study):
    assert [s.title for s in report.sections] == ["Data", "Variance components and reliability", "Do the systems differ?"]
    assert report.meta["formula"] == study.formula and report.meta["rows"] == "360"
    assert report.sections[0].summary[0] == "360 rows: 30 items x 3 systems; facets: rater (2 levels), seed (2 levels)"


def test_default_dstudy_grid_puts_item_facets_first(study):
    assert default_dstudy_grid(study) == {"rater": list(range(1, 11)), "seed": [1, 2, 3]}


def test_variance_and_reliability_numbers_are_the_studys(report, study):
    section = report.section("Variance components and reliability")
    vc = section.tables[0].data
    expected = study.variance_components()
    np.testing.assert_allclose(vc["variance"], expected["variance"], rtol=0, atol=0)
    coefficients = section.tables[1].data
    own = study.data_design()
    assert own == {"seed": 2, "rater": 2}  # per item and system: 2 seeds, 2 raters
    # the data's own design leads, then one level of each facet (issue 41 item 3: every phi names its design)
    assert list(coefficients["coefficient"]) == [
        "phi at the data's design (seed = 2, rater = 2)", "relative at the data's design (seed = 2, rater = 2)",
        "phi at one level of each facet", "relative at one level of each facet"]
    np.testing.assert_array_equal(coefficients["value"], [study.phi(own), study.phi(own, kind="relative"),
                                                          study.phi(), study.phi(kind="relative")])
    assert f"reliability phi at the data's design (seed = 2, rater = 2) = {study.phi(own):.4f}" in section.summary
    grid = section.tables[2].data
    pd.testing.assert_frame_equal(grid, study.dstudy(default_dstudy_grid(study)))
    assert len(section.figures) == 2


def test_dstudy_grid_sets_the_facet_sizes(study):
    section = build_report(study, dstudy_grid={"seed": [1, 4], "rater": [2]}, progress=False).section(
        "Variance components and reliability")
    grid = section.tables[2].data
    pd.testing.assert_frame_equal(grid, study.dstudy({"seed": [1, 4], "rater": [2]}))
    assert len(grid) == 2 and section.figures[-1].caption == "D-study: phi against seed"


def test_glrt_line_is_the_studys_test(report, study):
    section = report.section("Do the systems differ?")
    glrt = study.glrt()
    omnibus = section.tables[0].data
    assert omnibus["statistic"].item() == pytest.approx(glrt.statistic, rel=1e-9)
    assert omnibus["p.value"].item() == pytest.approx(glrt.pvalue, rel=1e-9)
    assert omnibus["df"].item() == 2
    notes = [b for b in section.blocks if isinstance(b, Note) and b.kind == "note"]  # warnings: their own notes
    if HAS_PAIRWISE:
        assert len(section.tables) == 2 and len(notes) == 1
        assert notes[0].text.startswith("Fit: REML; degrees of freedom: Kenward-Roger (the default: emmeans' for lmer "
                                        "fits of up to 3,000 observations (360 here))")
    else:  # said plainly in the report, not dropped silently
        assert notes and "pairwise comparisons unavailable" in notes[0].text


def test_report_renders(report, tmp_path):
    path = report.save(tmp_path / "r.html")
    html = path.read_text(encoding="utf-8")
    assert html.count("<img ") == 3
    assert "Do the systems differ?" in report.to_text()


@pytest.mark.skipif(not HAS_PAIRWISE, reason="conditional comparisons need mixeval.significance (emmeans)")
def test_conditional_section(study):
    rep = build_report(study, conditional_on="length", cuts=(30,), labels=("short", "long"), progress=False)
    section = rep.sections[-1]
    assert section.title == "Comparisons conditional on length"
    assert len(section.figures) == 1 and len(section.tables) == 4


@pytest.mark.skipif(not HAS_PAIRWISE, reason="conditional comparisons need mixeval.significance (emmeans)")
def test_conditional_section_holds_the_systems_test_and_the_interaction_test(study):
    """Each table holds the test its caption names: ML fits of system * cls against cls (every system term) and
    against system + cls (the interaction), computed here from the three fits."""
    from mixeval import lmer

    log = _small_log()
    log["cls"] = np.where(log["length"] <= 60, "short", "long")
    random = " + (1|item) + (1|system:seed) + (1|rater) + (1|item:rater)"
    full, no_system, additive = (lmer(f"score ~ {fixed}{random}", log, REML=False).loglik
                                 for fixed in ("system * cls", "cls", "system + cls"))
    rep = build_report(study_module.Study(log, "score ~ system" + random), conditional_on="cls", progress=False)
    tables = {t.caption: t.data.iloc[0] for t in rep.sections[-1].tables if "Test of" in t.caption}
    within = tables["Test of the systems within each cls (system * cls against cls)"]
    interaction = tables["Test of the interaction (system * cls against system + cls)"]
    assert within["df"] == 4 and within["statistic"] == pytest.approx(2 * (full - no_system), rel=1e-6)
    assert interaction["df"] == 2 and interaction["statistic"] == pytest.approx(2 * (full - additive), rel=1e-6)
    assert interaction["statistic"] < within["statistic"]


def test_study_without_system_is_rejected():
    log = _small_log()
    study = study_module.Study(log, "score ~ 1 + (1|item) + (1|rater)")
    with pytest.raises(InputError, match="no system factor"):
        build_report(study, progress=False)
    with pytest.raises(TypeError, match="Study"):
        build_report(log, progress=False)


@pytest.mark.filterwarnings("ignore")
def test_a_slope_model_reports_without_the_reliability_section_and_says_why():
    study = study_module.Study(_small_log(), "score ~ system + (1 + system|item) + (1|rater)", system="system")
    rep = build_report(study, progress=False)
    assert [s.title for s in rep.sections] == ["Data", "Variance components and reliability", "Do the systems differ?"]
    section = rep.section("Variance components and reliability")
    assert not section.tables and not section.figures
    assert "random slopes (1 + system|item)" in rep.to_text() and "(1|item) + (1|item:system)" in rep.to_text()
    assert rep.section("Do the systems differ?").tables[0].data["df"].iloc[0] == 2
