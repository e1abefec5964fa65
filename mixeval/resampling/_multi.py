"""Many systems (all pairs or against a baseline, with multiplicity control) and the
multi-bootstrap over test items and seeds (Sellam et al. 2021)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._adjust import _canonical_method, adjust_pvalues
from .._progress import progress
from .._results import TestResult
from .._validation import (
    describe_id_column,
    id_like_columns,
    not_numeric_message,
    require_columns,
    require_dataframe,
    require_level,
    require_no_missing,
    require_numeric_column,
    require_positive_int,
)
from ..errors import InputError, InputTypeError
from ._common import check_alternative, count_extreme, percentile_interval
from ._engine import as_generator, bootstrap_counts, chunk_sizes
from ._paired import paired_bootstrap_test, permutation_test
from ._parametric import paired_t_test, z_test

__all__ = ["compare_systems", "multi_bootstrap_test", "wide_scores"]

_TESTS = ("permutation", "bootstrap", "t", "z")


def wide_scores(
    scores: object,
    *,
    item: str | None = None,
    system: str | None = None,
    score: str | None = None,
    systems: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Scores as one row per test item and one numeric column per system.

    ``scores`` is a wide DataFrame (or a mapping ``name -> scores``) or, with
    ``item``, ``system`` and ``score``, a long DataFrame with one row per
    (item, system).

    Examples
    --------
    >>> import pandas as pd
    >>> long = pd.DataFrame({"item": [1, 1, 2, 2], "system": ["A", "B", "A", "B"], "score": [0.5, 0.7, 0.2, 0.4]})
    >>> wide_scores(long, item="item", system="system", score="score")
    system    A    B
    item
    1       0.5  0.7
    2       0.2  0.4
    >>> wide_scores({"A": [0.5, 0.2], "B": [0.7, 0.4]}).columns.tolist()
    ['A', 'B']
    """
    if item is not None or system is not None or score is not None:
        if not (item and system and score):
            raise InputError("for long-format scores give all three of `item`, `system` and `score`.")
        data = require_dataframe(scores, "scores")
        require_columns(data, [item, system, score], "scores")
        require_numeric_column(data, score)
        dup = data.duplicated([item, system])
        if dup.any():
            raise InputError(
                f"{int(dup.sum())} duplicate (item, system) rows; average repeated runs first or use "
                "multi_bootstrap_test, which resamples seeds/runs as well."
            )
        # keep items and systems in order of first appearance (pivot would sort them)
        wide = data.pivot(index=item, columns=system, values=score)
        wide = wide.reindex(index=pd.unique(data[item]), columns=pd.unique(data[system]))
        missing = wide.isna().sum()
        if missing.any():
            bad = missing[missing > 0]
            raise InputError(
                f"systems {bad.index.tolist()} lack scores on {bad.tolist()} item(s); paired tests need every "
                "system scored on every item. Drop those items explicitly first."
            )
    elif isinstance(scores, Mapping):
        lengths = {k: len(np.asarray(v)) for k, v in scores.items()}
        if len(set(lengths.values())) > 1:
            raise InputError(f"all systems need one score per item for the same items; got lengths {lengths}.")
        wide = pd.DataFrame({k: np.asarray(v, dtype=float) for k, v in scores.items()})
    else:
        wide = require_dataframe(scores, "scores")
    if systems is not None:
        require_columns(wide, list(systems), "scores")
        wide = wide[list(systems)]
    else:
        repeated = long_format_columns(wide)
        if repeated:
            raise InputError(
                f"the scores look like long format: the text column(s) {', '.join(map(repr, repeated))} repeat "
                "their values, so the numeric columns are not one score column per system. Name the columns "
                "(item=, system=, score=; on the command line --item, --system, --score) or choose the score "
                "columns (systems=; --systems)."
            )
        for c in wide.columns:
            if not pd.api.types.is_numeric_dtype(wide[c]) and _mostly_numbers(wide[c]):
                raise InputError(not_numeric_message(wide[c], f"the score column {c!r}"))
        wide = wide[[c for c in wide.columns if pd.api.types.is_numeric_dtype(wide[c])]]
        ids = id_like_columns(wide)
        if ids:
            c = ids[0]
            raise InputError(
                f"the column {c!r} looks like an item identifier ({describe_id_column(wide, c)}), not a system's "
                "scores; compared as a system it would give a meaningless comparison and enlarge the multiplicity "
                f"adjustment. Make it the index (scores.set_index({c!r})) or choose the score columns (systems=[...]); "
                f"on the command line --id {c} or --systems."
            )
    for col in wide.columns:
        require_numeric_column(wide, col)
    if wide.shape[1] < 2:
        raise InputError(f"need at least two systems (numeric score columns); got {list(wide.columns)}.")
    return wide


