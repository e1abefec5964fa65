"""notebooks/ordinal_ratings: the numbers it prints, executed from its source and as committed."""

from __future__ import annotations

import re

import pytest


@pytest.fixture(scope="module", params=["executed", "committed"])
def run(request, notebook_runner):
    return notebook_runner(request, "ordinal_ratings", needs_data=False)


def _value(text: str, label: str) -> float:
    m = re.search(rf"^{re.escape(label)} = (\S+)$", text, flags=re.M)
    assert m, label
    return float(m.group(1))


def test_executes_with_the_figure(run):
    assert run.images == 2 and not run.errors


def test_ordinal_fit_recovers_the_simulated_truth(run):
    # truth: effects 1 and 2, item variance 1, rater variance 0.4 (one simulated study: within ~2 SE)
    assert abs(_value(run.text, "clmm systemB") - 1.0) < 0.5
    assert abs(_value(run.text, "clmm systemC") - 2.0) < 0.5
    assert 0.3 < _value(run.text, "clmm variance item") < 2.0


def test_latent_scale_separates_the_ceiling_systems_more(run):
    assert abs(_value(run.text, "ordinal latent B - C z")) > abs(_value(run.text, "gaussian B - C z"))
    assert 0.5 < _value(run.text, "P(rating >= 4 | C)") < 1.0
    assert 0 < _value(run.text, "phi gaussian (6 raters)") < 1 and 0 < _value(run.text, "phi latent (6 raters)") < 1
    assert 0 < _value(run.text, "phi observed (6 raters)") < _value(run.text, "phi latent (6 raters)")


def test_random_rater_thresholds_recover_the_simulated_spread(run):
    # truth: spread sd 0.6 over 40 raters; the six raters of the first study share their thresholds
    sd = _value(run.text, "spread sd")
    assert _value(run.text, "spread sd lower") < 0.6 < _value(run.text, "spread sd upper")
    assert abs(sd - 0.6) < 0.25
    assert _value(run.text, "spread test p") < 1e-3 and _value(run.text, "spread test statistic") > 10
    assert 0 < _value(run.text, "nominal test p (6 raters, common thresholds)") <= 1
