"""Paired bootstrap (shift method) and approximate randomization tests, bootstrap CIs."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from .._results import ConfidenceInterval, TestResult
from .._validation import as_1d_float, require_finite, require_level, require_positive_int
from ..errors import InputError, InputTypeError, MixevalWarning, as_flag, caller_stacklevel
from ._common import check_alternative, count_extreme, percentile_interval, require_items_to_resample
from ._engine import as_generator, bootstrap_sums, sign_flip_sums, sign_flip_sums_all
from ._metrics import resolve_metric

__all__ = ["permutation_test", "paired_bootstrap_test", "bootstrap_ci", "percentile_interval", "bca_interval"]

def _as_stats_matrix(x: object, argument: str) -> np.ndarray:
    if isinstance(x, pd.DataFrame):
        x = x.to_numpy(dtype=float, na_value=np.nan)
    try:
        arr = np.array(x, dtype=float)
    except (TypeError, ValueError):
        raise InputTypeError(f"`{argument}` must be a numeric array of per-item statistics.") from None
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise InputError(f"`{argument}` must be a non-empty (n_items, n_statistics) array; got shape {arr.shape}.")
    require_finite(arr, f"`{argument}`")
    return arr


@dataclass(frozen=True)
class _Paired:
    """The data of a paired comparison and how to turn column sums into the statistic."""

    Sa: np.ndarray  # (n, k) per-item statistics of system A (for the mean: the differences)
    Sb: np.ndarray | None  # (n, k) for system B; None for the mean difference / one system
    fn: Callable[[np.ndarray], np.ndarray]
    name: str
    is_mean: bool
    single: bool = False

    @property
    def n(self) -> int:
        return self.Sa.shape[0]

    def from_sums(self, sums_a: np.ndarray, sums_b: np.ndarray | None = None) -> np.ndarray:
        if self.is_mean:
            return sums_a[:, 0] / self.n
        if self.single or sums_b is None:
            return np.asarray(self.fn(sums_a), dtype=float)
        return np.asarray(self.fn(sums_a), dtype=float) - np.asarray(self.fn(sums_b), dtype=float)

    def observed(self) -> float:
        sa = self.Sa.sum(axis=0)[None, :]
        sb = None if self.Sb is None else self.Sb.sum(axis=0)[None, :]
        return float(self.from_sums(sa, sb)[0])

    def jackknife(self) -> np.ndarray:
        """Leave-one-item-out statistics (for the BCa acceleration)."""
        n = self.n
        if n < 2:
            raise InputError("the BCa interval needs at least 2 items; use ci='percentile'.")
        if self.is_mean:
            return (self.Sa[:, 0].sum() - self.Sa[:, 0]) / (n - 1)
        out = np.empty(n)
        step = max(1, (1 << 20) // max(1, self.Sa.shape[1]))
        tot_a = self.Sa.sum(axis=0)
        tot_b = None if self.Sb is None else self.Sb.sum(axis=0)
        for s in range(0, n, step):
            la = tot_a - self.Sa[s:s + step]
            lb = None if tot_b is None else tot_b - self.Sb[s:s + step]
            out[s:s + step] = self.from_sums(la, lb)
        return out

    def metric_values(self) -> tuple[float, float | None]:
        if self.is_mean:
            return float("nan"), None
        a = float(np.asarray(self.fn(self.Sa.sum(axis=0)[None, :]))[0])
        b = None if self.Sb is None else float(np.asarray(self.fn(self.Sb.sum(axis=0)[None, :]))[0])
        return a, b


def _prepare(a: object, b: object | None, metric: object) -> _Paired:
    if metric is None:
        x = as_1d_float(a, "a")
        if b is None:
            return _Paired(x[:, None], None, lambda s: s[:, 0], "mean", True, single=True)
        y = as_1d_float(b, "b")
        if x.shape != y.shape:
            raise InputError(
                f"`a` and `b` must hold one score per test item for the same items; got {x.size} and {y.size} values."
            )
        return _Paired((x - y)[:, None], None, lambda s: s[:, 0], "mean", True)
    fn, name, k = resolve_metric(metric)
    Sa = _as_stats_matrix(a, "a")
    if k is not None and Sa.shape[1] != k:
        raise InputError(f"metric {name!r} needs {k} statistics per item (columns of `a`); got {Sa.shape[1]}.")
    if b is None:
        return _Paired(Sa, None, fn, name, False, single=True)
    Sb = _as_stats_matrix(b, "b")
    if Sa.shape != Sb.shape:
        raise InputError(
            f"`a` and `b` must have the same shape (n_items, n_statistics); got {Sa.shape} and {Sb.shape}."
        )
    return _Paired(Sa, Sb, fn, name, False)


def permutation_test(
    a: object,
    b: object,
    *,
    metric: object = None,
    alternative: str = "two-sided",
    exact: bool = False,
    n_resamples: int = 10_000,
    random_state: object = None,
) -> TestResult:
    """Paired approximate randomization (permutation) test (book Algorithm 4.2).

    Under the null hypothesis the two systems are exchangeable on every test item,
    so each item's pair of outputs is swapped with probability 1/2 and the score
    difference recomputed.

    Parameters
    ----------
    a, b : array_like
        Without ``metric``: sentence-level scores of systems A and B, one per test
        item (the statistic is the mean difference). With ``metric``: per-item
        sufficient statistics, arrays of shape ``(n_items, k)`` (e.g. BLEU n-gram
        counts, or ``tp, fp, fn`` for F1); the corpus metric is computed from their
        column sums.
    metric : str or callable, optional
        ``"bleu"``, ``"f1"``, ``"precision"``, ``"recall"``, ``"accuracy"`` or a
        function mapping column sums of shape ``(R, k)`` to ``R`` metric values.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: H1 says A scores higher than B.
    exact : bool
        Enumerate all :math:`2^n` swap patterns instead of sampling (at most 24
        items); the p-value is then the exact :math:`c / 2^n` (the identity pattern is
        among them, so it is never 0) and ``n_resamples``/``random_state`` are unused.
    n_resamples : int, keyword-only
        Number of random swap patterns ``R``.
    random_state : None, int or numpy.random.Generator, keyword-only
        Seed; identical seeds give identical results.

    Returns
    -------
    TestResult
        ``statistic`` and ``estimate`` are the observed difference
        :math:`\\Delta S_0 = S(A) - S(B)`, ``null_distribution`` the ``R`` permuted
        differences, ``details`` holds the count ``c``, the metric of each system
        and the number of items.

    Notes
    -----
    With swap patterns :math:`r = 1..R` and permuted differences
    :math:`\\Delta S_r`, the two-sided p-value is

    .. math:: p = \\frac{c + 1}{R + 1}, \\quad c = \\#\\{r: |\\Delta S_r| \\ge |\\Delta S_0|\\},

    (one-sided: :math:`\\Delta S_r \\ge \\Delta S_0` for ``"greater"``,
    :math:`\\le` for ``"less"``). The book's Algorithm 4.2 uses :math:`c / R`; adding
    the observed data to the permutations, :math:`(c+1)/(R+1)`, gives a valid
    p-value that is never 0 (Phipson & Smyth 2010). Differences equal to the
    observed one up to floating-point rounding (relative 1e-9) count as ties.

    The swap of item ``i`` changes the column sums of A by
    :math:`b_i (S^A_i - S^B_i)`, so all resamples are computed as column sums of
    random item subsets, vectorised with 8-item look-up tables (one random byte
    per 8 items) in chunks of bounded memory.

    Examples
    --------
    >>> import numpy as np
    >>> from mixeval.resampling import permutation_test
    >>> rng = np.random.default_rng(0)
    >>> a = rng.normal(0.30, 0.1, size=200)
    >>> b = a - 0.02 + rng.normal(0, 0.05, size=200)
    >>> res = permutation_test(a, b, n_resamples=2000, random_state=1)
    >>> round(res.statistic, 4), res.pvalue < 0.01
    (0.0244, True)
    """
    alternative = check_alternative(alternative)
    n_resamples = require_positive_int(n_resamples, "n_resamples")
    pair = _prepare(a, b, metric)
    if exact:
        if pair.n > 24:
            raise InputError(f"exact=True enumerates 2**n swap patterns; n = {pair.n} items is too many (at most "
                             "24). Use the approximate test (exact=False).")
        flips = sign_flip_sums_all
    else:
        rng = as_generator(random_state)

        def flips(D):
            return sign_flip_sums(D, n_resamples, rng)
    observed = pair.observed()
    if pair.is_mean:
        d = pair.Sa  # (n, 1) differences; a swap flips the sign of d_i
        kept = flips(d)[:, 0]
        null = (2.0 * kept - d[:, 0].sum()) / pair.n
    else:
        D = pair.Sa - pair.Sb
        kept = flips(D)
        sums_a = pair.Sb.sum(axis=0)[None, :] + kept
        sums_b = (pair.Sa.sum(axis=0) + pair.Sb.sum(axis=0))[None, :] - sums_a
        null = pair.from_sums(sums_a, sums_b)
    c = count_extreme(null, observed, alternative)
    metric_a, metric_b = pair.metric_values()
    R = null.size
    return TestResult(
        statistic=observed,
        pvalue=c / R if exact else (c + 1) / (R + 1),
        null_distribution=null,
        alternative=alternative,
        method=f"paired {'exact' if exact else 'approximate'} randomization test ({pair.name} difference)",
        estimate=observed,
        details={"count": c, "n_resamples": R, "n_items": pair.n, "metric": pair.name, "exact": bool(exact),
                 "metric_a": metric_a, "metric_b": metric_b},
    )


def bca_interval(distribution: np.ndarray, observed: float, jackknife: np.ndarray | None,
                 level: float = 0.95) -> ConfidenceInterval:
    """Bias-corrected and accelerated (BCa) bootstrap interval (Efron & Tibshirani 1993, 14.3).

    With ``jackknife=None`` the acceleration is 0: the bias-corrected (BC) percentile interval
    (Efron 1982), for replicates of a parametric bootstrap, where no jackknife applies.

    Notes
    -----
    With bootstrap replicates :math:`\\theta^*_r`, the observed :math:`\\hat\\theta` and
    jackknife values :math:`\\theta_{(i)}` with mean :math:`\\theta_{(\\cdot)}`:

    .. math::
        z_0 = \\Phi^{-1}\\Big(\\frac{\\#\\{\\theta^*_r < \\hat\\theta\\} + \\tfrac12\\#\\{\\theta^*_r = \\hat\\theta\\}}{R}\\Big),\\quad
        a = \\frac{\\sum_i (\\theta_{(\\cdot)} - \\theta_{(i)})^3}{6 [\\sum_i (\\theta_{(\\cdot)} - \\theta_{(i)})^2]^{3/2}},

    and the interval is the :math:`\\alpha_1, \\alpha_2` quantiles of the replicates with
    :math:`\\alpha_j = \\Phi(z_0 + (z_0 + z_j) / (1 - a (z_0 + z_j)))`,
    :math:`z_{1,2} = \\Phi^{-1}((1 \\mp \\text{level})/2)`. With :math:`z_0 = a = 0` it is the
    percentile interval. If every replicate lies on one side of :math:`\\hat\\theta` the
    bias correction is infinite: the interval is NaN and a warning is issued.

    Examples
    --------
    >>> import numpy as np
    >>> dist = np.linspace(-1, 1, 1001)
    >>> ci = bca_interval(dist, 0.0, np.array([-1.0, 0.0, 1.0]), 0.9)
    >>> round(ci.lower, 6), round(ci.upper, 6)
    (-0.9, 0.9)
    """
    level = require_level(level)
    dist = np.asarray(distribution, dtype=float)
    R = dist.size
    less = np.count_nonzero(dist < observed)
    equal = np.count_nonzero(dist == observed)
    prop = (less + 0.5 * equal) / R
    if prop <= 0.0 or prop >= 1.0:
        percentile = as_flag("the percentile interval (ci='percentile'; bootstrap_ci: method='percentile')",
                             "--ci percentile")
        warnings.warn(
            "BCa interval undefined: all bootstrap replicates lie on one side of the observed statistic "
            f"(infinite bias correction); returning NaN. Use {percentile} or more resamples.",
            MixevalWarning,
            stacklevel=caller_stacklevel(),
        )
        return ConfidenceInterval(float("nan"), float("nan"), level, "BCa" if jackknife is not None else "BC")
    z0 = special.ndtri(prop)
    accel = 0.0
    if jackknife is not None:
        jk = np.asarray(jackknife, dtype=float)
        dev = jk.mean() - jk
        den = 6.0 * np.sum(dev**2) ** 1.5
        accel = float(np.sum(dev**3) / den) if den > 0 else 0.0
    z = special.ndtri(np.array([(1 - level) / 2, (1 + level) / 2]))
    alphas = special.ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    lo, hi = np.quantile(dist, alphas)
    return ConfidenceInterval(float(lo), float(hi), level, "BCa" if jackknife is not None else "BC")


def _interval(method: str, dist: np.ndarray, observed: float, pair: _Paired, level: float) -> ConfidenceInterval:
    if method == "percentile":
        return percentile_interval(dist, level)
    if method == "bca":
        return bca_interval(dist, observed, pair.jackknife(), level)
    raise InputError(f"`ci` must be 'percentile' or 'bca'; got {method!r}.")


def _bootstrap_distribution(pair: _Paired, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    if pair.is_mean or pair.Sb is None:
        sums = bootstrap_sums(pair.Sa, n_resamples, rng)
        return pair.from_sums(sums)
    k = pair.Sa.shape[1]
    sums = bootstrap_sums(np.hstack([pair.Sa, pair.Sb]), n_resamples, rng)
    return pair.from_sums(sums[:, :k], sums[:, k:])


def paired_bootstrap_test(
    a: object,
    b: object,
    *,
    metric: object = None,
    alternative: str = "two-sided",
    ci: str = "percentile",
    level: float = 0.95,
    n_resamples: int = 10_000,
    random_state: object = None,
) -> TestResult:
    """Paired bootstrap test with the shift method (book Algorithm 4.1) and a bootstrap CI.

    Test items are resampled with replacement (pairs kept together), the score
    difference recomputed on each resample, and the bootstrap distribution shifted
    to mean zero to serve as the null distribution (Noreen 1989).

    Parameters
    ----------
    a, b : array_like
        Sentence-level scores (statistic: mean difference) or, with ``metric``,
        per-item sufficient statistics of shape ``(n_items, k)``; see
        :func:`permutation_test`.
    metric : str or callable, optional
        Corpus-level metric computed from column sums (see :func:`permutation_test`).
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: H1 says A scores higher than B.
    ci : {"percentile", "bca"}
        Method of the confidence interval for the difference.
    level : float
        Confidence level of the interval.
    n_resamples : int, keyword-only
        Number of bootstrap resamples ``K``.
    random_state : None, int or numpy.random.Generator, keyword-only
        Seed; identical seeds give identical results, whatever the number of threads
        (see Notes for how the random stream is derived).

    Returns
    -------
    TestResult
        ``statistic``/``estimate``: observed difference; ``null_distribution``: the
        shifted bootstrap differences (add ``details["bootstrap_mean"]`` to get the
        bootstrap distribution itself); ``confidence_interval``: percentile or BCa
        interval of the (unshifted) bootstrap differences; ``details``: count,
        bootstrap mean and standard error.

    Notes
    -----
    With bootstrap differences :math:`\\Delta S_k` and their mean
    :math:`\\overline{\\Delta S}`, the two-sided p-value is

    .. math:: p = \\frac{c + 1}{K + 1}, \\quad c = \\#\\{k: |\\Delta S_k - \\overline{\\Delta S}| \\ge |\\Delta S_0|\\}

    (one-sided: :math:`\\Delta S_k - \\overline{\\Delta S} \\ge \\Delta S_0` for
    ``"greater"``, :math:`\\le` for ``"less"``). The book's Algorithm 4.1 uses
    :math:`c/K`; :math:`(c+1)/(K+1)` counts the observed sample as one of the
    resamples and is never 0. Resampling is exact (``n`` indices drawn uniformly
    with replacement per resample), in chunks of bounded memory.

    Random stream: ``random_state`` is turned into a Generator ``g``
    (:func:`mixeval.resampling.as_generator`; an int ``s`` gives
    ``np.random.default_rng(s)``). The ``K`` resamples are split into consecutive
    chunks of ``max(1, 2**18 // n)`` resamples (a partition fixed by ``K`` and ``n``);
    chunk ``c`` uses numpy's SFC64 generator seeded by child ``c`` of ``g``'s seed
    sequence, ``g.bit_generator.seed_seq.spawn(n_chunks)[c]`` (for an int seed:
    ``np.random.SeedSequence(s).spawn(n_chunks)[c]``, so a seed and
    ``np.random.default_rng(seed)`` give the same result; a Generator passed in is
    not advanced, its seed sequence spawns fresh children on every call). Each
    chunk draws ``h = ceil(chunk * n / m)`` integers ``v`` uniform on ``[0, n^m)``
    (``m = 3`` for ``n <= 2,097,151``, else 2); the ``m`` base-``n`` digits of ``v`` are
    independent uniform item indices (digit blocks most significant first, filling
    the chunk's resamples row by row). The chunks are computed by threads (at
    most the available CPUs, at most 8), which never changes the output. See
    :func:`mixeval.resampling._engine.bootstrap_sums`.

    Examples
    --------
    >>> import numpy as np
    >>> from mixeval.resampling import paired_bootstrap_test
    >>> rng = np.random.default_rng(0)
    >>> a = rng.normal(0.30, 0.1, size=200)
    >>> b = a - 0.02 + rng.normal(0, 0.05, size=200)
    >>> res = paired_bootstrap_test(a, b, n_resamples=2000, random_state=1)
    >>> res.pvalue < 0.01, res.confidence_interval.lower > 0
    (True, True)
    """
    alternative = check_alternative(alternative)
    n_resamples = require_positive_int(n_resamples, "n_resamples")
    level = require_level(level)
    if ci not in ("percentile", "bca"):
        raise InputError(f"`ci` must be 'percentile' or 'bca'; got {ci!r}.")
    rng = as_generator(random_state)
    pair = _prepare(a, b, metric)
    require_items_to_resample(pair.n)
    observed = pair.observed()
    dist = _bootstrap_distribution(pair, n_resamples, rng)
    center = float(dist.mean())
    null = dist - center
    c = count_extreme(null, observed, alternative)
    interval = _interval(ci, dist, observed, pair, level)
    metric_a, metric_b = pair.metric_values()
    return TestResult(
        statistic=observed,
        pvalue=(c + 1) / (n_resamples + 1),
        null_distribution=null,
        alternative=alternative,
        method=f"paired bootstrap test, shift method ({pair.name} difference)",
        estimate=observed,
        confidence_interval=interval,
        details={"count": c, "n_resamples": n_resamples, "n_items": pair.n, "metric": pair.name,
                 "metric_a": metric_a, "metric_b": metric_b, "bootstrap_mean": center,
                 "bootstrap_se": float(dist.std(ddof=1)) if dist.size > 1 else float("nan")},
    )


def bootstrap_ci(
    a: object,
    b: object | None = None,
    *,
    metric: object = None,
    method: str = "bca",
    level: float = 0.95,
    n_resamples: int = 10_000,
    random_state: object = None,
) -> ConfidenceInterval:
    """Bootstrap confidence interval of a score (``b=None``) or of a paired difference.

    Parameters
    ----------
    a, b : array_like
        Scores (or per-item statistics with ``metric``) of one system, or of two
        systems on the same items (interval for ``S(A) - S(B)``).
    metric : str or callable, optional
        Corpus metric from column sums; default the mean.
    method : {"bca", "percentile"}
        BCa (default) or percentile interval.
    level : float
        Confidence level.
    n_resamples : int, keyword-only
    random_state : None, int or numpy.random.Generator, keyword-only

    Returns
    -------
    ConfidenceInterval

    Notes
    -----
    See :func:`percentile_interval` and :func:`bca_interval` for the formulas; the
    BCa acceleration uses the leave-one-item-out jackknife, computed from column
    sums for corpus metrics.
    The resamples are drawn exactly as in :func:`paired_bootstrap_test` (same
    random stream for the same ``random_state``).

    Examples
    --------
    >>> import numpy as np
    >>> from mixeval.resampling import bootstrap_ci
    >>> x = np.random.default_rng(3).normal(10, 2, size=400)
    >>> ci = bootstrap_ci(x, n_resamples=2000, random_state=0)
    >>> ci.lower < 10 < ci.upper
    True
    """
    n_resamples = require_positive_int(n_resamples, "n_resamples")
    level = require_level(level)
    if method not in ("percentile", "bca"):
        raise InputError(f"`method` must be 'percentile' or 'bca'; got {method!r}.")
    rng = as_generator(random_state)
    pair = _prepare(a, b, metric)
    require_items_to_resample(pair.n)
    dist = _bootstrap_distribution(pair, n_resamples, rng)
    return _interval(method, dist, pair.observed(), pair, level)
