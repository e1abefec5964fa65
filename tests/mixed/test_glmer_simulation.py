"""glmer on generated binary designs with known truth (modest sizes; benchmarks/sim_glmer_df.py is the full study).

60 data sets of 40 items x 2 seeds x 2 systems (no system effect): the GLRT's rejections at 5% stay within
the binomial range (P(X >= 9 | n = 60, p = 0.05) < 0.01), the accuracy intervals cover the true accuracy of a
typical item, and the latent item variance is recovered without gross bias."""

import warnings

import numpy as np
import pandas as pd
import pytest

from mixeval import compare, glmer
from mixeval.significance import emmeans_response

N_REP, N_ITEM, N_SEED = 60, 40, 2
SD_ITEM, B0 = 1.0, 0.3


def _data(rng):
    d = pd.MultiIndex.from_product([range(N_ITEM), range(N_SEED), range(2)], names=["item", "seed", "system"]).to_frame(index=False)
    eta = B0 + rng.normal(0, SD_ITEM, N_ITEM)[d.item]
    d["correct"] = (rng.random(len(d)) < 1 / (1 + np.exp(-eta))).astype(int)
    d["system"] = np.where(d.system == 0, "A", "B")
    return d


@pytest.fixture(scope="module")
def replicates():
    rng = np.random.default_rng(2026)
    out = []
    for _ in range(N_REP):
        d = _data(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            full = glmer("correct ~ system + (1|item)", d)
            null = glmer("correct ~ 1 + (1|item)", d)
        acc = emmeans_response(full, "system")
        truth = 1 / (1 + np.exp(-B0))
        out.append((compare(full, null).pvalue, ((acc.lower <= truth) & (truth <= acc.upper)).tolist(), full.variances["item"]))
    return out


def test_glrt_type_one_error(replicates):
    rejections = sum(p < 0.05 for p, _, _ in replicates)
    assert rejections <= 8


def test_accuracy_interval_coverage(replicates):
    covered = np.array([c for _, cov, _ in replicates for c in cov])
    assert covered.mean() >= 0.88


def test_latent_item_variance_recovered(replicates):
    v = np.array([v for _, _, v in replicates])
    assert abs(v.mean() - SD_ITEM**2) < 3 * v.std(ddof=1) / np.sqrt(len(v)) + 0.05
