"""A contrast that is 0 by the model's structure (the slopes of a covariate without an interaction with the system)
is reported as exactly 0 with a note and no test, never as a test with standard error 0 (issue 38, rough cases)."""

import numpy as np
import pandas as pd
import pytest

from mixeval.mixed import lmer
from mixeval.significance import pairwise_trends


@pytest.mark.parametrize("df", ["asymptotic", "kenward-roger", "satterthwaite"])
def test_slopes_without_an_interaction_are_structural_zeros(df):
    rng = np.random.default_rng(0)
    d = pd.DataFrame({"item": np.repeat(np.arange(30), 3), "system": np.tile(list("ABC"), 30)})
    d["x"] = rng.normal(size=90)
    d["score"] = rng.normal(size=30)[d.item] + 0.5 * d.x + rng.normal(size=90)
    res = pairwise_trends(lmer("score ~ system + x + (1|item)", d), "system", "x", df=df)
    table = res.table
    assert (table["estimate"] == 0.0).all()
    stat = "z" if df == "asymptotic" else "t"
    assert table[stat].isna().all() and table["pvalue"].isna().all() and table["pvalue_unadjusted"].isna().all()
    assert "exactly 0 by the model's structure" in res.summary() and "no system x x term" in res.structural_zeros
    with_interaction = pairwise_trends(lmer("score ~ system * x + (1|item)", d), "system", "x", df=df)
    assert with_interaction.structural_zeros == "" and (with_interaction.table["se"] > 0).all()
