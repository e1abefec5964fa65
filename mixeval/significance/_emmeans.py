"""Estimated marginal means (emmeans' ``emmeans(fit, ~ specs | by)``, ``lmer.df`` asymptotic, Satterthwaite or Kenward-Roger)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from .._validation import require_level
from ..errors import InputError
from ..mixed import MixedResult
from ._ddf import DfInference, df_inference
from ._grid import cached_reference_grid, marginal_linfct, normalise_names, note_nonestimable
from ._labels import chosen_df, label_table, note_df_rule
from ._margins import means_margin, means_tests

__all__ = ["emmeans", "marginal_means", "means_table"]


def _check_fit(fit: object) -> None:
    if not isinstance(fit, MixedResult):
        raise InputError(f"`fit` must be a fitted mixed model (mixeval.lmer, mixeval.glmer); got {type(fit).__name__}.")
    if getattr(getattr(fit, "family", None), "name", None) == "ordinal":
        raise InputError("an ordinal (clmm) fit's thresholds carry its intercept: use emmeans_ordinal / "
                         "pairwise_ordinal (latent, prob, cum.prob, exc.prob, mean.class modes) for its marginal means "
                         "and contrasts.")


def marginal_means(fit: MixedResult, specs: str | Sequence[str], by: str | Sequence[str] | None = None,
                   data: pd.DataFrame | None = None) -> tuple[pd.DataFrame, np.ndarray, list[str], list[str]]:
    """Cells, linear functions ``L`` and normalised ``specs``/``by`` of the marginal means."""
    _check_fit(fit)
    specs_list = normalise_names(specs, "specs")
    by_list = normalise_names(by, "by")
    rg = cached_reference_grid(fit, data)
    cells, L = marginal_linfct(rg, specs_list, by_list)
    return cells, L, specs_list, by_list


def emmeans(fit: MixedResult, specs: str | Sequence[str], *, by: str | Sequence[str] | None = None,
            level: float = 0.95, df: str | None = "asymptotic", data: pd.DataFrame | None = None,
            delta: float | None = None, side: str | None = None, null: float | None = None,
            adjust: str | None = None) -> pd.DataFrame:
    """Estimated marginal means of the factor(s) ``specs``, optionally within levels of ``by``.

    Parameters
    ----------
    fit : LmerResult
        A model fitted by :func:`mixeval.lmer` (REML or ML).
    specs : str or list of str
        Factor(s) of the fixed part whose means are wanted (several: their combinations).
    by : str or list of str, optional
        Factor(s) within whose levels the means are computed (``emmeans(fit, ~ specs | by)``).
    level : float, default 0.95
        Confidence level of the (unadjusted) intervals.
    df : {"asymptotic", "satterthwaite", "kenward-roger", "satterthwaite-upper"} or None, default "asymptotic"
        Degrees of freedom (emmeans' ``lmer.df``): z intervals (the book's), lmerTest's Satterthwaite,
        pbkrtest's Kenward-Roger (adjusted covariance for the standard errors), or Satterthwaite with each
        component's part of the variance at an upper bound (near-nominal where a component from 3-5 levels
        dominates; :mod:`mixeval.significance._satterthwaite`). ``None``: emmeans' rule, Kenward-Roger for lmer fits
        of up to 3,000 rows, then Satterthwaite, then z (z for glmer fits; :class:`mixeval.Study`'s default);
        ``attrs["df_rule"]`` says why.
    data : DataFrame, optional
        The fitted rows, only needed when the fit does not hold them (covariate means).
    delta, side, null : optional
        Test every mean (emmeans' ``test(emm, null =, delta =, side =)``): ``null`` alone, ``H0: mean = null``
        (two-sided); with ``delta``, equivalence (``side="equivalence"``, the default: ``H0: |mean - null| >=
        delta``, two one-sided tests), ``side=">"`` (``H0: mean <= null - delta``) or ``side="<"`` (``H0: mean >=
        null + delta``); ``side=">"`` without ``delta``: ``H0: mean <= null`` (above chance, say). The table gains
        ``statistic`` and ``pvalue`` (see :func:`mixeval.significance.pairwise` for the formulas).
    adjust : str, optional
        Adjustment of those tests within each ``by`` group (R's ``p.adjust`` methods, ``"sidak"``; default
        ``"none"``, emmeans' for means); only with a test.

    Returns
    -------
    DataFrame
        One row per combination of ``specs`` within each ``by`` group (by groups outer, first
        factor varying fastest, as emmeans prints them) with columns ``*specs``, ``*by``,
        ``emmean``, ``se``, ``df`` (``inf``: asymptotic), ``lower``, ``upper`` (two-sided, unadjusted); with a test
        ``statistic`` (z or t) and ``pvalue`` (and ``pvalue_unadjusted`` when adjusted); ``attrs`` name the fit
        criterion (``"fit_criterion"``: REML, ML, ...), the df method (``"df_method"``), the tested hypothesis
        (``"null"``) and all in words (``"note"``).

    Raises
    ------
    InputError
        ``specs``/``by`` not factors of the model (the message lists them), a numeric covariate
        named in ``specs``/``by``, a factor in both.

    Notes
    -----
    The reference grid crosses all levels of all factors of the fixed part and holds numeric
    covariates at their means (a transformed covariate such as ``np.log(x)`` at ``log(mean(x))``,
    as emmeans). Each marginal mean is ``l' b`` with ``l`` the equally weighted average of the
    grid's model-matrix rows in that cell; ``se = sqrt(l' V l)`` with ``V = fit.cov_coef`` (Kenward-Roger:
    pbkrtest's adjusted covariance). Intervals are ``emmean +- t_{df, (1+level)/2} se``, the normal
    quantile for ``df = inf`` (emmeans with ``lmer.df = "asymptotic"``).

    Examples
    --------
    >>> from mixeval.mixed import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=30)
    >>> fit = lmer("score ~ system + (1|item)", df)
    >>> emmeans(fit, "system")[["system", "emmean"]].round(3)
      system  emmean
    0      A  -0.304
    1      B   0.161
    2      C   0.824
    """
    level = require_level(level)
    margin, adjust = means_margin(delta, side, null, adjust)
    method, rule = chosen_df(fit, df)
    cells, L, _, by_list = marginal_means(fit, specs, by, data)
    inference = df_inference(fit, method)
    table = means_table(cells, L, np.asarray(fit.coef, dtype=float), inference, level)
    if margin is not None:
        table = means_tests(table, margin, adjust, by_list)
    return note_df_rule(table, rule)


def means_table(cells: pd.DataFrame, L: np.ndarray, coef: np.ndarray, inference: DfInference | np.ndarray,
                level: float, estimate: str = "emmean") -> pd.DataFrame:
    """The emmeans table of the cells with linear functions ``L`` (``inference``: a covariance for z intervals)."""
    if not isinstance(inference, DfInference):
        inference = DfInference("asymptotic", np.asarray(inference, dtype=float), None)
    V = inference.vcov
    est = L @ coef
    se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", L, V, L), 0.0))
    dof = inference.df(L)
    crit = sps.t.ppf(0.5 + level / 2, dof)
    out = cells.copy()
    out[estimate] = est
    out["se"] = se
    out["df"] = dof
    out["lower"] = est - crit * se
    out["upper"] = est + crit * se
    out = out.reset_index(drop=True)
    out.attrs["level"] = float(level)
    out = out if inference.fit is None else label_table(out, inference.fit, inference.method)
    return note_nonestimable(out, est)