def _mostly_numbers(series: pd.Series) -> bool:
    """A text column whose values are mostly numbers: scores with a few cells that are not (``"err"``, ``"-"``)."""
    present = series.dropna()
    return len(present) > 0 and pd.to_numeric(present, errors="coerce").notna().mean() >= 0.5


def long_format_columns(data: pd.DataFrame) -> list[str]:
    """Non-numeric columns whose values repeat: a sign of long format (one row per item and system).

    In wide format (one row per item) a text column can only be the item's identifier, which is
    unique per row.
    """
    return [str(c) for c in data.columns
            if not pd.api.types.is_numeric_dtype(data[c]) and data[c].nunique(dropna=False) < len(data)]


def compare_systems(
    scores: object,
    *,
    systems: Sequence[str] | None = None,
    baseline: str | None = None,
    test: str = "permutation",
    adjust: str = "holm",
    alternative: str = "two-sided",
    level: float = 0.95,
    ci: str | None = None,
    item: str | None = None,
    system: str | None = None,
    score: str | None = None,
    metric: object = None,
    n_resamples: int = 10_000,
    random_state: object = None,
) -> pd.DataFrame:
    """Compare many systems pairwise on the same items, with adjusted p-values.

    Parameters
    ----------
    scores : DataFrame or mapping
        Wide scores (one row per item, one column per system) or long with
        ``item``, ``system`` and ``score`` column names. With ``metric``: a mapping
        ``system -> (n_items, k)`` array of per-item sufficient statistics.
    systems : sequence of str, optional
        Which systems (columns) to compare; default all numeric columns.
    baseline : str, optional
        Compare every other system against this one (``estimate = system - baseline``)
        instead of all pairs.
    test : {"permutation", "bootstrap", "t", "z"}
        Paired test per comparison (mean difference of sentence-level scores).
    adjust : str
        Multiplicity adjustment over the family of comparisons, see
        :func:`mixeval._adjust.adjust_pvalues` (``"holm"``, ``"bonferroni"``, ``"bh"``, ...).
    alternative : {"two-sided", "greater", "less"}
    level : float
        Level of the per-comparison intervals (bootstrap, t or normal).
    ci : {"percentile", "bca"}, optional
        Bootstrap interval method (``test="bootstrap"`` only; default ``"percentile"``), as in
        :func:`paired_bootstrap_test`.
    metric : str or callable, optional
        Corpus-level metric from column sums (``"bleu"``, ``"f1"``, ...; see
        :func:`permutation_test`); only with ``test="permutation"`` or ``"bootstrap"``.
    n_resamples : int, keyword-only
    random_state : None, int or numpy.random.Generator, keyword-only
        Each comparison gets its own stream derived from this seed.

    Returns
    -------
    pandas.DataFrame
        ``system_a, system_b, estimate, statistic, pvalue, pvalue_adjusted, lower,
        upper, test, adjust``; ``estimate`` is mean(A) - mean(B).

    Notes
    -----
    The adjusted p-values control the family-wise error rate (Holm, Bonferroni,
    Hochberg) or the false discovery rate (BH, BY) over the comparisons listed.
    Resampling p-values are :math:`(c+1)/(R+1)`, never 0.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.resampling import compare_systems
    >>> rng = np.random.default_rng(0)
    >>> base = rng.normal(0.3, 0.1, size=300)
    >>> df = pd.DataFrame({"base": base, "A": base + 0.03 + rng.normal(0, .05, 300),
    ...                    "B": base + rng.normal(0, .05, 300)})
    >>> out = compare_systems(df, baseline="base", n_resamples=999, random_state=1)
    >>> out[["system_a", "system_b"]].values.tolist()
    [['A', 'base'], ['B', 'base']]
    >>> bool(out["pvalue_adjusted"].iloc[0] < 0.01)
    True
    """
    if test not in _TESTS:
        raise InputError(f"`test` must be one of {', '.join(map(repr, _TESTS))}; got {test!r}.")
    _canonical_method(adjust)
    alternative = check_alternative(alternative)
    level = require_level(level)
    n_resamples = require_positive_int(n_resamples, "n_resamples")
    if ci is not None and test != "bootstrap":
        raise InputError(f"ci={ci!r} chooses the bootstrap interval; test={test!r} has its own interval. Drop ci= "
                         "or use test='bootstrap'.")
    if metric is None:
        wide = wide_scores(scores, item=item, system=system, score=score, systems=systems)
        names = [str(c) for c in wide.columns]
        cols = {str(c): wide[c].to_numpy(dtype=float) for c in wide.columns}
    else:
        if test not in ("permutation", "bootstrap"):
            raise InputError(f"a corpus `metric` needs test='permutation' or 'bootstrap'; got {test!r}.")
        if not isinstance(scores, Mapping):
            raise InputTypeError("with `metric`, `scores` must be a mapping system -> (n_items, k) statistics array.")
        names = [str(k) for k in (systems if systems is not None else scores.keys())]
        missing = [k for k in names if k not in {str(x) for x in scores}]
        if missing:
            raise InputError(f"systems {missing} not found; available: {[str(k) for k in scores]}.")
        cols = {str(k): np.asarray(v, dtype=float) for k, v in scores.items() if str(k) in names}
        if len(names) < 2:
            raise InputError(f"need at least two systems; got {names}.")
    if baseline is not None:
        if str(baseline) not in cols:
            raise InputError(f"baseline {baseline!r} is not among the systems {names}.")
        pairs = [(s, str(baseline)) for s in names if s != str(baseline)]
    else:
        pairs = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    rng = as_generator(random_state)
    seeds = rng.integers(0, 2**63 - 1, size=len(pairs))
    rows = []
    for (sa, sb), seed in zip(progress(pairs, total=len(pairs), desc="comparisons"), seeds):
        a, b = cols[sa], cols[sb]
        if test == "permutation":
            res = permutation_test(a, b, metric=metric, alternative=alternative, n_resamples=n_resamples,
                                   random_state=int(seed))
        elif test == "bootstrap":
            res = paired_bootstrap_test(a, b, metric=metric, alternative=alternative, ci=ci or "percentile",
                                        level=level, n_resamples=n_resamples, random_state=int(seed))
        elif test == "t":
            res = paired_t_test(a, b, alternative=alternative, level=level)
        else:
            res = z_test(a, b, alternative=alternative, level=level)
        interval = res.confidence_interval
        rows.append({"system_a": sa, "system_b": sb, "estimate": res.estimate, "statistic": res.statistic,
                     "pvalue": res.pvalue, "lower": interval.lower if interval else np.nan,
                     "upper": interval.upper if interval else np.nan})
    out = pd.DataFrame(rows)
    out.insert(5, "pvalue_adjusted", adjust_pvalues(out["pvalue"].to_numpy(), adjust))
    out["test"] = test
    out["adjust"] = adjust
    return out


