"""R's bases (``poly``, ``splines::ns``/``bs``, ``contr.*``, ``scale``) against R's own (``fixtures/make_bases.R``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mixeval.errors import InputError
from mixeval.formula._bases import bs_basis, contr_poly, ns_basis, poly_basis, poly_coefs, spline_knots
from mixeval.formula._evaluate import contrast_matrix

R = {k: v for k, v in json.loads((Path(__file__).parent / "fixtures" / "bases.json").read_text()).items()}
X, XN = np.array(R["x"]), np.array(R["xn"])


def _close(got: np.ndarray, name: str) -> None:
    ref = np.array(R[name], dtype=float).reshape(got.shape)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


def _knots(df=None, knots=None, degree=3, intercept=False, boundary=None, natural=False):
    return spline_knots(X, df=df, knots=None if knots is None else np.array(knots, float), degree=degree,
                        intercept=intercept, boundary=boundary, natural=natural, what="test")


def test_poly_orthogonal_basis_and_its_recurrence_for_new_data():
    _close(poly_basis(X, 3), "poly3")
    _close(poly_basis(X, 1), "poly1")
    _close(poly_basis(XN, 3, poly_coefs(X, 3)), "poly3_new")


def test_natural_splines():
    k = _knots(df=3, natural=True)
    _close(ns_basis(X, k), "ns3")
    _close(ns_basis(XN, k), "ns3_new")  # linear beyond the boundary knots
    _close(ns_basis(X, _knots(df=1, natural=True)), "ns1")
    _close(ns_basis(X, _knots(df=5, intercept=True, natural=True)), "ns5_intercept")
    k = _knots(knots=[3, 8], boundary=np.array([0.0, 60.0]), natural=True)
    _close(ns_basis(X, k), "ns_knots")
    _close(ns_basis(XN, k), "ns_knots_new")


def test_b_splines():
    k = _knots(df=4)
    _close(bs_basis(X, k), "bs4")
    _close(bs_basis(XN, k), "bs4_new")  # Taylor expansion beyond the boundary knots
    _close(bs_basis(X, _knots(df=3)), "bs3")
    k = _knots(df=5, degree=2)
    _close(bs_basis(X, k), "bs5_degree2")
    _close(bs_basis(XN, k), "bs5_degree2_new")
    _close(bs_basis(X, _knots(knots=[5, 10, 20], degree=1)), "bs_degree1_knots")
    _close(bs_basis(X, _knots(df=4, intercept=True)), "bs4_intercept")


@pytest.mark.parametrize("coding, key, sizes", [("poly", "contr_poly", range(2, 8)),
                                                ("helmert", "contr_helmert", range(2, 6)),
                                                ("sum", "contr_sum", range(2, 6))])
def test_contrast_matrices(coding, key, sizes):
    for n, ref in zip(sizes, R[key]):
        got = contrast_matrix(coding, n)[0]
        np.testing.assert_allclose(got, np.array(ref, dtype=float).reshape(got.shape), rtol=1e-12, atol=1e-14)
    assert np.allclose(contr_poly(4), contrast_matrix("poly", 4)[0])


def test_impossible_bases_are_refused_as_r_refuses_them():
    with pytest.raises(InputError, match="degree .* less than the number of distinct values"):
        poly_coefs(np.array([1.0, 2.0, 1.0]), 2)
    with pytest.raises(InputError, match="df = 2 is too small; the smallest is 3"):
        _knots(df=2)
    with pytest.raises(InputError, match="Boundary.knots must be two numbers"):
        _knots(df=4, boundary=np.array([1.0, 2.0, 3.0]))
