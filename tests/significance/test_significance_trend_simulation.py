"""Type I error of the slope contrast by simulation: equal slopes of a numeric item property (known truth).

200 data sets of 30 items x 2 systems (about 15% of the rows missing at random, so the design is
unbalanced), random item intercepts, system intercepts differing by 0.3 and a common slope 0.01 in
the item property (integers 5-60). The rejection rate of the slope contrast at 5% must lie within
3 binomial standard errors of 0.05 (0.05 +- 0.046) for the asymptotic and Kenward-Roger df
(Satterthwaite's df are tested against lmerTest in test_significance_df_trends.py); Kenward-Roger's
p-values are never below the asymptotic ones (finite df).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval.mixed import lmer
from mixeval.significance import pairwise_trends

N_REPS = 200
ALPHA = 0.05


@pytest.fixture(scope="module")
def null_pvalues() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20261123)
    n_items = 30
    item = np.repeat(np.arange(n_items), 2)
    system = np.tile(["A", "B"], n_items)
    out: dict[str, list[float]] = {"asymptotic": [], "kenward-roger": []}
    for _ in range(N_REPS):
        prop = rng.integers(5, 61, size=n_items)[item]
        keep = rng.random(item.size) > 0.15
        y = (rng.normal(0, 0.5, n_items)[item] + 0.3 * (system == "B") + 0.01 * prop
             + rng.normal(0, 0.4, item.size))
        df = pd.DataFrame({"item": item, "system": system, "prop": prop, "y": y})[keep]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = lmer("y ~ system * prop + (1|item)", df)
        for method in out:
            out[method].append(float(pairwise_trends(fit, "system", "prop", df=method).table["pvalue"].iloc[0]))
    return {k: np.asarray(v) for k, v in out.items()}


@pytest.mark.parametrize("method", ["asymptotic", "kenward-roger"])
def test_slope_contrast_holds_its_level(null_pvalues, method):
    rate = float(np.mean(null_pvalues[method] < ALPHA))
    se = np.sqrt(ALPHA * (1 - ALPHA) / N_REPS)
    assert abs(rate - ALPHA) < 3 * se, f"{method}: rejection rate {rate:.3f}"


def test_finite_df_is_more_conservative_than_z(null_pvalues):
    assert np.all(null_pvalues["kenward-roger"] >= null_pvalues["asymptotic"] - 1e-12)
