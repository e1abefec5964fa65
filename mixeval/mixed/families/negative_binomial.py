"""The negative binomial family (glmmTMB's ``nbinom2``): overdispersed counts, ``Var = mu + mu^2 / theta``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from ._base import AVERAGED_REFUSAL, STUDY_METHODS, Family, Support
from .poisson import _count_response

__all__ = ["NegativeBinomial"]


@dataclass(frozen=True, eq=False, repr=False)
class NegativeBinomial(Family):
    """glmmTMB's ``nbinom2()``: ``y ~ NB(mu, theta)`` with ``log mu = eta`` and ``Var(y) = mu + mu^2 / theta``.

    The dispersion ``theta`` (glmmTMB's ``sigma()``; the Poisson limit is ``theta -> inf``) is estimated with the
    variance parameters, its logarithm the optimiser's coordinate (glmmTMB's ``betadisp``).

    Notes
    -----
    ``log p(y) = lgamma(y + theta) - lgamma(theta) - lgamma(y + 1) + theta log(theta / (theta + mu))
    + y log(mu / (theta + mu))``, computed from ``p = mu / (theta + mu) = expit(eta - log theta)`` (finite for any
    ``eta``). The derivatives in ``eta`` are
    ``y - (y + theta) p``, ``-(y + theta) p (1 - p)`` and ``-(y + theta) p (1 - p)(1 - 2 p)``; the expected
    information is ``mu theta / (mu + theta)``. The latent residual variance is the lognormal approximation
    ``log(1 + 1/lambda + 1/theta)`` (Nakagawa, Johnson & Schielzeth 2017, Table 2), ``lambda`` the mean count.

    Examples
    --------
    >>> fam = NegativeBinomial()
    >>> y, eta = np.array([0.0, 3.0]), np.log([1.0, 2.0])
    >>> from scipy import stats
    >>> ref = stats.nbinom.logpmf(y, 2.0, 2.0 / (2.0 + np.exp(eta))).sum()   # size theta = 2
    >>> bool(np.isclose(fam.loglik(y, eta, np.ones(2), np.log([2.0])), ref))
    True
    >>> fam.dispersion(np.log([2.0]))
    2.0
    """

    name: ClassVar[str] = "negative_binomial"
    aliases: ClassVar[tuple[str, ...]] = ("nbinom2", "negbin", "nb")
    links: ClassVar[tuple[str, ...]] = ("log",)
    parameter_names: ClassVar[tuple[str, ...]] = ("dispersion",)
    parameter_kinds: ClassVar[tuple[str, ...]] = ("dispersion",)
    description: ClassVar[str] = "overdispersed counts (glmmTMB's nbinom2)"
    latent_note: ClassVar[str] = (
        "Latent (log) scale of a negative binomial GLMM: 'Residual' is the lognormal approximation "
        "log(1 + 1/lambda + 1/theta) of the distribution-specific variance, lambda the mean count with the random "
        "effects integrated out, theta the dispersion (Nakagawa, Johnson & Schielzeth 2017).")
    support: ClassVar[Support] = Support(study_methods=frozenset(STUDY_METHODS) - {"glrt_averaged"},
                                         intervals=frozenset({"wald", "profile", "boot"}), power=True,
                                         aggregate_sources=False, weights="prior",
                                         scales=frozenset({"observed", "latent"}),
                                         reasons=(AVERAGED_REFUSAL,))
    response_label: ClassVar[str] = "rate"
    response_plural: ClassVar[str] = "rates"

    def check_response(self, y, weights, name):
        _count_response(y, name, "negative binomial")

    def start_parameters(self, y, weights, mu):
        """``log theta`` by the moments of the Pearson residuals: ``sum (y - mu)^2 = sum mu + sum mu^2 / theta``
        (a large theta when the counts are not overdispersed)."""
        excess = float(np.sum(weights * ((y - mu) ** 2 - mu)))
        curvature = float(np.sum(weights * mu**2))
        theta = curvature / excess if excess > 0 else 100.0
        return np.array([np.log(np.clip(theta, 0.01, 1e4))])

    @staticmethod
    def _parts(eta, params):
        """``theta``, ``z = eta - log theta`` and ``p = mu / (theta + mu) = expit(z)`` (finite for any ``eta``)."""
        theta = float(np.exp(params[0]))
        z = np.asarray(eta, dtype=float) - params[0]
        return theta, z, special.expit(z)

    def loglik(self, y, eta, weights, params):
        theta, z, p = self._parts(eta, params)
        rows = (special.gammaln(y + theta) - special.gammaln(theta) - special.gammaln(y + 1)
                - theta * np.logaddexp(0.0, z) + y * special.log_expit(z))
        return float(np.sum(weights * rows))

    def eta_derivatives(self, y, eta, weights, params, third=True):
        theta, z, p = self._parts(eta, params)
        yt = weights * (y + theta)
        q = p * (1 - p)
        return weights * y - yt * p, -yt * q, (-yt * q * (1 - 2 * p) if third else None)

    def fisher_weights(self, eta, weights, params):
        theta, z, p = self._parts(eta, params)
        return weights * theta * p

    def parameter_derivatives(self, y, eta, weights, params):
        """Derivatives in ``log theta``: ``theta d/d theta`` of the row terms."""
        theta, z, p = self._parts(eta, params)
        q = p * (1 - p)
        yt = y + theta
        # theta (mu - y) / (theta + mu) = theta p - y (1 - p)
        d_l = theta * (special.digamma(yt) - special.digamma(theta) - np.logaddexp(0.0, z)) + theta * p - y * (1 - p)
        d_l1 = -theta * p + yt * q
        d_l2 = -theta * q + yt * (1 - 2 * p) * q
        return (weights * d_l)[:, None], (weights * d_l1)[:, None], (weights * d_l2)[:, None]

    def variance(self, mu, params=(), weights=1.0):
        theta = float(np.exp(np.asarray(params, dtype=float)[0]))
        return mu + mu**2 / theta

    def simulate(self, eta, weights, rng, params=()):
        """Counts ``~ NB(mu, theta)`` (numpy's failures before ``theta`` successes with probability
        ``theta / (theta + mu)``)."""
        theta = float(np.exp(np.asarray(params, dtype=float)[0]))
        mu = np.exp(np.asarray(eta, dtype=float))
        return rng.negative_binomial(theta, theta / (theta + mu)).astype(float)

    def latent_residual_variance(self, eta, re_variance, params=()):
        """``log(1 + 1/lambda + 1/theta)``, ``lambda = mean(exp(eta)) exp(re_variance / 2)``."""
        theta = float(np.exp(np.asarray(params, dtype=float)[0]))
        lam = float(np.mean(np.exp(eta))) * float(np.exp(0.5 * re_variance))
        return float(np.log1p(1.0 / lam + 1.0 / theta))
