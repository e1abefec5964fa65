"""``compare_logs``: every pair of models on their shared items, several ways side by side.

The pipeline: read (any harness, :func:`~mixeval.logs.read_logs`) -> item table (repeats averaged within item,
:func:`~mixeval.logs._items.item_table`) -> paired differences of every pair, vectorised over pairs
(:func:`~mixeval.logs._pairs.pair_table`: CR2 t tests, the other SEs, the mixed model of the differences,
McNemar, equivalence, design numbers) -> logistic GLMMs per pair (optional) -> multiplicity adjustment ->
leaderboard with simultaneous rank sets (:mod:`~mixeval.logs._leaderboard`) -> conditional pairs and the
heterogeneity test (``by``, :mod:`~mixeval.logs._conditional`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._adjust import ADJUST_METHODS, adjust_pvalues
from .._validation import require_bool, require_level
from ..errors import ColumnError, InputError, InputTypeError, caller_stacklevel
from ._conditional import by_pairs, heterogeneity
from ._items import ItemTable, choose_metric, item_table
from ._leaderboard import leaderboard
from ._mcnemar import MCNEMAR_TESTS
from ._pairs import adjust_finite, mixed_model_name, pair_table, untestable_notes
from ._ranks import RANK_METHODS
from ._readers import KEY_COLUMNS, check_items, read_logs
from ._result import LogComparison

__all__ = ["compare_logs", "glmm_pair", "DEFAULT_EFFECT"]

_ADJUST_NAMES = frozenset(alias for aliases in ADJUST_METHODS.values() for alias in aliases)

#: The smallest effect of interest ``n_needed`` plans for when ``effect`` is not given: two points (0.02) on a
#: metric whose scores lie in [0, 1] (accuracy), else a fifth of the standard deviation of the item scores
#: (Cohen's "small" standardised difference).
DEFAULT_EFFECT = {"proportion": 0.02, "standardised": 0.2}


# ------------------------------------------------------------------------------------------ validation

def _margin(value: float | None, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or value <= 0:
        raise InputError(f"{name} must be a positive number (the margin on the metric's scale, e.g. 0.02); "
                         f"got {value!r}.")
    return float(value)


@functools.cache
def _threadpools():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()      # finding the BLAS libraries is the slow part: once per process


def _one_blas_thread():
    """BLAS on one thread: the products here are thin (models x items times items x models), where threads
    gain nothing and, on a loaded machine, oversubscription makes them a hundred times slower."""
    return _threadpools().limit(limits=1, user_api="blas")


def _as_frame(data: Any, on_mismatch: str, on_error: str) -> pd.DataFrame:
    if on_mismatch not in ("error", "drop"):
        raise InputError(f"on_mismatch must be 'error' or 'drop'; got {on_mismatch!r}.")
    if on_error not in ("error", "drop"):
        raise InputError(f"on_error must be 'error' or 'drop'; got {on_error!r}.")
    if isinstance(data, pd.DataFrame):
        if on_error != "error":
            raise InputError("on_error='drop' leaves out inspect_ai samples that ended in an error while reading "
                             "log files; a table has none: remove such rows from it instead.")
        if on_mismatch == "drop":
            missing = [c for c in KEY_COLUMNS if c not in data.columns]
            if missing:
                raise ColumnError(f"on_mismatch='drop' leaves out items whose question differs between models, by the "
                                  f"item_hash the readers write; the table has no column {missing[0]!r}.")
            return check_items(data, on_mismatch="drop")
        return data
    if isinstance(data, (str, Path)) or (isinstance(data, Iterable) and not isinstance(data, (dict, bytes))):
        return read_logs(data, on_mismatch=on_mismatch, on_error=on_error)
    raise InputTypeError(f"data must be a long-format DataFrame or log paths; got {type(data).__name__}.")


def _default_effect(table: ItemTable, effect: float | None) -> tuple[float, str]:
    if effect is not None:
        return effect, "stated"
    means = table.means[table.present]
    if ((means >= 0) & (means <= 1)).all():
        return DEFAULT_EFFECT["proportion"], "the default smallest effect of interest: two points of a 0-1 metric"
    centred = np.where(table.present, table.means - np.nanmean(np.where(table.present, table.means, np.nan), axis=0), 0)
    sd = float(np.sqrt((centred ** 2).sum() / max(int(table.present.sum()) - table.means.shape[1], 1)))
    return DEFAULT_EFFECT["standardised"] * sd, ("the default smallest effect of interest: 0.2 standard deviations "
                                                 f"of the item scores ({sd:.4g})")


# ---------------------------------------------------------------------------------------- logistic GLMM

def _pair_rows(rows: pd.DataFrame, metric: str, a: str, b: str, cluster: str | None) -> pd.DataFrame:
    """The rows of models ``a`` and ``b`` on the items both have, as the mixed model's frame."""
    rows = rows[rows["model"].isin([a, b])]
    both = rows.groupby("_key", sort=False)["model"].transform("nunique") == 2
    rows = rows[both]
    frame = pd.DataFrame({"y": rows[metric].to_numpy(dtype=float), "a": (rows["model"] == a).to_numpy(dtype=float),
                          "m": rows["model"].to_numpy(), "i": rows["_key"].to_numpy()})
    if cluster:
        frame["c"] = rows[cluster].astype(str).to_numpy()
    return frame


