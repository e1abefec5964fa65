"""lme4 formulas: the response, the fixed part and the random-effects terms, read with R's grammar.

``score ~ system + I(len^2) + (1|item) + (1|rater:item) + (1|site/rater)`` parses into the response ``score``,
the fixed part ``system + I(len^2)`` (R's formula language: :mod:`._terms` for the operators, :mod:`._evaluate`
for the expressions) and the random terms ``item``, ``rater:item``, ``site`` and ``rater:site`` (nesting ``g/h``
expands to ``g`` and ``h:g``, named as lme4 names them). Random slopes are written as in lme4: ``(1 + x | g)``
or ``(x | g)`` (intercept implied), ``(0 + x | g)`` (no intercept), ``(1 + x || g)`` (uncorrelated: expanded to
``(1 | g) + (0 + x | g)`` as lme4's ``expandDoubleVerts`` does), factor slopes ``(1 + system | item)``. The
response is a column, an expression (``log(rt)``) or glmer's binomial ``cbind(successes, failures)``. Column
names that are not syntactic (spaces, dashes) are written in backticks: ``(1 | `test item`)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import FormulaError, InputTypeError
from ._model import required_columns
from ._syntax import Binary, Call, Name, Node, Num, Paren, Unary, deparse, parse_r
from ._terms import expand_terms

__all__ = ["RandomTerm", "ParsedFormula", "FormulaVariable", "parse_formula"]

_FACTOR_CALLS = {"factor", "as.factor", "ordered", "as.ordered", "relevel", "C"}


@dataclass(frozen=True)
class FormulaVariable:
    """A variable of a formula (a column, or an expression of columns).

    Attributes
    ----------
    name : str
        The variable as R names it (a bare column by its name, an expression as R prints it).
    text : str
        The variable as written in a formula (backticks where R needs them).
    columns : tuple of str
        The names it reads.
    kind : {"column", "factor", "expression"}
        A bare column, a factor made of one column (``factor(x)``, ``relevel(x, ref = "b")``, ``C(x, sum)``), or
        any other expression.

    Examples
    --------
    >>> [(v.name, v.kind, v.columns) for v in parse_formula("y ~ x + factor(g) + I(x^2) + (1|s)").fixed_variables]
    [('x', 'column', ('x',)), ('factor(g)', 'factor', ('g',)), ('I(x^2)', 'expression', ('x',))]
    >>> parse_formula("y ~ log(x) + (1|s)").fixed_variables[0].sql(lambda c: f'"{c}"')
    'LN(CAST("x" AS DOUBLE))'
    """

    name: str
    text: str
    columns: tuple[str, ...]
    kind: str
    node: Node = field(repr=False, compare=False)

    def sql(self, quote, *, where: str = "the query engine") -> str:
        """The variable as an SQL expression (stateless numeric expressions only; others are refused by name)."""
        from ._sql import sql_of

        return sql_of(self.node, quote, where=where)


def _variable(node: Node) -> FormulaVariable:
    from ._evaluate import column_names_of

    columns = tuple(c for c in column_names_of(node) if c not in ("pi", "T", "F"))
    if isinstance(node, Name):
        kind = "column"
    elif isinstance(node, Call) and node.base in _FACTOR_CALLS and node.args and isinstance(node.args[0].value, Name):
        kind = "factor"
    else:
        kind = "expression"
    return FormulaVariable(name=node.id if isinstance(node, Name) else deparse(node), text=deparse(node),
                           columns=columns, kind=kind, node=node)


@dataclass(frozen=True)
class RandomTerm:
    """A random-effects term: the groups defined by one factor or an interaction of factors, and the
    left-hand side whose coefficients vary over them.

    Attributes
    ----------
    factors : tuple of str
        Data columns whose combinations define the groups (``("rater", "site")`` for ``rater:site``).
    lhs : str
        The term's left-hand side in R's formula language (``"1"`` for a random intercept, ``"1 + x"``,
        ``"0 + x"``, ``"1 + system"``, ``"0 + factor(visit)"``). ``(x|g)`` keeps ``"x"`` (the intercept is implied,
        as in R).
    """

    factors: tuple[str, ...]
    lhs: str = "1"

    @property
    def name(self) -> str:
        """The group name as lme4 prints it (``"rater:site"``)."""
        return ":".join(self.factors)

    @property
    def is_intercept(self) -> bool:
        """A scalar random intercept ``(1|g)``."""
        return self.lhs.replace(" ", "") == "1"

    @property
    def label(self) -> str:
        """The term as it would be written in a formula, e.g. ``"(1 + x | subject)"``."""
        return f"({self.lhs} | {self.name})"


@dataclass(frozen=True)
class ParsedFormula:
    """A formula split into response, fixed part and random-effects terms.

    Attributes
    ----------
    formula : str
        The formula as given.
    response : str
        The response column, or the response expression as R prints it (``"log(rt)"``,
        ``"cbind(successes, failures)"``).
    fixed : str
        The fixed part as R prints it (``"1"`` when it has no terms), offsets included.
    random : tuple of RandomTerm
        The random-effects terms, ``||`` and nesting expanded.
    """

    formula: str
    response: str
    fixed: str
    random: tuple[RandomTerm, ...]
    response_node: Node | None = field(default=None, repr=False, compare=False)
    fixed_node: Node | None = field(default=None, repr=False, compare=False)

    @property
    def response_is_column(self) -> bool:
        """The response is a data column by name (not an expression or ``cbind()``)."""
        return self.response_node is None or isinstance(self.response_node, Name)

    @property
    def binomial_pair(self) -> tuple[Node, Node] | None:
        """``(successes, failures)`` of a ``cbind(successes, failures)`` response, else None."""
        node = self.response_node
        if isinstance(node, Call) and node.base == "cbind":
            return node.args[0].value, node.args[1].value
        return None

    @property
    def response_columns(self) -> tuple[str, ...]:
        """Data columns the response reads."""
        if self.response_node is None:
            return (self.response,)
        from ._evaluate import column_names_of

        return tuple(c for c in column_names_of(self.response_node) if c not in ("pi", "T", "F"))

    @property
    def offsets(self) -> tuple[str, ...]:
        """The expressions of the fixed part's ``offset()`` terms, as R prints them."""
        return tuple(deparse(o) for o in expand_terms(self.fixed_node).offsets) if self.fixed_node is not None else ()

    def fixed_columns(self, available=None) -> tuple[str, ...]:
        """Data columns the fixed part reads, offsets included (``pi``, ``T`` and ``F`` only when ``available``
        columns include them)."""
        if self.fixed_node is None:
            return ()
        return tuple(required_columns(expand_terms(self.fixed_node), None if available is None else list(available)))

    @property
    def fixed_variables(self) -> tuple[FormulaVariable, ...]:
        """The variables of the fixed part (offsets apart), in R's order."""
        return tuple(_variable(v) for v in expand_terms(self.fixed_node).variables)

    @property
    def offset_variables(self) -> tuple[FormulaVariable, ...]:
        """The expressions of the fixed part's ``offset()`` terms."""
        return tuple(_variable(v) for v in expand_terms(self.fixed_node).offsets)

    @property
    def response_variable(self) -> FormulaVariable:
        return _variable(self.response_node if self.response_node is not None else Name(self.response))

    def fixed_with_columns(self, names) -> str:
        """The fixed part without its offsets, every variable whose name is in ``names`` written as a column of that
        name (the variable computed elsewhere, e.g. by a query engine).

        Examples
        --------
        >>> parse_formula("y ~ s * I(x^2) + offset(o) + (1|g)").fixed_with_columns(["I(x^2)"])
        '1 + s + `I(x^2)` + s:`I(x^2)`'
        """
        from ._syntax import syntactic_name

        if self.fixed_node is None:
            return "1"
        terms = expand_terms(self.fixed_node)

        def text(node: Node) -> str:
            name = node.id if isinstance(node, Name) else deparse(node)
            if name in names:
                return name if syntactic_name(name) else f"`{name}`"
            return deparse(node)

        labels = [":".join(text(terms.variables[i]) for i in t) for t in terms.terms]
        return " + ".join(["1" if terms.intercept else "0", *labels])

    @property
    def fixed_terms(self) -> tuple[tuple[str, ...], ...]:
        """The fixed part's terms (R's ``term.labels`` split at ``:``), each a tuple of its variables as R names
        them (a bare column by its name, an expression as R prints it); the intercept is not a term."""
        if self.fixed_node is None:
            return ()
        terms = expand_terms(self.fixed_node)
        names = terms.variable_names
        return tuple(tuple(names[i] for i in t) for t in terms.terms)

    def fixed_without(self, column: str) -> str:
        """The fixed part without every term whose variables read ``column``, with an intercept and the offsets
        (the null model of a test of ``column``'s effects), as R would write it.

        Examples
        --------
        >>> parse_formula("y ~ system * I(len^2) + offset(log(n)) + (1|g)").fixed_without("system")
        '1 + I(len^2) + offset(log(n))'
        """
        from ._evaluate import column_names_of

        if self.fixed_node is None:
            return "1"
        terms = expand_terms(self.fixed_node)
        kept = [t for t in terms.terms if not any(column in column_names_of(terms.variables[i]) for i in t)]
        labels = [":".join(deparse(terms.variables[i]) for i in t) for t in kept]
        return " + ".join(["1", *labels, *(f"offset({deparse(o)})" for o in terms.offsets)])

    @property
    def columns(self) -> tuple[str, ...]:
        """Grouping columns used by the random terms (in order of first appearance)."""
        seen: dict[str, None] = {}
        for term in self.random:
            for f in term.factors:
                seen.setdefault(f, None)
        return tuple(seen)

    @property
    def slope_columns(self) -> tuple[str, ...]:
        """Data columns the left-hand sides of the random terms read (``x`` in ``(1 + x | g)``)."""
        seen: dict[str, None] = {}
        for term in self.random:
            if not term.is_intercept:
                for v in required_columns(expand_terms(parse_r(term.lhs))):
                    seen.setdefault(v, None)
        return tuple(seen)

    @property
    def has_slopes(self) -> bool:
        """Some random term has coefficients other than a single intercept."""
        return any(not t.is_intercept for t in self.random)


