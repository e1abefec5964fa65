"""The penalised system of a block term nested in the only other term (mixed/_pirls._NestedSystem: a diagonal Schur
complement) against the dense elimination of the same system (_System), on generated designs: a random intercept
of ``g:h`` nested in ``g`` and a scalar slope ``(0 + x|g:h)`` nested in ``(1|g)``; and a crossed pair, which is
not nested."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from mixeval.mixed._design import build_design
from mixeval.mixed._family import get_family
from mixeval.mixed._glmm import glmm_problem
from mixeval.mixed._pirls import _inverse_diagonal_terms, _NestedSystem, _ScalarOps


def _problem(formula, seed=5):
    rng = np.random.default_rng(seed)
    n = 500
    df = pd.DataFrame({"g": rng.integers(0, 12, n), "h": rng.integers(0, 5, n), "x": rng.normal(size=n),
                       "c": rng.integers(0, 30, n)})
    df["y"] = (rng.random(n) < 0.4).astype(int)
    return glmm_problem(build_design(formula, df), get_family("binomial", "logit"), np.ones(n))


@pytest.mark.parametrize("formula", ["y ~ x + (1|g) + (1|g:h)", "y ~ x + (1|g) + (0 + x|g:h)"])
def test_nested_system_equals_the_dense_elimination(formula):
    problem = _problem(formula)
    assert problem.layout.parent is not None
    w = np.random.default_rng(1).uniform(0.05, 0.25, problem.nobs)
    theta = np.array([0.8, 1.3])
    nested = _ScalarOps(problem, theta, False)
    unnested = replace(problem)
    unnested.__dict__["layout"] = replace(problem.layout, parent=None)  # the same problem, nesting not detected
    dense = _ScalarOps(unnested, theta, False)
    r = np.random.default_rng(3).normal(size=problem.nobs)
    np.testing.assert_allclose(nested.sums(r), dense.sums(r), rtol=1e-12, atol=1e-12)
    u = np.random.default_rng(4).normal(size=problem.re.q)
    np.testing.assert_allclose(nested.eta(u, np.zeros(problem.p)), dense.eta(u, np.zeros(problem.p)), rtol=1e-12,
                               atol=1e-12)
    sn, sd = nested.system(w), dense.system(w)
    assert isinstance(sn, _NestedSystem) and not isinstance(sd, _NestedSystem)
    assert sn.ldl2 == pytest.approx(sd.ldl2, rel=1e-13)
    rhs = np.random.default_rng(2).normal(size=problem.re.q)
    np.testing.assert_allclose(sn.solve(rhs, None)[0], sd.solve(rhs, None)[0], rtol=1e-12, atol=1e-13)
    for gn, gd in zip(_inverse_diagonal_terms(nested, sn), _inverse_diagonal_terms(dense, sd)):
        np.testing.assert_allclose(gn, gd, rtol=1e-12, atol=1e-14)


def test_crossed_terms_are_not_nested():
    assert _problem("y ~ x + (1|g) + (1|c)").layout.parent is None
