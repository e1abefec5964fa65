"""phi, its relatives and the D-study: closed forms, the book's Tables 3.1/3.2 and Figure 3.3."""

from __future__ import annotations

import pytest

from mixeval import reliability as R
from mixeval.errors import InputError

COMPS = {"s": 4.0, "r": 1.0, "i": 0.5, "r:s": 2.0, "i:s": 1.0, "i:r": 0.25, "Residual": 2.0}


def test_phi_is_eq_3_11_by_hand():
    n = {"r": 3, "i": 2}
    delta = 1.0 / 3 + 0.5 / 2 + 2.0 / 3 + 1.0 / 2 + 0.25 / 6 + 2.0 / 6
    assert R.phi(COMPS, "s", n) == pytest.approx(4 / (4 + delta), rel=1e-14)
    rel = 2.0 / 3 + 1.0 / 2 + 2.0 / 6  # only components interacting with the items
    assert R.phi(COMPS, "s", n, kind="relative") == pytest.approx(4 / (4 + rel), rel=1e-14)
    # all n = 1: the items' share of the total variance
    assert R.phi(COMPS, "s") == pytest.approx(4 / sum(COMPS.values()))


def test_intra_inter_rater_by_hand():
    assert R.intra_rater(COMPS, "s", "r", "i") == pytest.approx((4 + 2) / (4 + 2 + 1 + 2))
    assert R.inter_rater(COMPS, "s", "r", "i") == pytest.approx((4 + 1) / (4 + 1 + 2 + 2))


def test_errors_name_the_problem():
    with pytest.raises(InputError, match="'sentence' are not a variance component"):
        R.phi(COMPS, "sentence")
    with pytest.raises(InputError, match="'judge', which is not a facet"):
        R.phi(COMPS, "s", {"judge": 2})
    with pytest.raises(InputError, match=">= 1"):
        R.phi(COMPS, "s", {"r": 0})
    with pytest.raises(InputError, match="'Residual'"):
        R.phi({"s": 1.0}, "s")
    with pytest.raises(InputError, match="0/0"):
        R.phi({"s": 0.0, "Residual": 0.0}, "s")
    with pytest.raises(InputError, match="`target` must lie strictly between 0 and 1"):
        R.cheapest_design(COMPS, "s", 1.5, max_n={"r": 3})


def test_cheapest_design_respects_costs():
    comps = {"s": 4.0, "r": 1.0, "r:s": 2.0, "Residual": 2.0}
    # phi(r = 3) = 0.706 is the first >= 0.7
    assert R.cheapest_design(comps, "s", 0.7, max_n={"r": 10}).n == {"r": 3}
    none = R.cheapest_design(comps, "s", 0.99, max_n={"r": 5})
    assert not none.reached and "no design" in none.summary()


def _annotation_fit(lme4_fixtures, mode):
    from mixeval.mixed import lmer

    df = lme4_fixtures.data(lme4_fixtures.fit("table3.1_marking_reml"))  # same file; filter by mode below
    import pandas as pd

    raw = pd.read_csv(lme4_fixtures.bookdata / "mt_annotation.csv.gz")
    return lmer("score ~ (1|sentence)+(1|rater)+(1|occasion)+(1|rater:sentence)+(1|occasion:rater)+(1|occasion:sentence)",
                raw[raw["mode"] == mode])


@pytest.mark.filterwarnings("ignore")
def test_tables_3_1_and_3_2_percentages(lme4_fixtures):
    # DESIGN.md: Marking sentence 12.05 %, Post Edit sentence 60.43 %; the book's tables
    marking = R.variance_table(_annotation_fit(lme4_fixtures, "Marking")).set_index("component").percent
    assert marking["sentence"] == pytest.approx(12.05, abs=0.01)
    assert marking["rater"] == pytest.approx(14.2, abs=0.05)
    assert marking["rater:sentence"] == pytest.approx(16.1, abs=0.05)
    assert marking["Residual"] == pytest.approx(57.6, abs=0.05)
    post = R.variance_table(_annotation_fit(lme4_fixtures, "Post Edit")).set_index("component").percent
    assert post["sentence"] == pytest.approx(60.43, abs=0.01)
    assert post["rater:sentence"] == pytest.approx(23.7, abs=0.05)
    assert post["occasion:rater"] == pytest.approx(0.8, abs=0.05)


@pytest.mark.filterwarnings("ignore")
def test_figure_3_3_dstudy_and_designer(lme4_fixtures):
    post = _annotation_fit(lme4_fixtures, "Post Edit")
    marking = _annotation_fit(lme4_fixtures, "Marking")
    # Post Edit: about 0.6 at one rater and one instantiation, about 0.8 at two and two
    assert R.phi(post, "sentence") == pytest.approx(0.604, abs=0.005)
    assert R.phi(post, "sentence", {"rater": 2, "occasion": 2}) == pytest.approx(0.79, abs=0.01)
    assert R.phi(post, "sentence", {"rater": 2, "occasion": 2}, kind="relative") == pytest.approx(0.80, abs=0.005)
    # Marking: 12 % at one and one; >= 0.8 needs 10-12 raters with 3-5 instantiations (the book's reading of
    # Figure 3.3, whose lower panel is the relative coefficient; the absolute one stays below 0.78 up to 12 x 5)
    assert R.phi(marking, "sentence") == pytest.approx(0.12, abs=0.005)
    choice = R.cheapest_design(marking, "sentence", 0.8, max_n={"rater": 12, "occasion": 5}, kind="relative")
    frontier = {(int(r.rater), int(r.occasion)) for r in choice.frontier.itertuples()}
    assert frontier == {(10, 5), (11, 4), (12, 3)}
    assert choice.n == {"rater": 12, "occasion": 3}  # fewest ratings per sentence (36)
    by_raters = R.cheapest_design(marking, "sentence", 0.8, max_n={"rater": 12, "occasion": 5}, kind="relative",
                                  cost_per_unit={"rater": 100.0}, cost_per_observation=1.0)
    assert by_raters.n == {"rater": 10, "occasion": 5}  # raters expensive: fewest raters
    absolute = R.cheapest_design(marking, "sentence", 0.8, max_n={"rater": 12, "occasion": 5})
    assert not absolute.reached
    grid = R.dstudy(post, "sentence", {"rater": range(1, 13), "occasion": range(1, 6)})
    assert len(grid) == 60 and grid.phi.is_monotonic_increasing is False  # a grid, not a single curve
    assert grid.groupby("occasion").phi.apply(lambda s: s.is_monotonic_increasing).all()
