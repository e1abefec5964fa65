"""Stage 3 (ordinal ties with random effects): the cumulative-logit tie model as a cumulative link mixed model
on the engine of :mod:`mixeval.mixed._clmm` (``ordinal::clmm``).

A vote's outcome is ordered ``b won < tie < a won``: ``P(Y <= j | v) = F(theta_j - eta - z'v)`` with
``eta = x' beta`` the abilities' difference and covariates, ``z'v`` the random effects of
:mod:`._mixed` (a judge's position deviation, system-by-group deviations as multiple-membership terms).
The two thresholds are parametrised by the tie parameter ``tau`` and the mean position bias ``gamma``:
``theta_1 = -tau - gamma``, ``theta_2 = tau - gamma`` (``gamma = 0`` without a position term), the
fixed-effects model's parameters (:mod:`._fixed`), so a fit without random effects is the same model. The
engine's ``ClmmProblem`` has no case weights: identical votes are expanded to one row each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.linalg import LinAlgError

from ..mixed.engine import (
    ClmmDeviance,
    ClmmProblem,
    ReStructure,
    get_ordinal,
    optimize_clmm,
    single_threaded_blas,
    start_theta,
    threshold_design,
)
from ._design import POSITION, DifferenceDesign
from ._fixed import fit_fixed, outcome_model
from ._log import VoteLog

__all__ = ["OrdinalMixedFit", "fit_ordinal_mixed", "threshold_jacobian_ties", "varcorr_table"]


@dataclass(frozen=True)
class OrdinalMixedFit:
    """``beta`` (the design's columns, position included), ``tau``, their covariances (the inverse of half
    the Hessian of the Laplace deviance: ``cov`` of ``beta``, ``cov_beta_tau`` of ``beta`` with ``tau``), ``theta``
    and the log-likelihood."""

    beta: np.ndarray
    cov: np.ndarray
    tau: float
    tau_se: float
    cov_beta_tau: np.ndarray
    theta: np.ndarray
    loglik: float
    converged: bool


def threshold_jacobian_ties(position: bool) -> np.ndarray:
    """``J`` with ``(theta_1, theta_2) = J alpha``: ``alpha = (tau, gamma)`` with a position term, else ``(tau,)``.

    Examples
    --------
    >>> threshold_jacobian_ties(True).tolist(), threshold_jacobian_ties(False).tolist()
    ([[-1.0, -1.0], [1.0, -1.0]], [[-1.0], [1.0]])
    """
    return np.array([[-1.0, -1.0], [1.0, -1.0]]) if position else np.array([[-1.0], [1.0]])


def varcorr_table(re: ReStructure, theta: np.ndarray) -> pd.DataFrame:
    """Variance components (latent logistic scale) in the layout of the engine's ``varcorr``."""
    rows = []
    for term, cov in zip(re.terms, re.covariances(theta)):
        for j, name in enumerate(term.coef_names):
            rows.append({"group": term.group, "name": name, "variance": float(cov[j, j]),
                         "std": float(np.sqrt(max(cov[j, j], 0.0)))})
    return pd.DataFrame(rows, columns=["group", "name", "variance", "std"])


def _problem(votes: VoteLog, X: np.ndarray, re: ReStructure, position: bool) -> ClmmProblem:
    y = votes.outcome.astype(np.int64)
    jac = threshold_jacobian_ties(position)
    names = ("tau", POSITION) if position else ("tau",)
    U, L, _ = threshold_design(y, jac, names, ("b|tie", "tie|a"), None)
    return ClmmProblem(y=y, U=U, L=L, X=X, re=re, family=get_ordinal("logit", "flexible"), alpha_names=names,
                       n_categories=3)


def fit_ordinal_mixed(votes: VoteLog, design: DifferenceDesign, re: ReStructure) -> OrdinalMixedFit:
    """Fit the ordinal tie model with random effects ``re`` to one-vote-per-row ``votes``.

    ``design`` is the dense difference design of ``votes`` (position column included when modelled). Starts
    from the fixed-effects tie model (Fisher scoring), then ``theta`` alone, then everything jointly
    (:func:`~mixeval.mixed.engine.optimize_clmm`); the covariance is twice the inverse of the Hessian
    (central differences of the gradient), as ``ordinal::clmm`` reports it.
    """
    names = list(design.names)
    position = POSITION in names
    pos = names.index(POSITION) if position else None
    keep = [j for j in range(design.p) if j != pos]
    X = np.asarray(design.X, dtype=float)[:, keep]
    fixed = fit_fixed(outcome_model("ordinal"), np.asarray(design.X, dtype=float), votes.outcome, votes.count,
                      warn=False, covariance=False)
    alpha0 = np.array([fixed.phi, fixed.beta[pos]]) if position else np.array([fixed.phi])
    start = np.concatenate([alpha0, fixed.beta[keep]])
    dev = ClmmDeviance(_problem(votes, X, re, position))
    k, m = re.n_theta, 1 + int(position)
    with single_threaded_blas():
        x0 = np.concatenate([start_theta(dev, start), start])
        opt = optimize_clmm(dev, x0)
        x = opt.theta
        deviance = dev.deviance(x)
        try:
            full = 2.0 * np.linalg.inv(dev.hessian(x))
            full = 0.5 * (full + full.T)
        except (np.linalg.LinAlgError, LinAlgError):
            full = np.full((x.size, x.size), np.nan)
    # the design's order: abilities (and covariates) with the position column where the design has it
    order = [k + m + keep.index(j) if j != pos else k + 1 for j in range(design.p)]
    beta = x[order]
    cov = full[np.ix_(order, order)]
    return OrdinalMixedFit(beta=beta, cov=cov, tau=float(x[k]), tau_se=float(np.sqrt(full[k, k])),
                           cov_beta_tau=full[order, k],
                           theta=x[:k].copy(), loglik=-0.5 * float(deviance), converged=bool(opt.converged))
