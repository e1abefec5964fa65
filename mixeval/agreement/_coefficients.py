"""Chance-corrected agreement coefficients: Krippendorff's alpha, Cohen's kappa, Scott's pi."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from .._results import ConfidenceInterval, Result
from .._validation import (
    describe_id_column,
    id_like_columns,
    require_columns,
    require_level,
    require_positive_int,
)
from ..errors import InputError, InputTypeError, MixevalWarning, caller_stacklevel
from ..resampling import as_generator, percentile_interval
from ..resampling.engine import bootstrap_counts, chunk_sizes

__all__ = ["AgreementResult", "krippendorff_alpha", "cohens_kappa", "scotts_pi", "agreement", "LEVELS"]

#: The levels of measurement of the agreement coefficients (``measurement=``), from the weakest.
LEVELS = ("nominal", "ordinal", "interval", "ratio")
_UNDEFINED = ("nan", "zero", "raise")


@dataclass(frozen=True, eq=False)
class AgreementResult(Result):
    """An agreement coefficient with its ingredients (all numbers unrounded).

    Attributes
    ----------
    coefficient : str
        ``"alpha"``, ``"kappa"`` or ``"pi"``.
    value : float
        ``1 - observed disagreement / expected disagreement`` (NaN if undefined).
    measurement : str
        Level of measurement of the difference function.
    observed_disagreement, expected_disagreement : float
        :math:`D_o` and :math:`D_e`.
    n_units : int
        Units with at least two (alpha) or exactly two (kappa, pi) ratings.
    n_values : int
        Pairable values (alpha) or rated units (kappa, pi).
    n_raters : int
    percent_agreement : float
        Share of agreeing pairs of values, uncorrected for chance.
    confidence_interval : ConfidenceInterval or None
        Percentile bootstrap interval over units.

    Examples
    --------
    >>> import numpy as np
    >>> res = krippendorff_alpha(np.array([[1, 1], [0, 1], [0, 0], [1, 1]]), "nominal", level=None)
    >>> print(res.summary())
    alpha (nominal) = 0.5333; D_o = 0.25, D_e = 0.5357, 4 units, 2 raters, percent agreement 0.75
    """

    coefficient: str
    value: float
    measurement: str
    observed_disagreement: float
    expected_disagreement: float
    n_units: int
    n_values: int
    n_raters: int
    percent_agreement: float
    confidence_interval: ConfidenceInterval | None = None
    details: dict[str, Any] = field(default_factory=dict, repr=False)

    def __float__(self) -> float:
        return float(self.value)

    def summary(self) -> str:
        """One line of text (rounding happens only here)."""
        s = f"{self.coefficient} ({self.measurement}) = {self.value:.4g}"
        if self.confidence_interval is not None:
            ci = self.confidence_interval
            s += f", {100 * ci.level:g}% CI [{ci.lower:.4g}, {ci.upper:.4g}]"
        return s + f"; D_o = {self.observed_disagreement:.4g}, D_e = {self.expected_disagreement:.4g}, " \
                   f"{self.n_units} units, {self.n_raters} raters, percent agreement {self.percent_agreement:.3g}"



# ----------------------------------------------------------------------------- input


def ratings_matrix(data: object, *, unit: str | None = None, rater: str | None = None,
                   value: str | None = None) -> pd.DataFrame:
    """Ratings as a wide table: one row per unit (item), one column per rater, NaN = missing.

    ``data`` is either wide already (a DataFrame or 2-d array with rows = units and
    columns = raters) or long (a DataFrame with ``unit``, ``rater`` and ``value``
    columns, one row per rating).

    Examples
    --------
    >>> import pandas as pd
    >>> long = pd.DataFrame({"item": ["a", "a", "b", "b", "c"], "rater": ["r1", "r2", "r1", "r2", "r1"],
    ...                      "score": [1, 1, 0, 1, 0]})
    >>> ratings_matrix(long, unit="item", rater="rater", value="score")
    rater   r1   r2
    item
    a      1.0  1.0
    b      0.0  1.0
    c      0.0  NaN
    """
    if unit is not None or rater is not None or value is not None:
        if not (unit and rater and value):
            raise InputError("for long-format ratings give all three of `unit`, `rater` and `value` column names.")
        if not isinstance(data, pd.DataFrame):
            raise InputTypeError("long-format ratings must be a pandas DataFrame with unit, rater and value columns.")
        require_columns(data, [unit, rater, value])
        dup = data.duplicated([unit, rater])
        if dup.any():
            first = data.loc[dup, [unit, rater]].iloc[0].tolist()
            raise InputError(
                f"{int(dup.sum())} duplicate (unit, rater) rating(s), e.g. {first}; each rater may rate a unit "
                "once. Aggregate or relabel them first."
            )
        wide = data.pivot(index=unit, columns=rater, values=value)
        # units and raters in order of first appearance, so resampling matches the wide input
        return wide.reindex(index=pd.unique(data[unit]), columns=pd.unique(data[rater]))
    if isinstance(data, pd.DataFrame):
        ids = id_like_columns(data)
        if ids:
            c = ids[0]
            raise InputError(
                f"the column {c!r} looks like a unit identifier ({describe_id_column(data, c)}), not a rater's "
                "ratings; counted as a rater it would change every coefficient. Make it the index "
                f"(data.set_index({c!r})) or keep only the rater columns; on the command line --id {c} or --raters."
            )
        return data
    arr = np.asarray(data, dtype=object if not np.issubdtype(np.asarray(data).dtype, np.number) else float)
    if arr.ndim != 2:
        raise InputError(f"wide ratings must be 2-d (units x raters); got shape {arr.shape}.")
    return pd.DataFrame(arr)


def _encode(wide: pd.DataFrame, measurement: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (units x raters, -1 = missing) and the sorted distinct values."""
    if measurement not in LEVELS:
        raise InputError(f"`measurement` must be one of {', '.join(map(repr, LEVELS))}; got {measurement!r}.")
    if wide.shape[0] == 0 or wide.shape[1] == 0:
        raise InputError("the ratings table is empty.")
    stacked = wide.stack(future_stack=True) if hasattr(wide, "stack") else wide.stack()
    present = stacked.dropna()
    if present.empty:
        raise InputError("the ratings table holds no ratings (all values are missing).")
    numeric = pd.to_numeric(present, errors="coerce")
    is_numeric = not numeric.isna().any()
    if measurement != "nominal" and not is_numeric:
        bad = present[numeric.isna()].astype(str).head(3).tolist()
        raise InputError(
            f"measurement={measurement!r} needs numeric ratings (ordered for 'ordinal'); found non-numeric values such as {bad}. "
            "Recode them as numbers or use measurement='nominal'."
        )
    if is_numeric:
        vals = wide.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        if np.isinf(vals).any():
            raise InputError("ratings contain infinite values; remove or recode them.")
        if measurement == "ratio" and (vals[~np.isnan(vals)] < 0).any():
            raise InputError("measurement='ratio' needs non-negative ratings (a ratio scale has a true zero).")
        domain = np.unique(vals[~np.isnan(vals)])
        codes = np.full(vals.shape, -1, dtype=np.intp)
        ok = ~np.isnan(vals)
        codes[ok] = np.searchsorted(domain, vals[ok])
        return codes, domain
    obj = wide.to_numpy(dtype=object)
    missing = pd.isna(wide).to_numpy()
    labels = sorted({str(v) for v in obj[~missing]})
    lookup = {lab: i for i, lab in enumerate(labels)}
    codes = np.full(obj.shape, -1, dtype=np.intp)
    for (i, j), v in np.ndenumerate(obj):
        if not missing[i, j]:
            codes[i, j] = lookup[str(v)]
    return codes, np.array(labels, dtype=object)


