"""Stage 1 (lme4's ``lFormula``): formula + data -> validated design.

The design holds the response, the fixed-effects model matrix (from formulaic)
and, for each random intercept term, integer group codes with their labels.
Terms are ordered by decreasing number of levels, as lme4 orders them.
"""

from __future__ import annotations

from typing import Any

import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import require_columns, require_dataframe, require_no_missing, require_numeric_column
from ..errors import (ColumnError, DroppedRowsWarning, FormulaError, IdentifiabilityWarning, InputError,
                      caller_stacklevel)
from ..formula import ParsedFormula, RandomTerm, parse_formula

__all__ = ["GroupingFactor", "Design", "build_design", "complete_rows", "r_style_name", "confounded_pairs", "check_group_levels",
           "weights_array", "new_model_matrix", "new_level_codes"]


@dataclass(frozen=True)
class GroupingFactor:
    """One random-effects term: integer codes (0..n_levels-1) of its groups, their labels, and the
    model matrix of its coefficients.

    Attributes
    ----------
    name : str
        The group's name as lme4 prints it (``"item"``, ``"rater:site"``).
    codes : ndarray of int, shape (n,)
        Level of each row (None for designs built from aggregates, :mod:`mixeval.scale`).
    labels : tuple of str
        Level labels.
    coef_names : tuple of str
        The term's coefficients as lme4 names them: ``("(Intercept)",)`` for ``(1|g)``,
        ``("(Intercept)", "x")`` for ``(1 + x|g)``, ``("systemA", "systemB")`` for ``(0 + system|g)``.
    X : ndarray, shape (n, p_k), or None
        The term's model matrix; None for a random intercept (a column of ones).

    Examples
    --------
    >>> import pandas as pd
    >>> d = build_design("y ~ 1 + (1|g)", pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")}))
    >>> g = d.groups[0]
    >>> g.name, g.codes.tolist(), g.labels, g.coef_names, g.n_levels
    ('g', [0, 0, 1, 1, 2, 2], ('a', 'b', 'c'), ('(Intercept)',), 3)
    """

    name: str
    codes: np.ndarray = field(repr=False)
    labels: tuple[str, ...] = field(repr=False)
    coef_names: tuple[str, ...] = ("(Intercept)",)
    X: np.ndarray | None = field(default=None, repr=False, compare=False)
    term: RandomTerm | None = field(default=None, repr=False, compare=False)
    spec: object = field(default=None, repr=False, compare=False)

    @property
    def n_levels(self) -> int:
        return len(self.labels)

    @property
    def is_intercept(self) -> bool:
        """A scalar random intercept ``(1|g)``."""
        return self.coef_names == ("(Intercept)",)

    @property
    def label(self) -> str:
        """The term as lme4 prints it in a formula (``"(1 | item)"``, ``"(1 + x | subject)"``)."""
        if self.is_intercept:
            return f"(1 | {self.name})"
        names = ["1" if c == "(Intercept)" else c for c in self.coef_names]
        if "1" not in names:
            names.insert(0, "0")
        return f"({' + '.join(names)} | {self.name})"


@dataclass(frozen=True)
class Design:
    """Validated inputs of a fit: response, fixed-effects matrix and grouping factors.

    Examples
    --------
    >>> import pandas as pd
    >>> d = build_design("y ~ 1 + (1|g)", pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")}))
    >>> d.nobs, d.fixed_names, d.X.ravel().tolist(), [g.name for g in d.groups]
    (6, ('(Intercept)',), [1.0, 1.0, 1.0, 1.0, 1.0, 1.0], ['g'])
    """

    parsed: ParsedFormula
    y: np.ndarray = field(repr=False)
    X: np.ndarray = field(repr=False)
    fixed_names: tuple[str, ...]
    groups: tuple[GroupingFactor, ...]
    row_key: int = field(repr=False)
    fixed_spec: object = field(default=None, repr=False, compare=False)
    data: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    @property
    def nobs(self) -> int:
        return int(self.y.shape[0])

    @property
    def has_slopes(self) -> bool:
        """Some random term has coefficients other than a single intercept (random slopes)."""
        return any(not g.is_intercept for g in self.groups)


def r_style_name(name: str) -> str:
    """Translate a formulaic column name to R's (``system[T.B]`` -> ``systemB``, ``Intercept`` -> ``(Intercept)``)."""
    if name == "Intercept":
        return "(Intercept)"
    return re.sub(r"C\(([^)]*?)\)\[T\.(.*?)\]|(\b[\w.]+)\[T\.(.*?)\]", _sub_level, name)


