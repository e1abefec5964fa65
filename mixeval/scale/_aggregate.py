"""Sufficient statistics of a random-intercept fit from GROUP BY queries, and the fit itself.

The rows never come to Python: the query engine returns counts and sums per
level (and per pair of levels) of the grouping terms, and per *cell* (combination
of the categorical fixed-effect columns) the moments of ``v = [1, x_1..x_m, y]``
(``x_j`` the numeric fixed-effect columns). Within a cell every row of the
fixed-effects matrix is an affine function of the numeric columns,
``X_row = T_c [1, x_1..x_m]``, with ``T_c`` obtained by evaluating the model matrix
(R's formula language, :mod:`mixeval.formula`) on a handful of prototype rows. A numeric
expression of the formula (``I(len^2)``, ``log(x)``) is a value column the query engine computes,
and an ``offset()`` is subtracted from the response there; factors of a column (``factor(level)``,
``relevel(g, ref = "b")``, ``C(g, sum)``) define cells. Hence, with ``B_c = diag(T_c, 1)``:

``W'W = sum_c B_c (sum_rows v v') B_c'`` and ``Z_k'W[l] = sum_c B_c (sum_{rows in l, c} v)``,

which are exactly the inputs of :func:`mixeval.mixed.fit_from_stats`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import ColumnError, FormulaError, IdentifiabilityWarning, InputError, caller_stacklevel
from ..formula import (
    ParsedFormula,
    RandomTerm,
    collated,
    is_text,
    kept_columns_of_gram,
    model_frame_spec,
    parse_formula,
    warn_dropped,
)
from ..mixed import GroupingFactor, LmerResult, SufficientStats, fit_from_stats
from ..mixed.engine import check_group_levels
from ._cache import fetch, moment_name, sum_name
from ._sources import Engine, as_engine, with_columns
from ._sql import overview_sql

__all__ = ["AggregateDesign", "lmer_aggregate", "aggregate_stats", "SUPPORTED_MODELS"]

#: The models the aggregate (DuckDB, Parquet, Spark) path fits, in words.
SUPPORTED_MODELS = (
    "random intercepts (1|g) for any number of crossed or nested grouping factors, including interactions "
    "(1|g:h) and nesting (1|g/h); fixed effects in R's formula language: intercept, categorical columns "
    "(strings, booleans), factors of a column (factor(x), relevel(x, ref = ...), C(x, sum)), numeric columns and "
    "numeric expressions the engine computes (I(x^2), log(x), sqrt(x), ...), interactions of these (:, *, ^, /), "
    "and offset() terms; the response a column or a numeric expression of columns"
)

_IN_MEMORY = (
    "Use the in-memory path instead: load the rows into pandas and call mixeval.lmer(formula, df) "
    "(e.g. duckdb.sql('SELECT ... FROM ...').df() for a manageable subset)."
)

@dataclass(frozen=True)
class AggregateDesign:
    """The design of an aggregate fit: like :class:`mixeval.mixed.Design` but without rows.

    ``X`` and ``y`` are None and the grouping factors carry labels but no per-row codes, so a
    result built from it has ``fitted`` and ``residuals`` set to None; per-level random effects
    (``ranef``) are available.

    Examples
    --------
    >>> import pandas as pd, pyarrow as pa
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> design, _ = aggregate_stats("y ~ 1 + (1|g)", pa.Table.from_pandas(df))
    >>> design.nobs, design.fixed_names, design.X is None, design.groups[0].codes is None
    (6, ('(Intercept)',), True, True)
    >>> design.source
    'Arrow table (DuckDB)'
    """

    parsed: ParsedFormula
    fixed_names: tuple[str, ...]
    groups: tuple[GroupingFactor, ...]
    nobs: int
    row_key: int = field(repr=False)
    fixed_spec: object = field(default=None, repr=False, compare=False)
    confounded_pairs: tuple[tuple[str, str], ...] = ()
    source: str = ""
    X: None = field(default=None, repr=False)
    y: None = field(default=None, repr=False)


# --------------------------------------------------------------------------- validation
@dataclass(frozen=True)
class _Plan:
    """How the engine computes a model: its value columns (numeric fixed-effect variables, then the response),
    the columns defining the cells, the expressions it computes, and the fixed part written in those columns."""

    response: str
    numeric: list[str]
    cells: list[str]
    derived: dict[str, str]
    fixed: str
    raw_numeric: list[str]


def _sql(variable, quote, where: str) -> str:
    try:
        return variable.sql(quote, where=where)
    except FormulaError as exc:
        raise FormulaError(f"{exc} {_IN_MEMORY}") from None


def _plan(parsed: ParsedFormula, engine: Engine) -> _Plan:
    """Which variables are cells, value columns or expressions for the engine; anything else refused by name."""
    q = engine.quote
    where = "the aggregate (query-engine) path"
    available = engine.columns()
    numeric: list[str] = []
    cells: list[str] = []
    derived: dict[str, str] = {}
    raw: list[str] = []
    for v in parsed.fixed_variables:
        if v.kind == "column":
            _check_columns(engine, [v.name])
            kind = engine.column_kind(v.name)
            if kind == "other":
                raise InputError(
                    f"fixed-effect column {v.name!r} has a type the aggregate path cannot use (not numeric, string or "
                    f"boolean); cast it in the query engine. {_IN_MEMORY}"
                )
            (numeric if kind == "numeric" else cells).append(v.name)
        elif v.kind == "factor":
            _check_columns(engine, list(v.columns[:1]))
            cells.append(v.columns[0])
        else:
            _check_columns(engine, [c for c in v.columns if c != v.name])
            derived[v.name] = _sql(v, q, where)
            numeric.append(v.name)
            raw += [c for c in v.columns if c in available]
    both = sorted(set(cells) & set(numeric))
    if both:
        raise FormulaError(f"the column(s) {', '.join(map(repr, both))} enter {parsed.fixed!r} both as a factor and as a "
                           f"number; the aggregate path needs each column to be one or the other. {_IN_MEMORY}")
    response = parsed.response
    offsets = parsed.offset_variables
    if not parsed.response_is_column or offsets:
        if parsed.binomial_pair is not None:
            raise FormulaError(f"cbind(successes, failures) is glmer's binomial response; fit it with "
                               f"mixeval.glmer(..., family='binomial'). {_IN_MEMORY}")
        for v in (parsed.response_variable, *offsets):
            _check_columns(engine, [c for c in v.columns])
        sql = _sql(parsed.response_variable, q, where)
        for o in offsets:  # y - offset = X beta + Z b + e
            sql = f"({sql} - {_sql(o, q, where)})"
        response = parsed.response + "".join(f" - offset({o.text})" for o in offsets)
        derived[response] = sql
    return _Plan(response=response, numeric=list(dict.fromkeys(numeric)), cells=list(dict.fromkeys(cells)),
                 derived=derived, fixed=parsed.fixed_with_columns(set(derived)), raw_numeric=list(dict.fromkeys(raw)))


def _check_columns(engine: Engine, needed: list[str]) -> None:
    available = engine.columns()
    missing = [c for c in needed if c not in available]
    if missing:
        raise ColumnError(
            f"column(s) {', '.join(repr(m) for m in missing)} not found in the {engine.description}; "
            f"available columns: {', '.join(available)}."
        )


def _overview(engine: Engine, needed: list[str], response: str) -> pd.Series:
    """Rows, NULL counts of ``needed`` (``null0``, ...) and the response's sum and sum of squares.

    Kept on the engine like its aggregate tables (:mod:`._cache`): a later fit on the same engine whose
    columns were all counted (the null model of a likelihood-ratio test) needs no scan, and its response
    is centred at the same constant, so the kept tables answer its sums.
    """
    kept = engine.__dict__.setdefault("_mixeval_overview", {"nulls": {}, "response": {}})
    if not (set(needed) <= set(kept["nulls"]) and response in kept["response"]):
        row = engine.query(overview_sql(needed, response, engine.quote)).iloc[0]
        kept["n"] = int(row["n"])
        kept["nulls"].update({c: int(row[f"null{i}"] or 0) for i, c in enumerate(needed)})
        kept["response"][response] = (row["sy"], row["syy"])
    sy, syy = kept["response"][response]
    return pd.Series({"n": kept["n"], **{f"null{i}": kept["nulls"][c] for i, c in enumerate(needed)},
                      "sy": sy, "syy": syy})


def _check_nulls(engine: Engine, needed: list[str], overview: pd.Series) -> None:
    counts = {c: int(overview[f"null{i}"] or 0) for i, c in enumerate(needed)}
    bad = {c: n for c, n in counts.items() if n}
    if bad:
        where = " AND ".join(f"{engine.quote(c)} IS NOT NULL" for c in bad)
        listing = ", ".join(f"{c!r}: {n}" for c, n in bad.items())
        raise InputError(
            f"the {engine.description} has NULL (missing) values in the model's columns (NULL counts: {listing}; "
            f"{int(overview['n'])} rows in all); rows are never dropped silently. Filter them in the query engine "
            f"first, e.g. WHERE {where} (DuckDB: relation.filter('{where}'); Spark: "
            f"df.dropna(subset={list(bad)!r}))."
        )


# --------------------------------------------------------------------------- level codes
@dataclass
class _Term:
    term: RandomTerm
    keys: list[str]  # columns of the level-sums query (term columns then remaining cell columns)
    combos: np.ndarray = field(default=None, repr=False)  # sorted combined keys of the observed levels
    dims: tuple[int, ...] = ()
    labels: tuple[str, ...] = ()
    counts: np.ndarray = field(default=None, repr=False)
    zw: np.ndarray = field(default=None, repr=False)

    @property
    def n_levels(self) -> int:
        return len(self.labels)


def _column_codes(values: pd.Series, levels: pd.Index, column: str) -> np.ndarray:
    codes = levels.get_indexer(values)
    if np.any(codes < 0):  # cannot happen for consistent query results; guard against a changing source
        raise InputError(f"column {column!r} changed between queries (unknown level); is the source being written to?")
    return codes.astype(np.int64)


def _level_order(values: pd.Series) -> pd.Index:
    """A grouping column's levels in R's order, as the in-memory design orders them: text collated as R collates it
    (:func:`mixeval.formula.collated`), other values sorted."""
    if is_text(values):
        return pd.Index(collated(values.to_numpy()))
    _, uniques = pd.factorize(values, sort=True)
    return pd.Index(uniques)


def _combined(df: pd.DataFrame, cols: tuple[str, ...], levels: dict[str, pd.Index], dims: tuple[int, ...]) -> np.ndarray:
    codes = [_column_codes(df[c], levels[c], c) for c in cols]
    return np.ravel_multi_index(codes, dims).astype(np.int64) if len(cols) > 1 else codes[0]


# --------------------------------------------------------------------------- fixed effects
def _cell_transforms(fixed: str, cells: pd.DataFrame, numeric: list[str], formula: str):
    """Per cell ``T_c`` (p x (m+1)) with ``X_row = T_c [1, x]``, R's column names and the model spec."""
    m = len(numeric)
    n_cells = len(cells)
    n_proto = m + 2  # zero, unit vectors, one check row
    proto = cells.loc[cells.index.repeat(n_proto)].reset_index(drop=True)
    basis = np.zeros((n_proto, m))
    basis[1 : m + 1] = np.eye(m)
    check = 0.37 + 1.13 * np.arange(m)
    basis[m + 1] = check
    for j, col in enumerate(numeric):
        proto[col] = np.tile(basis[:, j], n_cells)
    X, spec = model_frame_spec(fixed, proto, what=f"the fixed part of {formula!r}")
    X = X.reshape(n_cells, n_proto, -1)
    a0 = X[:, 0, :]  # (cells, p)
    slopes = X[:, 1 : m + 1, :] - a0[:, None, :]  # (cells, m, p)
    predicted = a0 + np.einsum("j,cjp->cp", check, slopes)
    if not np.allclose(predicted, X[:, m + 1, :], rtol=1e-9, atol=1e-9):
        raise FormulaError(
            f"the fixed part {fixed!r} is not linear in its numeric columns ({', '.join(numeric)}), e.g. a "
            f"product of two numeric columns; the aggregate path needs each model-matrix column linear in the "
            f"numeric columns within each combination of the categorical ones. {_IN_MEMORY}"
        )
    T = np.concatenate([a0[:, :, None], np.transpose(slopes, (0, 2, 1))], axis=2)  # (cells, p, m+1)
    return T, spec.column_names, spec


