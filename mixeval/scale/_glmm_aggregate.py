"""Binomial GLMMs of binary outcomes beyond memory: successes and trials per design cell from the query engine.

Rows that share every column of the model (the fixed-effect variables and the grouping factors) share the
linear predictor, so their 0/1 outcomes enter the likelihood only through the number of successes ``k``
and of trials ``m`` of their cell: the Bernoulli log-likelihood of the rows is the binomial log-likelihood
of the cells minus ``sum log C(m, k)``. DuckDB or Spark computes ``(cell, m, k)`` in one GROUP BY, and
:func:`mixeval.glmer` fits the proportions ``k / m`` with weights ``m``; the log-likelihood, deviance,
AIC and BIC are then put back on the rows' scale (``nobs`` = rows), so they equal those of the fit on the
rows (a 100M-row LLM-judge log becomes a few thousand cells).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd
from scipy.special import gammaln

from ..errors import ColumnError, InputError
from ..formula import parse_formula
from ._sources import as_engine

if TYPE_CHECKING:
    from ..mixed import GlmerResult

__all__ = ["binary_cells", "glmer_aggregate"]


def _model_columns(formula: str, available: list[str]) -> tuple[str, list[str]]:
    """The response and the columns that define a cell (fixed-effect variables and offsets, grouping factors)."""
    parsed = parse_formula(formula)
    if not parsed.response_is_column:
        raise InputError(f"the aggregate binomial path takes a 0/1 response column; {parsed.response} is an "
                         "expression (for successes out of trials load the rows, or compute the column in the query "
                         "engine).")
    fixed = parsed.fixed_columns(available)
    keys = list(dict.fromkeys([c for c in fixed if c in available] + list(parsed.columns)))
    missing = [c for c in [parsed.response, *parsed.columns, *fixed] if c not in available]
    if missing:
        raise ColumnError(f"column(s) {missing} not found in the source; available columns: {', '.join(available)}.")
    return parsed.response, keys


def binary_cells(formula: str, source: Any) -> tuple[pd.DataFrame, int]:
    """Successes and trials per cell of the model's columns, computed by the query engine.

    Returns
    -------
    cells : DataFrame
        The cell columns, ``trials`` (rows), ``successes`` and the response as the proportion.
    n_rows : int
        Number of rows of the source.

    Raises
    ------
    InputError
        The response takes values other than 0 and 1 (or false/true), or a model column has NULLs.

    Examples
    --------
    Eight 0/1 answers in four cells of (system, item):

    >>> import pandas as pd, pyarrow as pa
    >>> df = pd.DataFrame({"system": list("AABBAABB"), "item": [1, 1, 1, 1, 2, 2, 2, 2],
    ...                    "correct": [1, 0, 1, 1, 0, 0, 1, 0]})
    >>> cells, n_rows = binary_cells("correct ~ system + (1|item)", pa.Table.from_pandas(df))
    >>> n_rows
    8
    >>> cells.sort_values(["system", "item"]).reset_index(drop=True)
      system  item  trials  successes  correct
    0      A     1     2.0        1.0      0.5
    1      A     2     2.0        0.0      0.0
    2      B     1     2.0        2.0      1.0
    3      B     2     2.0        1.0      0.5
    """
    engine = as_engine(source)
    available = engine.columns()
    response, keys = _model_columns(formula, available)
    q = engine.quote
    y = f"CAST({q(response)} AS DOUBLE)"
    nulls = " + ".join(f"SUM(CASE WHEN {q(c)} IS NULL THEN 1 ELSE 0 END)" for c in [response, *keys])
    check = engine.query(f"SELECT COUNT(*) AS n, MIN({y}) AS lo, MAX({y}) AS hi, SUM({y} * (1 - {y})) AS frac, "
                         f"{nulls} AS nulls FROM {{src}}")
    row = check.iloc[0]
    if int(row["nulls"] or 0):
        raise InputError(f"the source has {int(row['nulls'])} NULL value(s) in the model's columns; rows are never "
                         "dropped silently: filter them in the query engine first.")
    if float(row["lo"]) < 0 or float(row["hi"]) > 1 or abs(float(row["frac"])) > 0:
        raise InputError(f"the response {response!r} must be 0/1 (or false/true) for the aggregate binomial path; it has "
                         f"values in [{float(row['lo']):g}, {float(row['hi']):g}] that are not all 0 or 1.")
    cols = ", ".join(q(c) for c in keys)
    cells = engine.query(f"SELECT {cols}, COUNT(*) AS trials, SUM({y}) AS successes FROM {{src}} GROUP BY {cols}")
    cells = cells.sort_values(keys, kind="stable").reset_index(drop=True)
    cells["trials"] = cells["trials"].astype(float)
    cells["successes"] = cells["successes"].astype(float)
    cells[response] = cells["successes"] / cells["trials"]
    return cells, int(row["n"])


def glmer_aggregate(formula: str, source: Any, *, family: str = "binomial", link: str | None = None,
                    nAGQ: int = 1, REML: bool = False):
    """A binomial GLMM of a 0/1 response from successes and trials per cell (same fit as on the rows).

    Parameters
    ----------
    formula : str
        As :func:`mixeval.glmer`; every variable must be categorical or take few values (each distinct
        combination of the model's columns is a cell).
    source : Parquet path/glob, Arrow table, DuckDB relation, Spark DataFrame or pandas DataFrame
    family, link, nAGQ, REML :
        ``family`` must be ``"binomial"``; see :func:`mixeval.glmer`.

    Returns
    -------
    GlmerResult
        Fitted to the cells; ``nobs``, ``loglik``, ``deviance``, AIC, BIC and ``deviance_conditional`` are on
        the rows' scale. ``fitted`` and ``residuals`` are per cell.

    Notes
    -----
    ``log L_rows = log L_cells - sum_cells log C(m, k)``. For ``nAGQ > 1`` lme4's deviance is built on the
    deviance residuals; for 0/1 rows they are ``-2 log p``, for cells they are relative to the saturated
    binomial, so the cells' value is shifted by ``-2 sum_cells [k log(k/m) + (m - k) log(1 - k/m)]``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(40), 20), "system": np.tile(["A", "B"], 400)})
    >>> df["correct"] = (rng.random(800) < 1 / (1 + np.exp(-rng.normal(size=40)[df.item]))).astype(int)
    >>> fit = glmer_aggregate("correct ~ system + (1|item)", df)
    >>> fit.nobs, len(fit.y)
    (800, 80)
    """
    from ..mixed import get_family, glmer

    fam = get_family(family, link)
    if fam.name != "binomial":
        raise InputError("the aggregate GLMM path fits binomial models of 0/1 responses; for counts load the rows and "
                         "use mixeval.glmer(..., family='poisson').")
    cells, n_rows = binary_cells(formula, source)
    fit = cast("GlmerResult", glmer(formula, cells, family=fam, nAGQ=nAGQ, weights=cells["trials"].to_numpy(),
                                    REML=REML))  # binomial: glmer's own fit, never the Gaussian (lmer) one
    m, k = cells["trials"].to_numpy(), cells["successes"].to_numpy()
    log_choose = float(np.sum(gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1)))
    if fit.nAGQ > 1:
        p = k / m
        with np.errstate(divide="ignore", invalid="ignore"):
            sat = (np.where(k > 0, k * np.log(np.where(k > 0, p, 1)), 0.0)
                   + np.where(m > k, (m - k) * np.log(np.where(m > k, 1 - p, 1)), 0.0))
        deviance = fit.criterion - 2 * float(np.sum(sat))
    else:
        deviance = fit.criterion + 2 * log_choose
    mu = fit.fitted
    cond = -2 * float(np.sum(k * np.log(mu) + (m - k) * np.log1p(-mu)))
    design = dataclasses.replace(fit.design, row_key=hash(("aggregate", n_rows, float(k.sum()), formula.split("~")[0].strip())))
    return dataclasses.replace(fit, nobs=n_rows, loglik=-0.5 * deviance, criterion=deviance, deviance_conditional=cond,
                               design=design)
