"""Marginal (population-averaged) response-scale means of a GLMM: accuracy averaged over items and seeds.

``g^{-1}(l' beta)`` -- what :func:`~mixeval.significance.emmeans_response` reports by default, as emmeans'
``type = "response"`` -- is the accuracy of a *typical* item and seed (random effects at 0). An evaluation
reports the mean accuracy over the items and seeds, which for a non-linear link is

    mu_marg = E_b[g^{-1}(l' beta + b)],   b ~ N(0, s2),   s2 = sum_j sigma_j^2,

``s2`` the sum of the random-intercept variances (every component varies across the items, seeds,
templates averaged over). Closed forms: ``Phi(eta / sqrt(1 + s2))`` (probit), ``exp(eta + s2 / 2)`` (log).
For the logit link the integral is the trapezoidal rule in the standardised random effect ``z = b / sqrt(s2)``
over ``[-9, 9]`` with step ``min(0.1, pi / (12 sqrt(s2)))``: the integrand is analytic in a strip of half-width
``pi / sqrt(s2)`` (the poles of the logistic), so the rule converges geometrically, error
``~exp(-2 pi^2 / (h sqrt(s2)))`` plus the normal tail beyond 9 standard deviations, both below double
precision; the agreement with adaptive quadrature is tested. Gauss-Hermite quadrature converges slowly for
large ``s2`` because of those poles.

Its standard error is the delta method in the fixed effects and the covariance parameters jointly,
``grad' C grad`` with ``C`` the fit's asymptotic covariance of ``(theta, beta)`` (``fit.cov_params``, twice the
inverse Hessian of the deviance), using ``d mu_marg / d eta = E[mu_eta(eta + b)]`` and
``d mu_marg / d s2 = E[g^{-1}''(eta + b)] / 2`` (the heat equation) and ``s2 = sum_j theta_j^2``. The interval
is the z interval on the link scale of ``mu_marg`` back-transformed (it stays inside (0, 1)).

emmeans' ``bias.adjust = TRUE, sigma = sqrt(s2)`` approximates the same quantity to second order,
``g^{-1}(eta) + s2 g^{-1}''(eta) / 2``; it is close for small ``s2`` and drifts away as ``s2`` grows
(``tests/significance/test_glmer_emmeans_parity.py`` compares both with R).
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from ..errors import InputError

__all__ = ["marginal_inverse_link", "marginal_moments", "intercept_variance"]

#: Half-width of the integration range in standard deviations of the random effect.
Z_RANGE = 9.0


def _second_derivative(link: str, eta: np.ndarray) -> np.ndarray:
    if link == "logit":
        mu = special.expit(eta)
        return mu * (1 - mu) * (1 - 2 * mu)
    if link == "probit":
        return -eta * stats.norm.pdf(eta)
    return np.exp(eta)


def _first_derivative(link: str, eta: np.ndarray) -> np.ndarray:
    if link == "logit":
        mu = special.expit(eta)
        return mu * (1 - mu)
    if link == "probit":
        return stats.norm.pdf(eta)
    return np.exp(eta)


def _inverse(link: str, eta: np.ndarray) -> np.ndarray:
    if link == "logit":
        return special.expit(eta)
    if link == "probit":
        return special.ndtr(eta)
    return np.exp(eta)


def marginal_inverse_link(link: str, eta: np.ndarray, s2: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``E[g^{-1}(eta + b)]`` for ``b ~ N(0, s2)`` with its derivatives in ``eta`` and ``s2``.

    Parameters
    ----------
    link : {"logit", "probit", "log"}
    eta : ndarray
        Linear predictors (link scale, random effects at 0).
    s2 : float
        Variance of the random effects averaged over.

    Returns
    -------
    mu, d_eta, d_s2 : ndarray

    Examples
    --------
    >>> mu, _, _ = marginal_inverse_link("probit", np.array([1.0]), 3.0)
    >>> float(mu[0]) == float(special.ndtr(1.0 / 2.0))
    True
    >>> mu, _, _ = marginal_inverse_link("logit", np.array([2.197]), 1.0)  # a typical item's 0.9
    >>> round(float(mu[0]), 4)
    0.8661
    """
    eta = np.asarray(eta, dtype=float)
    s2 = float(max(s2, 0.0))
    if link == "probit":
        r = np.sqrt(1.0 + s2)
        dens = stats.norm.pdf(eta / r)
        return special.ndtr(eta / r), dens / r, -0.5 * dens * eta / r**3
    if link == "log":
        mu = np.exp(eta + s2 / 2)
        return mu, mu, mu / 2
    if link != "logit":
        raise InputError(f"marginal means are implemented for the logit, probit and log links; got {link!r}.")
    sd = np.sqrt(s2)
    if sd == 0:
        return _inverse(link, eta), _first_derivative(link, eta), 0.5 * _second_derivative(link, eta)
    h = min(0.1, np.pi / (12 * sd))
    z = np.arange(-Z_RANGE, Z_RANGE + h / 2, h)
    w = stats.norm.pdf(z) * h
    grid = eta[..., None] + sd * z
    return (_inverse(link, grid) @ w, _first_derivative(link, grid) @ w, 0.5 * (_second_derivative(link, grid) @ w))


