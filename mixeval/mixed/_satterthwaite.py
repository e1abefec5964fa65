"""Satterthwaite's moment match of a variance estimate to a scaled chi-square: the one formula behind every
Satterthwaite df of the package (lmer's, lmerTest's over (theta, sigma), the GLMM linearised model's, and
the upper-bound df of :mod:`mixeval.significance`)."""

from __future__ import annotations

import numpy as np

__all__ = ["satterthwaite_df"]


def satterthwaite_df(var: np.ndarray, g: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Satterthwaite's ``2 V^2 / (g' A g)`` for each row: ``inf`` where no parameter enters (``g' A g = 0``),
    NaN for ``V = 0``.

    Examples
    --------
    >>> satterthwaite_df(np.array([1.0, 1.0, 0.0]), np.array([[1.0], [0.0], [1.0]]), np.eye(1))
    array([ 2., inf, nan])
    """
    var = np.asarray(var, dtype=float)
    g = np.atleast_2d(np.asarray(g, dtype=float))
    quad = np.einsum("ij,jk,ik->i", g, np.atleast_2d(A), g)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((quad > 0) & (var > 0), 2.0 * var * var / quad, np.where(var > 0, np.inf, np.nan))
