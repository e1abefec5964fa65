"""The linear mixed model of each pair's item-level differences, ``d ~ 1 + (1 | cluster)`` by REML, fitted to many
pairs at once from their cluster sums, with the Satterthwaite degrees of freedom of its mean (as lmerTest)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RandomIntercept", "random_intercept", "satterthwaite_df"]


@dataclass(frozen=True)
class RandomIntercept:
    """REML fits of ``d ~ 1 + (1 | cluster)``, one per column: ``estimate`` the GLS mean, ``se`` its standard
    error, ``sd_cluster`` and ``sigma`` the standard deviations, ``theta`` their ratio (lme4's relative
    covariance factor), ``deviance`` the REML criterion at the optimum, ``boundary`` where ``theta`` is 0."""

    estimate: np.ndarray
    se: np.ndarray
    sd_cluster: np.ndarray
    sigma: np.ndarray
    theta: np.ndarray
    deviance: np.ndarray
    boundary: np.ndarray


def _reml_parts(t: np.ndarray, sums: np.ndarray, sizes: np.ndarray, ss: np.ndarray, n: np.ndarray,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The REML criterion at relative sd ``t`` (one per column) and the GLS mean (as a shift of the centred
    values), the weighted residual sum of squares and the sum of the GLS weights behind it."""
    theta = t * t
    shrink = 1.0 / (1.0 + theta * sizes)                   # 1 / (1 + theta n_g); 1 for unused clusters
    weight = (sizes * shrink).sum(axis=0)                   # W = sum_g n_g / (1 + theta n_g)
    mu = (sums * shrink).sum(axis=0) / weight
    resid = sums - sizes * mu                               # cluster sums of d - mu
    q = ss + n * mu * mu - theta * (resid * resid * shrink).sum(axis=0)
    q = np.maximum(q, np.finfo(float).tiny)
    dev = (n - 1) * (1 + np.log(2 * np.pi * q / (n - 1))) - np.log(shrink).sum(axis=0) + np.log(weight)
    return dev, mu, q, weight


