"""Bad and awkward preference logs (issue 38 items 3 and 4 and the preference rough cases): winner values that
name systems, separation, ties-only logs, logs without votes, source errors pointing at votes, the variance
table of a mixed fit. Each test fails on the code before the fix."""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from mixeval.errors import InputError, SeparationWarning
from mixeval.preferences import bradley_terry, simulate_arena

HERE = Path(__file__).parent / "fixtures"


def _named_log(systems, n=600, seed=0):
    """A log of ``systems`` whose verdict column holds the winner's name; the same votes with positions."""
    log = simulate_arena(n, dict(zip(systems, np.linspace(1.5, 0.0, len(systems)))), position=0.2, random_state=seed)
    named = log.assign(winner=np.where(log.winner == "model_a", log.model_a, log.model_b))
    return named, log


@pytest.mark.parametrize("systems", [("A", "B"), ("A", "B", "C"), ("gpt-4", "llama")])
def test_a_winner_value_that_names_a_system_means_that_system(systems):
    named, positional = _named_log(systems)
    by_name, by_position = bradley_terry(named), bradley_terry(positional)
    np.testing.assert_allclose(by_name.estimates, by_position.estimates, atol=1e-10)
    assert by_name.position_bias == pytest.approx(by_position.position_bias, abs=1e-10)
    lower = bradley_terry(named.assign(winner=named.winner.str.lower()))  # any case
    np.testing.assert_allclose(lower.estimates, by_position.estimates, atol=1e-10)


def test_a_value_that_could_mean_a_system_or_a_position_is_refused():
    named, _ = _named_log(("A", "B", "C"))
    # "A" where A did not take part can only be a position there: ambiguous
    mixed = named.copy()
    row = mixed.index[(mixed.model_a != "A") & (mixed.model_b != "A")][0]
    mixed.loc[row, "winner"] = "A"
    with pytest.raises(InputError, match=r"could name the system 'A' or the position model_a"):
        bradley_terry(mixed)
    # positions written elsewhere in the column: 'b' as shorthand or as system B?
    both = named.copy()
    both.loc[both.index[:5], "winner"] = "model_a"
    wrong = (both.winner == "B") & (both.model_a == "B")
    assert wrong.any()
    with pytest.raises(InputError, match="also writes positions"):
        bradley_terry(both)
    # a system name that is no position, for a vote it was not in
    other = named.copy()
    row = other.index[(other.model_a != "C") & (other.model_b != "C")][0]
    other.loc[row, "winner"] = "C"
    with pytest.raises(InputError, match="names the system 'C' as the winner of 1 row"):
        bradley_terry(other)


R_SEP = json.loads((HERE / "r_separation.json").read_text())


def _separated():
    return pd.read_csv(HERE / "separated_log.csv")


def test_separation_gives_infinite_standard_errors_never_small_ones():
    with pytest.warns(SeparationWarning, match=r"\{sys03\} > \{sys00, sys01, sys02\}"):
        fit = bradley_terry(_separated(), reference="sys00")
    r_full, r_within = R_SEP["glm_full"], R_SEP["glm_within"]
    assert r_full["se"]["d_sys03"] > 100  # R's glm: hundreds to thousands, where the fit stopped
    assert fit.se["sys03"] == np.inf
    # the finite part is the limit model's (the votes without sys03): equal to glm on those votes
    np.testing.assert_allclose(fit.abilities[["sys01", "sys02"]], [r_within["coef"]["d_sys01"],
                                                                    r_within["coef"]["d_sys02"]], atol=1e-6)
    np.testing.assert_allclose(fit.se[["sys01", "sys02"]], [r_within["se"]["d_sys01"], r_within["se"]["d_sys02"]],
                               rtol=1e-5)
    assert fit.position_bias == pytest.approx(r_within["coef"]["first"], abs=1e-6)
    assert fit.position_se == pytest.approx(r_within["se"]["first"], rel=1e-5)
    assert fit.loglik == pytest.approx(r_within["loglik"], abs=1e-6)
    c = fit.contrasts().set_index(["system", "versus"])
    assert np.isinf(c.loc[("sys00", "sys03"), "se"]) and np.isnan(c.loc[("sys00", "sys03"), "pvalue"])
    assert np.isinf(c.loc[("sys00", "sys03"), "upper"]) and np.isinf(c.loc[("sys00", "sys03"), "lower"])
    assert np.isfinite(c.loc[("sys01", "sys02"), "se"]) and c.loc[("sys01", "sys02"), "se"] < 0.3
    assert c.pvalue_adjusted.notna().sum() == 3  # holm over the identified differences
    wald = fit.intervals()
    assert np.isinf(wald.loc["sys03", "upper"]) and np.isinf(wald.loc["sys03", "lower"])
    profile = fit.intervals(method="profile")  # the likelihood bounds it on one side
    assert 3 < profile.loc["sys03", "lower"] < 20 and np.isinf(profile.loc["sys03", "upper"])
    assert profile.loc["sys01", "lower"] < fit.abilities["sys01"] < profile.loc["sys01", "upper"]