def glmm_pair(frame: pd.DataFrame, *, repeats: bool, cluster: bool) -> dict[str, float]:
    """The logistic mixed model of one pair's 0/1 rows (columns ``y``, ``a`` = 1 for model a, ``m``, ``i``
    the item, ``c`` the cluster).

    Notes
    -----
    ``y ~ a + (1|i)`` plus ``(1|i:m)`` when items have repeats plus ``(1|c) + (1|c:m)`` with clusters,
    fitted by :func:`mixeval.glmer` (binomial, logit, Laplace): the coefficient of ``a`` is the log odds
    ratio of a correct answer conditional on the item (a subject-specific effect, not the difference in
    accuracy that the other columns estimate); Wald z test.
    """
    from .. import glmer  # the mixed-model layer; imported where used (the fits are optional)

    terms = ["(1|i)"] + (["(1|i:m)"] if repeats else []) + (["(1|c)", "(1|c:m)"] if cluster else [])
    g = glmer("y ~ a + " + " + ".join(terms), frame, family="binomial")
    estimate = float(g.fixef["a"])
    se = float(np.sqrt(g.vcov.loc["a", "a"]))
    pvalue = float(2 * stats.norm.sf(abs(estimate) / se))
    return {"glmer_log_odds_ratio": estimate, "glmer_se": se, "glmer_pvalue": pvalue}


def _glmm_columns(data: pd.DataFrame, metric: str, table: ItemTable, pairs: pd.DataFrame, cluster: str | None,
                  notes: list[str]) -> pd.DataFrame:
    keys = ["task", "item"] if "task" in data.columns else ["item"]
    rows = data[["model", metric] + keys + ([cluster] if cluster else [])].copy()
    rows["model"] = rows["model"].astype(str)
    rows["_key"] = rows[keys].astype(str).agg("\x1f".join, axis=1)
    repeats = bool((table.repeats > 1).any())
    fits = []
    for a, b in zip(pairs["model_a"], pairs["model_b"]):
        frame = _pair_rows(rows, metric, a, b, cluster)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fits.append(glmm_pair(frame, repeats=repeats, cluster=cluster is not None))
        notes.extend(f"glmer {a} - {b}: {w.message}" for w in caught)
    return pd.DataFrame(fits)


# ----------------------------------------------------------------------------------------------- entry

