"""``compare_logs``: every pair of models on their shared items, three ways side by side.

The pipeline: read (any harness, :func:`~mixeval.logs.read_logs`) -> item table (repeats averaged within
item, :func:`~mixeval.logs._items.item_table`) -> paired differences of every pair (vectorised over pairs,
:func:`~mixeval.logs._stats.clustered_means`) -> the mixed model of every pair's item-level differences from the
same cluster sums (:func:`~mixeval.logs._stats.random_intercept`) -> McNemar for 0/1 items -> logistic GLMMs per
pair (optional) -> multiplicity adjustment -> leaderboard with simultaneous rank sets -> conditional pairs (``by``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._adjust import ADJUST_METHODS, adjust_pvalues
from .._random import as_generator
from .._results import Result
from .._validation import require_bool
from ..errors import ColumnError, InputError, InputTypeError
from ._items import ItemTable, choose_metric, item_table
from ._readers import KEY_COLUMNS, check_items, read_logs
from ._stats import clustered_means, mcnemar, power_table, random_intercept

__all__ = ["LogComparison", "compare_logs", "pair_table", "leaderboard", "glmm_pair", "mixed_model_name"]

_ADJUST_NAMES = frozenset(alias for aliases in ADJUST_METHODS.values() for alias in aliases)
_CHUNK = 256  # pairs per block of the vectorised computation (items x pairs floats each)


# ------------------------------------------------------------------------------------------ validation

def _level(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise InputError(f"level must be a number between 0 and 1 (e.g. 0.95); got {level!r}.")
    return float(level)


def _probability(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise InputError(f"{name} must be a number between 0 and 1; got {value!r}.")
    return float(value)


def _effect(effect: float | None) -> float | None:
    if effect is None:
        return None
    if isinstance(effect, bool) or not isinstance(effect, (int, float)) or not np.isfinite(effect) or effect == 0:
        raise InputError(f"effect must be a non-zero number (the difference to detect); got {effect!r}.")
    return abs(float(effect))


def _resamples(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 100:
        raise InputError(f"n_resamples must be an integer >= 100; got {n!r}.")
    return int(n)


def _one_blas_thread():
    """BLAS on one thread: the products here are thin (models x items times items x models), where threads
    gain nothing and, on a loaded machine, oversubscription makes them a hundred times slower."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _as_frame(data: Any, on_mismatch: str) -> pd.DataFrame:
    if on_mismatch not in ("error", "drop"):
        raise InputError(f"on_mismatch must be 'error' or 'drop'; got {on_mismatch!r}.")
    if isinstance(data, pd.DataFrame):
        if on_mismatch == "drop":
            missing = [c for c in KEY_COLUMNS if c not in data.columns]
            if missing:
                raise ColumnError(f"on_mismatch='drop' leaves out items whose question differs between models, by the "
                                  f"item_hash the readers write; the table has no column {missing[0]!r}.")
            return check_items(data, on_mismatch="drop")
        return data
    if isinstance(data, (str, Path)) or (isinstance(data, Iterable) and not isinstance(data, (dict, bytes))):
        return read_logs(data, on_mismatch=on_mismatch)
    raise InputTypeError(f"data must be a long-format DataFrame or log paths; got {type(data).__name__}.")


# ------------------------------------------------------------------------------------------ pair stats

