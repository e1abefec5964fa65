"""R's term algebra (``terms.formula``): the right-hand side of a formula as an intercept and a list of terms.

Each term is a set of variables; a variable is any expression that is not a formula operator (``x``,
``I(len^2)``, ``factor(level)``, ``poly(x, 2)``), numbered in order of first appearance as R numbers them.
The operators are R's (Chambers & Hastie 1992, ``?formula``): ``a + b`` joins, ``a:b`` interacts every term of
``a`` with every term of ``b``, ``a*b`` is ``a + b + a:b``, ``(a + b)^2`` crosses up to order 2, ``b %in% a``
adds all of ``a``'s variables to every term of ``b``, ``a/b`` is ``a + b %in% a``, ``- t`` removes terms,
``0``/``- 1`` drop the intercept, ``offset(expr)`` is kept aside. The terms are then ordered by their
number of variables, stably, as R does.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from ..errors import FormulaError, caller_stacklevel
from ._syntax import Binary, Call, Name, Node, Num, Paren, Unary, deparse

__all__ = ["Terms", "expand_terms"]


@dataclass(frozen=True)
class Terms:
    """The expanded right-hand side of a formula.

    Attributes
    ----------
    variables : tuple of Node
        The variables, in R's order (first appearance).
    terms : tuple of tuple of int
        Each term as the indices of its variables (ascending), ordered by degree as R orders them.
    intercept : bool
        Whether the model has an intercept.
    offsets : tuple of Node
        The expressions of the ``offset()`` terms, in order.

    Examples
    --------
    >>> from mixeval.formula._syntax import parse_r
    >>> t = expand_terms(parse_r("(a + b + c)^2 - a:b"))
    >>> t.labels, t.intercept
    (('a', 'b', 'c', 'a:c', 'b:c'), True)
    """

    variables: tuple[Node, ...]
    terms: tuple[tuple[int, ...], ...]
    intercept: bool
    offsets: tuple[Node, ...] = ()

    @property
    def variable_names(self) -> tuple[str, ...]:
        """Each variable as R prints it (``I(len^2)``)."""
        return tuple(_plain(v) for v in self.variables)

    @property
    def labels(self) -> tuple[str, ...]:
        """R's ``term.labels``: ``"a"``, ``"a:b"``."""
        names = self.variable_names
        return tuple(":".join(names[i] for i in term) for term in self.terms)


def _plain(node: Node) -> str:
    """A variable's name: a bare column keeps its name unquoted, an expression is deparsed."""
    return node.id if isinstance(node, Name) else deparse(node)


