"""Local metric accuracy per subset of outputs, and tests of hypotheses A and B.

Implements Deviyani & Diaz, *Measuring Local Accuracies to Assess Evaluation
Metrics*: how often a metric scores an output above its degraded (perturbed)
version, per subset of outputs, with confidence intervals and tests whose unit
of resampling is the evaluation context ``x``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._progress import progress
from .._results import Result, TestResult
from .._validation import (
    require_columns,
    require_dataframe,
    require_no_missing,
    require_numeric_column,
    require_positive_int,
    require_probability,
)
from ..errors import InputError, InputTypeError
from ._perturb import DropWords, Perturbation, as_generator

__all__ = [
    "score_pairs",
    "local_accuracy",
    "LocalAccuracyResult",
    "accuracy_equality_test",
    "accuracy_equality_table",
    "rank_stability_test",
    "plot_local_accuracy",
]

Metric = Callable[[Any, Any], float]


# ----------------------------------------------------------------------------- scoring pairs


def score_pairs(
    data: pd.DataFrame,
    metrics: Mapping[str, Metric],
    *,
    context: str,
    output: str,
    subset: str,
    context_id: str | None = None,
    perturbation: Perturbation | None = None,
    random_state: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """Perturb every output once and score the pair (output, perturbed output) with each metric.

    Parameters
    ----------
    data : DataFrame
        One row per system output ``y``.
    metrics : mapping name -> callable ``metric(context, output) -> float``
        The metrics to meta-evaluate, e.g. ``{"wer": word_error_rate}``.
    context : str
        Column passed as the metric's first argument (e.g. the reference).
    output : str
        Column with the system outputs ``y``.
    subset : str
        Column naming the subset of outputs ``Q`` each output belongs to.
    context_id : str, optional
        Column identifying the evaluation context ``x`` (the unit of averaging and
        resampling); defaults to ``context``.
    perturbation : callable ``(output, rng) -> output``, default ``DropWords(0.2)``
        The degrading perturbation; see :class:`DropWords`, :class:`RandomTranspositions`.
    random_state : int, numpy Generator or None
        Seed of the perturbations (rows are perturbed in order, one shared stream).

    Returns
    -------
    DataFrame
        Long format, one row per (output, metric): ``row`` (index label in ``data``),
        ``context``, ``subset``, ``metric``, ``score`` (``metric(x, y)``), ``perturbed``
        (``metric(x, y')``) -- ready for :func:`local_accuracy`. All metrics judge the
        same perturbed output ``y'``.

    Examples
    --------
    >>> from mixeval.meta import example_translations, word_error_rate
    >>> pairs = score_pairs(example_translations(), {"wer": word_error_rate},
    ...                     context="reference", output="hypothesis", subset="system",
    ...                     context_id="context", random_state=0)
    >>> pairs.columns.tolist()
    ['row', 'context', 'subset', 'metric', 'score', 'perturbed']
    """
    require_dataframe(data)
    if not isinstance(metrics, Mapping) or not metrics:
        raise InputTypeError("`metrics` must be a non-empty mapping of name -> callable metric(context, output).")
    for name, f in metrics.items():
        if not callable(f):
            raise InputTypeError(f"metric {name!r} must be callable as metric(context, output) -> float; got {f!r}.")
    cid = context if context_id is None else context_id
    cols = list(dict.fromkeys([context, output, subset, cid]))
    require_columns(data, cols)
    require_no_missing(data, cols)
    pert = DropWords() if perturbation is None else perturbation
    if not callable(pert):
        raise InputTypeError(f"`perturbation` must be a callable (output, rng) -> output; got {pert!r}.")
    rng = as_generator(random_state)
    ctx_values = data[context].tolist()
    outputs = data[output].tolist()
    perturbed_outputs = [pert(o, rng) for o in outputs]
    frames = []
    for name, f in metrics.items():
        s = np.array([_call_metric(f, name, c, o) for c, o in zip(ctx_values, outputs)], dtype=float)
        sp = np.array([_call_metric(f, name, c, o) for c, o in zip(ctx_values, perturbed_outputs)], dtype=float)
        frames.append(
            pd.DataFrame(
                {
                    "row": data.index.to_numpy(),
                    "context": data[cid].to_numpy(),
                    "subset": data[subset].to_numpy(),
                    "metric": name,
                    "score": s,
                    "perturbed": sp,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def _call_metric(f: Metric, name: str, c: Any, o: Any) -> float:
    value = f(c, o)
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputTypeError(f"metric {name!r} must return a number; it returned {value!r}.") from None
    if not math.isfinite(v):
        raise InputError(f"metric {name!r} returned {v} for output {o!r}; metrics must return finite numbers.")
    return v


# ----------------------------------------------------------------------------- local accuracy


@dataclass(frozen=True, eq=False)
class LocalAccuracyResult(Result):
    """Local accuracies of several metrics on several subsets of outputs.

    Attributes
    ----------
    table : DataFrame
        One row per (metric, subset): ``metric``, ``subset``, ``accuracy``,
        ``n_contexts``, ``n_pairs``, ``se``, ``ci_low``, ``ci_high`` (unrounded).
    metrics, subsets : tuple
        Their order in the table and in ``context_means``.
    contexts : numpy.ndarray
        The context ids ``x`` (the unit of resampling).
    context_means : numpy.ndarray, shape (n_contexts, n_metrics, n_subsets)
        ``1/|Q_x| sum_{(y, y') in Q_x} 1[mu(x, y) > mu(x, y')]``; NaN where context ``x``
        has no pair in the subset.
    n_pairs : numpy.ndarray, shape (n_contexts, n_metrics, n_subsets)
        ``|Q_x|``.
    level : float
        Confidence level of the intervals.
    ci_method : str
        ``"wilson"``, ``"t"`` or ``"bootstrap"``.
    ties : str
        ``"fail"`` or ``"half"``.
    """

    table: pd.DataFrame
    metrics: tuple[Hashable, ...]
    subsets: tuple[Hashable, ...]
    contexts: np.ndarray
    context_means: np.ndarray
    n_pairs: np.ndarray
    level: float
    ci_method: str
    ties: str

    def accuracy_matrix(self) -> pd.DataFrame:
        """Local accuracy as a metric x subset table (the seed's X/Y/Z table)."""
        return self.table.pivot(index="metric", columns="subset", values="accuracy").loc[
            list(self.metrics), list(self.subsets)
        ]

    def ranking(self) -> pd.DataFrame:
        """Rank of each metric within each subset (1 = most accurate; ties get the average rank)."""
        return self.accuracy_matrix().rank(axis=0, ascending=False, method="average")

    def summary(self) -> str:
        """The table as text."""
        head = (
            f"Local metric accuracy ({len(self.metrics)} metric(s), {len(self.subsets)} subset(s), "
            f"{self.contexts.size} contexts; {100 * self.level:g}% CI: {self.ci_method}; ties: {self.ties})"
        )
        return head + "\n" + self.table.to_string(index=False)

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return self.table.to_html(index=False)

    def plot(self, ax: Any = None) -> Any:
        """See :func:`plot_local_accuracy`."""
        return plot_local_accuracy(self, ax=ax)


def _ordered_unique(series: pd.Series) -> list[Hashable]:
    if isinstance(series.dtype, pd.CategoricalDtype):
        present = set(series.unique().tolist())
        return [c for c in series.cat.categories if c in present]
    values = pd.unique(series).tolist()
    try:
        return sorted(values)
    except TypeError:
        return values


def local_accuracy(
    pairs: pd.DataFrame,
    *,
    context: str = "context",
    subset: str = "subset",
    metric: str = "metric",
    score: str = "score",
    perturbed: str = "perturbed",
    subsets: Sequence[Hashable] | None = None,
    lower_is_better: Collection[str] = (),
    ties: str = "fail",
    level: float = 0.95,
    ci: str = "wilson",
    n_resamples: int = 1999,
    random_state: int | np.random.Generator | None = None,
) -> LocalAccuracyResult:
    """Local accuracy ``Acc_mu(Q)`` of each metric on each subset of outputs, with confidence intervals.

    Parameters
    ----------
    pairs : DataFrame
        One row per (output ``y``, metric): the context id, the subset, the metric name,
        the metric's score of ``y`` and of its perturbed version ``y'`` (e.g. from
        :func:`score_pairs`, or precomputed).
    context, subset, metric, score, perturbed : str
        Column names.
    subsets : sequence, optional
        Subsets to report, in this order (default: all, sorted). Naming a subset without
        pairs raises an error.
    lower_is_better : collection of str
        Metrics for which a lower score is better (error rates such as WER): the pair
        counts as correct when ``mu(x, y) < mu(x, y')``.
    ties : {"fail", "half"}
        A tied pair counts 0 (the seed's strict ``>``, default) or 1/2.
    level : float
        Confidence level of the intervals.
    ci : {"wilson", "t", "bootstrap"}
        ``"wilson"`` (default): Wilson score interval with the design-based effective sample
        size (see Notes); ``"t"``: ``Acc +- t_{|X|-1} se``, clipped to [0, 1];
        ``"bootstrap"``: percentile interval of a bootstrap over contexts.
    n_resamples, random_state
        For ``ci="bootstrap"`` only.

    Returns
    -------
    LocalAccuracyResult

    Notes
    -----
    ``Acc_mu(Q) = 1/|X| sum_{x in X} 1/|Q_x| sum_{(y, y') in Q_x} 1[mu(x, y) > mu(x, y')]``
    where ``X`` is the set of contexts with at least one pair in ``Q`` and ``Q_x`` the pairs
    of context ``x`` in ``Q``. The accuracy is a mean of ``|X|`` independent per-context
    means (contexts are the sampling units; pairs of one context are dependent), so its
    standard error is ``se = sd_x / sqrt(|X|)``.

    Local accuracies are often close to 1, where symmetric intervals under-cover (measured:
    the t interval covers 0.88 at accuracy 0.95 with 40 contexts, 0.79 at 0.976 with 30).
    The default therefore is a Wilson score interval computed with the effective sample size
    ``n_eff = Acc (1 - Acc) / se^2`` (at most the number of pairs; the number of contexts
    when ``se = 0`` or ``Acc`` is 0 or 1), in the spirit of Korn & Graubard (1998) for
    proportions from clustered samples: ``(Acc + z^2 / (2 n_eff) +- z sqrt(Acc (1 - Acc) /
    n_eff + z^2 / (4 n_eff^2))) / (1 + z^2 / n_eff)``; it measured 0.95-0.97 in the same
    settings. With a single context the interval is NaN.

    Examples
    --------
    >>> from mixeval.meta import example_translations, score_pairs, word_error_rate, unigram_f1, chrf
    >>> data = example_translations()
    >>> pairs = score_pairs(data, {"wer": word_error_rate, "f1": unigram_f1, "chrf": chrf},
    ...                     context="reference", output="hypothesis", subset="system",
    ...                     context_id="context", random_state=1)
    >>> res = local_accuracy(pairs, lower_is_better=["wer"])
    >>> res.accuracy_matrix().round(3)  # doctest: +NORMALIZE_WHITESPACE
    subset  faithful  terse  verbose
    metric
    chrf       0.975  0.950    0.875
    f1         0.975  0.975    0.825
    wer        0.975  0.575    0.475
    """
    require_dataframe(pairs, "pairs")
    cols = [context, subset, metric, score, perturbed]
    require_columns(pairs, cols, "pairs")
    require_no_missing(pairs, cols)
    s = require_numeric_column(pairs, score, "score")
    sp = require_numeric_column(pairs, perturbed, "perturbed score")
    if ties not in ("fail", "half"):
        raise InputError(f"`ties` must be 'fail' or 'half'; got {ties!r}.")
    if ci not in ("wilson", "t", "bootstrap"):
        raise InputError(f"`ci` must be 'wilson', 't' or 'bootstrap'; got {ci!r}.")
    lev = require_probability(level, "level", open_interval=True)
    if isinstance(lower_is_better, str):
        lower_is_better = [lower_is_better]
    metric_names = _ordered_unique(pairs[metric])
    unknown = [m for m in lower_is_better if m not in metric_names]
    if unknown:
        raise InputError(
            f"`lower_is_better` names metric(s) {unknown} not found in column {metric!r}; "
            f"metrics: {metric_names}."
        )
    all_subsets = _ordered_unique(pairs[subset])
    if subsets is None:
        subset_names = all_subsets
    else:
        subset_names = list(subsets)
        if not subset_names:
            raise InputError("`subsets` is empty; name at least one subset (or pass None for all).")
        empty = [q for q in subset_names if q not in all_subsets]
        if empty:
            raise InputError(
                f"subset(s) {empty} are empty: no pairs in column {subset!r} have these values; "
                f"non-empty subsets: {all_subsets}."
            )
        if len(set(subset_names)) != len(subset_names):
            raise InputError(f"`subsets` lists a subset twice: {subset_names}.")

    lower = pairs[metric].isin(list(lower_is_better)).to_numpy()
    win = np.where(lower, s < sp, s > sp).astype(float)
    if ties == "half":
        win[s == sp] = 0.5

    frame = pd.DataFrame(
        {"x": pairs[context].to_numpy(), "q": pairs[subset].to_numpy(), "m": pairs[metric].to_numpy(), "w": win}
    )
    frame = frame[frame["q"].isin(subset_names)]
    contexts = np.asarray(_ordered_unique(frame["x"]), dtype=object)
    x_idx = pd.Index(contexts).get_indexer(frame["x"])
    m_idx = pd.Index(metric_names).get_indexer(frame["m"])
    q_idx = pd.Index(subset_names).get_indexer(frame["q"])
    shape = (contexts.size, len(metric_names), len(subset_names))
    sums = np.zeros(shape)
    counts = np.zeros(shape, dtype=np.int64)
    np.add.at(sums, (x_idx, m_idx, q_idx), frame["w"].to_numpy())
    np.add.at(counts, (x_idx, m_idx, q_idx), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)

    missing = [(metric_names[j], subset_names[k]) for j in range(shape[1]) for k in range(shape[2]) if counts[:, j, k].sum() == 0]
    if missing:
        raise InputError(
            f"empty subset(s): no pairs for (metric, subset) {missing}; local accuracy is undefined "
            "there. Score every metric on every subset, or select subsets with `subsets=`."
        )

    acc = np.nanmean(means, axis=0)
    n_ctx = (counts > 0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.nanstd(means, axis=0, ddof=1) if contexts.size > 1 else np.full(acc.shape, np.nan)
        se = np.where(n_ctx > 1, sd / np.sqrt(n_ctx), np.nan)
    if ci == "wilson":
        z = stats.norm.ppf(0.5 + lev / 2)
        n_total = counts.sum(axis=0).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            n_eff = np.where(
                (se > 0) & (acc > 0) & (acc < 1), np.minimum(acc * (1 - acc) / se**2, n_total), n_ctx.astype(float)
            )
            centre = (acc + z**2 / (2 * n_eff)) / (1 + z**2 / n_eff)
            half = z / (1 + z**2 / n_eff) * np.sqrt(acc * (1 - acc) / n_eff + z**2 / (4 * n_eff**2))
        low = np.where(n_ctx > 1, np.clip(centre - half, 0.0, 1.0), np.nan)
        high = np.where(n_ctx > 1, np.clip(centre + half, 0.0, 1.0), np.nan)
    elif ci == "t":
        with np.errstate(invalid="ignore"):
            tq = stats.t.ppf(0.5 + lev / 2, np.maximum(n_ctx - 1, 1))
        low = np.where(n_ctx > 1, np.clip(acc - tq * se, 0.0, 1.0), np.nan)
        high = np.where(n_ctx > 1, np.clip(acc + tq * se, 0.0, 1.0), np.nan)
    else:
        boot = _bootstrap_accuracies(means, n_resamples=n_resamples, random_state=random_state)
        with np.errstate(invalid="ignore"):
            low = np.nanquantile(boot, (1 - lev) / 2, axis=0)
            high = np.nanquantile(boot, (1 + lev) / 2, axis=0)

    rows = []
    for j, m in enumerate(metric_names):
        for k, q in enumerate(subset_names):
            rows.append(
                {
                    "metric": m,
                    "subset": q,
                    "accuracy": float(acc[j, k]),
                    "n_contexts": int(n_ctx[j, k]),
                    "n_pairs": int(counts[:, j, k].sum()),
                    "se": float(se[j, k]),
                    "ci_low": float(low[j, k]),
                    "ci_high": float(high[j, k]),
                }
            )
    return LocalAccuracyResult(
        table=pd.DataFrame(rows),
        metrics=tuple(metric_names),
        subsets=tuple(subset_names),
        contexts=contexts,
        context_means=means,
        n_pairs=counts,
        level=lev,
        ci_method=ci,
        ties=ties,
    )


# ----------------------------------------------------------------------------- bootstrap over contexts


def _bootstrap_counts(n_contexts: int, n_resamples: int, rng: np.random.Generator, chunk: int) -> Any:
    """Yield chunks of multinomial resampling counts, shape (chunk, n_contexts)."""
    done = 0
    p = np.full(n_contexts, 1.0 / n_contexts)
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        yield rng.multinomial(n_contexts, p, size=size).astype(float)
        done += size


def _bootstrap_accuracies(
    means: np.ndarray, *, n_resamples: int, random_state: int | np.random.Generator | None
) -> np.ndarray:
    """Accuracies recomputed on contexts resampled with replacement: (B, metrics, subsets)."""
    B = require_positive_int(n_resamples, "n_resamples", minimum=1)
    rng = as_generator(random_state)
    G, M, S = means.shape
    present = (~np.isnan(means)).reshape(G, M * S).astype(float)
    values = np.nan_to_num(means).reshape(G, M * S)
    out = []
    chunk = max(1, min(B, 2_000_000 // max(G, 1)))
    for counts in progress(_bootstrap_counts(G, B, rng, chunk), total=math.ceil(B / chunk), desc="bootstrap"):
        num = counts @ values
        den = counts @ present
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan))
    return np.concatenate(out).reshape(B, M, S)


# ----------------------------------------------------------------------------- hypothesis A


def _require_result(result: object) -> LocalAccuracyResult:
    if not isinstance(result, LocalAccuracyResult):
        raise InputTypeError(f"expected the LocalAccuracyResult of local_accuracy(...); got {type(result).__name__}.")
    return result


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
    >>> from mixeval.meta import example_translations, score_pairs, word_error_rate
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
    if np.linalg.norm(resid) > 1e-12 * max(1.0, np.linalg.norm(d)):
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
    >>> from mixeval.meta import example_translations, score_pairs, word_error_rate, unigram_f1
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
    >>> from mixeval.meta import example_translations, score_pairs, word_error_rate, unigram_f1
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


# ----------------------------------------------------------------------------- plot


def plot_local_accuracy(result: LocalAccuracyResult, *, ax: Any = None) -> Any:
    """Local accuracy of each metric per subset, with confidence intervals.

    Parameters
    ----------
    result : LocalAccuracyResult
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from mixeval.meta import example_translations, score_pairs, chrf
    >>> pairs = score_pairs(example_translations(), {"chrf": chrf}, context="reference",
    ...                     output="hypothesis", subset="length", context_id="context", random_state=0)
    >>> fig = plot_local_accuracy(local_accuracy(pairs))
    """
    import matplotlib.pyplot as plt

    res = _require_result(result)
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.6 + 1.2 * len(res.subsets), 3.5))
    else:
        fig = ax.figure
    M = len(res.metrics)
    x = np.arange(len(res.subsets), dtype=float)
    width = 0.6 / max(M, 1)
    table = res.table
    for j, m in enumerate(res.metrics):
        rows = table[table["metric"] == m].set_index("subset").loc[list(res.subsets)]
        acc = rows["accuracy"].to_numpy()
        err = np.vstack([acc - rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy() - acc])
        xs = x - 0.3 + width / 2 + j * width
        ax.errorbar(xs, acc, yerr=np.nan_to_num(err), fmt="o-", capsize=3, label=str(m))
    ax.set_xticks(x)
    ax.set_xticklabels([str(q) for q in res.subsets])
    ax.set_ylabel(f"local accuracy ({100 * res.level:g}% CI)")
    ax.set_xlabel("subset of outputs")
    ax.set_ylim(min(0.0, float(np.nanmin(table["ci_low"])) if table["ci_low"].notna().any() else 0.0), 1.02)
    ax.legend(fontsize="small", loc="lower left")
    return fig
