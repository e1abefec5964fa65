"""Response-scale means of a GLMM and their covariance: conditional (a typical unit) and marginal
(population-averaged, e.g. the accuracy averaged over items and seeds).

The response-scale mean of a linear predictor ``eta`` is the family's ``E[y | eta]``
(:meth:`~mixeval.mixed.families.Family.mean`): the inverse link for most families, for an ordered beta model
``P(y = 1) + P(0 < y < 1) expit(eta)``, which its cutpoints move. Every derivative comes from the family
(:meth:`~mixeval.mixed.families.Family.mean_derivatives`, built on its :class:`~mixeval.mixed.families.Link`):
this module does no link calculus of its own.

``E[y | l' beta]`` -- what :func:`~mixeval.significance.emmeans_response` reports by default, as emmeans'
``type = "response"`` -- is the mean of a *typical* item and seed (random effects at 0). An evaluation reports
the mean over the items and seeds, which for a non-linear mean is

    mu_marg = E_b[m(l' beta + b)],   b ~ N(0, s2),   s2 = sum_j sigma_j^2,

``s2`` the sum of the random-intercept variances (every component varies across the items, seeds, templates
averaged over). The integral is the trapezoidal rule in the standardised random effect ``z = b / sqrt(s2)``
over ``[-9 - sqrt(s2), 9 + sqrt(s2)]`` (the log link's integrand peaks at ``z = sqrt(s2)``) with step
``min(0.1, pi / (12 sqrt(s2)))``: the integrand is analytic in a strip of half-width ``pi / sqrt(s2)`` (the poles of
the logistic; the normal and exponential means are entire), so the rule converges geometrically, error
``~exp(-2 pi^2 / (h sqrt(s2)))`` plus the normal tail beyond 9 standard deviations, both below double precision;
the agreement with adaptive quadrature and with the closed forms ``Phi(eta / sqrt(1 + s2))`` (probit) and
``exp(eta + s2 / 2)`` (log) is tested.

Its standard error is the delta method in the fit's parameters jointly, ``grad' C grad`` with ``C`` the fit's
asymptotic covariance of ``(theta, beta, psi)`` (``fit.cov_params``, twice the inverse Hessian of the deviance;
``psi`` the family's parameters: a dispersion's logarithm, an ordered beta's cutpoints), using
``d mu_marg / d eta = E[m'(eta + b)]``, ``d mu_marg / d s2 = E[m''(eta + b)] / 2`` (the heat equation),
``d mu_marg / d psi = E[d m(eta + b) / d psi]`` and ``s2 = sum_j theta_j^2``. The interval is the z interval on the
link scale of ``mu_marg`` back-transformed (it stays inside the response's range).

emmeans' ``bias.adjust = TRUE, sigma = sqrt(s2)`` approximates the same quantity to second order,
``m(eta) + s2 m''(eta) / 2``; it is close for small ``s2`` and drifts away as ``s2`` grows
(``tests/significance/test_glmer_emmeans_parity.py`` compares both with R).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from ..errors import InputError

if TYPE_CHECKING:
    from ..mixed import MixedResult

__all__ = ["marginal_mean", "marginal_moments", "intercept_variance", "parameter_covariance", "response_moments"]

#: Half-width of the integration range in standard deviations of the random effect (beyond ``sqrt(s2)``).
Z_RANGE = 9.0


def marginal_mean(family: object, eta: np.ndarray, s2: float, params: np.ndarray = ()
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``E[m(eta + b)]`` for ``b ~ N(0, s2)``, ``m`` the family's mean, with its derivatives in ``eta``, ``s2`` and
    the family's parameters.

    Parameters
    ----------
    family : Family
        The fit's family (``fit.family``).
    eta : ndarray
        Linear predictors (link scale, random effects at 0).
    s2 : float
        Variance of the random effects averaged over.
    params : ndarray
        The family's parameters on the optimiser's scale (``fit.family_par``).

    Returns
    -------
    mu, d_eta, d_s2 : ndarray
        Shaped as ``eta``.
    d_params : ndarray
        Shape ``eta.shape + (family.n_parameters,)``.

    Examples
    --------
    >>> from mixeval.mixed.families import get_family
    >>> mu, _, _, _ = marginal_mean(get_family("binomial", "probit"), np.array([1.0]), 3.0)
    >>> bool(np.isclose(mu[0], stats.norm.cdf(1.0 / 2.0), rtol=1e-13))
    True
    >>> mu, _, _, _ = marginal_mean(get_family("binomial"), np.array([2.197]), 1.0)  # a typical item's 0.9
    >>> round(float(mu[0]), 4)
    0.8661
    """
    eta = np.asarray(eta, dtype=float)
    params = np.asarray(params, dtype=float)
    s2 = float(max(s2, 0.0))
    sd = np.sqrt(s2)
    if sd == 0:
        mu, d1, d2, dp = family.mean_derivatives(eta, params)
        return mu, d1, 0.5 * d2, dp
    h = min(0.1, np.pi / (12 * sd))
    half = Z_RANGE + sd
    z = np.arange(-half, half + h / 2, h)
    w = stats.norm.pdf(z) * h
    mu, d1, d2, dp = family.mean_derivatives(eta[..., None] + sd * z, params)
    return mu @ w, d1 @ w, 0.5 * (d2 @ w), np.einsum("...km,k->...m", dp, w)