@pytest.mark.parametrize("options", [dict(position="fixed"), dict(position="none"), dict(ties="ordinal"),
                                     dict(ties="davidson"), dict(judge="judge", position="random"),
                                     dict(judge="judge", position="random", ties="ordinal")])
def test_separation_in_every_model_leaves_the_rest_as_the_fit_without_the_separated_votes(options):
    log = simulate_arena(1500, {"x": 0.5, "y": 0.0, "z": -0.5, "w": 0.2}, n_judges=6, judge_sd=0.5, tie_tau=0.3,
                         random_state=1)
    top = (log.model_a == "x") | (log.model_b == "x")
    log.loc[top, "winner"] = np.where(log.model_a[top] == "x", "model_a", "model_b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = bradley_terry(log, reference="y", **options)
        inner = bradley_terry(log[~top], reference="y", **options)
    assert fit.se["x"] == np.inf and np.all(np.isfinite(fit.se.drop("x")))
    np.testing.assert_allclose(fit.abilities.drop("x"), inner.abilities, atol=1e-5)
    np.testing.assert_allclose(fit.se.drop("x"), inner.se, rtol=1e-4)
    if fit.position_se is not None:
        assert fit.position_se == pytest.approx(inner.position_se, rel=1e-4)
    with warnings.catch_warnings():  # sum to 0: every ability compares systems of both groups
        warnings.simplefilter("ignore")
        centred = bradley_terry(log, **options)
    assert np.all(np.isinf(centred.se))
    c = centred.contrasts().set_index(["system", "versus"])
    assert c.loc[("w", "y"), "se"] == pytest.approx(inner.contrasts().set_index(["system", "versus"])
                                                    .loc[("w", "y"), "se"], rel=1e-4)
    scales = [fit.marginal_abilities()] + ([fit.arena_abilities()] if fit.ties != "drop" else [])
    for table in scales:  # the other scales keep the unidentified abilities unidentified
        assert table.se["x"] == np.inf and np.all(np.isfinite(table.se.drop("x")))


def test_ties_only_logs_are_refused_for_the_tie_models():
    df = pd.DataFrame({"model_a": ["x", "y", "z"] * 5, "model_b": ["y", "z", "x"] * 5, "winner": ["tie"] * 15})
    for ties in ("davidson", "ordinal"):
        with pytest.raises(InputError, match="every vote is a tie"):
            bradley_terry(df, ties=ties)
    with pytest.raises(InputError, match="ties='drop'"):
        bradley_terry(df)


def test_counts_all_zero_say_there_are_no_votes():
    df = pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "x"], "winner": ["model_a", "model_b"], "n": [0, 0]})
    with pytest.raises(InputError, match="is 0 in every row: the log holds no votes"):
        bradley_terry(df, count="n")


def test_source_errors_count_votes_instead_of_citing_rows_of_the_counted_frame():
    log = simulate_arena(400, {"a": 0.5, "b": 0.0, "c": -0.5}, random_state=3)
    bad = log.copy()
    bad.loc[[7, 90, 91], "model_b"] = bad.loc[[7, 90, 91], "model_a"]
    with pytest.raises(InputError, match=r"rows \[7, 90, 91\]"):  # a DataFrame: its rows
        bradley_terry(bad)
    with pytest.raises(InputError) as err:  # counted where it lives: votes, not the counted frame's rows
        bradley_terry(pa.Table.from_pandas(bad))
    assert "3 vote(s)" in str(err.value) and "rows [" not in str(err.value)
    verdicts = pa.Table.from_pandas(log.assign(winner=np.where(np.arange(len(log)) < 10, "draw", log.winner)))
    with pytest.raises(InputError) as err:
        bradley_terry(verdicts)
    assert "10 vote(s)" in str(err.value) and "rows [" not in str(err.value)


def test_the_variance_table_of_a_mixed_fit_has_no_nan_percent():
    log = simulate_arena(1500, {"a": 0.5, "b": 0.0, "c": -0.5}, n_judges=5, judge_sd=0.5, system_judge_sd=0.3,
                         random_state=1)
    fit = bradley_terry(log, judge="judge", position="random", random="system:judge")
    assert list(fit.varcorr.columns) == ["group", "name", "variance", "std"]
    assert fit.varcorr.notna().all().all()
    assert "NaN" not in fit.summary()
    shares = fit.variance_shares()
    assert shares.share.sum() == pytest.approx(1.0) and shares.notna().all().all()
