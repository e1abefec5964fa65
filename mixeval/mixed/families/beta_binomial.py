"""The beta-binomial family (glmmTMB's ``betabinomial``): k successes of n trials with overdispersion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from ...errors import InputError
from ._base import AVERAGED_REFUSAL, STUDY_METHODS, Family, Support
from ._special import tetragamma, trigamma

__all__ = ["BetaBinomial"]

_EPS = np.finfo(float).eps


@dataclass(frozen=True, eq=False, repr=False)
class BetaBinomial(Family):
    """glmmTMB's ``betabinomial()``: ``k ~ BetaBin(n, mu phi, (1 - mu) phi)``, ``g(mu) = eta``,
    ``Var(k) = n mu (1 - mu) (1 + (n - 1) / (phi + 1))`` (Morris 1997), e.g. pass@k: k correct of n samples per task.

    The response is the proportion ``k / n`` with ``weights=`` the trials ``n`` (R's ``cbind(successes,
    failures)``); the precision ``phi`` (glmmTMB's ``sigma()``; the binomial limit is ``phi -> inf``, the
    correlation of two trials of one row ``1 / (phi + 1)``) is estimated with the variance parameters.

    Notes
    -----
    ``log p(k) = log C(n, k) + lgamma(k + a) + lgamma(n - k + b) - lgamma(n + phi) - lgamma(a) - lgamma(b)
    + lgamma(phi)`` with ``a = mu phi``, ``b = (1 - mu) phi``; its derivatives in ``mu`` are differences of
    polygamma functions. The latent residual variance for variance shares is the link's (pi^2/3 logit, 1
    probit), as for a binomial model; the extra-binomial variation that ``phi`` describes is not in it.

    Examples
    --------
    >>> fam = BetaBinomial()
    >>> from scipy import stats
    >>> k, n, eta, phi = np.array([3.0, 0.0]), np.array([5.0, 4.0]), np.array([0.5, -1.0]), 4.0
    >>> mu = 1 / (1 + np.exp(-eta))
    >>> ref = stats.betabinom.logpmf(k, n, mu * phi, (1 - mu) * phi).sum()
    >>> bool(np.isclose(fam.loglik(k / n, eta, n, np.log([phi])), ref))
    True
    """

    name: ClassVar[str] = "beta_binomial"
    aliases: ClassVar[tuple[str, ...]] = ("betabinomial",)
    links: ClassVar[tuple[str, ...]] = ("logit", "probit")
    parameter_names: ClassVar[tuple[str, ...]] = ("dispersion",)
    parameter_kinds: ClassVar[tuple[str, ...]] = ("dispersion",)
    description: ClassVar[str] = "k successes of n trials with overdispersion, e.g. pass@k (glmmTMB's betabinomial)"
    latent_note: ClassVar[str] = (
        "Latent scale of a beta-binomial GLMM: 'Residual' is the distribution-specific variance of the link (pi^2/3 "
        "logit, 1 probit), as for a binomial model; the extra-binomial variation within a row (correlation "
        "1 / (phi + 1) between its trials) is not part of it.")
    support: ClassVar[Support] = Support(study_methods=frozenset(STUDY_METHODS) - {"glrt_averaged"},
                                         intervals=frozenset({"wald", "profile", "boot"}), power=True,
                                         aggregate_sources=False, weights="trials",
                                         scales=frozenset({"observed", "latent"}),
                                         reasons=(AVERAGED_REFUSAL,))
    response_label: ClassVar[str] = "prob"
    response_plural: ClassVar[str] = "probabilities"

    def check_response(self, y, weights, name):
        trials = np.asarray(weights, dtype=float)
        if np.any(trials < 0) or np.any(np.abs(trials - np.round(trials)) > 1e-8):
            raise InputError(f"the trials of the beta-binomial response {name!r} (weights=) must be whole numbers >= 0.")
        above = y > 1
        if above.any():
            raise InputError(f"the response {name!r} has {int(above.sum())} row(s) with more successes than trials "
                             f"(e.g. proportion {y[above][:3].tolist()}); give successes / trials with weights=trials, "
                             "or cbind(successes, failures).")
        if np.any(y < 0):
            raise InputError(f"the response {name!r} has negative successes; a beta-binomial response is k of n trials.")
        k = trials * y
        if np.any(np.abs(k - np.round(k)) > 1e-6):
            raise InputError(f"the response {name!r} times weights is not a whole number of successes; a beta-binomial "
                             "proportion needs weights = the number of trials of each row.")
        if not np.any(trials > 1):
            raise InputError(f"every row of {name!r} has a single trial: with one trial a beta-binomial response is a "
                             "binomial one (its dispersion is not identified). Use family='binomial', or give the "
                             "successes of n > 1 trials per row with weights=trials.")

    def initialize(self, y, weights):
        return (weights * y + 0.5) / (weights + 1)

    def start_parameters(self, y, weights, mu):
        """``log phi`` from the moments: ``sum[(y - mu)^2 - mu (1 - mu) / n] = rho sum mu (1 - mu)(n - 1) / n`` with
        ``rho = 1 / (phi + 1)``."""
        n = np.maximum(weights, 1.0)
        use = weights > 0
        excess = float(np.sum(((y - mu) ** 2 - mu * (1 - mu) / n)[use]))
        scale = float(np.sum((mu * (1 - mu) * (n - 1) / n)[use]))
        rho = np.clip(excess / scale if scale > 0 else 0.01, 1e-4, 0.9)
        return np.array([np.log(1.0 / rho - 1.0)])

    @staticmethod
    def _counts(y, weights):
        n = np.asarray(weights, dtype=float)
        return np.round(n * y), n

    def _terms(self, y, eta, weights, params, third=True):
        phi = float(np.exp(params[0]))
        derivs = self.link_function.derivatives(eta)
        mu = np.clip(derivs[0], _EPS, 1 - _EPS)
        k, n = self._counts(y, weights)
        a, b = mu * phi, (1 - mu) * phi
        ka, nb = k + a, n - k + b
        return phi, mu, derivs, k, n, a, b, ka, nb

    def loglik(self, y, eta, weights, params):
        phi, mu, _, k, n, a, b, ka, nb = self._terms(y, eta, weights, params)
        g = special.gammaln
        rows = (g(n + 1) - g(k + 1) - g(n - k + 1) + g(ka) + g(nb) - g(n + phi) - g(a) - g(b) + g(phi))
        return float(np.sum(rows))

    def _mu_terms(self, y, eta, weights, params, third=True):
        phi, mu, derivs, k, n, a, b, ka, nb = self._terms(y, eta, weights, params)
        d0 = special.digamma(ka) - special.digamma(nb) - special.digamma(a) + special.digamma(b)
        d1 = trigamma(ka) + trigamma(nb) - trigamma(a) - trigamma(b)
        d2 = tetragamma(ka) - tetragamma(nb) - tetragamma(a) + tetragamma(b) if third else None
        return phi, mu, derivs, (k, n, a, b, ka, nb), (phi * d0, phi * phi * d1, None if d2 is None else phi**3 * d2)

    def eta_derivatives(self, y, eta, weights, params, third=True):
        _, _, (_, m1, m2, m3), _, (l_mu, l_mu2, l_mu3) = self._mu_terms(y, eta, weights, params, third)
        l3 = l_mu3 * m1**3 + 3 * l_mu2 * m1 * m2 + l_mu * m3 if third else None
        return l_mu * m1, l_mu2 * m1 * m1 + l_mu * m2, l3

    def fisher_weights(self, eta, weights, params):
        """The quasi-likelihood weights ``n mu_eta^2 / (mu (1 - mu) (1 + (n - 1) / (phi + 1)))`` (positive)."""
        phi = float(np.exp(params[0]))
        mu, m1 = self.link_function.derivatives(eta)[:2]
        mu = np.clip(mu, _EPS, 1 - _EPS)
        n = np.asarray(weights, dtype=float)
        return n * m1 * m1 / (mu * (1 - mu) * (1 + (n - 1) / (phi + 1)))

    def parameter_derivatives(self, y, eta, weights, params):
        """Derivatives in ``log phi``."""
        phi, mu, (_, m1, m2, _), (k, n, a, b, ka, nb), (l_mu, l_mu2, _) = self._mu_terms(y, eta, weights, params)
        dg, t1, t2 = special.digamma, trigamma, tetragamma
        l_phi = (mu * dg(ka) + (1 - mu) * dg(nb) - dg(n + phi) - mu * dg(a) - (1 - mu) * dg(b) + dg(phi))
        l_mu_phi = l_mu / phi + phi * (mu * t1(ka) - (1 - mu) * t1(nb) - mu * t1(a) + (1 - mu) * t1(b))
        l_mu2_phi = 2 * l_mu2 / phi + phi * phi * (mu * t2(ka) + (1 - mu) * t2(nb) - mu * t2(a) - (1 - mu) * t2(b))
        d_mu, d_mu2 = phi * l_mu_phi, phi * l_mu2_phi
        return (phi * l_phi)[:, None], (d_mu * m1)[:, None], (d_mu2 * m1 * m1 + d_mu * m2)[:, None]

    def variance(self, mu, params=(), weights=1.0):
        """Variance of the proportion ``k / n``: ``mu (1 - mu) (1 + (n - 1) / (phi + 1)) / n``."""
        phi = float(np.exp(np.asarray(params, dtype=float)[0]))
        n = np.maximum(np.asarray(weights, dtype=float), 1.0)
        return mu * (1 - mu) * (1 + (n - 1) / (phi + 1)) / n

    def simulate(self, eta, weights, rng, params=()):
        """Successes ``~ Bin(n, p)``, ``p ~ Beta(mu phi, (1 - mu) phi)``, divided by the trials ``n``."""
        phi = float(np.exp(np.asarray(params, dtype=float)[0]))
        mu = np.clip(self.linkinv(np.asarray(eta, dtype=float)), _EPS, 1 - _EPS)
        trials = np.round(np.broadcast_to(weights, mu.shape)).astype(np.int64)
        p = rng.beta(mu * phi, (1 - mu) * phi)
        return rng.binomial(trials, p) / np.maximum(trials, 1)