def _sub_level(m: re.Match) -> str:
    if m.group(1) is not None:
        return f"C({m.group(1)}){m.group(2)}"
    return f"{m.group(3)}{m.group(4)}"


def _fixed_matrix(parsed: ParsedFormula, data: pd.DataFrame) -> tuple[np.ndarray, tuple[str, ...], object]:
    """Fixed-effects model matrix through formulaic, with R-style column names."""
    from formulaic import model_matrix

    try:
        # numpy output: the same matrix and spec without a DataFrame's construction
        mm = model_matrix(parsed.fixed, data, na_action="raise", output="numpy")
    except Exception as exc:  # formulaic raises several types; re-raise as a formula error with context
        raise FormulaError(f"cannot build the fixed-effects part {parsed.fixed!r} of {parsed.formula!r}: {exc}") from exc
    X = np.asarray(mm, dtype=float)
    names = tuple(r_style_name(str(c)) for c in mm.model_spec.column_names)
    bad = [nm for nm, ok in zip(names, np.isfinite(X).all(axis=0)) if not ok]
    if bad:
        raise InputError(f"the fixed-effects column(s) {', '.join(bad)} of {parsed.fixed!r} have infinite values; "
                         "remove or recode those rows (e.g. data[np.isfinite(data['x'])]).")
    if X.shape[1] > 0:
        aliased = _aliased_columns(X, names)
        if aliased:
            raise InputError(
                f"the fixed-effects model matrix of {parsed.fixed!r} is rank deficient ({len(aliased)} of "
                f"{X.shape[1]} columns are linear combinations of the others); aliased column(s): "
                f"{', '.join(aliased)}. Remove the redundant terms (e.g. a factor that is constant within "
                "another, or an empty factor combination)."
            )
    return X, names, mm.model_spec


def _aliased_columns(X: np.ndarray, names: tuple[str, ...], tol: float = 1e-10) -> list[str]:
    """Columns that are (numerically) linear combinations of earlier ones.

    With an intercept column, the other columns are centred first (the rank is unchanged, and a covariate
    such as a timestamp is not mistaken for a multiple of the intercept). Works on the Gram matrix of the
    unit-norm columns (one pass over the rows, then ``p x p``): a
    pivot-free Cholesky-like sweep marks column ``j`` aliased when its squared residual norm after
    projecting on the kept earlier columns is below ``tol``.
    """
    if X.shape[1] == 1:  # one column is aliased only when it is zero
        return [] if np.any(X[:, 0]) else [names[0]]
    ones = [j for j, nm in enumerate(names) if nm == "(Intercept)" and np.all(X[:, j] == 1.0)]
    if ones:  # centring the other columns keeps the rank and removes a large offset's near-collinearity
        keep = X[:, ones[0]].copy()
        X = X - X.mean(axis=0)
        X[:, ones[0]] = keep
    norms = np.sqrt(np.einsum("ij,ij->j", X, X))
    zero = norms == 0
    scaled_gram = (X.T @ X) / np.outer(np.where(zero, 1, norms), np.where(zero, 1, norms))
    kept: list[int] = []
    aliased: list[str] = []
    for j in range(X.shape[1]):
        if zero[j]:
            aliased.append(names[j])
            continue
        if kept:
            g = scaled_gram[np.ix_(kept, kept)]
            b = scaled_gram[kept, j]
            resid = 1.0 - b @ np.linalg.solve(g, b)
        else:
            resid = 1.0
        if resid < tol:
            aliased.append(names[j])
        else:
            kept.append(j)
    return aliased


def require_unique_columns(data: pd.DataFrame, columns: list[str]) -> None:
    """Each column the formula uses names exactly one column of ``data``."""
    dup = sorted({c for c in columns if int((data.columns == c).sum()) > 1})
    if dup:
        raise ColumnError(f"the data have several columns named {', '.join(repr(c) for c in dup)}; give every "
                          "column a unique name (e.g. data.loc[:, ~data.columns.duplicated()]).")


def check_group_levels(name: str, n_levels: int, nobs: int, allow_n: bool = False) -> None:
    """A random effect needs at least 2 levels and fewer levels than observations (GLMMs, ``allow_n``: at most as many)."""
    if n_levels < 2:
        raise InputError(
            f"grouping factor {name!r} has only {n_levels} level; a random effect needs at least 2 "
            f"levels. Drop (1|{name}) from the formula."
        )
    if n_levels > nobs or (n_levels == nobs and not allow_n):
        raise InputError(
            f"grouping factor {name!r} has {n_levels} levels for {nobs} observations; its variance "
            f"cannot be separated from the residual. Drop (1|{name}) or check that the data are in long "
            "format with replicated measurements per group."
        )


