"""How deterministic is a label given a feature set? A nearest-neighbour estimate of the label noise.

An additive GAM cannot represent a rule such as ``max(score(u), score(v))`` (book Table 2.7) or an
AND of thresholds on the identity scale, so its D^2 plateaus below 1 although the label is a
function of ``(u, v)``. Whether the *rest* is noise or unmodelled structure in ``(u, v)`` can be
told without assuming a form: if the label is a function of ``x_c``, two rows that are neighbours
in ``x_c`` have (almost) the same GAM residual; if the label is noisy, their residuals differ by
the noise. The difference-based variance estimator (Rice 1984; for several covariates the nearest
neighbour estimator of Devroye et al. 2018, the multivariate form of mgcv's ``k.check`` k-index)
estimates the noise variance without fitting the rule.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from ..errors import InputError

__all__ = ["neighbour_coordinates", "nearest_other", "noise_share", "determinism"]


def neighbour_coordinates(data: pd.DataFrame, features: list[str], categorical: list[str] | None = None) -> np.ndarray:
    """Coordinates for the neighbour search: ranks scaled to (0, 1]; factors as level codes spaced by 2.

    Ranks make the search invariant to strictly monotone transformations of a feature (the
    permissible transformations of an ordinal or interval scale); spacing factor levels by 2 (more
    than the range of any rank coordinate) keeps neighbours within one level whenever possible.
    """
    cat = set(categorical or [])
    cols = []
    for f in features:
        s = data[f]
        numeric = (pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)) and f not in cat
        if numeric:
            cols.append(s.rank(method="average").to_numpy(dtype=float) / len(s))
        else:
            cols.append(2.0 * pd.factorize(s.astype(str))[0].astype(float))
    return np.column_stack(cols)


def noise_share(y: np.ndarray, residual: np.ndarray, coords: np.ndarray) -> float:
    """Estimated noise variance of ``y`` given the coordinates, as a share of the variance of ``y``.

    Notes
    -----
    With ``nn(i)`` the nearest other row in ``coords`` (ties: any row at distance 0),

    .. math:: \\hat\\sigma^2 = \\frac{1}{2n} \\sum_i (r_i - r_{nn(i)})^2, \\qquad
              \\nu = \\hat\\sigma^2 \\big/ \\frac{1}{n}\\sum_i (y_i - \\bar y)^2 .

    For a label that is a function of the coordinates, ``nu`` tends to 0 (only neighbours across
    a discontinuity contribute); for ``y = f(x) + e`` it tends to ``Var(e) / Var(y)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(size=(4000, 1))
    >>> y = (x[:, 0] > 0.5) * 1.0
    >>> noise_share(y, y - y.mean(), x) < 0.002  # one neighbour pair straddles the step
    True
    >>> noisy = y + rng.normal(0, 0.5, 4000)
    >>> 0.45 < noise_share(noisy, noisy - y, x) < 0.55
    True
    """
    y = np.asarray(y, dtype=float)
    r = np.asarray(residual, dtype=float)
    X = np.asarray(coords, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if not (y.size == r.size == X.shape[0]) or y.size < 3:
        raise InputError("`y`, `residual` and `coords` must have the same (at least 3) rows.")
    total = float(np.sum((y - y.mean()) ** 2))
    if total == 0:
        raise InputError("`y` is constant; there is no variance to split into rule and noise.")
    if X.shape[1] == 1:
        # in one dimension the neighbour of a sorted row is an adjacent row (mgcv's k-index ordering)
        order = np.argsort(X[:, 0], kind="stable")
        d = np.diff(r[order])
        return float(np.sum(d**2) / 2.0 * y.size / (y.size - 1) / total)
    nn = nearest_other(X)
    return float(np.sum((r - r[nn]) ** 2) / 2.0 / total)


def nearest_other(X: np.ndarray) -> np.ndarray:
    """For every row, the index of a nearest *other* row (Euclidean).

    Rows that share their coordinates with others are paired within their group (cyclically, so
    every row has a partner at distance 0); the remaining rows get the nearest distinct point. A
    k-d tree over many identical points degenerates (binary or discrete features), hence the
    grouping first.

    Examples
    --------
    >>> nearest_other(np.array([[0.0], [0.0], [1.0], [1.4]])).tolist()
    [1, 0, 3, 2]
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    uniq, inverse, counts = np.unique(X, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    order = np.argsort(inverse, kind="stable")  # rows grouped by their point, in row order
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    nn = np.empty(n, dtype=int)
    pos = np.empty(n, dtype=int)
    pos[order] = np.arange(n)
    g = inverse
    within = pos - starts[g]  # rank of the row inside its group
    partner = starts[g] + (within + 1) % counts[g]
    nn[:] = order[partner]
    single = counts[g] == 1
    if np.any(single) and uniq.shape[0] > 1:
        _, idx = cKDTree(uniq).query(uniq[g[single]], k=2)
        other = np.where(idx[:, 0] == g[single], idx[:, 1], idx[:, 0])
        nn[single] = order[starts[other]]
    return nn


def determinism(y: np.ndarray, fitted: np.ndarray, data: pd.DataFrame, features: list[str],
                categorical: list[str] | None = None) -> float:
    """Share of the label's variance that is a function of ``features``: ``1 - noise_share``.

    ``fitted`` are a model's fitted means (the GAM on ``features``); its residuals are used so that
    the smooth part of the rule does not count as noise between neighbours.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> d = pd.DataFrame(rng.normal(size=(3000, 2)), columns=["u", "v"])
    >>> y = np.maximum(d["u"] > 0, d["v"] > 1).to_numpy() * 1.0
    >>> round(determinism(y, np.full(3000, y.mean()), d, ["u", "v"]), 2) >= 0.95
    True
    """
    y = np.asarray(y, dtype=float)
    return 1.0 - noise_share(y, y - np.asarray(fitted, dtype=float), neighbour_coordinates(data, features, categorical))
