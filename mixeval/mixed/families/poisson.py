"""The Poisson family (``glmer``): counts with log link."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from ...errors import InputError
from ._base import STUDY_METHODS, ExponentialFamily, Support

__all__ = ["Poisson"]


def _count_response(y: np.ndarray, name: str, family: str) -> None:
    """Validate whole counts >= 0, naming the column and the family."""
    if np.any(y < 0):
        raise InputError(f"the response {name!r} of a {family} model must be counts >= 0; it has negative values.")
    fractional = np.abs(y - np.round(y)) > 1e-8
    if fractional.any():
        raise InputError(
            f"the response {name!r} of a {family} model must be whole counts; {int(fractional.sum())} value(s) are "
            f"not (e.g. {y[fractional][:3].tolist()}). Counts of events are whole numbers: check for averaged or "
            "rescaled values (a rate per exposure is a count with an offset), or fit a Gaussian model.")


@dataclass(frozen=True, eq=False, repr=False)
class Poisson(ExponentialFamily):
    """R's ``poisson()``: ``y ~ Pois(mu)``, ``log mu = eta``.

    Examples
    --------
    >>> fam = Poisson()
    >>> round(fam.latent_residual_variance(np.log([2.0, 2.0]), 0.0), 4)  # log(1 + 1/2)
    0.4055
    """

    name: ClassVar[str] = "poisson"
    links: ClassVar[tuple[str, ...]] = ("log",)
    description: ClassVar[str] = "counts"
    latent_note: ClassVar[str] = (
        "Latent (log) scale of a Poisson GLMM: 'Residual' is the lognormal approximation log(1 + 1/lambda) of the "
        "distribution-specific variance, lambda the mean count with the random effects integrated out "
        "(Nakagawa, Johnson & Schielzeth 2017).")
    support: ClassVar[Support] = Support(study_methods=frozenset(STUDY_METHODS),
                                         intervals=frozenset({"wald", "profile", "boot"}), power=True,
                                         aggregate_sources=False, quadrature=True, weights="prior",
                                         scales=frozenset({"observed", "latent"}))
    response_label: ClassVar[str] = "rate"
    response_plural: ClassVar[str] = "rates"

    def check_response(self, y, weights, name):
        _count_response(y, name, "Poisson")

    def variance_derivatives(self, mu):
        mu = np.asarray(mu, dtype=float)
        return mu, np.ones_like(mu), np.zeros_like(mu)

    def dev_resid(self, y, mu, wt):
        return 2 * wt * (y * np.log(np.where(y > 0, y, 1.0)) - y * np.log(mu) - (y - mu))

    def aic(self, y, mu, wt):
        return float(-2 * np.sum((y * np.log(mu) - mu - special.gammaln(y + 1)) * wt))

    def dev_kernel(self, y, mu, wt):
        return float(-2 * ((wt * y) @ np.log(mu) - wt @ mu))

    def simulate(self, eta, weights, rng, params=()):
        return rng.poisson(self.linkinv(np.asarray(eta, dtype=float))).astype(float)

    def latent_residual_variance(self, eta, re_variance, params=()):
        """``log(1 + 1 / lambda)``, ``lambda = mean(exp(eta)) exp(re_variance / 2)`` (lognormal approximation)."""
        lam = float(np.mean(np.exp(eta))) * float(np.exp(0.5 * re_variance))
        return float(np.log1p(1.0 / lam))
