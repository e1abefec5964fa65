"""The preference report: its tables are the result's own numbers; every option is used."""

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import InputError
from mixeval.preferences import bradley_terry, simulate_arena


@pytest.fixture(scope="module")
def fit():
    log = simulate_arena(2500, {"a": 0.6, "b": 0.2, "c": 0.0, "d": -0.5}, n_judges=6, judge_sd=0.6,
                         random_state=4)
    return bradley_terry(log, judge="judge", position="random")


def _table(report, caption_start):
    for section in report.sections:
        for block in section.blocks:
            if getattr(block, "caption", "").startswith(caption_start):
                return block.data
    raise AssertionError(f"no table {caption_start!r}")


def test_tables_are_the_results_numbers(fit):
    rep = fit.to_report(level=0.9, n_resamples=0, random_state=1)
    board = _table(rep, "Table 1").set_index("system")
    ranks = fit.ranks(0.9, random_state=np.random.default_rng(1))
    iv = fit.intervals(0.9)
    pd.testing.assert_series_equal(board["ability"], iv.loc[board.index, "ability"], check_names=False)
    np.testing.assert_allclose(board["lower"], iv.loc[board.index, "lower"])
    assert list(board.index) == list(ranks.index)
    assert (board["rank_lower"] <= board["rank"]).all() and (board["rank"] <= board["rank_upper"]).all()
    test = _table(rep, "Table 2")
    assert test["statistic"].iloc[0] == pytest.approx(fit.test_systems().statistic)
    assert "Table 5" not in rep.to_text()  # n_resamples=0 leaves the iid section out
    votes = _table(rep, "Table 4")
    a, b = votes.system.iloc[0], votes.versus.iloc[0]
    assert votes.votes_needed.iloc[0] == np.ceil(fit.votes_needed(a, b, power=0.8, alpha=0.1))  # whole votes
    scales = _table(rep, "Table 3b").set_index("system")  # a mixed model: the population-averaged scale too
    marginal = fit.marginal_abilities(0.9)
    np.testing.assert_allclose(scales["population-averaged elo"], marginal.loc[scales.index, "elo"])
    assert "conditional: for a typical judge" in rep.to_html()


def test_other_scales_paragraph_is_a_finished_sentence(fit):
    """With ties dropped the paragraph names the population-averaged scale alone and ends with a full stop."""
    rep = fit.to_report(n_resamples=0, random_state=1)
    text = next(block.text for section in rep.sections if section.title == "Other scales"
                for block in section.blocks if hasattr(block, "text"))
    assert text.endswith("leaderboard).") and ";" not in text.rpartition("leaderboard")[2]
    assert "arena's" not in text


def test_options_are_used(fit):
    rep = fit.to_report(n_resamples=30, random_state=2, adjust="bonferroni", power=0.9, title="Arena")
    assert rep.title == "Arena"
    assert "bonferroni" in rep.to_text()
    iid = _table(rep, "Table 5")
    assert len(iid) == 4 and (iid.width_ratio > 0).all()
    with pytest.raises(InputError, match="n_resamples"):
        fit.to_report(n_resamples=1)
    with pytest.raises(InputError, match="power"):
        fit.to_report(power=1.5)