def _term_coef_name(name: str) -> str:
    """A random term's coefficient name as R prints it (``s[a]`` of ``0 + s`` -> ``sa``, else :func:`r_style_name`)."""
    return r_style_name(re.sub(r"(\b[\w.]+)\[(?!T\.)(.*?)\]", r"\1\2", name))


def _term_matrix(term: RandomTerm, data: pd.DataFrame) -> tuple[np.ndarray | None, tuple[str, ...], object]:
    """Model matrix, coefficient names and formulaic model spec of a random term's left-hand side (None for ``1``)."""
    if term.is_intercept:
        return None, ("(Intercept)",), None
    from formulaic import model_matrix

    try:
        mm = model_matrix(term.lhs, data, na_action="raise")
    except Exception as exc:  # formulaic raises several types; re-raise as a formula error with context
        raise FormulaError(f"cannot build the random term {term.label}: {exc}") from exc
    X = np.asarray(mm, dtype=float)
    names = tuple(_term_coef_name(str(c)) for c in mm.columns)
    if X.shape[1] == 0:
        raise FormulaError(f"random term {term.label} has no coefficients; write e.g. (1 + x | {term.name}).")
    if not np.all(np.isfinite(X)):
        raise InputError(f"random term {term.label}: its model matrix has non-finite values (check the columns "
                         f"{', '.join(names)} for inf).")
    aliased = _aliased_columns(X, names)
    if aliased:
        raise InputError(f"random term {term.label}: its model matrix is rank deficient; aliased column(s): "
                         f"{', '.join(aliased)}. Remove the redundant coefficients.")
    return X, names, mm.model_spec


def _grouping_factor(term: RandomTerm, data: pd.DataFrame, nobs: int, allow_n: bool = False) -> GroupingFactor:
    """Codes of the groups of one random term (an interaction of one or more columns) and its model matrix."""
    codes = np.zeros(nobs, dtype=np.int64)
    labels: np.ndarray | None = None
    for col in term.factors:
        c, uniques = pd.factorize(data[col], sort=True)
        lab = np.asarray(uniques.astype(str), dtype=object)
        if labels is None:
            codes, labels = c.astype(np.int64), lab
        else:
            combined = codes * len(lab) + c
            codes, first = pd.factorize(combined, sort=True)
            codes = codes.astype(np.int64)
            # labels of the combinations, as lme4 prints them ("a:b")
            labels = np.array([f"{labels[v // len(lab)]}:{lab[v % len(lab)]}" for v in first], dtype=object)
    check_group_levels(term.name, len(labels), nobs, allow_n)
    X, coef_names, spec = _term_matrix(term, data)
    return GroupingFactor(name=term.name, codes=codes, labels=tuple(labels), coef_names=coef_names, X=X, term=term,
                          spec=spec)


def new_model_matrix(spec, newdata: pd.DataFrame, *, what: str) -> np.ndarray:
    """The model matrix of new rows under a fitted model's formulaic ``spec`` (the fit's factor levels and coding).

    A missing value or a factor level the fit never saw is an :class:`~mixeval.errors.InputError` naming it (formulaic
    would drop the row, or code the level as all zeros with a warning).

    Examples
    --------
    >>> from formulaic import model_matrix
    >>> spec = model_matrix("1 + s", pd.DataFrame({"s": list("ab")})).model_spec
    >>> new_model_matrix(spec, pd.DataFrame({"s": ["b"]}), what="the fixed effects").tolist()
    [[1.0, 1.0]]
    """
    from formulaic import model_matrix

    data = require_dataframe(newdata, "newdata")
    needed = sorted(str(v) for v in spec.required_variables if str(v) not in _FORMULAIC_CONTEXT)
    missing = [c for c in needed if c not in data.columns]
    if missing:
        raise ColumnError(f"newdata lacks the column(s) {', '.join(map(repr, missing))} of {what}; add them.")
    for col in needed:
        if data[col].isna().any():
            raise InputError(f"newdata[{col!r}] has {int(data[col].isna().sum())} missing value(s); {what} cannot be "
                             "predicted for those rows. Drop or fill them first.")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        X = np.asarray(model_matrix(spec, data, na_action="raise"), dtype=float)
    unseen = [str(w.message) for w in caught if "outside of the nominated levels" in str(w.message)]
    if unseen:
        raise InputError(f"newdata has factor levels the fit never saw, so {what} has no coefficient for them: "
                         f"{unseen[0].split(':', 1)[-1].split('.')[0].strip()}. Predict only levels present in the "
                         "fitted data.")
    return X


