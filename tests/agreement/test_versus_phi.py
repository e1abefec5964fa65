"""alpha next to phi on the book's annotation data (Tables 3.1, 3.2; lme4 reference values)."""

from __future__ import annotations

import warnings

import krippendorff
import numpy as np
import pandas as pd
import pytest

from mixeval.agreement import alpha_vs_phi, phi_from_components
from mixeval.errors import InputError

# lme4 1.1-31 REML fits of score ~ (1|sentence)+(1|rater)+(1|instantiation)+(1|rater:sentence)
# +(1|instantiation:rater)+(1|instantiation:sentence) (DESIGN.md, Tables 3.1 and 3.2); zero components omitted
LME4 = {
    "Marking": {"sentence": 0.003041277, "rater": 0.003584573, "rater:sentence": 0.004073316,
                "Residual": 0.01454236},
    "Post Edit": {"sentence": 0.04787343, "rater:sentence": 0.01874915, "rater": 0.001377437,
                  "occasion:rater": 0.0006219792, "Residual": 0.01059404},
}


@pytest.fixture(scope="module")
def annotation(bookdata):
    return pd.read_csv(bookdata / "mt_annotation.csv.gz")


@pytest.fixture(scope="module")
def side_by_side(annotation):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # singular fits (instantiation components at 0) are expected
        return alpha_vs_phi(annotation, score="score", unit="sentence", rater="rater", occasion="occasion",
                            by="mode").set_index("mode")


@pytest.mark.parametrize("mode, book_percent", [("Marking", 12.0), ("Post Edit", 60.4)])
def test_phi_reproduces_tables_3_1_and_3_2(side_by_side, mode, book_percent):
    ref = LME4[mode]
    phi_single = ref["sentence"] / sum(ref.values())
    assert side_by_side.loc[mode, "phi_single"] == pytest.approx(phi_single, rel=1e-3)
    assert 100 * side_by_side.loc[mode, "phi_single"] == pytest.approx(book_percent, abs=0.1)
    expected_design, _ = phi_from_components(ref, unit="sentence", rater="rater", occasion="occasion",
                                             n_raters=10, n_occasions=3)
    assert side_by_side.loc[mode, "phi_design"] == pytest.approx(expected_design, rel=1e-3)


def test_alpha_matches_krippendorff_package_on_same_data(annotation, side_by_side):
    for mode, sub in annotation.groupby("mode"):
        wide = sub.assign(coder=sub["rater"].astype(str) + "@" + sub["occasion"].astype(str)).pivot(
            index="sentence", columns="coder", values="score")
        ref = krippendorff.alpha(reliability_data=wide.to_numpy().T, level_of_measurement="interval")
        assert side_by_side.loc[mode, "alpha"] == pytest.approx(ref, rel=1e-10)
    # both coefficients agree that Post Edit annotations are far more reliable than Marking
    assert side_by_side.loc["Post Edit", "alpha"] > 3 * side_by_side.loc["Marking", "alpha"]


def test_phi_formula_by_hand():
    v = {"s": 0.4, "r": 0.1, "i": 0.05, "r:s": 0.2, "i:s": 0.02, "i:r": 0.03, "Residual": 0.3}
    delta = 0.1 / 2 + 0.05 / 3 + 0.2 / 2 + 0.02 / 3 + 0.03 / 6 + 0.3 / 6
    phi, d = phi_from_components(v, unit="s", rater="r", occasion="i", n_raters=2, n_occasions=3)
    assert d == pytest.approx(delta) and phi == pytest.approx(0.4 / (0.4 + delta))


def test_synthetic_without_occasion_and_bad_names():
    rng = np.random.default_rng(1)
    truth = rng.normal(size=40)
    rater_bias = rng.normal(0, 0.3, size=5)
    df = pd.DataFrame([(u, r, truth[u] + rater_bias[r] + rng.normal(0, 0.5)) for u in range(40) for r in range(5)],
                      columns=["item", "rater", "y"])
    out = alpha_vs_phi(df, score="y", unit="item", rater="rater", level=0.9, n_resamples=300,
                       random_state=0)
    # population phi for one rating: 1 / (1 + 0.09 + 0.25) = 0.746
    assert 0.55 < out["phi_single"].iloc[0] < 0.9
    assert out["alpha_ci_low"].iloc[0] < out["alpha"].iloc[0] < out["alpha_ci_high"].iloc[0]
    with pytest.raises(InputError, match="identifier"):
        alpha_vs_phi(df.rename(columns={"rater": "the rater"}), score="y", unit="item", rater="the rater")