def _all_pairs(n_models: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.triu_indices(n_models, k=1)
    return a, b


def _check_shared(table: ItemTable, ia: np.ndarray, ib: np.ndarray, n: np.ndarray, where: str) -> None:
    few = np.flatnonzero(n < 2)
    if few.size:
        k = few[0]
        raise InputError(f"models {table.models[ia[k]]!r} and {table.models[ib[k]]!r} share {int(n[k])} items{where}; "
                         f"a paired comparison needs at least 2 ({few.size} such pairs). Did they run the same tasks?")


@dataclass(frozen=True)
class _Cross:
    """Sums over the items two models share, for every pair at once (models x models matrices ``left.T @ right``).

    ``n[a, b]`` shared items; ``s[a, b]``/``q[a, b]`` sum and sum of squares of model a's (centred) item means on
    them; ``ss``, ``dfs``, ``inv`` model a's within-item sum of squares, its degrees of freedom and the sum of
    its 1/repeats; ``multi[a, b]`` shared items where a or b has other than one repeat; ``b[a, b]`` shared
    items with a = 1 and b = 0.
    """

    n: np.ndarray
    s: np.ndarray
    q: np.ndarray
    ss: np.ndarray
    dfs: np.ndarray
    inv: np.ndarray
    multi: np.ndarray
    b: np.ndarray | None


def _cross(table: ItemTable, present: np.ndarray) -> _Cross:
    p = present.astype(float)
    centre = np.nanmean(np.where(present, table.means, np.nan), axis=0)
    y = np.where(present, table.means - np.nan_to_num(centre), 0.0)
    reps = np.where(present, table.repeats, 1.0)
    not_one = (present & (table.repeats != 1)).astype(float)
    multi = not_one.T @ p
    b = None
    if table.binary:
        b = (present & (table.means == 1)).astype(float).T @ (present & (table.means == 0)).astype(float)
    return _Cross(n=p.T @ p, s=y.T @ p, q=(y * y).T @ p, ss=np.where(present, table.within_ss, 0.0).T @ p,
                  dfs=((reps - 1) * p).T @ p, inv=(p / reps).T @ p, multi=multi + multi.T, b=b)


def _unpaired_se(cross: _Cross, ia: np.ndarray, ib: np.ndarray, n: np.ndarray) -> np.ndarray:
    var_a = (cross.q[ia, ib] - cross.s[ia, ib] ** 2 / n) / (n - 1)
    var_b = (cross.q[ib, ia] - cross.s[ib, ia] ** 2 / n) / (n - 1)
    return np.sqrt(np.maximum(var_a + var_b, 0.0) / n)


def _within(cross: _Cross, ia: np.ndarray, ib: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pooled within-item (repeat) variance of model a on the shared items, and its mean of 1/repeats."""
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where(cross.dfs[ia, ib] > 0, cross.ss[ia, ib] / cross.dfs[ia, ib], 0.0)
    return var, cross.inv[ia, ib] / n


def pair_table(table: ItemTable, *, level: float = 0.95, alpha: float = 0.05, power: float = 0.8,
               effect: float | None = None, mixed: bool = False, item_mask: np.ndarray | None = None,
               where: str = "") -> pd.DataFrame:
    """Paired differences ``model_a - model_b`` of every pair of models on their shared items.

    The columns are described in :func:`compare_logs`; ``mixed`` adds the mixed model of the item-level
    differences (:func:`_mixed_block`), ``item_mask`` restricts the items (a class of ``by``), ``where``
    names that restriction in error messages.
    """
    ia_all, ib_all = _all_pairs(len(table.models))
    present = table.present
    if item_mask is not None:
        present = present & item_mask[:, None]
    cross = _cross(table, present)
    _check_shared(table, ia_all, ib_all, cross.n[ia_all, ib_all], where)
    repeats = bool((table.repeats > 1).any())
    q = stats.norm.ppf(0.5 + level / 2)
    blocks = []
    for start in range(0, len(ia_all), _CHUNK):
        ia, ib = ia_all[start:start + _CHUNK], ib_all[start:start + _CHUNK]
        w = present[:, ia] & present[:, ib]
        ya, yb = table.means[:, ia], table.means[:, ib]
        cm = clustered_means(ya - yb, w, table.clusters)
        n = cross.n[ia, ib]
        tcrit = stats.t.ppf(0.5 + level / 2, cm.df_cr2)
        statistic = cm.estimate / cm.se_cr2
        block = {
            "model_a": [table.models[i] for i in ia], "model_b": [table.models[i] for i in ib],
            "n_items": cm.n, "n_clusters": cm.n_clusters,
            "mean_a": np.where(w, ya, 0).sum(axis=0) / n, "mean_b": np.where(w, yb, 0).sum(axis=0) / n,
            "estimate": cm.estimate, "se_unpaired": _unpaired_se(cross, ia, ib, n),
            "se_naive": cm.se_naive, "se_cluster": cm.se_cr1, "se_cr2": cm.se_cr2, "df": cm.df_cr2,
            "statistic": statistic, "pvalue": 2 * stats.t.sf(np.abs(statistic), cm.df_cr2),
            "lower": cm.estimate - tcrit * cm.se_cr2, "upper": cm.estimate + tcrit * cm.se_cr2,
            "lower_cluster": cm.estimate - q * cm.se_cr1, "upper_cluster": cm.estimate + q * cm.se_cr1,
            "lower_naive": cm.estimate - q * cm.se_naive, "upper_naive": cm.estimate + q * cm.se_naive,
        }
        if cross.b is not None:
            mc = mcnemar(cross.b[ia, ib], cross.b[ib, ia])
            single = cross.multi[ia, ib] == 0
            for name, values in (("mcnemar_b", mc.b), ("mcnemar_c", mc.c), ("mcnemar_statistic", mc.statistic),
                                 ("mcnemar_pvalue_asymptotic", mc.pvalue_asymptotic),
                                 ("mcnemar_pvalue", mc.pvalue), ("mcnemar_midp", mc.midp)):
                block[name] = np.where(single, values, np.nan)
        if repeats:
            var_a, inv_a = _within(cross, ia, ib, n)
            var_b, inv_b = _within(cross, ib, ia, n)
            block["var_within"] = var_a + var_b
            block["var_between"] = np.maximum(cm.sd ** 2 - (var_a * inv_a + var_b * inv_b), 0.0)
        if mixed:
            block.update(_mixed_block(cm, table.cluster_labels is not None, q))
        block.update(power_table(cm.se_cr2, cm.n, cm.estimate, alpha=alpha, power=power, effect=effect))
        blocks.append(pd.DataFrame(block))
    out = pd.concat(blocks, ignore_index=True)
    out.insert(out.columns.get_loc("lower"), "level", level)
    return out


# ---------------------------------------------------------------------------------------- mixed models

def mixed_model_name(cluster: str | None) -> str:
    """What gave ``se_mixed``: the mixed model of the pair's item-level differences."""
    if cluster is None:
        return ("d ~ 1 on the item-level differences d = a - b (repeats averaged within item; no cluster, so no "
                "random effect: se_mixed is se_naive)")
    return (f"lmer(d ~ 1 + (1 | {cluster}), REML) on the item-level differences d = a - b (repeats averaged "
            "within item); Wald interval")


def _mixed_block(cm: Any, clustered: bool, q: float) -> dict[str, np.ndarray]:
    """The mixed model of the item-level differences of each pair: ``d ~ 1 + (1 | cluster)`` by REML
    (:func:`~mixeval.logs._stats.random_intercept`, all pairs at once), ``d ~ 1`` without clusters."""
    if clustered:
        fit = random_intercept(cm.sums, cm.sizes, cm.ss, cm.n, cm.estimate)
        estimate, se = fit.estimate, fit.se
        extra = {"sd_cluster_mixed": fit.sd_cluster, "sigma_mixed": fit.sigma}
    else:
        estimate, se = cm.estimate, cm.se_naive
        extra = {"sigma_mixed": cm.sd}
    return {"mixed_estimate": estimate, "se_mixed": se, "lower_mixed": estimate - q * se,
            "upper_mixed": estimate + q * se, **extra}


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
    accuracy that the other columns estimate).
    """
    from .. import glmer  # the mixed-model layer; imported where used (the fits are optional)

    terms = ["(1|i)"] + (["(1|i:m)"] if repeats else []) + (["(1|c)", "(1|c:m)"] if cluster else [])
    g = glmer("y ~ a + " + " + ".join(terms), frame, family="binomial")
    estimate = float(g.fixef["a"])
    se = float(np.sqrt(g.vcov.loc["a", "a"]))
    return {"glmer_log_odds_ratio": estimate, "glmer_se": se, "glmer_pvalue": float(2 * stats.norm.sf(abs(estimate) / se))}


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


# ----------------------------------------------------------------------------------------- leaderboard

def leaderboard(table: ItemTable, *, level: float = 0.95, higher_is_better: bool = True, n_resamples: int = 10_000,
                random_state: Any = None) -> tuple[pd.DataFrame, float, int]:
    """Model means on the items every model has, with CR2 intervals and simultaneous rank sets.

    Returns the table, the critical value of the largest absolute t statistic and the number of common items.

    Notes
    -----
    The cluster-robust (CR1) covariance of the model means, :math:`\\Sigma = \\frac{G}{G-1} S^\\top S / n^2`
    with :math:`S` the cluster sums of centred item means, gives every pairwise difference a standard error
    :math:`s_{ab}`; :math:`q` is the ``level`` quantile of :math:`\\max_{a<b} |Z_a - Z_b| / s_{ab}` for
    :math:`Z \\sim N(0, \\Sigma)` (simulated). A model's rank set runs from 1 + the number of models
    significantly better (simultaneous interval of the difference excluding 0) to the number of models
    minus the number significantly worse.
    """
    complete = table.present.all(axis=1)
    n = int(complete.sum())
    m = len(table.models)
    if n < 2:
        return pd.DataFrame(), float("nan"), n
    y = table.means[complete]
    w = np.ones_like(y, dtype=bool)
    clusters = table.clusters[np.flatnonzero(complete)]
    cm = clustered_means(y, w, clusters)
    tcrit = stats.t.ppf(0.5 + level / 2, cm.df_cr2)
    ct = clusters.T.tocsr()
    sums = np.asarray(ct @ (y - cm.estimate))
    g = int((np.asarray(ct.sum(axis=1)).ravel() > 0).sum())
    sigma = g / (g - 1) * (sums.T @ sums) / (n * n)
    ia, ib = _all_pairs(m)
    se = np.sqrt(np.maximum(sigma[ia, ia] + sigma[ib, ib] - 2 * sigma[ia, ib], 0.0))
    vals, vecs = np.linalg.eigh(sigma)
    root = vecs * np.sqrt(np.clip(vals, 0, None))
    rng = as_generator(random_state)
    ok = se > 0
    maxima = np.empty(n_resamples)
    for start in range(0, n_resamples, 2000):
        z = rng.standard_normal((min(2000, n_resamples - start), m)) @ root.T
        t = np.abs(z[:, ia[ok]] - z[:, ib[ok]]) / se[ok]
        maxima[start:start + len(z)] = t.max(axis=1) if t.shape[1] else 0.0
    q = float(np.quantile(maxima, level))
    diff = cm.estimate[ia] - cm.estimate[ib]
    sign = 1.0 if higher_is_better else -1.0
    a_better = sign * diff - q * se > 0        # a significantly better than b
    b_better = sign * diff + q * se < 0
    n_better_than_me = np.bincount(ia, weights=b_better, minlength=m) + np.bincount(ib, weights=a_better, minlength=m)
    n_worse_than_me = np.bincount(ia, weights=a_better, minlength=m) + np.bincount(ib, weights=b_better, minlength=m)
    order = np.argsort(-sign * cm.estimate, kind="stable")
    rank = np.empty(m, dtype=int)
    rank[order] = np.arange(1, m + 1)
    board = pd.DataFrame({
        "model": list(table.models), "n_items": cm.n, "n_clusters": cm.n_clusters, "estimate": cm.estimate,
        "se_naive": cm.se_naive, "se_cluster": cm.se_cr1, "se_cr2": cm.se_cr2, "df": cm.df_cr2, "level": level,
        "lower": cm.estimate - tcrit * cm.se_cr2, "upper": cm.estimate + tcrit * cm.se_cr2, "rank": rank,
        "rank_lower": 1 + n_better_than_me.astype(int), "rank_upper": m - n_worse_than_me.astype(int),
    })
    return board.sort_values("rank", kind="stable").reset_index(drop=True), q, n


# ------------------------------------------------------------------------------------------ conditional

def _heterogeneity(table: ItemTable) -> pd.DataFrame:
    """Per pair: does the paired difference differ between the classes? (cluster-robust Wald F test)."""
    import statsmodels.api as sm  # CR1 covariance of the class means (sandwich::vcovCL, type HC1)

    ia, ib = _all_pairs(len(table.models))
    present = table.present
    groups = (np.asarray(table.clusters.argmax(axis=1)).ravel())
    k = len(table.by_labels)
    rows = []
    for a, b in zip(ia, ib):
        w = present[:, a] & present[:, b]
        d = (table.means[w, a] - table.means[w, b])
        codes = table.by_codes[w]
        used = np.unique(codes)
        if len(used) < 2:
            rows.append({"statistic": np.nan, "df_num": np.nan, "df_den": np.nan, "pvalue": np.nan})
            continue
        x = (codes[:, None] == used[None, :]).astype(float)
        fit = sm.OLS(d, x).fit(cov_type="cluster", cov_kwds={"groups": groups[w]}, use_t=True)
        contrast = np.hstack([np.ones((len(used) - 1, 1)), -np.eye(len(used) - 1)])
        test = fit.f_test(contrast)
        rows.append({"statistic": float(np.squeeze(test.fvalue)), "df_num": float(test.df_num),
                     "df_den": float(test.df_denom), "pvalue": float(test.pvalue)})
    out = pd.DataFrame(rows)
    out.insert(0, "model_b", [table.models[i] for i in ib])
    out.insert(0, "model_a", [table.models[i] for i in ia])
    out["n_classes"] = k
    return out


def _by_pairs(table: ItemTable, by: str, **kwargs: Any) -> pd.DataFrame:
    frames = []
    for code, label in enumerate(table.by_labels):
        mask = table.by_codes == code
        part = pair_table(table, item_mask=mask, where=f" in the class {by} = {label!r} (bin a numeric property "
                                                       "into a few classes first, e.g. with mixeval.bin_property)",
                          **kwargs)
        part.insert(0, by, label)
        frames.append(part)
    return pd.concat(frames, ignore_index=True)


# ----------------------------------------------------------------------------------------------- result

_SHOW = ["model_a", "model_b", "n_items", "estimate", "se_unpaired", "se_naive", "se_cluster", "se_cr2", "df",
         "lower", "upper", "pvalue", "pvalue_adjusted", "se_mixed", "mcnemar_pvalue", "mcnemar_midp", "mdd",
         "n_needed"]


@dataclass(frozen=True, eq=False)
class LogComparison(Result):
    """Paired comparisons of the models in evaluation logs (:func:`compare_logs`).

    Attributes
    ----------
    metric, cluster, by : str or None
        The compared score column, the cluster column, the class column of conditional comparisons.
    models : tuple of str
    pairs : pandas.DataFrame
        One row per pair (``model_a - model_b``); columns in :func:`compare_logs`.
    leaderboard : pandas.DataFrame
        Model means on the items all models share with CR2 intervals and simultaneous rank sets.
    by_pairs, heterogeneity : pandas.DataFrame or None
        With ``by``: the pairs within each class; per pair the F test that the difference is the same in
        every class.
    critical_value : float
        The quantile of the largest absolute t statistic over all pairs, behind the rank sets.
    n_common_items : int
        Items every model has (the leaderboard's items).
    notes : tuple of str
        Fitting messages of the mixed models and what was not computed.
    mixed_model : str or None
        The model behind ``se_mixed`` (None without ``mixed``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> d = pd.DataFrame({"model": np.repeat(["A", "B", "C"], 50), "item": np.tile(np.arange(50), 3),
    ...                   "s": rng.normal(size=150) + np.repeat([0.5, 0.0, 0.0], 50)})
    >>> res = compare_logs(d, metric="s", mixed=False, random_state=0)
    >>> res.models, list(res.leaderboard["model"])[0], res.to_report().title
    (('A', 'B', 'C'), 'A', 'Comparison of 3 models on s')
    """

    metric: str
    cluster: str | None
    by: str | None
    level: float
    adjust: str
    models: tuple[str, ...]
    pairs: pd.DataFrame
    leaderboard: pd.DataFrame
    by_pairs: pd.DataFrame | None = None
    heterogeneity: pd.DataFrame | None = None
    critical_value: float = float("nan")
    n_common_items: int = 0
    notes: tuple[str, ...] = ()
    mixed_model: str | None = None

    def summary(self) -> str:
        from ..report import text_table

        show = [c for c in _SHOW if c in self.pairs.columns]
        lines = [f"Paired comparisons of {len(self.models)} models on metric {self.metric!r}"
                 + (f", clusters {self.cluster!r}" if self.cluster else "")
                 + f" ({100 * self.level:g}% intervals: CR2 with Bell-McCaffrey df; p-values adjusted by {self.adjust})",
                 text_table(self.pairs[show], digits=4, max_rows=20)]
        if self.mixed_model:
            lines.append(f"se_mixed: {self.mixed_model}")
        if len(self.leaderboard):
            lines += ["", f"Leaderboard on the {self.n_common_items} items all models share (rank sets from "
                          f"simultaneous intervals, max-|t| critical value {self.critical_value:.4g})",
                      text_table(self.leaderboard[["model", "estimate", "se_cr2", "lower", "upper", "rank",
                                                   "rank_lower", "rank_upper"]], digits=4, max_rows=30)]
        if self.heterogeneity is not None:
            lines += ["", f"Does the difference vary with {self.by!r}? (cluster-robust F test per pair)",
                      text_table(self.heterogeneity, digits=4, max_rows=20)]
        return "\n".join(lines)

    def to_report(self, title: str | None = None):
        """An HTML/text :class:`~mixeval.report.Report` of the comparison."""
        from ._html import comparison_report

        return comparison_report(self, title=title)

    def _repr_html_(self) -> str:
        return self.to_report()._repr_html_()


def compare_logs(data: Any, *, metric: str | None = None, cluster: str | None = None, by: str | None = None,
                 level: float = 0.95, adjust: str = "holm", mixed: bool = True, glmm: bool = False, power: float = 0.8,
                 alpha: float = 0.05, effect: float | None = None, higher_is_better: bool = True,
                 n_resamples: int = 10_000, random_state: Any = None, on_mismatch: str = "error") -> LogComparison:
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
        Confidence level of the intervals.
    adjust : str
        Multiplicity adjustment of the pair p-values across pairs (``"holm"``, ``"bh"``, ... as
        R's ``p.adjust``; the names of ``mixeval._adjust.ADJUST_METHODS``).
    mixed : bool
        The mixed model of each pair's item-level differences, ``d ~ 1 + (1 | cluster)`` by REML (the
        paired analysis with the clusters as a random effect; fitted for all pairs at once), ``d ~ 1``
        without ``cluster``. ``False`` leaves its columns out. ``LogComparison.mixed_model`` names the model.
    glmm : bool
        Also fit the logistic mixed model of each pair's 0/1 rows with :func:`mixeval.glmer` (one fit per
        pair on the long data, slow on large logs; refused for a metric that is not 0/1).
    power, alpha, effect : float
        The power and two-sided level of the design numbers; ``effect`` an additional difference to plan for.
    higher_is_better : bool
        Direction of the metric for ranks.
    n_resamples, random_state
        Draws of the simulated largest absolute t statistic behind the rank sets, and their seed.
    on_mismatch : {"error", "drop"}
        Items whose question differs between models (see :func:`check_items`): for paths, what the readers
        do; for a table (whose readers already raised), ``"drop"`` leaves them out by its ``item_hash``.

    Returns
    -------
    LogComparison
        ``pairs`` has, per pair ``model_a - model_b``: ``n_items`` shared, ``n_clusters``, ``mean_a``,
        ``mean_b``, ``estimate`` (mean over shared items of the difference of the item means, repeats
        averaged within item first), ``se_unpaired`` (as if the two models had been run on different items:
        lm-evaluation-harness's comparison), ``se_naive`` (paired, items independent), ``se_cluster`` (CR1),
        ``se_cr2`` and ``df`` (CR2, Bell-McCaffrey), ``statistic``/``pvalue``/``lower``/``upper`` (t test and
        interval from CR2), ``pvalue_adjusted``, normal intervals ``lower_cluster``/``upper_cluster`` (CR1)
        and ``lower_naive``/``upper_naive``; with ``mixed``: ``mixed_estimate``, ``se_mixed``,
        ``lower_mixed``/``upper_mixed`` (Wald), ``sigma_mixed`` and with ``cluster`` ``sd_cluster_mixed``;
        with ``glmm``: ``glmer_log_odds_ratio``, ``glmer_se``, ``glmer_pvalue``; for 0/1 scores with one repeat: ``mcnemar_b``, ``mcnemar_c``,
        ``mcnemar_statistic``, ``mcnemar_pvalue_asymptotic`` (R's ``mcnemar.test``), ``mcnemar_pvalue``
        (exact), ``mcnemar_midp``; with repeats: ``var_within`` and ``var_between`` (variance of the
        difference between repeats and between items); design numbers ``mdd`` (minimum detectable
        difference at ``power``) and ``n_needed`` (items to detect the observed estimate with ``power``;
        ``n_needed_effect`` for ``effect``).

    Notes
    -----
    With item means :math:`\\bar y_{ia}` (repeats averaged), the paired differences
    :math:`d_i = \\bar y_{ia} - \\bar y_{ib}` on the shared items carry no between-item variance; their
    mean's standard error is cluster-robust (Miller 2024): CR1 as ``sandwich::vcovCL(type = "HC1")``, CR2
    as ``clubSandwich::vcovCR(type = "CR2")`` with ``coef_test``'s Satterthwaite df (formulas in
    :func:`mixeval.logs._stats.clustered_means`). McNemar: Fagerland, Lydersen & Laake (2013).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(1)
    >>> items = np.repeat(np.arange(60), 2)
    >>> data = pd.DataFrame({"model": np.tile(["A", "B"], 60), "item": items, "passage": items // 3,
    ...                      "acc": (rng.random(120) < np.where(np.tile([1, 0], 60), 0.7, 0.5)).astype(float)})
    >>> res = compare_logs(data, metric="acc", cluster="passage", mixed=False, random_state=1)
    >>> row = res.pairs.iloc[0]
    >>> row["model_a"], row["model_b"], int(row["n_items"]), int(row["n_clusters"])
    ('A', 'B', 60, 20)
    >>> [round(float(row[c]), 4) for c in ("estimate", "se_naive", "se_cluster", "mcnemar_pvalue")]
    [0.15, 0.0884, 0.0982, 0.136]
    """
    frame = _as_frame(data, on_mismatch)
    metric = choose_metric(frame, metric)
    level = _level(level)
    power = _probability(power, "power")
    alpha = _probability(alpha, "alpha")
    effect = _effect(effect)
    n_resamples = _resamples(n_resamples)
    mixed = require_bool(mixed, "mixed")
    glmm = require_bool(glmm, "glmm")
    higher_is_better = require_bool(higher_is_better, "higher_is_better")
    if not isinstance(adjust, str) or adjust.strip().lower() not in _ADJUST_NAMES:
        adjust_pvalues([0.5], adjust)  # raises the error naming the methods, before any work
    table = item_table(frame, metric, cluster=cluster, by=by)
    if glmm and not table.binary:
        raise InputError(f"glmm=True (CLI --glmm) fits a logistic model of 0/1 scores; metric {metric!r} has other "
                         "values. Leave it out: se_mixed is the mixed model of the score differences.")
    notes: list[str] = []
    with _one_blas_thread():
        pairs = pair_table(table, level=level, alpha=alpha, power=power, effect=effect, mixed=mixed)
    pairs.insert(pairs.columns.get_loc("pvalue") + 1, "pvalue_adjusted", adjust_pvalues(pairs["pvalue"], adjust))
    if table.binary and "mcnemar_pvalue" in pairs and pairs["mcnemar_pvalue"].isna().any():
        notes.append("McNemar's test needs one 0/1 result per model and item; pairs with repeats have none.")
    if mixed and "sd_cluster_mixed" in pairs:
        singular = int((pairs["sd_cluster_mixed"] == 0).sum())
        if singular:
            notes.append(f"mixed model: the {cluster!r} variance of the differences is estimated at 0 (singular fit) "
                         f"for {singular} of {len(pairs)} pairs; their se_mixed is that of the items as independent.")
    if glmm:
        pairs = pd.concat([pairs, _glmm_columns(frame, metric, table, pairs, cluster, notes)], axis=1)
    with _one_blas_thread():
        board, q, n_common = leaderboard(table, level=level, higher_is_better=higher_is_better,
                                         n_resamples=n_resamples, random_state=random_state)
    if n_common < 2:
        notes.append(f"only {n_common} items are shared by all models: no leaderboard.")
    by_pairs = heterogeneity = None
    if by is not None:
        by_pairs = _by_pairs(table, by, level=level, alpha=alpha, power=power, effect=effect)
        heterogeneity = _heterogeneity(table)
    return LogComparison(metric=metric, cluster=cluster, by=by, level=level, adjust=adjust, models=table.models,
                         mixed_model=mixed_model_name(cluster) if mixed else None,
                         pairs=pairs, leaderboard=board, by_pairs=by_pairs, heterogeneity=heterogeneity,
                         critical_value=q, n_common_items=n_common, notes=tuple(dict.fromkeys(notes)))
