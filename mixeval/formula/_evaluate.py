"""R's meaning of the expressions inside a formula (R's ``model.frame``): arithmetic, factors and stateful bases.

:func:`evaluate` computes one expression over the columns of the data as R would: ``^`` is a power, ``%%`` and
``%/%`` are R's floored modulus and division, ``/`` always divides as real numbers, comparisons give logicals.
``factor()``, ``as.factor()``, ``ordered()``, ``relevel()`` and ``C()`` make factors with R's level order (sorted
values; numbers sorted as numbers, labelled as R prints them). ``scale()``, ``poly()``, ``ns()``, ``bs()`` and the
factor levels are *stateful*: the first evaluation (on the fitted data) stores their parameters in ``state`` and
later evaluations (new data, reference grids) reuse them, as R's ``makepredictcall``. A function R knows but
mixeval does not compute is refused by name with the alternative; nothing is evaluated by Python's own rules.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from ..errors import ColumnError, FormulaError, InputError, caller_stacklevel
from ._bases import (
    PolyCoefs,
    SplineKnots,
    bs_basis,
    contr_poly,
    ns_basis,
    poly_basis,
    poly_coefs,
    spline_knots,
)
from ._collate import collated
from ._syntax import Binary, Call, Name, Node, Num, Paren, Str, Unary, deparse, format_number

__all__ = ["RFactor", "RMatrix", "evaluate", "column_names_of", "r_labels", "contrast_matrix", "stateful_levels",
           "REFUSED", "FUNCTIONS"]


@dataclass(frozen=True)
class RFactor:
    """An R factor: ``codes`` (0-based) into ``levels``; ``contrasts`` is R's coding of it in a model matrix
    (``"treatment"``, ``"sum"``, ``"helmert"``, ``"poly"``, ``"SAS"``)."""

    codes: np.ndarray
    levels: tuple[str, ...]
    ordered: bool = False
    contrasts: str | None = None

    @property
    def labels(self) -> np.ndarray:
        return np.asarray(self.levels, dtype=object)[self.codes]

    @property
    def coding(self) -> str:
        return self.contrasts or ("poly" if self.ordered else "treatment")


@dataclass(frozen=True)
class RMatrix:
    """A numeric matrix variable (``poly(x, 2)``, ``ns(x, 3)``): its columns and their names."""

    values: np.ndarray
    colnames: tuple[str, ...]


Value = Any  # ndarray (float, bool or str), RFactor, RMatrix, or a Python scalar / list for constants


class _Vector(list):
    """``c(...)``: a constant vector (levels, knots)."""


# ---------------------------------------------------------------------------------------------- conversion
def r_labels(values: np.ndarray, *, integer: bool = False) -> list[str]:
    """Values as R's ``as.character`` prints them (numbers with 15 significant digits; ``TRUE``/``FALSE``)."""
    if values.dtype == bool:
        return ["TRUE" if v else "FALSE" for v in values]
    if values.dtype.kind in "iuf":
        return [format_number(float(v)) if not integer else str(int(v)) for v in values]
    return [str(v) for v in values]


