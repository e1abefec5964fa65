"""The report's conditional section for a numeric property: slopes, slope contrasts, trend lines."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from mixeval.report import Figure, Table, trend_section
from mixeval.study import Study


def test_report_with_a_numeric_property_shows_slopes():
    rng = np.random.default_rng(0)
    item = np.repeat(np.arange(40), 3)
    df = pd.DataFrame({"item": item, "system": np.tile(list("ABC"), 40), "length": rng.integers(5, 60, 40)[item]})
    df["score"] = rng.normal(size=40)[item] + 0.01 * df.length + rng.normal(size=120)
    study = Study(df, "score ~ system + (1|item)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = study.report(conditional_on="length", progress=False)
        glrt, pairs, _ = study.conditional("length")
    section = report.sections[-1]
    assert section.title == "Comparisons conditional on length"
    assert section.summary[0].endswith(f"p = {glrt.pvalue:.3g}") and "system x length" in section.summary[0]
    tables = [b for b in section.blocks if isinstance(b, Table)]
    slopes = next(t for t in tables if t.caption == "Slope of each system in length")
    np.testing.assert_allclose(slopes.data["trend"], pairs.emmeans["trend"])
    assert any(isinstance(b, Figure) for b in section.blocks)


def test_trend_section_alone():
    slopes = pd.DataFrame({"system": ["A", "B"], "trend": [0.004, 0.001], "se": [0.001, 0.001]})
    contrasts = pd.DataFrame({"contrast": ["A - B"], "estimate": [0.003], "pvalue": [0.03]})
    section = trend_section(slopes, trace="system", var="length", contrasts=contrasts)
    assert section.summary == ("slope of the score in length: A 0.004, B 0.001",
                               "1 of 1 pairwise slope differences have p < 0.05")