def _formula_spec(parsed: ParsedFormula, plan: _Plan, engine: Engine, cells: pd.DataFrame, spec):
    """The model spec of the formula as written (for reference grids and new data): the prototype spec when the
    engine computed no expression, else the formula evaluated on the cells with one row's raw columns."""
    if not any(v.kind == "expression" for v in parsed.fixed_variables) and not parsed.offset_variables:
        return spec
    plain = [v.name for v in parsed.fixed_variables if v.kind == "column" and v.name in plan.numeric]
    cols = list(dict.fromkeys([*plain, *plan.raw_numeric, *(c for o in parsed.offset_variables for c in o.columns)]))
    row = engine.query(f"SELECT {', '.join(engine.quote(c) for c in cols)} FROM {{src}} LIMIT 1") if cols else None
    frame = cells.copy()
    for c in cols:
        frame[c] = row[c].iloc[0]
    _, original = model_frame_spec(parsed.fixed_node, frame, what=f"the fixed part of {parsed.formula!r}")
    return original


# --------------------------------------------------------------------------- the statistics
def aggregate_stats(formula: str | ParsedFormula, source: object) -> tuple[AggregateDesign, SufficientStats]:
    """Design and sufficient statistics of a random-intercept model, computed by the query engine.

    Parameters
    ----------
    formula : str or ParsedFormula
        lme4-style formula with random intercepts only (see :data:`SUPPORTED_MODELS`).
    source : Parquet path/glob, pyarrow.Table, duckdb relation, Spark DataFrame or pandas DataFrame
        Where the rows are; only aggregates come back.

    Returns
    -------
    (AggregateDesign, SufficientStats)
        The statistics equal :func:`mixeval.mixed.compute_stats` of the in-memory design up to
        floating-point summation order, except that when the fixed part holds the constant (an
        intercept) they are those of the response centred at its mean, with ``coef_shift`` to add back
        to the coefficients (same theta, sigma and likelihood; see :class:`~mixeval.mixed.SufficientStats`).

    Examples
    --------
    The statistics of an Arrow table, summed by DuckDB; fitted, they give the in-memory fit (balanced one-way
    data: ML group variance 2.889, residual variance 1):

    >>> import pandas as pd, pyarrow as pa
    >>> from mixeval.mixed import fit_from_stats
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> design, stats = aggregate_stats("y ~ 1 + (1|g)", pa.Table.from_pandas(df))
    >>> design.nobs, design.groups[0].labels, stats.counts0.tolist()
    (6, ('a', 'b', 'c'), [2.0, 2.0, 2.0])
    >>> stats.coef_shift  # the response was summed centred at its mean 11/3
    array([3.66666667])
    >>> fit_from_stats(design, stats, reml=False).varcorr.variance.round(4).tolist()
    [2.8889, 1.0]
    """
    parsed = formula if isinstance(formula, ParsedFormula) else parse_formula(formula)
    if parsed.has_slopes:
        slopes = ", ".join(t.label for t in parsed.random if not t.is_intercept)
        raise FormulaError(
            f"random slopes {slopes} are not supported by the aggregate (DuckDB/Spark) path yet: it computes "
            "per-level sums for random intercepts only. Load the rows into a pandas DataFrame and use "
            "mixeval.lmer (the in-memory path fits random slopes), or fit the random intercepts alone."
        )
    base = as_engine(source)
    q = base.quote
    _check_columns(base, [*parsed.response_columns, *parsed.columns])
    plan = _plan(parsed, base)
    engine = with_columns(base, plan.derived)
    response, cell_cols, numeric = plan.response, plan.cells, plan.numeric
    if engine.column_kind(response) != "numeric":
        raise InputError(
            f"the response column {response!r} is not numeric in the {engine.description}; "
            f"cast it in the query engine (e.g. CAST({q(response)} AS DOUBLE)) or pick the score column."
        )
    needed = list(dict.fromkeys([response, *parsed.columns, *cell_cols, *numeric]))
    values = [*numeric, response]

    overview = _overview(engine, needed, response)
    nobs = int(overview["n"])
    if nobs == 0:
        raise InputError(f"the {engine.description} has no rows.")
    _check_nulls(engine, needed, overview)
    sy, syy = float(overview["sy"]), float(overview["syy"])
    if not (np.isfinite(sy) and np.isfinite(syy)):
        raise InputError(
            f"the response {response!r} contains NaN or infinite values; filter them in the query "
            f"engine first (DuckDB: WHERE isfinite(...) on its columns)."
        )

    # ---- centre the response by its mean (sums of y = 1e12 + noise would lose the noise)
    centres = {response: sy / nobs} if sy != 0.0 else {}

    # ---- moments per cell
    mom = fetch(engine, cell_cols, values, moments=True, centres=centres)
    if cell_cols:
        mom = mom.sort_values(cell_cols, kind="stable").reset_index(drop=True)
        cells = mom[cell_cols].copy()
    else:
        cells = pd.DataFrame(index=range(1))
    nv = len(values)
    V = np.zeros((len(mom), nv + 1, nv + 1))
    V[:, 0, 0] = mom["n"].to_numpy(float)
    for j in range(nv):
        V[:, 0, j + 1] = V[:, j + 1, 0] = mom[sum_name(values[j])].to_numpy(float)
        for k in range(j, nv):
            V[:, j + 1, k + 1] = V[:, k + 1, j + 1] = mom[moment_name(values[j], values[k])].to_numpy(float)
    bad = [v for j, v in enumerate(values) if not np.all(np.isfinite(V[:, j + 1, [0, j + 1]]))]
    if bad:
        raise InputError(f"{', '.join(map(repr, bad))} is not finite (NaN or infinite) on some rows of the "
                         f"{engine.description}; filter those rows in the query engine (e.g. x > 0 for log(x)).")
    T, names, spec = _cell_transforms(plan.fixed, cells, numeric, parsed.formula)
    spec = _formula_spec(parsed, plan, base, cells, spec)
    n_cells, p = T.shape[0], T.shape[1]
    B = np.zeros((n_cells, p + 1, nv + 1))
    B[:, :p, : nv] = T
    B[:, p, nv] = 1.0
    ww = np.einsum("cia,cab,cjb->ij", B, V, B)
    kept = kept_columns_of_gram(ww[:p, :p])
    if len(kept) < p:  # lme4's default: drop the aliased columns (the rule of the in-memory path) and fit the rest
        spec = spec.dropping(kept, ww[:p, :p])
        warn_dropped(spec.dropped_names)
        T, names, p = T[:, kept], spec.column_names, len(kept)
        B = np.zeros((n_cells, p + 1, nv + 1))
        B[:, :p, : nv] = T
        B[:, p, nv] = 1.0
        ww = np.einsum("cia,cab,cjb->ij", B, V, B)
    cell_levels = {c: pd.Index(pd.unique(cells[c])).sort_values() for c in cell_cols}
    cell_dims = tuple(len(cell_levels[c]) for c in cell_cols)
    cell_lookup = None
    if cell_cols:
        keys = _combined(cells, tuple(cell_cols), cell_levels, cell_dims)
        cell_lookup = pd.Index(keys)

    # ---- level sums per grouping term (and cell)
    col_levels: dict[str, pd.Index] = {}
    terms: list[_Term] = []
    for term in parsed.random:
        keys = list(dict.fromkeys([*term.factors, *cell_cols]))
        t = _Term(term=term, keys=keys)
        res = fetch(engine, keys, values, centres=centres)
        for c in term.factors:
            if c not in col_levels:
                col_levels[c] = _level_order(res[c])
        t.dims = tuple(len(col_levels[c]) for c in term.factors)
        combined = _combined(res, term.factors, col_levels, t.dims)
        t.combos = np.unique(combined)
        codes = np.searchsorted(t.combos, combined)
        labs = [np.asarray(col_levels[c].astype(str), dtype=object) for c in term.factors]
        if len(term.factors) == 1:
            t.labels = tuple(labs[0][t.combos])
        else:
            parts = np.unravel_index(t.combos, t.dims)
            t.labels = tuple(":".join(str(labs[i][parts[i][r]]) for i in range(len(labs))) for r in range(len(t.combos)))
        _check_levels(term, t.n_levels, nobs)
        vbar = np.column_stack([res["n"].to_numpy(float)] + [res[sum_name(v)].to_numpy(float) for v in values])
        if cell_cols:
            cell_idx = cell_lookup.get_indexer(_combined(res, tuple(cell_cols), cell_levels, cell_dims))
            wsum = np.einsum("ra,ria->ri", vbar, B[cell_idx])
        else:
            wsum = vbar @ B[0].T
        t.counts = np.bincount(codes, weights=vbar[:, 0], minlength=t.n_levels)
        t.zw = np.column_stack([np.bincount(codes, weights=wsum[:, j], minlength=t.n_levels) for j in range(p + 1)])
        terms.append(t)
    terms.sort(key=lambda t: -t.n_levels)  # stable: ties keep formula order, as lme4
    ww, coef_shift = _uncentre(ww, terms, B, V, p, nobs, centres.get(response, 0.0))

    # ---- counts per pair of levels
    def pair_counts(a: _Term, b: _Term, sparse: bool = False):
        keys = list(dict.fromkeys([*a.term.factors, *b.term.factors]))
        res = fetch(engine, keys, [])
        ca = np.searchsorted(a.combos, _combined(res, a.term.factors, col_levels, a.dims))
        cb = np.searchsorted(b.combos, _combined(res, b.term.factors, col_levels, b.dims))
        n = res["n"].to_numpy(float)
        if sparse:  # Z_0'Z_r: the first factor may have millions of levels
            return sp.csr_matrix((n, (ca, cb)), shape=(a.n_levels, b.n_levels))
        return np.bincount(ca * b.n_levels + cb, weights=n, minlength=a.n_levels * b.n_levels).reshape(a.n_levels, b.n_levels)

    confounded: list[tuple[str, str]] = []
    if terms:
        t0, rest = terms[0], terms[1:]
        pairs0 = [pair_counts(t0, t, sparse=True) for t in rest]
        blocks = [[None] * len(rest) for _ in rest]
        for i, a in enumerate(rest):
            blocks[i][i] = np.diag(a.counts)
            for j in range(i + 1, len(rest)):
                blocks[i][j] = pair_counts(a, rest[j])
                blocks[j][i] = blocks[i][j].T
        for (a, b, tab) in [(t0, t, c) for t, c in zip(rest, pairs0)] + [
            (rest[i], rest[j], blocks[i][j]) for i in range(len(rest)) for j in range(i + 1, len(rest))
        ]:
            if a.n_levels == b.n_levels and (tab.nnz if sp.issparse(tab) else np.count_nonzero(tab)) == a.n_levels:
                confounded.append((a.term.name, b.term.name))
        stats = SufficientStats(
            nobs=nobs,
            p=p,
            n_levels=tuple(t.n_levels for t in terms),
            counts0=t0.counts,
            cross0r=sp.hstack(pairs0, format="csr") if rest else sp.csr_matrix((t0.n_levels, 0)),
            crr=np.block(blocks) if rest else np.zeros((0, 0)),
            z0w=t0.zw,
            zrw=np.vstack([t.zw for t in rest]) if rest else np.zeros((0, p + 1)),
            ww=ww,
            coef_shift=coef_shift,
        )
    else:
        empty = np.zeros((0, p + 1))
        stats = SufficientStats(nobs, p, (), np.zeros(0), np.zeros((0, 0)), np.zeros((0, 0)), empty, empty, ww,
                                coef_shift=coef_shift)
    for a, b in confounded:
        warnings.warn(
            f"grouping factors {a!r} and {b!r} partition the data identically (each level of one occurs with "
            "exactly one level of the other): only the sum of their variances is identified, and how it is "
            f"split between them is arbitrary. Keep one of (1|{a}) and (1|{b}), or report their sum.",
            IdentifiabilityWarning,
            stacklevel=caller_stacklevel(),
        )
    groups = tuple(GroupingFactor(name=t.term.name, codes=None, labels=t.labels) for t in terms)
    row_key = hash(("aggregate", nobs, response, float(f"{sy:.10g}"), float(f"{syy:.10g}")))
    design = AggregateDesign(
        parsed=parsed,
        fixed_names=names,
        groups=groups,
        nobs=nobs,
        row_key=row_key,
        fixed_spec=spec,
        confounded_pairs=tuple(confounded),
        source=engine.description,
    )
    return design, stats


