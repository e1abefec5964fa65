"""Labelled datasets with a known answer for calibrating the circularity test.

Circular families: the label is a deterministic rule over one or two features (a step function
of one feature, the maximum of two step scores as the kidney SOFA of book Table 2.7, the AND of
two thresholds); the other candidates are distractors correlated with the defining features.
Non-circular families: the label is a noisy function of many features (additive smooth effects of
four candidates with 10% noise, effects of many mostly unmeasured features, a noisy logistic
0/1 label). Used by the tests and by ``docs/circularity_calibration.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._random import as_generator
from ..errors import InputError

__all__ = ["FAMILIES", "simulate", "CIRCULAR_SETS"]


def _features(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """Two skewed 'measurements' u, v (lognormal, like lab values) and four distractors.

    ``d1`` correlates with ``u`` (r about 0.7), ``d2`` with ``v`` (about 0.6), ``d3`` with both
    (about 0.4 each), ``d4`` is independent noise.
    """
    z = rng.normal(size=(n, 6))
    u = np.exp(0.6 * z[:, 0])
    v = np.exp(0.5 * z[:, 1])
    d1 = z[:, 0] + 0.7 * z[:, 2]
    d2 = z[:, 1] + 0.9 * z[:, 3]
    d3 = 0.6 * z[:, 0] + 0.6 * z[:, 1] + 0.9 * z[:, 4]
    d4 = z[:, 5]
    return pd.DataFrame({"u": u, "v": v, "d1": d1, "d2": d2, "d3": d3, "d4": d4})


def _step(x: np.ndarray, cuts: list[float]) -> np.ndarray:
    return np.digitize(x, cuts).astype(float)



_U_CUTS = [float(np.exp(0.6 * z)) for z in (-0.5, 0.3, 1.0, 1.6)]  # 4 steps of u (0-4, like SOFA)
_V_CUTS = [float(np.exp(0.5 * z)) for z in (-1.3, -0.7)]  # low v (urine) gives scores 4 and 3


def simulate(family: str, n: int, seed: int | np.random.Generator | None = None) -> pd.DataFrame:
    """One dataset of ``family`` with ``n`` rows: features ``u, v, d1..d4`` and the label ``y``.

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.
    n : int
        Rows.
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    pandas.DataFrame
        ``y`` is the label; ``df.attrs["family"]`` is ``"gaussian"`` or ``"binomial"`` (the family
        a user would choose for it) and ``df.attrs["circular"]`` the defining set (empty tuple for the
        non-circular families).

    Examples
    --------
    >>> d = simulate("max", 1000, seed=1)
    >>> sorted(d.attrs["circular"]), d.attrs["family"], int(d["y"].max())
    (['u', 'v'], 'gaussian', 4)
    """
    if family not in FAMILIES:
        raise InputError(f"`family` must be one of {', '.join(FAMILIES)}; got {family!r}.")
    rng = as_generator(seed, "seed")
    d = _features(rng, int(n))
    u, v = d["u"].to_numpy(), d["v"].to_numpy()
    lu, lv = np.log(u) / 0.6, np.log(v) / 0.5  # the standard normal scores behind u and v
    glm = "gaussian"
    if family == "step":
        y = _step(u, _U_CUTS)
    elif family == "max":
        # kidney SOFA (Table 2.7): the larger of a creatinine-like score (u) and a urine-like score (low v)
        score_v = np.where(v <= _V_CUTS[0], 4.0, np.where(v <= _V_CUTS[1], 3.0, 0.0))
        y = np.maximum(_step(u, _U_CUTS), score_v)
    elif family == "and":
        y = ((u > _U_CUTS[1]) & (v > np.exp(0.5 * -0.2))).astype(float)
        glm = "binomial"
    elif family == "additive":
        # smooth effects of four features (not d3, d4), noise for 10% of the variance (R^2 = 0.9)
        f = np.column_stack([np.sin(lu), 0.8 * np.tanh(lv), 0.5 * d["d1"], 0.4 * np.cos(d["d2"])])
        signal = (f - f.mean(axis=0)).sum(axis=1)
        y = signal + rng.normal(0.0, np.sqrt(np.var(signal) / 9.0), n)
    elif family == "latent":
        # a label from many features, most of them not measured (like a teacher network on 45 inputs)
        hidden = rng.normal(size=(n, 6))
        signal = 0.8 * np.tanh(lu) + 0.5 * lv + 0.4 * d["d1"].to_numpy() + hidden @ np.full(6, 0.35)
        y = signal + rng.normal(0.0, 0.3, n)
    else:  # "logistic": a noisy binary label from many features
        eta = 2.0 * np.tanh(lu) + 1.2 * lv + 0.8 * d["d1"].to_numpy() - 0.6 * d["d3"].to_numpy()
        y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-2.0 * eta))).astype(float)
        glm = "binomial"
    d["y"] = y
    d.attrs["family"] = glm
    d.attrs["circular"] = CIRCULAR_SETS[family]
    return d


CIRCULAR_SETS: dict[str, tuple[str, ...]] = {
    "step": ("u",),
    "max": ("u", "v"),
    "and": ("u", "v"),
    "additive": (),
    "latent": (),
    "logistic": (),
}
FAMILIES: tuple[str, ...] = tuple(CIRCULAR_SETS)
