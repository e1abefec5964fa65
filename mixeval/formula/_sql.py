"""R expressions of a formula as SQL, for query engines that compute a model's statistics where the data live.

Only stateless numeric expressions translate (R's arithmetic and the elementwise math functions); R's meaning is
kept (``^`` is ``POWER``, ``%%`` the floored modulus ``a - FLOOR(a / b) * b``, ``/`` divides as doubles).
Anything else (stateful bases such as ``scale()`` or ``ns()``, whose parameters need the rows; text and logical
expressions) is refused by name.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import FormulaError
from ._syntax import Binary, Call, Name, Node, Num, Paren, Unary, deparse

__all__ = ["sql_of"]

_UNARY_FUNCTIONS = {"exp": "EXP({})", "sqrt": "SQRT({})", "abs": "ABS({})", "sign": "SIGN({})",
                    "floor": "FLOOR({})", "ceiling": "CEIL({})", "log10": "LOG10({})", "log2": "(LN({}) / LN(2.0))",
                    "log1p": "LN(1.0 + {})", "expm1": "(EXP({}) - 1.0)", "sin": "SIN({})", "cos": "COS({})",
                    "tan": "TAN({})", "atan": "ATAN({})"}


def sql_of(node: Node, quote: Callable[[str], str], *, where: str = "the query engine") -> str:
    """The SQL of a stateless numeric R expression (columns quoted by ``quote``, cast to DOUBLE).

    Raises
    ------
    FormulaError
        For an expression the translation does not cover, naming it.

    Examples
    --------
    >>> from mixeval.formula._syntax import parse_r
    >>> sql_of(parse_r("I(len^2) + log(x, 10)"), lambda c: f'"{c}"')
    '(POWER(CAST("len" AS DOUBLE), 2.0) + (LN(CAST("x" AS DOUBLE)) / LN(10.0)))'
    """
    def fail(part: Node, why: str) -> FormulaError:
        return FormulaError(f"{deparse(part)} in {deparse(node)} cannot be computed by {where}: {why} Compute "
                            "the column in the query engine first, or load the rows into a pandas DataFrame.")

    def walk(n: Node) -> str:
        if isinstance(n, Num):
            return repr(float(n.value))
        if isinstance(n, Name):
            if n.id in ("TRUE", "FALSE", "T", "F"):
                raise fail(n, "logical constants are not numbers here.")
            if n.id == "pi":
                return "PI()"
            return f"CAST({quote(n.id)} AS DOUBLE)"
        if isinstance(n, Paren):
            return walk(n.inner)
        if isinstance(n, Unary) and n.op in ("-", "+"):
            return f"({n.op}{walk(n.operand)})"
        if isinstance(n, Binary):
            a, b = walk(n.left), walk(n.right)
            if n.op in ("+", "-", "*", "/"):
                return f"({a} {n.op} {b})"
            if n.op == "^":
                return f"POWER({a}, {b})"
            if n.op == "%%":
                return f"({a} - FLOOR({a} / {b}) * {b})"
            if n.op == "%/%":
                return f"FLOOR({a} / {b})"
            raise fail(n, f"the operator {n.op} gives logical or text values, not numbers.")
        if isinstance(n, Call):
            name = n.base
            args = [a.value for a in n.args]
            if name == "I" and len(args) == 1:
                return walk(args[0])
            if name == "log" and 1 <= len(args) <= 2:
                return f"LN({walk(args[0])})" if len(args) == 1 else f"(LN({walk(args[0])}) / LN({walk(args[1])}))"
            if name in _UNARY_FUNCTIONS and len(args) == 1 and all(a.name is None for a in n.args):
                return _UNARY_FUNCTIONS[name].format(walk(args[0]))
            if name in ("pmin", "pmax") and args:
                return f"{'LEAST' if name == 'pmin' else 'GREATEST'}({', '.join(walk(a) for a in args)})"
            if name in ("scale", "poly", "ns", "bs"):
                raise fail(n, f"{name}() needs the parameters of all rows (centre, scale, knots or coefficients).")
            raise fail(n, f"{name}() has no SQL translation here.")
        raise fail(n, "it is not a numeric expression.")  # pragma: no cover - every node type is handled above

    return walk(node)