def _uncentre(ww: np.ndarray, terms: list, B: np.ndarray, V: np.ndarray, p: int, nobs: int, centre: float):
    """Keep the statistics of the centred response when the model is location-equivariant, else undo it.

    With ``y_c = y - c`` and a fixed part whose column space holds the constant (an intercept, or a
    factor coded by all its levels), ``X delta = c 1`` has a solution and the fit of ``y_c`` is the fit
    of ``y`` with ``beta = beta_c + delta`` (same theta, sigma, likelihood): the statistics stay centred
    and ``delta`` goes with them. Otherwise the sums of ``y`` are restored from those of ``y_c``
    (``Z'y = Z'y_c + c Z'1``, ``X'y = X'y_c + c X'1``, ``y'y = y_c'y_c + 2 c 1'y_c + c^2 n``).
    Returns ``W'W`` and ``delta`` (None when not centred).
    """
    if not centre:
        return ww, None
    w1 = np.einsum("cia,ca->i", B, V[:, :, 0])  # W'1 = [X'1, 1'y_c]
    x1 = w1[:p]
    if p:
        delta = np.linalg.lstsq(ww[:p, :p], x1, rcond=None)[0]
        if nobs - x1 @ delta <= 1e-9 * nobs:  # 1 lies in the column space of X
            # the usual solutions (an intercept column, dummies of every level) are integers; take them
            # exactly, as c * rounding error would show in the coefficients when c is large
            whole = np.round(delta)
            delta = np.where(np.abs(delta - whole) < 1e-9, whole, delta)
            return ww, centre * delta
    ww = ww.copy()
    ww[:p, p] += centre * x1
    ww[p, :p] = ww[:p, p]
    ww[p, p] += 2.0 * centre * w1[p] + centre * centre * nobs
    for t in terms:
        t.zw[:, p] += centre * t.counts
    return ww, None


