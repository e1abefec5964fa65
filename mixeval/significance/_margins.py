"""Tests of marginal means and contrasts against a margin, as emmeans' ``test(..., null, delta, side, adjust)``
and ``summary(..., infer = TRUE)`` compute them.

* :func:`margin_tests` -- emmeans' ``test()`` on a table of means or a result of contrasts (public);
* :func:`margin_spec` -- the test asked for by ``delta=``, ``side=`` (and ``null=`` for means), or None;
* :func:`margin_inference` -- statistics, one-sided p-values adjusted within families, and intervals matched to the
  test (one-sided for non-inferiority), with emmeans' rules for adjustments that do not apply (``tukey``,
  ``dunnettx`` become ``sidak`` for one-sided tests);
* :func:`means_tests` -- a table of marginal means with the tests added (``statistic``, ``pvalue``);
* :func:`contrast_tests` -- a :class:`~._pairwise.PairwiseResult` whose tests are the margin tests.

The statistic and the unadjusted p-value are :mod:`mixeval._margin`'s, shared with the log comparisons and the
Bradley-Terry contrasts; the step-wise adjustments are :mod:`mixeval._adjust`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import stats as sps

from .._adjust import adjust_pvalues
from .._margin import check_margin, hypothesis, margin_pvalue, margin_statistic, side_name
from ..errors import InputError
from ._adjustments import canonical_adjust
from ._simultaneous import dunnettx_critical_value, dunnettx_pvalue, mvt_adjusted
from ._tukey import ptukey, qtukey

__all__ = ["Margin", "MarginInference", "margin_spec", "margin_inference", "means_tests", "contrast_tests",
           "families_of", "margin_tests", "means_margin"]

#: ``adjust`` values of R's ``p.adjust`` (emmeans' spelling) and the name :func:`mixeval._adjust.adjust_pvalues` takes.
_P_ADJUST = {"holm": "holm", "bonferroni": "bonferroni", "BH": "bh", "hochberg": "hochberg", "BY": "by", "none": "none"}


@dataclass(frozen=True)
class Margin:
    """A test against a margin: ``side`` one of ``"equivalence"``, ``">"``, ``"<"`` (emmeans' ``delta > 0`` or a
    one-sided ``side``) or ``"two-sided"`` (a two-sided test of ``theta = null``), ``delta >= 0`` and ``null``."""

    delta: float
    side: str
    null: float = 0.0

    @property
    def tail(self) -> int:
        """The p-value's tail: 0 two-sided, -1 left (equivalence, ``"<"``), +1 right (``">"``)."""
        return {"two-sided": 0, "equivalence": -1, "<": -1, ">": 1}[self.side]

    @property
    def interval_tail(self) -> int:
        """The intervals' side (emmeans' ``side``): 0 two-sided (equivalence too), +1 ``[lower, inf)``, -1 ``(-inf,
        upper]``."""
        return {">": 1, "<": -1}.get(self.side, 0)

    def hypothesis(self, what: str) -> str:
        """The null hypothesis in words, about the quantity ``what``."""
        if self.side == "two-sided":
            return f"H0: {what} = {self.null:g} (two-sided)"
        return hypothesis(self.delta, self.side, self.null, what)

    @property
    def name(self) -> str:
        """emmeans' word for the test (``"equivalence"``, ``"noninferiority"``, ...)."""
        return "two-sided" if self.side == "two-sided" else side_name(self.side, self.delta)


def margin_spec(delta: object = None, side: object = None, null: object = None) -> Margin | None:
    """The margin test that ``delta``, ``side`` and ``null`` ask for, validated; None when all three are None.

    ``delta`` alone: equivalence (TOST, emmeans' default side with a margin); ``side=">"``/``"<"`` alone: a one-sided
    test of ``H0: theta <= null`` (``>= null``); ``null`` alone: the two-sided test of ``theta = null``.

    Examples
    --------
    >>> margin_spec(0.5), margin_spec(1.0, ">"), margin_spec(null=0.25)
    (Margin(delta=0.5, side='equivalence', null=0.0), Margin(delta=1.0, side='>', null=0.0), \
Margin(delta=0.0, side='two-sided', null=0.25))
    """
    if delta is None and side is None and null is None:
        return None
    if null is None:
        null = 0.0
    if isinstance(null, bool) or not isinstance(null, (int, float, np.integer, np.floating)) or not np.isfinite(null):
        raise InputError(f"null={null!r} must be a finite number: the value the estimates are tested against, on "
                         "their scale.")
    if delta is None and side is None:
        return Margin(0.0, "two-sided", float(null))
    d, s = check_margin(delta, side)
    return Margin(d, s, float(null))


