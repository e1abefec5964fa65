"""The Study's significance questions (the lead's wiring of this package) reproduce Tables 4.2 and 4.3."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.study import Study

FIXTURES = json.loads((Path(__file__).parent / "fixtures" / "significance_fixtures.json").read_text())
CASES = {c["name"]: c for c in FIXTURES["cases"]}


@pytest.fixture(scope="module")
def ter(bookdata):
    return pd.read_csv(bookdata / "mt_ter.csv.gz")


def test_study_pairwise_is_table_4_2(ter):
    study = Study(ter, "ter ~ system + (1|sentence_id)", item="sentence_id", system="system")
    res = study.pairwise()
    ref = pd.DataFrame(CASES["table4.2_system"]["contrasts"]["tukey"])
    assert res.table.contrast.tolist() == ref.contrast.tolist()
    np.testing.assert_allclose(res.table.estimate, ref.estimate, atol=1e-6)
    np.testing.assert_allclose(res.table.pvalue, ref.p_value, atol=1e-4)
    np.testing.assert_allclose(res.table.lower, ref.asymp_LCL, atol=1e-6)
    em = study.emmeans()
    np.testing.assert_allclose(em.emmean, [r["emmean"] for r in CASES["table4.2_system"]["emmeans"]], atol=1e-6)


def test_study_conditional_is_table_4_3(ter):
    study = Study(ter, "ter ~ system + (1|sentence_id)", item="sentence_id", system="system")
    glrt, pairs, cond = study.conditional("src_length", cuts=(15, 55), labels=("short", "typical", "very long"))
    assert glrt.statistic == pytest.approx(66.52430581426233, rel=1e-5)
    assert glrt.df == 6
    case = CASES["table4.3_system_by_cls"]
    ref = pd.DataFrame(case["contrasts"]["tukey"])
    by = pairs.by[0]
    assert pairs.table[by].astype(str).tolist() == ref.cls.tolist()
    np.testing.assert_allclose(pairs.table.pvalue, ref.p_value, atol=1e-4)
    np.testing.assert_allclose(pairs.table.estimate, ref.estimate, atol=1e-6)
    # Figure 4.7's means
    means = cond.emmeans("system", by=by)
    np.testing.assert_allclose(means.emmean, [r["emmean"] for r in case["emmeans"]], atol=1e-6)
    np.testing.assert_allclose(means.se, [r["SE"] for r in case["emmeans"]], rtol=1e-4)