def compare_logs(data: Any, *, metric: str | None = None, cluster: str | None = None, by: str | None = None,
                 level: float = 0.95, adjust: str = "holm", mixed: bool = True, glmm: bool = False, power: float = 0.8,
                 alpha: float = 0.05, effect: float | None = None, equivalence: float | None = None,
                 noninferiority: float | None = None, higher_is_better: bool = True, ranks: str = "bonferroni",
                 random_state: int | None = None, on_mismatch: str = "error",
                 on_error: str = "error") -> LogComparison:
    """Compare every pair of models in evaluation logs on their shared items.

    Parameters
    ----------
    data : pandas.DataFrame or path(s)
        The long format of :mod:`mixeval.logs` (columns ``model``, ``item``, optionally ``task`` and
        ``repeat``, the metric and item properties), or log files / directories for :func:`read_logs`.
    metric : str, optional
        The score column (an lm-evaluation-harness metric, an inspect_ai scorer, ...); may be left out when
        the logs have one metric.
    cluster : str, optional
        An item property grouping the items (the passage of several questions): standard errors become
        cluster-robust and the mixed model gets cluster effects. Without it every item is its own cluster.
    by : str, optional
        An item property (subject, difficulty class): the pairs are also compared within each class, with a
        test of whether the difference varies across classes.
    level : float
        Confidence level of the intervals and simultaneous level of the rank sets.
    adjust : str
        Multiplicity adjustment of the p-values across pairs (``"holm"``, ``"bh"``, ... as R's ``p.adjust``;
        pairs without a test are left out of the family, as ``p.adjust`` leaves out NA).
    mixed : bool
        The mixed model of each pair's item-level differences, ``d ~ 1 + (1 | cluster)`` by REML with lmerTest's
        Satterthwaite df (fitted for all pairs at once), ``d ~ 1`` without ``cluster``.
    glmm : bool
        Also fit the logistic mixed model of each pair's 0/1 rows with :func:`mixeval.glmer` (one fit per
        pair on the long data, slow on large logs; refused for a metric that is not 0/1).
    power, alpha : float
        The power and two-sided level of the design numbers ``mdd`` and ``n_needed``.
    effect : float, optional
        The difference ``n_needed`` plans for, stated in advance on the metric's scale (never the observed one:
        that would be post-hoc power). Default: 0.02 (two points) for a metric in [0, 1], else 0.2 standard
        deviations of the item scores (Cohen's "small" standardised difference).
    equivalence : float, optional
        Test every pair for equivalence within ``+-equivalence`` (TOST with the CR2 SE and df), and mark the
        models equivalent to the best on the leaderboard.
    noninferiority : float, optional
        Test, for every pair and both directions, that one model is not worse than the other by this margin
        (one-sided CR2 t tests; "worse" follows ``higher_is_better``).
    higher_is_better : bool
        Direction of the metric for ranks and non-inferiority.
    ranks : {"bonferroni", "max-t"}
        The simultaneous tests behind the rank sets (see Notes).
    random_state : int, optional
        Seed of the quasi-Monte Carlo integration of ``ranks="max-t"`` (default 0: reproducible); refused for
        Bonferroni, which draws nothing.
    on_mismatch : {"error", "drop"}
        Items whose question differs between models (see :func:`check_items`): for paths, what the readers
        do; for a table (whose readers already raised), ``"drop"`` leaves them out by its ``item_hash``.
    on_error : {"error", "drop"}
        For inspect_ai logs: a sample that ended in an error stops the run (``"error"``) or is left out with a
        warning naming it (``"drop"``).

    Returns
    -------
    LogComparison
        ``pairs`` has, per pair ``model_a - model_b``: ``n_items`` shared, ``n_clusters``, ``mean_a``,
        ``mean_b``, ``estimate`` (mean over shared items of the difference of the item means, repeats
        averaged within item first), ``se_unpaired`` (as if the two models had been run on different items:
        lm-evaluation-harness's comparison), ``se_naive`` (paired, items independent), ``se_cluster`` (CR1),
        ``se_cr2`` and ``df`` (CR2, Bell-McCaffrey), ``statistic``/``pvalue``/``lower``/``upper`` (t test and
        interval from CR2; empty where the SE is 0, with a note), ``pvalue_adjusted``, normal intervals
        ``lower_cluster``/``upper_cluster`` (CR1) and ``lower_naive``/``upper_naive``; with ``mixed``:
        ``mixed_estimate`` with its own ``se_mixed``, ``df_mixed`` (Satterthwaite) and t interval
        ``lower_mixed``/``upper_mixed``, ``sigma_mixed`` and with ``cluster`` ``sd_cluster_mixed``; with
        ``glmm``: ``glmer_log_odds_ratio``, ``glmer_se``, ``glmer_pvalue``; for 0/1 scores with one repeat:
        ``mcnemar_b``, ``mcnemar_c``, ``mcnemar_statistic``, ``mcnemar_pvalue_asymptotic``, ``mcnemar_pvalue``,
        ``mcnemar_midp`` (``LogComparison.mcnemar_test`` says which test: R's, or the clustered one with
        ``cluster``); with repeats: ``var_within`` and ``var_between``; with ``equivalence``:
        ``equivalence_statistic``, ``equivalence_pvalue``, ``equivalence_pvalue_adjusted``; with
        ``noninferiority``: ``noninferiority_statistic_a``/``_pvalue_a`` (H0: model_a worse than model_b by the
        margin or more) and ``_b``; design numbers ``mdd`` and ``n_needed``.

    Notes
    -----
    With item means :math:`\\bar y_{ia}` (repeats averaged), the paired differences
    :math:`d_i = \\bar y_{ia} - \\bar y_{ib}` on the shared items carry no between-item variance; their
    mean's standard error is cluster-robust (Miller 2024): CR1 as ``sandwich::vcovCL(type = "HC1")``, CR2
    as ``clubSandwich::vcovCR(type = "CR2")`` with ``coef_test``'s Satterthwaite df (formulas in
    :func:`mixeval.logs._stats.clustered_means`). McNemar: Fagerland, Lydersen & Laake (2013); with clusters
    Durkalski et al. (2003) and its exact randomisation test (:func:`mixeval.logs._mcnemar.cluster_mcnemar`).

    Rank sets come from simultaneous tests of all pairs on the items every model has, each with its CR2 SE
    and the Bell-McCaffrey df. ``"bonferroni"`` (the default) refers each t to the quantile at level
    ``1 - (1 - level) / (2K)`` for ``K`` pairs; ``"max-t"`` to the quantile of the largest ``|t|`` of a
    multivariate t with the CR2 correlation (integrated numerically: seconds for a few models, about a minute
    for 40). With few clusters the estimated correlation is too noisy for max-t to hold its level (the
    simulation on the Estimands page), where Bonferroni does; with many clusters max-t is a little less
    conservative.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(1)
    >>> items = np.repeat(np.arange(60), 2)
    >>> data = pd.DataFrame({"model": np.tile(["A", "B"], 60), "item": items, "passage": items // 3,
    ...                      "acc": (rng.random(120) < np.where(np.tile([1, 0], 60), 0.7, 0.5)).astype(float)})
    >>> res = compare_logs(data, metric="acc", cluster="passage", mixed=False)
    >>> row = res.pairs.iloc[0]
    >>> row["model_a"], row["model_b"], int(row["n_items"]), int(row["n_clusters"])
    ('A', 'B', 60, 20)
    >>> [round(float(row[c]), 4) for c in ("estimate", "se_naive", "se_cluster", "se_cr2", "mcnemar_pvalue")]
    [0.15, 0.0884, 0.0982, 0.0982, 0.1929]
    """
    level = require_level(level)
    power = require_level(power, "power")
    alpha = require_level(alpha, "alpha")
    effect = _margin(effect, "effect")
    equivalence = _margin(equivalence, "equivalence")
    noninferiority = _margin(noninferiority, "noninferiority")
    mixed = require_bool(mixed, "mixed")
    glmm = require_bool(glmm, "glmm")
    higher_is_better = require_bool(higher_is_better, "higher_is_better")
    if not isinstance(adjust, str) or adjust.strip().lower() not in _ADJUST_NAMES:
        adjust_pvalues([0.5], adjust)  # raises the error naming the methods, before any work
    if ranks not in RANK_METHODS:
        raise InputError(f"ranks must be one of {list(RANK_METHODS)}; got {ranks!r}.")
    if ranks == "bonferroni" and random_state is not None:
        raise InputError("random_state seeds the max-t integration (ranks='max-t'); the Bonferroni rank sets draw "
                         "nothing. Leave random_state out, or choose ranks='max-t'.")
    if random_state is not None and (isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer))
                                     or random_state < 0):
        raise InputError(f"random_state must be a non-negative int seed; got {random_state!r}.")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _compare(data, metric=metric, cluster=cluster, by=by, level=level, adjust=adjust, mixed=mixed,
                          glmm=glmm, power=power, alpha=alpha, effect=effect, equivalence=equivalence,
                          noninferiority=noninferiority, higher_is_better=higher_is_better, ranks=ranks,
                          seed=0 if random_state is None else int(random_state), on_mismatch=on_mismatch,
                          on_error=on_error)
    seen = {}
    for w in caught:
        seen.setdefault(str(w.message), w)
    for w in seen.values():
        warnings.warn(w.message, w.category, stacklevel=caller_stacklevel())
    return _replace(result, warnings=tuple(seen))