@dataclass(frozen=True)
class MarginInference:
    """Statistics, p-values (unadjusted and adjusted) and intervals of margin tests, with the adjustments used."""

    statistic: np.ndarray
    p_raw: np.ndarray
    p_adj: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    adjust: str
    ci_method: str
    note: str


def families_of(table: pd.DataFrame, columns: Sequence[str]) -> list[np.ndarray]:
    """Row indices of each family: the rows sharing the values of ``columns`` (one family without columns)."""
    if not columns:
        return [np.arange(len(table))]
    codes = table.groupby(list(columns), sort=False, observed=True).ngroup().to_numpy()
    return [np.flatnonzero(codes == g) for g in range(codes.max() + 1)] if len(codes) else []


def _effective(adjust: str, tail: int, pairs: bool, m: int) -> tuple[str, str]:
    """emmeans' adjustment for one-sided tests or intervals (``.adj.p.value``/``.adj.critval``) and why it changed."""
    if m <= 1:
        return "none", ""
    if tail != 0 and adjust in ("tukey", "dunnettx"):
        return "sidak", f"adjust='{adjust}' was changed to 'sidak' because '{adjust}' is not appropriate for " \
                        "one-sided inferences (as emmeans)"
    if adjust == "tukey" and not pairs:
        return "sidak", "adjust='tukey' was changed to 'sidak' because 'tukey' is only appropriate for one set of " \
                        "pairwise comparisons (as emmeans)"
    return adjust, ""


def _interval_method(adjust: str, tail: int, pairs: bool, m: int) -> str:
    """emmeans' interval adjustment: the p.adjust step-wise methods have none, Bonferroni stands in."""
    method = adjust if adjust in ("sidak", "tukey", "dunnettx", "mvt", "none") else "bonferroni"
    return _effective(method, tail, pairs, m)[0]


def _critical(method: str, tail: int, level: float, m: int, n_spec: int, df: np.ndarray) -> np.ndarray:
    adiv = 1 if tail else 2
    if method == "none":
        return np.asarray(sps.t.ppf(1 - (1 - level) / adiv, df), dtype=float)
    if method == "sidak":
        return np.asarray(sps.t.ppf(1 - (1 - level ** (1 / m)) / adiv, df), dtype=float)
    if method == "bonferroni":
        return np.asarray(sps.t.ppf(1 - (1 - level) / m / adiv, df), dtype=float)
    if method == "tukey":
        return np.array([qtukey(level, n_spec, d) / np.sqrt(2) for d in df])
    return np.array([dunnettx_critical_value(level, m, d) for d in df])  # dunnettx (two-sided only)


def _p_adjusted(method: str, stat: np.ndarray, p: np.ndarray, df: np.ndarray, m: int, n_spec: int) -> np.ndarray:
    if method == "sidak":
        return 1 - (1 - p) ** m
    if method == "tukey":
        return np.clip(ptukey(np.sqrt(2) * np.abs(stat), n_spec, df, upper=True), 0.0, 1.0)
    if method == "dunnettx":
        return dunnettx_pvalue(stat, m, df)
    out = np.full(p.shape, np.nan)
    finite = np.isfinite(p)
    if finite.any():  # R's p.adjust: missing values keep their place and do not count in the family
        out[finite] = adjust_pvalues(p[finite], _P_ADJUST[method])
    return out


