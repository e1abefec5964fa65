"""Expressions in a formula evaluated with R's semantics (values as R 4.5 prints them), never Python's."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special

from mixeval.errors import ColumnError, FormulaError, InputError
from mixeval.formula import model_matrix
from mixeval.formula._evaluate import RFactor, evaluate
from mixeval.formula._syntax import parse_r


def _eval(text: str, **columns):
    env = {k: pd.Series(v) for k, v in columns.items()}
    n = len(next(iter(env.values()))) if env else 1
    return evaluate(parse_r(text), env, {}, nrows=n)


def test_power_is_never_exclusive_or():
    length = np.array([1, 2, 3, 10], dtype=np.int64)  # an integer column: Python's ^ would be xor (3 ^ 2 == 1)
    np.testing.assert_array_equal(_eval("I(len^2)", len=length), [1.0, 4.0, 9.0, 100.0])
    np.testing.assert_array_equal(_eval("I(len**2)", len=length), [1.0, 4.0, 9.0, 100.0])
    np.testing.assert_array_equal(_eval("I(len^-1)", len=length), [1.0, 0.5, 1 / 3, 0.1])  # R: 2L^-1L is 0.5
    assert _eval("-2^2", x=[0]) == -4.0


def test_floored_modulus_and_division_are_rs():
    x = np.array([5, -5, 5.5, -5.5, 0, 7])
    y = np.array([-3, 3, 2, 2, 0, 0])
    # x %% y and x %/% y in R
    np.testing.assert_array_equal(_eval("x %% y", x=x, y=y), [-1.0, 1.0, 1.5, 0.5, np.nan, np.nan])
    np.testing.assert_array_equal(_eval("x %/% y", x=x, y=y), [-2.0, -2.0, 2.0, -3.0, np.nan, np.inf])
    # %% binds tighter than *: 2 * 3 %% 2 is 2 * (3 %% 2)
    assert _eval("I(2 * x %% 2)", x=[3.0]) == 2.0


def test_logical_expressions_are_factors_named_as_r_names_them():
    df = pd.DataFrame({"x": [1.0, 5.0, 2.0, 7.0], "g": ["a", "b", "a", "b"]})
    mm = model_matrix("I(x > 3) + I(g == \"a\" & x < 2)", df)
    assert list(mm.columns) == ["(Intercept)", "I(x > 3)TRUE", "I(g == \"a\" & x < 2)TRUE"]
    np.testing.assert_array_equal(mm.iloc[:, 1], [0, 1, 0, 1])


def test_factor_levels_are_rs():
    # levels(factor(c(10, 2, 1e5, 2.5))) and as.character in R
    f = _eval("factor(x)", x=[10.0, 2.0, 1e5, 2.5])
    assert isinstance(f, RFactor) and f.levels == ("2", "2.5", "10", "1e+05")
    assert _eval("factor(x)", x=np.array([10, 2, 100000], dtype=np.int64)).levels == ("2", "10", "100000")
    assert _eval("factor(b)", b=[True, False]).levels == ("FALSE", "TRUE")
    # R's collation (ICU's root, R's default in every locale but C): punctuation, then letters case-insensitively
    assert _eval("factor(s)", s=["b", "B", "a", "_"]).levels == ("_", "a", "b", "B")
    g = _eval('factor(s, levels = c("b", "a"), labels = c("B", "A"))', s=["a", "b", "a"])
    assert g.levels == ("B", "A") and g.codes.tolist() == [1, 0, 1]
    assert _eval('relevel(s, ref = "b")', s=["a", "b", "c"]).levels == ("b", "a", "c")
    assert _eval("ordered(x)", x=[3, 1, 2]).coding == "poly"
    assert _eval("C(s, helmert)", s=["a", "b"]).coding == "helmert"
    assert _eval("as.numeric(factor(x))", x=[10.0, 2.0]).tolist() == [2.0, 1.0]  # R: the codes, not the labels


def test_math_functions_are_rs():
    x = np.array([1.0, 4.0, 9.0])
    np.testing.assert_allclose(_eval("log(x, base = 3)", x=x), np.log(x) / np.log(3))
    np.testing.assert_allclose(_eval("log(x, 3)", x=x), np.log(x) / np.log(3))
    np.testing.assert_allclose(_eval("sqrt(x) + abs(-x) + exp(-x) + log10(x) + log2(x) + log1p(x)", x=x),
                               np.sqrt(x) + x + np.exp(-x) + np.log10(x) + np.log2(x) + np.log1p(x))
    np.testing.assert_allclose(_eval("pmin(x, 5) + pmax(x, 2, 3)", x=x), np.minimum(x, 5) + np.maximum(x, 3))
    np.testing.assert_array_equal(_eval("ifelse(x > 2, \"big\", \"small\")", x=x), ["small", "big", "big"])
    np.testing.assert_allclose(_eval("plogis(x) + qlogis(0.5) + pnorm(x, mean = 1)", x=x),
                               1 / (1 + np.exp(-x)) + special.ndtr(x - 1))
    np.testing.assert_allclose(_eval("np.log(x)", x=x), np.log(x))  # numpy's spelling of R's log


def test_stateful_transforms_keep_the_fitted_parameters():
    state: dict = {}
    x = pd.Series([1.0, 2.0, 3.0, 4.0])
    evaluate(parse_r("scale(x)"), {"x": x}, state, nrows=4)
    again = evaluate(parse_r("scale(x)"), {"x": pd.Series([2.5])}, state, nrows=1)  # new data: the fit's centre
    assert again[0] == 0.0
    assert state["scale(x)"] == {"center": 2.5, "scale": pytest.approx(np.std(x, ddof=1))}
    moved = evaluate(parse_r("scale(x)"), {"x": pd.Series([4.0])}, state, nrows=1)
    assert moved[0] == pytest.approx(1.5 / np.std(x, ddof=1))
    levels: dict = {}
    evaluate(parse_r("factor(g)"), {"g": pd.Series(["b", "a", "c"])}, levels, nrows=3)
    f = evaluate(parse_r("factor(g)"), {"g": pd.Series(["c"])}, levels, nrows=1)
    assert f.levels == ("a", "b", "c") and f.codes.tolist() == [2]
    with pytest.raises(InputError, match="level\\(s\\) 'z' .* never saw"):
        evaluate(parse_r("factor(g)"), {"g": pd.Series(["z"])}, levels, nrows=1)


@pytest.mark.parametrize("text, error, match", [
    ("lsp(x, 3)", FormulaError, r"lsp\(\) is not supported.*pmax\(x - 10, 0\)"),
    ("s(x)", FormulaError, r"s\(\) is not supported.*GAM"),
    ("cut(x, 3)", FormulaError, r"cut\(\) is not supported.*pandas.cut"),
    ("I(x - mean(x))", FormulaError, r"mean\(\) is not supported.*scale\(x, scale = FALSE\)"),
    ("center(x)", FormulaError, r"scale\(x, scale = FALSE\)"),
    ("foo(x)", FormulaError, r"foo\(\) is not a function mixeval formulas know"),
    ("I(x && x)", FormulaError, "'&&'"),
    ("I(x:x)", FormulaError, "interaction a:b as a term"),
    ("I(s + 1)", InputError, "holds text"),
    ("I(f * 2)", InputError, "is a factor"),
    ("poly(x, 2, coefs = 1)", FormulaError, "coefs= and simple= are not supported"),
    ("poly(x, z, degree = 2)", FormulaError, "several variables"),
    ("poly(x, 5)", InputError, "degree .* less than the number of distinct values"),
    ("ns(x, df = 3, foo = 1)", FormulaError, "unused argument foo"),
    ("factor(x, exclude = 1)", FormulaError, "exclude= is not supported"),
    ('relevel(s, ref = "zz")', InputError, "ref = 'zz' is not a level"),
    ("C(s, contr.foo)", FormulaError, "contrasts contr.foo are not supported"),
    ("I(NA)", FormulaError, "NA is not supported"),
    ("log(nothere)", ColumnError, "column 'nothere' not found"),
])
def test_what_mixeval_does_not_compute_is_refused_by_name(text, error, match):
    with pytest.raises(error, match=match):
        _eval(text, x=[1.0, 2.0, 3.0, 4.0], z=[1.0, 0.0, 1.0, 0.0], s=["a", "b", "a", "b"],
              f=pd.Categorical(["a", "b", "a", "b"]))


def test_bs_beyond_its_boundary_warns_as_r_does():
    state: dict = {}
    evaluate(parse_r("bs(x, 4)"), {"x": pd.Series(np.linspace(0, 1, 20))}, state, nrows=20)
    with pytest.warns(UserWarning, match="beyond the boundary knots"):
        evaluate(parse_r("bs(x, 4)"), {"x": pd.Series([1.5])}, state, nrows=1)
    natural: dict = {}
    evaluate(parse_r("ns(x, 4)"), {"x": pd.Series(np.linspace(0, 1, 20))}, natural, nrows=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a natural spline is linear beyond its boundary knots: nothing to warn
        evaluate(parse_r("ns(x, 4)"), {"x": pd.Series([1.5])}, natural, nrows=1)
    with pytest.raises(InputError, match="two distinct values"):
        evaluate(parse_r("ns(x, 4)"), {"x": pd.Series([1.5, 1.5])}, {}, nrows=2)
