"""Satterthwaite degrees of freedom of linear functions of a GLMM's fixed effects (link scale).

emmeans gives asymptotic z intervals for glmer fits. Their standard error contains variance components
estimated from few levels (5 seeds, 3 prompt templates), and the normal quantile ignores that uncertainty:
accuracy intervals undercover. The Satterthwaite approximation of the linearised model (SAS/STAT PROC
GLIMMIX, ``DDFM=SATTERTHWAITE``, also for ``METHOD=LAPLACE``; chapter "The GLIMMIX Procedure", section
"Satterthwaite Degrees of Freedom Approximation") gives each linear function ``l' beta`` the degrees of
freedom of a scaled chi-square matching the first two moments of its estimated variance:

    df = 2 V^2 / (g' A g),   V = l' Phi l,   g_j = d (l' Phi(theta) l) / d theta_j,

with ``Phi(theta) = (X' (W^-1 + Z Lambda(theta) Lambda(theta)' Z')^-1 X)^-1`` the covariance of the fixed
effects of the linearised model (working weights ``W`` at the fitted means held fixed: lme4's RX-based
``vcov``) and ``A`` the asymptotic covariance of ``theta-hat``: the ``theta`` block of ``2 H^-1``, ``H`` the
Hessian of the Laplace deviance over ``(theta, beta)``. It is the construction of lmerTest's Satterthwaite
for ``lmer`` fits (:mod:`mixeval.significance._ddf`) with the GLMM's working residual covariance ``W^-1`` in
place of ``sigma^2 I``.

A scalar component estimated at 0 (``theta < 1e-4``) is not held fixed, as lmerTest does: the criterion is
even in ``theta``, so in ``theta`` its gradient and its contribution vanish, an artefact of the
parametrisation; in the variance ``v = theta^2`` the criterion has a positive curvature at 0 (usually) and
``Phi`` a non-zero slope, so the variance estimated from 3 seeds still carries its sampling uncertainty
into the df. ``A`` and the slopes then come from finite differences in ``(theta_free, v_boundary)``, forward
in ``v``. Where the criterion is concave in ``v`` at 0 the component is held fixed (holding every boundary
component fixed covered less in the simulation study).

The coverage of these intervals on binary designs is measured by simulation (the documentation's method
notes): Satterthwaite's df narrow, but do not
close, the gap of z intervals when a variance comes from few levels; ``Study(..., family=,
df="satterthwaite")`` uses them (the Study default is z, emmeans').
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..mixed import MixedResult
from ._satterthwaite import satterthwaite_df, satterthwaite_upper_df

__all__ = ["GlmmDdfPieces", "glmm_ddf_pieces", "is_glmm", "BOUNDARY_THETA"]

#: Relative standard deviations below this are on the boundary and held fixed (lme4's singularity tolerance).
BOUNDARY_THETA = 1e-4

#: Relative step of the central differences of ``Phi(theta)``.
FD_STEP = 1e-4


def is_glmm(fit: object) -> bool:
    """Whether ``fit`` is a mixed model whose family fixes the residual variance (binomial, Poisson: the
    linearised model's df), rather than a linear mixed model."""
    return isinstance(fit, MixedResult) and not fit.family.estimates_scale


@dataclass(frozen=True)
class GlmmDdfPieces:
    """What the Satterthwaite df of a GLMM needs, computed once per fit.

    Attributes
    ----------
    vcov : ndarray, shape (p, p)
        The covariance of the fixed effects used for the standard errors (``fit.cov_coef``).
    jacobian : ndarray, shape (k, p, p)
        ``d Phi / d theta_j`` for the ``k`` free covariance parameters (central differences).
    theta_cov : ndarray, shape (k, k)
        Asymptotic covariance ``A`` of the free ``theta``.
    free : ndarray of int
        Indices of the free covariance parameters in ``fit.theta``.
    component_df : ndarray, shape (k,)
        Levels minus one of each free parameter's grouping factor (for ``"satterthwaite-upper"``).
    """

    vcov: np.ndarray = field(repr=False)
    jacobian: np.ndarray = field(repr=False)
    theta_cov: np.ndarray = field(repr=False)
    free: np.ndarray = field(repr=False)
    component_df: np.ndarray = field(repr=False)

    def variance(self, L: np.ndarray) -> np.ndarray:
        """``l' V l`` for each row ``l`` of ``L``."""
        L = np.atleast_2d(np.asarray(L, dtype=float))
        return np.einsum("ij,jk,ik->i", L, self.vcov, L)

    def gradient(self, L: np.ndarray) -> np.ndarray:
        """``g_ij = l_i' (d Phi / d theta_j) l_i``, shape (rows of L, k)."""
        L = np.atleast_2d(np.asarray(L, dtype=float))
        return np.einsum("ia,jab,ib->ij", L, self.jacobian, L)

    def df_satterthwaite(self, L: np.ndarray) -> np.ndarray:
        """Satterthwaite degrees of freedom ``2 V^2 / (g' A g)`` of each row of ``L``.

        ``inf`` when no free covariance parameter enters (``g' A g = 0``: e.g. every component on the
        boundary), NaN for a zero row.
        """
        return satterthwaite_df(self.variance(L), self.gradient(L), self.theta_cov)

    def df_satterthwaite_upper(self, L: np.ndarray) -> np.ndarray:
        """Satterthwaite df with each component's part of the variance at its upper bound
        (:func:`mixeval.significance._satterthwaite.satterthwaite_upper_df`)."""
        return satterthwaite_upper_df(self.variance(L), self.gradient(L), self.theta_cov, self.component_df)


def glmm_ddf_pieces(fit: MixedResult) -> GlmmDdfPieces:
    """Satterthwaite pieces of a GLMM fit (cached per fit): ``Phi``'s Jacobian in ``theta`` and ``A``.

    Parameters
    ----------
    fit : GlmerResult
        A fit from :func:`mixeval.glmer`.

    Returns
    -------
    GlmmDdfPieces

    Notes
    -----
    ``Phi(theta)`` is the joint penalised system's fixed-effects block at the fit's working weights
    (:meth:`~mixeval.mixed.GlmerResult.beta_covariance_at`), differentiated by central differences with step
    ``1e-4 max(|theta_j|, 1e-3)``. ``A`` is the ``theta`` block of ``(H_ff / 2)^-1``, ``H_ff`` the Hessian
    of the deviance over the free ``theta``, ``beta`` and the family's parameters (recovered from
    ``fit.cov_params = 2 H^-1``, or computed by central differences when the fit has none, e.g. ``nAGQ = 0``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import glmer
    >>> rng = np.random.default_rng(1)
    >>> d = pd.DataFrame([(i, s) for i in range(40) for s in range(5)], columns=["item", "seed"])
    >>> eta = 0.5 + rng.normal(size=40)[d.item] + rng.normal(0, 0.5, size=5)[d.seed]
    >>> d["correct"] = (rng.random(len(d)) < 1 / (1 + np.exp(-eta))).astype(int)
    >>> pieces = glmm_ddf_pieces(glmer("correct ~ 1 + (1|item) + (1|seed)", d))
    >>> df = pieces.df_satterthwaite(np.array([[1.0]]))
    >>> bool(1 < df[0] < 40)  # close to the 5 seeds' 4 df, far from the z interval's inf
    True
    """
    if not is_glmm(fit):
        raise InputError("GLMM Satterthwaite degrees of freedom need a fit from mixeval.glmer().")
    key = id(fit)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] is fit:
        return cached[1]
    free, bnd = free_theta(fit), boundary_variances(fit)
    theta_cov = None
    if bnd.size:
        theta_cov, bnd = mixed_covariance(fit, free, bnd)
    if bnd.size:
        jacobian = np.concatenate([phi_jacobian(fit, free), variance_jacobian(fit, bnd)])
    else:
        jacobian, theta_cov = phi_jacobian(fit, free), theta_covariance(fit, free)
    order = np.concatenate([free, bnd]).astype(int)
    pieces = GlmmDdfPieces(vcov=np.asarray(fit.cov_coef, dtype=float), jacobian=jacobian, theta_cov=theta_cov,
                           free=order, component_df=levels_minus_one(fit)[order])
    if len(_CACHE) >= 8:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (fit, pieces)
    return pieces


