"""Equivalence and non-inferiority of Bradley-Terry contrasts (issue 40 item 2): equal to emmeans'
``test(contrast, delta =, side =, adjust =)`` on the glm abilities (fixtures/make_equivalence_fixture.R), on the
log-odds and the Elo scale; TOST's type I error at the margin by simulation."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval.errors import InputError
from mixeval.preferences import bradley_terry, simulate_arena
from mixeval.preferences._inference import ELO_SCALE

HERE = Path(__file__).parent / "fixtures"
R = json.loads((HERE / "r_equivalence.json").read_text())
LOG = pd.read_csv(HERE / "arena_log.csv")


@pytest.fixture(scope="module")
def fit():
    return bradley_terry(LOG, ties="drop", position="fixed", reference="sys00")


def _check(table, ref):
    assert [f"{a} - {b}" for a, b in zip(table.system, table.versus)] == ref["contrast"]
    np.testing.assert_allclose(table.estimate, ref["estimate"], atol=1e-6)
    np.testing.assert_allclose(table.se, ref["se"], rtol=1e-5)
    np.testing.assert_allclose(table.z, ref["z"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(table.pvalue_adjusted, ref["p"], rtol=1e-4, atol=1e-12)


@pytest.mark.parametrize("key,delta,side,adjust", [
    ("pairs_equivalence_none", 0.3, "equivalence", "none"),
    ("pairs_equivalence_holm", 0.3, "equivalence", "holm"),
    ("pairs_noninferiority_bonferroni", 0.3, ">", "bonferroni"),
    ("pairs_nonsuperiority_none", 0.3, "<", "none"),
])
def test_all_pairs_equal_emmeans(fit, key, delta, side, adjust):
    _check(fit.contrasts(delta=delta, side=side, adjust=adjust), R[key])


@pytest.mark.parametrize("key,side,adjust", [("versus_noninferiority_holm", ">", "holm"),
                                             ("versus_equivalence_none", "equivalence", "none")])
def test_against_one_system_equal_emmeans_trt_vs_ctrl(fit, key, side, adjust):
    _check(fit.contrasts(versus="sys02", delta=0.25, side=side, adjust=adjust), R[key])


def test_the_elo_scale_gives_the_same_tests(fit):
    logodds = fit.contrasts(delta=0.3, adjust="holm")
    elo = fit.contrasts(delta=0.3 * ELO_SCALE, scale="elo", adjust="holm")
    np.testing.assert_allclose(elo.estimate, ELO_SCALE * logodds.estimate)
    np.testing.assert_allclose(elo.se, ELO_SCALE * logodds.se)
    np.testing.assert_allclose(elo.pvalue, logodds.pvalue)
    assert elo.attrs["null"] == f"|difference| >= {0.3 * ELO_SCALE:g} elo"
    assert logodds.attrs["null"] == "|difference| >= 0.3 log-odds"


def test_tost_holds_its_level_at_the_margin():
    """Two systems exactly delta = 0.2 apart (the boundary of the null): TOST at 5% rejects 5% or less. 300 logs
    of 1,500 votes: Monte-Carlo SE of a 5% rate is 0.0126, so the bound 0.05 + 2.5 SE = 0.082."""
    rejected = []
    for rep in range(300):
        log = simulate_arena(1500, {"a": 0.2, "b": 0.0}, random_state=7000 + rep)
        c = bradley_terry(log, position="none").contrasts(delta=0.2, adjust="none")
        rejected.append(c.pvalue.iloc[0] < 0.05)
    assert np.mean(rejected) < 0.082


def test_margin_arguments_are_checked(fit):
    with pytest.raises(InputError, match="side='sideways'"):
        fit.contrasts(delta=0.2, side="sideways")
    with pytest.raises(InputError, match="positive number"):
        fit.contrasts(delta=-0.1)
    with pytest.raises(InputError, match="two-sided tests"):
        fit.contrasts(delta=0.2, adjust="tukey")
    with pytest.raises(InputError, match="'log-odds' or 'elo'"):
        fit.contrasts(scale="points")
    with pytest.raises(InputError, match="versus='nobody'"):
        fit.contrasts(versus="nobody")
    with pytest.raises(InputError, match="all pairwise comparisons"):
        fit.contrasts(versus="sys02", adjust="tukey")
    plain = fit.contrasts()
    assert plain.attrs["null"] == "difference = 0" and "z" in plain
