"""The Gaussian family (``lmer``): identity link, the residual variance estimated by the profiled deviance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ._base import STUDY_METHODS, ExponentialFamily, Support

__all__ = ["Gaussian"]


@dataclass(frozen=True, eq=False, repr=False)
class Gaussian(ExponentialFamily):
    """R's ``gaussian()``: ``y = eta + e``, ``e ~ N(0, sigma^2 / w)``; fitted by :func:`mixeval.lmer` (REML or ML).

    Examples
    --------
    >>> fam = Gaussian()
    >>> fam, fam.estimates_scale, fam.engine
    (Family('gaussian', link='identity'), True, 'lmer')
    """

    name: ClassVar[str] = "gaussian"
    links: ClassVar[tuple[str, ...]] = ("identity",)
    engine: ClassVar[str] = "lmer"
    estimates_scale: ClassVar[bool] = True
    description: ClassVar[str] = "continuous scores (lmer, the default)"
    latent_note: ClassVar[str] = ("Response scale of a linear mixed model: 'Residual' is the estimated residual "
                                  "variance sigma^2.")
    support: ClassVar[Support] = Support(study_methods=frozenset(STUDY_METHODS),
                                         intervals=frozenset({"wald", "profile", "boot"}), power=True,
                                         aggregate_sources=True, weights="precision", scales=frozenset({"observed"}))

    def variance_derivatives(self, mu):
        mu = np.asarray(mu, dtype=float)
        return np.ones_like(mu), np.zeros_like(mu), np.zeros_like(mu)

    def dev_resid(self, y, mu, wt):
        return wt * np.square(y - mu)

    def aic(self, y, mu, wt):
        """R's ``gaussian()$aic`` at the ML dispersion ``sum(w (y - mu)^2) / n``."""
        n = y.size
        dev = float(np.sum(wt * np.square(y - mu)))
        return float(n * (np.log(2 * np.pi * dev / n) + 1) + 2 - np.sum(np.log(np.where(wt > 0, wt, 1.0))))

    def dev_kernel(self, y, mu, wt):
        return float(np.sum(wt * np.square(y - mu)))

    def dispersion(self, params):
        """glmmTMB's ``sigma()`` of a Gaussian fit is the residual SD (``params``: its logarithm), NaN without it."""
        params = np.asarray(params, dtype=float)
        return float(np.exp(params[0])) if params.size else float("nan")

    def simulate(self, eta, weights, rng, params=()):
        """``eta + N(0, sigma^2 / w)`` with ``sigma = exp(params[0])`` (lmer's residual SD; 1 without it)."""
        eta = np.asarray(eta, dtype=float)
        params = np.asarray(params, dtype=float)
        sigma = float(np.exp(params[0])) if params.size else 1.0
        return eta + rng.normal(0.0, sigma, size=eta.shape) / np.sqrt(np.broadcast_to(weights, eta.shape))

    @property
    def latent_variance(self) -> float:
        """NaN: a Gaussian model's residual variance is a parameter (``fit.sigma2``)."""
        return float("nan")

    def latent_residual_variance(self, eta, re_variance, params=()):
        return float("nan")