def _replace(result: LogComparison, **changes: Any) -> LogComparison:
    from dataclasses import replace

    return replace(result, **changes)


def _compare(data: Any, *, metric: str | None, cluster: str | None, by: str | None, level: float, adjust: str,
             mixed: bool, glmm: bool, power: float, alpha: float, effect: float | None, equivalence: float | None,
             noninferiority: float | None, higher_is_better: bool, ranks: str, seed: int, on_mismatch: str,
             on_error: str) -> LogComparison:
    frame = _as_frame(data, on_mismatch, on_error)
    metric = choose_metric(frame, metric)
    table = item_table(frame, metric, cluster=cluster, by=by)
    if glmm and not table.binary:
        raise InputError(f"glmm=True (CLI --glmm) fits a logistic model of 0/1 scores; metric {metric!r} has other "
                         "values. Leave it out: se_mixed is the mixed model of the score differences.")
    effect, effect_source = _default_effect(table, effect)
    options = dict(level=level, alpha=alpha, power=power, effect=effect, equivalence=equivalence,
                   noninferiority_margin=noninferiority, higher_is_better=higher_is_better)
    notes: list[str] = []
    with _one_blas_thread():
        pairs = pair_table(table, mixed=mixed, **options)
    notes.extend(untestable_notes(pairs))
    pairs.insert(pairs.columns.get_loc("pvalue") + 1, "pvalue_adjusted", adjust_finite(pairs["pvalue"], adjust))
    if equivalence is not None:
        pairs.insert(pairs.columns.get_loc("equivalence_pvalue") + 1, "equivalence_pvalue_adjusted",
                     adjust_finite(pairs["equivalence_pvalue"], adjust))
    if table.binary and "mcnemar_pvalue" in pairs and pairs["mcnemar_pvalue"].isna().any():
        notes.append("McNemar's test needs one 0/1 result per model and item; pairs with repeats have none.")
    if mixed and "sd_cluster_mixed" in pairs:
        single = int(pairs["sd_cluster_mixed"].isna().sum())
        if single:
            notes.append(f"mixed model: for {single} of {len(pairs)} pairs every {cluster!r} holds one shared item (or "
                         "the difference is constant): no cluster variance to estimate, se_mixed is the paired t's.")
        singular = int((pairs["sd_cluster_mixed"] == 0).sum())
        if singular:
            notes.append(f"mixed model: the {cluster!r} variance of the differences is estimated at 0 (singular fit) "
                         f"for {singular} of {len(pairs)} pairs; their se_mixed is that of the items as independent.")
    if glmm:
        pairs = pd.concat([pairs, _glmm_columns(frame, metric, table, pairs, cluster, notes)], axis=1)
    with _one_blas_thread():
        board = leaderboard(table, level=level, higher_is_better=higher_is_better, rank_method=ranks, seed=seed,
                            equivalence=equivalence, adjust=adjust)
    if board.n_items < 2:
        notes.append(f"only {board.n_items} items are shared by all models: no leaderboard.")
    conditional = hetero = None
    if by is not None:
        conditional = by_pairs(table, by, adjust, notes, mixed=False, **options)
        hetero = heterogeneity(table, adjust, notes)
    critical = board.critical
    return LogComparison(
        metric=metric, cluster=cluster, by=by, level=level, adjust=adjust, models=table.models, pairs=pairs,
        leaderboard=board.table, by_pairs=conditional, heterogeneity=hetero,
        critical_value=critical.value if critical else float("nan"), rank_method=ranks,
        critical_text=critical.describe() if critical else "", n_common_items=board.n_items, interval=board.interval,
        power=power, alpha=alpha, effect=effect, effect_source=effect_source, equivalence=equivalence,
        noninferiority=noninferiority, higher_is_better=higher_is_better,
        mcnemar_test=MCNEMAR_TESTS[table.cluster_labels is not None] if table.binary else "",
        mixed_model=mixed_model_name(cluster) if mixed else None, notes=tuple(dict.fromkeys(notes)))