def _grid(data: pd.DataFrame, item: str, seed: str, score: str, label: object) -> tuple[np.ndarray, list, list]:
    g = data.pivot(index=item, columns=seed, values=score)
    if g.isna().any().any():
        n = int(g.isna().sum().sum())
        raise InputError(
            f"system {label!r} lacks {n} (item, seed) score(s); the multi-bootstrap needs every item scored "
            "under every seed of a system."
        )
    return g.to_numpy(dtype=float), g.index.tolist(), g.columns.tolist()


def multi_bootstrap_test(
    data: pd.DataFrame,
    *,
    score: str,
    item: str,
    seed: str,
    system: str,
    a: object,
    b: object,
    paired_seeds: bool | None = None,
    alternative: str = "two-sided",
    level: float = 0.95,
    n_resamples: int = 10_000,
    random_state: object = None,
) -> TestResult:
    """Multi-bootstrap test resampling test items and seeds/runs together (Sellam et al. 2021).

    Parameters
    ----------
    data : pandas.DataFrame
        Long format: one row per (item, seed, system) with a numeric score.
    score, item, seed, system : str
        Column names.
    a, b : object
        The two values of ``system`` to compare (statistic: mean(A) - mean(B) over
        items and seeds).
    paired_seeds : bool, optional
        Resample the same seeds for both systems (paired design, e.g. the same
        fine-tuning seeds). Default: paired if both systems have the same seed labels.
    alternative : {"two-sided", "greater", "less"}
    level : float
        Level of the percentile interval of the difference.
    n_resamples : int, keyword-only
    random_state : None, int or numpy.random.Generator, keyword-only

    Returns
    -------
    TestResult
        As :func:`paired_bootstrap_test` (shift method, ``(c+1)/(R+1)``); the
        interval is the percentile interval of the bootstrap differences.

    Notes
    -----
    With ``n`` items, score matrices :math:`Y^A` (n x S_A) and :math:`Y^B`, each
    resample draws item counts :math:`w` (multinomial, shared by both systems) and
    seed counts :math:`v^A, v^B` (shared if paired):

    .. math:: \\Delta^* = \\frac{w^\\top Y^A v^A}{n S_A} - \\frac{w^\\top Y^B v^B}{n S_B}.

    Treating the ``n x S`` runs as independent items would understate the
    variance due to seeds; resampling seeds as well keeps it in the null
    distribution. The p-value uses the shift method as in Algorithm 4.1.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.resampling import multi_bootstrap_test
    >>> rng = np.random.default_rng(0)
    >>> rows = [(i, s, sys, 0.5 + 0.1 * (sys == "A") + rng.normal(0, 0.1))
    ...         for i in range(50) for s in range(4) for sys in "AB"]
    >>> df = pd.DataFrame(rows, columns=["item", "seed", "system", "score"])
    >>> res = multi_bootstrap_test(df, score="score", item="item", seed="seed", system="system",
    ...                            a="A", b="B", n_resamples=999, random_state=0)
    >>> res.pvalue < 0.01
    True
    """
    alternative = check_alternative(alternative)
    level = require_level(level)
    n_resamples = require_positive_int(n_resamples, "n_resamples")
    data = require_dataframe(data)
    require_columns(data, [score, item, seed, system])
    require_no_missing(data, [item, seed, system])
    require_numeric_column(data, score)
    dup = data.duplicated([item, seed, system])
    if dup.any():
        raise InputError(f"{int(dup.sum())} duplicate (item, seed, system) rows; each run scores an item once.")
    parts = {}
    for label in (a, b):
        sub = data[data[system] == label]
        if sub.empty:
            raise InputError(f"system {label!r} not found in column {system!r}; available: "
                             f"{sorted(map(str, data[system].unique()))}.")
        parts[label] = _grid(sub, item, seed, score, label)
    YA, items_a, seeds_a = parts[a]
    YB, items_b, seeds_b = parts[b]
    if set(items_a) != set(items_b):
        raise InputError("the two systems were scored on different items; the comparison must be paired on items.")
    YB = YB[[items_b.index(i) for i in items_a]]
    same_seeds = set(seeds_a) == set(seeds_b)
    if paired_seeds is None:
        paired_seeds = same_seeds
    if paired_seeds:
        if not same_seeds:
            raise InputError("paired_seeds=True needs the same seed labels for both systems.")
        YB = YB[:, [seeds_b.index(s) for s in seeds_a]]
    n, SA, SB = YA.shape[0], YA.shape[1], YB.shape[1]
    observed = float(YA.mean() - YB.mean())
    rng = as_generator(random_state)
    dist = np.empty(n_resamples)
    start = 0
    for size in progress(chunk_sizes(n_resamples, n + SA + SB), desc="multi-bootstrap"):
        W = bootstrap_counts(n, size, rng)
        VA = bootstrap_counts(SA, size, rng)
        VB = VA if paired_seeds else bootstrap_counts(SB, size, rng)
        dist[start:start + size] = (np.einsum("rs,rs->r", W @ YA, VA) / (n * SA)
                                    - np.einsum("rs,rs->r", W @ YB, VB) / (n * SB))
        start += size
    center = float(dist.mean())
    null = dist - center
    c = count_extreme(null, observed, alternative)
    return TestResult(
        statistic=observed, pvalue=(c + 1) / (n_resamples + 1), null_distribution=null, alternative=alternative,
        method="multi-bootstrap test over items and seeds, shift method" + (" (paired seeds)" if paired_seeds else ""),
        estimate=observed, confidence_interval=percentile_interval(dist, level),
        details={"count": c, "n_resamples": n_resamples, "n_items": n, "n_seeds_a": SA, "n_seeds_b": SB,
                 "paired_seeds": bool(paired_seeds), "bootstrap_mean": center,
                 "bootstrap_se": float(dist.std(ddof=1)) if n_resamples > 1 else float("nan")},
    )
