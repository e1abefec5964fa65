"""The binomial family (``glmer``): 0/1 responses or successes out of trials, logit or probit link."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from ...errors import InputError
from ._base import STUDY_METHODS, ExponentialFamily, Support

__all__ = ["Binomial"]


def _xlogx(x):
    """``x log x`` with ``0 log 0 = 0`` (x >= 0)."""
    return x * np.log(np.where(x > 0, x, 1.0))


def _binomial_response(y: np.ndarray, weights: np.ndarray, name: str) -> None:
    """Validate a proportion ``y`` in [0, 1] out of ``weights`` trials (whole successes), naming the column."""
    bad = (y < 0) | (y > 1)
    if bad.any():
        raise InputError(
            f"the response {name!r} of a binomial model must be 0/1, logical or a proportion in [0, 1]; "
            f"{int(bad.sum())} value(s) lie outside (e.g. {y[bad][:3].tolist()}). For successes out of "
            "trials pass the proportion successes / trials with weights=trials (R's cbind(successes, failures))."
        )
    m = weights * y
    if np.any(np.abs(m - np.round(m)) > 1e-3):
        raise InputError(
            f"the response {name!r} times weights is not a whole number of successes; a binomial proportion "
            "needs weights = the number of trials of each row."
        )


@dataclass(frozen=True, eq=False, repr=False)
class Binomial(ExponentialFamily):
    """R's ``binomial(link = "logit" | "probit")``: ``w y ~ Bin(w, mu)`` (``w`` the trials, 1 for 0/1 scores).

    Examples
    --------
    >>> fam = Binomial("probit")
    >>> fam, fam.latent_variance
    (Family('binomial', link='probit'), 1.0)
    >>> round(fam.loglik(np.array([1.0, 0.0]), np.zeros(2), np.ones(2)), 6)  # 2 log(1/2)
    -1.386294
    """

    name: ClassVar[str] = "binomial"
    links: ClassVar[tuple[str, ...]] = ("logit", "probit")
    description: ClassVar[str] = "0/1 scores, or proportions with --weights trials"
    latent_note: ClassVar[str] = ("Latent scale of a binomial GLMM: 'Residual' is the distribution-specific variance "
                                  "of the link (pi^2/3 logit, 1 probit; Nakagawa & Schielzeth 2010).")
    support: ClassVar[Support] = Support(study_methods=frozenset(STUDY_METHODS),
                                         intervals=frozenset({"wald", "profile", "boot"}), power=True,
                                         aggregate_sources=True, quadrature=True, weights="trials",
                                         scales=frozenset({"observed", "latent"}))
    response_label: ClassVar[str] = "prob"
    response_plural: ClassVar[str] = "probabilities"

    def check_response(self, y, weights, name):
        _binomial_response(y, weights, name)

    def initialize(self, y, weights):
        return (weights * y + 0.5) / (weights + 1)

    def variance_derivatives(self, mu):
        mu = np.asarray(mu, dtype=float)
        return mu * (1 - mu), 1 - 2 * mu, np.full_like(mu, -2.0)

    def response_variance(self, eta, params=(), weights=1.0):
        """The variance of the proportion of ``weights`` trials: ``mu (1 - mu) / w``."""
        mu = self.linkinv(np.asarray(eta, dtype=float))
        return mu * (1 - mu) / np.asarray(weights, dtype=float)

    def dev_resid(self, y, mu, wt):
        """``2 w [y log(y / mu) + (1 - y) log((1 - y) / (1 - mu))]`` with ``0 log 0 = 0``."""
        return 2 * wt * (_xlogx(y) + _xlogx(1 - y) - y * np.log(mu) - (1 - y) * np.log1p(-mu))

    def aic(self, y, mu, wt):
        """``-2 sum log dbinom(round(m y), round(m), mu)`` over rows with ``m = wt > 0`` (R's ``binomial()$aic``)."""
        if not np.all(wt > 0):
            keep = wt > 0
            y, mu, wt = y[keep], mu[keep], wt[keep]
        m = np.round(wt)
        k = np.round(wt * y)
        value = k @ np.log(mu) + (m - k) @ np.log1p(-mu)
        if np.any(m != 1):
            value += float(np.sum(special.gammaln(m + 1) - special.gammaln(k + 1) - special.gammaln(m - k + 1)))
        return float(-2 * value)

    def dev_kernel(self, y, mu, wt):
        return float(-2 * ((wt * y) @ np.log(mu) + (wt * (1 - y)) @ np.log1p(-mu)))

    def simulate(self, eta, weights, rng, params=()):
        """Successes out of ``weights`` trials divided by the trials (0/1 for one trial)."""
        mu = self.linkinv(np.asarray(eta, dtype=float))
        trials = np.round(np.broadcast_to(weights, mu.shape)).astype(np.int64)
        return rng.binomial(trials, mu) / np.maximum(trials, 1)
