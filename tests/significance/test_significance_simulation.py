"""Simulation checks of the significance machinery under the null hypothesis (seeded, fast).

* GLRT p-values of ``y ~ system + (1|item)`` vs ``y ~ 1 + (1|item)`` (ML fits) are uniform when the
  systems do not differ: KS test, and the rejection rate at 0.05 lies in [0.03, 0.07].
* Pairwise comparisons on the same fits: the family-wise error rate (any of the three contrasts
  rejected) is about 0.05 with Tukey, at most 0.05 with Bonferroni/Holm, and clearly above 0.05
  without adjustment; Tukey intervals cover all three true differences (0) jointly in about 95%.

To keep the file fast the designs are built once (mixeval.mixed.build_design) and only the response
is redrawn; each replicate costs two small optimiser runs.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mixeval.mixed import build_design, compare, compute_stats, fit_from_stats
from mixeval.significance import glrt, pairwise

N_ITEMS = 60
N_REPLICATES = 500
SEED = 20261122


def _with_response(design, y):
    return dataclasses.replace(design, y=y, row_key=hash((len(y), y.tobytes())))


@pytest.fixture(scope="module")
def null_simulation():
    rng = np.random.default_rng(SEED)
    item = np.repeat(np.arange(N_ITEMS), 3)
    frame = pd.DataFrame({"item": item, "system": np.tile(["A", "B", "C"], N_ITEMS), "y": rng.normal(size=3 * N_ITEMS)})
    full_design = build_design("y ~ system + (1|item)", frame)
    null_design = build_design("y ~ 1 + (1|item)", frame)
    glrt_p, p_tukey, p_bonf, p_holm, p_none, covered = [], [], [], [], [], []
    for _ in range(N_REPLICATES):
        y = rng.normal(0.0, 0.7, N_ITEMS)[item] + rng.normal(0.0, 1.0, item.size)
        d1, d0 = _with_response(full_design, y), _with_response(null_design, y)
        f1 = fit_from_stats(d1, compute_stats(d1), reml=False, warn=False)
        f0 = fit_from_stats(d0, compute_stats(d0), reml=False, warn=False)
        glrt_p.append(compare(f1, f0).pvalue)
        tukey = pairwise(f1, "system", adjust="tukey").table
        p_tukey.append(tukey.pvalue.min())
        p_none.append(tukey.pvalue_unadjusted.min())
        p_bonf.append(min(1.0, 3 * tukey.pvalue_unadjusted.min()))
        p_holm.append(min(1.0, 3 * tukey.pvalue_unadjusted.min()))  # Holm's smallest = Bonferroni's smallest
        covered.append(bool(((tukey.lower <= 0) & (tukey.upper >= 0)).all()))
    return {k: np.asarray(v) for k, v in dict(glrt=glrt_p, tukey=p_tukey, bonferroni=p_bonf, holm=p_holm,
                                               none=p_none, covered=covered).items()}


def test_glrt_pvalues_uniform_under_null(null_simulation):
    p = null_simulation["glrt"]
    assert stats.kstest(p, "uniform").pvalue > 0.01
    assert 0.03 <= (p < 0.05).mean() <= 0.07


def test_tukey_controls_familywise_error(null_simulation):
    fwer = (null_simulation["tukey"] < 0.05).mean()
    assert 0.03 <= fwer <= 0.07
    # joint coverage of the Tukey intervals is 1 - FWER of the Tukey test (same critical value)
    coverage = null_simulation["covered"].mean()
    assert coverage == pytest.approx(1 - fwer, abs=1e-12)


def test_bonferroni_conservative_unadjusted_liberal(null_simulation):
    assert (null_simulation["bonferroni"] < 0.05).mean() <= 0.07
    assert (null_simulation["bonferroni"] < 0.05).mean() <= (null_simulation["tukey"] < 0.05).mean()
    # three correlated tests at 0.05 reject at least one far more often than 5% (about 12%)
    assert (null_simulation["none"] < 0.05).mean() >= 0.08


def test_staged_path_equals_glrt():
    """The simulation's staged fits give exactly what glrt() gives on the same data."""
    rng = np.random.default_rng(1)
    item = np.repeat(np.arange(N_ITEMS), 3)
    frame = pd.DataFrame({"item": item, "system": np.tile(["A", "B", "C"], N_ITEMS),
                          "y": rng.normal(size=N_ITEMS)[item] + rng.normal(size=3 * N_ITEMS)})
    d1, d0 = build_design("y ~ system + (1|item)", frame), build_design("y ~ 1 + (1|item)", frame)
    staged = compare(fit_from_stats(d1, compute_stats(d1), reml=False, warn=False),
                     fit_from_stats(d0, compute_stats(d0), reml=False, warn=False))
    direct = glrt(frame, "y ~ system + (1|item)", "y ~ 1 + (1|item)")
    assert direct.statistic == pytest.approx(staged.statistic, rel=1e-10)
    assert direct.pvalue == pytest.approx(staged.pvalue, rel=1e-10)
