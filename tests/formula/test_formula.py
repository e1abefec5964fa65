"""``parse_formula``: the response, the fixed part and lme4's random-effects terms, read with R's grammar."""

from __future__ import annotations

import pytest

from mixeval.errors import FormulaError
from mixeval.formula import parse_formula


def test_random_terms_as_lme4_expands_them():
    p = parse_formula("y ~ x + (x || subject) + (0 + x | item) + (1|site/rater) + (1|a:b) + us(1 + x | c)")
    assert [t.label for t in p.random] == ["(1 | subject)", "(0 + x | subject)", "(0 + x | item)", "(1 | site)",
                                           "(1 | rater:site)", "(1 | a:b)", "(1 + x | c)"]
    assert p.fixed == "x" and p.columns == ("subject", "item", "site", "rater", "a", "b", "c")
    # (a*b || g) expands a*b with R's term algebra, as lme4's expandDoubleVerts does
    assert [t.lhs for t in parse_formula("y ~ (a*b || g)").random] == ["1", "0 + a", "0 + b", "0 + a:b"]
    assert parse_formula("y ~ (1 + I(age^2) | id)").slope_columns == ("age",)


def test_the_fixed_part_keeps_r_s_spelling_and_offsets():
    p = parse_formula("y ~ x - 1 + I(len**2) + offset(log(n)) + (1|g)")
    assert p.fixed == "x - 1 + I(len^2) + offset(log(n))"
    assert p.offsets == ("log(n)",) and p.fixed_terms == (("x",), ("I(len^2)",))
    assert p.fixed_columns() == ("x", "len", "n")
    assert parse_formula("y ~ (1|g)").fixed == "1"
    assert parse_formula("y ~ 0 + (1|g)").fixed == "0"
    assert parse_formula("y ~ system * x + (1|g)").fixed_without("system") == "1 + x"


@pytest.mark.parametrize("formula, response, column", [
    ("score ~ 1 + (1|g)", "score", True), ("`my score` ~ 1 + (1|g)", "my score", True),
    ("log(rt) ~ 1 + (1|g)", "log(rt)", False), ("cbind(k, n - k) ~ 1 + (1|g)", "cbind(k, n - k)", False),
    ("k/n ~ 1 + (1|g)", "k/n", False),
])
def test_responses(formula, response, column):
    p = parse_formula(formula)
    assert p.response == response and p.response_is_column == column
    assert (p.binomial_pair is not None) == response.startswith("cbind")


@pytest.mark.parametrize("formula, match", [
    ("y ~ x + ar1(0 + t | id)", r"ar1\(\) .* is not supported"),
    ("y ~ x + diag(x | id)", r"diag\(\) .* \(x \|\| g\)"),
    ("y ~ x + 1 | g", "must be in parentheses"),
    ("y ~ x * (1 | g)", "must be a term of its own"),
    ("y ~ (1 | g) + (1 | g)", "appear more than once"),
    ("y ~ (1 | factor(g))", "cannot parse the grouping factor"),
    ("y ~ (x | | g)", "unexpected|more than one"),
    ("~ x + (1|g)", "has no response"),
    ("y ~ x ~ z", "exactly one '~'"),
    ("my score ~ x + (1|g)", r"backticks \(`my score` ~ \.\.\.\)"),
    ("cbind(a, b, c) ~ x + (1|g)", "takes two columns"),
    ("2 ~ x + (1|g)", "is a number"),
])
def test_formulas_mixeval_does_not_read_are_refused_by_name(formula, match):
    with pytest.raises(FormulaError, match=match):
        parse_formula(formula)