def random_intercept(sums: np.ndarray, sizes: np.ndarray, ss: np.ndarray, n: np.ndarray, mean: np.ndarray,
                     *, grid: int = 25, t_max: float = 1e3, iterations: int = 40) -> RandomIntercept:
    """The linear mixed model ``d ~ 1 + (1 | cluster)`` fitted by REML to many columns at once.

    Parameters
    ----------
    sums, sizes : ndarray, shape (n_clusters, k)
        Per column, the cluster sums of the centred values ``d - mean`` and the number of its values in each
        cluster (0 for clusters a column does not use); :func:`clustered_means` gives both.
    ss, n, mean : ndarray, shape (k,)
        The centred sum of squares, the number of values and their mean.
    grid, t_max, iterations
        The search over the relative standard deviation ``t = sd_cluster / sigma``: a grid of ``grid``
        points on ``[0, t_max]`` (0 and log-spaced), then golden-section steps between the neighbours of the
        best grid point.

    Returns
    -------
    RandomIntercept

    Notes
    -----
    With :math:`\\theta = t^2`, clusters :math:`g` of :math:`n_g` values summing to :math:`S_g`, the
    covariance of a cluster's values is :math:`\\sigma^2 (I + \\theta J)`, whose inverse is
    :math:`\\sigma^{-2} (I - \\frac{\\theta}{1 + \\theta n_g} J)`. Hence the GLS mean
    :math:`\\hat\\mu = \\sum_g S_g / (1 + \\theta n_g) / W` with :math:`W = \\sum_g n_g / (1 + \\theta n_g)`,
    the weighted residual sum of squares
    :math:`Q = \\sum_i (d_i - \\hat\\mu)^2 - \\sum_g \\frac{\\theta}{1 + \\theta n_g} (S_g - n_g \\hat\\mu)^2`,
    and, with :math:`\\sigma^2` profiled out as :math:`Q / (N - 1)`, lme4's REML criterion

    .. math:: d(t) = (N - 1)\\left(1 + \\log \\frac{2 \\pi Q}{N - 1}\\right) + \\sum_g \\log(1 + \\theta n_g) + \\log W,

    a function of the one parameter :math:`t`, evaluated for all columns at once from the cluster sums. The
    standard error of the mean is :math:`\\sqrt{\\hat\\sigma^2 / W}`, as ``vcov`` of lme4's fit.

    Examples
    --------
    >>> from mixeval.logs._stats import clustered_means, cluster_indicator
    >>> d = np.array([[0.1], [0.3], [0.2], [0.9], [1.1], [0.7], [0.5], [0.4]])
    >>> m = clustered_means(d, np.ones_like(d, dtype=bool), cluster_indicator(np.array([0, 0, 0, 1, 1, 1, 2, 2]), 3))
    >>> fit = random_intercept(m.sums, m.sizes, m.ss, m.n, m.estimate)
    >>> [round(float(x[0]), 6) for x in (fit.estimate, fit.se, fit.sd_cluster, fit.sigma)]
    [0.517267, 0.206557, 0.346237, 0.144667]
    """
    sums = np.asarray(sums, dtype=float)
    sizes = np.asarray(sizes, dtype=float)
    ss = np.asarray(ss, dtype=float)
    n = np.asarray(n, dtype=float)
    k = sums.shape[1]
    ts = np.concatenate([[0.0], np.geomspace(1e-3, t_max, grid - 1)])
    devs = np.stack([_reml_parts(np.full(k, t), sums, sizes, ss, n)[0] for t in ts])
    best = np.argmin(devs, axis=0)
    lo = ts[np.maximum(best - 1, 0)]
    hi = ts[np.minimum(best + 1, grid - 1)]
    ratio = (np.sqrt(5.0) - 1) / 2
    x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    f1 = _reml_parts(x1, sums, sizes, ss, n)[0]
    f2 = _reml_parts(x2, sums, sizes, ss, n)[0]
    for _ in range(iterations):
        left = f1 < f2                                      # the minimum lies in [lo, x2]
        hi = np.where(left, x2, hi)
        lo = np.where(left, lo, x1)
        x_new = np.where(left, hi - ratio * (hi - lo), lo + ratio * (hi - lo))
        f_new = _reml_parts(x_new, sums, sizes, ss, n)[0]
        x1, x2 = np.where(left, x_new, x2), np.where(left, x1, x_new)
        f1, f2 = np.where(left, f_new, f2), np.where(left, f1, f_new)
    t = (lo + hi) / 2
    dev_t = _reml_parts(t, sums, sizes, ss, n)[0]
    at_zero = devs[0] <= dev_t
    t = np.where(at_zero, 0.0, t)
    dev, mu, q, weight = _reml_parts(t, sums, sizes, ss, n)
    sigma2 = q / (n - 1)
    return RandomIntercept(estimate=np.asarray(mean, dtype=float) + mu, se=np.sqrt(sigma2 / weight),
                           sd_cluster=t * np.sqrt(sigma2), sigma=np.sqrt(sigma2), theta=t, deviance=dev,
                           boundary=t == 0)


def _deviance_vp(t: np.ndarray, s: np.ndarray, sums: np.ndarray, sizes: np.ndarray, ss: np.ndarray,
                 n: np.ndarray) -> np.ndarray:
    """lmerTest's REML deviance at the variance parameters ``(theta, sigma)`` (``devfun_vp``): not profiled over
    sigma, the mean at its GLS value for ``theta``."""
    _, _, q, weight = _reml_parts(t, sums, sizes, ss, n)
    log_det = np.log1p(t * t * sizes).sum(axis=0) + np.log(weight)
    return log_det + (n - 1) * np.log(2 * np.pi * s * s) + q / (s * s)


