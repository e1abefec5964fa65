"""Contrasts of estimated marginal means beyond all pairs (emmeans' ``contrast(emm, method = ...)``): treatment
versus control (Dunnett), consecutive levels, effects against the mean of the levels, and custom weights."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats as sps

from .._adjust import adjust_pvalues
from .._validation import require_level
from ..errors import InputError
from ._ddf import df_inference
from ._emmeans import marginal_means, means_table
from ._grid import combine_rows, level_label
from ._labels import chosen_df, fit_criterion, note_df_rule
from ._margins import contrast_tests, margin_spec
from ._pairwise import _PARENS, ADJUSTMENTS, PairwiseResult, contrast_result, effect_size_scale, pairwise
from ._simultaneous import dunnettx_critical_value, dunnettx_pvalue, mvt_adjusted

if TYPE_CHECKING:
    from ..mixed import MixedResult

__all__ = ["contrast", "CONTRAST_METHODS", "contrast_weights", "dunnettx_pvalue", "dunnettx_critical_value",
           "mvt_adjusted"]

#: ``method=`` values and emmeans' default ``adjust`` for each (a mapping of custom weights: ``"none"``).
CONTRAST_METHODS: dict[str, str] = {"pairwise": "tukey", "revpairwise": "tukey", "trt.vs.ctrl": "dunnettx",
                                    "trt.vs.ctrl1": "dunnettx", "trt.vs.ctrlk": "dunnettx", "dunnett": "dunnettx",
                                    "consec": "mvt", "eff": "BH", "del.eff": "BH"}
_EXTRA_ADJUST = {"sidak": "sidak", "dunnettx": "dunnettx", "mvt": "mvt"}


def contrast_weights(labels: Sequence[str], method: str | Mapping[str, Sequence[float]], *,
                     ref: str | None = None) -> tuple[list[str], np.ndarray]:
    """Names and weights (rows) of the contrasts of ``k`` means in level order (emmeans' ``.emmc`` functions).

    Examples
    --------
    >>> names, W = contrast_weights(["A", "B", "C"], "trt.vs.ctrl")
    >>> names, W.tolist()
    (['B - A', 'C - A'], [[-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]])
    >>> contrast_weights(["A", "B", "C"], "eff")[1].round(4).tolist()[0]
    [0.6667, -0.3333, -0.3333]
    """
    k = len(labels)
    if isinstance(method, Mapping):
        names, rows = [], []
        for name, weights in method.items():
            w = np.asarray(weights, dtype=float).ravel()
            if w.shape != (k,) or not np.all(np.isfinite(w)):
                raise InputError(f"custom contrast {name!r} needs {k} finite weights, one per level in the order "
                                 f"{list(labels)}; got {list(np.asarray(w).ravel())}.")
            names.append(str(name))
            rows.append(w)
        if not rows:
            raise InputError("`method` is an empty mapping; give at least one contrast {name: weights}.")
        return names, np.vstack(rows)
    eye = np.eye(k)
    if method in ("trt.vs.ctrl", "trt.vs.ctrl1", "trt.vs.ctrlk", "dunnett"):
        if ref is None:
            c = k - 1 if method == "trt.vs.ctrlk" else 0
        elif ref in labels:
            c = list(labels).index(ref)
        else:
            raise InputError(f"ref={ref!r} is not a level of the compared means; choose one of {list(labels)}.")
        others = [i for i in range(k) if i != c]
        return [f"{labels[i]} - {labels[c]}" for i in others], np.vstack([eye[i] - eye[c] for i in others])
    if ref is not None:
        raise InputError(f"ref= is used by the trt.vs.ctrl methods only; method={method!r} has no reference level.")
    if method == "pairwise":
        pairs = [(i, j) for i in range(k - 1) for j in range(i + 1, k)]
        return [f"{labels[i]} - {labels[j]}" for i, j in pairs], np.vstack([eye[i] - eye[j] for i, j in pairs])
    if method == "revpairwise":
        pairs = [(j, i) for j in range(1, k) for i in range(j)]
        return [f"{labels[j]} - {labels[i]}" for j, i in pairs], np.vstack([eye[j] - eye[i] for j, i in pairs])
    if method == "consec":
        return [f"{labels[i + 1]} - {labels[i]}" for i in range(k - 1)], np.vstack(
            [eye[i + 1] - eye[i] for i in range(k - 1)])
    if method == "eff":
        return [f"{lab} effect" for lab in labels], eye - 1.0 / k
    if method == "del.eff":
        return [f"{lab} effect" for lab in labels], (eye - 1.0 / k) * k / (k - 1)
    raise InputError(f"unknown contrast method={method!r}; choose one of {sorted(CONTRAST_METHODS)} or give custom "
                     "weights as {name: [w_1, ..., w_k]}.")


def _canonical(adjust: object, method: str | Mapping) -> str:
    if adjust is None:
        return CONTRAST_METHODS[method] if isinstance(method, str) and method in CONTRAST_METHODS else "none"
    if not isinstance(adjust, str):
        raise InputError(f"`adjust` must be a string such as 'holm'; got {adjust!r}.")
    key = adjust.strip().lower()
    out = ADJUSTMENTS.get(key) or _EXTRA_ADJUST.get(key)
    if out is None:
        raise InputError(f"unknown adjustment adjust={adjust!r}; choose one of 'dunnettx', 'mvt', 'sidak', 'holm', "
                         "'bonferroni', 'BH', 'hochberg', 'BY', 'none' (and 'tukey' for pairwise methods).")
    if out == "tukey" and method not in ("pairwise", "revpairwise"):
        raise InputError("adjust='tukey' is for all pairwise differences; for these contrasts use 'mvt' (exact "
                         "simultaneous), 'dunnettx', 'sidak', 'holm' or 'bonferroni'.")
    return out


def _family_inference(est, se, dof, C, V, adjust: str, level: float, m: int, random_state: int):
    """Unadjusted and adjusted p-values, the interval method and critical values, family by family (``m`` rows)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = est / se
    p_raw = 2 * sps.t.sf(np.abs(stat), dof)
    p_adj, crit = np.empty_like(p_raw), np.empty_like(p_raw)
    alpha = 1 - level
    for g in range(len(est) // m):
        b = slice(g * m, (g + 1) * m)
        if adjust == "mvt":
            if len(set(np.round(dof[b], 8))) > 1:
                raise InputError("adjust='mvt' needs one df for the whole family; these contrasts have different "
                                 "Satterthwaite/Kenward-Roger df. Use df='asymptotic' or adjust='dunnettx'/'sidak'.")
            cov = C[b] @ V @ C[b].T
            d = np.sqrt(np.diag(cov))
            p_adj[b], crit[b] = mvt_adjusted(stat[b], cov / np.outer(d, d), float(dof[b][0]), level,
                                             random_state=random_state)
        elif adjust == "dunnettx":
            p_adj[b] = dunnettx_pvalue(stat[b], m, dof[b])
            crit[b] = [dunnettx_critical_value(level, m, d) for d in dof[b]]
        elif adjust == "sidak":
            p_adj[b] = 1 - (1 - p_raw[b]) ** m
            crit[b] = sps.t.ppf(0.5 + (1 - alpha) ** (1 / m) / 2, dof[b])
        else:
            p_adj[b] = adjust_pvalues(p_raw[b], "bh" if adjust == "BH" else adjust.lower())
            crit[b] = sps.t.ppf(1 - alpha / 2, dof[b]) if adjust == "none" else sps.t.ppf(1 - alpha / (2 * m), dof[b])
    ci_method = {"mvt": "mvt", "dunnettx": "dunnettx", "sidak": "sidak", "none": "none"}.get(adjust, "bonferroni")
    if m == 1:
        ci_method = "none"
    return stat, p_raw, np.clip(p_adj, 0.0, 1.0), ci_method, crit


def contrast(fit: MixedResult, specs: str | Sequence[str], method: str | Mapping[str, Sequence[float]] = "trt.vs.ctrl",
             *, ref: str | None = None, by: str | Sequence[str] | None = None, adjust: str | None = None,
             level: float = 0.95, df: str | None = "asymptotic", data: pd.DataFrame | None = None,
             random_state: int | None = None, delta: float | None = None, side: str | None = None) -> PairwiseResult:
    """Contrasts of the marginal means of ``specs`` (emmeans' ``contrast(emmeans(fit, specs), method, ...)``).

    Parameters
    ----------
    fit : MixedResult
        A model fitted by :func:`mixeval.lmer` or :func:`mixeval.glmer` (link scale).
    specs : str or list of str
        Factor(s) whose means are contrasted (several: their level combinations, labelled ``"A x"``).
    method : str or mapping
        ``"trt.vs.ctrl"`` (every level minus the reference ``ref``, default the first; ``"trt.vs.ctrlk"``: the
        last; ``"dunnett"`` an alias), ``"pairwise"``, ``"revpairwise"``, ``"consec"`` (each level minus the one
        before), ``"eff"`` (each level minus the mean of all), ``"del.eff"`` (minus the mean of the others), or
        custom weights ``{name: [w_1, ..., w_k]}`` over the levels in order.
    ref : str, optional
        The control level of the trt.vs.ctrl methods (a level label).
    by : str or list of str, optional
        Contrasts within each level of ``by`` (each its own family for the adjustment).
    adjust : str, optional
        Default: emmeans' for the method (trt.vs.ctrl ``"dunnettx"``, consec ``"mvt"``, eff ``"BH"``, pairwise
        ``"tukey"``, custom ``"none"``). Also ``"mvt"`` (exact single-step simultaneous p-values and intervals from
        the contrasts' multivariate t/normal), ``"sidak"``, ``"holm"``, ``"bonferroni"``, ``"BH"``, ``"hochberg"``,
        ``"BY"``, ``"none"``.
    level : float, default 0.95
    df : {"asymptotic", "satterthwaite", "kenward-roger", "satterthwaite-upper"} or None, default "asymptotic"
        As :func:`emmeans` (``None``: emmeans' rule, Kenward-Roger for lmer fits of up to 3,000 rows).
    data : DataFrame, optional
        The fitted rows, only needed when the fit does not hold them.
    random_state : int, optional
        Seeds the quasi-Monte Carlo integration of ``adjust="mvt"`` (default 0; refused with other adjustments).
    delta, side : optional
        Test the contrasts against a margin (emmeans' ``test(contrast(...), delta =, side =)``): equivalence
        (``side="equivalence"``, the default with ``delta``), ``">"`` (``H0: estimate <= -delta``: each treatment
        is not worse than the control by more than ``delta``, when larger is better) or ``"<"``; see
        :func:`mixeval.significance.pairwise`. ``dunnettx`` becomes ``sidak`` for these one-sided tests (as
        emmeans); ``mvt`` integrates the one-sided joint distribution.

    Returns
    -------
    PairwiseResult
        ``table`` with ``contrast``, the ``by`` columns, ``estimate``, ``se``, ``df``, ``z``/``t``, ``pvalue``
        (adjusted), ``lower``, ``upper`` (simultaneous as ``ci_method`` says), ``pvalue_unadjusted``,
        ``effect_size``; ``method`` names the contrasts.

    Notes
    -----
    A contrast with weights ``w`` over the ``k`` means ``l_1' b, ..., l_k' b`` is ``c = sum_i w_i l_i``:
    estimate ``c' b``, ``se = sqrt(c' V c)``, ``t = c' b / se``. Adjustments within a family of ``m`` contrasts:
    Dunnett's ``dunnettx`` is emmeans' blend of the studentized range of ``(1 + sqrt(1 + 8 m)) / 2`` means and
    Sidak's ``F_{1,df}(t^2)^m`` with weight ``(m - 1) / m`` on the first; ``mvt`` integrates the joint
    distribution of the ``m`` statistics (correlation ``D^{-1/2} C V C' D^{-1/2}``) for
    ``P(max |T| >= |t|)``; Bonferroni intervals for the step-wise methods, as emmeans.

    Examples
    --------
    >>> import mixeval
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=30, systems=("base", "B", "C"))
    >>> res = contrast(mixeval.lmer("score ~ system + (1|item)", df), "system", "trt.vs.ctrl", ref="base")
    >>> res.table[["contrast", "estimate", "pvalue"]].round(4)
       contrast  estimate  pvalue
    0  B - base    0.4647  0.1031
    1  C - base    1.1277  0.0000
    """
    level = require_level(level)
    margin = margin_spec(delta, side)
    adjust_name = _canonical(adjust, method)
    if random_state is not None and adjust_name != "mvt":
        raise InputError(f"random_state seeds the integration of adjust='mvt'; adjust={adjust_name!r} is computed "
                         "exactly. Drop random_state.")
    if method == "pairwise" and ref is None and adjust_name == "tukey":
        return pairwise(fit, specs, by=by, adjust="tukey", level=level, df=df, data=data, delta=delta, side=side)
    df_method, rule = chosen_df(fit, df)
    cells, L, specs_list, by_list = marginal_means(fit, specs, by, data)
    n_spec = int(np.prod([cells[s].nunique() for s in specs_list]))
    if n_spec < 2:
        raise InputError(f"`specs` {specs_list} has a single level combination; there is nothing to contrast.")
    labels = [level_label(row) for row in cells[specs_list].iloc[:n_spec].itertuples(index=False)]
    labels = [f"({lab})" if _PARENS.search(lab) else lab for lab in labels]
    names, W = contrast_weights(labels, method, ref=ref)
    inference = df_inference(fit, df_method)
    if adjust_name == "tukey":  # revpairwise: the pairwise stage, signs reversed
        res = contrast_result(fit, cells, L, specs_list, by_list, "tukey", level, inference,
                              means_table(cells, L, np.asarray(fit.coef, dtype=float), inference, level))
        res = _revpairwise(res, names, len(names))
        return note_df_rule(res if margin is None else contrast_tests(res, margin), rule)
    m = len(names)
    rows, C_rows = [], []
    for base in range(0, len(cells) - len(cells) % n_spec, n_spec):
        block = L[base:base + n_spec]
        for name, w in zip(names, W):
            row = {"contrast": name}
            for b in by_list:
                row[b] = cells[b].iloc[base]
            rows.append(row)
            C_rows.append(combine_rows(w, block)[0])
    C = np.asarray(C_rows)
    coef = np.asarray(fit.coef, dtype=float)
    V = inference.vcov
    est = C @ coef
    se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", C, V, C), 0.0))
    dof = np.asarray(inference.df(C), dtype=float)
    seed = 0 if random_state is None else random_state
    # with a margin the tests are margin_inference's: the two-sided stage runs unadjusted (no integration)
    stat, p_raw, p_adj, ci_method, crit = _family_inference(est, se, dof, C, V, adjust_name if margin is None
                                                            else "none", level, m, seed)
    table = pd.DataFrame(rows)
    table["estimate"], table["se"], table["df"] = est, se, dof
    table["z" if inference.method == "asymptotic" else "t"] = stat
    table["pvalue"] = p_adj
    table["lower"], table["upper"] = est - crit * se, est + crit * se
    table.attrs["level"] = float(level)
    table["pvalue_unadjusted"] = p_raw
    sigma, scale = effect_size_scale(fit)
    if np.isfinite(sigma):
        table["effect_size"] = est / sigma
    res = PairwiseResult(table=table, emmeans=means_table(cells, L, coef, inference, level),
                         specs=tuple(specs_list), by=tuple(by_list), adjust=adjust_name, ci_method=ci_method,
                         level=level, family_size=n_spec, df_method=inference.method, sigma=sigma,
                         fit_criterion=fit_criterion(fit), effect_size_scale=scale,
                         method=method if isinstance(method, str) else "custom", n_per_family=m)
    if margin is not None:
        correlations = None
        if adjust_name == "mvt":
            blocks = [C[g:g + m] @ V @ C[g:g + m].T for g in range(0, len(C), m)]
            correlations = [b / np.outer(np.sqrt(np.diag(b)), np.sqrt(np.diag(b))) for b in blocks]
        res = contrast_tests(res, margin, correlations=correlations, random_state=seed)
    return note_df_rule(res, rule)


def _revpairwise(res: PairwiseResult, names: list[str], m: int) -> PairwiseResult:
    """emmeans' ``revpairwise``: the pairwise table with each contrast reversed (``j - i``), in its order."""
    t = res.table.copy()
    flip = {f"{a} - {b}": f"{b} - {a}" for a, b in (c.split(" - ", 1) for c in t["contrast"])}
    t["contrast"] = t["contrast"].map(flip)
    for col in ("estimate", "lower", "upper", "effect_size", "z", "t"):
        if col in t.columns:
            t[col] = -t[col]
    t["lower"], t["upper"] = t["upper"].copy(), t["lower"].copy()
    order = {n: i for i, n in enumerate(names)}
    t["_b"], t["_o"] = np.arange(len(t)) // m, t["contrast"].map(order)
    t = t.sort_values(["_b", "_o"], kind="stable").drop(columns=["_b", "_o"]).reset_index(drop=True)
    t.attrs = res.table.attrs
    return replace(res, table=t, method="revpairwise")
