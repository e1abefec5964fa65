"""Slopes of a numeric variable per factor level (emmeans' ``emtrends``) and their pairwise contrasts.

When the data property of a conditional comparison is numeric (source length, word rarity,
readability), the model ``score ~ system * prop + (1|item)`` gives each system its own slope in
``prop``; ``emtrends`` estimates those slopes on the reference grid and ``pairs`` compares them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._validation import require_level
from ..errors import FormulaError, InputError
from ._ddf import canonical_df, df_inference
from ._emmeans import _check_fit, means_table
from ._grid import (
    ReferenceGrid,
    cached_reference_grid,
    marginal_linfct,
    normalise_names,
)
from ._pairwise import PairwiseResult, canonical_adjust, contrast_result

if TYPE_CHECKING:
    from ..mixed import MixedResult

__all__ = ["emtrends", "pairwise_trends", "trend_linfct", "trend_lines", "trend_step"]


def trend_step(values: np.ndarray) -> float:
    """emmeans' default step of the difference quotient: ``0.001 * (max - min)`` of the variable (1e-3 if constant)."""
    values = np.asarray(values, dtype=float)
    span = float(np.max(values) - np.min(values)) if values.size else 0.0
    return 1e-3 * span if span > 0 else 1e-3


def _trend_grid(fit: MixedResult, var: str, data: pd.DataFrame | None) -> ReferenceGrid:
    """The reference grid whose model matrix is the derivative of the model matrix in ``var``."""
    rg = cached_reference_grid(fit, data)
    if var not in rg.covariates:
        numeric = ", ".join(repr(c) for c in rg.covariates) or "none"
        what = "a factor" if var in rg.factors else "not a variable"
        raise InputError(f"`var` names {var!r}, which is {what} of the model's fixed part; trends are slopes of a "
                         f"numeric covariate (the model's numeric covariates: {numeric}).")
    source = data if data is not None else fit.data
    h = trend_step(pd.to_numeric(source[var], errors="coerce").to_numpy(dtype=float)) if isinstance(
        source, pd.DataFrame) and var in source.columns else 1e-3
    spec = fit.design.fixed_spec
    key = (id(spec), var, h, tuple(rg.covariates.items()))
    cached = _TREND_CACHE.get(key)
    if cached is not None and cached[0] is spec:
        return cached[1]
    n = len(rg.grid)
    shifted = pd.concat([rg.grid.assign(**{var: rg.covariates[var] + shift}) for shift in (-h / 2, h / 2)],
                        ignore_index=True)
    try:
        X = np.array(spec.get_model_matrix(shifted, na_action="ignore"), dtype=float)
    except Exception as exc:  # formulaic raises several types
        raise FormulaError(f"cannot evaluate the fixed-effects formula on the shifted reference grid: {exc}") from exc
    full = None if rg.X_full is None else np.array(spec.full_model_matrix(shifted, na_action="ignore"), dtype=float)
    out = dataclasses.replace(rg, X=(X[n:] - X[:n]) / h, X_full=None if full is None else (full[n:] - full[:n]) / h)
    if len(_TREND_CACHE) >= 16:
        _TREND_CACHE.pop(next(iter(_TREND_CACHE)))
    _TREND_CACHE[key] = (spec, out)
    return out


# Derivative grids of recently used model specs (refits of one design share the spec object).
_TREND_CACHE: dict[tuple, tuple[object, ReferenceGrid]] = {}


def trend_linfct(fit: MixedResult, specs: str | Sequence[str], var: str, by: str | Sequence[str] | None = None,
                 data: pd.DataFrame | None = None) -> tuple[pd.DataFrame, np.ndarray, list[str], list[str]]:
    """Cells, linear functions ``L`` (``L @ coef`` are the slopes) and normalised ``specs``/``by``."""
    _check_fit(fit)
    if not isinstance(var, str):
        raise InputError(f"`var` must name a numeric covariate of the model; got {var!r}.")
    specs_list = normalise_names(specs, "specs")
    by_list = normalise_names(by, "by")
    cells, L = marginal_linfct(_trend_grid(fit, var, data), specs_list, by_list)
    return cells, L, specs_list, by_list


def emtrends(fit: MixedResult, specs: str | Sequence[str], var: str, *, by: str | Sequence[str] | None = None,
             level: float = 0.95, df: str = "asymptotic", data: pd.DataFrame | None = None) -> pd.DataFrame:
    """Slope of the numeric covariate ``var`` for each level of ``specs`` (emmeans' ``emtrends``).

    Parameters
    ----------
    fit : LmerResult
        A model with ``var`` among its numeric covariates, typically ``score ~ system * var + (1|item)``.
    specs : str or list of str
        Factor(s) of the fixed part whose slopes are wanted.
    var : str
        The numeric covariate (e.g. a data property such as source length).
    by : str or list of str, optional
        Factor(s) within whose levels the slopes are computed.
    level : float, default 0.95
        Confidence level of the (unadjusted) intervals.
    df : {"asymptotic", "satterthwaite", "kenward-roger", "satterthwaite-upper"}, default "asymptotic"
        Degrees of freedom, as in :func:`emmeans`.
    data : DataFrame, optional
        The fitted rows, only needed when the fit does not hold them.

    Returns
    -------
    DataFrame
        One row per combination of ``specs`` (within ``by``) with columns ``*specs``, ``*by``,
        ``trend`` (the slope: change of the prediction per unit of ``var``), ``se``, ``df``,
        ``lower``, ``upper``.

    Raises
    ------
    InputError
        ``var`` not a numeric covariate of the model, unknown factors, an unknown ``df``.

    Notes
    -----
    As emmeans: the slope in each reference-grid row is the difference quotient
    ``(x(v + h/2) - x(v - h/2))' b / h`` of the model-matrix row ``x`` at ``var = v`` (its mean),
    with ``h = 0.001 (max - min)`` of ``var``; slopes of a cell average the grid rows of the cell
    with equal weights (other covariates at their means). For a model linear in ``var`` the
    quotient is the exact slope. ``se = sqrt(l' V l)``; intervals ``trend +- t_{df} se``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> item = np.repeat(np.arange(300), 2)
    >>> length = rng.integers(5, 60, size=300)[item]
    >>> df = pd.DataFrame({"item": item, "system": np.tile(["A", "B"], 300), "length": length})
    >>> df["score"] = (rng.normal(0, 0.3, 300)[item] + np.where(df.system == "B", 0.02, 0.0) * length
    ...               + rng.normal(0, 0.3, 600))
    >>> emtrends(lmer("score ~ system * length + (1|item)", df), "system", "length")[["system", "trend"]].round(3)
      system  trend
    0      A  0.001
    1      B  0.021
    """
    level = require_level(level)
    canonical_df(df)
    cells, L, _, _ = trend_linfct(fit, specs, var, by, data)
    return means_table(cells, L, np.asarray(fit.coef, dtype=float), df_inference(fit, df), level, estimate="trend")


