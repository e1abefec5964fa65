"""Coverage of every interval by simulation, vectorised over replicates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
import pandas as pd

from .._random import as_generator
from .._validation import require_positive_int, require_probability
from ..errors import InputError
from . import _core
from ._summary import _ESTIMAND_OBS, _ESTIMAND_TRUE, _z

__all__ = ["coverage_study"]


def _probs(p: float | Sequence[float], k: int | None, name: str) -> np.ndarray:
    if np.ndim(p) == 0:
        x = require_probability(cast(float, p), name)  # a scalar (ndim 0)
        return np.array([1.0 - x, x])
    arr = np.asarray(p, dtype=float)
    if arr.ndim != 1 or (k is not None and arr.size != k) or np.any(arr < 0) or abs(arr.sum() - 1) > 1e-9:
        raise InputError(f"`{name}` must be a probability or a vector of class probabilities summing to 1.")
    return arr


def _rates(q: Sequence[float], name: str) -> np.ndarray:
    arr = np.asarray(q, dtype=float)
    if arr.ndim != 1 or arr.size < 2 or np.any((arr < 0) | (arr > 1)):
        raise InputError(f"`{name}` must be rates P(R=1|O=o) in [0, 1], one per observed class.")
    return arr


def coverage_study(
    *,
    p_control: float | Sequence[float] | None = None,
    p_treatment: float | Sequence[float] | None = None,
    n: int,
    rates: Sequence[float],
    rates_control: Sequence[float] | None = None,
    rates_treatment: Sequence[float] | None = None,
    calibration_counts: Sequence[int] | None = None,
    n_gold: int | None = None,
    joint: np.ndarray | None = None,
    level: float = 0.95,
    n_replicates: int = 2000,
    n_resamples: int = 0,
    random_state: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """Simulate evaluations scored by a known metric model and measure every interval's coverage.

    Each replicate draws the metric's labels of ``n`` outputs per system, true labels
    ``R ~ Bernoulli(q_s[O])``, optionally an annotated test set that estimates the
    rates and a gold subset for PPI, and computes all intervals of
    :func:`metric_comparisons`. Everything is vectorised over replicates.

    Parameters
    ----------
    p_control, p_treatment : float or sequence
        Probability that the metric labels an output positive (or class probabilities).
        Ignored if ``joint`` is given.
    n : int
        Outputs per system.
    rates : sequence of float
        ``q_o = P(R=1 | O=o)`` on the metric's annotated test set (binary: ``(FOR, precision)``).
    rates_control, rates_treatment : sequence of float, optional
        ``P(R=1 | O=o)`` on each system's evaluated outputs; default ``rates``
        (transportability). Different values simulate a metric that errs differently
        on the two systems.
    calibration_counts : sequence of int, optional
        Test-set items per observed class; if given, each replicate estimates the rates
        as ``Bin(n_o, q_o) / n_o`` (else the rates are known exactly).
    n_gold : int, optional
        Gold-labelled outputs per system (drawn independently of the ``n``) for PPI.
    joint : array (K, K), optional
        Paired design: probabilities ``P(O_C = x, O_T = y)`` for the same items;
        true labels are conditionally independent given the observed ones (A.3).
    level : float
        Confidence level.
    n_replicates : int
        Simulated evaluations.
    n_resamples : int
        Bootstrap resamples per replicate (0 skips the bootstrap).
    random_state : int or numpy.random.Generator, optional
        Seed.

    Returns
    -------
    pandas.DataFrame
        One row per method: ``coverage`` (of the true difference ``theta_R =
        q_T . p_T - q_C . p_C``), ``coverage_mc_se`` (``sqrt(c (1 - c) / B)``),
        ``coverage_observed`` (of the difference of observed rates), ``reject_rate``
        (share of intervals excluding 0), ``mean_width``, ``mean_estimate`` and the two
        targets.

    Examples
    --------
    >>> from mixeval.metric_model import coverage_study
    >>> t = coverage_study(p_control=0.1, p_treatment=0.1, n=2000, rates=(0.05, 0.8),
    ...                    n_replicates=500, random_state=0)
    >>> sorted(t["method"])
    ['calibrated', 'goyal', 'uncorrected']
    """
    n = require_positive_int(n, "n", minimum=2)
    b = require_positive_int(n_replicates, "n_replicates", minimum=10)
    z = _z(level)
    rng = as_generator(random_state)
    q_test = _rates(rates, "rates")
    k = q_test.size
    q_c = q_test if rates_control is None else _rates(rates_control, "rates_control")
    q_t = q_test if rates_treatment is None else _rates(rates_treatment, "rates_treatment")
    pos = np.zeros(k)
    pos[-1] = 1.0
    if joint is not None:
        joint = np.asarray(joint, dtype=float)
        if joint.shape != (k, k) or np.any(joint < 0) or abs(joint.sum() - 1) > 1e-9:
            raise InputError(f"`joint` must be a {k} x {k} table of probabilities summing to 1.")
        pc, pt = joint.sum(axis=1), joint.sum(axis=0)
    else:
        if p_control is None or p_treatment is None:
            raise InputError("give `p_control` and `p_treatment`, or the paired `joint` table.")
        pc, pt = _probs(p_control, k, "p_control"), _probs(p_treatment, k, "p_treatment")
    theta_true = float(q_t @ pt - q_c @ pc)
    theta_obs = float(pos @ pt - pos @ pc)

    # the metric's labels
    if joint is not None:
        cells = rng.multinomial(n, joint.ravel(), size=b).reshape(b, k, k) / n
        p_c_hat, p_t_hat = cells.sum(axis=2), cells.sum(axis=1)
    else:
        p_c_hat = rng.multinomial(n, pc, size=b) / n
        p_t_hat = rng.multinomial(n, pt, size=b) / n
    # the rates as the analyst knows them
    if calibration_counts is not None:
        m = np.asarray(calibration_counts)
        if m.shape != (k,) or np.any(m < 1):
            raise InputError(f"`calibration_counts` needs {k} positive counts.")
        q_hat = rng.binomial(m, q_test, size=(b, k)) / m
        vq = q_hat * (1 - q_hat) / m
    else:
        m = None
        q_hat = np.broadcast_to(q_test, (b, k))
        vq = np.zeros((b, k))
    if joint is not None:
        mom = _core.paired_moments(cells, n, q_hat, q_hat, pos, pos, vq, vq, True)
    else:
        mom = _core.unpaired_moments(p_c_hat, p_t_hat, n, n, q_hat, q_hat, pos, pos, vq, vq, True)

    ate, est = mom.ate, mom.ate_corrected
    out: dict[str, tuple[str, np.ndarray, np.ndarray, np.ndarray]] = {
        "uncorrected": (_ESTIMAND_OBS, ate, ate - z * np.sqrt(mom.var_obs), ate + z * np.sqrt(mom.var_obs)),
        "goyal": (_ESTIMAND_OBS, ate, ate - z * np.sqrt(mom.var_goyal), ate + z * np.sqrt(mom.var_goyal)),
        "calibrated": (_ESTIMAND_TRUE, est, est - z * np.sqrt(mom.var_cal), est + z * np.sqrt(mom.var_cal)),
    }
    if m is not None:
        se = np.sqrt(mom.var_cal + mom.var_rates)
        out["delta"] = (_ESTIMAND_TRUE, est, est - z * se, est + z * se)
    if n_resamples:
        r = require_positive_int(n_resamples, "n_resamples", minimum=10)
        if joint is not None:
            bc = rng.multinomial(n, cells.reshape(b, k * k), size=(r, b)).reshape(r, b, k, k) / n
            bp_c, bp_t = bc.sum(axis=3), bc.sum(axis=2)
        else:
            bp_c = rng.multinomial(n, p_c_hat, size=(r, b)) / n
            bp_t = rng.multinomial(n, p_t_hat, size=(r, b)) / n
        bq = q_hat if m is None else rng.binomial(m, q_hat, size=(r, b, k)) / m
        draws = np.sum(bp_t * bq, axis=-1) - np.sum(bp_c * bq, axis=-1)
        alpha = 1 - level
        lo, hi = np.quantile(draws, [alpha / 2, 1 - alpha / 2], axis=0)
        out["bootstrap"] = (_ESTIMAND_TRUE, est, lo, hi)
    if n_gold is not None:
        ng = require_positive_int(n_gold, "n_gold", minimum=2)
        res = []
        for p_s, q_s in ((pc, q_c), (pt, q_t)):
            cell_p = np.stack([p_s * (1 - q_s), p_s * q_s], axis=1).ravel()
            gold = rng.multinomial(ng, cell_p, size=b).reshape(b, k, 2)
            res.append(gold)
        th_c, v_c = _core.ppi_system(p_c_hat, n, res[0], q_hat)
        th_t, v_t = _core.ppi_system(p_t_hat, n, res[1], q_hat)
        e, se = th_t - th_c, np.sqrt(v_c + v_t)
        out["ppi"] = (_ESTIMAND_TRUE, e, e - z * se, e + z * se)

    rows = []
    for name, (estimand, e, lo, hi) in out.items():
        cov = float(np.mean((lo <= theta_true) & (theta_true <= hi)))
        rows.append(
            {
                "method": name,
                "estimand": estimand,
                "coverage": cov,
                "coverage_mc_se": float(np.sqrt(cov * (1 - cov) / b)),
                "coverage_observed": float(np.mean((lo <= theta_obs) & (theta_obs <= hi))),
                "reject_rate": float(np.mean((lo > 0) | (hi < 0))),
                "mean_width": float(np.mean(hi - lo)),
                "mean_estimate": float(np.mean(e)),
                "target_true": theta_true,
                "target_observed": theta_obs,
                "n_replicates": b,
            }
        )
    return pd.DataFrame(rows)
