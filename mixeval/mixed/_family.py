"""Exponential-family response distributions of a generalised linear mixed model (R's ``family`` objects).

A :class:`Family` bundles a link (``eta = g(mu)``, its inverse and ``d mu / d eta``), the variance
function ``V(mu)``, the unit deviance residuals and R's ``aic`` term (``-2`` times the conditional
log-likelihood, normalising constants included), with the numerical guards of R's C code (``mu``
kept inside ``(0, 1)`` or above 0 by ``DBL_EPSILON``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from ..errors import InputError, caller_stacklevel

__all__ = ["DISTRIBUTION_VARIANCE", "FAMILIES", "GAUSSIAN", "Family", "get_family"]

_EPS = np.finfo(float).eps
_PROBIT_THRESH = -stats.norm.ppf(_EPS)


@dataclass(frozen=True)
class Family:
    """A response distribution and link, as R's ``gaussian()``, ``binomial(link = "logit")`` or ``poisson()``.

    The family carries what differs between the models of the one core: the link and its inverse, the
    variance function, the deviance and ``aic`` terms, how to draw a response, and the variance of the
    latent residual used for variance shares and reliability on the link scale.

    Attributes
    ----------
    name : str
        ``"gaussian"``, ``"binomial"`` or ``"poisson"``.
    link : str
        ``"identity"``, ``"logit"``, ``"probit"`` or ``"log"``.

    Notes
    -----
    A family pickles by name and link (``get_family(name, link)`` rebuilds it), so results holding one can be
    cached, saved and sent to worker processes.

    Examples
    --------
    >>> import pickle
    >>> fam = get_family("binomial", "probit")
    >>> fam, fam.estimates_scale, pickle.loads(pickle.dumps(fam)) == fam
    (Family('binomial', link='probit'), False, True)
    """

    name: str
    link: str
    linkfun: Callable[[np.ndarray], np.ndarray]
    linkinv: Callable[[np.ndarray], np.ndarray]
    mu_eta: Callable[[np.ndarray], np.ndarray]
    variance: Callable[[np.ndarray], np.ndarray]
    dev_resid: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
    aic: Callable[[np.ndarray, np.ndarray, np.ndarray], float]
    dev_kernel: Callable[[np.ndarray, np.ndarray, np.ndarray], float]
    """The sum of the deviance residuals up to a constant that depends only on ``y`` (PIRLS' criterion)."""

    def __repr__(self) -> str:
        return f"Family({self.name!r}, link={self.link!r})"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self):
        return (get_family, (self.name, self.link))

    @property
    def estimates_scale(self) -> bool:
        """True when the residual variance is a parameter of the model (Gaussian), False when the
        distribution fixes it (binomial, Poisson: no dispersion parameter, as lme4's ``glmer``)."""
        return self.name == "gaussian"

    @property
    def latent_variance(self) -> float:
        """Variance of the latent residual on the link scale (Nakagawa & Schielzeth 2010): pi^2/3 for the
        logit link, 1 for probit; NaN where it is not a constant (Poisson with log link; Gaussian, whose
        residual variance is estimated: ``fit.sigma2``).

        Examples
        --------
        >>> round(get_family("binomial").latent_variance, 4), get_family("binomial", "probit").latent_variance
        (3.2899, 1.0)
        """
        return DISTRIBUTION_VARIANCE.get(self.link, float("nan"))

    def latent_residual_variance(self, eta: np.ndarray, re_variance: float) -> float:
        """The residual variance on the latent scale for variance shares (Nakagawa & Schielzeth 2010, 2017): the
        distribution-specific :attr:`latent_variance` of a binomial model; for a Poisson model with log link the
        lognormal approximation ``log(1 + 1 / lambda)`` with ``lambda = mean(exp(eta)) exp(re_variance / 2)``
        (``eta`` the fixed-effects predictor of the rows, ``re_variance`` the summed random-effect variances);
        NaN for a Gaussian model, whose residual variance is a parameter.

        Examples
        --------
        >>> round(get_family("poisson").latent_residual_variance(np.log([2.0, 2.0]), 0.0), 4)  # log(1 + 1/2)
        0.4055
        """
        if self.name == "poisson":
            lam = float(np.mean(np.exp(eta))) * float(np.exp(0.5 * re_variance))
            return float(np.log1p(1.0 / lam))
        return self.latent_variance

    def simulate(self, mu: np.ndarray, weights: np.ndarray, rng: np.random.Generator, *,
                 sigma: float = float("nan")) -> np.ndarray:
        """Draw responses with conditional means ``mu`` (R's ``family$simulate``): a normal with SD ``sigma``,
        a binomial proportion out of ``weights`` trials, or a Poisson count."""
        mu = np.asarray(mu, dtype=float)
        if self.name == "gaussian":
            return mu + rng.normal(0.0, sigma, size=mu.shape) / np.sqrt(np.broadcast_to(weights, mu.shape))
        if self.name == "binomial":
            trials = np.round(np.broadcast_to(weights, mu.shape)).astype(np.int64)
            return rng.binomial(trials, mu) / np.maximum(trials, 1)
        return rng.poisson(mu).astype(float)