def _delta(measurement: str, domain: np.ndarray) -> np.ndarray:
    """Squared difference function delta(c, k) between the distinct values (Krippendorff 2004).

    Nominal and ratio only; interval and ordinal are computed from per-unit sums
    (ordinal = interval metric on the mid-ranks ``M_c = sum_{g<=c} n_g - n_c / 2``,
    since ``sum_{g=c}^{k} n_g - (n_c + n_k)/2 = M_k - M_c``), so they never need a
    values x values matrix.
    """
    V = domain.size
    if measurement == "nominal":
        return 1.0 - np.eye(V)
    v = domain.astype(float)
    s = v[:, None] + v[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(s > 0, (v[:, None] - v[None, :]) / np.where(s > 0, s, 1.0), 0.0)
    return d**2


def _finish(name: str, num: np.ndarray, den: np.ndarray, if_undefined: str, warn: bool = True) -> np.ndarray:
    """``1 - num / den`` with the 0/0 (no variation) case resolved by ``if_undefined``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        val = 1.0 - num / den
    undefined = den <= 0
    if undefined.any():
        if if_undefined == "raise":
            raise InputError(
                f"{name} is undefined (0/0): the ratings show no variation at all, so expected disagreement is 0. "
                "Pass if_undefined='zero' for Krippendorff's convention (0) or 'nan'."
            )
        val = np.where(undefined, 0.0 if if_undefined == "zero" else np.nan, val)
        if warn and if_undefined == "nan":
            warnings.warn(
                f"{name} is undefined (0/0): all pairable ratings are identical, so observed and expected "
                "disagreement are both 0; returning NaN (Krippendorff 2004 sets it to 0: if_undefined='zero').",
                MixevalWarning, stacklevel=caller_stacklevel(),
            )
    return val


# ----------------------------------------------------------------------------- alpha


#: Largest number of distinct values for the levels that need a values x values matrix.
MAX_VALUES_DENSE = 3000


@dataclass(frozen=True)
class _Units:
    """Per-unit sufficient statistics of the pairable units (memory O(ratings), not O(units x values))."""

    N: sparse.csr_matrix  # (U, V) value counts per unit
    m: np.ndarray  # ratings per unit
    s1: np.ndarray  # sum of values per unit (numeric levels)
    s2: np.ndarray  # sum of squared values per unit
    sumsq: np.ndarray  # sum_c n_uc^2 per unit (pairs of equal values)

    def __len__(self) -> int:
        return self.m.size


def _alpha_parts(codes: np.ndarray, domain: np.ndarray, measurement: str) -> tuple[_Units, np.ndarray]:
    V = domain.size
    present = codes >= 0
    m_all = present.sum(axis=1)
    keep = m_all >= 2
    codes = codes[keep]
    rows, cols = np.nonzero(codes >= 0)
    c = codes[rows, cols]
    N = sparse.csr_matrix((np.ones(c.size), (rows, c)), shape=(codes.shape[0], V))
    N.sum_duplicates()
    m = np.asarray(N.sum(axis=1)).ravel()
    sumsq = np.asarray(N.multiply(N).sum(axis=1)).ravel()
    if measurement in ("interval", "ratio"):
        v = domain.astype(float)
        s1, s2 = N @ v, N @ v**2
    else:
        s1 = s2 = np.zeros(m.size)
    if measurement == "ratio" and V > MAX_VALUES_DENSE:
        raise InputError(
            f"measurement='ratio' with {V} distinct values needs a {V} x {V} difference matrix; at most "
            f"{MAX_VALUES_DENSE} distinct values are supported. Round the ratings or use measurement='interval'."
        )
    return _Units(N, m, s1, s2, sumsq), m


def _alpha_batch(units: _Units, m: np.ndarray, W: np.ndarray, measurement: str, domain: np.ndarray):
    """Pieces of alpha for unit weights W (R x U): returns (num, den, n, same) with
    ``alpha = 1 - num / den``, ``n`` pairable values and ``same`` = sum_c o_cc."""
    n = W @ m
    inv = 1.0 / (m - 1.0)
    same = W @ ((units.sumsq - m) * inv)
    if measurement == "interval":
        unit = 2.0 * (m * units.s2 - units.s1**2) * inv
        obs = W @ unit
        S1, S2 = W @ units.s1, W @ units.s2
        exp = 2.0 * (n * S2 - S1**2)
        return (n - 1.0) * obs, exp, n, same
    n_c = np.asarray((units.N.T @ W.T).T)  # (R, V) resampled marginals
    if measurement == "nominal":
        obs = W @ ((m**2 - units.sumsq) * inv)
        exp = n**2 - np.sum(n_c**2, axis=1)
    elif measurement == "ratio":
        delta = _delta("ratio", domain)
        unit = np.asarray(units.N.multiply(units.N @ delta).sum(axis=1)).ravel() * inv
        obs = W @ unit
        exp = np.einsum("rv,rv->r", n_c @ delta, n_c)
    else:  # ordinal: delta_ck = (M_c - M_k)^2 on the (resampled) mid-ranks M_c = cum_c - n_c / 2
        M = np.cumsum(n_c, axis=1) - n_c / 2.0  # (R, V)
        P = np.asarray(units.N @ M.T)  # (U, R): sum of mid-ranks per unit
        Q = np.asarray(units.N @ (M**2).T)
        unit = 2.0 * (m[:, None] * Q - P**2) * inv[:, None]  # (U, R)
        obs = np.einsum("ru,ur->r", W, unit)
        exp = 2.0 * (n * np.sum(n_c * M**2, axis=1) - np.sum(n_c * M, axis=1) ** 2)
    return (n - 1.0) * obs, exp, n, same


_UNSET: Any = object()


def renamed_arguments(measurement: str, level: object, confidence: object) -> tuple[str, Any]:
    """``(measurement, level)`` from the current names, accepting those of mixeval 0.1 with a FutureWarning.

    In 0.1, ``level`` was the level of measurement and ``confidence`` the confidence level; now, as
    everywhere in mixeval, ``level`` is the confidence level and ``measurement`` the level of measurement.
    """
    if isinstance(level, str):
        warnings.warn("`level=` is now the confidence level (as everywhere in mixeval); pass the level of "
                      f"measurement as `measurement={level!r}`.", FutureWarning, stacklevel=caller_stacklevel())
        measurement, level = level, (0.95 if confidence is _UNSET else confidence)
    elif confidence is not _UNSET:
        warnings.warn("`confidence=` is now `level=` (the confidence level, as everywhere in mixeval).",
                      FutureWarning, stacklevel=caller_stacklevel())
        level = confidence
    return measurement, level


def krippendorff_alpha(
    data: object,
    measurement: str = "nominal",
    *,
    unit: str | None = None,
    rater: str | None = None,
    value: str | None = None,
    if_undefined: str = "nan",
    level: float | None = 0.95,
    n_resamples: int = 2000,
    random_state: object = None,
    confidence: object = _UNSET,
) -> AgreementResult:
    """Krippendorff's alpha for any number of raters, missing values and four levels.

    Parameters
    ----------
    data : DataFrame or array_like
        Wide ratings (rows = units/items, columns = raters, NaN = missing) or, with
        ``unit``, ``rater`` and ``value``, a long DataFrame with one row per rating.
        Note: the PyPI ``krippendorff`` package expects the transpose (raters x units).
    measurement : {"nominal", "ordinal", "interval", "ratio"}
        Level of measurement, i.e. the difference function.
    unit, rater, value : str, optional
        Column names for long-format input.
    if_undefined : {"nan", "zero", "raise"}
        What to return when the ratings show no variation at all (all pairable
        values identical): alpha is then 0/0. ``"nan"`` (default) returns NaN with a
        warning; ``"zero"`` follows Krippendorff (2004), who defines it as 0 (the
        book, Section 3.3.1, criticises this); ``"raise"`` raises InputError.
    level : float or None
        Level of the percentile bootstrap interval over units; None skips it.
    n_resamples : int, keyword-only
        Bootstrap resamples for the interval.
    random_state : None, int or numpy.random.Generator, keyword-only

    Returns
    -------
    AgreementResult

    Notes
    -----
    Units with fewer than two ratings are not pairable and are ignored. With
    value counts :math:`n_{uc}` in unit ``u`` (:math:`m_u = \\sum_c n_{uc}`), the
    coincidences are :math:`o_{ck} = \\sum_u (n_{uc} n_{uk} - [c = k] n_{uc}) / (m_u - 1)`,
    :math:`n_c = \\sum_k o_{ck}`, :math:`n = \\sum_c n_c`, and

    .. math:: \\alpha = 1 - \\frac{D_o}{D_e}
              = 1 - (n - 1)\\frac{\\sum_{c,k} o_{ck}\\, \\delta^2_{ck}}{\\sum_{c,k} n_c n_k\\, \\delta^2_{ck}}

    with :math:`\\delta^2_{ck}` = :math:`[c \\ne k]` (nominal),
    :math:`(\\sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2` (ordinal, over ranks),
    :math:`(c - k)^2` (interval), :math:`((c - k)/(c + k))^2` (ratio). The expected
    coincidences :math:`n_c (n_k - [c=k]) / (n - 1)` are those of drawing two values
    without replacement from all pairable values (the book's urn model).

    The bootstrap resamples pairable units with replacement (not Hayes &
    Krippendorff's 2007 scheme) and recomputes alpha, vectorised over resamples.

    Examples
    --------
    The book's 10-item, two-rater example (Section 3.3.1):

    >>> from mixeval.agreement import krippendorff_alpha
    >>> ratings = [[1, 0], [1, 1], [0, 1], [0, 0], [0, 0], [0, 1], [0, 0], [0, 1], [0, 0], [0, 0]]
    >>> res = krippendorff_alpha(ratings, level=None)
    >>> round(res.value, 3), round(res.percent_agreement, 2)
    (0.095, 0.6)
    """
    if if_undefined not in _UNDEFINED:
        raise InputError(f"`if_undefined` must be one of {', '.join(map(repr, _UNDEFINED))}; got {if_undefined!r}.")
    measurement, level = renamed_arguments(measurement, level, confidence)
    wide = ratings_matrix(data, unit=unit, rater=rater, value=value)
    codes, domain = _encode(wide, measurement)
    N, m = _alpha_parts(codes, domain, measurement)
    if len(N) == 0:
        raise InputError("no unit has two or more ratings, so no pairs of values can be compared; alpha needs "
                         "at least one unit rated by two raters.")
    ones = np.ones((1, len(N)))
    num, den, n, same = _alpha_batch(N, m, ones, measurement, domain)
    value_ = float(_finish("Krippendorff's alpha", num, den, if_undefined)[0])
    n_tot = float(n[0])
    ci = None
    if level is not None:
        level = require_level(level)
        n_resamples = require_positive_int(n_resamples, "n_resamples", minimum=2)
        rng = as_generator(random_state)
        vals = []
        width = 3 * len(N) + 2 * domain.size  # floats per resample held at once
        for size in chunk_sizes(n_resamples, width, elements=1 << 22):
            W = bootstrap_counts(len(N), size, rng)
            b_num, b_den, _, _ = _alpha_batch(N, m, W, measurement, domain)
            vals.append(_finish("Krippendorff's alpha", b_num, b_den, if_undefined, warn=False))
        dist = np.concatenate(vals)
        ci = _ci_from(dist, level)
    return AgreementResult(
        coefficient="alpha", value=value_, measurement=measurement,
        observed_disagreement=float(num[0] / (n_tot - 1.0) / n_tot),
        expected_disagreement=float(den[0] / (n_tot * (n_tot - 1.0))),
        n_units=int(len(N)), n_values=int(n_tot), n_raters=int(wide.shape[1]),
        percent_agreement=float(same[0] / n_tot), confidence_interval=ci,
        details={"values": domain.tolist(), "n_resamples": n_resamples if level is not None else 0,
                 "units_not_pairable": int(codes.shape[0] - len(N))},
    )


def _ci_from(dist: np.ndarray, level: float) -> ConfidenceInterval:
    finite = dist[np.isfinite(dist)]
    if finite.size < dist.size:
        warnings.warn(
            f"{dist.size - finite.size} of {dist.size} bootstrap resamples had no variation (coefficient "
            "undefined) and were left out of the interval.", MixevalWarning, stacklevel=caller_stacklevel())
    if finite.size < 2:
        return ConfidenceInterval(float("nan"), float("nan"), level, "percentile bootstrap over units")
    ci = percentile_interval(finite, level)
    return ConfidenceInterval(ci.lower, ci.upper, level, "percentile bootstrap over units")


# ----------------------------------------------------------------------------- kappa and pi


def _two_rater_codes(data, measurement, unit, rater, value):
    wide = ratings_matrix(data, unit=unit, rater=rater, value=value)
    if wide.shape[1] != 2:
        raise InputError(
            f"Cohen's kappa and Scott's pi are defined for exactly two raters; got {wide.shape[1]} "
            "(use krippendorff_alpha for more raters)."
        )
    codes, domain = _encode(wide, measurement)
    both = (codes >= 0).all(axis=1)
    if not both.any():
        raise InputError("no unit was rated by both raters.")
    return codes[both], domain, int((~both).sum())


def _kappa_pi_batch(a: np.ndarray, b: np.ndarray, V: int, W: np.ndarray, measurement: str, domain: np.ndarray, which: str):
    """Observed and expected disagreement and percent agreement for unit weights W (R x n)."""
    n = W.sum(axis=1)
    agree = (W @ (a == b).astype(float)) / n
    if measurement == "interval":
        va, vb = domain.astype(float)[a], domain.astype(float)[b]
        obs = (W @ (va - vb) ** 2) / n
        ma, mb = (W @ va) / n, (W @ vb) / n
        qa, qb = (W @ va**2) / n, (W @ vb**2) / n
        if which == "kappa":  # E (x - y)^2 with x ~ rater 1, y ~ rater 2 independent
            exp = qa + qb - 2.0 * ma * mb
        else:  # x, y iid from the pooled marginal
            exp = 2.0 * ((qa + qb) / 2.0 - ((ma + mb) / 2.0) ** 2)
        return obs, exp, agree
    if measurement == "ratio" and V > MAX_VALUES_DENSE:
        raise InputError(
            f"measurement='ratio' with {V} distinct values needs a {V} x {V} difference matrix; at most "
            f"{MAX_VALUES_DENSE} distinct values are supported. Round the ratings or use measurement='interval'."
        )
    rows = np.arange(len(a))
    A = sparse.csr_matrix((np.ones(len(a)), (rows, a)), shape=(len(a), V))
    B = sparse.csr_matrix((np.ones(len(b)), (rows, b)), shape=(len(b), V))
    nA, nB = np.asarray((A.T @ W.T).T), np.asarray((B.T @ W.T).T)
    if measurement == "nominal":
        obs = 1.0 - agree
        if which == "kappa":
            exp = 1.0 - np.sum(nA * nB, axis=1) / n**2
        else:
            p = (nA + nB) / (2 * n[:, None])
            exp = 1.0 - np.sum(p**2, axis=1)
    elif measurement == "ordinal":  # interval metric on the mid-ranks of the pooled marginal
        pooled = nA + nB
        M = np.cumsum(pooled, axis=1) - pooled / 2.0  # (R, V)
        Ma, Mb = np.take_along_axis(M, np.broadcast_to(a, W.shape), 1), np.take_along_axis(
            M, np.broadcast_to(b, W.shape), 1)
        obs = np.einsum("rn,rn->r", W, (Ma - Mb) ** 2) / n
        ea, eb = np.sum(nA * M, axis=1) / n, np.sum(nB * M, axis=1) / n
        qa, qb = np.sum(nA * M**2, axis=1) / n, np.sum(nB * M**2, axis=1) / n
        if which == "kappa":
            exp = qa + qb - 2.0 * ea * eb
        else:
            exp = 2.0 * ((qa + qb) / 2.0 - ((ea + eb) / 2.0) ** 2)
    else:  # ratio
        delta = _delta(measurement, domain)
        obs = (W @ delta[a, b]) / n
        if which == "kappa":
            exp = np.einsum("rv,rv->r", nA @ delta, nB) / n**2
        else:
            p = (nA + nB) / (2 * n[:, None])
            exp = np.einsum("rv,rv->r", p @ delta, p)
    return obs, exp, agree


def _kappa_or_pi(which, data, measurement, unit, rater, value, if_undefined, level, n_resamples, random_state):
    if if_undefined not in _UNDEFINED:
        raise InputError(f"`if_undefined` must be one of {', '.join(map(repr, _UNDEFINED))}; got {if_undefined!r}.")
    codes, domain, dropped = _two_rater_codes(data, measurement, unit, rater, value)
    a, b = codes[:, 0], codes[:, 1]
    name = "Cohen's kappa" if which == "kappa" else "Scott's pi"
    ones = np.ones((1, len(a)))
    obs, exp, agree = _kappa_pi_batch(a, b, domain.size, ones, measurement, domain, which)
    value_ = float(_finish(name, obs, exp, if_undefined)[0])
    ci = None
    if level is not None:
        level = require_level(level)
        n_resamples = require_positive_int(n_resamples, "n_resamples", minimum=2)
        rng = as_generator(random_state)
        width = len(a) * domain.size ** (2 if measurement == "ordinal" else 1)
        vals = []
        for size in chunk_sizes(n_resamples, width, elements=1 << 21):
            W = bootstrap_counts(len(a), size, rng)
            o, e, _ = _kappa_pi_batch(a, b, domain.size, W, measurement, domain, which)
            vals.append(_finish(name, o, e, if_undefined, warn=False))
        ci = _ci_from(np.concatenate(vals), level)
    return AgreementResult(
        coefficient=which, value=value_, measurement=measurement, observed_disagreement=float(obs[0]),
        expected_disagreement=float(exp[0]), n_units=len(a), n_values=2 * len(a), n_raters=2,
        percent_agreement=float(agree[0]), confidence_interval=ci,
        details={"values": domain.tolist(), "units_without_both_ratings": dropped},
    )


_KAPPA_PI_NOTES = """
    Only units rated by both raters are used (the count of the others is in
    ``details["units_without_both_ratings"]``). With the proportion :math:`p_{ck}` of
    units rated ``c`` by rater 1 and ``k`` by rater 2, marginals :math:`p_{c\\cdot}`,
    :math:`p_{\\cdot k}` and a difference function :math:`\\delta^2_{ck}` of the chosen
    measurement (as for alpha; nominal: :math:`[c \\ne k]`),
    :math:`D_o = \\sum p_{ck} \\delta^2_{ck}` and the coefficient is :math:`1 - D_o / D_e`.
"""


def cohens_kappa(data: object, measurement: str = "nominal", *, unit: str | None = None, rater: str | None = None,
                 value: str | None = None, if_undefined: str = "nan", level: float | None = 0.95,
                 n_resamples: int = 2000, random_state: object = None, confidence: object = _UNSET) -> AgreementResult:
    measurement, level = renamed_arguments(measurement, level, confidence)
    return _kappa_or_pi("kappa", data, measurement, unit, rater, value, if_undefined, level, n_resamples, random_state)


cohens_kappa.__doc__ = ("""Cohen's kappa for two raters (chance model: each rater's own marginal distribution).

    Parameters are as for :func:`krippendorff_alpha`; ``data`` must have two raters.

    Returns
    -------
    AgreementResult

    Notes
    -----
    Chance disagreement samples each rater's value independently from that rater's
    marginal (with replacement): :math:`D_e = \\sum_{c,k} p_{c\\cdot}\\, p_{\\cdot k}\\, \\delta^2_{ck}`.
    Nominal gives Cohen's (1960) kappa; ``"interval"`` on equally spaced codes gives
    the quadratically weighted kappa.
    """ + _KAPPA_PI_NOTES + """
    Examples
    --------
    >>> from mixeval.agreement import cohens_kappa
    >>> round(cohens_kappa([[1, 1], [0, 0], [1, 0], [0, 0]], level=None).value, 4)
    0.5
    """)


def scotts_pi(data: object, measurement: str = "nominal", *, unit: str | None = None, rater: str | None = None,
              value: str | None = None, if_undefined: str = "nan", level: float | None = 0.95,
              n_resamples: int = 2000, random_state: object = None, confidence: object = _UNSET) -> AgreementResult:
    measurement, level = renamed_arguments(measurement, level, confidence)
    return _kappa_or_pi("pi", data, measurement, unit, rater, value, if_undefined, level, n_resamples, random_state)


scotts_pi.__doc__ = ("""Scott's pi for two raters (chance model: the pooled marginal, drawn with replacement).

    Parameters are as for :func:`krippendorff_alpha`; ``data`` must have two raters.

    Returns
    -------
    AgreementResult

    Notes
    -----
    With the pooled marginal :math:`\\bar p_c = (p_{c\\cdot} + p_{\\cdot c}) / 2`,
    :math:`D_e = \\sum_{c,k} \\bar p_c \\bar p_k \\delta^2_{ck}`. Alpha differs only by
    drawing without replacement: for two raters without missing values,
    :math:`1 - \\alpha = \\frac{2N - 1}{2N} (1 - \\pi)`.
    """ + _KAPPA_PI_NOTES + """
    Examples
    --------
    >>> from mixeval.agreement import scotts_pi
    >>> round(scotts_pi([[1, 1], [0, 0], [1, 0], [0, 0]], level=None).value, 4)
    0.4667
    """)


def agreement(data: object, measurement: str = "nominal", *, unit: str | None = None, rater: str | None = None,
              value: str | None = None, if_undefined: str = "nan", level: float | None = 0.95,
              n_resamples: int = 2000, random_state: object = None, confidence: object = _UNSET) -> pd.DataFrame:
    """Alpha, kappa and pi side by side (kappa and pi only for exactly two raters).

    Returns
    -------
    pandas.DataFrame
        One row per coefficient: ``coefficient, value, lower, upper,
        observed_disagreement, expected_disagreement, percent_agreement, n_units``.

    Examples
    --------
    >>> from mixeval.agreement import agreement
    >>> agreement([[0, 0], [0, 0], [1, 1], [0, 1]], level=None)["coefficient"].tolist()
    ['alpha', 'kappa', 'pi']
    """
    measurement, level = renamed_arguments(measurement, level, confidence)
    wide = ratings_matrix(data, unit=unit, rater=rater, value=value)
    rng = as_generator(random_state)
    kw = dict(measurement=measurement, if_undefined=if_undefined, level=level, n_resamples=n_resamples)
    results = [krippendorff_alpha(wide, random_state=rng, **kw)]
    if wide.shape[1] == 2:
        results.append(cohens_kappa(wide, random_state=rng, **kw))
        results.append(scotts_pi(wide, random_state=rng, **kw))
    rows = []
    for r in results:
        ci = r.confidence_interval
        rows.append({"coefficient": r.coefficient, "value": r.value,
                     "lower": ci.lower if ci else np.nan, "upper": ci.upper if ci else np.nan,
                     "observed_disagreement": r.observed_disagreement,
                     "expected_disagreement": r.expected_disagreement,
                     "percent_agreement": r.percent_agreement, "n_units": r.n_units})
    return pd.DataFrame(rows)
