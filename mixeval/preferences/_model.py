"""One fit of a preference model to coded votes: the fixed-effects scoring fit or the engine's GLMM,
chosen by the specification; refits (null models, bootstrap resamples, profiles) go through here too."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..errors import InputError
from ..mixed._glmm_result import GlmerResult
from ._design import DifferenceDesign, difference_design
from ._fixed import FixedFit, fit_fixed, outcome_model
from ._log import VoteLog
from ._mixed import fit_mixed, random_terms
from ._ordinal_mixed import fit_ordinal_mixed, varcorr_table

__all__ = ["Spec", "ModelFit", "fit_model", "prepare_votes", "recoding", "refit_quietly", "without"]


@dataclass(frozen=True)
class Spec:
    """What is modelled: tie model, position bias, random-effects terms, constraint, abilities or not."""

    ties: str
    position: str
    random: tuple[str, ...]
    reference: int | None
    abilities: bool = True

    @property
    def mixed(self) -> bool:
        return self.position == "random" or bool(self.random)


@dataclass(frozen=True)
class ModelFit:
    """The numbers of one fit: coefficients of the design's columns and their covariance, the tie parameter,
    the log-likelihood and the underlying fit (a :class:`FixedFit` or the engine's :class:`GlmerResult`; the
    engine's coefficients are in reference coding, the first system's ability 0, when the abilities sum to 0:
    ``beta`` and ``cov`` here are in ``design``'s coding, :func:`recoding`)."""

    spec: Spec
    design: DifferenceDesign = field(repr=False)
    beta: np.ndarray = field(repr=False)
    cov: np.ndarray = field(repr=False)
    phi: float
    phi_se: float
    loglik: float
    converged: bool
    fixed: FixedFit | None = field(default=None, repr=False)
    glmm: GlmerResult | None = field(default=None, repr=False)
    theta: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    varcorr: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def n_params(self) -> int:
        return int(self.beta.size + (0 if np.isnan(self.phi) else 1) + self.theta.size)


def prepare_votes(log: VoteLog, ties: str) -> VoteLog:
    """The votes a tie model uses: without ties for ``"drop"``, all otherwise."""
    if ties == "drop":
        return log.subset(log.outcome != 1)
    return log


def fit_model(log: VoteLog, spec: Spec, *, warn: bool = True, covariance: bool = True) -> ModelFit:
    """Fit ``spec`` to ``log`` (ties already removed for ``ties="drop"``)."""
    log = log.collapse(judge=spec.position == "random" or "system:judge" in spec.random,
                       prompt=any(t in spec.random for t in ("prompt", "system:prompt")))
    design = difference_design(log, reference=spec.reference, position=spec.position != "none",
                               abilities=spec.abilities, sparse=spec.mixed)
    if spec.mixed:
        if spec.ties == "davidson":
            raise InputError(
                "ties='davidson' takes no random effects (position='random' or random=...): Davidson's tie "
                "probability, P(a) : P(tie) : P(b) = e^(eta/2) : nu : e^(-eta/2), is neither a GLMM family nor a "
                "cumulative link, the two forms mixeval's random-effects engines integrate. Use ties='ordinal' (the "
                "cumulative-logit tie model, fitted with random effects as ordinal::clmm) or ties='drop'.")
        if spec.ties == "ordinal":
            return _fit_ordinal_mixed(log, spec, design)
        re = random_terms(log, spec.random, spec.position)
        engine = design if spec.reference is not None or not spec.abilities else difference_design(
            log, reference=0, position=spec.position != "none", sparse=True)
        glmm = fit_mixed(log, engine, re, warn=warn)
        t = recoding(engine, design)
        beta, cov = t @ np.asarray(glmm.coef, dtype=float), t @ np.asarray(glmm.cov_coef) @ t.T
        return ModelFit(spec=spec, design=design, beta=beta, cov=0.5 * (cov + cov.T), phi=float("nan"),
                        phi_se=float("nan"), loglik=float(glmm.loglik), converged=bool(glmm.converged), glmm=glmm,
                        theta=np.asarray(glmm.theta, dtype=float), varcorr=glmm.varcorr)
    model = outcome_model(spec.ties)
    fixed = fit_fixed(model, design.X, log.outcome, log.count, warn=warn, covariance=covariance)
    p = design.p
    phi_se = float(np.sqrt(fixed.cov[p, p])) if model.n_phi else float("nan")
    return ModelFit(spec=spec, design=design, beta=fixed.beta, cov=fixed.cov[:p, :p], phi=fixed.phi, phi_se=phi_se,
                    loglik=fixed.loglik, converged=fixed.converged, fixed=fixed)


def _fit_ordinal_mixed(log: VoteLog, spec: Spec, design: DifferenceDesign) -> ModelFit:
    """The ordinal tie model with random effects (:mod:`._ordinal_mixed`), one row per vote."""
    votes = log.expand()
    dense = difference_design(votes, reference=spec.reference, position=spec.position != "none",
                              abilities=spec.abilities)
    re = random_terms(votes, spec.random, spec.position)
    fit = fit_ordinal_mixed(votes, dense, re)
    return ModelFit(spec=spec, design=design, beta=fit.beta, cov=fit.cov, phi=fit.tau, phi_se=fit.tau_se,
                    loglik=fit.loglik, converged=fit.converged, theta=fit.theta, varcorr=varcorr_table(re, fit.theta))


def recoding(source: DifferenceDesign, target: DifferenceDesign) -> np.ndarray:
    """``T`` with ``beta_target = T beta_source`` for two codings of the same abilities (other columns unchanged).

    The engine fits sum-to-zero abilities in reference coding (two nonzeros per row of a sparse ``X``, whose
    ``X' W X`` is then cheap); the abilities ``s = C_source beta`` are centred and re-expressed in the target's
    coding: ``beta_target = C_target^+ (I - 11'/K) C_source beta_source``.
    """
    p, m = target.p, source.n_abilities
    t = np.eye(p)
    if source is target or m == 0:
        return t
    k = source.C.shape[0]
    centre = np.eye(k) - 1.0 / k
    t[:m, :m] = np.linalg.pinv(target.C) @ centre @ source.C
    return t


def refit_quietly(log: VoteLog, spec: Spec, **kwargs) -> ModelFit:
    """:func:`fit_model` with warnings silenced (resamples, null models)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit_model(log, spec, warn=False, **kwargs)


def without(spec: Spec, *, term: str | None = None, abilities: bool = True) -> Spec:
    """``spec`` without a random term (``"judge"`` for the random position bias) or without abilities."""
    if term is None:
        return replace(spec, abilities=abilities)
    if term == "judge":
        return replace(spec, position="fixed")
    return replace(spec, random=tuple(t for t in spec.random if t != term))