def margin_inference(estimate: np.ndarray, se: np.ndarray, df: np.ndarray, margin: Margin, adjust: str,
                     level: float, families: list[np.ndarray], *, n_spec: int = 0, pairs: bool = False,
                     correlations: list[np.ndarray] | None = None, random_state: int = 0) -> MarginInference:
    """Margin tests of ``estimate`` (with ``se`` and ``df``; ``inf``: z) adjusted within each family.

    Parameters
    ----------
    margin : Margin
    adjust : str
        The adjustment asked for (emmeans' names: ``"tukey"``, ``"dunnettx"``, ``"mvt"``, ``"sidak"``, ``"holm"``,
        ``"bonferroni"``, ``"BH"``, ``"hochberg"``, ``"BY"``, ``"none"``).
    families : list of index arrays
        The rows adjusted together (each ``by`` group).
    n_spec : int
        The number of means compared (Tukey's studentized range) when ``pairs``.
    pairs : bool
        The rows are all pairwise differences of ``n_spec`` means (the only case Tukey applies to).
    correlations : list of arrays, optional
        The correlation matrix of each family's estimates (``adjust="mvt"``).

    Notes
    -----
    Statistic and unadjusted p-value: :func:`mixeval._margin.margin_test` (two-sided tests: ``(est - null) / se``
    and ``2 P(T >= |t|)``). Within a family of ``m`` rows: ``sidak`` ``1 - (1 - p)^m``; the step-wise methods
    R's ``p.adjust``; ``mvt`` the one-sided single-step multivariate t; ``tukey`` and ``dunnettx`` only for
    two-sided tests (emmeans changes them to ``sidak`` for one-sided ones, and ``tukey`` to ``sidak`` outside all
    pairwise comparisons). Intervals: ``est -+ c se`` with ``c`` the two-sided critical value of the interval
    adjustment for ``side`` equivalence or two-sided, and the one-sided one (``[est - c se, inf)`` for ``">"``,
    ``(-inf, est + c se]`` for ``"<"``) otherwise, as emmeans' ``summary(infer = TRUE, side =)``.
    """
    estimate, se = np.asarray(estimate, dtype=float), np.asarray(se, dtype=float)
    df = np.where(np.isnan(np.asarray(df, dtype=float)), np.inf, np.asarray(df, dtype=float))
    df = np.broadcast_to(df, estimate.shape).astype(float)
    if margin.side == "two-sided":
        ok = np.isfinite(se) & (se > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            stat = np.where(ok, (estimate - margin.null) / np.where(ok, se, 1.0), np.nan)
        p_raw = np.asarray(2 * sps.t.sf(np.abs(stat), df), dtype=float)
    else:
        stat = margin_statistic(estimate, se, margin.delta, margin.side, margin.null)
        p_raw = margin_pvalue(stat, df, margin.side)
    p_adj = np.full(estimate.shape, np.nan)
    lower, upper = np.full(estimate.shape, -np.inf), np.full(estimate.shape, np.inf)
    used, ci_used, notes = "none", "none", []
    for f, rows in enumerate(families):
        m = len(rows)
        method, why = _effective(adjust, margin.tail, pairs, m)
        ci_method = _interval_method(adjust, margin.interval_tail, pairs, m)
        if why and why not in notes:
            notes.append(why)
        if m > 1:
            used, ci_used = method, ci_method
        if "mvt" in (method, ci_method):
            if correlations is None:
                raise InputError("adjust='mvt' needs the contrasts' joint distribution; use "
                                 "mixeval.significance.contrast(..., adjust='mvt').")
            if len(set(np.round(df[rows], 8))) > 1:
                raise InputError("adjust='mvt' needs one df for the whole family; these estimates have different "
                                 "Satterthwaite/Kenward-Roger df. Use df='asymptotic' or adjust='sidak'.")
            corr_f = correlations[f]
            p_mvt, c_mvt = mvt_adjusted(stat[rows], corr_f, float(df[rows][0]), level,
                                        tail=margin.tail, random_state=random_state)
        if method == "mvt":
            p_adj[rows] = p_mvt
        else:
            p_adj[rows] = _p_adjusted(method, stat[rows], p_raw[rows], df[rows], m, n_spec)
        crit: float | np.ndarray
        if ci_method == "mvt":
            crit = (mvt_adjusted(np.zeros(m), corr_f, float(df[rows][0]), level,
                                 tail=margin.interval_tail, random_state=random_state)[1]
                    if margin.interval_tail != margin.tail else c_mvt)
        else:
            crit = _critical(ci_method, margin.interval_tail, level, m, n_spec, df[rows])
        if margin.interval_tail >= 0:
            lower[rows] = estimate[rows] - crit * se[rows]
        if margin.interval_tail <= 0:
            upper[rows] = estimate[rows] + crit * se[rows]
    return MarginInference(stat, p_raw, np.clip(p_adj, 0.0, 1.0), lower, upper, used, ci_used, "; ".join(notes))


def _estimate_column(table: pd.DataFrame) -> str:
    """The estimate of a table of means or contrasts: the column before ``se``."""
    cols = list(table.columns)
    return cols[cols.index("se") - 1]


def means_tests(table: pd.DataFrame, margin: Margin, adjust: str, by: Sequence[str]) -> pd.DataFrame:
    """``table`` (marginal means) with emmeans' ``test(emm, null, delta, side, adjust)``: ``statistic`` (z for
    ``df = inf``, else t) and ``pvalue`` (adjusted within each ``by`` group; with an adjustment also
    ``pvalue_unadjusted``) after the intervals, which stay the means' two-sided, unadjusted ``level`` intervals
    (emmeans' ``confint(emm)``). ``attrs`` gain ``null`` (the hypothesis in words), ``side``, ``delta`` and
    ``test_adjust``; the note says both. A new table; ``table`` is not modified."""
    est_col = _estimate_column(table)
    families = families_of(table, list(by))
    dof = table["df"].to_numpy(dtype=float) if "df" in table.columns else np.full(len(table), np.inf)
    inf = margin_inference(table[est_col].to_numpy(), table["se"].to_numpy(), dof, margin, adjust,
                           float(table.attrs.get("level", 0.95)), families)
    out = table.copy()
    out.attrs = dict(table.attrs)
    out["statistic"] = inf.statistic
    out["pvalue"] = inf.p_adj
    if inf.adjust != "none":
        out["pvalue_unadjusted"] = inf.p_raw
    kind = "z" if np.all(np.isinf(dof)) else "t"
    within = f" within each {' x '.join(by)} group" if len(families) > 1 else ""
    adj = f"p-values adjusted by {inf.adjust}{within}" if inf.adjust != "none" else "p-values not adjusted"
    line = (f"Tests: {margin.hypothesis(est_col)}; statistic {kind}, {adj}" + (f" ({inf.note})" if inf.note else "")
            + "; intervals: two-sided, unadjusted")
    out.attrs.update(null=margin.hypothesis(est_col), side=margin.side, delta=margin.delta,
                     test_adjust=inf.adjust)
    out.attrs["note"] = (out.attrs.get("note", "") + "\n" if out.attrs.get("note") else "") + line
    return out


#: Ratio tables: the column of the ratio and the name of its logarithm, the scale the tests are on.
_RATIO = {"odds_ratio": "log odds ratio", "ratio": "log ratio"}


def contrast_tests(result, margin: Margin, *, correlations: list[np.ndarray] | None = None,
                   random_state: int = 0):
    """``result`` (a :class:`~._pairwise.PairwiseResult`) with its tests replaced by margin tests.

    The table's ``z``/``t`` column becomes ``statistic`` and ``pvalue`` (adjusted), ``pvalue_unadjusted``, ``lower``
    and ``upper`` are those of the margin tests (:func:`margin_inference`, each ``by`` group a family). Odds and rate
    ratios are tested on the log scale (emmeans tests ``type = "response"`` ratios on the link scale): ``delta``
    is a log ratio, and the intervals are exponentiated.
    """
    table = result.table
    est_col = _estimate_column(table)
    est = table[est_col].to_numpy(dtype=float)
    se = table["se"].to_numpy(dtype=float)
    what = "estimate"
    if est_col in _RATIO:
        with np.errstate(divide="ignore", invalid="ignore"):
            se = se / est
            est = np.log(est)
        what = _RATIO[est_col]
    dof = table["df"].to_numpy(dtype=float) if "df" in table.columns else np.full(len(table), np.inf)
    families = families_of(table, list(result.by))
    inf = margin_inference(est, se, dof, margin, result.adjust, result.level, families,
                           n_spec=result.family_size, pairs=result.method in ("pairwise", "revpairwise"),
                           correlations=correlations, random_state=random_state)
    lower, upper = (np.exp(inf.lower), np.exp(inf.upper)) if est_col in _RATIO else (inf.lower, inf.upper)
    out = table.copy()
    stat_col = "z" if "z" in out.columns else "t"
    out = out.rename(columns={stat_col: "statistic"})
    out["statistic"] = inf.statistic
    out["pvalue"] = inf.p_adj
    out["lower"], out["upper"] = lower, upper
    out["pvalue_unadjusted"] = inf.p_raw
    out.attrs = dict(table.attrs)
    out.attrs.update(null=margin.hypothesis(what), side=margin.side, delta=margin.delta, statistic=stat_col)
    return replace(result, table=out, adjust=inf.adjust, ci_method=inf.ci_method,
                   null_hypothesis=margin.hypothesis(what), test_note=inf.note, side=margin.side,
                   delta=margin.delta)


def _canonical_test_adjust(adjust: object) -> str:
    """An ``adjust`` for tests: :data:`~._adjustments.ADJUSTMENTS` or ``"sidak"``."""
    if isinstance(adjust, str) and adjust.strip().lower() == "sidak":
        return "sidak"
    return canonical_adjust(adjust)


def means_margin(delta: object, side: object, null: object, adjust: object) -> tuple[Margin | None, str]:
    """The test of marginal means that ``delta``/``side``/``null`` ask for (None for none) and its adjustment
    (default ``"none"``, emmeans' for means); an ``adjust`` without a test is refused."""
    margin = margin_spec(delta, side, null)
    if adjust is None:
        return margin, "none"
    if margin is None:
        raise InputError(f"adjust={adjust!r} adjusts tests of the means, and none was asked for; give delta=, side= "
                         "or null= (emmeans' test(emm, ...)), or drop adjust.")
    return margin, _canonical_test_adjust(adjust)


def margin_tests(result, *, delta: float | None = None, side: str | None = None, null: float | None = None,
                 adjust: str | None = None, by: str | Sequence[str] | None = None):
    """emmeans' ``test(object, null =, delta =, side =, adjust =)`` on a table of marginal means or on contrasts.

    Parameters
    ----------
    result : DataFrame or PairwiseResult
        Marginal means (:func:`~mixeval.significance.emmeans`, :func:`~mixeval.significance.emmeans_response`,
        :func:`~mixeval.significance.emmeans_ordinal`, :meth:`mixeval.Study.emmeans`) or contrasts
        (:func:`~mixeval.significance.pairwise`, :func:`~mixeval.significance.contrast`, the response-scale and
        ordinal contrasts, :meth:`mixeval.Study.pairwise`).
    delta : float, optional
        The margin, on the estimates' scale (odds and rate ratios: on the log scale, where emmeans tests them).
    side : {"equivalence", ">", "<"}, optional
        ``"equivalence"`` (the default with ``delta``): two one-sided tests of ``H0: |theta - null| >= delta``;
        ``">"``: ``H0: theta <= null - delta`` (non-inferiority when larger is better); ``"<"``: ``H0: theta >=
        null + delta``. Without ``delta``, ``">"``/``"<"`` test ``null`` one-sidedly.
    null : float, optional
        The value tested against (default 0); alone, a two-sided test of ``theta = null``.
    adjust : str, optional
        Means: the adjustment within each ``by`` group (default ``"none"``, emmeans'). Contrasts: default the
        result's own (Tukey and Dunnett's ``dunnettx`` become Sidak for one-sided tests, as emmeans).
    by : str or list of str, optional
        Means only: the columns whose groups are adjusted separately (the ``by`` of the means).

    Returns
    -------
    DataFrame or PairwiseResult
        A copy with ``statistic`` and ``pvalue`` (see :func:`~mixeval.significance.pairwise` for contrasts and
        :func:`~mixeval.significance.emmeans` for means), the hypothesis in ``attrs["null"]`` (contrasts: also
        ``null_hypothesis``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import mixeval
    >>> from mixeval.significance import margin_tests, pairwise
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(40), 2)
    >>> df = pd.DataFrame({"item": g, "system": np.tile(["full", "quantised"], 40)})
    >>> df["score"] = rng.normal(size=40)[g] + rng.normal(scale=0.5, size=80)
    >>> res = margin_tests(pairwise(mixeval.lmer("score ~ system + (1|item)", df), "system"), delta=0.5)
    >>> res.null_hypothesis.split(" (")[0], bool(res.table.pvalue[0] < 0.05)  # equivalent within 0.5
    ('H0: |estimate| >= 0.5', True)
    """
    if isinstance(result, pd.DataFrame):
        from ._grid import normalise_names

        margin, adjust_name = means_margin(delta, side, null, adjust)
        if margin is None:
            raise InputError("margin_tests() needs a test: give delta=, side= or null=.")
        by_list = normalise_names(by, "by")
        missing = [b for b in by_list if b not in result.columns]
        if missing:
            raise InputError(f"by={missing} are not columns of the table; its columns: {list(result.columns)}.")
        if "se" not in result.columns:
            raise InputError("the table has no 'se' column: give a table of marginal means (emmeans()).")
        return means_tests(result, margin, adjust_name, by_list)
    if not (hasattr(result, "table") and hasattr(result, "adjust") and hasattr(result, "family_size")):
        raise InputError(f"margin_tests() takes a table of marginal means or a PairwiseResult; got "
                         f"{type(result).__name__}.")
    if by is not None:
        raise InputError("by= groups a table of means; contrasts keep the families they were made with (their by).")
    if result.null_hypothesis:
        raise InputError("these contrasts are already tested against a margin; test the contrasts of the call "
                         "without delta=/side=.")
    margin = margin_spec(delta, side, null)
    if margin is None:
        raise InputError("margin_tests() needs a test: give delta=, side= or null=.")
    if adjust is not None:
        result = replace(result, adjust=_canonical_test_adjust(adjust))
    if result.adjust == "mvt":
        raise InputError("adjust='mvt' needs the contrasts' joint distribution: use mixeval.significance.contrast(..., "
                         "delta=, side=), or another adjust= here.")
    return contrast_tests(result, margin)
