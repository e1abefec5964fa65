"""Study.contrast and Study.joint_tests: the significance functions on the Study's fit, for each family; ordinal
Studies refused by name."""

import numpy as np
import pandas as pd
import pytest

from mixeval import Study
from mixeval.errors import InputError
from mixeval.significance import contrast, joint_tests


def _data(seed=0):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(40), 4)
    df = pd.DataFrame({"item": g.astype(str), "system": np.tile(["base", "s1", "s2", "s3"], 40),
                       "domain": np.where(g < 20, "news", "chat")})
    shift = df.system.map({"base": 0.0, "s1": 0.1, "s2": 0.5, "s3": 0.3}).to_numpy()
    df["score"] = rng.normal(0, 1, 40)[g] + shift + rng.normal(0, 0.8, 160)
    df["correct"] = rng.binomial(1, 1 / (1 + np.exp(-(shift + rng.normal(0, 1, 40)[g]))))
    df["rating"] = np.clip(np.round(3 + df.score), 1, 5).astype(int)
    return df


@pytest.mark.parametrize("family,response", [(None, "score"), ("binomial", "correct")])
def test_study_methods_equal_the_functions(family, response):
    df = _data()
    study = Study(df, f"{response} ~ system * domain + (1|item)", family=family)
    got = study.contrast(ref="base", adjust="holm")
    # the Study's default df: emmeans' rule (Kenward-Roger for an lmer fit of 160 rows, z for glmer)
    method = "kenward-roger" if family is None else "asymptotic"
    want = contrast(study.fit, "system", "trt.vs.ctrl", ref="base", adjust="holm", df=method)
    pd.testing.assert_frame_equal(got.table, want.table)
    assert got.df_method == method and got.df_rule.startswith("the default:")
    assert list(got.table.contrast) == ["s1 - base", "s2 - base", "s3 - base"]
    pd.testing.assert_frame_equal(study.joint_tests(df="satterthwaite"), joint_tests(study.fit, df="satterthwaite"))
    assert set(study.joint_tests(by="domain")["domain"]) == {"chat", "news"}


def test_ordinal_study_refuses_by_name():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = Study(_data(), "rating ~ system + (1|item)", family="ordinal")
        study.fit
    with pytest.raises(InputError, match="ordinal"):
        study.contrast()
    with pytest.raises(InputError, match="ordinal"):
        study.joint_tests()