def _column(series: pd.Series) -> Value:
    """A data column as the R value ``model.frame`` would see."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cat = series.cat.remove_unused_categories()
        levels = r_labels(np.asarray(cat.cat.categories), integer=pd.api.types.is_integer_dtype(cat.cat.categories))
        return RFactor(np.asarray(cat.cat.codes, dtype=np.int64), tuple(levels), ordered=bool(dtype.ordered))
    if pd.api.types.is_bool_dtype(dtype):
        return series.to_numpy(dtype=bool)
    if pd.api.types.is_numeric_dtype(dtype):
        return series.to_numpy(dtype=float)
    values = series.to_numpy(dtype=object)
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        return values.astype(bool)
    return np.asarray([str(v) for v in values], dtype=object)


def _is_integer_column(series: pd.Series) -> bool:
    return pd.api.types.is_integer_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype)


def _numeric(value: Value, what: str) -> np.ndarray | float:
    """A numeric value (logicals count as 0/1), or an error naming ``what``."""
    if isinstance(value, RFactor):
        raise InputError(f"{what} is a factor; R's arithmetic is not meaningful for factors. Use the numeric column, "
                         "or as.numeric(as.character(f)) for the numbers a factor's labels spell.")
    if isinstance(value, RMatrix):
        raise InputError(f"{what} is a matrix of several columns; arithmetic on it is not supported.")
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return float(value)
    if isinstance(value, str):
        raise InputError(f"{what} is the text {value!r}; R's arithmetic needs numbers.")
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind in "US":
        raise InputError(f"{what} holds text (e.g. {str(arr.ravel()[0])!r}); R's arithmetic needs numbers: convert "
                         "the column with pandas.to_numeric, or use it as a factor.")
    return arr.astype(float)


def _logical(value: Value, what: str) -> np.ndarray | bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    arr = np.asarray(value) if not isinstance(value, (RFactor, RMatrix)) else None
    if arr is not None and arr.dtype == bool:
        return arr
    num = _numeric(value, what)
    return np.asarray(num) != 0


def _comparable(value: Value) -> Any:
    if isinstance(value, RFactor):
        return value.labels
    if isinstance(value, RMatrix):
        raise InputError("a comparison of a matrix variable is not supported.")
    return value


# ---------------------------------------------------------------------------------------------- factors
def _factor_from(value: Value, what: str, *, levels: list | None = None, labels: list | None = None,
                 ordered: bool | None = None, integer: bool = False) -> RFactor:
    """R's ``factor(x, levels, labels, ordered)``."""
    if isinstance(value, RFactor):
        present = np.unique(value.codes)
        default = [value.levels[i] for i in present]
        keys = np.asarray(value.levels, dtype=object)[value.codes]
        is_ordered = value.ordered if ordered is None else ordered
    else:
        arr = np.asarray(value)
        if arr.ndim == 0:
            raise InputError(f"{what}: factor() needs a column, not the constant {arr.item()!r}.")
        if arr.dtype == bool:
            uniq = [v for v in (False, True) if (arr == v).any()]
            default = r_labels(np.asarray(uniq, dtype=bool))
            keys = np.asarray(r_labels(arr), dtype=object)
        elif arr.dtype.kind in "iuf":
            uniq = np.unique(arr)
            default = r_labels(uniq, integer=integer)
            keys = np.asarray(r_labels(arr, integer=integer), dtype=object)
        else:
            keys = arr.astype(str).astype(object)
            default = collated(keys)
        is_ordered = bool(ordered)
    if levels is None:
        levels = default
    else:
        levels = [_level_text(v) for v in levels]
        if len(set(levels)) != len(levels):
            raise InputError(f"{what}: the levels {levels} are not distinct.")
    codes = pd.Index(levels).get_indexer(pd.Index(keys))
    if (codes < 0).any():
        missing = list(dict.fromkeys(keys[codes < 0]))[:5]
        raise InputError(f"{what}: the value(s) {', '.join(map(repr, missing))} are not among the levels "
                         f"{levels}; R would make them NA. Add them to levels = c(...) or filter those rows.")
    if labels is not None:
        labels = [_level_text(v) for v in labels]
        if len(labels) != len(levels):
            raise InputError(f"{what}: labels must have one label per level ({len(levels)}); got {len(labels)}.")
        levels = labels
    return RFactor(codes.astype(np.int64), tuple(levels), ordered=is_ordered)


def _level_text(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, float, np.integer, np.floating)):
        return format_number(float(v))
    return str(v)


def stateful_levels(factor: RFactor, key: str, state: dict, what: str) -> RFactor:
    """The fitted data's levels for this factor on new data (R's ``xlev``): a level the fit never saw is an error."""
    if key not in state:
        state[key] = {"levels": factor.levels}
        return factor
    levels = tuple(state[key]["levels"])
    if factor.levels == levels:
        return factor
    codes = pd.Index(levels).get_indexer(pd.Index(factor.labels))
    if (codes < 0).any():
        unseen = list(dict.fromkeys(factor.labels[codes < 0]))
        raise InputError(f"the new data have level(s) {', '.join(map(repr, unseen[:5]))} of {what} that the fit never "
                         f"saw (its levels: {', '.join(levels)}); there is no coefficient for them. Predict only "
                         "levels present in the fitted data.")
    return RFactor(codes.astype(np.int64), levels, factor.ordered, factor.contrasts)


def contrast_matrix(coding: str, n: int) -> tuple[np.ndarray, list[str]]:
    """R's contrast matrix (``contr.treatment``, ``contr.sum``, ``contr.helmert``, ``contr.poly``, ``contr.SAS``) for
    ``n`` levels, and the suffixes R gives its columns (``None`` entries: the level labels).

    Examples
    --------
    >>> contrast_matrix("sum", 3)[0].tolist(), contrast_matrix("sum", 3)[1]
    ([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]], ['1', '2'])
    """
    if coding == "treatment":
        return np.eye(n)[:, 1:], []
    if coding == "SAS":
        return np.eye(n)[:, :-1], []
    if coding == "sum":
        return np.vstack([np.eye(n - 1), -np.ones(n - 1)]), [str(i) for i in range(1, n)]
    if coding == "helmert":
        m = np.zeros((n, n - 1))
        for j in range(n - 1):
            m[: j + 1, j] = -1.0
            m[j + 1, j] = j + 1.0
        return m, [str(i) for i in range(1, n)]
    if coding == "poly":
        names = [".L", ".Q", ".C", *(f"^{i}" for i in range(4, n))][: n - 1]
        return contr_poly(n), names
    raise FormulaError(f"unknown contrasts {coding!r}")  # pragma: no cover - _CONTRASTS lists the codings