def intercept_variance(fit: object) -> tuple[float, np.ndarray]:
    """``s2``, the sum of the random-intercept variances of a GLMM, and its gradient in ``fit.theta``.

    Raises
    ------
    InputError
        Random slopes (the variance averaged over then depends on the covariates).
    """
    slopes = [g for g, names in zip(fit.group_names, fit.term_coef_names) if tuple(names) != ("(Intercept)",)]
    if slopes:
        raise InputError("marginal (population-averaged) means are implemented for random intercepts; this model "
                         f"has random slopes on {', '.join(repr(s) for s in slopes)}. Use the conditional means "
                         "(marginal=False).")
    theta = np.asarray(fit.theta, dtype=float)  # binomial and Poisson: no residual scale, variances = theta^2
    return float(theta @ theta), 2.0 * theta


def parameter_covariance(fit: object) -> np.ndarray:
    """Asymptotic covariance of ``(theta, beta)``: ``fit.cov_params``, or ``2 H^-1`` of the deviance."""
    cov = getattr(fit, "cov_params", None)
    if cov is None:
        from ._glmm_ddf import deviance_hessian

        H = deviance_hessian(fit)
        cov = 2.0 * np.linalg.pinv(H)
    cov = np.asarray(cov, dtype=float)
    return 0.5 * (cov + cov.T)


def marginal_moments(fit: object, L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Marginal means of the rows of ``L`` and their covariance by the delta method in ``(theta, beta)``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import glmer
    >>> rng = np.random.default_rng(0)
    >>> d = pd.DataFrame({"item": np.repeat(np.arange(60), 2), "system": np.tile(["A", "B"], 60)})
    >>> eta = 1.5 + rng.normal(size=60)[d.item] + 0.5 * (d.system == "B")
    >>> d["correct"] = (rng.random(120) < 1 / (1 + np.exp(-eta))).astype(int)
    >>> fit = glmer("correct ~ system + (1|item)", d)
    >>> mu, cov = marginal_moments(fit, np.array([[1.0, 0.0], [1.0, 1.0]]))
    >>> bool(np.all(mu < 1 / (1 + np.exp(-fit.coef @ np.array([[1.0, 1.0], [0.0, 1.0]])))))  # below a typical item's
    True
    """
    L = np.atleast_2d(np.asarray(L, dtype=float))
    s2, ds2 = intercept_variance(fit)
    mu, d_eta, d_s2 = marginal_inverse_link(fit.link, L @ np.asarray(fit.coef, dtype=float), s2)
    J = np.hstack([d_s2[:, None] * ds2[None, :], d_eta[:, None] * L])  # columns: theta, then beta
    C = parameter_covariance(fit)
    return mu, J @ C @ J.T
