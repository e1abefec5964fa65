"""Tests on local metric accuracies: hypothesis A (equal accuracy across subsets) and hypothesis B
(the ordering of metrics changes across subsets), both resampling or weighting by evaluation context."""

from __future__ import annotations

import math
from collections.abc import Hashable

import numpy as np
import pandas as pd
from scipy import stats

from .._progress import progress
from .._random import as_generator
from .._results import TestResult
from .._validation import require_positive_int
from ..errors import InputError
from ._local import LocalAccuracyResult, _bootstrap_counts, _require_result

__all__ = ["accuracy_equality_test", "accuracy_equality_table", "rank_stability_test"]


# ----------------------------------------------------------------------------- hypothesis A


def accuracy_equality_test(result: LocalAccuracyResult, metric: Hashable | None = None) -> TestResult:
    """Hypothesis A: is a metric's local accuracy the same on every subset?

    A cluster-robust Wald test of ``H0: Acc_mu(Q_1) = ... = Acc_mu(Q_S)`` whose unit is the
    evaluation context, valid whether subsets share contexts (e.g. subsets = systems
    that all translate the same sentences) or not (subsets = domains).

    Parameters
    ----------
    result : LocalAccuracyResult
    metric : str, optional
        The metric to test; may be omitted when there is only one.

    Returns
    -------
    TestResult
        ``statistic`` F, ``df`` its numerator degrees of freedom, ``pvalue``; ``estimate``
        the range (max - min) of the local accuracies; ``details``: ``df_denominator``,
        ``wald`` (chi-square form), ``pvalue_chi2``, ``accuracies``, ``n_contexts``.

    Notes
    -----
    With ``w_xQ`` the per-context mean of context ``x`` in subset ``Q``, ``X_Q`` the contexts of
    ``Q`` and ``G`` the number of contexts overall, the accuracies ``a_Q`` have influence
    values ``psi_xQ = (w_xQ - a_Q) / |X_Q|`` (0 if ``x`` is not in ``Q``) and covariance
    ``V = G / (G - 1) sum_x psi_x psi_x'``. For contrasts ``C a`` (``a_Q - a_S``,
    ``Q < S``, rank ``r``): ``W = (C a)' (C V C')^+ (C a)`` and
    ``F = W (G - r) / ((G - 1) r) ~ F(r, G - r)``, which is Hotelling's T^2 test when every
    context appears in every subset. If ``C a`` lies outside the range of ``C V C'``
    (accuracies differ but have no sampling variance) ``F`` is infinite and the p-value 0.

    Examples
    --------
    >>> from mixeval.meta import example_translations, local_accuracy, score_pairs, word_error_rate
    >>> pairs = score_pairs(example_translations(), {"wer": word_error_rate}, context="reference",
    ...                     output="hypothesis", subset="system", context_id="context", random_state=1)
    >>> t = accuracy_equality_test(local_accuracy(pairs, lower_is_better=["wer"]))
    >>> round(t.statistic, 2), t.df, t.details["df_denominator"], t.pvalue < 1e-8
    (35.2, 2.0, 38.0, True)
    """
    res = _require_result(result)
    if metric is None:
        if len(res.metrics) != 1:
            raise InputError(f"`metric` is required when there are several metrics; choose one of {list(res.metrics)}.")
        j = 0
    else:
        if metric not in res.metrics:
            raise InputError(f"metric {metric!r} not in the result; metrics: {list(res.metrics)}.")
        j = res.metrics.index(metric)
    S = len(res.subsets)
    if S < 2:
        raise InputError("hypothesis A compares subsets: the result needs at least two subsets.")
    w = res.context_means[:, j, :]
    used = ~np.all(np.isnan(w), axis=1)
    w = w[used]
    G = w.shape[0]
    present = ~np.isnan(w)
    nq = present.sum(axis=0)
    a = np.nanmean(w, axis=0)
    psi = np.where(present, (np.nan_to_num(w) - a) / nq, 0.0)
    if G < 2:
        raise InputError("hypothesis A needs at least two contexts.")
    V = G / (G - 1) * psi.T @ psi
    C = np.hstack([np.eye(S - 1), -np.ones((S - 1, 1))])
    d = C @ a
    CVC = C @ V @ C.T
    scale = max(float(np.max(np.abs(np.diag(CVC)))), 1e-300)
    eigval, eigvec = np.linalg.eigh(CVC)
    keep = eigval > scale * 1e-10
    r = int(keep.sum())
    proj = eigvec[:, keep].T @ d
    resid = d - eigvec[:, keep] @ proj
    accuracies = {str(q): float(v) for q, v in zip(res.subsets, a)}
    if np.linalg.norm(resid) > 1e-12 * max(1.0, float(np.linalg.norm(d))):
        W, F, df1, df2, p, p_chi2 = math.inf, math.inf, max(r, 1), G - max(r, 1), 0.0, 0.0
    elif r == 0:
        W, F, df1, df2, p, p_chi2 = 0.0, 0.0, 0, G, 1.0, 1.0
    else:
        W = float(np.sum(proj**2 / eigval[keep]))
        df1, df2 = r, G - r
        if df2 < 1:
            raise InputError(
                f"hypothesis A with {S} subsets needs more than {r} contexts (has {G}); use fewer subsets."
            )
        F = W * df2 / ((G - 1) * df1)
        p = float(stats.f.sf(F, df1, df2))
        p_chi2 = float(stats.chi2.sf(W, df1))
    return TestResult(
        statistic=float(F),
        pvalue=float(p),
        df=float(df1),
        method=f"cluster-robust Wald F test of equal local accuracy across subsets ({res.metrics[j]})",
        estimate=float(np.max(a) - np.min(a)),
        details={
            "metric": res.metrics[j],
            "df_denominator": float(df2),
            "wald": float(W),
            "pvalue_chi2": float(p_chi2),
            "accuracies": accuracies,
            "n_contexts": {str(q): int(n) for q, n in zip(res.subsets, nq)},
        },
    )


