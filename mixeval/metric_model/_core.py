"""Closed-form variances of model-based metrics, vectorised over leading axes.

Everything here works on class *proportions* (``p[..., o] = P(O = o)``) so that the
same code serves one analysis and a simulation of many replicates at once.
Shapes: ``p`` (..., K); ``joint`` (..., K, K) with ``joint[..., x, y] = P(O_C = x, O_T = y)``;
``q`` (..., K) rates ``P(R = 1 | O = o)``; ``vq`` (..., K) their sampling variances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Moments", "unpaired_moments", "paired_moments", "ppi_system", "bootstrap_draws"]


@dataclass(frozen=True)
class Moments:
    """Estimates and variances of one two-system comparison (treatment minus control).

    ``*_c`` / ``*_t`` are per-system quantities; ``var_*`` are variances of the
    difference. All arrays broadcast over the leading (replicate) axes.
    """

    obs_c: np.ndarray  # observed positive rate (Eq. 3/4)
    obs_t: np.ndarray
    var_obs_c: np.ndarray  # Eq. 5/6
    var_obs_t: np.ndarray
    var_obs: np.ndarray  # variance of the observed difference (Eq. 8; A.3 for paired)
    pr_c: np.ndarray  # corrected rate p_R (Eq. 10/17)
    pr_t: np.ndarray
    var_goyal_c: np.ndarray  # Eq. 13
    var_goyal_t: np.ndarray
    cov_goyal: np.ndarray  # Eq. 20 (0 for independent samples)
    var_goyal: np.ndarray  # Var^M(d) = Var_C + Var_T - 2 Cov
    var_cal_c: np.ndarray  # sampling variance of the calibrated estimator p_R-hat
    var_cal_t: np.ndarray
    var_cal: np.ndarray  # ... of the calibrated difference, rates known
    var_rates: np.ndarray  # extra variance from estimated rates (delta method)
    var_rates_c: np.ndarray
    var_rates_t: np.ndarray

    @property
    def ate(self) -> np.ndarray:
        """Observed difference ``f_T - f_C`` (the paper's ATE)."""
        return self.obs_t - self.obs_c

    @property
    def ate_corrected(self) -> np.ndarray:
        """Calibrated difference ``p_R,T - p_R,C``."""
        return self.pr_t - self.pr_c


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Inner product over the class axis, broadcasting leading (replicate) axes."""
    return np.sum(np.asarray(a) * np.asarray(b), axis=-1)


def _bessel(n: np.ndarray | float) -> np.ndarray:
    return 1.0 / (np.asarray(n, dtype=float) - 1.0)


def _rate_terms(
    p_c: np.ndarray, p_t: np.ndarray, vq_c: np.ndarray, vq_t: np.ndarray, shared: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Delta-method variance added by estimated rates: per system and for the difference.

    ``Var(sum_o q_o p_o) += sum_o p_o^2 Var(q_o)``; the difference has gradient
    ``p_T,o - p_C,o`` w.r.t. a rate shared by both systems, else the two add.
    """
    vr_c = _dot(p_c**2, vq_c)
    vr_t = _dot(p_t**2, vq_t)
    vr = _dot((p_t - p_c) ** 2, vq_c) if shared else vr_c + vr_t
    return vr_c, vr_t, vr


def unpaired_moments(
    p_c: np.ndarray,
    p_t: np.ndarray,
    n_c: np.ndarray | float,
    n_t: np.ndarray | float,
    q_c: np.ndarray,
    q_t: np.ndarray,
    pos_c: np.ndarray,
    pos_t: np.ndarray,
    vq_c: np.ndarray,
    vq_t: np.ndarray,
    shared: bool,
) -> Moments:
    """Moments for two independent samples (Eqs. 5-14, 17, calibrated and delta variances)."""
    p_c = np.asarray(p_c, dtype=float)
    p_t = np.asarray(p_t, dtype=float)
    b_c, b_t = _bessel(n_c), _bessel(n_t)
    obs_c, obs_t = _dot(p_c, pos_c), _dot(p_t, pos_t)
    vo_c, vo_t = obs_c * (1 - obs_c) * b_c, obs_t * (1 - obs_t) * b_t
    pr_c, pr_t = _dot(p_c, q_c), _dot(p_t, q_t)
    vg_c, vg_t = pr_c * (1 - pr_c) * b_c, pr_t * (1 - pr_t) * b_t
    vc_c = np.maximum(_dot(p_c, q_c**2) - pr_c**2, 0.0) * b_c
    vc_t = np.maximum(_dot(p_t, q_t**2) - pr_t**2, 0.0) * b_t
    vr_c, vr_t, vr = _rate_terms(p_c, p_t, vq_c, vq_t, shared)
    zero = np.zeros_like(vg_c)
    return Moments(
        obs_c, obs_t, vo_c, vo_t, vo_c + vo_t, pr_c, pr_t, vg_c, vg_t, zero, vg_c + vg_t,
        vc_c, vc_t, vc_c + vc_t, vr, vr_c, vr_t,
    )


def paired_moments(
    joint: np.ndarray,
    n: np.ndarray | float,
    q_c: np.ndarray,
    q_t: np.ndarray,
    pos_c: np.ndarray,
    pos_t: np.ndarray,
    vq_c: np.ndarray,
    vq_t: np.ndarray,
    shared: bool,
) -> Moments:
    """Moments for paired samples (both systems on the same N items; Goyal et al. A.3).

    ``joint[..., x, y]`` is the proportion of items with control class ``x`` and
    treatment class ``y``. The observed and calibrated variances are the sample
    variances of the per-item differences divided by N (Bessel-corrected); the
    paper's Eq. 20 covariance enters as ``Var_C + Var_T - 2 Cov`` (the paper's text
    prints ``+ 2 Cov``, a sign slip: Var(T - C) = Var(T) + Var(C) - 2 Cov(C, T)).
    """
    joint = np.asarray(joint, dtype=float)
    b = _bessel(n)
    p_c, p_t = joint.sum(axis=-1), joint.sum(axis=-2)
    obs_c, obs_t = _dot(p_c, pos_c), _dot(p_t, pos_t)
    vo_c, vo_t = obs_c * (1 - obs_c) * b, obs_t * (1 - obs_t) * b
    d_obs = pos_t[None, :] - pos_c[:, None]  # (K, K): value of f_T - f_C in cell (x, y)
    ate = obs_t - obs_c
    vo = np.maximum(np.sum(joint * d_obs**2, axis=(-2, -1)) - ate**2, 0.0) * b
    pr_c, pr_t = _dot(p_c, q_c), _dot(p_t, q_t)
    vg_c, vg_t = pr_c * (1 - pr_c) * b, pr_t * (1 - pr_t) * b
    cross = np.sum(joint * (q_c[..., :, None] * q_t[..., None, :]), axis=(-2, -1))
    cov = (cross - pr_c * pr_t) * b  # Eq. 20
    vg = np.maximum(vg_c + vg_t - 2 * cov, 0.0)
    vc_c = np.maximum(_dot(p_c, q_c**2) - pr_c**2, 0.0) * b
    vc_t = np.maximum(_dot(p_t, q_t**2) - pr_t**2, 0.0) * b
    d_cal = q_t[..., None, :] - q_c[..., :, None]
    est = pr_t - pr_c
    vc = np.maximum(np.sum(joint * d_cal**2, axis=(-2, -1)) - est**2, 0.0) * b
    vr_c, vr_t, vr = _rate_terms(p_c, p_t, vq_c, vq_t, shared)
    return Moments(
        obs_c, obs_t, vo_c, vo_t, vo, pr_c, pr_t, vg_c, vg_t, cov, vg, vc_c, vc_t, vc, vr, vr_c, vr_t
    )


def ppi_system(
    p_unlabeled: np.ndarray,
    n_unlabeled: np.ndarray | float,
    gold: np.ndarray,
    f: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Prediction-powered mean of the true label for one system, and its variance.

    ``p_unlabeled[..., o]``: class proportions of the N unlabelled outputs; ``gold[..., o, r]``:
    counts of gold-labelled outputs with observed class ``o`` and true label ``r``;
    ``f[o]``: the prediction for class ``o``. Angelopoulos et al. (2023):
    ``theta = mean_N f(O) - mean_n (f(O) - R)``,
    ``Var = s^2_f / N + s^2_{f-R} / n`` (sample variances with Bessel's correction).
    """
    p_unlabeled = np.asarray(p_unlabeled, dtype=float)
    gold = np.asarray(gold, dtype=float)
    n_gold = gold.sum(axis=(-2, -1))
    f = np.asarray(f, dtype=float)
    mf = _dot(p_unlabeled, f)
    v_unl = np.maximum(_dot(p_unlabeled, f**2) - mf**2, 0.0) * _bessel(n_unlabeled)
    e = f[..., :, None] - np.array([0.0, 1.0])  # (..., K, 2) rectifier values f(o) - r
    w = gold / n_gold[..., None, None]
    me = np.sum(w * e, axis=(-2, -1))
    v_rect = np.maximum(np.sum(w * e**2, axis=(-2, -1)) - me**2, 0.0) * _bessel(n_gold)
    return mf - me, v_unl + v_rect


def bootstrap_draws(
    rng: np.random.Generator,
    n_resamples: int,
    q: np.ndarray,
    counts: np.ndarray | None,
) -> np.ndarray:
    """Parametric bootstrap draws of the rates: ``q*_o = Bin(n_o, q_o) / n_o`` (fixed if ``counts`` is None)."""
    q = np.asarray(q, dtype=float)
    if counts is None:
        return np.broadcast_to(q, (n_resamples, q.size)).copy()
    c = np.asarray(counts)
    return rng.binomial(c, q, size=(n_resamples, q.size)) / c