_CACHE: dict[int, tuple[object, GlmmDdfPieces]] = {}


def levels_minus_one(fit: MixedResult) -> np.ndarray:
    """For each element of ``fit.theta``: the number of levels of its term's grouping factor minus one."""
    return np.concatenate([np.full(t.n_theta, max(t.n_levels - 1, 1), dtype=float) for t in fit.model_terms])


def free_theta(fit: MixedResult) -> np.ndarray:
    """Indices of the covariance parameters not on the boundary (``theta >= 1e-4`` where bounded below by 0)."""
    theta = np.asarray(fit.theta, dtype=float)
    return np.flatnonzero(~((fit.theta_lower == 0) & (np.abs(theta) < BOUNDARY_THETA)))


#: step in a boundary component's variance ``v = theta^2`` (latent scale) for its finite differences
FD_VARIANCE = 1e-3


def boundary_variances(fit: MixedResult) -> np.ndarray:
    """Indices in ``fit.theta`` of the scalar terms whose standard deviation is on the boundary (``< 1e-4``)."""
    theta = np.asarray(fit.theta, dtype=float)
    out, pos = [], 0
    for term in fit.model_terms:
        if term.n_theta == 1 and abs(theta[pos]) < BOUNDARY_THETA:
            out.append(pos)
        pos += term.n_theta
    return np.array(out, dtype=int)