def _check_levels(term: RandomTerm, n_levels: int, nobs: int) -> None:
    check_group_levels(term.name, n_levels, nobs)


def lmer_aggregate(formula: str, source: Any, *, REML: bool = True) -> LmerResult:
    """Fit a random-intercept linear mixed model from aggregates computed where the data live.

    Parameters
    ----------
    formula : str
        lme4-style formula, e.g. ``"score ~ system + (1|item) + (1|seed) + (1|judge)"``. Supported:
        random intercepts for crossed and nested factors (``(1|g)``, ``(1|g:h)``, ``(1|g/h)``); fixed
        effects in R's formula language built from categorical columns, factors of a column, numeric columns
        and the numeric expressions the engine computes (``I(x^2)``, ``log(x)``), plus ``offset()`` terms
        (see :data:`SUPPORTED_MODELS`), provided each model-matrix column is linear in the numeric values.
        Anything else (``scale()``, ``poly()``, ``ns()``, ``bs()``, which need every row's values for their
        parameters) raises :class:`~mixeval.errors.FormulaError` naming it and the in-memory path.
    source : str, Path, pyarrow.Table, duckdb.DuckDBPyRelation, pyspark.sql.DataFrame or pandas.DataFrame
        A Parquet file, directory or glob, an Arrow table, a DuckDB relation (queried by DuckDB), or a
        Spark DataFrame (queried by Spark SQL), or an engine from :func:`mixeval.scale.as_engine`: an
        engine keeps the tables it fetched, so further fits on it (e.g. the null model of a
        likelihood-ratio test) re-use them instead of scanning again; use it only while the source does
        not change. The rows never leave the engine; only ``O(levels + level pairs)`` aggregates come back.
    REML : bool, default True
        Restricted maximum likelihood (lme4's default) or maximum likelihood.

    Returns
    -------
    LmerResult
        The same estimates as :func:`mixeval.lmer` on the same rows (up to summation order, ~1e-12
        relative). ``fitted`` and ``residuals`` are None (they would be per row); ``ranef`` (per level),
        ``varcorr``, ``fixef``, ``coefficients``, ``loglik`` and :func:`mixeval.compare` work as usual.

    Raises
    ------
    ColumnError, InputError, FormulaError
        Missing columns (the available ones are listed), NULLs (counted, with the filter to apply), a
        non-numeric response, an unsupported model. A rank-deficient fixed part is fitted as lme4 and the in-memory
        path fit it: the aliased columns are dropped, named by a :class:`~mixeval.errors.RankDeficientWarning`.

    Notes
    -----
    The queries (one scan each): an overview (row and NULL counts), the moments
    ``sum v v'`` of ``v = [1, x, y]`` per cell of the categorical fixed columns, per grouping term
    the counts and sums ``sum v`` per (level, cell), and the counts per pair of levels of every two
    terms. From these ``Z'Z``, ``Z'W`` and ``W'W`` with ``W = [X y]`` follow exactly (see the module
    docstring), and the profiled deviance (Bates et al. 2015) only needs them.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=30, systems=("A", "B"), n_raters=2)
    >>> fit = lmer_aggregate("score ~ system + (1|item)", pa.Table.from_pandas(df))
    >>> list(fit.fixef.index), fit.fitted is None
    (['(Intercept)', 'systemB'], True)
    """
    design, stats = aggregate_stats(formula, source)
    return fit_from_stats(design, stats, reml=bool(REML), data=source)