def _logit_linkinv(eta):
    mu = special.expit(eta)
    return np.clip(mu, _EPS, 1 - _EPS, out=mu) if isinstance(mu, np.ndarray) else np.clip(mu, _EPS, 1 - _EPS)


def _logit_mu_eta(eta):
    mu = special.expit(eta)
    return np.where(np.abs(eta) > 30, _EPS, mu * (1 - mu))


def _probit_linkinv(eta):
    return special.ndtr(np.clip(eta, -_PROBIT_THRESH, _PROBIT_THRESH))


def _probit_mu_eta(eta):
    return np.maximum(np.exp(-0.5 * np.square(eta)) * _INV_SQRT_2PI, _EPS)


_INV_SQRT_2PI = 1.0 / np.sqrt(2 * np.pi)


def _xlogx(x):
    """``x log x`` with ``0 log 0 = 0`` (x >= 0)."""
    return x * np.log(np.where(x > 0, x, 1.0))


def _binomial_dev_resid(y, mu, wt):
    """``2 w [y log(y / mu) + (1 - y) log((1 - y) / (1 - mu))]`` with ``0 log 0 = 0`` (``mu`` inside (0, 1))."""
    return 2 * wt * (_xlogx(y) + _xlogx(1 - y) - y * np.log(mu) - (1 - y) * np.log1p(-mu))


def _binomial_aic(y, mu, wt):
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


def _poisson_dev_resid(y, mu, wt):
    return 2 * wt * (_xlogx(y) - y * np.log(mu) - (y - mu))


def _poisson_aic(y, mu, wt):
    return float(-2 * np.sum((y * np.log(mu) - mu - special.gammaln(y + 1)) * wt))


def _identity(x):
    return np.asarray(x, dtype=float) if isinstance(x, np.ndarray) else x


def _ones_like(x):
    return np.ones_like(np.asarray(x, dtype=float))


def _gaussian_dev_resid(y, mu, wt):
    return wt * np.square(y - mu)


def _gaussian_aic(y, mu, wt):
    """R's ``gaussian()$aic`` at the ML dispersion ``sum(w (y - mu)^2) / n``."""
    n = y.size
    dev = float(np.sum(wt * np.square(y - mu)))
    return float(n * (np.log(2 * np.pi * dev / n) + 1) + 2 - np.sum(np.log(np.where(wt > 0, wt, 1.0))))


def _gaussian_kernel(y, mu, wt):
    return float(np.sum(wt * np.square(y - mu)))


def _binomial_variance(mu):
    return mu * (1 - mu)


def _binomial_kernel(y, mu, wt):
    return float(-2 * ((wt * y) @ np.log(mu) + (wt * (1 - y)) @ np.log1p(-mu)))


def _poisson_linkinv(eta):
    return np.maximum(np.exp(eta), _EPS)


def _poisson_kernel(y, mu, wt):
    return float(-2 * ((wt * y) @ np.log(mu) - wt @ mu))


def _gaussian(link: str) -> Family:
    return Family("gaussian", "identity", _identity, _identity, _ones_like, _ones_like, _gaussian_dev_resid,
                  _gaussian_aic, _gaussian_kernel)


def _binomial(link: str) -> Family:
    if link == "logit":
        linkfun, linkinv, mu_eta = special.logit, _logit_linkinv, _logit_mu_eta
    else:
        linkfun, linkinv, mu_eta = stats.norm.ppf, _probit_linkinv, _probit_mu_eta
    return Family("binomial", link, linkfun, linkinv, mu_eta, _binomial_variance, _binomial_dev_resid, _binomial_aic,
                  _binomial_kernel)


