"""R's ``model.frame`` + ``model.matrix`` of one right-hand side, with formulaic as the coding engine.

:func:`model_frame_spec` expands the right-hand side with R's term algebra (:mod:`._terms`), evaluates every
variable that is an expression with R's semantics (:mod:`._evaluate`), and hands formulaic a formula of explicit
terms in R's order, in which a bare column is itself and an expression is a call of one stateful transform that
returns the value R computes (its parameters kept in formulaic's model spec, R's ``makepredictcall``). formulaic
then codes factors (treatment contrasts, dummy coding where R's rule asks for it) and forms the interactions; the
columns are renamed as R names them (``(Intercept)``, ``systemB``, ``I(len^2)``, ``poly(x, 2)1``,
``factor(level)2:x``). The :class:`ModelFrameSpec` builds the same columns for new data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ColumnError, FormulaError, InputError, MixevalError
from ._collate import collated
from ._evaluate import RFactor, RMatrix, column_names_of, contrast_matrix, evaluate, r_labels, stateful_levels
from ._syntax import Name, Node, deparse, parse_r
from ._terms import Terms, expand_terms

__all__ = ["ModelFrameSpec", "model_frame_spec", "required_columns", "prepare_plain_columns", "is_text"]

_TRANSFORM = "_mixeval_r"


def _contrasts_class():
    """R's contrasts as a formulaic ``Contrasts`` (defined on first use: formulaic is imported lazily)."""
    global _RContrasts
    if _RContrasts is not None:
        return _RContrasts
    from formulaic.transforms.contrasts import Contrasts

    @dataclass
    class RContrasts(Contrasts):
        """R's ``contr.*`` coding when R codes a factor by contrasts, indicators of every level otherwise; columns
        named by R's suffixes (level labels, ``1``, ``2``, or ``.L``, ``.Q``)."""

        coding: str = "treatment"
        FACTOR_FORMAT = "{name}[{field}]"
        FACTOR_FORMAT_REDUCED = "{name}[{field}]"

        @Contrasts.override
        def _get_coding_matrix(self, levels: Sequence[Hashable], reduced_rank: bool = True, sparse: bool = False):
            matrix = contrast_matrix(self.coding, len(levels))[0] if reduced_rank else np.eye(len(levels))
            if sparse:
                import scipy.sparse as sps

                return sps.csc_matrix(matrix)
            return matrix

        @Contrasts.override
        def get_coding_column_names(self, levels: Sequence[Hashable], reduced_rank: bool = True):
            if not reduced_rank:
                return list(levels)
            names = contrast_matrix(self.coding, len(levels))[1]
            if names:
                return names
            return list(levels[1:]) if self.coding == "treatment" else list(levels[:-1])

        @Contrasts.override
        def get_coefficient_row_names(self, levels: Sequence[Hashable], reduced_rank: bool = True):
            return list(levels)

        @Contrasts.override
        def get_drop_field(self, levels: Sequence[Hashable], reduced_rank: bool = True):
            return None if reduced_rank else levels[0]

        def __reduce__(self):  # the class is made on first use: pickle rebuilds it through the module's function
            return _r_contrasts, (self.coding,)

    _RContrasts = RContrasts
    return RContrasts


_RContrasts: Any = None