def accuracy_equality_table(result: LocalAccuracyResult, *, adjust: str = "holm") -> pd.DataFrame:
    """Hypothesis A for every metric, with p-values adjusted for the number of metrics.

    Parameters
    ----------
    result : LocalAccuracyResult
    adjust : str, default "holm"
        Any method of :func:`mixeval._adjust.adjust_pvalues` (``"holm"``, ``"bonferroni"``,
        ``"hochberg"``, ``"bh"``, ``"by"``, ``"none"``).

    Returns
    -------
    DataFrame
        One row per metric: ``metric``, ``F``, ``df1``, ``df2``, ``pvalue``,
        ``pvalue_adjusted``, ``range`` (max - min local accuracy over subsets).

    Notes
    -----
    Each row is :func:`accuracy_equality_test`; the adjustment controls the family-wise
    error rate (or the false discovery rate for ``"bh"``/``"by"``) over the metrics.

    Examples
    --------
    >>> from mixeval.meta import example_translations, local_accuracy, score_pairs, word_error_rate, unigram_f1
    >>> pairs = score_pairs(example_translations(), {"wer": word_error_rate, "f1": unigram_f1},
    ...                     context="reference", output="hypothesis", subset="system",
    ...                     context_id="context", random_state=1)
    >>> table = accuracy_equality_table(local_accuracy(pairs, lower_is_better=["wer"]))
    >>> print(table[["metric", "df1", "df2"]].to_string(index=False))
    metric  df1  df2
        f1  2.0 38.0
       wer  2.0 38.0
    """
    from .._adjust import adjust_pvalues

    res = _require_result(result)
    tests = [accuracy_equality_test(res, metric=m) for m in res.metrics]
    p = np.array([t.pvalue for t in tests])
    return pd.DataFrame(
        {
            "metric": list(res.metrics),
            "F": [t.statistic for t in tests],
            "df1": [t.df for t in tests],
            "df2": [t.details["df_denominator"] for t in tests],
            "pvalue": p,
            "pvalue_adjusted": adjust_pvalues(p, adjust),
            "range": [t.estimate for t in tests],
        }
    )


