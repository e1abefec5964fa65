"""R's expression syntax: precedence as ``?Syntax`` states it, and ``deparse`` as R 4's (the names of columns)."""

from __future__ import annotations

import pytest

from mixeval.errors import FormulaError
from mixeval.formula._syntax import Binary, Num, Unary, deparse, format_number, parse_r

# deparse(str2lang(text)) in R 4.5
R_DEPARSE = {
    "I(x/2)": "I(x/2)", "I(x*2)": "I(x * 2)", "I(x^2)": "I(x^2)", "I(x**2)": "I(x^2)", "I(-x)": "I(-x)",
    "I(x%%2)": "I(x%%2)", "I(x%/%2)": "I(x%/%2)", "log(x,base=2)": "log(x, base = 2)", "I(x>3)": "I(x > 3)",
    "I(x>=3&y<2)": "I(x >= 3 & y < 2)", "I(!z)": "I(!z)", "I((x-1)^2)": "I((x - 1)^2)", "I(x - -1)": "I(x - -1)",
    "I(1e3*x)": "I(1000 * x)", "I(0.1*x)": "I(0.1 * x)", "I(1/3*x)": "I(1/3 * x)", "I(x*1e-10)": "I(x * 1e-10)",
    "I(x*100000)": "I(x * 1e+05)", "I(x*123456)": "I(x * 123456)", "I(2L*x)": "I(2L * x)",
    "ns(x,df=3)": "ns(x, df = 3)", "poly(x,2,raw=TRUE)": "poly(x, 2, raw = TRUE)",
    "factor(g,levels=c('b','a'))": 'factor(g, levels = c("b", "a"))', "log(`a b`)": "log(`a b`)",
    "I(x+1e5)": "I(x + 1e+05)", "I(x*1e15)": "I(x * 1e+15)", "I(x* 1234567890123456)": "I(x * 1234567890123456)",
    "I(-2^2)": "I(-2^2)", "I(x %in% y)": "I(x %in% y)", "splines::ns(x, 3)": "splines::ns(x, 3)", "I(+x)": "I(+x)",
    "I(x==1)": "I(x == 1)", "I(x != 1)": "I(x != 1)", "ifelse(x > 1, 1, 0)": "ifelse(x > 1, 1, 0)",
    "I(x*0.5e-3)": "I(x * 5e-04)", "I(x*2.50)": "I(x * 2.5)", "I(x * .5)": "I(x * 0.5)", "I(x*TRUE)": "I(x * TRUE)",
    "I(-(x))": "I(-(x))", "I(x^-1)": "I(x^-1)", "I(x^(1/3))": "I(x^(1/3))", "I(x - (-1))": "I(x - (-1))",
}


@pytest.mark.parametrize("text", list(R_DEPARSE))
def test_deparse_is_rs(text):
    assert deparse(parse_r(text)) == R_DEPARSE[text]


def test_precedence_is_rs():
    # -2^2 is -(2^2); 2^-1 is 2^(-1); ^ is right associative
    assert parse_r("-2^2") == Unary("-", Binary("^", Num(2.0), Num(2.0)))
    assert parse_r("2^3^2") == Binary("^", Num(2.0), Binary("^", Num(3.0), Num(2.0)))
    # %% binds tighter than *, : tighter than %%, unary minus tighter than :
    assert deparse(parse_r("a * b %% c")) == "a * b%%c" and parse_r("a * b %% c").op == "*"
    assert parse_r("-a:b").op == ":"
    # the formula operators: ~ lowest, then |, then + -, then * /, then : ; a*b - a:b removes the interaction
    tree = parse_r("y ~ a*b - a:b + (1 + x | g)")
    assert tree.op == "~" and tree.right.op == "+" and tree.right.left.op == "-"
    assert parse_r("a || b").op == "||" and parse_r("(1 + x || g)").inner.op == "||"


@pytest.mark.parametrize("value, text", [(2.0, "2"), (0.1, "0.1"), (100000.0, "1e+05"), (123456.0, "123456"),
                                         (1e-10, "1e-10"), (0.0005, "5e-04"), (1 / 3, "0.333333333333333"),
                                         (0.1 + 0.2, "0.3"), (-2.5, "-2.5"), (1e15, "1e+15")])
def test_numbers_print_as_rs_as_character(value, text):
    assert format_number(value) == text


@pytest.mark.parametrize("text, match", [
    ("y ~ x +", "ends where a term is expected"),
    ("y ~ (x", r"unbalanced parentheses.*'\(' is not closed"),
    ("y ~ x)", "unbalanced parentheses.*closes no"),
    ("y ~ x[1]", "indexing"),
    ("y ~ x$a", "list extraction"),
    ("y ~ x |> log()", "pipe"),
    ("y ~ my col", "backticks"),
    ("y ~ f(x,)", "empty argument"),
    ("y ~ x <- 2", "assignment"),
])
def test_syntax_errors_say_what_and_where(text, match):
    with pytest.raises(FormulaError, match=match):
        parse_r(text)
