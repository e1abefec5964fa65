"""Marginal means and pairwise comparisons of a GLMM on the response scale (emmeans' ``type = "response"``).

* :func:`emmeans_response` -- marginal means on the response scale, named by the family
  (:attr:`~mixeval.mixed.families.Family.response_label`): probabilities (accuracy) of a binomial model, rates of
  a count model, proportions of a beta model. These are *conditional*: the mean of a typical item and seed
  (random effects at 0), as emmeans' ``type = "response"``; ``marginal=True`` gives the *marginal*
  (population-averaged) mean over items and seeds (:mod:`mixeval.significance._marginal`), which is what an
  evaluation reports. Where the family's mean is the inverse link the interval is the link-scale one
  back-transformed (emmeans'); an ordered beta model's mean ``E[y | eta]`` counts its exact 0s and 1s and moves
  with its cutpoints (emmeans and glmmTMB's ``predict`` report the inverse link, the mean of the beta part
  alone), so its standard error carries the cutpoints' uncertainty too;
* :func:`pairwise_ratios` -- pairwise contrasts on the family's ratio scale
  (:attr:`~mixeval.mixed.families.Family.ratio_name`): odds ratios (logit link) or rate ratios (log link),
  ``pairs(emmeans(fit, ~ system), type = "response")``;
* :func:`pairwise_differences` -- pairwise differences of the response-scale means (differences in accuracy)
  by the delta method: ``pairs(regrid(emmeans(fit, ~ system)))``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from .._validation import require_level
from ..errors import InputError
from ..mixed import MixedResult
from ._ddf import canonical_df, df_inference
from ._emmeans import marginal_means, means_table
from ._labels import fit_criterion, label_table
from ._marginal import response_moments
from ._pairwise import (
    PairwiseResult,
    adjusted_inference,
    canonical_adjust,
    contrast_layout,
    pairwise,
)

__all__ = ["emmeans_response", "pairwise_differences", "pairwise_ratios", "response_name", "scale_note"]

#: What the response-scale means are, as the tables' ``attrs["scale"]`` and the printed notes say.
CONDITIONAL = "response, conditional: a typical unit (random effects at 0)"
MARGINAL = "response, marginal: averaged over the random effects (population-averaged)"


def scale_note(marginal: bool) -> str:
    """The ``attrs["scale"]`` of a response-scale table: conditional (random effects at 0) or marginal."""
    return MARGINAL if marginal else CONDITIONAL


def _require_marginal_df(df: str) -> None:
    if canonical_df(df) != "asymptotic":
        raise InputError(f"marginal=True gives delta-method z intervals (df='asymptotic'); got df={df!r}. Use "
                         "df='asymptotic', or marginal=False for the conditional means with other df.")


def _family(fit: MixedResult):
    if not isinstance(fit, MixedResult) or fit.family.estimates_scale:
        raise InputError("response-scale means need a generalised linear mixed model fitted by mixeval.glmer().")
    return fit.family


def response_name(fit: MixedResult) -> str:
    """The column name of a response-scale mean: the family's :attr:`~mixeval.mixed.families.Family.response_label`
    (emmeans' ``prob`` for a binomial model, ``rate`` for a count model; ``proportion`` for a beta model)."""
    return _family(fit).response_label


def emmeans_response(fit: MixedResult, specs: str | Sequence[str], *, by: str | Sequence[str] | None = None,
                     level: float = 0.95, df: str = "asymptotic", marginal: bool = False) -> pd.DataFrame:
    """Estimated marginal means on the response scale (accuracy per system for a binary score).

    Parameters
    ----------
    fit : GlmerResult
    specs, by : str or sequence of str
        Factors of the means and of the groups, as :func:`~mixeval.significance.emmeans`.
    level : float, default 0.95
    df : {"asymptotic", "satterthwaite", "satterthwaite-upper"}, default "asymptotic"
        ``"asymptotic"``: z intervals on the link scale (emmeans for glmer fits); ``"satterthwaite"``: t
        intervals with the linearised model's Satterthwaite df (SAS GLIMMIX's ``DDFM=SATTERTHWAITE``,
        :mod:`mixeval.significance._glmm_ddf`), which cover closer to the nominal level when a variance
        component is estimated from few levels (seeds, prompt templates); ``"satterthwaite-upper"``: those
        df with each component's part of the variance at an upper bound, which stay near nominal where a
        component from 3 levels carries most of the variance (experimental;
        :mod:`mixeval.significance._satterthwaite`).
    marginal : bool, default False
        False: the conditional mean ``g^{-1}(l' b)``, the accuracy of a typical item and seed (random effects
        at 0; emmeans' ``type = "response"``). True: the marginal (population-averaged) mean
        ``E_b[g^{-1}(l' b + b)]`` over the random intercepts, the mean accuracy over items and seeds, with a
        delta-method z interval in ``(beta, theta)`` (:mod:`mixeval.significance._marginal`; ``df`` must be
        ``"asymptotic"``). emmeans' ``bias.adjust = TRUE`` is its second-order approximation.

    Returns
    -------
    DataFrame
        ``*specs``, ``*by``, ``prob`` (or ``rate``), ``se`` (delta method: ``mu_eta(eta) se_eta``), ``df``
        (inf for z), ``lower``, ``upper`` (the link-scale interval back-transformed, so it stays inside (0, 1));
        ``attrs``: ``scale`` (conditional or marginal), ``fit_criterion``, ``df_method`` and ``note``.

    Notes
    -----
    The mean is taken on the link scale over the reference grid and then back-transformed, as emmeans
    does with ``type = "response"``: ``g^{-1}(l' b)``; the interval is
    ``g^{-1}(l' b +- t_{df, (1 + level) / 2} se_eta)``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import glmer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(50), 2), "system": np.tile(["A", "B"], 50)})
    >>> df["correct"] = (rng.random(100) < np.where(df.system == "A", 0.6, 0.8)).astype(int)
    >>> table = emmeans_response(glmer("correct ~ system + (1|item)", df), "system")
    >>> list(table.columns)
    ['system', 'prob', 'se', 'df', 'lower', 'upper']
    """
    level = require_level(level)
    canonical_df(df)
    fam = _family(fit)
    cells, L, _, _ = marginal_means(fit, specs, by)
    if marginal:
        _require_marginal_df(df)
        return _marginal_table(fit, cells, L, level)
    inference = df_inference(fit, df)
    name = response_name(fit)
    out = cells.reset_index(drop=True).copy()
    if not fam.mean_is_inverse_link:  # the mean moves with the family's parameters: delta method in (beta, psi)
        mu, cov, G = response_moments(fit, L, inference.vcov)
        return _delta_table(fit, out, name, mu, cov, inference.df(G), inference.method, level, CONDITIONAL)
    link = means_table(cells, L, np.asarray(fit.coef, dtype=float), inference, level)
    out[name] = fam.linkinv(link.emmean.to_numpy())
    out["se"] = fam.mu_eta(link.emmean.to_numpy()) * link.se.to_numpy()
    out["df"] = link.df.to_numpy()
    out["lower"] = fam.linkinv(link.lower.to_numpy())
    out["upper"] = fam.linkinv(link.upper.to_numpy())
    out.attrs["level"] = float(level)
    return label_table(out, fit, inference.method, scale=CONDITIONAL)


def _marginal_table(fit: MixedResult, cells: pd.DataFrame, L: np.ndarray, level: float) -> pd.DataFrame:
    """The marginal means with z intervals on the link scale of the marginal mean, back-transformed."""
    mu, cov, _ = response_moments(fit, L, fit.cov_coef, marginal=True)
    out = cells.reset_index(drop=True).copy()
    return _delta_table(fit, out, response_name(fit), mu, cov, np.full(mu.size, np.inf), "asymptotic", level,
                        MARGINAL)


def _delta_table(fit: MixedResult, out: pd.DataFrame, name: str, mu: np.ndarray, cov: np.ndarray, dof: np.ndarray,
                 method: str, level: float, scale: str) -> pd.DataFrame:
    """Means ``mu`` with delta-method standard errors from ``cov`` and the interval on the link scale of each mean
    (``g(mu) -/+ t se / g^-1'(g(mu))``) back-transformed, so that it stays inside the response's range."""
    fam = fit.family
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    eta = fam.linkfun(mu)
    with np.errstate(divide="ignore", invalid="ignore"):
        se_link = se / fam.mu_eta(eta)
    dof = np.asarray(dof, dtype=float)
    crit = np.where(np.isfinite(dof), sps.t.ppf(0.5 + level / 2, np.where(np.isfinite(dof), dof, 1.0)),
                    sps.norm.ppf(0.5 + level / 2))
    out[name] = mu
    out["se"] = se
    out["df"] = dof
    out["lower"] = fam.linkinv(eta - crit * se_link)
    out["upper"] = fam.linkinv(eta + crit * se_link)
    out.attrs["level"] = float(level)
    return label_table(out, fit, method, scale=scale)


def pairwise_ratios(fit: MixedResult, specs: str | Sequence[str], *, by: str | Sequence[str] | None = None,
                    adjust: str = "tukey", level: float = 0.95, df: str = "asymptotic") -> PairwiseResult:
    """Pairwise contrasts as odds ratios (logit) or rate ratios (log link), emmeans' ``type = "response"``.

    The table has ``odds_ratio`` (or ``ratio``) ``= exp(estimate)``, ``se`` (delta method), ``df``, the
    statistic (``z``, or ``t`` with ``df="satterthwaite"``) and the adjusted ``pvalue`` of the link-scale
    test, and the link-scale (adjusted) interval exponentiated. ``df`` as :func:`emmeans_response`.

    Examples
    --------
    >>> from mixeval.mixed import glmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=40, systems=("A", "B"), n_raters=2, response="correct")
    >>> fit = glmer("correct ~ system + (1|item)", df, family="binomial")
    >>> res = pairwise_ratios(fit, "system")
    >>> res.table[["contrast", "odds_ratio", "pvalue"]].round(4)  # exp(-0.6371): the odds of A are 0.53 times B's
      contrast  odds_ratio  pvalue
    0    A / B      0.5288  0.0547
    """
    fam = _family(fit)
    name = fam.ratio_name
    if name is None:
        why = ("its mean is not the inverse link (the exact 0s and 1s move it)" if not fam.mean_is_inverse_link
               else f"a difference on the {fam.link} scale is no ratio")
        raise InputError(f"family={fam.name!r} (link={fam.link!r}) has no ratio scale: {why}. Use "
                         "pairwise_differences (scale='difference': differences of the response-scale means) or the "
                         "link scale (scale='link').")
    res = pairwise(fit, specs, by=by, adjust=adjust, level=level, df=df)
    t = res.table.copy()
    stat = "z" if res.df_method == "asymptotic" else "t"
    ratio = np.exp(t.estimate.to_numpy())
    cols = [c for c in t.columns if c not in ("estimate", "se", "z", "t", "pvalue", "lower", "upper",
                                              "pvalue_unadjusted")]
    out = t[cols].copy()
    out[name] = ratio
    out["se"] = ratio * t.se.to_numpy()
    out[stat] = t[stat].to_numpy()
    out["pvalue"] = t.pvalue.to_numpy()
    out["lower"] = np.exp(t.lower.to_numpy())
    out["upper"] = np.exp(t.upper.to_numpy())
    out["pvalue_unadjusted"] = t.pvalue_unadjusted.to_numpy()
    out["contrast"] = out["contrast"].str.replace(" - ", " / ", regex=False)
    emm = emmeans_response(fit, specs, by=by, level=level, df=df)
    what = {"odds_ratio": "odds ratios", "ratio": "rate ratios"}.get(name, name)
    return PairwiseResult(table=out, emmeans=emm, specs=res.specs, by=res.by, adjust=res.adjust,
                          ci_method=res.ci_method, level=res.level, family_size=res.family_size,
                          df_method=res.df_method, fit_criterion=res.fit_criterion,
                          scale=f"{what} (conditional on the random effects, as emmeans' type = \"response\")",
                          sigma=res.sigma, effect_size_scale=res.effect_size_scale)


def pairwise_differences(fit: MixedResult, specs: str | Sequence[str], *, by: str | Sequence[str] | None = None,
                         adjust: str = "tukey", level: float = 0.95, df: str = "asymptotic",
                         marginal: bool = False) -> PairwiseResult:
    """Pairwise differences of the response-scale means (differences in accuracy), delta method.

    ``df`` as :func:`emmeans_response`: ``"asymptotic"`` (z, emmeans'), ``"satterthwaite"`` or
    ``"satterthwaite-upper"`` (experimental). ``marginal=True``: differences of the marginal
    (population-averaged) means, delta method in ``(beta, theta)`` jointly, z tests (see
    :func:`emmeans_response`).

    Notes
    -----
    With ``p = g^{-1}(L b)`` and ``G = diag(mu_eta(L b)) L``, ``Cov(p) = G V G'``; a contrast ``c`` of the
    means has estimate ``c' p`` and ``se = sqrt(c' G V G' c)`` (emmeans' ``regrid`` followed by ``pairs``).
    With ``df="satterthwaite"`` (or ``"satterthwaite-upper"``) the contrast is treated as the linear function
    ``c' G`` of the fixed effects (``G`` at the estimate), whose Satterthwaite df gives ``t`` tests and
    intervals.
    Adjustments as :func:`~mixeval.significance.pairwise`.

    Examples
    --------
    >>> from mixeval.mixed import glmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=40, systems=("A", "B"), n_raters=2, response="correct")
    >>> fit = glmer("correct ~ system + (1|item)", df, family="binomial")
    >>> res = pairwise_differences(fit, "system")
    >>> res.emmeans[["system", "prob"]].round(4)
      system    prob
    0      A  0.3951
    1      B  0.5525
    >>> res.table[["contrast", "estimate", "se", "pvalue"]].round(4)  # 0.3951 - 0.5525
      contrast  estimate      se  pvalue
    0    A - B   -0.1575  0.0806  0.0507
    """
    fam = _family(fit)
    method = canonical_adjust(adjust)
    level = require_level(level)
    canonical_df(df)
    if marginal:
        _require_marginal_df(df)
    inference = df_inference(fit, df)
    cells, L, specs_list, by_list = marginal_means(fit, specs, by)
    p, cov_p, G = response_moments(fit, L, inference.vcov, marginal=marginal)
    n_spec, m, rows, idx = contrast_layout(cells, specs_list, by_list, parenthesize=False)
    C = np.zeros((len(idx), len(cells)))
    for k, (a, b) in enumerate(idx):
        C[k, a], C[k, b] = 1.0, -1.0
    est = C @ p
    se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", C, cov_p, C), 0.0))
    dof = inference.df(C @ G)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = est / se
    p_raw, p_adj, ci_method, crit = adjusted_inference(z, dof, method, level, n_spec, m)
    table = pd.DataFrame(rows)
    table["estimate"] = est
    table["se"] = se
    if inference.method != "asymptotic":
        table["df"] = dof
    table["z" if inference.method == "asymptotic" else "t"] = z
    table["pvalue"] = p_adj
    table["lower"] = est - crit * se
    table["upper"] = est + crit * se
    table.attrs["level"] = float(level)
    table["pvalue_unadjusted"] = p_raw
    emm = emmeans_response(fit, specs, by=by, level=level, df=df, marginal=marginal)
    return PairwiseResult(table=table, emmeans=emm, specs=tuple(specs_list), by=tuple(by_list), adjust=method,
                          ci_method=ci_method, level=level, family_size=n_spec, df_method=inference.method,
                          fit_criterion=fit_criterion(fit),
                          scale=f"differences of {fam.response_plural}, " + scale_note(marginal).split(", ", 1)[1],
                          effect_size_scale=f"differences of {fam.response_plural} are not standardised (the ratio "
                                            "or the link scale gives the latent-scale effect_size)")
