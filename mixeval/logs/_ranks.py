"""Simultaneous tests of all pairwise differences of model means, and the rank sets they give.

The critical value applies to every pair's t statistic (the difference over its CR2 standard error, referred to
the Bell-McCaffrey df): ``"bonferroni"`` uses the t quantile at level ``1 - alpha / (2 K)`` for ``K`` pairs,
``"max-t"`` the quantile of the largest absolute t statistic of a multivariate t distribution with the CR2
correlation of the differences, integrated numerically (Genz's separation of variables with randomised
quasi-Monte Carlo, seeded, with its standard error).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats
from scipy.stats import qmc

__all__ = ["CriticalValue", "RANK_METHODS", "bonferroni_critical", "max_t_critical", "max_t_probability",
           "rank_sets"]

RANK_METHODS = ("bonferroni", "max-t")


@dataclass(frozen=True)
class CriticalValue:
    """The critical value of the simultaneous pairwise tests.

    ``value`` multiplies each pair's standard error; ``method`` is ``"bonferroni"`` or ``"max-t"``; ``df``
    the t degrees of freedom; ``error`` the standard error of ``value`` from the numerical integration
    (0 for Bonferroni); ``seed`` and ``n_points`` the seed and number of quasi-Monte Carlo points of that
    integration (None and 0 for Bonferroni); ``n_pairs`` the pairs tested.
    """

    value: float
    method: str
    df: float
    n_pairs: int
    error: float = 0.0
    seed: int | None = None
    n_points: int = 0

    def describe(self) -> str:
        """One sentence: the method, its df and, for max-t, the integration's seed and error."""
        if self.method == "bonferroni":
            return (f"Bonferroni over {self.n_pairs} pairs: t quantile with {self.df:.3g} df (CR2, Bell-McCaffrey) "
                    f"= {self.value:.4g}")
        return (f"max-t over {self.n_pairs} pairs: multivariate t with {self.df:.3g} df and the CR2 correlation "
                f"of the differences = {self.value:.4g} (quasi-Monte Carlo, {self.n_points} points, seed "
                f"{self.seed}, standard error {self.error:.1g})")


def bonferroni_critical(level: float, n_pairs: int, df: float) -> CriticalValue:
    """The t quantile that holds the family-wise level ``level`` over ``n_pairs`` two-sided tests.

    Examples
    --------
    >>> round(bonferroni_critical(0.95, 10, 29.0).value, 4)
    3.038
    """
    k = max(int(n_pairs), 1)
    value = float(stats.t.ppf(1 - (1 - level) / (2 * k), df))
    return CriticalValue(value=value, method="bonferroni", df=float(df), n_pairs=int(n_pairs))


