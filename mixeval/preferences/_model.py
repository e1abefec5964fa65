"""One fit of a preference model to coded votes: the fixed-effects scoring fit or the engine's GLMM,
chosen by the specification; refits (null models, bootstrap resamples, profiles) go through here too."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.linalg import null_space

from ..errors import InputError
from ..mixed import GlmerResult
from ._design import DifferenceDesign, difference_design
from ._fixed import FixedFit, fit_fixed, loglik, outcome_model, warn_not_converged
from ._log import VoteLog
from ._mixed import fit_mixed, random_terms
from ._ordinal_mixed import fit_ordinal_mixed, varcorr_table
from ._separation import Separation, describe_separation, find_separation, separated_rows

__all__ = ["Spec", "ModelFit", "fit_model", "prepare_votes", "recoding", "refit_quietly", "without",
           "reduced_design"]


#: the first fit of a log stops where its likelihood flattens (glm's criterion), a separated fit's limit; without
#: separation it is continued to the step criterion from there
FLAT = 1e-10


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
    null: np.ndarray | None = field(default=None, repr=False)
    cov_beta_phi: np.ndarray | None = field(default=None, repr=False)
    tie_infinite: bool = False

    @property
    def null_basis(self) -> np.ndarray:
        """Orthonormal ``p x r`` basis of the directions of ``beta`` the votes do not identify (``r = 0`` unless the
        votes separate, :func:`~._separation.find_separation`): a linear function ``f' beta`` is estimable iff
        ``f`` is orthogonal to it; ``cov`` holds the covariance of the estimable ones."""
        return np.zeros((self.beta.size, 0)) if self.null is None else self.null

    @property
    def cov_joint(self) -> np.ndarray:
        """Covariance of ``(beta, phi)`` (``beta`` alone without a tie parameter)."""
        if np.isnan(self.phi):
            return self.cov
        p = self.beta.size
        out = np.zeros((p + 1, p + 1))
        out[:p, :p] = self.cov
        out[p, p] = self.phi_se ** 2
        if self.cov_beta_phi is not None:
            out[:p, p] = out[p, :p] = self.cov_beta_phi
        return out

    @property
    def n_params(self) -> int:
        return int(self.beta.size + (0 if np.isnan(self.phi) else 1) + self.theta.size)


def prepare_votes(log: VoteLog, ties: str) -> VoteLog:
    """The votes a tie model uses: without ties for ``"drop"``, all otherwise."""
    if ties == "drop":
        return log.subset(log.outcome != 1)
    return log


def fit_model(log: VoteLog, spec: Spec, *, warn: bool = True, covariance: bool = True) -> ModelFit:
    """Fit ``spec`` to ``log`` (ties already removed for ``ties="drop"``).

    A log whose votes separate (:func:`~._separation.find_separation`: by the systems' win graph, the position,
    a covariate) is fitted in the limit: the coefficients along the separation stay where a divergent fit stops,
    the rest is the fit of the votes that are not separated on the complementary coefficients, and
    :attr:`ModelFit.null` marks the unidentified directions. A tie parameter that diverges too leaves every
    direction unidentified (:attr:`ModelFit.tie_infinite`).
    """
    log = log.collapse(judge=spec.position == "random" or "system:judge" in spec.random,
                       prompt=any(t in spec.random for t in ("prompt", "system:prompt")))
    design = difference_design(log, reference=spec.reference, position=spec.position != "none",
                               abilities=spec.abilities, sparse=spec.mixed)
    model = outcome_model(spec.ties)
    if spec.mixed:
        if spec.ties == "davidson":
            raise InputError(
                "ties='davidson' takes no random effects (position='random' or random=...): Davidson's tie "
                "probability, P(a) : P(tie) : P(b) = e^(eta/2) : nu : e^(-eta/2), is neither a GLMM family nor a "
                "cumulative link, the two forms mixeval's random-effects engines integrate. Use ties='ordinal' (the "
                "cumulative-logit tie model, fitted with random effects as ordinal::clmm) or ties='drop'.")
        flat = log.collapse(judge=False, prompt=False)
        X = difference_design(flat, reference=spec.reference, position=spec.position != "none",
                              abilities=spec.abilities).X
        stopped = fit_fixed(model, X, flat.outcome, flat.count, flat=FLAT, warn=False, covariance=False)
        separation = find_separation(model, X, flat.outcome, flat.count, stopped.beta, stopped.phi)
        if separation.tie_infinite:
            return _diverged(spec, design, stopped, True)
        if separation.any:
            return _separated_mixed(log, spec, design, separation, stopped, warn=warn)
        if spec.ties == "ordinal":
            return _fit_ordinal_mixed(log, spec, design)
        return _fit_binomial_mixed(log, spec, design, warn=warn)
    stopped = fit_fixed(model, design.X, log.outcome, log.count, flat=FLAT, warn=False, covariance=False)
    separation = find_separation(model, design.X, log.outcome, log.count, stopped.beta, stopped.phi)
    if separation.any:
        return _limit_fit(log, spec, design, model, stopped, separation, warn=warn, covariance=covariance)
    fixed = fit_fixed(model, design.X, log.outcome, log.count, beta0=stopped.beta,
                      phi0=stopped.phi if model.n_phi else None, warn=False, covariance=covariance)
    fixed = replace(fixed, iterations=stopped.iterations + fixed.iterations)
    if warn and not fixed.converged:
        warn_not_converged()
    p = design.p
    phi_se = float(np.sqrt(fixed.cov[p, p])) if model.n_phi else float("nan")
    return ModelFit(spec=spec, design=design, beta=fixed.beta, cov=fixed.cov[:p, :p], phi=fixed.phi, phi_se=phi_se,
                    loglik=fixed.loglik, converged=fixed.converged, fixed=fixed,
                    cov_beta_phi=fixed.cov[:p, p] if model.n_phi else None)


def _diverged(spec: Spec, design: DifferenceDesign, stopped: FixedFit, tie_infinite: bool) -> ModelFit:
    """A fit none of whose coefficients the votes identify (every vote separated, or the tie parameter infinite
    with them): where the divergent fit ``stopped``, every direction unidentified."""
    p = design.p
    return ModelFit(spec=spec, design=design, beta=stopped.beta, cov=np.zeros((p, p)), phi=stopped.phi,
                    phi_se=float("inf") if stopped.model.n_phi else float("nan"), loglik=stopped.loglik,
                    converged=True, fixed=stopped, null=np.eye(p), tie_infinite=tie_infinite)


def _fit_binomial_mixed(log: VoteLog, spec: Spec, design: DifferenceDesign, *, warn: bool,
                        reduced: tuple[DifferenceDesign, np.ndarray] | None = None) -> ModelFit:
    """The binomial GLMM (:mod:`._mixed`); ``reduced``: a design on fewer coefficients ``gamma`` and the basis
    ``B`` with ``beta = B gamma`` (a separated log's votes within components)."""
    re = random_terms(log, spec.random, spec.position)
    if reduced is not None:
        engine = reduced[0]
    elif spec.reference is not None or not spec.abilities:
        engine = design
    else:  # sum-to-zero abilities: fitted in reference coding and recoded
        engine = difference_design(log, reference=0, position=spec.position != "none", sparse=True)
    glmm = fit_mixed(log, engine, re, warn=warn)
    t = reduced[1] if reduced is not None else recoding(engine, design)
    beta, cov = t @ np.asarray(glmm.coef, dtype=float), t @ np.asarray(glmm.cov_coef) @ t.T
    return ModelFit(spec=spec, design=design, beta=beta, cov=0.5 * (cov + cov.T), phi=float("nan"),
                    phi_se=float("nan"), loglik=float(glmm.loglik), converged=bool(glmm.converged), glmm=glmm,
                    theta=np.asarray(glmm.theta, dtype=float), varcorr=glmm.varcorr)


def _fit_ordinal_mixed(log: VoteLog, spec: Spec, design: DifferenceDesign,
                       null: np.ndarray | None = None) -> ModelFit:
    """The ordinal tie model with random effects (:mod:`._ordinal_mixed`), one row per vote; with ``null``, on
    the coefficients orthogonal to it (:func:`reduced_design`)."""
    votes = log.expand()
    dense = difference_design(votes, reference=spec.reference, position=spec.position != "none",
                              abilities=spec.abilities)
    basis = np.eye(dense.p)
    if null is not None:
        dense, basis = reduced_design(dense, null)
    re = random_terms(votes, spec.random, spec.position)
    fit = fit_ordinal_mixed(votes, dense, re)
    cov = basis @ fit.cov @ basis.T
    return ModelFit(spec=spec, design=design, beta=basis @ fit.beta, cov=0.5 * (cov + cov.T), phi=fit.tau,
                    phi_se=fit.tau_se, loglik=fit.loglik, converged=fit.converged, theta=fit.theta,
                    varcorr=varcorr_table(re, fit.theta), cov_beta_phi=basis @ fit.cov_beta_tau)


def reduced_design(design: DifferenceDesign, null: np.ndarray) -> tuple[DifferenceDesign, np.ndarray]:
    """``design`` on the coefficients ``gamma`` orthogonal to the ability directions ``null`` (``beta = B gamma``,
    ``B`` returned): ability columns ``X_s B_s`` (``B_s`` an orthonormal basis of the complement), the position and
    covariate columns unchanged; its ``C B_s`` maps ``gamma`` to abilities."""
    m = design.n_abilities
    b_s = null_space(null[:m].T)
    basis = np.zeros((design.p, b_s.shape[1] + design.p - m))
    basis[:m, :b_s.shape[1]] = b_s
    basis[m:, b_s.shape[1]:] = np.eye(design.p - m)
    X = design.X @ (sp.csr_matrix(basis) if sp.issparse(design.X) else basis)
    names = tuple(f"contrast{k + 1}" for k in range(b_s.shape[1])) + tuple(design.names[m:])
    return DifferenceDesign(X=sp.csr_matrix(X) if sp.issparse(design.X) else X, names=names, C=design.C @ b_s,
                            n_abilities=b_s.shape[1]), basis


def _separated_mixed(log: VoteLog, spec: Spec, design: DifferenceDesign, separation: Separation,
                     stopped: FixedFit, *, warn: bool) -> ModelFit:
    """A random-effects model of a log whose systems separate, in the limit: the same model fitted to the votes
    that are not separated on the coefficients that do not move the separated groups apart, the others left
    where the divergent fixed-effects fit ``stopped`` (their estimates infinite). A separation through the
    position bias or a covariate is refused: the random effects would sit on an infinite mean."""
    null = separation.null
    m = design.n_abilities
    if np.any(np.abs(null[m:]) > 1e-8):
        parts = describe_separation(null, design, log.systems)
        raise InputError(
            f"separation through {parts}: some votes are won without exception by the side favoured there, so "
            "these estimates are infinite, and a random-effects model cannot be fitted in that limit (its random "
            "deviations would sit on an infinite mean). Fit without random effects (position='fixed', no "
            "random=...), which reports the separated terms with infinite standard errors, or collect votes that "
            "break the pattern.")
    within = log.subset(~separated_rows(design.X, null))
    if within.n_votes == 0:
        raise InputError("separation: no two systems both beat and lost to each other (directly or through others), "
                         "so no vote carries information beyond the order of the systems; a random-effects model "
                         "cannot be fitted. Collect more votes or fit without random effects.")
    gap = null @ (null.T @ stopped.beta)
    if spec.ties == "ordinal":
        fit = _fit_ordinal_mixed(within, spec, design, null)
    else:
        sub = difference_design(within, reference=spec.reference, position=spec.position != "none", sparse=True)
        fit = _fit_binomial_mixed(within, spec, design, warn=warn, reduced=reduced_design(sub, null))
    return replace(fit, beta=fit.beta + gap, null=null)


def _limit_fit(log: VoteLog, spec: Spec, design: DifferenceDesign, model, stopped: FixedFit, separation: Separation,
               *, warn: bool, covariance: bool) -> ModelFit:
    """The fit of a separated log: the directions the votes that are not separated do not identify (``N``) are
    left where the divergent fit ``stopped`` (their likelihood still rising, their estimates infinite); every
    other direction is the maximum-likelihood fit of the limit model, the votes that are not separated (the
    others are won with probability 1 in the limit), on the coefficients ``gamma = B' beta`` (``B`` the orthogonal
    complement of ``N``). ``cov`` is ``B Cov(gamma) B'``, the covariance of the estimable functions."""
    null = separation.null
    X = np.asarray(design.X, dtype=float)
    within = ~separated_rows(X, null) & (log.count > 0)
    if separation.tie_infinite or not within.any():
        return _diverged(spec, design, stopped, separation.tie_infinite)
    basis = null_space(null.T) if null.shape[1] else np.eye(design.p)
    p = design.p
    sub = fit_fixed(model, X[within] @ basis, log.outcome[within], log.count[within], beta0=basis.T @ stopped.beta,
                    phi0=stopped.phi if model.n_phi else None, warn=warn, covariance=covariance)
    beta = null @ (null.T @ stopped.beta) + basis @ sub.beta
    q = basis.shape[1]
    cov = basis @ sub.cov[:q, :q] @ basis.T
    phi_se = float(np.sqrt(sub.cov[q, q])) if model.n_phi else float("nan")
    y = np.zeros((3, log.n_rows))
    y[log.outcome, np.arange(log.n_rows)] = log.count
    ll = loglik(model, X, y, beta, sub.phi if model.n_phi else 0.0)
    fixed = FixedFit(model=model, beta=beta, phi=sub.phi, cov=np.full((p + model.n_phi,) * 2, np.nan), loglik=ll,
                     converged=sub.converged, iterations=stopped.iterations + sub.iterations)
    return ModelFit(spec=spec, design=design, beta=beta, cov=0.5 * (cov + cov.T), phi=sub.phi, phi_se=phi_se,
                    loglik=ll, converged=sub.converged, fixed=fixed, null=null,
                    cov_beta_phi=basis @ sub.cov[:q, q] if model.n_phi else None)


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