_CONTRASTS = {"treatment": "treatment", "contr.treatment": "treatment", "sum": "sum", "contr.sum": "sum",
              "helmert": "helmert", "contr.helmert": "helmert", "poly": "poly", "contr.poly": "poly",
              "SAS": "SAS", "contr.SAS": "SAS"}


# ---------------------------------------------------------------------------------------------- evaluation
class _Context:
    def __init__(self, env: Mapping[str, pd.Series], state: dict, nrows: int) -> None:
        self.env = env
        self.state = state
        self.nrows = nrows


def column_names_of(node: Node) -> list[str]:
    """Names an expression reads (data columns, or constants such as ``pi`` when no column has that name), in order
    of appearance; function names and argument names are not included."""
    out: dict[str, None] = {}

    def walk(n: Node) -> None:
        if isinstance(n, Name):
            if n.id not in _KEYWORDS:
                out.setdefault(n.id, None)
        elif isinstance(n, Call):
            # C(f, sum): the contrasts are a name, not a column
            for a in (n.args[:1] if n.base == "C" else n.args):
                walk(a.value)
        elif isinstance(n, Unary):
            walk(n.operand)
        elif isinstance(n, Binary):
            walk(n.left)
            walk(n.right)
        elif isinstance(n, Paren):
            walk(n.inner)

    walk(node)
    return list(out)


_KEYWORDS = {"TRUE", "FALSE", "NULL", "NA", "Inf", "NaN"}
_CONSTANTS = {"TRUE": True, "FALSE": False, "T": True, "F": False, "pi": math.pi, "Inf": math.inf}


def evaluate(node: Node, env: Mapping[str, pd.Series], state: dict, *, nrows: int) -> Value:
    """The value of ``node`` over the columns ``env`` (``nrows`` rows) with R's semantics.

    Parameters
    ----------
    node : Node
        A parsed R expression (:func:`mixeval.formula._syntax.parse_r`).
    env : mapping of str to pandas.Series
        The data columns the expression reads.
    state : dict
        Parameters of stateful transforms, filled on the first (fitting) evaluation and reused afterwards.

    Examples
    --------
    >>> from mixeval.formula._syntax import parse_r
    >>> x = pd.Series([1, 2, 3])
    >>> evaluate(parse_r("I(x^2) + x %/% 2"), {"x": x}, {}, nrows=3).tolist()
    [1.0, 5.0, 10.0]
    """
    return _eval(node, _Context(env, state, nrows))


def _eval(node: Node, ctx: _Context) -> Value:
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Str):
        return node.value
    if isinstance(node, Paren):
        return _eval(node.inner, ctx)
    if isinstance(node, Name):
        if node.id in ctx.env:
            return _column(ctx.env[node.id])
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        if node.id in ("NA", "NaN", "NULL"):
            raise FormulaError(f"{node.id} is not supported inside a formula expression.")
        raise ColumnError(f"column {node.id!r} not found; the formula's expressions read data columns (write names "
                          "with spaces or symbols in backticks: `my column`).")
    if isinstance(node, Unary):
        value = _eval(node.operand, ctx)
        if node.op == "!":
            return np.logical_not(_logical(value, deparse(node.operand)))
        if node.op == "~":
            raise FormulaError(f"a formula inside an expression ({deparse(node)}) is not supported.")
        num = _numeric(value, deparse(node.operand))
        return -num if node.op == "-" else num
    if isinstance(node, Binary):
        return _binary(node, ctx)
    return _call(node, ctx)


def _as_text(value: Any) -> Any:
    """A number or logical compared with text is compared as R's ``as.character`` of it."""
    if isinstance(value, str) or np.asarray(value).dtype == object:
        return np.asarray(value, dtype=object)
    labels = np.asarray(r_labels(np.atleast_1d(np.asarray(value))), dtype=object)
    return labels if np.ndim(value) else labels[0]


def _is_text(value: Any) -> bool:
    return isinstance(value, str) or np.asarray(value).dtype == object


_COMPARE = {"==": np.equal, "!=": np.not_equal, "<": np.less, ">": np.greater, "<=": np.less_equal,
            ">=": np.greater_equal}


