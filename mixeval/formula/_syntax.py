"""R's expression syntax: a tokenizer, a precedence parser and R's ``deparse``.

A formula is read as R reads it (``?Syntax``): ``^`` binds tighter than unary minus (``-2^2`` is ``-4``),
``%%`` and ``%/%`` tighter than ``*`` and ``/``, ``:`` tighter than both, and ``**`` is ``^``. The parse gives
a small tree of frozen nodes; :func:`deparse` prints a node as R's ``deparse`` does, which gives the names of
model-matrix columns (``I(len^2)``, ``poly(x, 2)1``, ``factor(level)2``) exactly as R prints them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..errors import FormulaError

__all__ = ["Num", "Str", "Name", "Call", "Arg", "Unary", "Binary", "Paren", "Node", "parse_r", "deparse",
           "format_number", "syntactic_name", "quote_name"]


@dataclass(frozen=True)
class Num:
    """A number: ``value`` and whether R reads it as an integer (``2L``)."""

    value: float
    integer: bool = False


@dataclass(frozen=True)
class Str:
    """A character constant."""

    value: str


@dataclass(frozen=True)
class Name:
    """A symbol: a column, a constant such as ``TRUE`` or ``pi``, or ``.``."""

    id: str


@dataclass(frozen=True)
class Arg:
    """One argument of a call; ``name`` for ``name = value``."""

    value: Node
    name: str | None = None


@dataclass(frozen=True)
class Call:
    """A function call; ``fn`` keeps a namespace (``splines::ns``)."""

    fn: str
    args: tuple[Arg, ...]

    @property
    def base(self) -> str:
        """The function's name without its namespace (``ns`` for ``splines::ns``)."""
        return self.fn.rpartition("::")[2]


@dataclass(frozen=True)
class Unary:
    op: str
    operand: Node


@dataclass(frozen=True)
class Binary:
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Paren:
    """``( inner )``: kept, so that deparsing gives back the user's grouping as R does."""

    inner: Node


Node = Num | Str | Name | Call | Unary | Binary | Paren