# ----------------------------------------------------------------------------- hypothesis B


def _kendall_w(acc: np.ndarray) -> float:
    """Kendall's coefficient of concordance of the subsets' rankings of the metrics (ties corrected)."""
    M, S = acc.shape
    ranks = np.column_stack([stats.rankdata(-acc[:, k]) for k in range(S)])
    R = ranks.sum(axis=1)
    ssd = float(np.sum((R - R.mean()) ** 2))
    tie = 0.0
    for k in range(S):
        _, c = np.unique(ranks[:, k], return_counts=True)
        tie += float(np.sum(c**3 - c))
    denom = S**2 * (M**3 - M) - S * tie
    return 12.0 * ssd / denom if denom > 0 else 1.0


def rank_stability_test(
    result: LocalAccuracyResult,
    *,
    n_resamples: int = 1999,
    random_state: int | np.random.Generator | None = None,
) -> TestResult:
    """Hypothesis B: does the ordering of the metrics' local accuracies change across subsets?

    Tests ``H0``: for every pair of metrics, one is at least as accurate as the other on every
    subset (no reversal), against a reversal: some pair is ordered one way on one subset and
    the other way on another. The p-value comes from a bootstrap over contexts.

    Parameters
    ----------
    result : LocalAccuracyResult
        With at least two metrics, two subsets, and every metric scored on the same contexts
        of each subset (as :func:`score_pairs` produces).
    n_resamples : int, keyword-only
    random_state : int or numpy Generator, keyword-only

    Returns
    -------
    TestResult
        ``statistic``: the reversal statistic ``R``; ``pvalue``; ``estimate``: Kendall's W
        (concordance of the subsets' rankings of the metrics: 1 = the same ordering
        everywhere); ``null_distribution``; ``details["pairs"]``: per metric pair its
        largest ``t`` in each direction; ``details["ranking"]``: per subset the rank of each
        metric (1 = most accurate, ties averaged).

    Notes
    -----
    For metrics ``m, l`` and subset ``Q`` let ``delta_Q = Acc_m(Q) - Acc_l(Q)`` and
    ``t_Q = delta_Q / se_Q``, with ``se_Q`` the standard error of the mean over the contexts
    of ``Q`` of the per-context differences. A reversal needs evidence in both directions, so
    ``R = max_{m<l} min(max_Q t_Q, max_Q (-t_Q))`` (an intersection-union statistic).
    Under ``H0`` every pair has an order ``s`` (``+1`` if ``m`` is at least as accurate as
    ``l`` on every subset, else ``-1``) with ``s delta_Q >= 0`` for all ``Q``, hence
    ``R <= max_{m<l} max_Q -s (t_Q - delta_Q / se_Q)``: a one-sided maximum of centred
    statistics in the direction of a reversal. ``s`` is estimated by the direction with the
    stronger evidence (``max_Q t_Q`` versus ``max_Q -t_Q``); for a pair whose accuracies are
    equal on every subset either direction bounds ``R``, and for any other pair the estimate
    is consistent. The null distribution is that of ``max_{m<l} max_Q -s (t*_Q - t_Q)``
    over bootstrap resamples of the contexts (all subsets resampled jointly, keeping their
    dependence; ``t*`` uses the original standard errors), and
    ``p = (1 + #{R* >= R}) / (B + 1)``. The test is asymptotically valid at every
    configuration of ``H0`` and conservative away from its boundary (metrics clearly
    ordered everywhere). ``R <= 0`` (no observed reversal) gives ``p = 1``.

    Examples
    --------
    >>> from mixeval.meta import example_translations, local_accuracy, score_pairs, word_error_rate, unigram_f1
    >>> pairs = score_pairs(example_translations(), {"wer": word_error_rate, "f1": unigram_f1},
    ...                     context="reference", output="hypothesis", subset="length",
    ...                     context_id="context", random_state=1)
    >>> t = rank_stability_test(local_accuracy(pairs, lower_is_better=["wer"]), n_resamples=499, random_state=0)
    >>> 0 < t.pvalue <= 1
    True
    """
    res = _require_result(result)
    M, S = len(res.metrics), len(res.subsets)
    if M < 2 or S < 2:
        raise InputError(f"hypothesis B needs at least two metrics and two subsets; got {M} and {S}.")
    means = res.context_means
    present = ~np.isnan(means)
    if not np.all(present == present[:, :1, :]):
        raise InputError(
            "hypothesis B compares metrics on the same outputs: every metric must be scored on the "
            "same contexts of each subset (score_pairs does this); some (context, subset) cells "
            "have only some metrics."
        )
    B = require_positive_int(n_resamples, "n_resamples", minimum=1)
    rng = as_generator(random_state)
    G = means.shape[0]
    P = present[:, 0, :].astype(float)  # (G, S)
    nq = P.sum(axis=0)
    acc = np.nanmean(means, axis=0)  # (M, S)
    pairs = [(i, j) for i in range(M) for j in range(i + 1, M)]
    diffs = np.stack([means[:, i, :] - means[:, j, :] for i, j in pairs], axis=1)  # (G, npairs, S)
    delta = np.stack([acc[i] - acc[j] for i, j in pairs])  # (npairs, S)
    with np.errstate(invalid="ignore"):
        sd = np.nanstd(diffs, axis=0, ddof=1)
    se = np.where(nq > 1, sd / np.sqrt(np.maximum(nq, 1)), np.nan)

    def studentize(d: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            t = d / se
        t = np.where(se > 0, t, np.where(d > 0, np.inf, np.where(d < 0, -np.inf, 0.0)))
        return np.where(np.isnan(se), 0.0, t)

    t_obs = studentize(delta)
    up = t_obs.max(axis=1)
    down = (-t_obs).max(axis=1)
    R = float(np.max(np.minimum(up, down)))
    side = np.where(up >= down, 1.0, -1.0)  # +1: the first metric of the pair looks better

    values = np.nan_to_num(diffs).reshape(G, -1)
    null = np.empty(B)
    chunk = max(1, min(B, 2_000_000 // max(G, 1)))
    start = 0
    for counts in progress(_bootstrap_counts(G, B, rng, chunk), total=math.ceil(B / chunk), desc="bootstrap"):
        den = counts @ P  # (b, S)
        num = (counts @ values).reshape(counts.shape[0], len(pairs), S)
        with np.errstate(invalid="ignore", divide="ignore"):
            d_star = num / den[:, None, :]
            centred = (d_star - delta) / se
        centred = np.where((se > 0) & np.isfinite(centred), centred, 0.0)
        # one-sided, towards the reversal (the direction opposite to the pair's observed order)
        null[start : start + counts.shape[0]] = (-side[:, None] * centred).reshape(counts.shape[0], -1).max(axis=1)
        start += counts.shape[0]
    pvalue = 1.0 if R <= 0 else float((1 + np.sum(null >= R)) / (B + 1))

    pair_rows = {
        f"{res.metrics[i]} vs {res.metrics[j]}": {
            "max_t_first_better": float(up[p]) + 0.0,
            "max_t_second_better": float(down[p]) + 0.0,
            "reversal": float(min(up[p], down[p])) + 0.0,
        }
        for p, (i, j) in enumerate(pairs)
    }
    return TestResult(
        statistic=R,
        pvalue=pvalue,
        null_distribution=null,
        alternative="greater",
        method="bootstrap intersection-union test of a reversal in the ordering of metrics across subsets",
        estimate=_kendall_w(acc),
        details={
            "kendall_w": _kendall_w(acc),
            "pairs": pair_rows,
            "ranking": {
                str(q): {str(m): float(r) for m, r in zip(res.metrics, stats.rankdata(-acc[:, k]))}
                for k, q in enumerate(res.subsets)
            },
            "n_resamples": B,
        },
    )
