"""The ordered beta family (glmmTMB's ``ordbeta``, Kubinec 2023): proportions in [0, 1] with exact 0s and 1s."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from ...errors import FamilyWarning, InputError, caller_stacklevel
from ._base import AVERAGED_REFUSAL, STUDY_METHODS, Family, Support
from ._special import trigamma
from .beta import _beta_mu_terms

__all__ = ["OrderedBeta"]

_EPS = np.finfo(float).eps


@dataclass(frozen=True, eq=False, repr=False)
class OrderedBeta(Family):
    """glmmTMB's ``ordbeta()`` (Kubinec 2023): an ordered model of {0, (0, 1), 1} with a beta density in between.

    With ``s = expit(eta - c0)``, ``t = expit(eta - c1)`` (cutpoints ``c0 < c1`` on the logit scale) and
    ``mu = expit(eta)``: ``P(y = 0) = 1 - s``, ``P(y = 1) = t`` and, for ``0 < y < 1``, the density
    ``(s - t) Beta(y; mu phi, (1 - mu) phi)``. The precision ``phi`` (glmmTMB's ``sigma()``) and the two cutpoints
    (glmmTMB's ``psi``; its ``family_params`` prints their ``expit``) are estimated with the variance parameters.

    Notes
    -----
    ``log(s - t) = log expit(eta - c0) + log expit(c1 - eta) + log(1 - exp(c0 - c1))`` (stable for any ``eta``).
    ``E[y | eta] = t + (s - t) mu`` (:meth:`mean`). The latent residual variance for variance shares is pi^2/3, the
    variance of the logistic latent scale on which the cutpoints and the mean are ordered. Simulation draws the
    three parts with the model's probabilities ``(1 - s, s - t, t)``.

    Examples
    --------
    >>> fam = OrderedBeta()
    >>> y = np.array([0.0, 0.4, 1.0])
    >>> params = np.array([np.log(5.0), -2.0, 2.0])
    >>> p = np.exp([fam.loglik(y[i:i + 1], np.zeros(1), np.ones(1), params) for i in (0, 2)])
    >>> [round(float(v), 4) for v in p]  # 1 - expit(2), expit(-2)
    [0.1192, 0.1192]
    >>> round(fam.parameter_values(params)["dispersion"], 12)
    5.0
    """

    name: ClassVar[str] = "ordered_beta"
    aliases: ClassVar[tuple[str, ...]] = ("ordbeta",)
    links: ClassVar[tuple[str, ...]] = ("logit",)
    parameter_names: ClassVar[tuple[str, ...]] = ("dispersion", "cutpoint_lower", "cutpoint_upper")
    parameter_kinds: ClassVar[tuple[str, ...]] = ("dispersion", "cutpoint", "cutpoint")
    description: ClassVar[str] = "proportions in [0, 1] with exact 0s and 1s (glmmTMB's ordbeta)"
    latent_note: ClassVar[str] = (
        "Latent (logit) scale of an ordered beta GLMM: 'Residual' is pi^2/3, the variance of the logistic latent "
        "scale on which the mean and the two cutpoints lie; the shares are those of the latent proportion, not of "
        "the observed scores.")
    support: ClassVar[Support] = Support(study_methods=frozenset(STUDY_METHODS) - {"glrt_averaged"},
                                         intervals=frozenset({"wald", "profile", "boot"}), power=True,
                                         aggregate_sources=False, weights="prior",
                                         scales=frozenset({"observed", "latent"}),
                                         reasons=(AVERAGED_REFUSAL,))
    response_label: ClassVar[str] = "proportion"
    response_plural: ClassVar[str] = "proportions"
    mean_is_inverse_link: ClassVar[bool] = False

    def check_response(self, y, weights, name):
        outside = (y < 0) | (y > 1)
        if outside.any():
            raise InputError(f"the response {name!r} of an ordered beta model must lie in [0, 1]; {int(outside.sum())} "
                             f"value(s) do not (e.g. {y[outside][:3].tolist()}). Rescale scores on another range "
                             "[a, b] to (y - a) / (b - a).")
        middle = (y > 0) & (y < 1)
        if not middle.any():
            raise InputError(f"the response {name!r} has no value strictly between 0 and 1; 0/1 scores are a binomial "
                             "response (family='binomial').")
        for value, which in ((0.0, "lower"), (1.0, "upper")):
            if not np.any(y == value):
                warnings.warn(f"the response {name!r} has no exact {value:g}: the {which} cutpoint is not identified "
                              f"(its estimate runs to {'-' if value == 0 else '+'}infinity). family='beta' models "
                              "responses strictly inside (0, 1).", FamilyWarning, stacklevel=caller_stacklevel())

    def initialize(self, y, weights):
        n = max(y.size, 2)
        return (y * (n - 1) + 0.5) / n

    def start_parameters(self, y, weights, mu):
        """``log phi`` from the moments of the values inside (0, 1), the cutpoints from the shares of 0s and 1s at
        the mean linear predictor."""
        eta = float(np.average(special.logit(mu), weights=weights))
        total = float(np.sum(weights))
        p0 = np.clip(float(np.sum(weights[y == 0])) / total, 0.5 / total, 0.45)
        p1 = np.clip(float(np.sum(weights[y == 1])) / total, 0.5 / total, 0.45)
        mid = (y > 0) & (y < 1)
        resid = float(np.average((y[mid] - mu[mid]) ** 2, weights=weights[mid]))
        spread = float(np.average(mu[mid] * (1 - mu[mid]), weights=weights[mid]))
        phi = spread / resid - 1 if resid > 0 else 100.0
        return np.array([np.log(np.clip(phi, 0.5, 1e4)), eta + special.logit(p0), eta - special.logit(p1)])

    def valid_parameters(self, params):
        """Finite parameters with ordered cutpoints ``c0 < c1``."""
        params = np.asarray(params, dtype=float)
        return bool(np.all(np.isfinite(params)) and params[1] < params[2])

    @staticmethod
    def _split(params):
        return float(np.exp(params[0])), float(params[1]), float(params[2])

    def loglik(self, y, eta, weights, params):
        phi, c0, c1 = self._split(params)
        if not c0 < c1:
            return -np.inf
        out = np.empty_like(eta, dtype=float)
        zero, one = y == 0, y == 1
        mid = ~(zero | one)
        out[zero] = special.log_expit(c0 - eta[zero])
        out[one] = special.log_expit(eta[one] - c1)
        e = eta[mid]
        mu = np.clip(special.expit(e), _EPS, 1 - _EPS)
        out[mid] = (special.log_expit(e - c0) + special.log_expit(c1 - e) + np.log(-np.expm1(c0 - c1))
                    + _beta_mu_terms(y[mid], mu, phi, order=0)["l"])
        return float(np.sum(weights * out))

    def _rows(self, y, eta, params, third=True):
        """Every row's derivatives in ``eta`` and in ``(log phi, c0, c1)`` (without ``third``: the first two in
        ``eta``)."""
        phi, c0, c1 = self._split(params)
        s, t = special.expit(eta - c0), special.expit(eta - c1)
        zero, one = y == 0, y == 1
        mid = ~(zero | one)
        qs, qt = s * (1 - s), t * (1 - t)
        n = eta.size
        l1 = np.where(zero, -s, np.where(one, 1 - t, 1 - s - t))
        l2 = np.where(zero, -qs, np.where(one, -qt, -qs - qt))
        l3 = np.where(zero, -qs * (1 - 2 * s), np.where(one, -qt * (1 - 2 * t), -qs * (1 - 2 * s) - qt * (1 - 2 * t)))
        gap = 1.0 / np.expm1(c1 - c0)
        lp = np.zeros((n, 3))
        l1p = np.zeros((n, 3))
        l2p = np.zeros((n, 3))
        lp[:, 1] = np.where(zero, s, np.where(one, 0.0, -(1 - s) - gap))
        lp[:, 2] = np.where(zero, 0.0, np.where(one, -(1 - t), t + gap))
        l1p[:, 1] = np.where(one, 0.0, qs)
        l1p[:, 2] = np.where(zero, 0.0, qt)
        l2p[:, 1] = np.where(one, 0.0, qs * (1 - 2 * s))
        l2p[:, 2] = np.where(zero, 0.0, qt * (1 - 2 * t))
        if mid.any():
            mu = np.clip(special.expit(eta[mid]), _EPS, 1 - _EPS)
            m1 = mu * (1 - mu)
            m2, m3 = m1 * (1 - 2 * mu), m1 * (1 - 6 * m1)
            b = _beta_mu_terms(y[mid], mu, phi, order=3 if third else 2)
            l1[mid] += b["l_mu"] * m1
            l2[mid] += b["l_mu2"] * m1 * m1 + b["l_mu"] * m2
            if not third:
                return (l1, l2, None), None
            l3[mid] += b["l_mu3"] * m1**3 + 3 * b["l_mu2"] * m1 * m2 + b["l_mu"] * m3
            d_mu, d_mu2 = phi * b["l_mu_phi"], phi * b["l_mu2_phi"]
            lp[mid, 0] = phi * b["l_phi"]
            l1p[mid, 0] = d_mu * m1
            l2p[mid, 0] = d_mu2 * m1 * m1 + d_mu * m2
        return (l1, l2, l3), (lp, l1p, l2p)

    def eta_derivatives(self, y, eta, weights, params, third=True):
        l1, l2, l3 = self._rows(y, eta, params, third)[0]
        return weights * l1, weights * l2, (weights * l3 if third else None)

    def parameter_derivatives(self, y, eta, weights, params):
        lp, l1p, l2p = self._rows(y, eta, params)[1]
        w = np.asarray(weights, dtype=float)[:, None] if np.ndim(weights) else weights
        return w * lp, w * l1p, w * l2p

    def fisher_weights(self, eta, weights, params):
        phi, c0, c1 = self._split(params)
        s, t = special.expit(eta - c0), special.expit(eta - c1)
        mu = np.clip(special.expit(eta), _EPS, 1 - _EPS)
        m1 = mu * (1 - mu)
        beta_info = phi * phi * (trigamma(mu * phi) + trigamma((1 - mu) * phi)) * m1 * m1
        return weights * (s * (1 - s) + t * (1 - t) + (s - t) * beta_info)

    def mean(self, eta, params=()):
        """``E[y | eta] = P(y = 1) + P(0 < y < 1) mu = t + (s - t) mu``."""
        phi, c0, c1 = self._split(np.asarray(params, dtype=float))
        eta = np.asarray(eta, dtype=float)
        s, t = special.expit(eta - c0), special.expit(eta - c1)
        return t + (s - t) * special.expit(eta)

    def mean_derivatives(self, eta, params=()):
        """:meth:`mean`, its first two derivatives in ``eta`` and its gradient in ``(log phi, c0, c1)``.

        Notes
        -----
        With ``x' = x (1 - x)``, ``x'' = x' (1 - 2 x)`` for ``x`` in ``s, t, mu``: ``E' = t' + (s' - t') mu + (s - t)
        mu'``, ``E'' = t'' + (s'' - t'') mu + 2 (s' - t') mu' + (s - t) mu''``, ``dE / dc0 = -s' mu``,
        ``dE / dc1 = -t' (1 - mu)``; ``phi`` moves only the spread of the beta part.

        Examples
        --------
        >>> fam = OrderedBeta()
        >>> par = np.array([np.log(5.0), -1.0, 1.5])
        >>> m, d1, _, dp = fam.mean_derivatives(np.array([0.3]), par)
        >>> h = 1e-6
        >>> bool(np.isclose(d1[0], (fam.mean(np.array([0.3 + h]), par) - fam.mean(np.array([0.3 - h]), par))[0] / (2 * h)))
        True
        """
        phi, c0, c1 = self._split(np.asarray(params, dtype=float))
        eta = np.asarray(eta, dtype=float)
        s, t, mu = special.expit(eta - c0), special.expit(eta - c1), special.expit(eta)
        s1, t1, m1 = s * (1 - s), t * (1 - t), mu * (1 - mu)
        s2, t2, m2 = s1 * (1 - 2 * s), t1 * (1 - 2 * t), m1 * (1 - 2 * mu)
        mean = t + (s - t) * mu
        d1 = t1 + (s1 - t1) * mu + (s - t) * m1
        d2 = t2 + (s2 - t2) * mu + 2 * (s1 - t1) * m1 + (s - t) * m2
        return mean, d1, d2, np.stack([np.zeros_like(eta), -s1 * mu, -t1 * (1 - mu)], axis=-1)

    def variance(self, mu, params=(), weights=1.0):
        """``Var(y | eta)`` at ``mu = expit(eta)``: ``E[y^2] - E[y]^2`` with ``E[y^2] = t + (s - t)(mu (1 - mu) /
        (1 + phi) + mu^2)``."""
        phi, c0, c1 = self._split(np.asarray(params, dtype=float))
        eta = special.logit(mu)
        s, t = special.expit(eta - c0), special.expit(eta - c1)
        first = t + (s - t) * mu
        second = t + (s - t) * (mu * (1 - mu) / (1 + phi) + mu * mu)
        return second - first * first

    def simulate(self, eta, weights, rng, params=()):
        phi, c0, c1 = self._split(np.asarray(params, dtype=float))
        eta = np.asarray(eta, dtype=float)
        s, t = special.expit(eta - c0), special.expit(eta - c1)
        mu = np.clip(special.expit(eta), _EPS, 1 - _EPS)
        u = rng.random(eta.shape)
        middle = rng.beta(mu * phi, (1 - mu) * phi)
        return np.where(u < 1 - s, 0.0, np.where(u < 1 - t, middle, 1.0))
