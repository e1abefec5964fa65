"""All pairwise contrasts of estimated marginal means, adjusted for multiplicity (emmeans' ``pairs``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats as sps

from .._adjust import adjust_pvalues
from .._results import Result, pvalue_formatters
from .._validation import require_level
from ..errors import InputError
from ._adjustments import ADJUSTMENTS, canonical_adjust
from ._ddf import DfInference, df_inference
from ._emmeans import marginal_means, means_table
from ._grid import level_label
from ._labels import chosen_df, df_label, fit_criterion, note_df_rule
from ._margins import contrast_tests, margin_spec
from ._tukey import ptukey, qtukey

if TYPE_CHECKING:
    from ..mixed import MixedResult

__all__ = ["PairwiseResult", "pairwise", "contrast_result", "effect_size_scale", "ADJUSTMENTS", "tukey_pvalue",
           "tukey_critical_value"]

#: Accepted ``adjust`` values (case-insensitive) and the name reported for each (emmeans' spelling).
# emmeans' option "parens": levels matching this get parenthesised in contrast labels
_PARENS = re.compile(r"-|\+|/|\*")


def tukey_pvalue(z: np.ndarray, n_means: int, df: float | np.ndarray = np.inf) -> np.ndarray:
    """Tukey-adjusted p-values of pairwise z (or t) statistics among ``n_means`` means.

    ``P(Q_{k, df} >= sqrt(2) |z|)`` with ``Q`` the studentized range (R: ``ptukey(sqrt(2) *
    abs(z), k, df, lower.tail = FALSE)``); ``df`` is ``inf`` for z statistics and may differ per
    statistic. For ``k = 2`` this is the two-sided normal (or t) p-value.

    Examples
    --------
    >>> round(float(tukey_pvalue(np.array([1.8214765]), 3)[0]), 6)  # Table 4.2, Marking - PostEdit
    0.162529
    """
    z = np.abs(np.asarray(z, dtype=float))
    dfs = np.broadcast_to(np.asarray(df, dtype=float), z.shape)
    if n_means <= 2:
        return np.asarray(2 * sps.t.sf(z, dfs), dtype=float)
    p = ptukey(np.sqrt(2) * z, n_means, dfs, upper=True)
    return np.where(np.isfinite(z), np.clip(p, 0.0, 1.0), np.nan)


def tukey_critical_value(level: float, n_means: int, df: float = np.inf) -> float:
    """Critical value of Tukey-adjusted intervals: ``qtukey(level, k, df) / sqrt(2)``.

    Examples
    --------
    With two means the Tukey interval is the unadjusted one (``z_0.975 = 1.96``); three means widen it:

    >>> round(tukey_critical_value(0.95, 2), 4), round(float(tukey_critical_value(0.95, 3)), 4)
    (1.96, 2.3437)
    >>> round(float(tukey_critical_value(0.95, 3, df=20)), 4)  # qtukey(0.95, 3, 20) / sqrt(2) in R
    2.53
    """
    level = require_level(level)
    if n_means <= 2:
        return float(sps.t.ppf(0.5 + level / 2, df))
    return qtukey(level, n_means, df) / np.sqrt(2)


@dataclass(frozen=True, eq=False)
class PairwiseResult(Result):
    """Pairwise contrasts of estimated marginal means (or of trends, see :func:`pairwise_trends`).

    Attributes
    ----------
    table : DataFrame
        One row per contrast: ``contrast`` (``"Baseline - Marking"``), the ``by`` columns,
        ``estimate``, ``se``, ``df`` (``inf``: asymptotic), the statistic ``z`` (asymptotic) or ``t``
        (Satterthwaite, Kenward-Roger), ``pvalue`` (adjusted), ``lower``, ``upper`` (adjusted as
        ``ci_method`` says), ``pvalue_unadjusted`` and ``effect_size`` (``estimate / sigma``, the
        residual standard deviation of the fit; for a binomial GLMM the latent residual SD, ``sqrt(pi^2/3)``
        for the logit link and 1 for the probit link, so that ``effect_size`` is a latent-scale d; left out
        for a Poisson GLMM, which has no constant latent residual variance). Numbers are unrounded.
    emmeans : DataFrame
        The marginal means (or trends) compared (see :func:`emmeans`, :func:`emtrends`).
    specs, by : tuple of str
        The factors compared and the factors conditioned on.
    adjust : str
        The p-value adjustment (``"tukey"``, ``"holm"``, ``"bonferroni"``, ``"BH"``, ``"none"``, ...).
    ci_method : str
        How the intervals were adjusted: ``"tukey"``, ``"bonferroni"`` or ``"none"`` (also
        ``"none"`` when each family holds a single contrast, where every adjustment is the identity).
    level : float
        Confidence level.
    family_size : int
        Number of means per family (contrasts are adjusted within each ``by`` group).
    df_method : str
        ``"asymptotic"``, ``"satterthwaite"``, ``"kenward-roger"`` or ``"satterthwaite-upper"`` (experimental).
    fit_criterion : str
        The fit's criterion: ``"REML"``, ``"ML"`` (lmer), ``"Laplace"``, ``"AGQ (nAGQ = k)"`` or
        ``"restricted Laplace"`` (glmer); named in the printed notes.
    df_rule : str
        Why ``df_method`` was used when the caller left ``df`` out (a :class:`mixeval.Study` follows emmeans'
        default rule); ``""`` when ``df`` was given. Printed with the notes.
    null_hypothesis : str
        With ``delta=``/``side=``: the tests' null hypothesis in words (emmeans' ``test(..., delta, side)``: e.g.
        ``"H0: |estimate| >= 1"``, equivalence by two one-sided tests); ``""`` for the usual tests of 0.
    side : str
        ``"equivalence"``, ``">"`` (non-inferiority when larger is better), ``"<"`` or ``""`` (two-sided tests of 0).
    delta : float
        The margin of ``side`` (0 without one).
    test_note : str
        Why the p-value adjustment differs from the one asked for (emmeans changes ``tukey`` and ``dunnettx`` to
        ``sidak`` for one-sided tests); ``""`` otherwise.
    structural_zeros : str
        The contrasts that are exactly 0 by the model's structure (their linear function is 0: e.g. slopes of a
        covariate that has no interaction with the compared factor), reported with estimate 0, no statistic and no
        p-value, and why; ``""`` when there are none. Printed with the notes.
    method : str
        The contrasts: ``"pairwise"`` (this function), or those of :func:`contrast` (``"trt.vs.ctrl"``,
        ``"consec"``, ``"eff"``, ``"custom"``, ...).
    n_per_family : int or None
        Contrasts per family (``None``: all pairs of ``family_size`` means).
    scale : str
        What the estimates are: ``""`` (the model's scale), or for a GLMM's response scale a description
        (``"odds ratios"``; differences of probabilities conditional on the random effects at 0, ...).
    trend : str or None
        The numeric variable whose slopes are compared (:func:`pairwise_trends`); None for means.
    sigma : float
        The residual standard deviation dividing the estimates in ``effect_size``.
    effect_size_scale : str
        What ``sigma`` is (``"residual SD"``, or the latent residual SD of a GLMM), or why there is no
        ``effect_size`` column.

    Examples
    --------
    >>> from mixeval.mixed import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=30)
    >>> res = pairwise(lmer("score ~ system + (1|item)", df), "system")
    >>> res.adjust, res.ci_method, res.family_size, res.df_method
    ('tukey', 'tukey', 3, 'asymptotic')
    >>> res.emmeans[["system", "emmean"]].round(4)
      system  emmean
    0      A -0.3035
    1      B  0.1612
    2      C  0.8242
    >>> float(res.table.estimate[0]) == float(res.emmeans.emmean[0] - res.emmeans.emmean[1])  # A - B
    True
    """

    table: pd.DataFrame = field(repr=False)
    emmeans: pd.DataFrame = field(repr=False)
    specs: tuple[str, ...]
    by: tuple[str, ...]
    adjust: str
    ci_method: str
    level: float
    family_size: int
    df_method: str = "asymptotic"
    trend: str | None = None
    sigma: float = float("nan")
    effect_size_scale: str = "residual SD"
    fit_criterion: str = ""
    scale: str = ""
    method: str = "pairwise"
    n_per_family: int | None = None
    df_rule: str = ""
    structural_zeros: str = ""
    null_hypothesis: str = ""
    side: str = ""
    delta: float = 0.0
    test_note: str = ""

    @property
    def n_contrasts(self) -> int:
        return len(self.table)

    @property
    def effect_size_note(self) -> str | None:
        """What ``effect_size`` divides by, or why the table has none (None for tables never meant to have one)."""
        if "effect_size" in self.table.columns:
            what = "estimate" if "estimate" in self.table.columns else "log ratio"
            return f"effect_size = {what} / {self.effect_size_scale} ({self.sigma:.4g})"
        if self.effect_size_scale != "residual SD":
            return f"no effect_size column: {self.effect_size_scale}"
        return None

    def to_frame(self) -> pd.DataFrame:
        """A copy of :attr:`table`."""
        return self.table.copy()

    def to_dict(self) -> dict:
        """Plain-Python form: settings and the contrast rows."""
        return {"specs": list(self.specs), "by": list(self.by), "adjust": self.adjust, "ci_method": self.ci_method,
                "level": self.level, "df_method": self.df_method, "fit_criterion": self.fit_criterion,
                "scale": self.scale, "trend": self.trend, "sigma": self.sigma, "df_rule": self.df_rule,
                "null_hypothesis": self.null_hypothesis, "side": self.side, "delta": self.delta,
                "rows": self.table.to_dict(orient="records")}

    def _notes(self) -> list[str]:
        k = self.family_size
        m = k * (k - 1) // 2 if self.n_per_family is None else self.n_per_family
        where = f" within each level of {' x '.join(self.by)}" if self.by else ""
        notes = [f"Degrees-of-freedom method: {df_label(self.df_method)}"
                 + (f" ({self.df_rule})" if self.df_rule else ""), f"Confidence level used: {self.level:g}"]
        if self.fit_criterion:
            notes.insert(0, f"Fit criterion: {self.fit_criterion}")
        if self.scale:
            notes.insert(0, f"Scale: {self.scale}")
        if self.trend is not None:
            notes.insert(0, f"Contrasts of the slopes of {self.trend}")
        if self.method != "pairwise":
            notes.insert(0, f"Contrasts: {self.method}")
        if self.ci_method == "tukey":
            notes.append(f"Conf-level adjustment: tukey method for comparing a family of {k} estimates{where}")
        elif self.ci_method in ("bonferroni", "sidak", "mvt", "dunnettx"):
            notes.append(f"Conf-level adjustment: {self.ci_method} method for {m} estimates{where}")
        if m == 1:
            pass
        elif self.adjust == "tukey":
            notes.append(f"P value adjustment: tukey method for comparing a family of {k} estimates{where}")
        elif self.adjust != "none":
            notes.append(f"P value adjustment: {self.adjust} method for {m} tests{where}")
        if self.test_note:
            notes.append(f"Note: {self.test_note}")
        if self.null_hypothesis:
            notes.append(f"Tests: {self.null_hypothesis}")
            if self.side in (">", "<"):
                notes.append("Intervals are one-sided, matching the tests ("
                             + ("upper = inf" if self.side == ">" else "lower = -inf") + ")")
        if self.effect_size_note is not None:
            notes.append(self.effect_size_note)
        if self.structural_zeros:
            notes.append(self.structural_zeros)
        return notes

    def summary(self, digits: int = 4) -> str:
        """The contrast table rounded for display, with emmeans-style notes on the adjustment."""
        shown = self.table.drop(columns="pvalue_unadjusted")
        text = shown.to_string(index=False, float_format=lambda v: f"{v:.{digits}g}",
                               formatters=pvalue_formatters(shown, digits))
        return text + "\n\n" + "\n".join(self._notes())

    def __repr__(self) -> str:
        what = f", trend={self.trend!r}" if self.trend else ""
        return (f"PairwiseResult(specs={list(self.specs)}, by={list(self.by)}{what}, adjust={self.adjust!r}, "
                f"df={self.df_method!r}, n_contrasts={self.n_contrasts})")

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        shown = self.table.drop(columns="pvalue_unadjusted")
        notes = "".join(f"<br>{n}" for n in self._notes())
        return (shown.to_html(index=False, float_format=lambda v: f"{v:.4g}", formatters=pvalue_formatters(shown))
                + f"<p><small>{notes[4:]}</small></p>")


def pairwise(fit: MixedResult, specs: str | Sequence[str], *, by: str | Sequence[str] | None = None,
             adjust: str = "tukey", level: float = 0.95, df: str | None = "asymptotic",
             data: pd.DataFrame | None = None, delta: float | None = None,
             side: str | None = None) -> PairwiseResult:
    """All pairwise differences of the marginal means of ``specs`` (within each ``by`` group).

    Parameters
    ----------
    fit : LmerResult
        A model fitted by :func:`mixeval.lmer`.
    specs : str or list of str
        Factor(s) whose means are compared (several: all their level combinations).
    by : str or list of str, optional
        Factor(s) within whose levels the comparisons are made (``pairwise ~ system | cls``);
        each ``by`` group is its own family for the adjustment, as in emmeans.
    adjust : {"tukey", "holm", "bonferroni", "BH", "none"}, default "tukey"
        Multiplicity adjustment of the p-values (also ``"hochberg"``, ``"BY"``).
    level : float, default 0.95
        Confidence level of the intervals.
    df : {"asymptotic", "satterthwaite", "kenward-roger", "satterthwaite-upper"} or None, default "asymptotic"
        Degrees of freedom (emmeans' ``lmer.df``): z tests (the book's Table 4.2), lmerTest's Satterthwaite,
        pbkrtest's Kenward-Roger (adjusted covariance for the standard errors), or Satterthwaite with the
        components' parts at upper bounds (:func:`emmeans`). ``None``: emmeans' rule (Kenward-Roger for lmer fits of
        up to 3,000 rows, then Satterthwaite, then z; z for glmer fits), named in ``df_method`` and, with the
        reason, in ``df_rule``.
    data : DataFrame, optional
        The fitted rows, only needed when the fit does not hold them.
    delta : float, optional
        A margin: the contrasts are tested against it instead of against 0 (emmeans' ``test(pairs, delta =,
        side =)``), on the contrasts' scale. ``side="equivalence"`` (the default with ``delta``): two one-sided tests
        of ``H0: |estimate| >= delta``; ``">"``: ``H0: estimate <= -delta`` (the first level is not worse than the
        second by more than ``delta``, when larger is better); ``"<"``: ``H0: estimate >= delta`` (when smaller is
        better). ``side`` ``">"``/``"<"`` without ``delta`` are one-sided tests of 0.
    side : {"equivalence", ">", "<"}, optional
        See ``delta`` (emmeans' other spellings, ``"noninferiority"``, ``"nonsuperiority"``, 1, -1, are accepted).

    Returns
    -------
    PairwiseResult
        With ``delta``/``side`` the table's statistic column is ``statistic`` (z or t as ``df``) and ``pvalue``,
        ``pvalue_unadjusted``, ``lower``, ``upper`` are those of the margin tests; ``null_hypothesis`` says which.

    Raises
    ------
    InputError
        Unknown factors (the message lists the model's factors), numeric covariates named as
        factors, fewer than two levels to compare, an unknown ``adjust`` or ``df``.

    Notes
    -----
    For levels ``i < j`` (in level order) the contrast is ``c = l_i - l_j`` with ``l`` the
    marginal means' linear functions: estimate ``c' b``, ``se = sqrt(c' V c)`` (``V`` the fit's
    covariance of the fixed effects, Kenward-Roger's adjusted one for ``df="kenward-roger"``),
    statistic ``est / se``, unadjusted ``p = 2 P(T_df >= |est / se|)`` (normal for ``df = inf``).

    * Tukey: ``p = P(Q_{k,df} >= sqrt(2) |t|)`` with ``Q`` the studentized range of ``k`` means;
      intervals ``est +- q_{k,df}(level) / sqrt(2) * se`` (each contrast with its own df, as emmeans).
    * Holm, Bonferroni, BH, Hochberg, BY: R's ``p.adjust`` within each family of
      ``m = k (k - 1) / 2`` contrasts; intervals Bonferroni-adjusted, ``est +- t_{df, 1 - alpha / (2m)} se``
      (emmeans does the same: step-wise and FDR methods have no interval counterpart).
    * None: unadjusted p-values and intervals.

    Margin tests (emmeans' ``test(..., delta, side)``): equivalence ``t = (|est| - delta) / se`` with
    ``p = P(T_df <= t)``, the larger of the two one-sided p-values (Schuirmann's TOST); ``">"``
    ``t = (est + delta) / se``, ``p = P(T_df >= t)``; ``"<"`` ``t = (est - delta) / se``, ``p = P(T_df <= t)``.
    They are one-sided, so Tukey's adjustment becomes Sidak's ``1 - (1 - p)^m`` (as emmeans); Holm, BH and the
    others adjust the one-sided p-values. Intervals: two-sided (Tukey's) for equivalence, one-sided Sidak bounds
    for ``">"`` (``[lower, inf)``) and ``"<"``, as emmeans' ``summary(..., infer = TRUE)``. A TOST at level
    ``alpha`` declares equivalence exactly when the ``1 - 2 alpha`` interval lies inside ``+-delta``.

    ``effect_size = estimate / sigma`` with ``sigma`` the residual standard deviation of the fit: the
    standardized difference the book's companion code reports (``InferentialAnalysis``), also
    emmeans' ``eff_size(..., sigma = sigma(fit), edf = Inf)`` point estimate. It is a difference in
    units of the residual (within-item) noise, not of the total variance.

    Examples
    --------
    >>> from mixeval.mixed import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=30)
    >>> res = pairwise(lmer("score ~ system + (1|item)", df), "system")
    >>> res.table[["contrast", "estimate", "pvalue"]].round(4)
      contrast  estimate  pvalue
    0    A - B   -0.4647  0.1345
    1    A - C   -1.1277  0.0000
    2    B - C   -0.6630  0.0173
    """
    method = canonical_adjust(adjust)
    level = require_level(level)
    margin = margin_spec(delta, side)
    df_method, rule = chosen_df(fit, df)
    cells, L, specs_list, by_list = marginal_means(fit, specs, by, data)
    inference = df_inference(fit, df_method)
    result = contrast_result(fit, cells, L, specs_list, by_list, method, level, inference,
                             means_table(cells, L, np.asarray(fit.coef, dtype=float), inference, level))
    if margin is not None:
        result = contrast_tests(result, margin)
    return note_df_rule(result, rule)



def contrast_layout(cells: pd.DataFrame, specs_list: list[str], by_list: list[str],
                    parenthesize: bool = True) -> tuple[int, int, list[dict], list[tuple[int, int]]]:
    """The pairwise contrasts of the cells within each ``by`` group, as emmeans' ``pairs`` orders them.

    Returns ``(n_spec, m, rows, idx)``: the number of compared level combinations, the contrasts per
    group, one row per contrast (``contrast`` label and the ``by`` values) and the pair of cell indices
    ``(a, b)`` of each contrast (estimate ``a - b``). ``parenthesize`` wraps labels containing ``-`` or
    spaces in parentheses, as emmeans does.
    """
    n_spec = int(np.prod([cells[s].nunique() for s in specs_list]))
    if n_spec < 2:
        raise InputError(f"`specs` {specs_list} has a single level combination; there is nothing to compare.")
    labels = [level_label(row) for row in cells[specs_list].itertuples(index=False)]
    if parenthesize:
        labels = [f"({lab})" if _PARENS.search(lab) else lab for lab in labels]
    pairs = [(i, j) for i in range(n_spec - 1) for j in range(i + 1, n_spec)]
    rows: list[dict] = []
    idx: list[tuple[int, int]] = []
    for base in range(0, len(cells) - len(cells) % n_spec, n_spec):
        for i, j in pairs:
            row = {"contrast": f"{labels[base + i]} - {labels[base + j]}"}
            for b in by_list:
                row[b] = cells[b].iloc[base]
            rows.append(row)
            idx.append((base + i, base + j))
    return n_spec, len(pairs), rows, idx

def adjusted_inference(stat: np.ndarray, dof: np.ndarray, method: str, level: float, n_spec: int,
                       m: int) -> tuple[np.ndarray, np.ndarray, str, np.ndarray]:
    """Unadjusted and adjusted p-values, the interval method and the critical values of pairwise contrasts.

    The contrasts come in families of ``m`` consecutive rows (one per ``by`` group) of ``n_spec`` means.
    Tukey: the studentized range of ``n_spec`` means for p-values and intervals; other methods adjust the
    p-values within each family (statsmodels' ``multipletests``) with Bonferroni intervals (emmeans' rule),
    unadjusted intervals for ``"none"``. A family of one contrast has no adjustment (emmeans reports none).
    Returns ``(p_raw, p_adj, ci_method, crit)``.
    """
    p_raw = np.asarray(2 * sps.t.sf(np.abs(stat), dof), dtype=float)
    alpha = 1 - level
    if method == "tukey":
        p_adj = tukey_pvalue(stat, n_spec, dof)
        ci_method = "tukey"
        crit = np.array([tukey_critical_value(level, n_spec, d) for d in dof])
    else:
        p_adj = np.full_like(p_raw, np.nan)
        for g in range(len(p_raw) // m):
            block = np.arange(g * m, (g + 1) * m)
            block = block[np.isfinite(p_raw[block])]  # not NaN: contrasts a rank-deficient fit cannot estimate
            if block.size:  # (R's p.adjust leaves NA aside too)
                p_adj[block] = adjust_pvalues(p_raw[block], method.lower() if method != "BH" else "bh")
        ci_method = "none" if method == "none" else "bonferroni"
        crit = np.asarray(sps.t.ppf(1 - alpha / 2 if method == "none" else 1 - alpha / (2 * m), dof), dtype=float)
    if m == 1:
        ci_method = "none"
    return p_raw, p_adj, ci_method, crit


def contrast_result(fit: MixedResult, cells: pd.DataFrame, L: np.ndarray, specs_list: list[str], by_list: list[str],
                    method: str, level: float, inference: DfInference, means: pd.DataFrame,
                    trend: str | None = None) -> PairwiseResult:
    """The pairwise contrasts of the rows ``L`` of ``cells`` (stage shared by means and trends)."""
    coef = np.asarray(fit.coef, dtype=float)
    V = inference.vcov
    n_spec, m, rows, idx = contrast_layout(cells, specs_list, by_list)
    C = np.asarray([L[a] - L[b] for a, b in idx])
    zero = np.all(np.abs(C) <= 1e-12 * max(1.0, float(np.max(np.abs(L), initial=0.0))), axis=1)
    est = np.where(zero, 0.0, C @ coef)
    se = np.where(zero, 0.0, np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", C, V, C), 0.0)))
    dof = np.where(zero, np.nan, inference.df(C)) if np.any(zero) else inference.df(C)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = np.where(zero, np.nan, est / se)
    p_raw, p_adj, ci_method, crit = adjusted_inference(stat, dof, method, level, n_spec, m)
    sigma, scale = effect_size_scale(fit)
    table = pd.DataFrame(rows)
    table["estimate"] = est
    table["se"] = se
    table["df"] = dof
    table["z" if inference.method == "asymptotic" else "t"] = stat
    table["pvalue"] = p_adj
    table["lower"] = est - crit * se
    table["upper"] = est + crit * se
    table.attrs["level"] = float(level)
    table["pvalue_unadjusted"] = p_raw
    if np.isfinite(sigma):
        table["effect_size"] = est / sigma
    structural = ""
    if np.any(zero):
        names = ", ".join(str(c) for c in table.loc[zero, "contrast"])
        why = (f"the model has no {' x '.join(specs_list)} x {trend} term, so the slopes of {trend} are equal by "
               "construction" if trend is not None else "the model gives these cells the same linear function")
        structural = (f"{names}: exactly 0 by the model's structure, not estimated ({why}); no test is made "
                      "(statistic and p-value NaN)")
    return PairwiseResult(table=table, emmeans=means, specs=tuple(specs_list), by=tuple(by_list), adjust=method,
                          ci_method=ci_method, level=level, family_size=n_spec, df_method=inference.method,
                          trend=trend, sigma=sigma, fit_criterion=fit_criterion(fit),
                          effect_size_scale=scale, structural_zeros=structural)


def effect_size_scale(fit: MixedResult) -> tuple[float, str]:
    """The SD dividing contrasts in ``effect_size`` and what it is.

    A linear mixed model: the residual SD. A GLMM: the latent residual SD, the square root of the
    distribution-specific variance (pi^2/3 for the logit link, 1 for the probit link; Nakagawa & Schielzeth
    2010), so that ``effect_size`` is a d on the latent scale (emmeans' ``eff_size`` needs this ``sigma`` to be
    given for glmer fits); NaN for a Poisson GLMM, which has no constant latent residual variance.

    Examples
    --------
    >>> class Logit:
    ...     link, distribution_variance = "logit", float(np.pi ** 2 / 3)
    >>> sd, what = effect_size_scale(Logit())
    >>> round(sd, 4), what
    (1.8138, 'latent residual SD sqrt(pi^2/3) (logit link)')
    """
    if hasattr(fit, "sigma2"):
        return float(np.sqrt(fit.sigma2)), "residual SD"
    variance = float(getattr(fit, "distribution_variance", float("nan")))
    link = getattr(fit, "link", "?")
    if np.isfinite(variance):
        shown = "sqrt(pi^2/3)" if link == "logit" else f"sqrt({variance:g})"
        return float(np.sqrt(variance)), f"latent residual SD {shown} ({link} link)"
    return float("nan"), f"a {link}-link GLMM has no constant latent residual variance to standardise by"
