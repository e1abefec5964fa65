"""Preference logs beyond memory: identical votes counted in DuckDB (Parquet files, Arrow tables, DuckDB
relations) give the fit of the DataFrame itself (log-likelihood 1e-8, abilities 1e-8)."""

import warnings

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from mixeval.errors import InputError
from mixeval.preferences import bradley_terry, simulate_arena
from mixeval.preferences._source import COUNT_COLUMN, count_votes


@pytest.fixture(scope="module")
def log():
    df = simulate_arena(3000, np.linspace(-1, 1, 5), n_judges=6, n_prompts=40, position=0.3, judge_sd=0.5,
                        tie_tau=0.4, random_state=21)
    df["len_a"] = np.random.default_rng(1).integers(100, 400, len(df)).astype(float)
    df["len_b"] = np.random.default_rng(2).integers(100, 400, len(df)).astype(float)
    return df


def _same(a, b):
    assert a.loglik == pytest.approx(b.loglik, abs=1e-8)
    np.testing.assert_allclose(a.estimates, b.estimates, atol=1e-8)
    np.testing.assert_allclose(a.se.to_numpy(), b.se.to_numpy(), rtol=1e-7)
    assert a.n_votes == b.n_votes and a.n_ties == b.n_ties


@pytest.mark.parametrize("kind", ["arrow", "duckdb", "parquet"])
@pytest.mark.parametrize("options", [
    dict(ties="drop", position="fixed"),
    dict(ties="ordinal", position="fixed", covariates={"length": ("len_a", "len_b")}),
    dict(ties="davidson", position="none", reference="sys02"),
    dict(ties="drop", position="random", judge="judge"),
])
def test_source_fit_equals_the_dataframe_fit(log, kind, options, tmp_path):
    if kind == "arrow":
        source = pa.Table.from_pandas(log)
    elif kind == "duckdb":
        con = duckdb.connect()
        source = con.from_df(log)
    else:
        source = str(tmp_path / "log.parquet")
        log.to_parquet(source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(bradley_terry(source, **options), bradley_terry(log, **options))


def test_counts_are_summed_and_numeric_margins_grouped_by_sign(log):
    margin = log.assign(margin=np.where(log.winner == "model_a", 2.5, np.where(log.winner == "tie", 0.0, -1.0)))
    margin.loc[margin.index[::7], "margin"] *= 3  # different margins, same sign: the same votes
    counted = count_votes(pa.Table.from_pandas(margin), winner="margin", judge="judge")
    assert counted[COUNT_COLUMN].sum() == len(log)
    assert len(counted) == len(log.groupby(["model_a", "model_b", "winner", "judge"]))
    _same(bradley_terry(pa.Table.from_pandas(margin), winner="margin", ties="ordinal"),
          bradley_terry(log, ties="ordinal"))
    grouped = log.groupby(["model_a", "model_b", "winner"]).size().rename("n").reset_index()
    _same(bradley_terry(pa.Table.from_pandas(grouped), count="n"), bradley_terry(log))


def test_source_errors_are_specific(log):
    table = pa.Table.from_pandas(log)
    with pytest.raises(InputError, match="no column"):
        bradley_terry(table, judge="rater")
    bad = pa.Table.from_pandas(log.assign(n=np.where(np.arange(len(log)) == 3, 0.5, 1.0)))
    with pytest.raises(InputError, match="whole numbers"):
        bradley_terry(bad, count="n")
    nulls = pa.Table.from_pandas(log.assign(judge=log.judge.where(log.index != 5, None)))
    with pytest.raises(InputError, match="missing values"):
        bradley_terry(nulls, judge="judge")
