"""Dataset bias test (Def. 2.2): hand computations, simulated coverage/type I error, a synthetic NLI-like case."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mixeval.errors import ColumnError, InputError
from mixeval.validity import correlation_difference_test, dataset_bias_test


def test_hand_computed_fisher_z_and_zou_interval():
    rng = np.random.default_rng(0)
    x1 = rng.normal(size=200); y1 = 0.5 * x1 + rng.normal(size=200)
    x2 = rng.normal(size=150); y2 = 0.1 * x2 + rng.normal(size=150)
    res = correlation_difference_test(x1, y1, x2, y2)
    r1, r2 = np.corrcoef(x1, y1)[0, 1], np.corrcoef(x2, y2)[0, 1]
    z = (np.arctanh(r1) - np.arctanh(r2)) / np.sqrt(1 / 197 + 1 / 147)
    assert res.estimate == pytest.approx(r1 - r2, abs=1e-12)
    assert res.statistic == pytest.approx(z, abs=1e-10)
    assert res.pvalue == pytest.approx(2 * stats.norm.sf(abs(z)), abs=1e-12)
    q = stats.norm.ppf(0.975)
    l1, u1 = np.tanh(np.arctanh(r1) - q / np.sqrt(197)), np.tanh(np.arctanh(r1) + q / np.sqrt(197))
    l2, u2 = np.tanh(np.arctanh(r2) - q / np.sqrt(147)), np.tanh(np.arctanh(r2) + q / np.sqrt(147))
    low = r1 - r2 - np.sqrt((r1 - l1) ** 2 + (u2 - r2) ** 2)
    high = r1 - r2 + np.sqrt((u1 - r1) ** 2 + (r2 - l2) ** 2)
    assert tuple(res.confidence_interval) == pytest.approx((low, high), abs=1e-12)


def test_type_one_error_and_coverage_by_simulation():
    rng = np.random.default_rng(11)
    reps, n1, n2, rho = 400, 60, 80, 0.4
    reject = covered = 0
    cov = [[1, rho], [rho, 1]]
    for _ in range(reps):
        a = rng.multivariate_normal([0, 0], cov, n1)
        b = rng.multivariate_normal([0, 0], cov, n2)
        res = correlation_difference_test(a[:, 0], a[:, 1], b[:, 0], b[:, 1])
        reject += res.pvalue < 0.05
        covered += res.confidence_interval.lower <= 0 <= res.confidence_interval.upper
    # binomial sd at 400 reps ~ 0.011: allow 3 sd
    assert abs(reject / reps - 0.05) < 0.035
    assert abs(covered / reps - 0.95) < 0.035


def test_bootstrap_is_seeded_and_close_to_zou():
    rng = np.random.default_rng(1)
    x1 = rng.normal(size=300); y1 = x1 + rng.normal(size=300)
    x2 = rng.normal(size=300); y2 = rng.normal(size=300)
    a = correlation_difference_test(x1, y1, x2, y2, n_resamples=500, random_state=3)
    b = correlation_difference_test(x1, y1, x2, y2, n_resamples=500, random_state=3)
    assert a.details["bootstrap_ci"] == b.details["bootstrap_ci"]
    lo, hi = a.details["bootstrap_ci"]
    assert lo == pytest.approx(a.confidence_interval.lower, abs=0.05)
    assert hi == pytest.approx(a.confidence_interval.upper, abs=0.05)


def _nli_like(seed=0):
    """In-domain: overlap predicts entailment; OOD (adversarial): the opposite; a constant template."""
    rng = np.random.default_rng(seed)
    n = 2000
    ind = pd.DataFrame({"overlap": rng.uniform(size=n), "neg": rng.integers(0, 2, n), "len": rng.uniform(size=n),
                        "subseq": rng.integers(0, 2, n)})
    ind["y"] = ((ind["overlap"] - 0.4 * ind["neg"] + 0.5 * ind["subseq"] + rng.normal(0, 0.3, n)) > 0.5).astype(int)
    ood = pd.DataFrame({"overlap": rng.uniform(size=n), "neg": rng.integers(0, 2, n), "len": rng.uniform(size=n),
                        "subseq": np.ones(n, dtype=int)})
    ood["y"] = ((-ood["overlap"] + 0.4 * ood["neg"] + rng.normal(0, 0.3, n)) > -0.5).astype(int)
    return ind, ood


def test_dataset_bias_flags_sign_changes_and_constant_template():
    ind, ood = _nli_like()
    before = ind.copy()
    res = dataset_bias_test(ind, ood, "y", ["overlap", "neg", "len", "subseq"], n_resamples=200, random_state=0)
    pd.testing.assert_frame_equal(ind, before)
    t = res.table.set_index("feature")
    assert t.loc["overlap", "sign_in"] == "+" and t.loc["overlap", "sign_out"] == "-"
    assert t.loc["neg", "sign_in"] == "-" and t.loc["neg", "sign_out"] == "+"
    assert t.loc["len", "sign_in"] == "0" and t.loc["len", "sign_out"] == "0"
    assert bool(t.loc["subseq", "constant_out"]) and t.loc["subseq", "r_out"] == 0.0  # the book's HANS case
    assert set(res.biased) == {"overlap", "neg", "subseq"}
    assert "len" not in res.biased
    # a threshold can add features whose correlation shrinks without changing sign
    assert not np.isnan(t.loc["overlap", "boot_low"])
    assert "Dataset bias test" in res.summary()


def test_dataset_bias_bad_input():
    ind, ood = _nli_like()
    with pytest.raises(ColumnError):
        dataset_bias_test(ind, ood.drop(columns="len"), "y", ["len"])
    with pytest.raises(InputError, match="missing"):
        dataset_bias_test(ind.assign(len=ind["len"].where(ind.index > 2)), ood, "y", ["len"])
    with pytest.raises(InputError, match="must be numeric"):
        dataset_bias_test(ind.assign(len="a"), ood, "y", ["len"])
    with pytest.raises(InputError, match="at least 4"):
        correlation_difference_test([1, 2, 3], [1, 2, 3], [1, 2, 3, 4], [1, 2, 3, 4])