def pairwise_trends(fit: MixedResult, specs: str | Sequence[str], var: str, *, by: str | Sequence[str] | None = None,
                    adjust: str = "tukey", level: float = 0.95, df: str = "asymptotic",
                    data: pd.DataFrame | None = None) -> PairwiseResult:
    """All pairwise differences of the slopes of ``var`` between levels of ``specs`` (``emtrends(pairwise ~ specs)``).

    Parameters are those of :func:`emtrends` plus ``adjust`` (as :func:`pairwise`).

    Returns
    -------
    PairwiseResult
        ``table`` holds the slope contrasts (``estimate`` per unit of ``var``; ``effect_size`` divides
        it by the residual standard deviation), ``emmeans`` the slopes (:func:`emtrends`), ``trend``
        is ``var``.

    Notes
    -----
    The contrasts, adjustments and degrees of freedom are those of :func:`pairwise`, applied to the
    slopes' linear functions (see :func:`emtrends`).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> item = np.repeat(np.arange(300), 2)
    >>> length = rng.integers(5, 60, size=300)[item]
    >>> df = pd.DataFrame({"item": item, "system": np.tile(["A", "B"], 300), "length": length})
    >>> df["score"] = (rng.normal(0, 0.3, 300)[item] + np.where(df.system == "B", 0.02, 0.0) * length
    ...               + rng.normal(0, 0.3, 600))
    >>> res = pairwise_trends(lmer("score ~ system * length + (1|item)", df), "system", "length")
    >>> res.table[["contrast", "estimate"]].round(3)
      contrast  estimate
    0    A - B     -0.02
    """
    method = canonical_adjust(adjust)
    level = require_level(level)
    canonical_df(df)
    cells, L, specs_list, by_list = trend_linfct(fit, specs, var, by, data)
    inference = df_inference(fit, df)
    slopes = means_table(cells, L, np.asarray(fit.coef, dtype=float), inference, level, estimate="trend")
    return contrast_result(fit, cells, L, specs_list, by_list, method, level, inference, slopes, trend=var)


def trend_lines(fit: MixedResult, specs: str, var: str, values: Sequence[float] | None = None, *, level: float = 0.95,
                n_points: int = 50, data: pd.DataFrame | None = None) -> pd.DataFrame:
    """Marginal predictions of each level of ``specs`` along ``var`` with pointwise intervals (the trend lines).

    Returns a long table with columns ``specs``, ``var``, ``estimate``, ``se``, ``lower``, ``upper``
    (asymptotic intervals): the reference-grid marginal mean of each level with ``var`` set to each of
    ``values`` (default: ``n_points`` equally spaced over the fitted range of ``var``).
    """
    _check_fit(fit)
    level = require_level(level)
    specs_list = normalise_names(specs, "specs")
    rg = cached_reference_grid(fit, data)
    if var not in rg.covariates:
        numeric = ", ".join(repr(c) for c in rg.covariates) or "none"
        raise InputError(f"`var` names {var!r}, which is not a numeric covariate of the model (its numeric covariates: "
                         f"{numeric}).")
    if values is None:
        source = data if data is not None else fit.data
        if not isinstance(source, pd.DataFrame) or var not in source.columns:
            raise InputError(f"pass values= (the fit does not hold the data of {var!r}).")
        x = pd.to_numeric(source[var], errors="coerce").to_numpy(dtype=float)
        points = np.linspace(np.nanmin(x), np.nanmax(x), int(n_points))
    else:
        points = np.asarray(values, dtype=float)
    big = pd.concat([rg.grid.assign(**{var: v}) for v in points], ignore_index=True)
    try:
        X = np.array(fit.design.fixed_spec.get_model_matrix(big, na_action="ignore"), dtype=float)
    except Exception as exc:  # formulaic raises several types
        raise FormulaError(f"cannot evaluate the fixed-effects formula along {var!r}: {exc}") from exc
    coef = np.asarray(fit.coef, dtype=float)
    V = np.asarray(fit.cov_coef, dtype=float)
    n = len(rg.grid)
    frames = []
    for i, v in enumerate(points):
        cells, L = marginal_linfct(dataclasses.replace(rg, X=X[i * n:(i + 1) * n]), specs_list, [])
        frames.append(means_table(cells, L, coef, V, level, estimate="estimate").assign(**{var: v}))
    out = pd.concat(frames, ignore_index=True)
    return out[[*specs_list, var, "estimate", "se", "lower", "upper"]]
