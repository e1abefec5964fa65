"""mixeval._adjust.adjust_pvalues against R's p.adjust and statsmodels' multipletests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from mixeval._adjust import adjust_pvalues
from mixeval.errors import InputError

FIXTURE = Path(__file__).parent / "fixtures_resampling" / "p_adjust.json"
CASES = json.loads(FIXTURE.read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['set']}-{c['method']}")
def test_matches_r_p_adjust(case):
    got = adjust_pvalues(case["p"], case["method"])
    np.testing.assert_allclose(got, case["adjusted"], rtol=1e-12, atol=0)


@pytest.mark.parametrize(
    "ours, theirs", [("holm", "holm"), ("bonferroni", "bonferroni"), ("hochberg", "simes-hochberg"),
                     ("bh", "fdr_bh"), ("by", "fdr_by")]
)
def test_matches_statsmodels_on_random_pvalues(ours, theirs):
    rng = np.random.default_rng(1)
    p = np.concatenate([rng.uniform(size=40), rng.uniform(0, 0.01, size=10)])
    expected = multipletests(p, method=theirs)[1]
    np.testing.assert_allclose(adjust_pvalues(p, ours), expected, rtol=1e-12)


def test_shape_is_kept_and_input_not_modified():
    p = np.array([[0.04, 0.01], [0.5, 0.02]])
    before = p.copy()
    out = adjust_pvalues(p, "fdr")
    assert out.shape == (2, 2)
    np.testing.assert_array_equal(p, before)
    np.testing.assert_allclose(out.ravel(), adjust_pvalues(p.ravel(), "bh"))


def test_bad_input_is_rejected_with_clear_messages():
    with pytest.raises(InputError, match="unknown p-value adjustment method 'tukey'"):
        adjust_pvalues([0.1], "tukey")
    with pytest.raises(InputError, match="missing"):
        adjust_pvalues([0.1, np.nan], "holm")
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        adjust_pvalues([0.1, 1.2], "holm")
    assert adjust_pvalues([], "holm").size == 0


def test_holm_runs_no_garbage_collection(monkeypatch):
    """statsmodels' holm branch calls gc.collect() on every call (seconds in a session with many live objects)."""
    import gc

    def refuse():
        raise AssertionError("gc.collect called")

    monkeypatch.setattr(gc, "collect", refuse)
    np.testing.assert_allclose(adjust_pvalues([0.01, 0.02, 0.03, 0.5], "holm"), [0.04, 0.06, 0.06, 0.5])
