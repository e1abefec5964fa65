"""Algorithm 3.1 (CI under a computational budget): closed form vs enumeration vs resampling."""

from __future__ import annotations

import itertools

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from mixeval.errors import InputError
from mixeval.resampling import BudgetResult, budget_ci, expected_max, plot_budget


@pytest.mark.parametrize("scores", [[0.3, 0.9, 0.5, 0.7], [0.5, 0.5, 0.2, 0.9, 0.9]])
def test_closed_form_equals_enumeration(scores):
    u = np.array(scores)
    M = u.size
    table = expected_max(u)
    for B in range(1, M + 1):
        maxima = np.array([u[list(t)].max() for t in itertools.product(range(M), repeat=B)])
        row = table.loc[table["budget"] == B].iloc[0]
        assert row["mean"] == pytest.approx(maxima.mean(), rel=1e-12)
        assert row["sd"] == pytest.approx(maxima.std(), rel=1e-9, abs=1e-12)


def test_resampling_within_monte_carlo_error_of_closed_form():
    rng = np.random.default_rng(0)
    u = rng.beta(5, 2, size=40)
    K = 20_000
    res = budget_ci(u, budgets=[1, 2, 5, 10, 40], n_resamples=K, random_state=3)
    t = res.table
    se = t["exact_sd"] / np.sqrt(K)
    assert np.all(np.abs(t["mean"] - t["exact_mean"]) <= 4 * se + 1e-12)
    assert np.allclose(t["sd"], t["exact_sd"], rtol=0.05)
    # the book's step 4: mean +- 1.96 sd
    assert np.allclose(t["high"] - t["mean"], 1.959963985 * t["sd"], rtol=1e-8)
    # expected maximum is non-decreasing in the budget and tends to max(u)
    assert np.all(np.diff(t["exact_mean"]) >= 0)
    assert t["exact_mean"].iloc[0] == pytest.approx(u.mean())


def test_percentile_method_and_reproducibility():
    u = np.random.default_rng(1).normal(size=25)
    r1 = budget_ci(u, method="percentile", n_resamples=3000, random_state=5)
    r2 = budget_ci(u, method="percentile", n_resamples=3000, random_state=5)
    assert r1.table.equals(r2.table)
    assert isinstance(r1, BudgetResult)
    assert (r1.table["low"] <= r1.table["mean"]).all() and (r1.table["high"] <= u.max() + 1e-12).all()
    assert "budget" in r1.summary()


def test_plot_returns_figure_with_one_errorbar_series_per_metric():
    rng = np.random.default_rng(2)
    res = {name: budget_ci(rng.beta(a, 2, size=20), n_resamples=500, random_state=0)
           for name, a in (("F1", 5), ("precision", 6), ("recall", 3))}
    fig = plot_budget(res, exact=True)
    ax = fig.axes[0]
    assert len(ax.containers) == 3
    assert [t.get_text().split(" ")[0] for t in ax.get_legend().get_texts()] == ["F1", "precision", "recall"]
    fig2 = res["F1"].plot()
    assert len(fig2.axes[0].containers) == 1


def test_budget_bad_input():
    with pytest.raises(InputError, match="budgets"):
        budget_ci([1.0, 2.0], budgets=[0, 1], n_resamples=10)
    with pytest.raises(InputError, match="method"):
        budget_ci([1.0, 2.0], method="bca", n_resamples=10)
    with pytest.raises(InputError, match="NaN"):
        expected_max([1.0, np.nan])