_COVSTRUCT = {"ar1", "ou", "cs", "toep", "exp", "gau", "mat", "rr", "propto", "homdiag", "homcs", "hetar1",
              "equalto", "diag"}


def _group_factors(node: Node, term: str) -> list[tuple[str, ...]]:
    """The grouping factors of ``(lhs | group)``: ``g``, ``g:h`` (one interaction), ``a/b/c`` (lme4: ``a``, ``b:a``,
    ``c:b:a``)."""
    if isinstance(node, Paren):
        return _group_factors(node.inner, term)
    if isinstance(node, Binary) and node.op == "/":
        outer = _group_factors(node.left, term)
        inner = _interaction(node.right, term)
        return [*outer, (*inner, *outer[-1])]
    return [_interaction(node, term)]


def _interaction(node: Node, term: str) -> tuple[str, ...]:
    if isinstance(node, Paren):
        return _interaction(node.inner, term)
    if isinstance(node, Binary) and node.op == ":":
        return (*_interaction(node.left, term), *_interaction(node.right, term))
    if isinstance(node, Name) and node.id != ".":
        return (node.id,)
    raise FormulaError(
        f"cannot parse the grouping factor {deparse(node)!r} in random term {term!r}; write a column name, an "
        "interaction g:h, or a nesting g/h, e.g. (1|item) or (1|rater:item); put column names with spaces, "
        "dashes or other symbols in backticks: (1|`test item`)."
    )


