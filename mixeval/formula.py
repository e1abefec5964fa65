"""lme4-style model formulas: random-effect terms split off, the fixed part handed to formulaic.

``score ~ system + (1|item) + (1|rater:item) + (1|site/rater)`` parses into the
response ``score``, the fixed-effects formula ``system`` (given to formulaic
unchanged) and the random intercept terms ``item``, ``rater:item``, ``site``
and ``rater:site`` (nesting ``g/h`` expands to ``g`` and ``h:g``, named as lme4
names them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import FormulaError

__all__ = ["RandomTerm", "ParsedFormula", "parse_formula"]

_NAME = r"[A-Za-z_.][A-Za-z0-9_.]*"


@dataclass(frozen=True)
class RandomTerm:
    """A random intercept for the groups defined by one factor or an interaction of factors.

    Attributes
    ----------
    factors : tuple of str
        Data columns whose combinations define the groups (``("rater", "site")`` for ``rater:site``).
    """

    factors: tuple[str, ...]

    @property
    def name(self) -> str:
        """The group name as lme4 prints it (``"rater:site"``)."""
        return ":".join(self.factors)


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


def _split_top_level(text: str, sep: str) -> list[str]:
    """Split ``text`` on ``sep`` outside parentheses."""
    parts, depth, current = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise FormulaError(f"unbalanced parentheses in formula: {text!r}")
        if ch == sep and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if depth != 0:
        raise FormulaError(f"unbalanced parentheses in formula: {text!r}")
    parts.append("".join(current))
    return parts


def _parse_group(group: str, term: str) -> list[RandomTerm]:
    """Expand a grouping expression (``g``, ``g:h``, ``g/h``, ``g/h/k``) into terms."""
    group = group.replace(" ", "")
    if "/" in group:
        levels = group.split("/")
        for lv in levels:
            if not re.fullmatch(_NAME, lv):
                raise FormulaError(
                    f"cannot parse the nesting in random term {term!r}; write e.g. (1|site/rater) "
                    "with plain column names on both sides of '/'."
                )
        # lme4: (1|a/b/c) == (1|a) + (1|b:a) + (1|c:b:a)
        return [RandomTerm(tuple(reversed(levels[: i + 1]))) for i in range(len(levels))]
    factors = group.split(":")
    for f in factors:
        if not re.fullmatch(_NAME, f):
            raise FormulaError(
                f"cannot parse the grouping factor {group!r} in random term {term!r}; "
                "write a column name, an interaction g:h, or a nesting g/h, e.g. (1|item) or (1|rater:item)."
            )
    return [RandomTerm(tuple(factors))]


def _parse_random_term(inner: str, term: str) -> list[RandomTerm]:
    """Parse the inside of ``( ... | ... )``."""
    if "||" in inner:
        raise FormulaError(
            f"random term {term!r}: uncorrelated random slopes (x||g) are not supported yet; "
            "mixeval fits random intercepts only: write (1|g)."
        )
    lhs, _, group = inner.partition("|")
    lhs = lhs.replace(" ", "")
    if lhs not in ("1",):
        raise FormulaError(
            f"random term {term!r}: random slopes are not supported yet (only random intercepts); "
            f"write (1|{group.strip()}), or model {lhs!r} as a fixed effect or through an interaction group "
            f"such as (1|{group.strip()}:{lhs}) for a factor."
        )
    if not group.strip():
        raise FormulaError(f"random term {term!r} has no grouping factor; write e.g. (1|item).")
    return _parse_group(group, term)


def parse_formula(formula: str) -> ParsedFormula:
    """Split an lme4-style formula into response, fixed part and random intercept terms.

    Parameters
    ----------
    formula : str
        ``"y ~ fixed + (1|g) + (1|g:h) + (1|a/b)"``. The fixed part uses formulaic/Wilkinson
        syntax (``a*b``, ``a:b``, ``C(x)``, ``0 +`` or ``- 1`` to drop the intercept).

    Returns
    -------
    ParsedFormula

    Raises
    ------
    FormulaError
        For a missing ``~``, unbalanced parentheses, random slopes, a duplicated random term.

    Examples
    --------
    >>> p = parse_formula("score ~ system + (1|item) + (1|site/rater)")
    >>> p.response, p.fixed, [t.name for t in p.random]
    ('score', 'system', ['item', 'site', 'rater:site'])
    """
    if not isinstance(formula, str):
        raise TypeError(f"`formula` must be a string such as 'score ~ system + (1|item)'; got {type(formula).__name__}.")
    if formula.count("~") != 1:
        raise FormulaError(
            f"formula {formula!r} must have exactly one '~' separating the response from the terms, "
            "e.g. 'score ~ system + (1|item)'."
        )
    lhs, rhs = (s.strip() for s in formula.split("~"))
    if not re.fullmatch(_NAME, lhs):
        raise FormulaError(
            f"the response {lhs!r} must be a single column name; compute transformed responses as a new "
            "column first (e.g. data['log_y'] = numpy.log(data['y']))."
        )
    fixed_parts: list[str] = []
    random: list[RandomTerm] = []
    for raw in _split_top_level(rhs, "+"):
        part = raw.strip()
        if not part:
            raise FormulaError(f"empty term in formula {formula!r} (two '+' in a row?).")
        if part.startswith("(") and part.endswith(")") and "|" in part:
            inner = part[1:-1]
            if "(" in inner:
                raise FormulaError(f"cannot parse random term {part!r}; write e.g. (1|item).")
            random.extend(_parse_random_term(inner, part))
        elif "|" in part:
            raise FormulaError(f"random term {part!r} must be in parentheses, e.g. (1|item).")
        else:
            fixed_parts.append(part)
    names = [t.name for t in random]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise FormulaError(f"random term(s) {dup} appear more than once in {formula!r} (check nesting a/b expansions).")
    fixed = " + ".join(fixed_parts) if fixed_parts else "1"
    return ParsedFormula(formula=formula, response=lhs, fixed=fixed, random=tuple(random))
