"""The beta family (glmmTMB's ``beta_family``): proportions strictly inside (0, 1), mean ``mu``, precision ``phi``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from ...errors import InputError
from ._base import AVERAGED_REFUSAL, STUDY_METHODS, Family, Support
from ._special import tetragamma, trigamma

__all__ = ["Beta"]

_EPS = np.finfo(float).eps


def _squeeze(mu: np.ndarray) -> np.ndarray:
    return np.clip(mu, _EPS, 1 - _EPS)


def _beta_mu_terms(y: np.ndarray, mu: np.ndarray, phi: float, *, order: int = 3):
    """The beta log-density ``log f(y; mu phi, (1 - mu) phi)`` of every row (``l``) and, up to ``order``, its
    derivatives in ``mu`` (``l_mu``, ``l_mu2``; with ``order=3`` ``l_mu3``) and in ``phi`` (``l_phi``, ``l_mu_phi``,
    ``l_mu2_phi``).

    Notes
    -----
    With ``a = mu phi``, ``b = (1 - mu) phi``, ``y* = log(y / (1 - y))`` and ``mu* = psi(a) - psi(b)``
    (Ferrari & Cribari-Neto 2004): ``l_mu = phi (y* - mu*)``, ``l_mu_mu = -phi^2 (psi'(a) + psi'(b))``,
    ``l_mu_mu_mu = -phi^3 (psi''(a) - psi''(b))``; ``l_phi = psi(phi) - mu psi(a) - (1 - mu) psi(b) + mu log y
    + (1 - mu) log(1 - y)``, ``l_mu_phi = y* - mu* - phi (mu psi'(a) - (1 - mu) psi'(b))``,
    ``l_mu_mu_phi = -2 phi (psi'(a) + psi'(b)) - phi^2 (mu psi''(a) + (1 - mu) psi''(b))``.
    """
    a, b = mu * phi, (1 - mu) * phi
    log_y, log_1y = np.log(y), np.log1p(-y)
    out = {"l": special.gammaln(phi) - special.gammaln(a) - special.gammaln(b) + (a - 1) * log_y + (b - 1) * log_1y}
    if order < 1:
        return out
    dev = (log_y - log_1y) - (special.digamma(a) - special.digamma(b))
    t1a, t1b = trigamma(a), trigamma(b)
    l_mu = phi * dev
    l_mu2 = -phi * phi * (t1a + t1b)
    out.update(l_mu=l_mu, l_mu2=l_mu2, trigamma=t1a + t1b)
    if order >= 3:
        t2a, t2b = tetragamma(a), tetragamma(b)
        out["l_mu3"] = -phi**3 * (t2a - t2b)
        out["l_phi"] = (special.digamma(phi) - mu * special.digamma(a) - (1 - mu) * special.digamma(b)
                        + mu * log_y + (1 - mu) * log_1y)
        out["l_mu_phi"] = dev - phi * (mu * t1a - (1 - mu) * t1b)
        out["l_mu2_phi"] = -2 * phi * (t1a + t1b) - phi * phi * (mu * t2a + (1 - mu) * t2b)
    return out


@dataclass(frozen=True, eq=False, repr=False)
class Beta(Family):
    """glmmTMB's ``beta_family()``: ``y ~ Beta(mu phi, (1 - mu) phi)``, ``g(mu) = eta``, ``Var(y) = mu (1 - mu) / (1 + phi)``
    (Ferrari & Cribari-Neto 2004); responses strictly inside (0, 1).

    The precision ``phi`` (glmmTMB's ``sigma()``) is estimated with the variance parameters, its logarithm the
    optimiser's coordinate.

    Notes
    -----
    The latent residual variance for variance shares is the distribution-specific variance of the link (pi^2/3
    for logit, 1 for probit), as for a binomial model: shares of the latent proportion's variation.

    Examples
    --------
    >>> fam = Beta()
    >>> from scipy import stats
    >>> y, eta, phi = np.array([0.2, 0.7]), np.array([0.0, 1.0]), 5.0
    >>> mu = 1 / (1 + np.exp(-eta))
    >>> ref = stats.beta.logpdf(y, mu * phi, (1 - mu) * phi).sum()
    >>> bool(np.isclose(fam.loglik(y, eta, np.ones(2), np.log([phi])), ref))
    True
    """

    name: ClassVar[str] = "beta"
    aliases: ClassVar[tuple[str, ...]] = ("beta_family",)
    links: ClassVar[tuple[str, ...]] = ("logit", "probit")
    parameter_names: ClassVar[tuple[str, ...]] = ("dispersion",)
    parameter_kinds: ClassVar[tuple[str, ...]] = ("dispersion",)
    description: ClassVar[str] = "proportions strictly inside (0, 1) (glmmTMB's beta_family)"
    latent_note: ClassVar[str] = (
        "Latent scale of a beta GLMM: 'Residual' is the distribution-specific variance of the link (pi^2/3 logit, "
        "1 probit), as for a binomial model; the shares are those of the latent mean proportion, not of the observed "
        "scores.")
    support: ClassVar[Support] = Support(study_methods=frozenset(STUDY_METHODS) - {"glrt_averaged"},
                                         intervals=frozenset({"wald", "profile", "boot"}), power=True,
                                         aggregate_sources=False, weights="prior",
                                         scales=frozenset({"observed", "latent"}),
                                         reasons=(AVERAGED_REFUSAL,))
    response_label: ClassVar[str] = "proportion"
    response_plural: ClassVar[str] = "proportions"

    def check_response(self, y, weights, name):
        outside = (y <= 0) | (y >= 1)
        if outside.any():
            edge = int(np.sum((y == 0) | (y == 1)))
            beyond = int(np.sum((y < 0) | (y > 1)))
            hint = ("; exact 0s and 1s (e.g. an F1 of 0 or a perfect ROUGE) need family='ordered_beta' (Kubinec 2023), "
                    "which models them with two cutpoints" if edge else "")
            scale = ("; rescale scores on another range [a, b] to (y - a) / (b - a)" if beyond else "")
            raise InputError(f"the response {name!r} of a beta model must lie strictly between 0 and 1; "
                             f"{int(outside.sum())} value(s) do not (e.g. {y[outside][:3].tolist()}){hint}{scale}.")

    def initialize(self, y, weights):
        return np.asarray(y, dtype=float)

    def start_parameters(self, y, weights, mu):
        """``log phi`` from the moments: ``phi = mean(mu (1 - mu)) / mean((y - mu)^2) - 1``."""
        resid = float(np.average((y - mu) ** 2, weights=weights))
        spread = float(np.average(mu * (1 - mu), weights=weights))
        phi = spread / resid - 1 if resid > 0 else 100.0
        return np.array([np.log(np.clip(phi, 0.5, 1e4))])

    def _terms(self, y, eta, params, order=3):
        phi = float(np.exp(params[0]))
        derivs = self.link_function.derivatives(eta)
        return phi, _squeeze(derivs[0]), derivs, _beta_mu_terms(y, _squeeze(derivs[0]), phi, order=order)

    def loglik(self, y, eta, weights, params):
        phi, mu, _, t = self._terms(y, eta, params, order=0)
        return float(np.sum(weights * t["l"]))

    def eta_derivatives(self, y, eta, weights, params, third=True):
        phi, mu, (_, m1, m2, m3), t = self._terms(y, eta, params, order=3 if third else 2)
        l_mu, l_mu2 = t["l_mu"], t["l_mu2"]
        l3 = weights * (t["l_mu3"] * m1**3 + 3 * l_mu2 * m1 * m2 + l_mu * m3) if third else None
        return weights * l_mu * m1, weights * (l_mu2 * m1 * m1 + l_mu * m2), l3

    def fisher_weights(self, eta, weights, params):
        phi = float(np.exp(params[0]))
        mu, m1 = self.link_function.derivatives(eta)[:2]
        mu = _squeeze(mu)
        return weights * phi * phi * (trigamma(mu * phi) + trigamma((1 - mu) * phi)) * m1 * m1

    def parameter_derivatives(self, y, eta, weights, params):
        phi, mu, (_, m1, m2, _), t = self._terms(y, eta, params)
        d_mu, d_mu2 = phi * t["l_mu_phi"], phi * t["l_mu2_phi"]
        return ((weights * phi * t["l_phi"])[:, None], (weights * d_mu * m1)[:, None],
                (weights * (d_mu2 * m1 * m1 + d_mu * m2))[:, None])

    def variance(self, mu, params=(), weights=1.0):
        phi = float(np.exp(np.asarray(params, dtype=float)[0]))
        return mu * (1 - mu) / (1 + phi)

    def simulate(self, eta, weights, rng, params=()):
        phi = float(np.exp(np.asarray(params, dtype=float)[0]))
        mu = _squeeze(self.linkinv(np.asarray(eta, dtype=float)))
        return rng.beta(mu * phi, (1 - mu) * phi)
