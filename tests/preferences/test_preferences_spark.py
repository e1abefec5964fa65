"""A preference log as a Spark DataFrame: votes counted in Spark SQL give the DataFrame fit.

Needs the optional ``pyspark`` and a Java runtime (the ``spark_session`` fixture skips with the reason
otherwise)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from mixeval.preferences import bradley_terry, simulate_arena


@pytest.mark.parametrize("options", [dict(ties="ordinal", position="fixed"),
                                     dict(ties="drop", position="random", judge="judge")])
def test_spark_fit_equals_the_dataframe_fit(spark_session, options):
    log = simulate_arena(2000, np.linspace(-1, 1, 5), n_judges=5, position=0.3, judge_sd=0.5, tie_tau=0.4,
                         random_state=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = bradley_terry(spark_session.createDataFrame(log), **options)
        b = bradley_terry(log, **options)
    assert a.loglik == pytest.approx(b.loglik, abs=1e-8)
    np.testing.assert_allclose(a.estimates, b.estimates, atol=1e-8)
    assert a.n_votes == b.n_votes
