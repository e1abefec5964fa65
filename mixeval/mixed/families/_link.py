"""Link functions (R's ``make.link``; glum's ``_link.py``): ``eta = g(mu)``, its inverse and derivatives.

A :class:`Link` carries ``linkfun`` (``g``), ``linkinv`` (``g^{-1}``, with the guards of R's C code that keep
``mu`` inside the family's range by ``DBL_EPSILON``), ``mu_eta`` (``d mu / d eta``) and ``derivatives``
(``mu`` and its first three derivatives in ``eta``), which the Laplace approximation of a family without
a canonical link needs: the observed information is ``-d^2 l / d eta^2`` and the gradient of
``log|L|^2`` needs the third derivative.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

__all__ = ["LINKS", "Link", "get_link"]

_EPS = np.finfo(float).eps
_PROBIT_THRESH = -stats.norm.ppf(_EPS)
_INV_SQRT_2PI = 1.0 / np.sqrt(2 * np.pi)


@dataclass(frozen=True)
class Link:
    """One link function and its inverse with derivatives.

    Attributes
    ----------
    name : str
    linkfun, linkinv, mu_eta : callable
        ``g(mu)``, ``g^{-1}(eta)``, ``d mu / d eta`` (R's ``make.link(name)``).
    derivatives : callable
        ``eta -> (mu, mu', mu'', mu''')``: the inverse link and its derivatives in ``eta``.
    ratio : str or None
        What ``exp`` of a difference on this link's scale is, as a column name: ``"odds_ratio"`` (logit),
        ``"ratio"`` (log: a ratio of means, emmeans' rate ratio); None where it is no ratio (identity, probit).

    Notes
    -----
    The chain rule turns a family's derivatives of the log-likelihood ``l`` in ``mu`` into those in ``eta``:
    ``l_eta = l_mu m1``, ``l_eta_eta = l_mu_mu m1^2 + l_mu m2``,
    ``l_eta_eta_eta = l_mu_mu_mu m1^3 + 3 l_mu_mu m1 m2 + l_mu m3`` (:meth:`chain`).

    Examples
    --------
    >>> lk = get_link("logit")
    >>> [round(float(v), 6) for v in lk.derivatives(np.array(0.0))]
    [0.5, 0.25, 0.0, -0.125]
    >>> float(lk.linkfun(lk.linkinv(1.5)))
    1.5
    """

    name: str
    linkfun: Callable[[np.ndarray], np.ndarray]
    linkinv: Callable[[np.ndarray], np.ndarray]
    mu_eta: Callable[[np.ndarray], np.ndarray]
    derivatives: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    ratio: str | None = None

    def __repr__(self) -> str:
        return f"Link({self.name!r})"

    def __reduce__(self):
        return (get_link, (self.name,))

    def chain(self, eta: np.ndarray, l_mu: np.ndarray, l_mu2: np.ndarray, l_mu3: np.ndarray | None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Derivatives of ``l`` in ``eta`` from those in ``mu`` (the third only when ``l_mu3`` is given)."""
        _, m1, m2, m3 = self.derivatives(eta)
        l1 = l_mu * m1
        l2 = l_mu2 * m1 * m1 + l_mu * m2
        l3 = None if l_mu3 is None else l_mu3 * m1**3 + 3 * l_mu2 * m1 * m2 + l_mu * m3
        return l1, l2, l3


def _identity(x):
    return np.asarray(x, dtype=float) if isinstance(x, np.ndarray) else x


def _ones_like(x):
    return np.ones_like(np.asarray(x, dtype=float))


def _identity_derivatives(eta):
    eta = np.asarray(eta, dtype=float)
    zero = np.zeros_like(eta)
    return eta, np.ones_like(eta), zero, zero


def _logit_linkinv(eta):
    mu = special.expit(eta)
    return np.clip(mu, _EPS, 1 - _EPS, out=mu) if isinstance(mu, np.ndarray) else np.clip(mu, _EPS, 1 - _EPS)


def _logit_mu_eta(eta):
    mu = special.expit(eta)
    return np.where(np.abs(eta) > 30, _EPS, mu * (1 - mu))


def _logit_derivatives(eta):
    mu = special.expit(np.asarray(eta, dtype=float))
    m1 = mu * (1 - mu)
    return mu, m1, m1 * (1 - 2 * mu), m1 * (1 - 6 * m1)


def _probit_linkinv(eta):
    return special.ndtr(np.clip(eta, -_PROBIT_THRESH, _PROBIT_THRESH))


def _probit_mu_eta(eta):
    return np.maximum(np.exp(-0.5 * np.square(eta)) * _INV_SQRT_2PI, _EPS)


def _probit_derivatives(eta):
    eta = np.asarray(eta, dtype=float)
    dens = np.exp(-0.5 * eta * eta) * _INV_SQRT_2PI
    return special.ndtr(eta), dens, -eta * dens, (eta * eta - 1) * dens


def _log_linkinv(eta):
    return np.maximum(np.exp(eta), _EPS)


def _log_derivatives(eta):
    mu = np.exp(np.asarray(eta, dtype=float))
    return mu, mu, mu, mu


#: every link a family can name, by name
LINKS: dict[str, Link] = {
    "identity": Link("identity", _identity, _identity, _ones_like, _identity_derivatives),
    "logit": Link("logit", special.logit, _logit_linkinv, _logit_mu_eta, _logit_derivatives, "odds_ratio"),
    "probit": Link("probit", stats.norm.ppf, _probit_linkinv, _probit_mu_eta, _probit_derivatives),
    "log": Link("log", np.log, _log_linkinv, _log_linkinv, _log_derivatives, "ratio"),
}


def get_link(name: str) -> Link:
    """The :class:`Link` called ``name`` (``"identity"``, ``"logit"``, ``"probit"``, ``"log"``).

    Examples
    --------
    >>> get_link("log"), float(get_link("log").linkinv(0.0))
    (Link('log'), 1.0)
    """
    return LINKS[name]
