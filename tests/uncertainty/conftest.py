"""Shared checks of the uncertainty tests."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm


@pytest.fixture
def within_bootmer_error():
    """``check(boot, ref, n_ours)``: every percentile end of ``boot.interval(0.95)`` within 4 standard errors of
    bootMer's (``ref["intervals"]`` from ``ref["nsim"]`` draws with sd's ``ref["sd"]``), the standard error of a
    2.5% / 97.5% sample quantile (normal approximation) of the two runs combined."""

    def check(boot, ref: dict, n_ours: int) -> None:
        iv = boot.interval(0.95)
        c = np.sqrt(0.025 * 0.975) / norm.pdf(norm.ppf(0.975))
        for param, (lo_r, hi_r) in ref["intervals"].items():
            sd = max(ref["sd"][param], boot.se[param])
            tol = 4 * c * sd * np.sqrt(1 / ref["nsim"] + 1 / n_ours)
            assert abs(iv.loc[param, "lower"] - lo_r) <= tol, (param, iv.loc[param].tolist(), (lo_r, hi_r), tol)
            assert abs(iv.loc[param, "upper"] - hi_r) <= tol, (param, iv.loc[param].tolist(), (lo_r, hi_r), tol)

    return check