def _binary(node: Binary, ctx: _Context) -> Value:
    op = node.op
    if op in ("||", "&&", ":"):
        alternative = {"||": "|", "&&": "&", ":": "an interaction a:b as a term of the formula"}[op]
        raise FormulaError(f"the operator {op!r} in {deparse(node)} is not supported inside an expression; use "
                           f"{alternative}.")
    left, right = _eval(node.left, ctx), _eval(node.right, ctx)
    if op in _COMPARE:
        if op not in ("==", "!=") and (isinstance(left, RFactor) or isinstance(right, RFactor)):
            raise InputError(f"{deparse(node)}: R compares factors only with == and !=.")
        a, b = _comparable(left), _comparable(right)
        if _is_text(a) or _is_text(b):
            a, b = _as_text(a), _as_text(b)
        return np.asarray(_COMPARE[op](a, b), dtype=bool)
    if op == "&":
        return np.logical_and(_logical(left, deparse(node.left)), _logical(right, deparse(node.right)))
    if op == "|":
        return np.logical_or(_logical(left, deparse(node.left)), _logical(right, deparse(node.right)))
    if op == "%in%":
        table = right if isinstance(right, _Vector) else np.atleast_1d(_comparable(right))
        a = _comparable(left)
        return np.isin(_as_text(a) if not _is_text(a) and any(isinstance(t, str) for t in table) else a,
                       np.asarray(list(table), dtype=object))
    a, b = _numeric(left, deparse(node.left)), _numeric(right, deparse(node.right))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if op == "+":
            return np.add(a, b)
        if op == "-":
            return np.subtract(a, b)
        if op == "*":
            return np.multiply(a, b)
        if op == "/":
            return np.true_divide(a, b)
        if op == "^":
            return np.power(np.asarray(a, dtype=float), b)
        if op in ("%%", "%/%"):
            zero = np.asarray(b) == 0
            safe = np.where(zero, 1.0, b)
            if op == "%%":  # R: x - floor(x / y) * y, NaN for y = 0
                return np.where(zero, np.nan, np.mod(a, safe))
            return np.where(zero, np.true_divide(a, b), np.floor_divide(a, safe))  # x %/% 0 is +-Inf (NaN for 0)
    raise FormulaError(f"the operator {op!r} in {deparse(node)} is not supported; R's arithmetic operators are "
                       "+ - * / ^ %% %/%, comparisons == != < > <= >=, %in%, and & | !.")


# ---------------------------------------------------------------------------------------------- calls
@dataclass(frozen=True)
class _Function:
    formals: tuple[str, ...]
    impl: Callable[..., Value]
    dots: bool = False  # extra positional arguments go to "..." (pmin, pmax, c)


def _match_args(call: Call, fn: _Function) -> dict[str, Node]:
    """R's argument matching: exact names, then unique partial names, then positions."""
    matched: dict[str, Node] = {}
    positional: list[Node] = []
    for arg in call.args:
        if arg.name is None:
            positional.append(arg.value)
            continue
        if arg.name in fn.formals:
            name = arg.name
        else:
            partial = [f for f in fn.formals if f.startswith(arg.name)]
            if len(partial) != 1:
                raise FormulaError(f"{deparse(call)}: unused argument {arg.name} = ...; {call.base}() takes "
                                   f"{', '.join(fn.formals) or 'no named arguments'}.")
            name = partial[0]
        if name in matched:
            raise FormulaError(f"{deparse(call)}: the argument {name} is given twice.")
        matched[name] = arg.value
    rest = [f for f in fn.formals if f not in matched]
    if fn.dots:
        matched.update({f"..{i}": v for i, v in enumerate(positional)})
        return matched
    if len(positional) > len(rest):
        raise FormulaError(f"{deparse(call)}: too many arguments; {call.base}() takes {', '.join(fn.formals)}.")
    matched.update(zip(rest, positional))
    return matched


def _call(call: Call, ctx: _Context) -> Value:
    name = call.base
    if name in REFUSED:
        raise FormulaError(f"{call.fn}() is not supported in mixeval formulas: {REFUSED[name]}")
    fn = FUNCTIONS.get(name)
    if fn is None:
        alias = _NUMPY_ALIASES.get(name)
        if alias is not None:
            fn = FUNCTIONS[alias]
        else:
            raise FormulaError(f"{call.fn}() is not a function mixeval formulas know (R's arithmetic, log, exp, sqrt, "
                               "abs, factor, relevel, C, scale, poly, ns, bs, offset and a few more: see "
                               "mixeval.formula); compute the column in pandas first and use it by name.")
    args = _match_args(call, fn)
    return fn.impl(call, args, ctx)


def _value(args: dict[str, Node], key: str, ctx: _Context, default: Any = None) -> Any:
    return _eval(args[key], ctx) if key in args else default


def _required(call: Call, args: dict[str, Node], key: str) -> Node:
    if key not in args:
        raise FormulaError(f"{deparse(call)}: the argument {key} is missing.")
    return args[key]