def _r_materializer() -> Any:
    """formulaic's pandas materializer with R's rule for coding a factor in a term (defined on first use)."""
    global _RMaterializer
    if _RMaterializer is not None:
        return _RMaterializer
    from formulaic.materializers import PandasMaterializer
    from formulaic.materializers.types import ScopedFactor, ScopedTerm
    from formulaic.parser.types import Factor

    class RMaterializer(PandasMaterializer):
        """R's ``model.matrix`` coding (``TermCode`` of R's ``model.c``): in each term, a factor is coded by
        contrasts when the term without it (its margin) lies within an earlier term (the intercept being the empty
        term), else by indicators of all its levels; without an intercept, the first factor of the first term with
        one is coded by indicators. formulaic's own rule keeps every matrix of full rank, which codes ``a:b``
        without its main effects differently from R (where lme4 then drops the aliased columns)."""

        REGISTER_NAME = "mixeval_r"
        REGISTER_INPUTS = ()

        @PandasMaterializer.override
        def _get_scoped_terms(self, terms, ensure_full_rank: bool = True):
            order = self.params.get("order", {})
            preceding: list[frozenset] = [frozenset()] if self.params.get("intercept", True) else []
            first_pending = not self.params.get("intercept", True)
            for term in terms:
                evaled = [self.factor_cache[f.expr] for f in term.factors
                          if self.factor_cache[f.expr].values.__wrapped__ is not None]
                if not evaled:
                    yield term, []
                    continue
                scale: Any = 1
                others = []
                for factor in evaled:
                    if factor.metadata.kind is Factor.Kind.CONSTANT:
                        scale = scale * factor.values
                    else:
                        others.append(factor)
                names = frozenset(f.expr for f in others)
                categorical = [f for f in others if f.metadata.spans_intercept]
                full_first = None
                if first_pending and categorical:
                    full_first = min(categorical, key=lambda f: order.get(f.expr, 0)).expr
                    first_pending = False
                scoped = []
                for factor in others:
                    if not factor.metadata.spans_intercept:
                        scoped.append(ScopedFactor(factor))
                        continue
                    margin = names - {factor.expr}
                    by_contrasts = any(margin <= earlier for earlier in preceding) and factor.expr != full_first
                    scoped.append(ScopedFactor(factor, reduced=by_contrasts))
                if names:
                    preceding.append(names)
                yield term, [ScopedTerm(scoped, scale=scale)]

    _RMaterializer = RMaterializer
    return RMaterializer


_RMaterializer: Any = None


def _r_contrasts(coding: str) -> Any:
    """R's contrasts of ``coding`` (for unpickling)."""
    return _contrasts_class()(coding=coding)


@dataclass(frozen=True)
class _Variable:
    """One variable of the right-hand side: its expression, R's name, the data columns it reads and whether
    formulaic reads it as a bare column (``plain``)."""

    node: Node
    name: str
    columns: tuple[str, ...]
    plain: bool

    def text(self, index: int) -> str:
        """The variable in the formula handed to formulaic."""
        if self.plain:
            return self.name if _formulaic_name(self.name) else f"`{self.name}`"
        cols = ", ".join(c if _formulaic_name(c) else f"`{c}`" for c in self.columns)
        return f"{_TRANSFORM}({index}{', ' if cols else ''}{cols})"


def _formulaic_name(name: str) -> bool:
    """A name formulaic reads as is. Others go in backticks, which formulaic replaces by a sanitised name
    everywhere in the factor's code: a name in backticks has a character no identifier has, so it never matches
    inside the transform's name."""
    return name.isidentifier() and name not in ("C", "I", "np", "numpy", _TRANSFORM)


def required_columns(terms: Terms, columns: Sequence[str] | None = None) -> list[str]:
    """Data columns the variables and offsets read (names such as ``pi`` or ``T`` count only when the data have
    such a column)."""
    out: dict[str, None] = {}
    for node in (*terms.variables, *terms.offsets):
        for name in column_names_of(node):
            if name in ("pi", "T", "F") and (columns is None or name not in columns):
                continue
            out.setdefault(name, None)
    return list(out)


