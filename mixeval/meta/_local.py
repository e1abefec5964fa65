"""Local metric accuracy per subset of outputs (stage 2, after :func:`score_pairs`).

Implements Deviyani & Diaz, *Measuring Local Accuracies to Assess Evaluation
Metrics*: how often a metric scores an output above its degraded (perturbed)
version, per subset of outputs, with confidence intervals whose unit of
resampling is the evaluation context ``x``. The stages, each callable alone:
:func:`context_means` (pair outcomes to per-context means), :func:`accuracy_and_se`,
:func:`accuracy_intervals`; the tests of hypotheses A and B live in ``_hypotheses.py``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._progress import progress
from .._random import as_generator
from .._results import Result
from .._validation import (
    require_columns,
    require_dataframe,
    require_level,
    require_no_missing,
    require_numeric_column,
    require_positive_int,
)
from ..errors import InputError, InputTypeError

__all__ = [
    "local_accuracy",
    "LocalAccuracyResult",
    "context_means",
    "accuracy_and_se",
    "accuracy_intervals",
    "plot_local_accuracy",
]


# ----------------------------------------------------------------------------- local accuracy


@dataclass(frozen=True, eq=False)
class LocalAccuracyResult(Result):
    """Local accuracies of several metrics on several subsets of outputs.

    Attributes
    ----------
    table : DataFrame
        One row per (metric, subset): ``metric``, ``subset``, ``accuracy``,
        ``n_contexts``, ``n_pairs``, ``se``, ``lower``, ``upper`` (unrounded).
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

    Examples
    --------
    >>> from mixeval.meta import DropWords, example_translations, score_pairs, word_error_rate
    >>> pairs = score_pairs(example_translations(), {"wer": word_error_rate}, context="reference",
    ...                     output="hypothesis", subset="system", context_id="context",
    ...                     perturbation=DropWords(0.2), random_state=1)
    >>> res = local_accuracy(pairs, lower_is_better=["wer"])
    >>> res.subsets, res.ci_method
    (('faithful', 'terse', 'verbose'), 'wilson')
    >>> print(res.accuracy_matrix().round(3).to_string())
    subset  faithful  terse  verbose
    metric
    wer        0.975  0.575    0.475
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

    Local accuracies are often close to 1, where symmetric intervals under-cover (the t
    interval's coverage falls well below nominal there; tests/meta/test_meta_local.py). The default therefore is a
    Wilson score interval computed with the effective sample size ``n_eff = Acc (1 - Acc) / se^2`` (at most the
    number of pairs; the number of contexts when ``se = 0`` or ``Acc`` is 0 or 1), in the spirit of Korn & Graubard (1998) for
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
    lev = require_level(level)
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
    contexts, means, counts = context_means(frame[frame["q"].isin(subset_names)], metric_names, subset_names)

    missing = [(metric_names[j], subset_names[k]) for j in range(counts.shape[1]) for k in range(counts.shape[2])
               if counts[:, j, k].sum() == 0]
    if missing:
        raise InputError(
            f"empty subset(s): no pairs for (metric, subset) {missing}; local accuracy is undefined "
            "there. Score every metric on every subset, or select subsets with `subsets=`."
        )

    acc, n_ctx, se = accuracy_and_se(means, counts)
    low, high = accuracy_intervals(acc, se, n_ctx, counts, means, ci=ci, level=lev, n_resamples=n_resamples,
                                   random_state=random_state)

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
                    "lower": float(low[j, k]),
                    "upper": float(high[j, k]),
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


# ----------------------------------------------------------------------------- stages of local_accuracy


def context_means(frame: pd.DataFrame, metric_names: Sequence[Hashable],
                  subset_names: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per context, metric and subset: the mean of the pair outcomes and the number of pairs.

    ``frame`` has one row per pair with columns ``x`` (context), ``m`` (metric), ``q`` (subset) and
    ``w`` (1 if the metric ranks the output above its perturbed version, 0 or 1/2 otherwise). Returns
    the contexts (in order of appearance), ``means`` of shape (contexts, metrics, subsets) with NaN
    where a context has no pair, and the ``counts`` of pairs.
    """
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
    return contexts, means, counts


def accuracy_and_se(means: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Local accuracy (mean over contexts of the per-context means), number of contexts and the
    standard error ``sd_x / sqrt(|X|)`` (NaN with a single context), per metric and subset."""
    acc = np.nanmean(means, axis=0)
    n_ctx = (counts > 0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.nanstd(means, axis=0, ddof=1) if means.shape[0] > 1 else np.full(acc.shape, np.nan)
        se = np.where(n_ctx > 1, sd / np.sqrt(n_ctx), np.nan)
    return acc, n_ctx, se


def accuracy_intervals(acc: np.ndarray, se: np.ndarray, n_ctx: np.ndarray, counts: np.ndarray, means: np.ndarray, *,
                       ci: str, level: float, n_resamples: int, random_state: object) -> tuple[np.ndarray, np.ndarray]:
    """Confidence limits of the local accuracies: Wilson with the effective sample size, t, or bootstrap.

    Wilson: ``n_eff = Acc (1 - Acc) / se^2`` (at most the number of pairs; the number of contexts when
    ``se = 0`` or ``Acc`` is 0 or 1) and the Wilson score interval of ``Acc`` with ``n_eff`` trials
    (:func:`statsmodels.stats.proportion.proportion_confint`, ``method="wilson"``). NaN with a single context.
    """
    if ci == "wilson":
        from statsmodels.stats.proportion import proportion_confint  # imported on first use (slow to load)

        n_total = counts.sum(axis=0).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            n_eff = np.where(
                (se > 0) & (acc > 0) & (acc < 1), np.minimum(acc * (1 - acc) / se**2, n_total), n_ctx.astype(float)
            )
            ok = (n_ctx > 1) & (n_eff > 0)
            low, high = proportion_confint(np.where(ok, acc * n_eff, 0.5), np.where(ok, n_eff, 1.0),
                                           alpha=1 - level, method="wilson")
        return (np.where(ok, np.clip(low, 0.0, 1.0), np.nan), np.where(ok, np.clip(high, 0.0, 1.0), np.nan))
    if ci == "t":
        with np.errstate(invalid="ignore"):
            tq = stats.t.ppf(0.5 + level / 2, np.maximum(n_ctx - 1, 1))
        return (np.where(n_ctx > 1, np.clip(acc - tq * se, 0.0, 1.0), np.nan),
                np.where(n_ctx > 1, np.clip(acc + tq * se, 0.0, 1.0), np.nan))
    boot = _bootstrap_accuracies(means, n_resamples=n_resamples, random_state=random_state)
    with np.errstate(invalid="ignore"):
        return (np.nanquantile(boot, (1 - level) / 2, axis=0), np.nanquantile(boot, (1 + level) / 2, axis=0))


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


# ----------------------------------------------------------------------------- plot


def _require_result(result: object) -> LocalAccuracyResult:
    if not isinstance(result, LocalAccuracyResult):
        raise InputTypeError(f"expected the LocalAccuracyResult of local_accuracy(...); got {type(result).__name__}.")
    return result


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
        err = np.vstack([acc - rows["lower"].to_numpy(), rows["upper"].to_numpy() - acc])
        xs = x - 0.3 + width / 2 + j * width
        ax.errorbar(xs, acc, yerr=np.nan_to_num(err), fmt="o-", capsize=3, label=str(m))
    ax.set_xticks(x)
    ax.set_xticklabels([str(q) for q in res.subsets])
    ax.set_ylabel(f"local accuracy ({100 * res.level:g}% CI)")
    ax.set_xlabel("subset of outputs")
    ax.set_ylim(min(0.0, float(np.nanmin(table["lower"])) if table["lower"].notna().any() else 0.0), 1.02)
    ax.legend(fontsize="small", loc="lower left")
    return fig