# binary operators by precedence, lowest first, with their associativity (R's ?Syntax)
_BINARY: dict[str, tuple[int, str]] = {
    "~": (1, "left"), "|": (2, "left"), "||": (2, "left"), "&": (3, "left"), "&&": (3, "left"),
    "==": (5, "left"), "!=": (5, "left"), "<": (5, "left"), ">": (5, "left"), "<=": (5, "left"), ">=": (5, "left"),
    "+": (6, "left"), "-": (6, "left"), "*": (7, "left"), "/": (7, "left"), "%": (8, "left"),
    ":": (9, "left"), "^": (11, "right"),
}
_UNARY_NOT, _UNARY_SIGN = 4, 10  # ``!`` between & and comparisons; ``-x`` between : and ^

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<num>(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)L?)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<bq>`[^`]*`)
  | (?P<name>(?:[^\W\d_]|\.(?!\d))[\w.]*)
  | (?P<op>%[^%]*%|::|\*\*|\|\||&&|==|!=|<=|>=|<-|->|\|>|[-+*/^~:|&!<>=(),$@\[\]{};?])
""", re.VERBOSE)

_SYNTACTIC = re.compile(r"(?:[^\W\d_]|\.(?!\d))[\w.]*|\.")
_RESERVED = {"if", "else", "repeat", "while", "function", "for", "next", "break", "TRUE", "FALSE", "NULL",
             "Inf", "NaN", "NA", "NA_integer_", "NA_real_", "NA_character_", "in"}


def syntactic_name(name: str) -> bool:
    """R's ``make.names(name) == name``: usable without backticks."""
    return bool(_SYNTACTIC.fullmatch(name)) and name not in _RESERVED


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise FormulaError(f"cannot read {text[pos:pos + 12]!r} at position {pos} of the formula {text!r}.")
        kind = str(m.lastgroup)  # every alternative of _TOKEN is a named group
        if kind != "space":
            out.append((kind, m.group(), pos))
        pos = m.end()
    out.append(("end", "", len(text)))
    return out


_UNSUPPORTED_OPS = {
    "<-": "assignment", "->": "assignment", "=": "assignment outside a call's arguments", "|>": "the pipe |>",
    "$": "list extraction `$`", "@": "slot extraction `@`", "[": "indexing `[`", "]": "indexing `[`",
    "{": "braces (formulaic's {x + 1} is I(x + 1) in R)", "}": "braces", ";": "`;`", "?": "`?`",
}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i]

    def take(self) -> tuple[str, str, int]:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def fail(self, message: str) -> FormulaError:
        return FormulaError(f"{message} in the formula {self.text!r}.")

    def expect(self, value: str) -> None:
        kind, got, pos = self.take()
        if value == ")" and kind == "end":
            raise FormulaError(f"unbalanced parentheses in formula: {self.text!r} (a '(' is not closed).")
        if got != value:
            shown = repr(got) if got else "the end"
            raise self.fail(f"expected {value!r} at position {pos}, found {shown}")

    def expression(self, min_prec: int = 0) -> Node:
        left = self.prefix()
        while True:
            kind, op, pos = self.peek()
            if kind != "op":
                if kind != "end":
                    raise self.fail(f"unexpected {op!r} at position {pos} (an operator such as + is missing? put a "
                                    "column name with spaces or symbols in backticks: `my column`)")
                return left
            if op == "**":
                op = "^"
            key = "%" if op.startswith("%") and len(op) > 1 else op
            if key in _UNSUPPORTED_OPS:
                raise self.fail(f"{_UNSUPPORTED_OPS[key]} ({op!r} at position {pos}) is not part of a model formula")
            if key not in _BINARY:
                return left
            prec, assoc = _BINARY[key]
            if prec < min_prec:
                return left
            self.take()
            right = self.expression(prec + 1 if assoc == "left" else prec)
            left = Binary(op, left, right)

    def prefix(self) -> Node:
        kind, tok, pos = self.take()
        if kind == "num":
            return _number(tok)
        if kind == "str":
            return Str(_unescape(tok[1:-1]))
        if kind == "bq":
            if len(tok) == 2:
                raise self.fail("an empty name `` ")
            return self.postfix(Name(tok[1:-1]))
        if kind == "name":
            return self.postfix(Name(tok))
        if tok == "(":
            inner = self.expression()
            self.expect(")")
            return Paren(inner)
        if tok in ("-", "+"):
            return Unary(tok, self.expression(_UNARY_SIGN))
        if tok == "!":
            return Unary(tok, self.expression(_UNARY_NOT))
        if tok == "~":
            return Unary(tok, self.expression(_BINARY["~"][0] + 1))
        if kind == "end":
            raise self.fail("the formula ends where a term is expected")
        if tok in _UNSUPPORTED_OPS:
            raise self.fail(f"{_UNSUPPORTED_OPS[tok]} ({tok!r} at position {pos}) is not part of a model formula")
        raise self.fail(f"unexpected {tok!r} at position {pos}")

    def postfix(self, node: Name) -> Node:
        """A name, a namespaced name (``splines::ns``) or a call."""
        fn = node.id
        if self.peek()[1] in ("::", ":::"):
            self.take()
            kind, tok, pos = self.take()
            if kind not in ("name", "bq"):
                raise self.fail(f"expected a function name after '::' at position {pos}")
            fn = f"{fn}::{tok.strip('`')}"
            if self.peek()[1] != "(":
                raise self.fail(f"{fn} must be called, e.g. {fn}(x, 3)")
        if self.peek()[1] != "(":
            return node
        self.take()
        args: list[Arg] = []
        while self.peek()[1] != ")":
            name = None
            kind, tok, _ = self.peek()
            if kind in ("name", "bq", "str") and self.toks[self.i + 1][1] == "=":
                name = tok.strip("`\"'")
                self.i += 2
            args.append(Arg(self.expression(_BINARY["~"][0]), name))
            if self.peek()[1] == ",":
                self.take()
                if self.peek()[1] == ")":
                    raise self.fail(f"an empty argument in the call of {fn}()")
            elif self.peek()[1] != ")":
                kind, tok, pos = self.peek()
                raise self.fail(f"expected ',' or ')' in the call of {fn}() at position {pos}, found {tok or 'the end'!r}")
        self.take()
        return Call(fn, tuple(args))


def _unescape(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def _number(tok: str) -> Num:
    integer = tok.endswith("L")
    body = tok[:-1] if integer else tok
    value = float(int(body, 16)) if body.lower().startswith("0x") else float(body)
    return Num(value, integer)


def parse_r(text: str) -> Node:
    """Parse ``text`` as one R expression.

    Examples
    --------
    >>> parse_r("-2^2")
    Unary(op='-', operand=Binary(op='^', left=Num(value=2.0, integer=False), right=Num(value=2.0, integer=False)))
    >>> deparse(parse_r("I(len**2)+poly(x,2)"))
    'I(len^2) + poly(x, 2)'
    """
    parser = _Parser(text)
    if parser.peek()[0] == "end":
        raise FormulaError(f"the formula {text!r} is empty.")
    node = parser.expression()
    if parser.peek()[1] == ")":
        raise FormulaError(f"unbalanced parentheses in formula: {text!r} (a ')' closes no '(').")
    if parser.peek()[0] != "end":  # pragma: no cover - expression() consumes until an unknown token
        raise parser.fail(f"unexpected {parser.peek()[1]!r}")
    return node


def format_number(value: float, integer: bool = False) -> str:
    """A number as R's ``deparse`` and ``as.character`` print it (15 significant digits; fixed notation unless
    scientific is shorter, R's ``scipen = 0``).

    Examples
    --------
    >>> [format_number(v) for v in (2.0, 0.1, 100000.0, 123456.0, 1e-10, 0.0005, 1 / 3)]
    ['2', '0.1', '1e+05', '123456', '1e-10', '5e-04', '0.333333333333333']
    """
    if integer:
        return f"{int(value)}L" if math.isfinite(value) else "NA_integer_"
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    digits = f"{value:.15g}"
    mantissa, _, exp = f"{float(digits):.14e}".partition("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    e = int(exp)
    sci = f"{mantissa}e{'-' if e < 0 else '+'}{abs(e):02d}"
    sig = len(mantissa.replace("-", "").replace(".", ""))
    fixed = f"{value:.{max(0, sig - 1 - e)}f}"
    return fixed if len(fixed) <= len(sci) else sci


_CONSTANTS = {"TRUE", "FALSE", "NULL", "NA", "Inf", "NaN"}


def _quote_name(name: str) -> str:
    return name if syntactic_name(name) or name in _CONSTANTS else f"`{name}`"


def quote_name(name: str) -> str:
    """A column name as written in a formula: backticks when R needs them.

    Examples
    --------
    >>> quote_name("score"), quote_name("log(rt)"), quote_name("test item")
    ('score', '`log(rt)`', '`test item`')
    """
    return name if syntactic_name(name) else f"`{name}`"


_SPACED = {"+", "-", "*", "==", "!=", "<", ">", "<=", ">=", "&", "&&", "|", "||", "~"}


def deparse(node: Node) -> str:
    """``node`` printed as R's ``deparse`` prints it (the names R gives model-matrix columns).

    Examples
    --------
    >>> deparse(parse_r("ns(x,df=3)")), deparse(parse_r("I((x-1)^2)")), deparse(parse_r("log(`a b`)"))
    ('ns(x, df = 3)', 'I((x - 1)^2)', 'log(`a b`)')
    """
    if isinstance(node, Num):
        return format_number(node.value, node.integer)
    if isinstance(node, Str):
        return '"' + node.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(node, Name):
        return _quote_name(node.id)
    if isinstance(node, Paren):
        return f"({deparse(node.inner)})"
    if isinstance(node, Unary):
        return f"{node.op}{deparse(node.operand)}"
    if isinstance(node, Binary):
        left, right = deparse(node.left), deparse(node.right)
        if node.op in _SPACED or node.op.startswith("%") and node.op not in ("%%", "%/%"):
            return f"{left} {node.op} {right}"
        return f"{left}{node.op}{right}"
    args = ", ".join(deparse(a.value) if a.name is None else f"{_quote_name(a.name)} = {deparse(a.value)}"
                     for a in node.args)
    ns, _, fn = node.fn.rpartition("::")
    return f"{ns + '::' if ns else ''}{_quote_name(fn)}({args})"
