"""Stage 1 (lme4's ``lFormula``): formula + data -> validated design.

The design holds the response, the fixed-effects model matrix (R's ``model.matrix`` of the fixed part,
:mod:`mixeval.formula`), the offset, and for each random-effects term integer group codes with their labels and
the model matrix of its coefficients. Terms are ordered by decreasing number of levels, as lme4 orders them.
A rank-deficient fixed-effects matrix loses the columns lme4's ``chkRank.drop.cols`` drops (named by a warning);
text levels are ordered as R orders them (:func:`mixeval.formula.collation_key`).
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import require_columns, require_dataframe, require_no_missing, require_numeric_column
from ..errors import (
    ColumnError,
    DroppedRowsWarning,
    FormulaError,
    IdentifiabilityWarning,
    InputError,
    caller_stacklevel,
)
from ..formula import (
    ModelFrameSpec,
    ParsedFormula,
    RandomTerm,
    collated,
    is_text,
    kept_columns,
    model_frame_spec,
    parse_formula,
    response_values,
    warn_dropped,
)
from ..formula import prepare_plain_columns as prepare_fixed_columns

__all__ = ["GroupingFactor", "Design", "build_design", "complete_rows", "confounded_pairs", "check_group_levels",
           "weights_array", "new_model_matrix", "new_offset", "new_level_codes", "net_of_offset"]


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
    spec: Any = field(default=None, repr=False, compare=False)

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
    fixed_spec: Any = field(default=None, repr=False, compare=False)
    data: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    #: the known part of each row's linear predictor (the summed ``offset()`` terms), None without one
    offset: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: ``y`` is the response minus ``offset`` (a Gaussian fit's working response, :func:`net_of_offset`)
    offset_subtracted: bool = field(default=False, repr=False, compare=False)
    #: the binomial trials of a ``cbind(successes, failures)`` response (``y`` is then successes / trials)
    trials: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def nobs(self) -> int:
        return int(self.y.shape[0])

    @property
    def has_slopes(self) -> bool:
        """Some random term has coefficients other than a single intercept (random slopes)."""
        return any(not g.is_intercept for g in self.groups)


def _fixed_matrix(parsed: ParsedFormula, data: pd.DataFrame) -> tuple[np.ndarray, tuple[str, ...], ModelFrameSpec]:
    """The fixed-effects model matrix (R's ``model.matrix`` of the fixed part) with R's column names, less the
    columns lme4 drops from a rank-deficient matrix (:func:`drop_aliased_columns`)."""
    X, spec = model_frame_spec(parsed.fixed_node, data, what=f"the fixed part of {parsed.formula!r}")
    names = spec.column_names
    bad = [nm for nm, ok in zip(names, np.isfinite(X).all(axis=0)) if not ok]
    if bad:
        raise InputError(f"the fixed-effects column(s) {', '.join(bad)} of {parsed.fixed!r} have infinite values; "
                         "remove or recode those rows (e.g. data[np.isfinite(data['x'])]).")
    return drop_aliased_columns(X, spec)


def drop_aliased_columns(X: np.ndarray, spec: ModelFrameSpec) -> tuple[np.ndarray, tuple[str, ...], ModelFrameSpec]:
    """lme4's default for a rank-deficient fixed-effects matrix (``check.rankX = "message+drop.cols"``): keep the
    columns of the first ``rank`` pivots of R's ``qr(X, tol = 1e-7)`` (:func:`mixeval.formula.kept_columns`), fit
    those, and say which were dropped (a :class:`~mixeval.errors.RankDeficientWarning` naming them; lme4 gives a
    message). ordinal's ``clmm`` drops the same columns.

    Examples
    --------
    >>> df = pd.DataFrame({"a": list("pqpqp"), "b": list("uuvvv")}).iloc[[0, 1, 2, 4]]
    >>> X, spec = model_frame_spec("a * b", df)
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     X2, names, spec2 = drop_aliased_columns(X, spec)
    >>> names, spec2.dropped_names, X2.shape
    (('(Intercept)', 'aq', 'bv'), ('aq:bv',), (4, 3))
    >>> str(w[0].message).split(";")[0]
    'fixed-effect model matrix is rank deficient so dropping 1 column / coefficient (aq:bv)'
    """
    kept = kept_columns(X)
    if len(kept) == X.shape[1]:
        return X, spec.column_names, spec
    spec = spec.dropping(kept, X.T @ X)
    warn_dropped(spec.dropped_names)
    return X[:, list(kept)], spec.column_names, spec


def require_unique_columns(data: pd.DataFrame, columns: list[str]) -> None:
    """Each column the formula uses names exactly one column of ``data``."""
    dup = sorted({c for c in columns if int((data.columns == c).sum()) > 1})
    if dup:
        raise ColumnError(f"the data have several columns named {', '.join(repr(c) for c in dup)}; give every "
                          "column a unique name (e.g. data.loc[:, ~data.columns.duplicated()]).")


def check_group_levels(name: str, n_levels: int, nobs: int, allow_n: bool = False) -> None:
    """A random effect needs at least 2 levels and fewer levels than observations (GLMMs, ``allow_n``: at most as many).

    Examples
    --------
    >>> check_group_levels("rater", 5, 40)
    >>> check_group_levels("rater", 1, 40)
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: grouping factor 'rater' has only 1 level; a random effect needs at least 2 levels. ...
    """
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


def _term_matrix(term: RandomTerm, data: pd.DataFrame) -> tuple[np.ndarray | None, tuple[str, ...], object]:
    """Model matrix, coefficient names and spec of a random term's left-hand side (None for ``1``)."""
    if term.is_intercept:
        return None, ("(Intercept)",), None
    X, spec = model_frame_spec(term.lhs, data, what=f"the random term {term.label}")
    names = spec.column_names
    if spec.has_offset:
        raise FormulaError(f"random term {term.label}: offset() belongs to the fixed part of the formula.")
    if X.shape[1] == 0:
        raise FormulaError(f"random term {term.label} has no coefficients; write e.g. (1 + x | {term.name}).")
    if not np.all(np.isfinite(X)):
        raise InputError(f"random term {term.label}: its model matrix has non-finite values (check the columns "
                         f"{', '.join(names)} for inf).")
    kept = kept_columns(X)
    if len(kept) < X.shape[1]:
        aliased = [nm for j, nm in enumerate(names) if j not in kept]
        raise InputError(f"random term {term.label}: its model matrix is rank deficient; aliased column(s): "
                         f"{', '.join(aliased)}. Remove the redundant coefficients.")
    return X, names, spec


def _factor_codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes and labels of a grouping column's levels in R's order: a categorical's categories, text collated as R
    collates it (:func:`mixeval.formula.collated`), other values sorted."""
    if is_text(series):
        levels = collated(series.to_numpy())
        return pd.Index(levels).get_indexer(series.to_numpy()), np.asarray(levels, dtype=object)
    codes, uniques = pd.factorize(series, sort=True)
    return codes, np.asarray(uniques.astype(str), dtype=object)


def _grouping_factor(term: RandomTerm, data: pd.DataFrame, nobs: int, allow_n: bool = False) -> GroupingFactor:
    """Codes of the groups of one random term (an interaction of one or more columns) and its model matrix."""
    codes = np.zeros(nobs, dtype=np.int64)
    labels: np.ndarray | None = None
    for col in term.factors:
        c, lab = _factor_codes(data[col])
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


def new_model_matrix(spec: ModelFrameSpec, newdata: pd.DataFrame, *, what: str) -> np.ndarray:
    """The model matrix of new rows under a fitted model's ``spec`` (the fit's factor levels, coding and transform
    parameters: R's ``predict`` with ``makepredictcall``).

    A missing column or value, a number given as text, or a factor level the fit never saw is an
    :class:`~mixeval.errors.InputError` naming it.

    Examples
    --------
    >>> from mixeval.formula import model_frame_spec
    >>> _, spec = model_frame_spec("1 + s", pd.DataFrame({"s": list("ab")}))
    >>> new_model_matrix(spec, pd.DataFrame({"s": ["b"]}), what="the fixed effects").tolist()
    [[1.0, 1.0]]
    """
    data = _new_rows(spec, newdata, what)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        X = spec.get_model_matrix(data)
    unseen = [str(w.message) for w in caught if "outside of the nominated levels" in str(w.message)]
    if unseen:
        raise InputError(f"newdata has factor levels the fit never saw, so {what} has no coefficient for them: "
                         f"{unseen[0].split(':', 1)[-1].split('.')[0].strip()}. Predict only levels present in the "
                         "fitted data.")
    for w in caught:
        if "outside of the nominated levels" not in str(w.message):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return X


def new_offset(spec: ModelFrameSpec, newdata: pd.DataFrame) -> np.ndarray | None:
    """The summed ``offset()`` terms of new rows (None when the formula has none), as R's ``predict`` adds them."""
    if not spec.has_offset:
        return None
    return spec.offset(_new_rows(spec, newdata, "the offset"))


def _new_rows(spec: ModelFrameSpec, newdata: pd.DataFrame, what: str) -> pd.DataFrame:
    data = require_dataframe(newdata, "newdata")
    needed = list(spec.columns)
    missing = [c for c in needed if c not in data.columns]
    if missing:
        raise ColumnError(f"newdata lacks the column(s) {', '.join(map(repr, missing))} of {what}; add them.")
    for col in needed:
        if data[col].isna().any():
            raise InputError(f"newdata[{col!r}] has {int(data[col].isna().sum())} missing value(s); {what} cannot be "
                             "predicted for those rows. Drop or fill them first.")
    return data


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


def drop_incomplete_rows(data: pd.DataFrame, columns: list[str], response: str | None) -> pd.DataFrame:
    """Rows of ``data`` without missing values in ``columns`` and with a finite response (a column; None for a
    response expression); warns how many went."""
    keep = data[columns].notna().all(axis=1)
    if response is not None and pd.api.types.is_numeric_dtype(data[response]):
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


def _needed_columns(parsed: ParsedFormula, data: pd.DataFrame) -> list[str]:
    """Every data column a fit of ``parsed`` reads: response, grouping factors, fixed part (offsets included) and
    the left-hand sides of the random terms."""
    return list(dict.fromkeys([*parsed.response_columns, *parsed.columns, *parsed.fixed_columns(data.columns),
                               *parsed.slope_columns]))


def complete_rows(formula: str | ParsedFormula, data: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``data`` a fit of ``formula`` can use (see :func:`drop_incomplete_rows`).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"score": [1.0, None, 3.0], "system": ["A", "B", "A"], "item": [1, 2, 3]})
    >>> complete_rows("score ~ system + (1|item)", df).index.tolist()
    [0, 2]
    """
    parsed = formula if isinstance(formula, ParsedFormula) else parse_formula(formula)
    data = require_dataframe(data)
    needed = _needed_columns(parsed, data)
    require_columns(data, needed)
    return drop_incomplete_rows(data, needed, parsed.response if parsed.response_is_column else None)


def _response(parsed: ParsedFormula, data: pd.DataFrame) -> tuple[np.ndarray, np.ndarray | None]:
    """The response (and the binomial trials of ``cbind(successes, failures)``)."""
    if parsed.response_is_column:
        return require_numeric_column(data, parsed.response, role="response"), None
    return response_values(parsed, data)


def net_of_offset(design: Design) -> Design:
    """The design of a Gaussian fit with an offset: the response minus the offset (``y - o = X beta + Z b + e``);
    the result adds the offset back to its fitted values and predictions. A design without an offset, or already
    net of it, is returned as is."""
    if design.offset is None or design.offset_subtracted:
        return design
    return dataclasses.replace(design, y=design.y - design.offset, offset_subtracted=True)


def build_design(formula: str | ParsedFormula, data: pd.DataFrame, *, drop_missing: bool = False,
                 allow_n: bool = False) -> Design:
    """Validate ``data`` against ``formula`` and build the design of a linear mixed model.

    Parameters
    ----------
    formula : str or ParsedFormula
        lme4-style formula, e.g. ``"score ~ system + (1|item) + (1|seed)"``, in R's formula language
        (:mod:`mixeval.formula`).
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
        missing values, a grouping factor with one level or as many levels as rows, a fixed factor with one
        level, an aliased random-term matrix, a formula mixeval does not build (named, with the alternative).
        A rank-deficient fixed-effects matrix is not an error: its aliased columns are dropped as lme4 drops them
        (:func:`drop_aliased_columns`).

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
    needed = _needed_columns(parsed, data)
    require_columns(data, needed)
    require_unique_columns(data, needed)
    if drop_missing:
        data = drop_incomplete_rows(data, needed, parsed.response if parsed.response_is_column else None)
    require_no_missing(data, needed)
    # logical columns as factors, unused categories dropped: the data as the model codes them
    data = prepare_fixed_columns(data, list(dict.fromkeys([*parsed.fixed_columns(data.columns),
                                                            *parsed.slope_columns])))
    y, trials = _response(parsed, data)
    if y.size and np.all(y == y[0]) and trials is None:
        raise InputError(f"the response {parsed.response!r} is constant (every value is {y[0]:g}); there is no "
                         "variance to decompose. Check the column (e.g. a score that was not computed).")
    X, names, spec = _fixed_matrix(parsed, data)
    if X.shape[0] != y.shape[0]:  # the model frame never drops rows; guard anyway
        raise InputError("the fixed-effects matrix lost rows; check the data for missing values.")
    offset = spec.offset(data)
    groups = [_grouping_factor(t, data, len(y), allow_n) for t in parsed.random]
    groups.sort(key=lambda g: -g.n_levels)  # stable: ties keep formula order, as lme4
    warn_confounded(groups)
    warn_unidentified(groups, X)
    row_key = hash((len(y), y.tobytes(), None if offset is None else offset.tobytes()))
    return Design(parsed=parsed, y=y, X=X, fixed_names=names, groups=tuple(groups), row_key=row_key, fixed_spec=spec,
                  data=data, offset=offset, trials=trials)


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