def _poisson(link: str) -> Family:
    return Family("poisson", "log", np.log, _poisson_linkinv, _poisson_linkinv, _identity, _poisson_dev_resid,
                  _poisson_aic, _poisson_kernel)


#: family name -> allowed links (the first is the default).
FAMILIES: dict[str, tuple[str, ...]] = {"gaussian": ("identity",), "binomial": ("logit", "probit"), "poisson": ("log",)}

_MAKERS = {"gaussian": _gaussian, "binomial": _binomial, "poisson": _poisson}

#: Distribution-specific variance of the latent scale (Nakagawa & Schielzeth 2010): the variance of the
#: standard logistic (pi^2 / 3) for the logit link, of the standard normal (1) for the probit link.
DISTRIBUTION_VARIANCE: dict[str, float] = {"logit": float(np.pi**2 / 3), "probit": 1.0}


def get_family(family: str | Family, link: str | None = None) -> Family:
    """The :class:`Family` named ``family`` with ``link`` (its canonical link by default).

    Examples
    --------
    >>> get_family("binomial")
    Family('binomial', link='logit')
    >>> float(get_family("binomial", "probit").linkinv(0.0))
    0.5
    """
    if isinstance(family, Family):
        if link is not None and link != family.link:
            raise InputError(f"family {family!r} already fixes the link {family.link!r}; got link={link!r}.")
        return family
    name = str(family).lower()
    if name not in FAMILIES:
        raise InputError(f"family={family!r} is not supported; use one of {sorted(FAMILIES)} "
                         "(gaussian for scores, binomial for 0/1 or successes/trials, poisson for counts).")
    links = FAMILIES[name]
    link = links[0] if link is None else str(link).lower()
    if link not in links:
        raise InputError(f"link={link!r} is not available for family={name!r}; use one of {list(links)}.")
    return _MAKERS[name](link)


def discrete_response_kind(y: np.ndarray) -> str | None:
    """``"binary"`` for a response taking only the values 0 and 1, ``"counts"`` for small counts, else None.

    Small counts: whole numbers >= 0 with a mean of at most 3 and at least 20% zeros (the shape where a
    Gaussian model's variance, constant in the mean, is most wrong; ratings on a 1..5 scale have no zeros).

    Examples
    --------
    >>> discrete_response_kind(np.array([0, 1, 1, 0.0])), discrete_response_kind(np.array([0, 0, 2, 1, 5.0]))
    ('binary', 'counts')
    >>> discrete_response_kind(np.array([1, 2, 3, 4, 5.0])) is None
    True
    """
    y = np.asarray(y, dtype=float)
    if y.size == 0 or not np.all(np.isfinite(y)):
        return None
    if np.all((y == 0) | (y == 1)):
        return "binary" if np.any(y == 0) and np.any(y == 1) else None
    if np.all(y >= 0) and np.all(y == np.round(y)) and y.mean() <= 3 and np.mean(y == 0) >= 0.2:
        return "counts"
    return None


def warn_discrete_response(y: np.ndarray, name: str) -> None:
    """Warn (:class:`~mixeval.errors.FamilyWarning`) when a Gaussian model is fitted to 0/1 scores or small counts."""
    import warnings

    from ..errors import FamilyWarning

    kind = discrete_response_kind(y)
    if kind == "binary":
        warnings.warn(
            f"the response {name!r} only takes the values 0 and 1; a linear mixed model ignores that a probability "
            "is bounded (its variance components and tests are on the wrong scale). Fit a binomial GLMM: "
            "mixeval.glmer(formula, data, family=\"binomial\"), Study(..., family=\"binomial\") or --family binomial.",
            FamilyWarning, stacklevel=caller_stacklevel())
    elif kind == "counts":
        warnings.warn(
            f"the response {name!r} looks like small counts (whole numbers >= 0, many zeros); a linear mixed model "
            "assumes a variance that does not grow with the mean. Consider a Poisson GLMM: "
            "mixeval.glmer(formula, data, family=\"poisson\") or --family poisson.",
            FamilyWarning, stacklevel=caller_stacklevel())


#: The Gaussian family of every linear mixed model (``lmer``).
GAUSSIAN: Family = get_family("gaussian")