def new_level_codes(group: GroupingFactor, newdata: pd.DataFrame, *, allow_new_levels: bool) -> np.ndarray:
    """Codes of new rows' levels of a fitted grouping factor; ``-1`` for a level the fit never saw (allowed only with
    ``allow_new_levels``, lme4's ``allow.new.levels``).

    Examples
    --------
    >>> d = build_design("y ~ 1 + (1|g)", pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")}))
    >>> new_level_codes(d.groups[0], pd.DataFrame({"g": ["c", "a", "z"]}), allow_new_levels=True).tolist()
    [2, 0, -1]
    """
    term = group.term
    if term is None:
        raise InputError(f"the random term of {group.name!r} was not built from rows; predict new rows with re=False.")
    data = require_dataframe(newdata, "newdata")
    missing = [c for c in term.factors if c not in data.columns]
    if missing:
        raise ColumnError(f"newdata lacks the column(s) {', '.join(map(repr, missing))} of the random term "
                          f"{term.label}; add them, or pass re=False for population-level predictions (lme4's "
                          "re.form = NA).")
    keys = data[term.factors[0]].astype(str).to_numpy(dtype=object)
    for col in term.factors[1:]:
        keys = keys + ":" + data[col].astype(str).to_numpy(dtype=object)
    codes = pd.Index(group.labels).get_indexer(keys)
    new = codes < 0
    if new.any() and not allow_new_levels:
        unseen = list(dict.fromkeys(keys[new]))
        examples = ", ".join(repr(k) for k in unseen[:5]) + (", ..." if len(unseen) > 5 else "")
        raise InputError(f"newdata has {len(unseen)} level(s) of {term.name!r} not in the fit ({examples}); "
                         "pass allow_new_levels=True to predict them at the population level (lme4's "
                         "allow.new.levels = TRUE), or re=False.")
    return codes


def confounded_pairs(groups: list[GroupingFactor] | tuple[GroupingFactor, ...]) -> list[tuple[str, str]]:
    """Pairs of grouping factors that partition the rows identically (only their summed variance is identified)."""
    pairs = []
    groups = [g for g in groups if g.is_intercept]  # a slope term on the same factor is not confounded
    for i, a in enumerate(groups):
        for b in groups[i + 1 :]:
            if a.n_levels != b.n_levels:
                continue
            # same partition <=> every level of a meets exactly one level of b (then, with as many levels,
            # the reverse holds too): map each level of a to a level of b it meets, and check every row
            meets = np.empty(a.n_levels, dtype=b.codes.dtype)
            meets[a.codes] = b.codes
            if np.array_equal(meets[a.codes], b.codes):
                pairs.append((a.name, b.name))
    return pairs


def warn_confounded(groups: list[GroupingFactor]) -> None:
    """Warn (IdentifiabilityWarning) about grouping factors with identical partitions."""
    for a, b in confounded_pairs(groups):
        warnings.warn(
            f"grouping factors {a!r} and {b!r} partition the data identically (each level of one occurs with "
            "exactly one level of the other): only the sum of their variances is identified, and how it is "
            f"split between them is arbitrary. Keep one of (1|{a}) and (1|{b}), or report their sum.",
            IdentifiabilityWarning,
            stacklevel=caller_stacklevel(),
        )


def unidentified_groups(groups, X: np.ndarray, tol: float = 1e-8) -> list[str]:
    """Random intercepts whose level indicators all lie in the span of the fixed effects.

    Such a variance is not identified: the fixed effects absorb every group mean (the grouping factor
    is itself a fixed effect, ``score ~ system + (1|system)``, or a fixed factor is constant within its
    levels, e.g. ``(1|site)`` with every site's ``rater`` levels fixed). For indicator ``z_l`` the squared
    residual after projection on ``X`` is ``n_l - (X'z_l)' (X'X)^{-1} (X'z_l)``, computed from level sums.
    """
    out = []
    p = X.shape[1]
    if p == 0 or (p == 1 and X[0, 0] != 0.0 and np.all(X[:, 0] == X[0, 0])):
        return out  # an intercept alone spans no level indicator of a factor with two or more levels
    gram = X.T @ X
    try:
        inv = np.linalg.pinv(gram)
    except np.linalg.LinAlgError:
        return out
    for g in groups:
        if not g.is_intercept or g.codes is None:
            continue
        counts = np.bincount(g.codes, minlength=g.n_levels).astype(float)
        sums = np.column_stack([np.bincount(g.codes, weights=X[:, j], minlength=g.n_levels) for j in range(p)])
        resid = counts - np.einsum("lj,jk,lk->l", sums, inv, sums)
        if np.all(resid <= tol * counts):
            out.append(g.name)
    return out


