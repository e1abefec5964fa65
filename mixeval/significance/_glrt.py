"""Generalized likelihood-ratio tests of nested models (book Section 4.3, Table 4.1)."""

from __future__ import annotations

import dataclasses

import pandas as pd

from .._results import TestResult
from .._validation import require_columns, require_dataframe, require_no_missing, require_numeric_column
from ..errors import InputError
from ..formula import quote_name
from ..mixed import compare, lmer

__all__ = ["glrt", "glrt_averaged"]


def _require_formula(formula: object, argument: str) -> str:
    if not isinstance(formula, str) or "~" not in formula:
        raise InputError(f"`{argument}` must be a model formula string such as 'score ~ system + (1|item)'; got {formula!r}.")
    return formula


def glrt(data: pd.DataFrame, full_formula: str, null_formula: str) -> TestResult:
    """GLRT of two nested models, both fitted by maximum likelihood (lme4's ``anova(m0, m1)``).

    Parameters
    ----------
    data : DataFrame
        Long-format data (not modified).
    full_formula, null_formula : str
        lme4-style formulas; the null model must be nested in the full one, e.g.
        ``"ter ~ system + (1|sentence_id)"`` and ``"ter ~ 1 + (1|sentence_id)"``. Formulas without
        random terms give the linear-model GLRT.

    Returns
    -------
    TestResult
        ``statistic`` ``W = 2 (l_1 - l_0)``, ``df = k_1 - k_0``, chi-square ``pvalue``;
        ``details`` holds both log-likelihoods, numbers of parameters and formulas.

    Raises
    ------
    ModelComparisonError
        Models not nested or with the same number of parameters.

    Notes
    -----
    Wilks: under H0, ``W = 2 (l_1 - l_0)`` is asymptotically ``chi2(k_1 - k_0)`` with
    ``l`` the maximized (ML, not REML) log-likelihoods and ``k`` the numbers of parameters.

    Examples
    --------
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=30)
    >>> res = glrt(df, "score ~ system + (1|item)", "score ~ 1 + (1|item)")
    >>> round(res.statistic, 3), res.df, round(res.pvalue, 5)
    (19.155, 2.0, 7e-05)
    """
    data = require_dataframe(data)
    full = lmer(_require_formula(full_formula, "full_formula"), data, REML=False)
    null = lmer(_require_formula(null_formula, "null_formula"), data, REML=False)
    result = compare(full, null)
    return dataclasses.replace(result, method="GLRT (ML fits)")


def glrt_averaged(data: pd.DataFrame, *, score: str, system: str, item: str, over: str) -> TestResult:
    """Table 4.1's first test: average ``score`` over ``over`` per (item, system), then a linear-model GLRT.

    Parameters
    ----------
    data : DataFrame
        Long-format evaluation log (not modified).
    score, system, item : str
        Columns of the numeric score, the compared systems and the test items.
    over : str
        The replication column averaged over (e.g. training seeds); every other variation within an
        (item, system) cell is averaged too.

    Returns
    -------
    TestResult
        The GLRT of ``score ~ system`` against ``score ~ 1`` on the cell means (ML linear models:
        R's ``2 * (logLik(lm1) - logLik(lm0))``); ``details["n_cells"]`` is the number of averaged
        rows, ``details["residual_sd"]`` the residual standard deviation of the full model's ML fit
        (the book's "residual sd" of Table 4.1 is its REML/OLS counterpart, ``details["residual_sd_ols"]``).

    Notes
    -----
    Averaging removes the replication variance but ignores that cells of the same item are
    correlated; the book uses this test to show how much power the LMEM of :func:`glrt` gains.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(20), 6), "system": np.tile(np.repeat(["A", "B"], 3), 20),
    ...                    "seed": np.tile([1, 2, 3], 40)})
    >>> df["score"] = rng.normal(size=20)[df.item] + rng.normal(size=120)
    >>> res = glrt_averaged(df, score="score", system="system", item="item", over="seed")
    >>> res.df, res.details["n_cells"]
    (1.0, 40)
    """
    data = require_dataframe(data)
    require_columns(data, [score, system, item, over])
    require_no_missing(data, [score, system, item, over])
    require_numeric_column(data, score, role="score")
    if len({score, system, item, over}) < 4:
        raise InputError("`score`, `system`, `item` and `over` must be four different columns.")
    cells = data.groupby([item, system], as_index=False, observed=True, sort=True)[[score]].mean()
    if cells[system].nunique() < 2:
        raise InputError(f"column {system!r} has a single level; a GLRT of systems needs at least two.")
    full = lmer(f"{quote_name(score)} ~ {quote_name(system)}", cells, REML=False)  # names such as cbind(k, f)
    null = lmer(f"{quote_name(score)} ~ 1", cells, REML=False)
    result = compare(full, null)
    n = len(cells)
    p = len(full.coef)
    residuals = full.residuals
    if residuals is None:  # an lmer fit of a plain data frame keeps its residuals
        raise RuntimeError("the fit of the cell means has no residuals")
    rss = float((residuals ** 2).sum())
    details = {**result.details, "n_cells": n, "n_replications_max": int(data.groupby([item, system])[over].nunique().max()),
               "residual_sd": full.sigma,
               "residual_sd_ols": (rss / (n - p)) ** 0.5}
    return dataclasses.replace(result, method="GLRT of linear models on cell means averaged over " + repr(over),
                               details=details)