def prepare_plain_columns(data: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Bare columns coded as R codes them, on a copy when anything changes.

    Logical columns become factors (R: ``systemTRUE``; formulaic would treat them as numbers), text columns
    factors with their levels in R's order (``"apple" < "Banana"``, :func:`~._collate.collation_key`; formulaic
    would sort them by code point), and unused categories of categorical columns are dropped (lme4's
    ``drop.unused.levels``; common after filtering).

    Examples
    --------
    >>> df = pd.DataFrame({"ok": [True, False], "s": pd.Categorical(["a", "a"], categories=["a", "b"]),
    ...                    "t": ["Banana", "apple"]})
    >>> out = prepare_plain_columns(df, ["ok", "s", "t"])
    >>> list(out["ok"].cat.categories), list(out["s"].cat.categories), list(out["t"].cat.categories)
    ([False, True], ['a'], ['apple', 'Banana'])
    """
    changes: dict[str, Any] = {}
    for col in columns:
        series = data[col]
        if pd.api.types.is_bool_dtype(series):
            changes[col] = pd.Categorical(series, categories=[False, True])
        elif is_text(series):
            values = series.astype(object)
            changes[col] = pd.Categorical(values, categories=collated(values))
        elif isinstance(series.dtype, pd.CategoricalDtype):
            used = series.cat.remove_unused_categories()
            if len(used.cat.categories) != len(series.cat.categories):
                changes[col] = used
    return data.assign(**changes) if changes else data


def is_text(series: pd.Series) -> bool:
    """A column of text (R's character vector): pandas' string dtype, or objects that are all strings.

    Examples
    --------
    >>> import pandas as pd
    >>> is_text(pd.Series(["a", "b"])), is_text(pd.Series([1, 2])), is_text(pd.Series(["a", 1], dtype=object))
    (True, False, False)
    """
    if isinstance(series.dtype, pd.StringDtype):
        return True
    if series.dtype != object:
        return False
    return bool(len(series)) and all(isinstance(v, str) for v in series.to_numpy())


def _is_plain(node: Node, data: pd.DataFrame) -> bool:
    """A bare column that formulaic codes as R does (ordered factors take R's polynomial contrasts instead)."""
    if not isinstance(node, Name) or node.id not in data.columns:
        return False
    dtype = data[node.id].dtype
    return not (isinstance(dtype, pd.CategoricalDtype) and dtype.ordered)


@dataclass(frozen=True, eq=False)
class ModelFrameSpec:
    """The model matrix of one right-hand side, ready for new data (R's ``terms`` with ``predvars``).

    Attributes
    ----------
    rhs : str
        The right-hand side as R prints it.
    r_terms : Terms
        R's terms: variables, their interactions, the intercept, the offsets.
    column_names : tuple of str
        The columns as R names them.
    spec : formulaic.ModelSpec
        formulaic's spec of the coded matrix (its factors are the variables, bare columns by name).

    Examples
    --------
    >>> df = pd.DataFrame({"x": [1.0, 2, 3, 4, 5], "g": list("ababa")})
    >>> X, spec = model_frame_spec("I(x^2) + poly(x, 2) + g", df)
    >>> spec.column_names
    ('(Intercept)', 'I(x^2)', 'poly(x, 2)1', 'poly(x, 2)2', 'gb')
    >>> spec.get_model_matrix(pd.DataFrame({"x": [6.0], "g": ["b"]}))[0, :2].tolist()
    [1.0, 36.0]
    """

    rhs: str
    r_terms: Terms
    variables: tuple[_Variable, ...] = field(repr=False)
    formula: str = field(repr=False)
    spec: Any = field(repr=False)
    column_names: tuple[str, ...]
    columns: tuple[str, ...] = field(repr=False, default=())
    offset_state: dict = field(repr=False, default_factory=dict)
    #: the columns a rank-deficient fit keeps (:meth:`dropping`); None: every column
    kept: tuple[int, ...] | None = field(repr=False, default=None)
    #: every column R's ``model.matrix`` makes, the dropped ones included
    all_column_names: tuple[str, ...] = field(repr=False, default=())
    #: an orthonormal basis of the null space of the fitted rows' full matrix (emmeans' ``nonest.basis``)
    null_basis: np.ndarray | None = field(repr=False, default=None)

    # -- formulaic's view, for code that walks the coded factors (reference grids, joint tests)
    @property
    def encoder_state(self) -> dict:
        return self.spec.encoder_state

    @property
    def variables_by_source(self) -> dict:
        return self.spec.variables_by_source

    @property
    def factor_variables(self) -> dict:
        return self.spec.factor_variables

    @property
    def structure(self) -> list:
        return self.spec.structure

    @property
    def terms(self) -> list:
        """formulaic's terms (of coded factors); R's are :attr:`r_terms`."""
        return self.spec.terms

    @property
    def required_variables(self) -> set[str]:
        """The data columns the right-hand side reads (offsets included)."""
        return set(self.columns)

    @property
    def has_offset(self) -> bool:
        return bool(self.r_terms.offsets)

    @property
    def dropped_names(self) -> tuple[str, ...]:
        """The columns a rank-deficient fit dropped (lme4's ``col.dropped``), in the matrix's order."""
        if self.kept is None:
            return ()
        kept = set(self.kept)
        return tuple(nm for j, nm in enumerate(self.all_column_names) if j not in kept)

    def dropping(self, kept: Sequence[int], gram: np.ndarray) -> ModelFrameSpec:
        """This spec with only the ``kept`` columns (lme4's ``chkRank.drop.cols``): :meth:`get_model_matrix` and
        :attr:`column_names` then give the kept columns, :meth:`full_model_matrix` every column. ``gram`` is
        ``X'X`` of the fitted rows' full matrix, whose null space (that of ``X``) tells which new linear functions
        are estimable (:meth:`nonestimable`).

        Examples
        --------
        >>> df = pd.DataFrame({"a": list("pqpq"), "b": list("uuvv")}).iloc[[0, 1, 2]]
        >>> X, spec = model_frame_spec("a * b", df)
        >>> reduced = spec.dropping([0, 1, 2], X.T @ X)
        >>> reduced.column_names, reduced.dropped_names
        (('(Intercept)', 'aq', 'bv'), ('aq:bv',))
        >>> reduced.nonestimable(reduced.full_model_matrix(pd.DataFrame({"a": ["q", "p"], "b": ["v", "v"]}))).tolist()
        [True, False]
        """
        if self.kept is not None:
            raise ValueError("the spec already drops columns")
        kept = tuple(int(j) for j in kept)
        gram = np.asarray(gram, dtype=float)
        p = gram.shape[0]
        if kept == tuple(range(p)):
            return self
        dropped = [j for j in range(p) if j not in set(kept)]
        # X[:, dropped] = X[:, kept] A (so X_k'X_k A = X_k'X_d), and the columns of [-A; I] span the null space of X
        alias = np.linalg.solve(gram[np.ix_(kept, kept)], gram[np.ix_(kept, dropped)])
        basis = np.zeros((p, len(dropped)))
        basis[list(kept)] = -alias
        basis[dropped] = np.eye(len(dropped))
        null_basis = np.linalg.qr(basis)[0]
        null_basis.setflags(write=False)
        return dataclasses.replace(self, kept=kept, all_column_names=self.column_names,
                                   column_names=tuple(self.column_names[j] for j in kept), null_basis=null_basis)

    def nonestimable(self, L: np.ndarray, tol: float = 1e-8) -> np.ndarray:
        """Which rows of ``L`` (linear functions of every column, :meth:`full_model_matrix`) the fitted rows cannot
        estimate: ``||L N||^2 >= tol ||L||^2`` for the null basis ``N`` (emmeans' ``is.estble``, ``estble.tol``).
        No row is when no column was dropped."""
        L = np.atleast_2d(np.asarray(L, dtype=float))
        if self.null_basis is None:
            return np.zeros(L.shape[0], dtype=bool)
        ssq = np.einsum("ij,ij->i", L, L)
        proj = L @ self.null_basis
        return np.einsum("ij,ij->i", proj, proj) >= tol * np.where(ssq < tol, 1.0, ssq)

    def context(self) -> dict[str, Any]:
        """The transform formulaic calls for each variable that is an expression."""
        return {_TRANSFORM: _transform(self.variables)}

    def get_model_matrix(self, data: pd.DataFrame, na_action: str = "raise") -> np.ndarray:
        """The columns of new rows under the fitted coding, factor levels and transform parameters (the kept ones
        of a rank-deficient fit: :meth:`dropping`)."""
        X = self.full_model_matrix(data, na_action=na_action)
        return X if self.kept is None else X[:, list(self.kept)]

    def full_model_matrix(self, data: pd.DataFrame, na_action: str = "raise") -> np.ndarray:
        """Every column of new rows, those a rank-deficient fit dropped included."""
        data = prepare_plain_columns(data, [v.name for v in self.variables if v.plain and v.name in data.columns])
        self.check_new_types(data)
        _r_materializer()  # formulaic finds the spec's materializer by name: an unpickled spec needs it registered
        try:
            mm = self.spec.get_model_matrix(data, context=self.context(), na_action=na_action)
        except Exception as exc:  # formulaic wraps the evaluation's errors; a mixeval error is the user's mistake
            raise _translate(exc, self.rhs) from exc
        return np.asarray(mm, dtype=float)

    def check_new_types(self, data: pd.DataFrame) -> None:
        """A column the fit used as a number must be numbers in new data (not text that spells numbers)."""
        for v in self.variables:
            if not v.plain or v.name not in data.columns:
                continue
            kind = self.spec.encoder_state.get(v.name, (None,))[0]
            series = data[v.name]
            if getattr(kind, "value", kind) == "numerical" and not (
                    pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)):
                example = series.iloc[0] if len(series) else None
                raise InputError(f"new data column {v.name!r} holds {series.dtype} values (e.g. {example!r}) but the "
                                 "fit used it as a number; convert it, e.g. newdata[" + repr(v.name) + "] = "
                                 "pandas.to_numeric(newdata[" + repr(v.name) + "]).")

    def offset(self, data: pd.DataFrame) -> np.ndarray | None:
        """The summed ``offset()`` terms of ``data``'s rows (None when the formula has none)."""
        if not self.r_terms.offsets:
            return None
        total = np.zeros(len(data))
        env = {c: data[c] for c in self.columns if c in data.columns}
        for node in self.r_terms.offsets:
            value = evaluate(node, env, self.offset_state, nrows=len(data))
            what = f"offset({deparse(node)})"
            if isinstance(value, (RFactor, RMatrix)) or np.asarray(value).dtype.kind not in "biuf":
                raise InputError(f"{what} must be numeric; {deparse(node)} is not a number per row.")
            values = np.broadcast_to(np.asarray(value, dtype=float), (len(data),))
            _require_finite(values, what)
            total = total + values
        return total


def _require_finite(values: np.ndarray, what: str) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        rows = np.flatnonzero(bad)
        raise InputError(f"{what} is not finite (NaN or infinite) in {bad.sum()} of {len(values)} rows (first at row "
                         f"{rows[0]}); R would drop those rows (na.omit) or fail. Filter them first, e.g. keep the "
                         "rows where the expression is defined (x > 0 for log(x)).")


def _transform(variables: tuple[_Variable, ...]):
    """formulaic's stateful transform for expression variables: ``_mixeval_r(index, *columns)``."""
    from formulaic.utils.stateful_transforms import stateful_transform

    @stateful_transform
    def transform(index: int, *columns: pd.Series, _state: dict | None = None) -> Any:
        var = variables[index]
        state = {} if _state is None else _state
        nrows = len(columns[0]) if columns else 0
        value = evaluate(var.node, dict(zip(var.columns, columns)), state, nrows=nrows)
        return _factor_values(value, var, state, nrows)

    return transform


def _factor_values(value: Any, var: _Variable, state: dict, nrows: int) -> Any:
    """An evaluated variable as formulaic takes it: numbers, a factor with R's contrasts, or columns."""
    from formulaic.materializers.types import FactorValues
    from formulaic.transforms.contrasts import C

    if isinstance(value, RMatrix):
        _require_finite(value.values.ravel(), var.name)
        return FactorValues(value.values, column_names=value.colnames)
    if not isinstance(value, RFactor):
        arr = np.asarray(value)
        if arr.ndim == 0:
            raise FormulaError(f"the term {var.name} is a constant, not a column; a constant is absorbed by the "
                               "intercept (write 1) or belongs in an offset().")
        if arr.dtype.kind in "iuf":
            values = arr.astype(float)
            _require_finite(values, var.name)
            return values
        value = _text_factor(arr)
    factor = stateful_levels(value, "(levels)", state, var.name)
    categorical = pd.Series(pd.Categorical.from_codes(factor.codes, categories=list(factor.levels)))
    return C(categorical, contrasts=_contrasts_class()(coding=factor.coding), levels=list(factor.levels))


def _text_factor(arr: np.ndarray) -> RFactor:
    """A logical or character variable as the factor ``model.matrix`` makes of it (levels in R's order:
    ``FALSE, TRUE``, text collated as R collates it, :mod:`._collate`)."""
    labels = np.asarray(r_labels(arr) if arr.dtype == bool else [str(v) for v in arr], dtype=object)
    levels = sorted(set(labels), key=lambda v: v == "TRUE") if arr.dtype == bool else collated(labels)
    codes = pd.Index(levels).get_indexer(pd.Index(labels))
    return RFactor(codes.astype(np.int64), tuple(levels))


def _translate(exc: BaseException, rhs: str) -> MixevalError:
    """formulaic's exception as the mixeval error it wraps, or a formula error naming the right-hand side."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, MixevalError):
            return cause
        cause = cause.__cause__ or cause.__context__
    return FormulaError(f"cannot build the model matrix of {rhs!r}: {exc}")


def _r_column_names(spec: Any, variables: tuple[_Variable, ...], factor_index: dict[str, int]) -> tuple[str, ...]:
    """formulaic's column names as R's: ``f[T.b]`` and ``f[b]`` -> ``fb``, ``poly(x, 2)[1]`` -> ``poly(x, 2)1``,
    a logical column's ``l[T.True]`` -> ``lTRUE``."""
    logical = {expr for expr, (kind, state) in spec.encoder_state.items()
               if isinstance(state, dict) and list(state.get("categories", [])) == [False, True]}
    names: list[str] = []
    for entry in spec.structure:
        exprs = sorted((str(f) for f in entry.term.factors), key=len, reverse=True)
        if exprs == ["1"]:
            names.extend("(Intercept)" for _ in entry.columns)
            continue
        for column in entry.columns:
            parts = []
            for expr, part in _column_parts(column, exprs):
                var = variables[factor_index[expr]]
                if part.startswith("T.") and var.plain:
                    part = part[2:]
                if expr in logical and part in ("True", "False"):
                    part = part.upper()
                parts.append(var.name + part)
            names.append(":".join(parts))
    return tuple(names)


def _column_parts(column: str, exprs: list[str]) -> list[tuple[str, str]]:
    """A coded column's factors and their fields (``"f[T.b]:x"`` -> ``[("f", "T.b"), ("x", "")]``); the factors are
    those of its term (formulaic may code a term by some of its factors)."""
    parts, pos = [], 0
    while pos < len(column):
        expr = next((e for e in exprs if column.startswith(e, pos) and column[pos + len(e):pos + len(e) + 1] in
                     ("", "[", ":")), None)
        if expr is None:  # pragma: no cover - formulaic names every column by its factors
            raise FormulaError(f"cannot name the column {column!r}")
        pos += len(expr)
        field = ""
        if column.startswith("[", pos):
            ends = [i for i in range(pos + 1, len(column)) if column[i] == "]" and (
                i + 1 == len(column) or column[i + 1] == ":" and any(column.startswith(e, i + 2) for e in exprs))]
            field, pos = column[pos + 1:ends[0]], ends[0] + 1
        parts.append((expr, field))
        pos += 1  # the ':' between factors
    return parts


def _single_levels(spec: Any, variables: tuple[_Variable, ...], factor_index: dict[str, int]) -> None:
    for expr, (kind, state) in spec.encoder_state.items():
        categories = state.get("categories") if isinstance(state, dict) else None
        if getattr(kind, "value", kind) == "categorical" and categories is not None and len(categories) < 2:
            name = variables[factor_index[expr]].name if expr in factor_index else expr
            level = f" ({categories[0]!r})" if categories else ""
            raise InputError(f"the factor {name!r} has a single level{level} in the data, so it has no effect to "
                             "estimate (lme4: 'contrasts can be applied only to factors with 2 or more levels'). "
                             f"Remove {name} from the formula, or check the rows (a filter that kept one level?).")


def model_frame_spec(rhs: str | Node | None, data: pd.DataFrame, *, na_action: str = "raise",
                     what: str = "the fixed effects") -> tuple[np.ndarray, ModelFrameSpec]:
    """The model matrix of ``rhs`` over ``data`` (R's ``model.matrix``) and the spec that rebuilds it for new data.

    Parameters
    ----------
    rhs : str, parsed expression, or None
        A right-hand side in R's formula language (``"system * I(len^2) + ns(x, 3) + offset(log(n))"``);
        None for the intercept alone.
    data : pandas.DataFrame
        The rows; every column the right-hand side reads must be present.

    Returns
    -------
    X : ndarray, shape (n, p)
    spec : ModelFrameSpec

    Raises
    ------
    FormulaError, ColumnError, InputError
        A formula R's language does not allow or mixeval does not build (named, with the alternative), a missing
        column, a factor with one level, an expression undefined on some rows.

    Examples
    --------
    >>> df = pd.DataFrame({"x": [1.0, 2, 3, 4], "n": [10, 20, 10, 40]})
    >>> X, spec = model_frame_spec("ns(x, 2) + offset(log(n))", df)
    >>> spec.column_names, X.shape
    (('(Intercept)', 'ns(x, 2)1', 'ns(x, 2)2'), (4, 3))
    >>> spec.offset(pd.DataFrame({"x": [2.5], "n": [100]})).round(4).tolist()
    [4.6052]
    """
    from formulaic import Formula, model_matrix

    node = parse_r(rhs) if isinstance(rhs, str) else rhs
    text = "1" if node is None else deparse(node)
    terms = expand_terms(node, text=text)
    needed = required_columns(terms, list(data.columns))
    missing = [c for c in needed if c not in data.columns]
    if missing:
        raise ColumnError(f"column(s) {', '.join(map(repr, missing))} of {what} ({text}) not found in the data; "
                          f"available columns: {', '.join(map(str, data.columns))}.")
    variables = tuple(
        _Variable(node=v, name=name, columns=tuple(c for c in column_names_of(v) if c in data.columns),
                  plain=_is_plain(v, data))
        for v, name in zip(terms.variables, terms.variable_names))
    data = prepare_plain_columns(data, [v.name for v in variables if v.plain])
    texts = [v.text(i) for i, v in enumerate(variables)]
    formula = " + ".join([("1" if terms.intercept else "0"), *(":".join(texts[i] for i in t) for t in terms.terms)])
    factor_index = {str(f): i for i, t in enumerate(texts) for term in Formula(t) for f in term.factors}
    try:
        mm = model_matrix(formula, data, context={_TRANSFORM: _transform(variables)}, na_action=na_action,
                          output="numpy", materializer=_r_materializer(),
                          materializer_params={"order": factor_index, "intercept": bool(terms.intercept)})
    except Exception as exc:  # formulaic raises several types; a mixeval error inside is the user's mistake
        raise _translate(exc, text) from exc
    _single_levels(mm.model_spec, variables, factor_index)
    spec = ModelFrameSpec(rhs=text, r_terms=terms, variables=variables, formula=formula, spec=mm.model_spec,
                          column_names=_r_column_names(mm.model_spec, variables, factor_index), columns=tuple(needed))
    return np.asarray(mm, dtype=float), spec

