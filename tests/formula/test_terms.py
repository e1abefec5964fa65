"""R's term algebra (``attr(terms(f), "term.labels")`` and ``"intercept"`` of R 4.5)."""

from __future__ import annotations

import pytest

from mixeval.errors import FormulaError
from mixeval.formula._syntax import parse_r
from mixeval.formula._terms import expand_terms

# attr(terms(~ rhs), "term.labels") and "intercept" in R
R_TERMS = {
    "b + a + a:b + x:b": (("b", "a", "b:a", "b:x"), True),
    "(a+b+x)^2 - a:b": (("a", "b", "x", "a:x", "b:x"), True),
    "a/b/x": (("a", "a:b", "a:b:x"), True),
    "x %in% a": (("x:a",), True),
    "(a+b) %in% x": (("a:x", "b:x"), True),
    "(a+b)/x": (("a", "b", "a:b:x"), True),
    "x:a + z:a": (("x:a", "a:z"), True),
    "a*b - 1 + 1": (("a", "b", "a:b"), True),
    "a - 0": (("a",), True),
    "a + 0 + 1": (("a",), True),
    "1 + a + 0": (("a",), False),
    "-1 + a": (("a",), False),
    "a*b*c": (("a", "b", "c", "a:b", "a:c", "b:c", "a:b:c"), True),
    "(a + b + c)^3 - a:b:c": (("a", "b", "c", "a:b", "a:c", "b:c"), True),
    "a:b + a": (("a", "a:b"), True),
    "I(x^2) + log(x) + x": (("I(x^2)", "log(x)", "x"), True),
    "poly(x, 2)*a": (("poly(x, 2)", "a", "poly(x, 2):a"), True),
}


@pytest.mark.parametrize("rhs", list(R_TERMS))
def test_terms_are_rs(rhs):
    terms = expand_terms(parse_r(rhs))
    assert (terms.labels, terms.intercept) == R_TERMS[rhs]


def test_offsets_are_kept_apart_in_order():
    terms = expand_terms(parse_r("x + offset(log(n)) + offset(w/2) - 1"))
    assert terms.labels == ("x",) and not terms.intercept
    assert [str(o) for o in terms.offsets] != [] and len(terms.offsets) == 2


def test_a_power_of_one_column_is_rs_and_warns():
    with pytest.warns(UserWarning, match=r"I\(len\^2\) for the power"):
        assert expand_terms(parse_r("len^2 + a")).labels == ("len", "a")


@pytest.mark.parametrize("rhs, match", [
    ("a + .", r"`\.` \(every other column"),
    ("a + 2", "the number 2 is not a term"),
    ("(a + b)^x", "must be a whole number"),
    ("a + (1 | g):b", "must be a term of its own"),
    ("offset(a, b)", "offset\\(\\) takes one expression"),
    ("a - offset(b)", "cannot be removed"),
])
def test_what_r_would_read_otherwise_is_refused(rhs, match):
    with pytest.raises(FormulaError, match=match):
        expand_terms(parse_r(rhs))
