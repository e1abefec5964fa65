"""The trigamma and tetragamma functions for arrays (``scipy.special.polygamma`` evaluates a Hurwitz zeta series
per element, which dominates a beta-type family's Laplace fit).

Upward recurrence by ten steps (``x + 10 >= 10``) (``psi_1(x) = psi_1(x + 1) + 1 / x^2``, ``psi_2(x) = psi_2(x + 1) - 2 / x^3``), then
the asymptotic series (Abramowitz & Stegun 6.4.12-13) to ``x^-11``: relative error below 1e-10 for ``x > 0`` (against scipy).
"""

from __future__ import annotations

import numpy as np

__all__ = ["tetragamma", "trigamma"]

_SHIFT = 10.0


def _shifted(x: np.ndarray, power: int) -> tuple[np.ndarray, np.ndarray]:
    """``x + 10`` and ``sum_{j < 10} (x + j)^-power`` (the recurrence applied ten times to every element: no
    branches; for ``x > 0`` the series then starts at ``x + 10 >= 10``)."""
    x = np.asarray(x, dtype=float)
    acc = np.zeros_like(x)
    r = np.empty_like(x)
    for j in range(int(_SHIFT)):
        np.add(x, float(j), out=r)
        np.reciprocal(r, out=r)
        acc += r * r if power == 2 else r * r * r
    return x + _SHIFT, acc


def trigamma(x: np.ndarray) -> np.ndarray:
    """``psi_1(x) = d^2 log Gamma(x) / dx^2`` for ``x > 0``.

    Examples
    --------
    >>> from scipy import special
    >>> x = np.array([1e-3, 0.5, 3.0, 40.0, 1e6])
    >>> bool(np.allclose(trigamma(x), special.polygamma(1, x), rtol=1e-10, atol=0))
    True
    """
    z, acc = _shifted(x, 2)
    r = 1.0 / z
    r2 = r * r
    series = r + r2 / 2 + r * r2 * (1 / 6 - r2 * (1 / 30 - r2 * (1 / 42 - r2 * (1 / 30 - r2 * 5 / 66))))
    return acc + series


def tetragamma(x: np.ndarray) -> np.ndarray:
    """``psi_2(x) = d^3 log Gamma(x) / dx^3`` for ``x > 0``.

    Examples
    --------
    >>> from scipy import special
    >>> x = np.array([1e-3, 0.5, 3.0, 40.0, 1e6])
    >>> bool(np.allclose(tetragamma(x), special.polygamma(2, x), rtol=1e-10, atol=0))
    True
    """
    z, acc = _shifted(x, 3)
    r = 1.0 / z
    r2 = r * r
    series = -r2 - r * r2 - r2 * r2 * (1 / 2 - r2 * (1 / 6 - r2 * (1 / 6 - r2 * (3 / 10 - r2 * 5 / 6))))
    return -2.0 * acc + series