def satterthwaite_df(fit: RandomIntercept, sums: np.ndarray, sizes: np.ndarray, ss: np.ndarray,
                     n: np.ndarray) -> np.ndarray:
    """Satterthwaite degrees of freedom of the mean of ``d ~ 1 + (1 | cluster)``, as lmerTest's ``summary``.

    Notes
    -----
    With the variance parameters :math:`\\phi = (\\theta, \\sigma)` (lmerTest's ``varpar``), the variance of the
    mean :math:`V(\\phi) = \\sigma^2 / W(\\theta)`, :math:`W = \\sum_g n_g / (1 + \\theta^2 n_g)`, and :math:`H` the
    Hessian of the REML deviance in :math:`\\phi` at the optimum (central differences with Richardson
    extrapolation), :math:`\\mathrm{df} = 2 V^2 / (\\nabla V^\\top A \\nabla V)` with :math:`A = 2 H^{+}` (the
    Moore-Penrose inverse over the eigenvalues above 1e-8, as lmerTest). At a singular fit
    (:math:`\\theta = 0`) this is :math:`n - 1`, the paired t test's.

    Examples
    --------
    >>> from mixeval.logs._stats import clustered_means, cluster_indicator
    >>> d, g = np.array([[0.1, 0.3, 0.2, 0.9, 1.1, 0.7, 0.5, 0.4]]).T, np.array([0, 0, 0, 1, 1, 1, 2, 2])
    >>> m = clustered_means(d, d == d, cluster_indicator(g, 3))   # lmerTest: df 2.033 (R, lmer(d ~ 1 + (1 | g)))
    >>> round(float(satterthwaite_df(random_intercept(m.sums, m.sizes, m.ss, m.n, m.estimate), m.sums, m.sizes,
    ...                              m.ss, m.n)[0]), 4)
    2.0331
    """
    sums, sizes = np.asarray(sums, dtype=float), np.asarray(sizes, dtype=float)
    ss, n = np.asarray(ss, dtype=float), np.asarray(n, dtype=float)
    t, s = fit.theta.astype(float), fit.sigma.astype(float)

    def dev(dt: float, ds: float, step_t: np.ndarray, step_s: np.ndarray) -> np.ndarray:
        return _deviance_vp(t + dt * step_t, s + ds * step_s, sums, sizes, ss, n)

    def hessian(step_t: np.ndarray, step_s: np.ndarray) -> np.ndarray:
        f0 = dev(0, 0, step_t, step_s)
        htt = (dev(1, 0, step_t, step_s) - 2 * f0 + dev(-1, 0, step_t, step_s)) / step_t ** 2
        hss = (dev(0, 1, step_t, step_s) - 2 * f0 + dev(0, -1, step_t, step_s)) / step_s ** 2
        hts = (dev(1, 1, step_t, step_s) - dev(1, -1, step_t, step_s) - dev(-1, 1, step_t, step_s)
               + dev(-1, -1, step_t, step_s)) / (4 * step_t * step_s)
        return np.stack([np.stack([htt, hts], -1), np.stack([hts, hss], -1)], -2)

    h_t = 1e-3 * np.maximum(t, 1e-2)
    h_s = 1e-3 * s
    hess = (4 * hessian(h_t / 2, h_s / 2) - hessian(h_t, h_s)) / 3          # Richardson extrapolation
    vals, vecs = np.linalg.eigh(hess)
    inv_vals = np.where(vals > 1e-8, 1.0 / np.where(vals > 1e-8, vals, 1.0), 0.0)
    a = 2 * np.einsum("kij,kj,klj->kil", vecs, inv_vals, vecs)
    weight = (sizes / (1 + t * t * sizes)).sum(axis=0)
    dweight = -(sizes * sizes / (1 + t * t * sizes) ** 2).sum(axis=0)       # dW / d(theta^2)
    var = s * s / weight
    grad = np.stack([-s * s * dweight * 2 * t / weight ** 2, 2 * s / weight], -1)
    return 2 * var * var / np.einsum("ki,kij,kj->k", grad, a, grad)