def _semidefinite_cholesky(cov: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """Lower-triangular ``C`` with ``C C' = cov`` for a positive semi-definite ``cov`` (zero columns where a
    pivot is below ``tol`` times the largest variance: that variable is a combination of the earlier ones)."""
    m = cov.shape[0]
    c = np.zeros_like(cov, dtype=float)
    scale = max(float(np.max(np.diag(cov))), np.finfo(float).tiny)
    for j in range(m):
        d = cov[j, j] - c[j, :j] @ c[j, :j]
        if d <= tol * scale:
            continue
        c[j, j] = np.sqrt(d)
        c[j + 1:, j] = (cov[j + 1:, j] - c[j + 1:, :j] @ c[j, :j]) / c[j, j]
    return c


def _chi_scale(points: np.ndarray, df: float) -> np.ndarray:
    """``W = sqrt(chi2_df / df)`` at the uniforms of column 0 (1 for infinite df)."""
    if not np.isfinite(df):
        return np.ones(points.shape[0])
    return np.sqrt(special.chdtri(df, np.clip(points[:, 0], 1e-15, 1 - 1e-15)) / df)   # upper quantile: same law


def _box_weights(chol: np.ndarray, bound: np.ndarray, points: np.ndarray, w: np.ndarray, df: float) -> np.ndarray:
    """Per quasi-random point, the conditional probability product of Genz's separation of variables for the
    event ``|Z_a - Z_b| <= bound[a, b] * W`` for all pairs, ``Z = chol @ u``, ``u`` standard normal and
    ``W = sqrt(chi2_df / df)`` (``w``, from column 0 of ``points`` when df is finite).

    ``points`` holds uniforms: column 0 for ``W`` (when df is finite), then one column per variable but the last.
    """
    n, m = points.shape[0], chol.shape[0]
    col = 1 if np.isfinite(df) else 0
    weight = np.ones(n)
    u = np.zeros((n, m))
    z = np.zeros((n, m))
    for j in range(m):
        rest = u[:, :j] @ chol[j, :j]
        cjj = chol[j, j]
        lo = np.full(n, -np.inf)
        hi = np.full(n, np.inf)
        if j:
            width = bound[:j, j][None, :] * w[:, None]            # pairs (i, j), i < j
            centre = z[:, :j] - rest[:, None]
            if cjj > 0:
                lo = np.max(centre - width, axis=1) / cjj
                hi = np.min(centre + width, axis=1) / cjj
            else:
                weight = weight * np.all(np.abs(centre) <= width, axis=1)
        if cjj > 0:
            plo, phi = special.ndtr(lo), special.ndtr(hi)
            mass = np.maximum(phi - plo, 0.0)
            weight = weight * mass
            if j < m - 1:
                x = points[:, col]
                col += 1
                u[:, j] = np.clip(special.ndtri(np.clip(plo + x * mass, 1e-300, 1 - 1e-16)),
                                  np.minimum(lo, hi), np.maximum(lo, hi))
        z[:, j] = rest + cjj * u[:, j]
    return weight


def _dimension(m: int, df: float) -> int:
    return m - 1 + (1 if np.isfinite(df) else 0)


def max_t_probability(cov: np.ndarray, q: float, df: float, *, n_points: int = 4096, n_replicates: int = 8,
                      seed: int = 0) -> tuple[float, float]:
    """``P(max over pairs |T_ab| <= q)`` and its standard error, ``T_ab = (Z_a - Z_b) / (s_ab W)``.

    ``Z ~ N(0, cov)``, ``s_ab`` the standard deviation of ``Z_a - Z_b``, ``W = sqrt(chi2_df / df)`` independent;
    pairs with ``s_ab = 0`` are left out. Randomised quasi-Monte Carlo: ``n_replicates`` independently
    scrambled Sobol' sequences of ``n_points`` points each.

    Examples
    --------
    >>> p, err = max_t_probability(np.eye(3), 3.5 / np.sqrt(2), 20.0)
    >>> from scipy.stats import studentized_range
    >>> bool(abs(p - studentized_range.cdf(3.5, 3, 20.0)) < 4 * err + 1e-4)
    True
    """
    chol, bound = _problem(cov)
    points = _points(_dimension(chol.shape[0], df), n_points, n_replicates, seed)
    per = _box_weights(chol, bound * q, points, _chi_scale(points, df), df).reshape(n_replicates, -1).mean(axis=1)
    return float(per.mean()), float(per.std(ddof=1) / np.sqrt(len(per)))


def _problem(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cov = np.asarray(cov, dtype=float)
    diag = np.diag(cov)
    var = diag[:, None] + diag[None, :] - 2 * cov
    sd = np.sqrt(np.maximum(var, 0.0))
    scale = max(float(diag.max()), np.finfo(float).tiny)
    bound = np.where(sd > 1e-7 * np.sqrt(scale), sd, np.inf)   # pairs without variance: no constraint
    return _semidefinite_cholesky(cov), bound


def _points(dim: int, n_points: int, n_replicates: int, seed: int) -> np.ndarray:
    """``n_replicates`` independently scrambled Sobol' sequences of ``n_points`` points, stacked."""
    if dim == 0:
        return np.zeros((n_replicates, 0))
    seeds = np.random.SeedSequence(seed).spawn(n_replicates)
    m = int(np.ceil(np.log2(max(n_points, 2))))
    return np.vstack([qmc.Sobol(dim, scramble=True, seed=np.random.default_rng(s)).random_base2(m) for s in seeds])


def max_t_critical(cov: np.ndarray, level: float, df: float, *, seed: int = 0, tolerance: float = 1e-3,
                   max_points: int = 1 << 15, n_replicates: int = 8) -> CriticalValue:
    """The ``level`` quantile of the largest absolute pairwise t statistic (multivariate t, ``df`` degrees of
    freedom, the correlation of the pairwise differences implied by ``cov``).

    Parameters
    ----------
    cov : ndarray, shape (m, m)
        Covariance of the m model means (positive semi-definite; only the correlation of the differences
        matters).
    level : float
        Simultaneous coverage (0.95).
    df : float
        Degrees of freedom of every t statistic (``inf`` for normal).
    seed : int
        Seed of the scrambled Sobol' points (the result is reproducible).
    tolerance : float
        The points are quadrupled (up to ``max_points`` per replicate) until the standard error of the
        critical value is below ``tolerance``.
    max_points, n_replicates : int
        Points per scrambled replicate at most, and the number of independent replicates.

    Returns
    -------
    CriticalValue

    Notes
    -----
    With :math:`Z = C u` (:math:`C` the lower Cholesky factor of ``cov``, :math:`u` standard normal) and
    :math:`W = \\sqrt{\\chi^2_\\nu / \\nu}`, the event :math:`|Z_a - Z_b| \\le q s_{ab} W` for all pairs
    :math:`a < b` restricts :math:`u_j`, given :math:`u_1, \\dots, u_{j-1}` and :math:`W`, to one interval
    (the intersection over :math:`a < j`). Genz's separation of variables writes the probability as the
    expectation of the product of those intervals' normal probabilities, sampling each :math:`u_j` from its
    truncated normal; the expectation is integrated by randomised quasi-Monte Carlo (Genz & Bretz 2009, the
    method of R's ``mvtnorm``). The critical value solves :math:`P(q) = ` ``level`` on common points
    (:func:`scipy.optimize.brentq`); its standard error is that of :math:`P` over the independent scramblings
    divided by the density :math:`P'(q)`.

    Examples
    --------
    >>> from scipy.stats import studentized_range
    >>> cv = max_t_critical(np.eye(4), 0.95, 30.0)
    >>> exact = studentized_range.ppf(0.95, 4, 30.0) / np.sqrt(2)   # Tukey's HSD for 4 independent means
    >>> bool(abs(cv.value - exact) < 4 * cv.error + 1e-3)
    True
    """
    chol, bound = _problem(cov)
    m = chol.shape[0]
    n_pairs = int(np.isfinite(bound[np.triu_indices(m, 1)]).sum())
    if n_pairs == 0:
        return CriticalValue(value=float("nan"), method="max-t", df=float(df), n_pairs=0, seed=seed)
    low = float(stats.t.ppf(0.5 + level / 2, df))
    if n_pairs == 1:
        return CriticalValue(value=low, method="max-t", df=float(df), n_pairs=1, seed=seed)
    high = bonferroni_critical(level, n_pairs, df).value
    dim = _dimension(m, df)
    n_points, q, density = 1 << 12, 0.0, 0.0
    while True:
        points = _points(dim, n_points, n_replicates, seed)
        w = _chi_scale(points, df)

        def per_replicate(x: float, pts: np.ndarray = points, w: np.ndarray = w) -> np.ndarray:
            return _box_weights(chol, bound * x, pts, w, df).reshape(n_replicates, -1).mean(axis=1) - level

        if density == 0.0:        # first, coarse stage: bracket the root
            while per_replicate(high).mean() < 0:
                high *= 1.25
            q = optimize.brentq(lambda x: per_replicate(x).mean(), low, high, xtol=1e-5)
            h = 1e-3 * q
            density = float((per_replicate(q + h).mean() - per_replicate(q - h).mean()) / (2 * h))
        for _ in range(2):        # finer stages: Newton steps from the coarser root (the gap is smooth in q)
            per = per_replicate(q)
            step = float(per.mean()) / max(density, 1e-12)
            q -= step
            if abs(step) < 0.1 * tolerance:
                break
        per = per_replicate(q)
        error = float(per.std(ddof=1) / np.sqrt(n_replicates) / max(density, 1e-12))
        if error <= tolerance or n_points >= max_points:
            return CriticalValue(value=float(q), method="max-t", df=float(df), n_pairs=n_pairs, error=error,
                                 seed=seed, n_points=n_points * n_replicates)
        n_points *= 4


def rank_sets(estimate: np.ndarray, se_pairs: np.ndarray, critical: float, *,
              higher_is_better: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each model's rank and rank set from simultaneous tests of all pairs.

    Parameters
    ----------
    estimate : ndarray, shape (m,)
        The model means.
    se_pairs : ndarray, shape (m, m)
        The standard error of each difference ``estimate[a] - estimate[b]`` (NaN or 0 where no test).
    critical : float
        The simultaneous critical value (:func:`bonferroni_critical`, :func:`max_t_critical`).

    Returns
    -------
    rank, rank_lower, rank_upper : ndarray of int
        Rank 1 is the best. Model a's set runs from 1 + the number of models significantly better than a to
        m - the number significantly worse (Klein, Wright & Wieczorek 2020); a pair is significant where
        ``|difference| > critical * se``.

    Examples
    --------
    >>> est = np.array([0.9, 0.5, 0.45])
    >>> se = np.full((3, 3), 0.05)
    >>> [r.tolist() for r in rank_sets(est, se, 2.4)]
    [[1, 2, 3], [1, 2, 2], [1, 3, 3]]
    """
    est = np.asarray(estimate, dtype=float)
    m = len(est)
    sign = 1.0 if higher_is_better else -1.0
    diff = sign * (est[:, None] - est[None, :])
    se = np.asarray(se_pairs, dtype=float)
    tested = np.isfinite(se) & (se > 0)
    with np.errstate(invalid="ignore"):
        better = tested & (diff > critical * np.where(tested, se, 1.0))   # better[a, b]: a significantly better
    np.fill_diagonal(better, False)
    order = np.argsort(-sign * est, kind="stable")
    rank = np.empty(m, dtype=int)
    rank[order] = np.arange(1, m + 1)
    return rank, 1 + better.sum(axis=0).astype(int), m - better.sum(axis=1).astype(int)
