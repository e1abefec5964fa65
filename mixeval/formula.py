"""lme4-style model formulas: random-effect terms split off, the fixed part handed to formulaic.

``score ~ system + (1|item) + (1|rater:item) + (1|site/rater)`` parses into the
response ``score``, the fixed-effects formula ``system`` (given to formulaic
unchanged) and the random terms ``item``, ``rater:item``, ``site`` and
``rater:site`` (nesting ``g/h`` expands to ``g`` and ``h:g``, named as lme4
names them). Random slopes are written as in lme4: ``(1 + x | g)`` or ``(x | g)``
(intercept implied), ``(0 + x | g)`` (no intercept), ``(1 + x || g)``
(uncorrelated: expanded to ``(1 | g) + (0 + x | g)`` as lme4's
``expandDoubleVerts`` does), factor slopes ``(1 + system | item)``. Column names
that are not syntactic (spaces, dashes, non-ASCII letters) are written in
backticks, in the fixed and in the random part: ``(1 | `test item`)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import FormulaError, InputTypeError

__all__ = ["RandomTerm", "ParsedFormula", "parse_formula"]

_PLAIN = r"(?:[^\W\d]|\.)[\w.]*"  # letters of any script (Python identifiers), digits, _ and .
_NAME = rf"(?:{_PLAIN}|`[^`]+`)"


@dataclass(frozen=True)
class RandomTerm:
    """A random-effects term: the groups defined by one factor or an interaction of factors, and the
    left-hand side whose coefficients vary over them.

    Attributes
    ----------
    factors : tuple of str
        Data columns whose combinations define the groups (``("rater", "site")`` for ``rater:site``).
    lhs : str
        The term's left-hand side in formulaic syntax (``"1"`` for a random intercept, ``"1 + x"``,
        ``"0 + x"``, ``"1 + system"``). ``(x|g)`` keeps ``"x"`` (formulaic, like R, adds the intercept).
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
    """A formula split into response, fixed part and random intercept terms."""

    formula: str
    response: str
    fixed: str
    random: tuple[RandomTerm, ...]

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
        """Data columns the left-hand sides of the random terms use (``x`` in ``(1 + x | g)``)."""
        from formulaic import Formula

        seen: dict[str, None] = {}
        for term in self.random:
            if term.is_intercept:
                continue
            for v in sorted(str(v) for v in Formula(term.lhs).required_variables):
                seen.setdefault(v, None)
        return tuple(seen)

    @property
    def has_slopes(self) -> bool:
        """Some random term has coefficients other than a single intercept."""
        return any(not t.is_intercept for t in self.random)


def _split_top_level(text: str, sep: str) -> list[str]:
    """Split ``text`` on ``sep`` outside parentheses and backticks."""
    parts, depth, current, quoted = [], 0, [], False
    for ch in text:
        if ch == "`":
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
            if depth < 0:
                raise FormulaError(f"unbalanced parentheses in formula: {text!r}")
        if ch == sep and depth == 0 and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if quoted:
        raise FormulaError(f"unbalanced backticks in formula: {text!r}; quote a column name as `my column`.")
    if depth != 0:
        raise FormulaError(f"unbalanced parentheses in formula: {text!r}")
    parts.append("".join(current))
    return parts


def _column_name(token: str, group: str, term: str) -> str:
    """A grouping column from a token: a plain name, or any name in backticks."""
    token = token.strip()
    if re.fullmatch(_PLAIN, token):
        return token
    if re.fullmatch(r"`[^`]+`", token):
        return token[1:-1]
    raise FormulaError(
        f"cannot parse the grouping factor {group.strip()!r} in random term {term!r}; write a column name, an "
        "interaction g:h, or a nesting g/h, e.g. (1|item) or (1|rater:item); put column names with spaces, "
        "dashes or other symbols in backticks: (1|`test item`)."
    )


def _parse_group(group: str, lhs: str, term: str) -> list[RandomTerm]:
    """Expand a grouping expression (``g``, ``g:h``, ``g/h``, ``g/h/k``) into terms."""
    nests = _split_top_level(group, "/")
    if len(nests) > 1:
        levels = [_column_name(lv, group, term) for lv in nests]
        # lme4: (1|a/b/c) == (1|a) + (1|b:a) + (1|c:b:a)
        return [RandomTerm(tuple(reversed(levels[: i + 1])), lhs) for i in range(len(levels))]
    factors = [_column_name(f, group, term) for f in _split_top_level(group, ":")]
    return [RandomTerm(tuple(factors), lhs)]


def _normalise_lhs(lhs: str, term: str) -> str:
    """The left-hand side of a random term, checked and with single spaces around ``+``."""
    parts = [p.strip() for p in _split_top_level(lhs, "+")]
    if not lhs.strip() or any(not p for p in parts):
        raise FormulaError(f"random term {term!r} has an empty left-hand side; write e.g. (1|item) or (1 + x|item).")
    for p in parts:
        if "|" in p:
            raise FormulaError(f"cannot parse random term {term!r}; write e.g. (1 + x | item).")
    return " + ".join(parts)


