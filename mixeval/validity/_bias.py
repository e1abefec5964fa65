"""Dataset bias test (book Definition 2.2): feature-label correlation in-domain vs out-of-domain."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from .._random import as_generator
from .._results import ConfidenceInterval, Result, TestResult
from .._validation import (
    as_1d_float,
    require_columns,
    require_dataframe,
    require_level,
    require_no_missing,
    require_numeric_column,
    require_positive_int,
)
from ..errors import InputError

__all__ = ["DatasetBiasResult", "correlation_difference_test", "dataset_bias_test"]


def _pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, bool]:
    """Pearson r; a constant variable gives ``r = 0`` (zero covariance, as the book attributes)."""
    sx, sy = np.std(x), np.std(y)
    if sx == 0 or sy == 0:
        return 0.0, True
    r = float(np.mean((x - x.mean()) * (y - y.mean())) / (sx * sy))
    return float(np.clip(r, -1.0, 1.0)), False


def _fisher_ci(r: float, n: int, z: float, constant: bool) -> tuple[float, float]:
    if constant:
        return 0.0, 0.0
    rr = np.clip(r, -1 + 1e-15, 1 - 1e-15)
    half = z / np.sqrt(n - 3)
    return float(np.tanh(np.arctanh(rr) - half)), float(np.tanh(np.arctanh(rr) + half))


def correlation_difference_test(
    x_in: object,
    y_in: object,
    x_out: object,
    y_out: object,
    *,
    level: float = 0.95,
    n_resamples: int = 0,
    random_state: int | np.random.Generator | None = None,
) -> TestResult:
    """Test whether a feature-label correlation differs between two independent datasets.

    Parameters
    ----------
    x_in, y_in : array-like
        Feature and label in the in-domain data.
    x_out, y_out : array-like
        Feature and label in the out-of-domain data.
    level : float
        Confidence level of the intervals.
    n_resamples : int, keyword-only
        Bootstrap resamples (each domain resampled independently) for a percentile interval of
        the difference, stored in ``details["bootstrap_ci"]``; 0 skips the bootstrap.
    random_state : int or numpy.random.Generator, keyword-only
        Seed of the bootstrap.

    Returns
    -------
    TestResult
        ``estimate`` = ``r_in - r_out``; ``statistic`` = Fisher z statistic; ``pvalue`` two-sided;
        ``confidence_interval`` = Zou's (2007) interval for the difference; ``details`` has
        ``r_in``, ``r_out``, their Fisher intervals, ``n_in``, ``n_out``, ``constant_in``,
        ``constant_out`` and (if requested) ``bootstrap_ci``.

    Notes
    -----
    :math:`R = \\frac{E(xy) - E(x)E(y)}{\\sqrt{V(x)}\\sqrt{V(y)}}` (book Def. 2.2). With
    :math:`z_i = \\operatorname{artanh} r_i`, the statistic is
    :math:`(z_1 - z_2)/\\sqrt{1/(n_1-3) + 1/(n_2-3)}` (standard normal under equal correlations).
    Zou's interval: with Fisher limits :math:`(l_i, u_i)`,
    :math:`L = r_1 - r_2 - \\sqrt{(r_1-l_1)^2 + (u_2-r_2)^2}`,
    :math:`U = r_1 - r_2 + \\sqrt{(u_1-r_1)^2 + (r_2-l_2)^2}`. A constant variable in one domain
    has zero covariance with the label; its correlation is taken as exactly 0 (no uncertainty).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x1 = rng.normal(size=500); y1 = x1 + rng.normal(size=500)
    >>> x2 = rng.normal(size=500); y2 = -x2 + rng.normal(size=500)
    >>> res = correlation_difference_test(x1, y1, x2, y2)
    >>> res.pvalue < 1e-10
    True
    """
    xi, yi = as_1d_float(x_in, "x_in"), as_1d_float(y_in, "y_in")
    xo, yo = as_1d_float(x_out, "x_out"), as_1d_float(y_out, "y_out")
    if xi.size != yi.size or xo.size != yo.size:
        raise InputError("feature and label must have the same length within each domain.")
    if xi.size < 4 or xo.size < 4:
        raise InputError(f"each domain needs at least 4 rows for a Fisher-z interval; got {xi.size} and {xo.size}.")
    level = require_level(level)
    zq = float(stats.norm.ppf(0.5 + level / 2))
    r1, c1 = _pearson(xi, yi)
    r2, c2 = _pearson(xo, yo)
    n1, n2 = xi.size, xo.size
    l1, u1 = _fisher_ci(r1, n1, zq, c1)
    l2, u2 = _fisher_ci(r2, n2, zq, c2)
    diff = r1 - r2
    low = diff - np.sqrt((r1 - l1) ** 2 + (u2 - r2) ** 2)
    high = diff + np.sqrt((u1 - r1) ** 2 + (r2 - l2) ** 2)
    var = (0.0 if c1 else 1.0 / (n1 - 3)) + (0.0 if c2 else 1.0 / (n2 - 3))
    z1 = np.arctanh(np.clip(r1, -1 + 1e-15, 1 - 1e-15))
    z2 = np.arctanh(np.clip(r2, -1 + 1e-15, 1 - 1e-15))
    if var > 0:
        statistic = float((z1 - z2) / np.sqrt(var))
        pvalue = float(2 * stats.norm.sf(abs(statistic)))
    else:
        statistic, pvalue = (0.0, 1.0) if diff == 0 else (np.inf, 0.0)
    details = {"r_in": r1, "r_out": r2, "ci_in": (l1, u1), "ci_out": (l2, u2), "n_in": n1, "n_out": n2,
               "constant_in": c1, "constant_out": c2}
    null = None
    if require_positive_int(n_resamples, "n_resamples", zero_means="no bootstrap"):
        rng = as_generator(random_state)
        boot = np.empty(int(n_resamples))
        for b in range(int(n_resamples)):
            i = rng.integers(0, n1, n1)
            o = rng.integers(0, n2, n2)
            boot[b] = _pearson(xi[i], yi[i])[0] - _pearson(xo[o], yo[o])[0]
        alpha = 1 - level
        details["bootstrap_ci"] = (float(np.quantile(boot, alpha / 2)), float(np.quantile(boot, 1 - alpha / 2)))
        details["bootstrap_se"] = float(np.std(boot, ddof=1))
    return TestResult(
        statistic=statistic,
        pvalue=pvalue,
        df=None,
        null_distribution=null,
        alternative="two-sided",
        method="difference of correlations (Fisher z test, Zou interval)",
        estimate=float(diff),
        confidence_interval=ConfidenceInterval(float(low), float(high), level, "Zou (2007) from Fisher z"),
        details=details,
    )


@dataclass(frozen=True, eq=False)
class DatasetBiasResult(Result):
    """Per-feature correlations with the label in two domains and their difference.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per feature: ``r_in``, ``r_out``, ``difference``, ``lower``, ``upper`` (Zou),
        ``z``, ``pvalue``, ``boot_low``, ``boot_high`` (if bootstrapped), ``sign_in``, ``sign_out``
        (``+``/``-``/``0`` by whether the Fisher interval excludes 0), ``constant_in``,
        ``constant_out`` and ``biased``.
    tests : dict
        The :class:`~mixeval.TestResult` of every feature.
    level : float
    threshold : float or None
        Absolute difference in correlation regarded as substantial (None: only a change of
        sign category counts).

    Examples
    --------
    The feature predicts the label with opposite signs in the two domains:

    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> a = pd.DataFrame({"f": rng.normal(size=400)}); a["y"] = (a["f"] + rng.normal(size=400) > 0) * 1
    >>> b = pd.DataFrame({"f": rng.normal(size=400)}); b["y"] = (-b["f"] + rng.normal(size=400) > 0) * 1
    >>> res = dataset_bias_test(a, b, "y")
    >>> res.biased
    ['f']
    >>> res.table[["feature", "r_in", "r_out", "difference", "lower", "upper"]].round(3)
      feature   r_in  r_out  difference  lower  upper
    0       f  0.576 -0.569       1.145  1.047  1.233
    >>> res.tests["f"].pvalue < 1e-10
    True
    """

    table: pd.DataFrame
    tests: dict[str, TestResult] = field(repr=False)
    level: float = 0.95
    threshold: float | None = None

    @property
    def biased(self) -> list[str]:
        """Features flagged as dataset-biased."""
        return self.table.loc[self.table["biased"], "feature"].tolist()

    def summary(self) -> str:
        cols = ["feature", "r_in", "r_out", "difference", "lower", "upper", "pvalue", "sign_in", "sign_out", "biased"]
        rule = "sign category changes" if self.threshold is None else f"sign category changes or |difference| > {self.threshold}"
        return (f"Dataset bias test ({100 * self.level:g}% intervals; biased if {rule})\n"
                + self.table[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))

    def __repr__(self) -> str:
        return f"DatasetBiasResult(biased={self.biased}, n_features={len(self.table)})"


def dataset_bias_test(
    in_domain: pd.DataFrame,
    out_of_domain: pd.DataFrame,
    target: str,
    features: list[str] | None = None,
    *,
    level: float = 0.95,
    threshold: float | None = None,
    n_resamples: int = 0,
    random_state: int | np.random.Generator | None = None,
) -> DatasetBiasResult:
    """Dataset bias test (book Def. 2.2): does a feature's correlation with the label change across domains?

    Parameters
    ----------
    in_domain, out_of_domain : pandas.DataFrame
        The two datasets, with the same feature and label columns (not modified).
    target : str
        Label column (numeric; binary labels give point-biserial correlations).
    features : list of str, optional
        Features to test (default: numeric columns of ``in_domain`` other than ``target``).
    level : float
        Confidence level.
    threshold : float, optional
        A feature is biased when the sign category of its correlation (positive / none / negative,
        judged by the Fisher interval) differs between domains, or when
        ``|r_in - r_out| > threshold`` if given. The book leaves "substantial" to the user.
    n_resamples : int, keyword-only
        Bootstrap resamples for percentile intervals of each difference (0: none).
    random_state : int or numpy.random.Generator, keyword-only
        Seed for the bootstrap (identical seeds give identical output).

    Returns
    -------
    DatasetBiasResult

    Notes
    -----
    Per feature, :func:`correlation_difference_test` with the Pearson correlation of Def. 2.2;
    a feature constant in one domain gets ``r = 0`` there (zero covariance; the book's HANS case).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> a = pd.DataFrame({"f": rng.normal(size=400)}); a["y"] = (a["f"] + rng.normal(size=400) > 0) * 1
    >>> b = pd.DataFrame({"f": rng.normal(size=400)}); b["y"] = (-b["f"] + rng.normal(size=400) > 0) * 1
    >>> dataset_bias_test(a, b, "y").biased
    ['f']
    """
    in_domain = require_dataframe(in_domain, "in_domain")
    out_of_domain = require_dataframe(out_of_domain, "out_of_domain")
    if features is None:
        features = [c for c in in_domain.columns if c != target and pd.api.types.is_numeric_dtype(in_domain[c])]
    features = list(features)
    if not features:
        raise InputError("no features to test; pass `features`.")
    if threshold is not None and not (np.isfinite(threshold) and threshold >= 0):
        raise InputError(f"`threshold` must be a non-negative number or None; got {threshold!r}.")
    for name, d in (("in_domain", in_domain), ("out_of_domain", out_of_domain)):
        require_columns(d, [target, *features], name)
        require_no_missing(d, [target, *features])
    y_in = require_numeric_column(in_domain, target, "label")
    y_out = require_numeric_column(out_of_domain, target, "label")
    rng = as_generator(random_state)
    rows = []
    tests: dict[str, TestResult] = {}
    for f in features:
        x_in = require_numeric_column(in_domain, f, "feature")
        x_out = require_numeric_column(out_of_domain, f, "feature")
        res = correlation_difference_test(x_in, y_in, x_out, y_out, level=level, n_resamples=n_resamples,
                                          random_state=rng)
        tests[f] = res
        d = res.details
        sign_in = _sign(d["ci_in"], d["r_in"])
        sign_out = _sign(d["ci_out"], d["r_out"])
        biased = sign_in != sign_out or (threshold is not None and abs(res.estimate) > threshold)
        boot = d.get("bootstrap_ci", (np.nan, np.nan))
        rows.append({
            "feature": f, "r_in": d["r_in"], "r_out": d["r_out"], "difference": res.estimate,
            "lower": res.confidence_interval.lower, "upper": res.confidence_interval.upper,
            "z": res.statistic, "pvalue": res.pvalue, "boot_low": boot[0], "boot_high": boot[1],
            "sign_in": sign_in, "sign_out": sign_out,
            "constant_in": d["constant_in"], "constant_out": d["constant_out"], "biased": bool(biased),
        })
    return DatasetBiasResult(table=pd.DataFrame(rows), tests=tests, level=level, threshold=threshold)


def _sign(ci: tuple[float, float], r: float) -> str:
    if ci[0] > 0:
        return "+"
    if ci[1] < 0:
        return "-"
    return "0"
