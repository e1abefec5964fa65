"""The large-log path of the random-effects fit: a sparse difference design in reference coding, the
RX-based covariance beyond HESSIAN_MAX_PARAMS parameters and the second stage's RX-based Hessian in beta,
checked against the dense design with lme4's Hessian-based covariance on a small log."""

import warnings

import numpy as np
import pytest

from mixeval.mixed._design import Design
from mixeval.mixed._family import get_family
from mixeval.mixed._glmm_result import fit_glmm
from mixeval.formula import parse_formula
from mixeval.preferences import bradley_terry, simulate_arena
from mixeval.preferences._design import difference_design
from mixeval.preferences._log import read_log
from mixeval.preferences._mixed import HESSIAN_MAX_PARAMS, random_terms
from mixeval.preferences._model import prepare_votes


@pytest.fixture(scope="module")
def log():
    return simulate_arena(6000, np.linspace(-1.5, 1.5, 24), n_judges=15, position=0.3, judge_sd=0.5,
                          random_state=11)


def _dense_hessian_fit(votes, reference):
    """The engine on the dense difference design with lme4's Hessian-based covariance (the path before)."""
    design = difference_design(votes, reference=reference, position=True)
    re = random_terms(votes, (), "random")
    d = Design(parsed=parse_formula("a_wins ~ 0 + ability + position + (1 | judge)"),
               y=(votes.outcome == 2).astype(float), X=design.X, fixed_names=design.names, groups=(), row_key=0)
    return design, fit_glmm(d, get_family("binomial"), votes.count.astype(float), re=re, warn=False,
                            covariance="hessian")


@pytest.mark.parametrize("reference", [None, "sys05"])
def test_large_p_path_equals_the_dense_hessian_path(log, reference):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = bradley_terry(log, position="random", judge="judge", reference=reference)
    votes = prepare_votes(read_log(log, judge="judge"), "drop").collapse(judge=True, prompt=False)
    ref = None if reference is None else fit.systems.index(reference)
    design, old = _dense_hessian_fit(votes, ref)
    assert design.p + 1 > HESSIAN_MAX_PARAMS  # the RX-based covariance applies to the new fit
    assert fit.loglik == pytest.approx(old.loglik, abs=1e-6)
    abil = design.C @ old.coef[:design.n_abilities]
    np.testing.assert_allclose(fit.estimates, abil, atol=1e-5)
    cov_old = design.C @ old.cov_coef[:design.n_abilities, :design.n_abilities] @ design.C.T
    np.testing.assert_allclose(fit.cov, cov_old, atol=1e-4)
    np.testing.assert_allclose(fit.se, np.sqrt(np.diag(cov_old)), rtol=5e-3)
    assert fit.position_bias == pytest.approx(old.coef[-1], abs=1e-5)


def test_rx_covariance_is_the_inverse_schur_complement(log):
    """fit_glmm(covariance='rx') is lme4's calc.derivs = FALSE vcov: the RX-based matrix it also stores."""
    votes = prepare_votes(read_log(log, judge="judge"), "drop").collapse(judge=True, prompt=False)
    design = difference_design(votes, reference=0, position=True, sparse=True)
    d = Design(parsed=parse_formula("a_wins ~ 0 + ability + position + (1 | judge)"),
               y=(votes.outcome == 2).astype(float), X=design.X, fixed_names=design.names, groups=(), row_key=0)
    fit = fit_glmm(d, get_family("binomial"), votes.count.astype(float), re=random_terms(votes, (), "random"),
                   warn=False, covariance="rx")
    np.testing.assert_array_equal(fit.cov_coef, fit.cov_coef_rx)
    assert fit.cov_params is None