def _random_terms(node: Binary, term: str) -> list[RandomTerm]:
    """The terms of ``(lhs | group)`` or ``(lhs || group)``."""
    if isinstance(node.right, Binary) and node.right.op in ("|", "||"):
        raise FormulaError(f"cannot parse random term {term!r}: more than one '|'; write e.g. (1 + x | item).")
    groups = _group_factors(node.right, term)
    lhs = node.left
    if isinstance(lhs, Binary) and lhs.op in ("|", "||"):
        raise FormulaError(f"cannot parse random term {term!r}: more than one '|'; write e.g. (1 + x | item).")
    if node.op == "|":
        pieces = [deparse(lhs)]
    else:  # lme4's expandDoubleVerts: (a + b || g) -> (1 | g) + (0 + a | g) + (0 + b | g)
        terms = expand_terms(lhs, text=term)
        pieces = (["1"] if terms.intercept else []) + [f"0 + {label}" for label in terms.labels]
        if not pieces:
            raise FormulaError(f"random term {term!r} has no coefficients; write e.g. (1 + x || item).")
    return [RandomTerm(factors, piece) for piece in pieces for factors in groups]


def _split(node: Node, formula: str) -> tuple[Node | None, list[RandomTerm]]:
    """lme4's ``nobars``/``findbars``: the fixed part without the random terms, and the random terms."""
    if isinstance(node, Binary) and node.op in ("+", "-"):
        left, left_random = _split(node.left, formula)
        if node.op == "+":
            right, right_random = _split(node.right, formula)
        else:
            right, right_random = node.right, []
            _no_bars(node.right, formula)
        if left is None:
            return (right if node.op == "+" else Unary("-", right)), left_random + right_random
        return (left if right is None else Binary(node.op, left, right)), left_random + right_random
    if isinstance(node, Paren) and isinstance(node.inner, Binary) and node.inner.op in ("|", "||"):
        return None, _random_terms(node.inner, deparse(node))
    if isinstance(node, Call) and len(node.args) == 1 and isinstance(node.args[0].value, Binary) \
            and node.args[0].value.op in ("|", "||"):
        if node.base == "us":  # glmmTMB's unstructured covariance is lme4's (x | g)
            return None, _random_terms(node.args[0].value, deparse(node))
        if node.base in _COVSTRUCT:
            raise FormulaError(f"glmmTMB's covariance structure {node.base}() in {deparse(node)} is not supported; "
                               "mixeval fits lme4's terms: (x | g) (unstructured, glmmTMB's us()) and (x || g) "
                               "(independent numeric slopes).")
    if isinstance(node, Binary) and node.op in ("|", "||"):
        raise FormulaError(f"random term {deparse(node)!r} must be in parentheses, e.g. (1|item).")
    _no_bars(node, formula)
    return node, []


