"""A small version of benchmarks/sim_preferences_coverage.py: with judge tastes (system-by-judge effects) the
mixed model's 95% ability intervals cover the population abilities near nominally; the fixed model's (and
so the iid vote bootstrap's, which estimates the same sampling variance) fall far short."""

import warnings

import numpy as np
import pytest
from scipy import stats as sps

from mixeval.preferences import bradley_terry, simulate_arena

TRUTH = np.array([-0.8, -0.3, 0.2, 0.9])


@pytest.mark.slow
def test_mixed_intervals_cover_where_the_fixed_model_does_not():
    z = sps.norm.ppf(0.975)
    cover = {"mixed": [], "fixed": [], "iid": []}
    for rep in range(24):
        log = simulate_arena(1200, TRUTH, n_judges=6, system_judge_sd=0.6, random_state=500 + rep)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mixed = bradley_terry(log, judge="judge", random="system:judge", position="none")
            fixed = bradley_terry(log, position="none")
        centred = TRUTH - TRUTH.mean()
        cover["mixed"] += list(np.abs(mixed.estimates - centred) <= z * mixed.se.to_numpy())
        cover["fixed"] += list(np.abs(fixed.estimates - centred) <= z * fixed.se.to_numpy())
        if rep < 6:
            iid = fixed.intervals(method="iid-bootstrap", n_resamples=100, random_state=rep)
            cover["iid"] += list((iid.lower <= centred) & (centred <= iid.upper))
    mixed, fixed, iid = (float(np.mean(cover[k])) for k in ("mixed", "fixed", "iid"))
    assert 0.85 <= mixed <= 1.0  # 96 intervals: nominal 0.95, Monte-Carlo SD ~0.03 (more with correlation)
    assert fixed < 0.75 and iid < 0.8
    assert mixed - fixed > 0.2
