"""Pieces every bootstrap test shares: the alternative, the count of extreme resamples, the
percentile interval (here and in :mod:`mixeval.scale`'s Poisson bootstrap)."""

from __future__ import annotations

import numpy as np

from .._results import ConfidenceInterval
from .._validation import require_level
from ..errors import InputError

__all__ = ["ALTERNATIVES", "check_alternative", "count_extreme", "percentile_interval", "require_items_to_resample"]

ALTERNATIVES = ("two-sided", "greater", "less")


def check_alternative(alternative: object) -> str:
    """``alternative`` if it is ``"two-sided"``, ``"greater"`` or ``"less"``; else an error naming it.

    Examples
    --------
    >>> check_alternative("less")
    'less'
    >>> check_alternative("both")
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: `alternative` must be one of 'two-sided', 'greater', 'less'; got 'both'.
    """
    if alternative not in ALTERNATIVES:
        raise InputError(f"`alternative` must be one of {', '.join(map(repr, ALTERNATIVES))}; got {alternative!r}.")
    return str(alternative)


def count_extreme(null: np.ndarray, observed: float, alternative: str) -> int:
    """Count null values at least as extreme as ``observed`` (ties within rounding count).

    Examples
    --------
    >>> null = np.array([-2.0, -0.5, 0.5, 1.0, 3.0])
    >>> count_extreme(null, 1.0, "two-sided"), count_extreme(null, 1.0, "greater"), count_extreme(null, 1.0, "less")
    (3, 2, 4)
    """
    spread = float(np.max(np.abs(null))) if null.size else 0.0
    tol = 1e-9 * max(abs(observed), spread, np.finfo(float).tiny)
    if alternative == "two-sided":
        return int(np.count_nonzero(np.abs(null) >= abs(observed) - tol))
    if alternative == "greater":
        return int(np.count_nonzero(null >= observed - tol))
    return int(np.count_nonzero(null <= observed + tol))


def percentile_interval(distribution: np.ndarray, level: float = 0.95) -> ConfidenceInterval:
    """Percentile bootstrap interval: the ``(1-level)/2`` and ``(1+level)/2`` quantiles.

    Quantiles use numpy's default (linear interpolation between order statistics).

    Examples
    --------
    >>> import numpy as np
    >>> ci = percentile_interval(np.arange(101.0), 0.9)
    >>> round(ci.lower, 9), round(ci.upper, 9)
    (5.0, 95.0)
    """
    level = require_level(level)
    dist = np.asarray(distribution, dtype=float)
    lo, hi = np.quantile(dist, [(1 - level) / 2, (1 + level) / 2])
    return ConfidenceInterval(float(lo), float(hi), level, "percentile")


def require_items_to_resample(n_items: int, minimum: int = 2) -> None:
    """Raise unless there are ``minimum`` items: resampling one item gives the same resample every time."""
    if n_items < minimum:
        raise InputError(
            f"a bootstrap needs at least {minimum} items to resample; got {n_items} (every resample of a single "
            "item is that item, so the test and the interval would be meaningless)."
        )