def _scalar(value: Any, call: Call, what: str, kind: type = float) -> Any:
    """A single constant argument (``degree = 2``, ``raw = TRUE``, ``ref = "b"``)."""
    if isinstance(value, _Vector):
        if len(value) != 1:
            raise FormulaError(f"{deparse(call)}: {what} must be a single value.")
        value = value[0]
    elif isinstance(value, (RFactor, RMatrix)) or np.ndim(value) != 0:
        raise FormulaError(f"{deparse(call)}: {what} must be a single constant, not a column.")
    if isinstance(value, np.generic):
        value = value.item()
    if kind is bool:
        if not isinstance(value, bool):
            raise FormulaError(f"{deparse(call)}: {what} must be TRUE or FALSE.")
        return value
    if kind is str:
        return _level_text(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormulaError(f"{deparse(call)}: {what} must be a number.")
    return float(value)


def _whole(value: Any, call: Call, what: str, low: int) -> int:
    x = _scalar(value, call, what)
    if x != int(x) or x < low:
        raise FormulaError(f"{deparse(call)}: {what} must be a whole number >= {low}; got {format_number(x)}.")
    return int(x)


def _math(fn: Callable[[np.ndarray], np.ndarray]) -> _Function:
    def impl(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
        x = _numeric(_eval(_required(call, args, "x"), ctx), deparse(args["x"]))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return fn(np.asarray(x, dtype=float))
    return _Function(("x",), impl)


def _identity(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
    return _eval(_required(call, args, "x"), ctx)


def _log(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
    x = _numeric(_eval(_required(call, args, "x"), ctx), deparse(args["x"]))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.asarray(x, dtype=float))
        if "base" in args:
            out = out / np.log(_scalar(_eval(args["base"], ctx), call, "base"))
    return out


def _round(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
    x = _numeric(_eval(_required(call, args, "x"), ctx), deparse(args["x"]))
    digits = int(_scalar(_value(args, "digits", ctx, 0.0), call, "digits"))
    return np.round(np.asarray(x, dtype=float), digits)


def _parallel(reduce: Callable) -> _Function:
    def impl(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
        values = [_numeric(_eval(v, ctx), deparse(v)) for k, v in args.items() if k.startswith("..")]
        if not values:
            raise FormulaError(f"{deparse(call)} needs at least one argument.")
        out = values[0]
        for v in values[1:]:
            out = reduce(out, v)
        return out
    return _Function(("na.rm",), impl, dots=True)


def _ifelse(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
    test = _logical(_eval(_required(call, args, "test"), ctx), deparse(args["test"]))
    yes, no = (_comparable(_eval(_required(call, args, k), ctx)) for k in ("yes", "no"))
    text = any(isinstance(v, str) or np.asarray(v).dtype == object for v in (yes, no))
    if text:
        yes = yes if isinstance(yes, str) or np.asarray(yes).dtype == object else np.asarray(
            r_labels(np.atleast_1d(np.asarray(yes)))).squeeze()
        no = no if isinstance(no, str) or np.asarray(no).dtype == object else np.asarray(
            r_labels(np.atleast_1d(np.asarray(no)))).squeeze()
        return np.where(test, yes, no).astype(object)
    if np.asarray(yes).dtype == bool and np.asarray(no).dtype == bool:
        return np.where(test, yes, no).astype(bool)
    return np.where(test, _numeric(yes, "yes"), _numeric(no, "no")).astype(float)


def _as_numeric(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
    value = _eval(_required(call, args, "x"), ctx)
    if isinstance(value, RFactor):  # R: the codes, not the labels
        return value.codes.astype(float) + 1.0
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind in "US":
        out = pd.to_numeric(pd.Series(arr.ravel()), errors="coerce").to_numpy(dtype=float)
        if np.isnan(out).any():
            bad = arr.ravel()[np.isnan(out)][0]
            raise InputError(f"{deparse(call)}: the text {bad!r} is not a number (R would give NA).")
        out = out.reshape(arr.shape)
    else:
        out = _numeric(value, deparse(args["x"]))
    return np.trunc(out) if call.base == "as.integer" else out


def _as_character(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
    value = _eval(_required(call, args, "x"), ctx)
    if isinstance(value, RFactor):
        return value.labels
    arr = np.atleast_1d(np.asarray(value))
    return np.asarray(r_labels(arr), dtype=object)


def _as_logical(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
    return _logical(_eval(_required(call, args, "x"), ctx), deparse(args["x"]))


def _c(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
    out = _Vector()
    for _key, node in args.items():
        value = _eval(node, ctx)
        if np.ndim(value) != 0 or isinstance(value, (RFactor, RMatrix)):
            raise FormulaError(f"{deparse(call)}: c() takes constants here (levels, knots), not columns.")
        out.append(value.item() if isinstance(value, np.generic) else value)
    return out


def _distribution(fn: Callable, first: str, loc: str, scale: str, *, quantile: bool) -> _Function:
    """``plogis``/``pnorm`` (``fn((q - loc) / scale)``) and ``qlogis``/``qnorm`` (``loc + scale fn(p)``)."""
    def impl(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
        x = np.asarray(_numeric(_eval(_required(call, args, first), ctx), deparse(args[first])), dtype=float)
        m = _scalar(_value(args, loc, ctx, 0.0), call, loc)
        s = _scalar(_value(args, scale, ctx, 1.0), call, scale)
        with np.errstate(divide="ignore", invalid="ignore"):
            return m + s * fn(x) if quantile else fn((x - m) / s)
    return _Function((first, loc, scale), impl)


# ----- factors
def _data_is_integer(node: Node, ctx: _Context) -> bool:
    return isinstance(node, Name) and node.id in ctx.env and _is_integer_column(ctx.env[node.id])


def _levels_arg(call: Call, args: dict[str, Node], key: str, ctx: _Context) -> list | None:
    if key not in args:
        return None
    value = _eval(args[key], ctx)
    if isinstance(value, _Vector):
        return list(value)
    if np.ndim(value) == 0:
        return [value.item() if isinstance(value, np.generic) else value]
    raise FormulaError(f"{deparse(call)}: {key} must be constants, e.g. {key} = c(\"a\", \"b\").")


def _factor(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
    x = _required(call, args, "x")
    ordered = None
    if call.base in ("ordered", "as.ordered"):
        ordered = True
    elif "ordered" in args:
        ordered = _scalar(_eval(args["ordered"], ctx), call, "ordered", bool)
    levels = _levels_arg(call, args, "levels", ctx)
    labels = _levels_arg(call, args, "labels", ctx)
    if "exclude" in args:
        raise FormulaError(f"{deparse(call)}: exclude= is not supported; filter the rows first.")
    f = _factor_from(_eval(x, ctx), deparse(x), levels=levels, labels=labels, ordered=ordered,
                     integer=_data_is_integer(x, ctx))
    return stateful_levels(f, deparse(call), ctx.state, deparse(call))


def _relevel(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
    x = _required(call, args, "x")
    f = _eval(x, ctx)
    if not isinstance(f, RFactor):
        f = _factor_from(f, deparse(x), integer=_data_is_integer(x, ctx))
    if f.ordered:
        raise InputError(f"{deparse(call)}: relevel() is for unordered factors (as in R).")
    ref = _scalar(_eval(_required(call, args, "ref"), ctx), call, "ref", str)
    if ref not in f.levels:
        raise InputError(f"{deparse(call)}: ref = {ref!r} is not a level of {deparse(x)} (levels: "
                         f"{', '.join(f.levels)}).")
    order = [ref, *(lv for lv in f.levels if lv != ref)]
    remap = np.array([order.index(lv) for lv in f.levels])
    return stateful_levels(RFactor(remap[f.codes], tuple(order), False, f.contrasts), deparse(call), ctx.state,
                            deparse(call))


def _contrasts_c(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
    x = _required(call, args, "object")
    f = _eval(x, ctx)
    if not isinstance(f, RFactor):
        f = _factor_from(f, deparse(x), integer=_data_is_integer(x, ctx))
    if "how.many" in args:
        raise FormulaError(f"{deparse(call)}: how.many= is not supported.")
    coding = None
    if "contr" in args:
        node = args["contr"]
        key = node.id if isinstance(node, Name) else node.value if isinstance(node, Str) else None
        coding = _CONTRASTS.get(key) if key is not None else None
        if coding is None:
            raise FormulaError(f"{deparse(call)}: the contrasts {deparse(node)} are not supported; use treatment, sum, "
                               "helmert, poly or SAS (e.g. C(f, sum)), or relevel(f, ref = \"b\") for another "
                               "reference level.")
    f = RFactor(f.codes, f.levels, f.ordered, coding or f.coding)
    return stateful_levels(f, deparse(call), ctx.state, deparse(call))


# ----- stateful bases
def _basis_input(call: Call, args: dict[str, Node], ctx: _Context) -> np.ndarray:
    node = _required(call, args, "x")
    x = np.asarray(_numeric(_eval(node, ctx), deparse(node)), dtype=float)
    if x.ndim == 0:
        raise FormulaError(f"{deparse(call)}: the variable must be a column, not a constant.")
    if not np.all(np.isfinite(x)):
        raise InputError(f"{deparse(call)}: {deparse(node)} has missing or infinite values.")
    return x


def _scale_parameter(value: Any, call: Call, what: str, compute: Callable[[], float]) -> float | None:
    """``center=``/``scale=`` of R's ``scale``: TRUE computes it from the data, FALSE leaves it out, a number is
    used as given."""
    if isinstance(value, (bool, np.bool_)):
        return compute() if value else None
    return _scalar(value, call, what)


def _scale(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
    x = _basis_input(call, args, ctx)
    key = deparse(call)
    if key not in ctx.state:
        c = _scale_parameter(_value(args, "center", ctx, True), call, "center", lambda: float(np.mean(x)))
        xc = x if c is None else x - c
        # R divides by the root mean square with n - 1 (the sd when centred)
        s = _scale_parameter(_value(args, "scale", ctx, True), call, "scale",
                             lambda: float(np.sqrt(np.sum(xc**2) / max(1, len(xc) - 1))))
        if s == 0.0:
            raise InputError(f"{key}: {deparse(args['x'])} is constant, so its scale is 0.")
        ctx.state[key] = {"center": c, "scale": s}
    c, s = ctx.state[key]["center"], ctx.state[key]["scale"]
    out = x if c is None else x - c
    return out if s is None else out / s


def _poly(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
    dots = [k for k in args if k.startswith("..")]
    if len(dots) > 1 or dots and "degree" in args:
        raise FormulaError(f"{deparse(call)}: poly() of several variables is not supported; write poly(x, k) per "
                           "variable and their interactions.")
    if dots:
        args = {**args, "degree": args.pop(dots[0])}
    if "coefs" in args or "simple" in args:
        raise FormulaError(f"{deparse(call)}: coefs= and simple= are not supported (the fit's coefficients are kept "
                           "for new data by itself).")
    x = _basis_input(call, args, ctx)
    degree = _whole(_value(args, "degree", ctx, 1.0), call, "degree", 1)
    raw = _scalar(_value(args, "raw", ctx, False), call, "raw", bool)
    names = tuple(str(i) for i in range(1, degree + 1))
    if raw:
        return RMatrix(x[:, None] ** np.arange(1, degree + 1), names)
    key = deparse(call)
    if key not in ctx.state:
        coefs = poly_coefs(x, degree, what=key)
        ctx.state[key] = {"alpha": list(coefs.alpha), "norm2": list(coefs.norm2)}
        return RMatrix(poly_basis(x, degree), names)
    coefs = PolyCoefs(tuple(ctx.state[key]["alpha"]), tuple(ctx.state[key]["norm2"]))
    return RMatrix(poly_basis(x, degree, coefs), names)


def _spline(natural: bool) -> _Function:
    def impl(call: Call, args: dict[str, Node], ctx: _Context) -> Value:
        x = _basis_input(call, args, ctx)
        key = deparse(call)
        if key not in ctx.state:
            df = _value(args, "df", ctx)
            knots = _value(args, "knots", ctx)
            boundary = _value(args, "Boundary.knots", ctx)
            degree = 3 if natural else _whole(_value(args, "degree", ctx, 3.0), call, "degree", 1)
            k = spline_knots(
                x, df=None if df is None else _whole(df, call, "df", 1),
                knots=None if knots is None else np.asarray(list(knots) if isinstance(knots, _Vector) else knots,
                                                            dtype=float),
                degree=degree, intercept=_scalar(_value(args, "intercept", ctx, False), call, "intercept", bool),
                boundary=None if boundary is None else np.asarray(list(boundary), dtype=float), natural=natural,
                what=key)
            ctx.state[key] = {"knots": list(k.knots), "boundary": list(k.boundary), "intercept": k.intercept,
                              "degree": k.degree}
        st = ctx.state[key]
        k = SplineKnots(tuple(st["knots"]), tuple(st["boundary"]), st["intercept"], st["degree"])
        if not natural and ((x < k.boundary[0]) | (x > k.boundary[1])).any():
            warnings.warn(f"{key}: some values lie beyond the boundary knots; the basis is extrapolated there as R "
                          "does (which may be ill-conditioned).", UserWarning, stacklevel=caller_stacklevel())
        basis = ns_basis(x, k) if natural else bs_basis(x, k)
        return RMatrix(basis, tuple(str(i) for i in range(1, basis.shape[1] + 1)))
    if natural:
        return _Function(("x", "df", "knots", "intercept", "Boundary.knots"), impl)
    return _Function(("x", "df", "knots", "degree", "intercept", "Boundary.knots"), impl)


FUNCTIONS: dict[str, _Function] = {
    "I": _Function(("x",), _identity),
    "log": _Function(("x", "base"), _log),
    "log2": _math(np.log2), "log10": _math(np.log10), "log1p": _math(np.log1p),
    "exp": _math(np.exp), "expm1": _math(np.expm1), "sqrt": _math(np.sqrt), "abs": _math(np.abs),
    "sign": _math(np.sign), "floor": _math(np.floor), "ceiling": _math(np.ceil), "trunc": _math(np.trunc),
    "sin": _math(np.sin), "cos": _math(np.cos), "tan": _math(np.tan), "asin": _math(np.arcsin),
    "acos": _math(np.arccos), "atan": _math(np.arctan), "sinh": _math(np.sinh), "cosh": _math(np.cosh),
    "tanh": _math(np.tanh),
    "round": _Function(("x", "digits"), _round),
    "pmin": _parallel(np.minimum), "pmax": _parallel(np.maximum),
    "ifelse": _Function(("test", "yes", "no"), _ifelse),
    "as.numeric": _Function(("x",), _as_numeric), "as.double": _Function(("x",), _as_numeric),
    "as.integer": _Function(("x",), _as_numeric),
    "as.character": _Function(("x",), _as_character), "as.logical": _Function(("x",), _as_logical),
    "plogis": _distribution(special.expit, "q", "location", "scale", quantile=False),
    "qlogis": _distribution(special.logit, "p", "location", "scale", quantile=True),
    "pnorm": _distribution(special.ndtr, "q", "mean", "sd", quantile=False),
    "qnorm": _distribution(special.ndtri, "p", "mean", "sd", quantile=True),
    "c": _Function((), _c, dots=True),
    "factor": _Function(("x", "levels", "labels", "exclude", "ordered"), _factor),
    "as.factor": _Function(("x",), _factor),
    "ordered": _Function(("x", "levels", "labels"), _factor),
    "as.ordered": _Function(("x",), _factor),
    "relevel": _Function(("x", "ref"), _relevel),
    "C": _Function(("object", "contr", "how.many"), _contrasts_c),
    "scale": _Function(("x", "center", "scale"), _scale),
    # poly's second positional argument is R's "..." (the degree): it gets a slot of its own
    "poly": _Function(("x", "..0", "degree", "coefs", "raw", "simple"), _poly),
    "ns": _spline(True),
    "bs": _spline(False),
}

_NUMPY_ALIASES = {f"{p}.{f}": f for p in ("np", "numpy") for f in
                  ("log", "log2", "log10", "log1p", "exp", "expm1", "sqrt", "abs", "sign", "floor", "trunc",
                   "sin", "cos", "tan", "sinh", "cosh", "tanh")}

#: Functions R users write in formulas that mixeval does not compute, with the alternative.
REFUSED: dict[str, str] = {
    "lsp": "linear splines with fixed knots; build the hinge columns with pmax(x - knot, 0), e.g. "
           "x + pmax(x - 10, 0), or use ns(x, df) / bs(x, df, degree = 1).",
    "rcs": "rms' restricted cubic splines; use splines' natural spline ns(x, df), which spans the same family.",
    "s": "mgcv smooths belong to a GAM (mgcv::gam / gamm4), not to an lme4 formula; use ns(x, df) or bs(x, df) "
         "here, or mixeval.validity's GAM tools for smooth terms.",
    "te": "mgcv tensor smooths belong to a GAM, not to an lme4 formula; use ns() bases and their interaction.",
    "ti": "mgcv tensor smooths belong to a GAM, not to an lme4 formula; use ns() bases and their interaction.",
    "t2": "mgcv tensor smooths belong to a GAM, not to an lme4 formula; use ns() bases and their interaction.",
    "cut": "compute the classes as a column first, e.g. data['x_class'] = pandas.cut(data['x'], bins), and use "
           "factor(x_class).",
    "interaction": "write the interaction in the formula, a:b (or a*b), or make the combined column first.",
    "mean": "an expression's mean would be recomputed on new data by R's predict(); use scale(x, scale = FALSE), "
            "which keeps the fitted data's mean, or centre the column first.",
    "sd": "use scale(x), which keeps the fitted data's centre and scale for new data.",
    "median": "centre the column first (data['x'] - data['x'].median()) and use the new column.",
    "min": "use pmin() for the element-wise minimum, or compute the column first.",
    "max": "use pmax() for the element-wise maximum, or compute the column first.",
    "range": "compute the column first.",
    "rank": "compute the ranks as a column first (data['x'].rank()).",
    "lag": "compute lagged values as a column first (data.groupby(...)['x'].shift()).",
    "diff": "compute differences as a column first.",
    "cumsum": "compute the cumulative sum as a column first.",
    "droplevels": "unused levels are dropped already (as lme4 does); use the column or factor(x) directly.",
    "Surv": "survival responses are not mixed-model formulas mixeval fits.",
    "strata": "survival strata are not part of lme4 formulas.",
    "cluster": "cluster() is survival's; use a random intercept (1 | cluster).",
    "bSpline": "use splines' bs(x, df, degree), which mixeval computes as R does.",
    "naturalSpline": "use splines' ns(x, df), which mixeval computes as R does.",
    "pspline": "use splines' ns(x, df) or bs(x, df).",
    "lo": "loess terms are not part of lme4 formulas; use ns(x, df).",
    "mm": "multiple-membership terms are built by mixeval.preferences for pairwise data; they are not a formula "
          "function.",
    "center": "formulaic's center(x) is written scale(x, scale = FALSE) in R's formula language.",
    "contr.treatment": "pass the contrasts to C(): C(f, treatment), or relevel(f, ref = \"b\") for another "
                       "reference level.",
}

