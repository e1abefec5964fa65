"""Rank sets: the max-t critical value against exact and R values, and the level of the default (Bonferroni over
the CR2 t tests) under a global null with few clusters, by simulation with its Monte Carlo error stated."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mixeval.logs._items import item_table
from mixeval.logs._leaderboard import cr2_covariance, leaderboard
from mixeval.logs._ranks import bonferroni_critical, max_t_critical, max_t_probability, rank_sets

FIXTURES = Path(__file__).parent / "fixtures"
REF = json.loads((FIXTURES / "reference.json").read_text())


@pytest.mark.parametrize("m, df", [(3, 20.0), (5, 6.0), (4, np.inf)])
def test_max_t_of_independent_equal_variance_means_is_tukeys_studentized_range(m, df):
    cv = max_t_critical(np.eye(m), 0.95, df)
    exact = stats.studentized_range.ppf(0.95, m, df if np.isfinite(df) else 1e6) / np.sqrt(2)
    assert abs(cv.value - exact) < 4 * cv.error + 1e-3, (cv, exact)
    assert cv.error < 1.5e-3 and cv.seed == 0 and cv.n_points > 0


def test_max_t_equals_mvtnorm_on_the_cr2_covariance_of_the_fixture():
    data = pd.read_csv(FIXTURES / "paired_long.csv")
    table = item_table(data, "score", cluster="passage")
    cov, _ = cr2_covariance(table.means, table.clusters)
    ref = REF["max_t"]
    ia, ib = np.triu_indices(3, 1)
    diff = np.diag(cov)[ia] + np.diag(cov)[ib] - 2 * cov[ia, ib]
    np.testing.assert_allclose(np.sqrt(diff), ref["se"], rtol=1e-10)      # clubSandwich's linear_contrast SEs
    cv = max_t_critical(cov, 0.95, float(ref["integer_df"]))             # mvtnorm takes whole df
    assert abs(cv.value - ref["critical_max_t_integer_df"]) < 4 * cv.error + 2e-3
    p, err = max_t_probability(cov, ref["critical_max_t_integer_df"], float(ref["integer_df"]), n_points=1 << 14)
    assert p == pytest.approx(0.95, abs=4 * err + 5e-4)


def test_max_t_handles_a_singular_covariance_and_agrees_with_simulation():
    rng = np.random.default_rng(1)
    loadings = rng.normal(size=(6, 3))                                  # 6 models, rank 3: fewer clusters than models
    cov = loadings @ loadings.T
    p, err = max_t_probability(cov, 3.0, 5.0, n_points=1 << 13)
    z = rng.standard_normal((400_000, 3)) @ loadings.T
    w = np.sqrt(rng.chisquare(5.0, 400_000) / 5.0)
    ia, ib = np.triu_indices(6, 1)
    sd = np.sqrt(cov[ia, ia] + cov[ib, ib] - 2 * cov[ia, ib])
    hit = ((np.abs(z[:, ia] - z[:, ib]) / sd).max(axis=1) / w <= 3.0).mean()
    assert p == pytest.approx(hit, abs=4 * (err + np.sqrt(hit * (1 - hit) / 400_000)))


def test_bonferroni_is_the_t_quantile_over_the_pairs():
    cv = bonferroni_critical(0.95, 10, 5.0)
    assert cv.value == pytest.approx(stats.t.ppf(1 - 0.05 / 20, 5.0)) and cv.error == 0 and cv.seed is None


def _null_logs(rng: np.random.Generator, n_models: int, n_clusters: int, per: int) -> pd.DataFrame:
    """0/1 scores of models with equal expected accuracy: item and passage effects shared by all models, a
    passage x model interaction that makes each model's passages correlated."""
    codes = np.repeat(np.arange(n_clusters), per)
    n = len(codes)
    eta = (0.3 + rng.normal(0, 1, n)[:, None] + rng.normal(0, 0.5, n_clusters)[codes][:, None]
           + rng.normal(0, 0.5, (n_clusters, n_models))[codes])
    y = (rng.random((n, n_models)) < 1 / (1 + np.exp(-eta))).astype(float)
    return pd.DataFrame({"model": np.repeat([f"m{k}" for k in range(n_models)], n),
                         "item": np.tile(np.arange(n), n_models), "passage": np.tile(codes, n_models),
                         "acc": y.T.ravel()})


def _old_rank_sets_separate(table) -> bool:
    """The rank sets before: CR1 covariance and a normal max-t (simulated), as the issue found them."""
    y = table.means
    n, g = y.shape[0], table.clusters.shape[1]
    sums = np.asarray(table.clusters.T @ (y - y.mean(axis=0)))
    sigma = g / (g - 1) * sums.T @ sums / n ** 2
    ia, ib = np.triu_indices(y.shape[1], 1)
    se = np.sqrt(sigma[ia, ia] + sigma[ib, ib] - 2 * sigma[ia, ib])
    z = np.random.default_rng(0).multivariate_normal(np.zeros(y.shape[1]), sigma, 4000, method="eigh")
    q = np.quantile((np.abs(z[:, ia] - z[:, ib]) / se).max(axis=1), 0.95)
    return bool((np.abs(y.mean(axis=0)[ia] - y.mean(axis=0)[ib]) > q * se).any())


def test_rank_sets_hold_their_level_under_the_global_null_with_six_clusters():
    """5 models, 6 passages of 20 questions, no true difference: no pair may be separated in at least 95% of the
    logs. 400 logs: Monte Carlo SE about 1 point; the default separates a pair in 4.0% of them (docs/estimands.md),
    the rank sets of before (CR1, normal max-t) separate a pair in about a third of the logs."""
    rng = np.random.default_rng(2026)
    separated, old = [], []
    for _ in range(400):
        table = item_table(_null_logs(rng, 5, 6, 20), "acc", cluster="passage")
        board = leaderboard(table).table
        separated.append(bool(((board["rank_lower"] > 1) | (board["rank_upper"] < 5)).any()))
        if len(old) < 100:
            old.append(_old_rank_sets_separate(table))
    rate = np.mean(separated)
    assert rate <= 0.05, rate
    assert np.mean(old) > 0.2                     # the test tells the old rank sets from the new


def test_rank_sets_count_only_significant_differences():
    est = np.array([0.9, 0.5, 0.45, 0.1])
    se = np.full((4, 4), 0.05)
    se[1, 2] = se[2, 1] = np.nan                   # a pair without a test (identical models) separates nothing
    rank, lo, hi = rank_sets(est, se, 2.4)
    assert rank.tolist() == [1, 2, 3, 4] and lo.tolist() == [1, 2, 2, 4] and hi.tolist() == [1, 3, 3, 4]
    rank, lo, hi = rank_sets(est, se, 2.4, higher_is_better=False)
    assert rank.tolist() == [4, 3, 2, 1] and lo.tolist() == [4, 2, 2, 1]