def _parse_random_term(inner: str, term: str) -> list[RandomTerm]:
    """Parse the inside of ``( ... | ... )`` or ``( ... || ... )``."""
    double = "||" in inner
    lhs, _, group = inner.partition("||" if double else "|")
    if "|" in group:
        raise FormulaError(f"cannot parse random term {term!r}: more than one '|'; write e.g. (1 + x | item).")
    if not group.strip():
        raise FormulaError(f"random term {term!r} has no grouping factor; write e.g. (1|item).")
    lhs = _normalise_lhs(lhs, term)
    if not double:
        return _parse_group(group, lhs, term)
    # lme4's expandDoubleVerts: (a + b || g) -> (1 | g) + (0 + a | g) + (0 + b | g); a term without an
    # explicit 0 or -1 keeps the intercept
    parts = lhs.split(" + ")
    no_intercept = any(p in ("0", "-1") for p in parts) or any(p.replace(" ", "").endswith("-1") for p in parts)
    pieces = [] if no_intercept else ["1"]
    pieces += [f"0 + {p}" for p in parts if p not in ("0", "1", "-1")]
    if not pieces:
        raise FormulaError(f"random term {term!r} has no coefficients; write e.g. (1 + x || item).")
    return [t for piece in pieces for t in _parse_group(group, piece, term)]


def _strip_backticks(name: str) -> str:
    return name[1:-1] if len(name) > 1 and name.startswith("`") and name.endswith("`") else name


def parse_formula(formula: str) -> ParsedFormula:
    """Split an lme4-style formula into response, fixed part and random-effects terms.

    Parameters
    ----------
    formula : str
        ``"y ~ fixed + (1|g) + (1|g:h) + (1|a/b) + (1 + x|s)"``. The fixed part and the left-hand sides
        of random terms use formulaic/Wilkinson syntax (``a*b``, ``a:b``, ``C(x)``, ``0 +`` or ``- 1`` to
        drop the intercept); names in backticks may contain any character.

    Returns
    -------
    ParsedFormula

    Raises
    ------
    FormulaError
        For a missing ``~``, unbalanced parentheses or backticks, a duplicated random term.

    Examples
    --------
    >>> p = parse_formula("score ~ system + (1|item) + (1|site/rater)")
    >>> p.response, p.fixed, [t.name for t in p.random]
    ('score', 'system', ['item', 'site', 'rater:site'])
    >>> [t.label for t in parse_formula("rt ~ x + (1 + x || subject)").random]
    ['(1 | subject)', '(0 + x | subject)']
    """
    if not isinstance(formula, str):
        raise InputTypeError(f"`formula` must be a string such as 'score ~ system + (1|item)'; got {type(formula).__name__}.")
    if formula.count("~") != 1:
        raise FormulaError(
            f"formula {formula!r} must have exactly one '~' separating the response from the terms, "
            "e.g. 'score ~ system + (1|item)'."
        )
    lhs, rhs = (s.strip() for s in formula.split("~"))
    if not re.fullmatch(_NAME, lhs):
        raise FormulaError(
            f"the response {lhs!r} must be a single column name: put a name with spaces or symbols in backticks "
            f"(`{lhs.strip('`')}` ~ ...); compute transformed responses as a new column first "
            "(e.g. data['log_y'] = numpy.log(data['y']))."
        )
    fixed_parts: list[str] = []
    random: list[RandomTerm] = []
    for raw in _split_top_level(rhs, "+"):
        part = raw.strip()
        if not part:
            raise FormulaError(f"empty term in formula {formula!r} (two '+' in a row?).")
        if part.startswith("(") and part.endswith(")") and _has_unquoted(part, "|"):
            inner = part[1:-1]
            random.extend(_parse_random_term(inner, part))
        elif _has_unquoted(part, "|"):
            raise FormulaError(f"random term {part!r} must be in parentheses, e.g. (1|item).")
        else:
            fixed_parts.append(part)
    keys = [(t.name, t.lhs) for t in random]
    dup = sorted({t.label for t, k in zip(random, keys) if keys.count(k) > 1})
    if dup:
        raise FormulaError(f"random term(s) {dup} appear more than once in {formula!r} (check nesting a/b expansions).")
    fixed = " + ".join(fixed_parts) if fixed_parts else "1"
    return ParsedFormula(formula=formula, response=_strip_backticks(lhs), fixed=fixed, random=tuple(random))


def _has_unquoted(text: str, char: str) -> bool:
    """``char`` occurs in ``text`` outside backticks."""
    quoted = False
    for ch in text:
        if ch == "`":
            quoted = not quoted
        elif ch == char and not quoted:
            return True
    return False
