"""System comparisons from the metric's labels: :func:`metric_comparisons` with the paper's interval and
calibrated alternatives (one row per method)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._random import as_generator
from .._validation import (
    as_1d_float,
    require_columns,
    require_dataframe,
    require_no_missing,
    require_numeric_column,
    require_positive_int,
)
from ..errors import BoundaryWarning, InputError, InputTypeError, caller_stacklevel
from . import _core
from ._model import MetricModel
from ._summary import _ESTIMAND_OBS, _ESTIMAND_TRUE, _mask, _z

__all__ = ["metric_comparisons", "METHODS"]

#: Interval methods of :func:`metric_comparisons` and what each assumes.
METHODS: dict[str, str] = {
    "uncorrected": "Eqs. 5-8: the metric's labels taken as truth; exact for the difference in OBSERVED rates",
    "goyal": "Eqs. 13-14 (+A.3): observed difference with Var p_R(1-p_R)/(N-1); rates known constants",
    "calibrated": "p_R-hat difference with its own sampling variance; rates known constants, transportable",
    "delta": "calibrated + delta-method variance of the estimated rates; rates transportable",
    "bootstrap": "calibrated, parametric bootstrap of labels and rates, percentile interval; rates transportable",
    "ppi": "prediction-powered (Angelopoulos et al. 2023) with a gold subset of the evaluated outputs",
}

def _classes(values: np.ndarray, metric: MetricModel, what: str) -> np.ndarray:
    """Observed labels as integer class codes 0..K-1 (raises on anything else)."""
    k = metric.n_classes
    bad = (values != np.round(values)) | (values < 0) | (values > k - 1)
    if bad.any():
        example = values[bad][:3].tolist()
        raise InputError(
            f"{what} must hold observed classes 0..{k - 1} of the metric model "
            f"({int(bad.sum())} value(s) do not, e.g. {example}). Threshold scores into labels first."
        )
    return values.astype(np.int64)


def _as_long(
    data: pd.DataFrame | Mapping[str, Sequence[float]], system: str, score: str, item: str | None
) -> pd.DataFrame:
    if isinstance(data, Mapping):
        if len(data) < 2:
            raise InputError(f"need at least two systems to compare; got {len(data)}.")
        frames = []
        for name, vals in data.items():
            arr = as_1d_float(vals, f"data[{name!r}]")
            frames.append(pd.DataFrame({system: name, score: arr, "__item": np.arange(arr.size)}))
        out = pd.concat(frames, ignore_index=True)
        return out.rename(columns={"__item": item}) if item else out.drop(columns="__item")
    data = require_dataframe(data)
    cols = [system, score] + ([item] if item else [])
    require_columns(data, cols)
    require_no_missing(data, cols)
    return data


def _metric_for(metric: MetricModel | Mapping[str, MetricModel], name: str) -> MetricModel:
    if isinstance(metric, MetricModel):
        return metric
    if isinstance(metric, Mapping):
        if name not in metric:
            raise InputError(
                f"no metric model given for system {name!r}; `metric` has keys {list(metric)}."
            )
        m = metric[name]
        if not isinstance(m, MetricModel):
            raise InputTypeError(f"`metric[{name!r}]` must be a MetricModel; got {type(m).__name__}.")
        return m
    raise InputTypeError(f"`metric` must be a MetricModel or a mapping system -> MetricModel; got {type(metric).__name__}.")


def metric_comparisons(
    data: pd.DataFrame | Mapping[str, Sequence[float]],
    *,
    metric: MetricModel | Mapping[str, MetricModel],
    system: str = "system",
    score: str = "score",
    item: str | None = None,
    control: str | None = None,
    methods: Sequence[str] | None = None,
    level: float = 0.95,
    gold: pd.DataFrame | None = None,
    truth: str = "truth",
    ppi_predictor: str = "calibrated",
    n_resamples: int = 2000,
    random_state: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """Pairwise comparisons of systems whose outputs were labelled by a metric model.

    Parameters
    ----------
    data : DataFrame or mapping
        Long table with one row per scored output (columns ``system``, ``score`` and,
        for paired designs, ``item``), or a mapping ``{system: observed labels}``
        (paired by position when ``item`` is given). Observed labels are the metric's
        classes ``0..K-1`` (binary: 0/1).
    metric : MetricModel or mapping system -> MetricModel
        One model shared by all systems (its rate errors are then shared too), or one
        per system (independent calibration sets).
    system, score, item : str
        Column names. With ``item`` the two systems of every contrast must have scored
        exactly the same items, once each (paired design, Goyal et al. A.3).
    control : str, optional
        Compare every other system with this one; default: all pairs, later system
        minus earlier system in order of first appearance.
    methods : sequence of str, optional
        Any of ``"uncorrected"``, ``"goyal"``, ``"calibrated"``, ``"delta"``,
        ``"bootstrap"``, ``"ppi"`` (see :data:`METHODS`). Default: goyal and calibrated,
        plus delta and bootstrap when the metric has counts, plus ppi when ``gold`` is given.
    level : float
        Confidence level.
    gold : DataFrame, optional
        Gold-labelled outputs for ``"ppi"``: columns ``system``, ``score`` (metric label)
        and ``truth`` (0/1). They must be a random sample of each system's outputs,
        *not* included in ``data``.
    truth : str
        Column of ``gold`` with the true label.
    ppi_predictor : {"calibrated", "observed"}
        Prediction used by PPI: ``q_o`` of the metric model, or the observed positive
        indicator. Either is valid; the better predictor gives the narrower interval.
    n_resamples : int
        Bootstrap resamples (keyword-only).
    random_state : int or numpy.random.Generator, optional
        Seed of the bootstrap.

    Returns
    -------
    pandas.DataFrame
        One row per contrast and method: ``contrast`` ("T - C"), ``treatment``,
        ``control``, ``method``, ``estimand``, ``estimate``, ``se``, ``lower``,
        ``upper``, ``level``, ``estimate_uncorrected``, ``se_uncorrected``,
        ``lower_uncorrected``, ``upper_uncorrected``, ``n_treatment``, ``n_control``,
        ``paired``.

    Notes
    -----
    Which interval is calibrated for what (all normal-theory, large N):

    * ``uncorrected`` (Eqs. 5-8): the observed labels are i.i.d. Bernoulli(p_O), so it
      is exact for the difference of *observed* rates. With a metric shared by both
      systems and transportable, true difference = ``(prec - FOR)`` x observed
      difference: the test of "no difference" keeps its level, but as an interval for
      the true difference it is biased whenever there is an effect.
    * ``goyal`` (Eqs. 13-14, paired: Eq. 20): centred at the observed difference with
      variance ``p_R (1 - p_R) / (N - 1)`` per system -- the variance of a mean of N
      *true* labels, larger than the actual sampling variance of any estimator here.
      Conservative under "no difference"; biased like ``uncorrected`` otherwise.
    * ``calibrated``: ``sum_o q_o (p_T,o - p_C,o)`` with its own sampling variance
      (sample variance of ``q(O)``, or of per-item differences ``q(O_T) - q(O_C)`` when
      paired). Calibrated for the true difference if ``q`` is exactly known and
      transportable (``P(R|O)`` on the evaluated outputs equals that on the test set).
    * ``delta``: adds ``sum_o g_o^2 q_o (1 - q_o) / n_o`` with ``g_o`` the gradient of
      the estimate in ``q_o``: needs the test-set counts; calibrated if ``q`` is
      transportable and the annotated test set is independent of the evaluated outputs.
    * ``bootstrap``: parametric bootstrap -- observed labels multinomial (jointly per
      item when paired) and ``q*_o = Bin(n_o, q_o) / n_o`` -- percentile interval; same
      assumptions as ``delta``, better for small test sets or rates near 0/1.
    * ``ppi``: prediction-powered inference (Angelopoulos et al. 2023),
      ``mean_N f(O) - mean_n (f(O) - R)`` per system, variances added. Calibrated
      without transportability, needs only that each system's gold outputs are a
      random sample of its outputs, independent of the unlabelled ones. The pairing is
      ignored (systems' gold subsets are treated as independent).

    Examples
    --------
    >>> import numpy as np
    >>> from mixeval.metric_model import MetricModel, metric_comparisons
    >>> rng = np.random.default_rng(0)
    >>> labels = {"A": rng.binomial(1, 0.10, 5000), "B": rng.binomial(1, 0.12, 5000)}
    >>> m = MetricModel.from_confusion(tp=170, fp=30, fn=20, tn=780)
    >>> t = metric_comparisons(labels, metric=m, random_state=1)
    >>> list(t["method"])
    ['goyal', 'calibrated', 'delta', 'bootstrap']
    >>> t.loc[t["method"] == "calibrated", ["estimate", "se"]].round(4).values.tolist()
    [[0.0155, 0.0051]]
    """
    long = _as_long(data, system, score, item)
    z = _z(level)
    systems = list(pd.unique(long[system]))
    if len(systems) < 2:
        raise InputError(f"column {system!r} has a single system ({systems[0]!r}); need at least two to compare.")
    if control is not None and control not in systems:
        raise InputError(f"`control` {control!r} is not a system in column {system!r}; systems: {systems}.")
    metrics = {s: _metric_for(metric, s) for s in systems}
    ks = {m.n_classes for m in metrics.values()}
    if len(ks) != 1:
        raise InputError(f"all metric models must have the same number of classes; got {sorted(ks)}.")
    has_counts = all(m.has_uncertainty for m in metrics.values())
    if methods is None:
        methods = ["goyal", "calibrated"] + (["delta", "bootstrap"] if has_counts else [])
        methods += ["ppi"] if gold is not None else []
    methods = list(methods)
    for mth in methods:
        if mth not in METHODS:
            raise InputError(f"unknown method {mth!r}; choose from {list(METHODS)}.")
    if "delta" in methods and not has_counts:
        raise InputError(
            "method 'delta' propagates the uncertainty of estimated rates and needs the metric's "
            "test-set counts: build it with MetricModel.from_confusion(tp, fp, fn, tn)."
        )
    if "ppi" in methods and gold is None:
        raise InputError("method 'ppi' needs `gold`: gold-labelled outputs with columns system, score, truth.")
    if ppi_predictor not in ("calibrated", "observed"):
        raise InputError(f"`ppi_predictor` must be 'calibrated' or 'observed'; got {ppi_predictor!r}.")
    n_resamples = require_positive_int(n_resamples, "n_resamples", minimum=10)
    rng = as_generator(random_state)

    values = require_numeric_column(long, score, role="observed label")
    sys_col = long[system].to_numpy()
    labels = {
        s: _classes(values[sys_col == s], metrics[s], f"column {score!r} of system {s!r}") for s in systems
    }
    for s, v in labels.items():
        if v.size < 2:
            raise InputError(f"system {s!r} has {v.size} scored output(s); need at least 2.")
        if np.unique(v).size == 1:
            warnings.warn(
                f"every output of system {s!r} has observed class {v[0]}: its sample variance is 0 and the "
                "normal-theory intervals (uncorrected, calibrated, delta) are degenerate; score more outputs.",
                BoundaryWarning,
                stacklevel=caller_stacklevel(),
            )
    items = {s: long.loc[long[system] == s, item].to_numpy() for s in systems} if item else None
    gold_counts = _gold_counts(gold, system, score, truth, systems, metrics) if "ppi" in methods else None

    if control is not None:
        pairs = [(control, s) for s in systems if s != control]
    else:
        pairs = [(systems[i], systems[j]) for i in range(len(systems)) for j in range(i + 1, len(systems))]

    rows = []
    for c, t in pairs:
        rows.extend(
            _contrast_rows(
                c, t, labels, items, metrics, metric, methods, z, level, gold_counts, ppi_predictor, n_resamples, rng
            )
        )
    return pd.DataFrame(rows)


def _gold_counts(gold, system, score, truth, systems, metrics) -> dict[str, np.ndarray]:
    g = require_dataframe(gold, "gold")
    require_columns(g, [system, score, truth], "gold")
    require_no_missing(g, [system, score, truth])
    out = {}
    g_scores = require_numeric_column(g, score, role="observed label")
    g_truth = require_numeric_column(g, truth, role="gold label")
    g_sys = g[system].to_numpy()
    for s in systems:
        sel = g_sys == s
        if sel.sum() < 2:
            raise InputError(f"`gold` has {int(sel.sum())} row(s) for system {s!r}; PPI needs at least 2 per system.")
        o = _classes(g_scores[sel], metrics[s], f"gold column {score!r} of system {s!r}")
        r = g_truth[sel]
        if not np.all((r == 0) | (r == 1)):
            raise InputError(f"gold column {truth!r} must hold true labels 0/1 (system {s!r}).")
        tab = np.zeros((metrics[s].n_classes, 2))
        np.add.at(tab, (o, r.astype(np.int64)), 1.0)
        out[s] = tab
    return out


def _paired_joint(c: str, t: str, labels, items, k: int) -> tuple[np.ndarray, int]:
    ic, it = items[c], items[t]
    for s, ids in ((c, ic), (t, it)):
        dup = pd.Series(ids).duplicated()
        if dup.any():
            raise InputError(
                f"system {s!r} scored item {ids[dup.to_numpy()][0]!r} more than once; a paired comparison "
                "needs one label per item and system (aggregate or drop repeats first)."
            )
    sc, st = pd.Series(labels[c], index=ic), pd.Series(labels[t], index=it)
    only_c = sc.index.difference(st.index)
    only_t = st.index.difference(sc.index)
    if len(only_c) or len(only_t):
        raise InputError(
            f"paired comparison {t!r} - {c!r}: {len(only_c)} item(s) scored only for {c!r} and "
            f"{len(only_t)} only for {t!r} (e.g. {list(only_c[:2]) + list(only_t[:2])}). "
            "Score the same items for both systems or drop `item` for an unpaired comparison."
        )
    st = st.reindex(sc.index)
    joint = np.zeros((k, k))
    np.add.at(joint, (sc.to_numpy(), st.to_numpy()), 1.0)
    return joint, len(sc)


def _contrast_rows(c, t, labels, items, metrics, metric_arg, methods, z, level, gold_counts, ppi_predictor, n_resamples, rng):
    mc, mt = metrics[c], metrics[t]
    k = mc.n_classes
    q_c, q_t = np.asarray(mc.rates), np.asarray(mt.rates)
    vq_c, vq_t = mc.rate_variances(), mt.rate_variances()
    pos_c, pos_t = _mask(mc), _mask(mt)
    shared = mc is mt
    paired = items is not None
    if paired:
        joint_counts, n = _paired_joint(c, t, labels, items, k)
        n_c = n_t = n
        mom = _core.paired_moments(joint_counts / n, n, q_c, q_t, pos_c, pos_t, vq_c, vq_t, shared)
    else:
        cnt_c = np.bincount(labels[c], minlength=k).astype(float)
        cnt_t = np.bincount(labels[t], minlength=k).astype(float)
        n_c, n_t = int(cnt_c.sum()), int(cnt_t.sum())
        mom = _core.unpaired_moments(cnt_c / n_c, cnt_t / n_t, n_c, n_t, q_c, q_t, pos_c, pos_t, vq_c, vq_t, shared)
    ate = float(mom.ate)
    se_u = float(np.sqrt(mom.var_obs))
    base = {
        "contrast": f"{t} - {c}",
        "treatment": t,
        "control": c,
    }
    tail = {
        "level": level,
        "estimate_uncorrected": ate,
        "se_uncorrected": se_u,
        "lower_uncorrected": ate - z * se_u,
        "upper_uncorrected": ate + z * se_u,
        "n_treatment": n_t,
        "n_control": n_c,
        "paired": paired,
    }
    est_c = float(mom.ate_corrected)
    rows = []
    for mth in methods:
        if mth == "uncorrected":
            est, se, lo, hi, estimand = ate, se_u, ate - z * se_u, ate + z * se_u, _ESTIMAND_OBS
        elif mth == "goyal":
            se = float(np.sqrt(mom.var_goyal))
            est, lo, hi, estimand = ate, ate - z * se, ate + z * se, _ESTIMAND_OBS
        elif mth == "calibrated":
            se = float(np.sqrt(mom.var_cal))
            est, lo, hi, estimand = est_c, est_c - z * se, est_c + z * se, _ESTIMAND_TRUE
        elif mth == "delta":
            se = float(np.sqrt(mom.var_cal + mom.var_rates))
            est, lo, hi, estimand = est_c, est_c - z * se, est_c + z * se, _ESTIMAND_TRUE
        elif mth == "bootstrap":
            draws = _bootstrap_contrast(
                rng, n_resamples, paired, joint_counts if paired else (cnt_c, cnt_t), mc, mt, shared
            )
            alpha = 1 - level
            lo, hi = (float(x) for x in np.quantile(draws, [alpha / 2, 1 - alpha / 2]))
            est, se, estimand = est_c, float(np.std(draws, ddof=1)), _ESTIMAND_TRUE
        else:  # ppi
            f_c = q_c if ppi_predictor == "calibrated" else pos_c
            f_t = q_t if ppi_predictor == "calibrated" else pos_t
            if paired:
                p_c_u, p_t_u = joint_counts.sum(axis=1) / n_c, joint_counts.sum(axis=0) / n_t
            else:
                p_c_u, p_t_u = cnt_c / n_c, cnt_t / n_t
            th_c, v_c = _core.ppi_system(p_c_u, n_c, gold_counts[c], f_c)
            th_t, v_t = _core.ppi_system(p_t_u, n_t, gold_counts[t], f_t)
            est = float(th_t - th_c)
            se = float(np.sqrt(v_c + v_t))
            lo, hi, estimand = est - z * se, est + z * se, _ESTIMAND_TRUE
        rows.append({**base, "method": mth, "estimand": estimand, "estimate": est, "se": se,
                     "lower": lo, "upper": hi, **tail})
    return rows


def _bootstrap_contrast(rng, n_resamples, paired, counts, mc: MetricModel, mt: MetricModel, shared: bool) -> np.ndarray:
    """Parametric bootstrap draws of the calibrated difference."""
    qs_c = _core.bootstrap_draws(rng, n_resamples, np.asarray(mc.rates), None if mc.counts is None else np.asarray(mc.counts))
    qs_t = qs_c if shared else _core.bootstrap_draws(
        rng, n_resamples, np.asarray(mt.rates), None if mt.counts is None else np.asarray(mt.counts)
    )
    if paired:
        joint = counts
        n = joint.sum()
        k = joint.shape[0]
        cells = rng.multinomial(int(n), (joint / n).ravel(), size=n_resamples).reshape(n_resamples, k, k) / n
        p_c, p_t = cells.sum(axis=2), cells.sum(axis=1)
    else:
        cnt_c, cnt_t = counts
        p_c = rng.multinomial(int(cnt_c.sum()), cnt_c / cnt_c.sum(), size=n_resamples) / cnt_c.sum()
        p_t = rng.multinomial(int(cnt_t.sum()), cnt_t / cnt_t.sum(), size=n_resamples) / cnt_t.sum()
    return np.sum(p_t * qs_t, axis=1) - np.sum(p_c * qs_c, axis=1)