def warn_unidentified(groups, X: np.ndarray) -> None:
    """Warn (IdentifiabilityWarning) about random intercepts the fixed effects make unidentifiable."""
    for name in unidentified_groups(groups, X):
        warnings.warn(
            f"the variance of (1|{name}) is not identified: the fixed effects already contain every level mean of "
            f"{name!r} (it is also a fixed effect, or a fixed factor is constant within its levels). Its estimate "
            f"is arbitrary and a likelihood-ratio test of it is meaningless; drop (1|{name}) or the fixed effect.",
            IdentifiabilityWarning,
            stacklevel=caller_stacklevel(),
        )


def drop_incomplete_rows(data: pd.DataFrame, columns: list[str], response: str) -> pd.DataFrame:
    """Rows of ``data`` without missing values in ``columns`` and with a finite response; warns how many went."""
    keep = data[columns].notna().all(axis=1)
    if pd.api.types.is_numeric_dtype(data[response]):
        keep &= np.isfinite(data[response].to_numpy(dtype=float, na_value=np.nan))
    dropped = int((~keep).sum())
    if dropped == len(data):
        raise InputError(f"every one of the {len(data)} rows has a missing or non-finite value in {columns}.")
    if dropped:
        per_column = {c: int(data[c].isna().sum()) for c in columns if data[c].isna().any()}
        warnings.warn(
            f"drop_missing=True: dropped {dropped} of {len(data)} rows with missing or non-finite values "
            f"(missing per column: {per_column or 'none; non-finite response values'}).",
            DroppedRowsWarning,
            stacklevel=caller_stacklevel(),
        )
    return data[keep]


