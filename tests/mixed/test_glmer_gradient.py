"""The analytic gradient of the Laplace deviance (mixed/_pirls.laplace_gradient) against central differences,
on generated designs the lme4 fixtures do not cover: three crossed intercepts (the cross-tabulations among
the non-block factors), a scalar slope term ``(0 + x|g)`` (weights times x) and a continuous covariate (no
patterns of X), for logit and probit; at fixed beta (stage 2) and with beta from PIRLS (stage 1)."""

import numpy as np
import pandas as pd
import pytest

from mixeval.mixed._design import build_design
from mixeval.mixed._family import get_family
from mixeval.mixed._glmm import GlmmFit, glmm_problem
from mixeval.mixed._pirls import laplace_deviance, laplace_gradient, pirls, row_patterns, supports_gradient


def _data(n=600, seed=3):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"item": rng.integers(0, 40, n), "seed": rng.integers(0, 4, n), "tmpl": rng.integers(0, 6, n),
                       "system": rng.choice(["A", "B", "C"], n), "x": rng.normal(size=n)})
    eta = (0.3 + rng.normal(size=40)[df.item] + 0.5 * rng.normal(size=6)[df.tmpl]
           + 0.4 * df.x * rng.normal(size=4)[df["seed"]])
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    return df


@pytest.mark.parametrize("formula, link, ones, patterns", [
    ("y ~ system + (1|item) + (1|seed) + (1|tmpl)", "logit", (True, True, True), True),
    ("y ~ system + x + (1|item) + (0 + x|seed) + (1|tmpl)", "probit", (True, True, False), False),
    ("y ~ x + (0 + x|item) + (1|tmpl)", "logit", (False, True), False),
])
def test_gradient_equals_central_differences(formula, link, ones, patterns):
    df = _data()
    problem = glmm_problem(build_design(formula, df), get_family("binomial", link), np.ones(len(df)))
    assert supports_gradient(problem)
    assert problem.layout.ones == ones and (problem.layout.patterns is not None) == patterns
    k = problem.re.n_theta
    x = np.concatenate([np.full(k, 0.7), np.full(problem.p, 0.1)])
    gf = GlmmFit(problem, 1)
    gf.u = gf.state(x).u
    fd = [(gf.stage2(x + e) - gf.stage2(x - e)) / 2e-5 for e in 1e-5 * np.eye(x.size)]
    np.testing.assert_allclose(laplace_gradient(problem, x[:k], gf.state(x)), fd, rtol=1e-6, atol=1e-6)
    st = pirls(problem, x[:k], gf.beta, gf.u, joint=True)

    def stage1(t):
        return laplace_deviance(problem, pirls(problem, t, st.beta, st.u, joint=True))

    fd1 = [(stage1(x[:k] + e) - stage1(x[:k] - e)) / 2e-5 for e in 1e-5 * np.eye(k)]
    np.testing.assert_allclose(laplace_gradient(problem, x[:k], st, joint=True), fd1, rtol=1e-6, atol=1e-6)


def test_row_patterns_are_exact_and_bounded():
    X = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 0.0], [1.0, 2.0]])
    index, pats = row_patterns(X, 10)
    np.testing.assert_array_equal(pats[index], X)
    assert len(pats) == 3
    assert row_patterns(X, 2) is None


def test_hessian_from_the_gradient_equals_second_differences_of_the_deviance():
    """fit_glmm's covariance Hessian (central differences of the analytic gradient) against lme4's deriv12-style
    second differences of the deviance itself."""
    from mixeval.mixed._glmm import _hessian, optimize_glmm

    df = _data(seed=5)
    problem = glmm_problem(build_design("y ~ system + (1|item) + (1|tmpl)", df), get_family("binomial"), np.ones(len(df)))
    gf = GlmmFit(problem, 1)
    theta, beta, _ = optimize_glmm(gf)
    x = np.concatenate([theta, beta])
    np.testing.assert_allclose(gf.stage2_hessian(x), _hessian(gf.stage2, x), rtol=1e-4, atol=1e-4)


def _membership_problem(link: str, with_block: bool, sparse_x: bool):
    """Paired comparisons: ``u[a, g] - u[b, g]`` (a multiple-membership term) beside, optionally, a random
    intercept per judge (the block term) and a second membership term; X the +1/-1 difference design."""
    import scipy.sparse as sp

    from mixeval.mixed._pirls import GlmmProblem
    from mixeval.mixed._reterms import ReStructure, ReTerm

    rng = np.random.default_rng(4)
    n, k = 800, 5
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    g, j = rng.integers(0, 4, n), rng.integers(0, 7, n)
    X = np.zeros((n, k))
    X[np.arange(n), a] += 1.0
    X[np.arange(n), b] -= 1.0
    X = np.column_stack([X[:, 1:], np.ones(n)])
    y = (rng.random(n) < 1 / (1 + np.exp(-(X[:, 0] - X[:, 2] + 0.3)))).astype(float)
    ones = np.ones((n, 1))
    terms = [ReTerm("sys:g", ("(Intercept)",), a * 4 + g, tuple(f"l{v}" for v in range(4 * k)), ones,
                    codes2=b * 4 + g, X2=-ones),
             ReTerm("sys:j", ("(Intercept)",), a * 7 + j, tuple(f"m{v}" for v in range(7 * k)), ones,
                    codes2=b * 7 + j, X2=-ones)]
    if with_block:
        terms.append(ReTerm("judge", ("position",), j, tuple(f"j{v}" for v in range(7)), ones))
    return GlmmProblem(y=y, X=sp.csr_matrix(X) if sparse_x else X, weights=np.ones(n), offset=np.zeros(n),
                       re=ReStructure(tuple(terms), n), family=get_family("binomial", link))


@pytest.mark.parametrize("link, with_block, sparse_x", [("logit", True, True), ("logit", False, False),
                                                        ("probit", True, False)])
def test_membership_gradient_equals_central_differences(link, with_block, sparse_x):
    """Multiple-membership terms (each row loads +1 and -1 on two levels): the analytic gradient in
    (theta, beta) and in theta with beta from PIRLS against central differences of the Laplace deviance."""
    problem = _membership_problem(link, with_block, sparse_x)
    assert supports_gradient(problem)
    k = problem.re.n_theta
    theta, beta = 0.5 + 0.2 * np.arange(k), np.full(problem.p, 0.1)
    x = np.concatenate([theta, beta])
    gf = GlmmFit(problem, 1)
    gf.u = gf.state(x).u
    fd = [(gf.stage2(x + e) - gf.stage2(x - e)) / 2e-5 for e in 1e-5 * np.eye(x.size)]
    np.testing.assert_allclose(laplace_gradient(problem, theta, gf.state(x)), fd, atol=2e-5)
    joint = lambda t: laplace_deviance(problem, pirls(problem, t, beta, joint=True))  # noqa: E731
    fd_joint = [(joint(theta + e) - joint(theta - e)) / 2e-5 for e in 1e-5 * np.eye(k)]
    np.testing.assert_allclose(laplace_gradient(problem, theta, pirls(problem, theta, beta, joint=True), joint=True),
                               fd_joint, atol=2e-5)