def intercept_variance(fit: MixedResult) -> tuple[float, np.ndarray]:
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
    theta = np.asarray(fit.theta, dtype=float)  # a GLMM has no residual scale: the variances are theta^2
    return float(theta @ theta), 2.0 * theta


def parameter_covariance(fit: MixedResult) -> np.ndarray:
    """Asymptotic covariance of the fit's parameters ``(theta, beta, psi)`` (``psi`` the family's, empty for binomial
    and Poisson): ``fit.cov_params``, else ``2 H^-1`` of the fit's criterion (:meth:`GlmerResult.criterion_hessian
    <mixeval.mixed.GlmerResult.criterion_hessian>`)."""
    cov = getattr(fit, "cov_params", None)
    if cov is None:
        cov = 2.0 * np.linalg.pinv(fit.criterion_hessian())
    cov = np.asarray(cov, dtype=float)
    return 0.5 * (cov + cov.T)


def _family_par(fit: MixedResult) -> np.ndarray:
    return np.asarray(getattr(fit, "family_par", np.zeros(0)), dtype=float)


def marginal_moments(fit: MixedResult, L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Marginal means of the rows of ``L`` and their covariance by the delta method in ``(theta, beta, psi)``.

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
    psi = _family_par(fit)
    mu, d_eta, d_s2, d_psi = marginal_mean(fit.family, L @ np.asarray(fit.coef, dtype=float), s2, psi)
    J = np.hstack([d_s2[:, None] * ds2[None, :], d_eta[:, None] * L, d_psi])  # columns: theta, beta, psi
    return mu, J @ parameter_covariance(fit) @ J.T


def response_moments(fit: MixedResult, L: np.ndarray, vcov: np.ndarray, *, marginal: bool = False
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Response-scale means of the rows of ``L``, their covariance and their Jacobian in ``beta``.

    Conditional means (``marginal=False``, random effects at 0): ``m(L beta)`` with covariance ``G V G'``,
    ``G = diag(m'(L beta)) L`` and ``V = vcov`` (the table's covariance of the fixed effects: emmeans' numbers)
    when the mean is the inverse link; a mean that the family's parameters move (ordered beta) adds their part,
    with ``(beta, psi)``'s covariance from :func:`parameter_covariance`. ``marginal=True``: :func:`marginal_moments`.
    ``G`` is what the Satterthwaite df of a response-scale contrast linearise.
    """
    L = np.atleast_2d(np.asarray(L, dtype=float))
    psi = _family_par(fit)
    eta = L @ np.asarray(fit.coef, dtype=float)
    mu, d_eta, _, d_psi = fit.family.mean_derivatives(eta, psi)
    G = d_eta[:, None] * L
    if marginal:
        mu, cov = marginal_moments(fit, L)
    elif fit.family.mean_is_inverse_link or not psi.size:
        cov = G @ np.asarray(vcov, dtype=float) @ G.T
    else:
        k, p = np.asarray(fit.theta).size, L.shape[1]
        C = parameter_covariance(fit)[k:, k:]  # (beta, psi)
        J = np.hstack([G, d_psi])
        C = C.copy()
        C[:p, :p] = vcov
        cov = J @ C @ J.T
    return mu, cov, G
