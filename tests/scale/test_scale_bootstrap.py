"""The in-engine Poisson bootstrap: weights, seeding, agreement with memory, coverage."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scipy import stats as sps

from mixeval._results import TestResult
from mixeval.errors import ColumnError, InputError
from mixeval.scale import poisson_bootstrap_paired, poisson_weights
from mixeval.scale._bootstrap import POISSON_THRESHOLDS
from poisson_reference import in_memory_reference


def _log(seed: int = 0, n_items: int = 400, effect: float = 0.1, reps: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n_items), 2 * reps)
    system = np.tile(np.repeat(["A", "B"], reps), n_items)
    score = rng.normal(size=n_items)[item] + effect * (system == "A") + rng.normal(0, 0.5, item.size)
    return pd.DataFrame({"item": [f"it{i:04d}" for i in item], "system": system, "score": score})


ARGS = dict(score="score", system="system", item="item", a="A", b="B")


def test_scale_poisson_weights_distribution() -> None:
    w = poisson_weights(np.arange(50_000)[None, :], np.arange(8)[:, None], random_state=11)
    counts = np.bincount(w.ravel(), minlength=6)[:6].astype(float)
    expected = sps.poisson(1).pmf(np.arange(6)) * w.size
    expected[-1] = w.size - expected[:-1].sum()
    counts[-1] = w.size - counts[:-1].sum()
    assert sps.chisquare(counts, expected).pvalue > 1e-3
    # weights of different resamples and of neighbouring items are uncorrelated (SE ~ 0.0045 here)
    c = np.corrcoef(w)
    assert np.max(np.abs(c[np.triu_indices(8, 1)])) < 0.02
    assert abs(np.corrcoef(w[:, :-1].ravel(), w[:, 1:].ravel())[0, 1]) < 0.01
    # the integer thresholds are the Poisson(1) CDF at the hash resolution
    cdf = sps.poisson(1).cdf(np.arange(len(POISSON_THRESHOLDS)))
    assert np.allclose(np.asarray(POISSON_THRESHOLDS) / 2_147_483_647, cdf, atol=1e-9)


def test_scale_bootstrap_matches_in_memory_same_weights() -> None:
    df = _log(1)
    res = poisson_bootstrap_paired(pa.Table.from_pandas(df), **ARGS, n_resamples=300, random_state=42)
    assert isinstance(res, TestResult)
    ref = in_memory_reference(df, **ARGS, n_resamples=300, random_state=42)
    dist = res.null_distribution + res.details["bootstrap_mean"]
    assert np.max(np.abs(dist - ref)) < 1e-12
    d = df.groupby(["item", "system"])["score"].mean().unstack()
    assert res.statistic == pytest.approx(float((d["A"] - d["B"]).mean()), abs=1e-13)
    assert res.confidence_interval.lower == pytest.approx(np.quantile(ref, 0.025), abs=1e-12)
    assert res.null_distribution.mean() == pytest.approx(0.0, abs=1e-14)
    assert res.details["n_items"] == 400


def test_scale_bootstrap_seeding() -> None:
    df = _log(2, 200)
    rel = duckdb.from_df(df)
    r1 = poisson_bootstrap_paired(rel, **ARGS, n_resamples=200, random_state=7)
    r2 = poisson_bootstrap_paired(df, **ARGS, n_resamples=200, random_state=7)
    r3 = poisson_bootstrap_paired(df, **ARGS, n_resamples=200, random_state=8)
    # same seed: same weights; sums agree up to the engine's parallel summation order
    assert np.max(np.abs(r1.null_distribution - r2.null_distribution)) < 1e-14
    assert r1.pvalue == r2.pvalue and r1.confidence_interval.lower == pytest.approx(r2.confidence_interval.lower, abs=1e-14)
    assert np.max(np.abs(r1.null_distribution - r3.null_distribution)) > 1e-4
    g1 = poisson_bootstrap_paired(df, **ARGS, n_resamples=200, random_state=np.random.default_rng(3))
    g2 = poisson_bootstrap_paired(df, **ARGS, n_resamples=200, random_state=np.random.default_rng(3))
    assert g1.details["seed_offset"] == g2.details["seed_offset"]
    assert np.max(np.abs(g1.null_distribution - g2.null_distribution)) < 1e-14


def test_scale_bootstrap_pvalue_and_alternatives() -> None:
    df = _log(3, 300, effect=0.15)
    two = poisson_bootstrap_paired(df, **ARGS, n_resamples=500, random_state=1)
    assert two.pvalue == 1 / 501 and two.confidence_interval.lower > 0
    less = poisson_bootstrap_paired(df, **ARGS, n_resamples=500, random_state=1, alternative="less")
    assert less.pvalue > 0.99
    # the bootstrap SE agrees with the analytic standard error of a mean of paired differences
    d = df.groupby(["item", "system"])["score"].mean().unstack()
    se = float((d["A"] - d["B"]).std(ddof=1) / np.sqrt(len(d)))
    assert two.details["bootstrap_se"] == pytest.approx(se, rel=0.1)


def test_scale_bootstrap_coverage_simulation() -> None:
    """Percentile intervals from the same hash weights cover the true difference ~95% of the time."""
    n_items, n_sims, n_boot, true = 60, 400, 400, 0.3
    rng = np.random.default_rng(2024)
    w = poisson_weights(np.arange(n_items)[None, :], np.arange(n_boot)[:, None], random_state=5)
    covered = 0
    for s in range(n_sims):
        d = true + rng.standard_t(5, size=n_items) * 0.5
        # a fresh seed per data set would be equivalent; the data are independent of the weights
        dist = (w @ d) / w.sum(axis=1)
        lo, hi = np.quantile(dist, [0.025, 0.975])
        covered += lo <= true <= hi
    rate = covered / n_sims
    # Monte-Carlo SE ~0.011; percentile intervals for n = 60 are slightly liberal
    assert 0.91 <= rate <= 0.98


def test_scale_bootstrap_bad_input() -> None:
    df = _log(4, 50)
    with pytest.raises(ColumnError, match="available columns: item, system, score"):
        poisson_bootstrap_paired(df, score="ter", system="system", item="item", a="A", b="B", random_state=1)
    unpaired = df[~((df["item"] == "it0003") & (df["system"] == "B"))]
    with pytest.raises(InputError, match="1 of 50 items have only one of the systems"):
        poisson_bootstrap_paired(unpaired, **ARGS, random_state=1)
    with pytest.raises(InputError, match="system 'Z' does not occur in column 'system'"):
        poisson_bootstrap_paired(df, score="score", system="system", item="item", a="A", b="Z", random_state=1)
    nulls = df.copy()
    nulls["item"] = nulls["item"].astype(object)
    nulls.loc[0, "item"] = None
    with pytest.raises(InputError, match="NULL values in the item column"):
        poisson_bootstrap_paired(pa.Table.from_pandas(nulls), **ARGS, random_state=1)
    with pytest.raises(TypeError, match="random_state"):
        poisson_bootstrap_paired(df, **ARGS, random_state="x")
