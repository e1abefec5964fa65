"""The ordinal family (``clmm``): cumulative link models of ratings on an ordered scale."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from ._base import STUDY_METHODS, Family, Support

__all__ = ["Ordinal"]

THRESHOLDS = ("flexible", "equidistant", "symmetric")


@dataclass(frozen=True, eq=True, repr=False)
class Ordinal(Family):
    """The cumulative link family of ``ordinal::clmm``: ``P(Y <= j) = F(theta_j - eta)``, a link and a threshold
    structure.

    Attributes
    ----------
    link : {"logit", "probit"}
    threshold : {"flexible", "equidistant", "symmetric"}

    Notes
    -----
    The family's parameters are the thresholds, whose number and names come from the response's categories:
    they are estimated by :func:`mixeval.clmm`'s own evaluator, so :attr:`parameter_names` is empty and
    :meth:`simulate` and :meth:`mean` take the thresholds as ``params``.

    Examples
    --------
    >>> fam = Ordinal("logit")
    >>> fam.name, fam.link, round(fam.latent_variance, 4)
    ('ordinal', 'logit', 3.2899)
    >>> [round(float(v), 4) for v in fam.cdf(np.array([0.0, 1.0]))]
    [0.5, 0.7311]
    """

    link: str = "logit"
    threshold: str = "flexible"

    name: ClassVar[str] = "ordinal"
    links: ClassVar[tuple[str, ...]] = ("logit", "probit")
    engine: ClassVar[str] = "clmm"
    description: ClassVar[str] = "ratings on an ordered scale (1-5, 1-7: clmm)"
    latent_note: ClassVar[str] = ("Latent scale of a cumulative link model of ratings: 'Residual' is the variance "
                                  "of the latent residual (pi^2/3 logit, 1 probit).")
    support: ClassVar[Support] = Support(
        study_methods=frozenset(STUDY_METHODS) - {"glrt_averaged", "contrast", "joint_tests"},
        intervals=frozenset({"wald", "profile", "boot"}), power=True, aggregate_sources=False, reml=False,
        quadrature=True, weights="none", scales=frozenset({"observed", "latent"}),
        reasons=(("contrast", "an ordinal Study's contrasts are Study.pairwise(scale=...) on its ordinal modes"),
                 ("joint_tests", "test a term with Study.glrt(effect=...), the likelihood-ratio test of the "
                                 "cumulative link mixed models"),
                 ("glrt_averaged", "averaged ratings are not ratings on the ordinal scale; use Study.glrt() (the "
                                   "likelihood-ratio test of the cumulative link mixed models), or a Study without "
                                   "family='ordinal' for the book's test on averaged scores")))
    mean_is_inverse_link: ClassVar[bool] = False

    def __reduce__(self):
        return (Ordinal, (self.link, self.threshold))

    def __repr__(self) -> str:
        return f"Ordinal(link={self.link!r}, threshold={self.threshold!r})"

    def __hash__(self) -> int:
        return hash((self.name, self.link, self.threshold))

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """``F(x)``: the standard logistic or normal distribution function."""
        return special.expit(x) if self.link == "logit" else special.ndtr(x)

    def quantile(self, p: np.ndarray) -> np.ndarray:
        """``F^{-1}(p)``."""
        return special.logit(p) if self.link == "logit" else special.ndtri(p)

    def simulate(self, eta, weights, rng, params=()):
        """Category indices of ratings with latent predictor ``eta`` (any shape): ``Y = j`` where
        ``theta_{j-1} < eta + e <= theta_j``, ``e`` a standard logistic or normal draw (``ordinal``'s latent model);
        ``params`` the thresholds, one set for all or one row per element of a one-dimensional ``eta``
        (``weights`` is not used: one rating per row).

        Examples
        --------
        >>> Ordinal("probit").simulate(np.array([-50.0, 0.0, 50.0]), 1.0, np.random.default_rng(0),
        ...                            np.array([-20.0, 20.0])).tolist()
        [0, 1, 2]
        """
        eta = np.asarray(eta, dtype=float)
        noise = rng.logistic(size=eta.shape) if self.link == "logit" else rng.standard_normal(eta.shape)
        thresholds = np.asarray(params, dtype=float)
        if thresholds.ndim == 2:
            return np.sum(thresholds < (eta + noise)[:, None], axis=1)
        return np.searchsorted(thresholds, eta + noise, side="left")

    def mean(self, eta, params=()):
        """The expected category index (0 .. J-1) at ``eta`` with thresholds ``params``: ``sum_j P(Y > j)``."""
        eta = np.asarray(eta, dtype=float)
        thresholds = np.asarray(params, dtype=float)
        return np.sum(1.0 - self.cdf(thresholds[None, :] - eta.reshape(-1, 1)), axis=1).reshape(eta.shape)