def _no_bars(node: Node, formula: str) -> None:
    """A '|' anywhere but in a random-effects term of its own is an error."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Binary):
            if n.op in ("|", "||"):
                raise FormulaError(f"the random-effects term {deparse(n)} must be a term of its own, in parentheses "
                                   f"and added with '+', e.g. y ~ x + (1 | g) (in {formula!r}).")
            stack += [n.left, n.right]
        elif isinstance(n, (Paren, Unary)):
            stack.append(n.inner if isinstance(n, Paren) else n.operand)
        elif isinstance(n, Call) and n.base != "I":
            stack += [a.value for a in n.args]


def _check_response(node: Node, formula: str) -> None:
    if isinstance(node, Call) and node.base == "cbind":
        if len(node.args) != 2 or any(a.name is not None for a in node.args):
            raise FormulaError(f"cbind() as the response takes two columns, successes and failures: "
                               f"cbind(successes, failures) (in {formula!r}).")
    if isinstance(node, Num):
        raise FormulaError(f"the response of {formula!r} is a number; write a column (or an expression of columns).")


def _parse_whole(formula: str) -> Node:
    """The formula's tree; a response that does not parse on its own is named (a column with spaces needs
    backticks)."""
    try:
        return parse_r(formula)
    except FormulaError:
        lhs = formula.split("~", 1)[0].strip() if "~" in formula else ""
        if lhs:
            try:
                parse_r(lhs)
            except FormulaError:
                raise FormulaError(
                    f"the response {lhs!r} is not a column name or an R expression: put a name with spaces or "
                    f"symbols in backticks (`{lhs.strip('`')}` ~ ...), or compute the column first."
                ) from None
        raise


def parse_formula(formula: str) -> ParsedFormula:
    """Split an lme4 formula into response, fixed part and random-effects terms.

    Parameters
    ----------
    formula : str
        ``"y ~ fixed + (1|g) + (1|g:h) + (1|a/b) + (1 + x|s)"`` in R's formula language: the fixed part and the
        left-hand sides of random terms take R's operators (``a*b``, ``a:b``, ``(a + b)^2``, ``a/b``, ``0 +`` or
        ``- 1``) and expressions (``I(x^2)``, ``log(x)``, ``factor(level)``, ``poly(x, 2)``, ``ns(x, 3)``,
        ``offset(log(n))``); names in backticks may contain any character.

    Returns
    -------
    ParsedFormula

    Raises
    ------
    FormulaError
        For a missing ``~``, unbalanced parentheses or backticks, a duplicated random term, anything R's formula
        language has that mixeval does not build (named, with the alternative).

    Examples
    --------
    >>> p = parse_formula("score ~ system + (1|item) + (1|site/rater)")
    >>> p.response, p.fixed, [t.name for t in p.random]
    ('score', 'system', ['item', 'site', 'rater:site'])
    >>> [t.label for t in parse_formula("rt ~ x + (1 + x || subject)").random]
    ['(1 | subject)', '(0 + x | subject)']
    >>> parse_formula("cbind(k, n - k) ~ I(len^2) + offset(log(t)) + (1|task)").fixed
    'I(len^2) + offset(log(t))'
    """
    if not isinstance(formula, str):
        raise InputTypeError(f"`formula` must be a string such as 'score ~ system + (1|item)'; got {type(formula).__name__}.")
    if "~" not in re.sub(r"`[^`]*`", "", formula):
        raise FormulaError(f"formula {formula!r} has no '~': write the response, '~', then the terms, e.g. "
                           "'score ~ system + (1|item)'.")
    node = _parse_whole(formula)
    if isinstance(node, Unary) and node.op == "~":
        raise FormulaError(f"formula {formula!r} has no response; write it before the '~', e.g. 'score ~ system + "
                           "(1|item)'.")
    if not (isinstance(node, Binary) and node.op == "~") or any(
            isinstance(n, Binary) and n.op == "~" for n in (node.left, node.right)):
        raise FormulaError(
            f"formula {formula!r} must have exactly one '~' separating the response from the terms, "
            "e.g. 'score ~ system + (1|item)'."
        )
    _check_response(node.left, formula)
    _no_bars(node.left, formula)
    fixed_node, random = _split(node.right, formula)
    keys = [(t.name, t.lhs) for t in random]
    dup = sorted({t.label for t, k in zip(random, keys) if keys.count(k) > 1})
    if dup:
        raise FormulaError(f"random term(s) {dup} appear more than once in {formula!r} (check nesting a/b expansions).")
    response = node.left.id if isinstance(node.left, Name) else deparse(node.left)
    fixed = deparse(fixed_node) if fixed_node is not None else "1"
    return ParsedFormula(formula=formula, response=response, fixed=fixed, random=tuple(random),
                         response_node=node.left, fixed_node=fixed_node)


def response_values(parsed: ParsedFormula, data) -> tuple[np.ndarray, np.ndarray | None]:
    """The response of an expression or ``cbind()`` response (R's ``model.response``), with the binomial trials
    of ``cbind(successes, failures)`` (``successes / trials`` and ``successes + failures``; a row with no trials has
    response 0, as R's binomial family sets it).

    Examples
    --------
    >>> import pandas as pd
    >>> y, n = response_values(parse_formula("cbind(k, m - k) ~ 1 + (1|g)"), pd.DataFrame({"k": [1, 0], "m": [4, 2]}))
    >>> y.tolist(), n.tolist()
    ([0.25, 0.0], [4.0, 2.0])
    """
    import numpy as np

    from ..errors import InputError
    from ._evaluate import RFactor, RMatrix, evaluate

    env = {c: data[c] for c in parsed.response_columns if c in data.columns}

    def numeric(node: Node) -> np.ndarray:
        value = evaluate(node, env, {}, nrows=len(data))
        what = deparse(node)
        if isinstance(value, (RFactor, RMatrix)) or np.asarray(value).dtype.kind not in "biuf":
            raise InputError(f"the response {what} must be numeric.")
        out = np.broadcast_to(np.asarray(value, dtype=float), (len(data),)).copy()
        bad = ~np.isfinite(out)
        if bad.any():
            raise InputError(f"the response {what} is missing or not finite in {int(bad.sum())} of {len(out)} rows "
                             f"(first at row {int(np.flatnonzero(bad)[0])}); R would drop those rows. Filter them "
                             "first.")
        return out

    pair = parsed.binomial_pair
    if pair is None:
        return numeric(parsed.response_node), None
    successes, failures = (numeric(n) for n in pair)
    for values, node in ((successes, pair[0]), (failures, pair[1])):
        wrong = (values < 0) | (np.abs(values - np.round(values)) > 1e-8)
        if wrong.any():
            raise InputError(f"cbind(successes, failures): {deparse(node)} must be whole counts >= 0; "
                             f"{int(wrong.sum())} value(s) are not (e.g. {values[wrong][:3].tolist()}).")
    trials = successes + failures
    return np.divide(successes, trials, out=np.zeros_like(trials), where=trials > 0), trials
