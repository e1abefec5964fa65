"""The dense exact-Hessian evaluator of the refits (uncertainty/_dense.py) against the engine."""

import numpy as np
import pandas as pd
import pytest

from mixeval import lmer
from mixeval.mixed._deviance import deviance_and_gradient
from mixeval.mixed._dense import DenseDesign
from mixeval.mixed._lmm_model import LmmFitModel


@pytest.fixture(scope="module")
def crossed():
    rng = np.random.default_rng(3)
    items, raters = 25, 6
    item = np.repeat(np.arange(items), raters * 2)
    rater = np.tile(np.repeat(np.arange(raters), 2), items)
    sys_ = np.tile([0, 1], items * raters)
    y = 0.3 * sys_ + rng.normal(0, 1.0, items)[item] + rng.normal(0, 0.5, raters)[rater] + rng.normal(0, 0.8, item.size)
    df = pd.DataFrame({"y": y, "item": item.astype(str), "rater": rater.astype(str), "sys": sys_.astype(str)})
    fit = lmer("y ~ sys + (1|item) + (1|rater) + (1|rater:item)", df)
    return LmmFitModel(fit)


@pytest.mark.parametrize("reml", [True, False])
def test_deviance_gradient_equal_the_engine_and_hessian_its_differences(crossed, reml):
    m = crossed
    dense = DenseDesign(m._zt, m.design.X)
    Y = m.simulate(2, np.random.default_rng(1))
    stats, sums = m.stats_for(Y)[1], dense.sums(Y)[1]
    theta = np.array([0.9, 0.4, 0.2])
    value, grad, hess = dense.evaluate(theta, sums, reml)
    v_engine, g_engine = deviance_and_gradient(stats, theta, reml)
    assert value == pytest.approx(v_engine, abs=1e-9)
    np.testing.assert_allclose(grad, g_engine, atol=1e-8)
    step = 1e-6
    fd = np.array([(dense.evaluate(theta + step * e, sums, reml)[1] - dense.evaluate(theta - step * e, sums, reml)[1])
                   / (2 * step) for e in np.eye(3)])
    np.testing.assert_allclose(hess, fd, rtol=1e-5, atol=1e-5)


def test_dense_refits_reach_the_engine_optimum(crossed):
    m = crossed
    assert m._dense is not None
    Y = m.simulate(20, np.random.default_rng(2))
    dense = [m._summary(*m._dense_refit(s, True)) for s in m._dense.sums(Y)]
    engine = [m._summary(*m._engine_refit(s, True)) for s in m.stats_for(Y)]
    for a, b in zip(dense, engine):
        assert a.criterion <= b.criterion + 1e-7
        np.testing.assert_allclose(a.params, b.params, rtol=1e-4, atol=1e-5)


def test_a_zero_component_the_deviance_descends_from_is_released(crossed):
    m = crossed
    dense = DenseDesign(m._zt, m.design.X)
    s = dense.sums(m.simulate(1, np.random.default_rng(4)))[0]
    zeros = np.zeros(3)  # theta = 0 is stationary (the deviance is even): an optimiser started there stays
    assert np.all(dense.start(zeros, s, True) > 0)   # every slope in phi is negative at 0 on these data
    opt = dense.optimize(s, True, zeros)
    ref = dense.optimize(s, True, np.array([1.0, 1.0, 1.0]))
    assert opt.deviance == pytest.approx(ref.deviance, abs=1e-7)
    assert opt.theta[1] > 0.5  # the item component, far from 0