def complete_rows(formula: str | ParsedFormula, data: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``data`` a fit of ``formula`` can use (see :func:`drop_incomplete_rows`)."""
    parsed = formula if isinstance(formula, ParsedFormula) else parse_formula(formula)
    data = require_dataframe(data)
    needed = list(dict.fromkeys([parsed.response, *parsed.columns, *_fixed_columns(parsed, data), *parsed.slope_columns]))
    require_columns(data, needed)
    return drop_incomplete_rows(data, needed, parsed.response)


def prepare_fixed_columns(data: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Fixed-effect columns coded as R codes them, on a copy when anything changes.

    Logical columns become factors (R: ``systemTRUE``; formulaic would treat them as numbers), pandas'
    ``string`` extension dtype becomes plain strings (formulaic cannot code it), and unused categories of
    categorical columns are dropped (R's ``droplevels``; common after filtering, and an all-zero column
    would make the design rank deficient).
    """
    changes: dict[str, pd.Series] = {}
    for col in columns:
        series = data[col]
        if pd.api.types.is_bool_dtype(series):
            changes[col] = pd.Categorical(series, categories=[False, True])
        elif isinstance(series.dtype, pd.StringDtype):
            changes[col] = series.astype(object)
        elif isinstance(series.dtype, pd.CategoricalDtype):
            used = series.cat.remove_unused_categories()
            if len(used.cat.categories) != len(series.cat.categories):
                changes[col] = used
    return data.assign(**changes) if changes else data


def build_design(formula: str | ParsedFormula, data: pd.DataFrame, *, drop_missing: bool = False,
                 allow_n: bool = False) -> Design:
    """Validate ``data`` against ``formula`` and build the design of a linear mixed model.

    Parameters
    ----------
    formula : str or ParsedFormula
        lme4-style formula, e.g. ``"score ~ system + (1|item) + (1|seed)"``.
    data : pandas.DataFrame
        Long-format data, one row per observation. Not modified.
    drop_missing : bool, default False
        Drop rows with missing values in the columns the formula uses (or a non-finite response) and warn
        with their number (:class:`~mixeval.errors.DroppedRowsWarning`); by default such rows are an error.
    allow_n : bool, default False
        Allow a grouping factor with as many levels as rows (glmer's ``allow.n = TRUE``: a binomial row
        with several trials identifies its own random effect).

    Returns
    -------
    Design

    Raises
    ------
    ColumnError, InputError, FormulaError
        Missing columns (the message lists the available ones), a non-numeric or non-finite response,
        missing values, a grouping factor with one level or as many levels as rows, an aliased
        fixed-effects matrix.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> d = build_design("y ~ 1 + (1|g)", df)
    >>> d.nobs, d.fixed_names, [g.n_levels for g in d.groups]
    (6, ('(Intercept)',), [3])
    """
    parsed = formula if isinstance(formula, ParsedFormula) else parse_formula(formula)
    data = require_dataframe(data)
    fixed_cols = _fixed_columns(parsed, data)
    needed = list(dict.fromkeys([parsed.response, *parsed.columns, *fixed_cols, *parsed.slope_columns]))
    require_columns(data, needed)
    require_unique_columns(data, needed)
    if drop_missing:
        data = drop_incomplete_rows(data, needed, parsed.response)
    require_no_missing(data, needed)
    data = prepare_fixed_columns(data, [c for c in dict.fromkeys([*fixed_cols, *parsed.slope_columns]) if c in data.columns])
    y = require_numeric_column(data, parsed.response, role="response")
    if y.size and np.all(y == y[0]):
        raise InputError(f"the response {parsed.response!r} is constant (every value is {y[0]:g}); there is no "
                         "variance to decompose. Check the column (e.g. a score that was not computed).")
    X, names, spec = _fixed_matrix(parsed, data)
    if X.shape[0] != y.shape[0]:  # formulaic never drops rows with na_action="raise"; guard anyway
        raise InputError("the fixed-effects matrix lost rows; check the data for missing values.")
    groups = [_grouping_factor(t, data, len(y), allow_n) for t in parsed.random]
    groups.sort(key=lambda g: -g.n_levels)  # stable: ties keep formula order, as lme4
    warn_confounded(groups)
    warn_unidentified(groups, X)
    row_key = hash((len(y), y.tobytes()))
    return Design(parsed=parsed, y=y, X=X, fixed_names=names, groups=tuple(groups), row_key=row_key, fixed_spec=spec,
                  data=data)


def _fixed_columns(parsed: ParsedFormula, data: pd.DataFrame) -> list[str]:
    """Data columns the fixed part needs (formulaic's required variables, minus names it resolves itself)."""
    from formulaic import Formula

    try:
        required = Formula(parsed.fixed).required_variables
    except Exception as exc:
        raise FormulaError(f"cannot parse the fixed-effects part {parsed.fixed!r} of {parsed.formula!r}: {exc}") from exc
    names = sorted(str(v) for v in required)
    # Names such as `np` or `C` are resolved by formulaic from its own context, not from the data.
    return [n for n in names if n in data.columns or "." not in n and n not in _FORMULAIC_CONTEXT]


_FORMULAIC_CONTEXT = {"np", "numpy", "C", "I", "center", "scale", "poly", "bs", "log", "exp", "sqrt", "lag", "hashed"}


def weights_array(weights: Any, data: pd.DataFrame | None, n: int, *, positive: bool = False) -> np.ndarray:
    """Prior weights as an array of ``n`` values (ones for ``None``), from a column name or values; finite and
    >= 0 (> 0 with ``positive``), or an :class:`~mixeval.errors.InputError` naming ``weights``.

    Examples
    --------
    >>> weights_array([1, 2.5], None, 2).tolist()
    [1.0, 2.5]
    """
    if weights is None:
        return np.ones(n)
    if isinstance(weights, str):
        if data is None or weights not in data.columns:
            raise InputError(f"weights={weights!r} is not a column of the data.")
        w = pd.to_numeric(data[weights], errors="coerce").to_numpy(dtype=float)
    else:
        w = np.asarray(weights, dtype=float).ravel()
    if w.shape != (n,):
        raise InputError(f"weights must have one value per row ({n}); got {w.shape[0]}.")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or (positive and np.any(w == 0)):
        what = "> 0 (the precision of each row: Var(y_i) = sigma^2 / w_i)" if positive else \
            ">= 0 (the number of trials of each row)"
        raise InputError(f"weights must be finite and {what}; got {np.sum(~(np.isfinite(w) & (w > 0)))} "
                         "value(s) outside.")
    return w