class _Expander:
    def __init__(self, text: str) -> None:
        self.text = text
        self.keys: dict[str, int] = {}
        self.variables: list[Node] = []
        self.intercept = True
        self.offsets: list[Node] = []

    def fail(self, message: str) -> FormulaError:
        return FormulaError(f"{message} (in {self.text!r}).")

    def variable(self, node: Node) -> list[frozenset[int]]:
        key = deparse(node)
        if key not in self.keys:
            self.keys[key] = len(self.variables)
            self.variables.append(node)
        return [frozenset([self.keys[key]])]

    def encode(self, node: Node, deleting: bool = False) -> list[frozenset[int]]:
        if isinstance(node, Paren):
            return self.encode(node.inner, deleting)
        if isinstance(node, Num):
            if node.value in (0.0, 1.0):
                self.intercept = (node.value == 1.0) != deleting
                return []
            raise self.fail(f"the number {deparse(node)} is not a term: a formula's terms are columns or expressions; "
                            f"use 1 for the intercept, 0 to drop it, or I(...) for arithmetic")
        if isinstance(node, Name) and node.id == ".":
            raise self.fail("`.` (every other column of the data) is not supported in mixeval formulas; list the "
                            "columns, e.g. y ~ a + b + (1 | g)")
        if isinstance(node, Call) and node.base == "offset":
            if len(node.args) != 1 or node.args[0].name is not None:
                raise self.fail(f"offset() takes one expression, e.g. offset(log(exposure)); got {deparse(node)}")
            if deleting:
                raise self.fail(f"an offset cannot be removed with '-' ({deparse(node)})")
            self.offsets.append(node.args[0].value)
            return []
        if isinstance(node, Unary) and node.op in ("+", "-"):
            if node.op == "+":
                return self.encode(node.operand, deleting)
            self.encode(node.operand, not deleting)  # "- t" alone: the only effect is on the intercept
            return []
        if isinstance(node, Binary):
            op = node.op
            if op == "+":
                return _unique(self.encode(node.left, deleting) + self.encode(node.right, deleting))
            if op == "-":
                left = self.encode(node.left, deleting)
                removed = set(self.encode(node.right, not deleting))
                return [t for t in left if t not in removed]
            if op == ":":
                return _interact(self.encode(node.left, deleting), self.encode(node.right, deleting))
            if op == "*":
                left, right = self.encode(node.left, deleting), self.encode(node.right, deleting)
                return _unique(left + right + _interact(left, right))
            if op == "%in%":
                left, right = self.encode(node.left, deleting), self.encode(node.right, deleting)
                return _unique([t | _union(right) for t in left])
            if op == "/":
                left, right = self.encode(node.left, deleting), self.encode(node.right, deleting)
                return _unique(left + [t | _union(left) for t in right])
            if op == "^":
                return self.power(node, deleting)
            if op in ("|", "||"):
                raise self.fail(f"the random-effects term {deparse(node)} must be a term of its own, in parentheses "
                                "and added with '+': y ~ x + (1 | g)")
            if op == "~":
                raise self.fail("a formula has one '~'")
        return self.variable(node)

    def power(self, node: Binary, deleting: bool) -> list[frozenset[int]]:
        right = node.right.inner if isinstance(node.right, Paren) else node.right
        if not isinstance(right, Num) or right.value < 1 or right.value != int(right.value):
            raise self.fail(f"the power in {deparse(node)} must be a whole number >= 1 (a formula's ^ crosses terms: "
                            "(a + b)^2 is a + b + a:b); for the square of a column write I(x^2)")
        base = self.encode(node.left, deleting)
        if int(right.value) > 1 and len(base) == 1 and len(base[0]) == 1:
            name = _plain(self.variables[next(iter(base[0]))])
            warnings.warn(f"{deparse(node)} in a formula crosses {name} with itself, which is {name} (as in R): the "
                          f"model has no square term. Write I({name}^{deparse(right)}) for the power.",
                          UserWarning, stacklevel=caller_stacklevel())
        out = base
        for _ in range(int(right.value) - 1):
            out = _unique(out + _interact(out, base))
        return out


def _unique(terms: list[frozenset[int]]) -> list[frozenset[int]]:
    """Drop repeated terms (keep the first) and the empty term (the intercept is a flag)."""
    seen: dict[frozenset[int], None] = {}
    for t in terms:
        if t:
            seen.setdefault(t, None)
    return list(seen)


def _interact(left: list[frozenset[int]], right: list[frozenset[int]]) -> list[frozenset[int]]:
    return _unique([a | b for a in left for b in right])


def _union(terms: list[frozenset[int]]) -> frozenset[int]:
    out: frozenset[int] = frozenset()
    for t in terms:
        out |= t
    return out


def expand_terms(node: Node | None, *, text: str | None = None) -> Terms:
    """The terms of a right-hand side (``None``: the intercept alone).

    Raises
    ------
    FormulaError
        For ``.``, a number other than 0 or 1 as a term, a power that is not a whole number, a random-effects
        term inside an expression.

    Examples
    --------
    >>> from mixeval.formula._syntax import parse_r
    >>> expand_terms(parse_r("a/b/x")).labels
    ('a', 'a:b', 'a:b:x')
    >>> t = expand_terms(parse_r("0 + x + offset(log(n))"))
    >>> t.labels, t.intercept, [deparse(o) for o in t.offsets]
    (('x',), False, ['log(n)'])
    """
    if node is None:
        return Terms(variables=(), terms=(), intercept=True)
    expander = _Expander(text or deparse(node))
    found = expander.encode(node)
    order = sorted(range(len(found)), key=lambda i: (len(found[i]), i))
    terms = tuple(tuple(sorted(found[i])) for i in order)
    used = sorted({v for t in terms for v in t})
    # variables that survive only in removed terms are dropped, keeping R's order of the others
    remap = {old: new for new, old in enumerate(used)}
    return Terms(variables=tuple(expander.variables[i] for i in used),
                 terms=tuple(tuple(remap[v] for v in t) for t in terms),
                 intercept=expander.intercept, offsets=tuple(expander.offsets))