def _theta_of(theta: np.ndarray, bnd: np.ndarray, v: np.ndarray) -> np.ndarray:
    t = np.asarray(theta, dtype=float).copy()
    t[bnd] = np.sqrt(np.maximum(v, 0.0))
    return t


def variance_jacobian(fit: MixedResult, bnd: np.ndarray) -> np.ndarray:
    """``d Phi / d v_j`` at ``v_j = 0`` for the boundary components (forward differences in ``v = theta^2``)."""
    theta = np.asarray(fit.theta, dtype=float)
    base = fit.beta_covariance_at(_theta_of(theta, bnd, np.zeros(bnd.size)))
    out = np.empty((bnd.size, *base.shape))
    for i in range(bnd.size):
        v = np.zeros(bnd.size)
        v[i] = FD_VARIANCE
        out[i] = (fit.beta_covariance_at(_theta_of(theta, bnd, v)) - base) / FD_VARIANCE
    return out


def mixed_covariance(fit: MixedResult, free: np.ndarray, bnd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Asymptotic covariance of ``(theta_free, v_boundary)``: ``2 H^-1`` of the criterion in that parametrisation.

    The criterion is even in a standard deviation at 0, so its information there vanishes in ``theta`` but not
    in the variance ``v = theta^2``. ``H`` is the fit's :meth:`~mixeval.mixed.GlmerResult.criterion_hessian` with
    the boundary components in ``v`` (forward differences, as ``v`` cannot go below 0): over the free ``theta``,
    the fixed effects (of an ML fit; a restricted criterion has integrated them out) and the family's parameters
    (a dispersion, cutpoints: estimated with the variance parameters, their uncertainty is part of ``theta``'s).
    A boundary variance whose curvature is not positive (the criterion is concave in ``v`` at 0: the observed
    information says nothing there) is held fixed. Returns the covariance and the boundary indices kept.
    """
    H = fit.criterion_hessian(variance=bnd)
    bnd = bnd[np.diag(H)[bnd] > 0]
    if not bnd.size:
        return np.zeros((free.size, free.size)), bnd
    k = np.asarray(fit.theta).size
    keep = np.concatenate([free, bnd, np.arange(k, H.shape[0])]).astype(int)
    Hk = H[np.ix_(keep, keep)]
    inv = np.linalg.inv(Hk) if np.all(np.linalg.eigvalsh(Hk) > 0) else np.linalg.pinv(Hk)
    n = free.size + bnd.size
    A = 2.0 * inv[:n, :n]
    return 0.5 * (A + A.T), bnd


def phi_jacobian(fit: MixedResult, free: np.ndarray) -> np.ndarray:
    """``d Phi / d theta_j`` for the free ``theta_j``, by central differences of
    :meth:`~mixeval.mixed.GlmerResult.beta_covariance_at`."""
    theta = np.asarray(fit.theta, dtype=float)
    p = len(fit.coef)
    out = np.empty((len(free), p, p))
    for i, j in enumerate(free):
        h = FD_STEP * max(abs(theta[j]), 1e-3)
        up, down = theta.copy(), theta.copy()
        up[j] += h
        down[j] -= h
        out[i] = (fit.beta_covariance_at(up) - fit.beta_covariance_at(down)) / (2 * h)
    return out


def theta_covariance(fit: MixedResult, free: np.ndarray) -> np.ndarray:
    """Asymptotic covariance of the free ``theta``: the ``theta`` block of ``2 H_ff^-1`` (the fixed effects and
    the family's parameters estimated with them)."""
    k = np.asarray(fit.theta).size
    H = deviance_hessian(fit)
    keep = np.concatenate([free, np.arange(k, H.shape[0])])
    Hf = H[np.ix_(keep, keep)]
    eig = np.linalg.eigvalsh(Hf)
    inv = np.linalg.inv(Hf) if np.min(np.abs(eig)) > 1e-10 * max(1.0, np.max(np.abs(eig))) else np.linalg.pinv(Hf)
    A = 2.0 * inv[: free.size, : free.size]
    return 0.5 * (A + A.T)


def deviance_hessian(fit: MixedResult) -> np.ndarray:
    """Hessian of the criterion over the fit's parameters ``theta`` first (then ``beta`` and the family's
    parameters): ``2 cov_params^-1``, or the fit's :meth:`~mixeval.mixed.GlmerResult.criterion_hessian`."""
    cov = getattr(fit, "cov_params", None)
    if cov is not None:
        H = 2.0 * np.linalg.inv(np.asarray(cov, dtype=float))
        return 0.5 * (H + H.T)
    return fit.criterion_hessian()
