"""What a fitted mixed model offers the uncertainty tools (profile, parametric bootstrap, power).

Every interval and simulation in :mod:`mixeval.uncertainty` is written against the small
interface :class:`FitModel`; :class:`LmmFitModel` implements it for the linear mixed models with
random intercepts of :func:`mixeval.lmer`, ``SlopeFitModel`` (:mod:`._slopes_model`) for those with random
slopes, :class:`~mixeval.uncertainty.GlmmFitModel` (``_glmm_model.py``) for :func:`mixeval.glmer`. Another fit
joins by implementing the same members (see the class docstring); nothing else in this package looks inside
a fit.

Parameter names and order are lme4's ``confint(..., oldNames = FALSE)``: the standard deviations
``"sd_(Intercept)|group"`` (and correlations ``"cor_x.(Intercept)|group"``) term by term, then
``"sigma"``, then the fixed effects.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from ..errors import InputError
from ..mixed import LmerResult
from ..mixed._deviance import deviance_parts
from ..mixed._fit import fit_from_stats
from ..mixed._stats import SufficientStats
from ._dense import DENSE_MAX_LEVELS, DenseDesign, ResponseSums

try:  # the engine keeps its BLAS limiter in mixed/_blas.py on newer trees, in mixed/_fit.py before
    from ..mixed._blas import single_threaded_blas
except ImportError:  # pragma: no cover - depends on the engine version
    from ..mixed._fit import single_threaded_blas

__all__ = ["FitModel", "LmmFitModel", "RefitSummary"]

_LOG_2PI = float(np.log(2.0 * np.pi))


@dataclass(frozen=True)
class RefitSummary:
    """The numbers of one refit that the uncertainty tools use (cheap to keep by the thousand).

    Attributes
    ----------
    params : ndarray
        Parameters in :attr:`FitModel.param_names` order (standard deviations/correlations, sigma,
        fixed effects).
    variances : dict
        ``{group: variance}`` with ``"Residual"`` (the input of :mod:`mixeval.reliability`).
    cov_coef : ndarray
        Covariance matrix of the fixed effects.
    criterion : float
        ``-2 log L`` (REML criterion or ML deviance) of the refit.
    singular : bool

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import lmer
    >>> from mixeval.uncertainty import as_fit_model
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(15), 4)
    >>> df = pd.DataFrame({"g": g, "y": rng.normal(size=15)[g] + rng.normal(size=60)})
    >>> fit = lmer("y ~ 1 + (1|g)", df)
    >>> model = as_fit_model(fit)
    >>> r = model.refit(model.simulate(1, np.random.default_rng(1)))[0]
    >>> sorted(r.variances)
    ['Residual', 'g']
    """

    params: np.ndarray
    variances: dict
    cov_coef: np.ndarray
    criterion: float
    singular: bool


@runtime_checkable
class FitModel(Protocol):
    """The interface of a fit that the profile, the parametric bootstrap and the power simulation use.

    Attributes
    ----------
    varpar_names : tuple of str
        Variance parameters: lme4's ``sd_*``/``cor_*`` names, then ``"sigma"``.
    varpar_kinds : tuple of str
        ``"sd"``, ``"cor"`` or ``"sigma"`` per variance parameter (the profile's bounds: sd >= 0,
        -1 < cor < 1, sigma > 0).
    fixed_names : tuple of str
    nobs : int

    Methods
    -------
    ml_estimates() -> (varpar, beta, deviance)
        The maximum-likelihood estimates (lme4 profiles the ML fit even for a REML fit) and the
        minimum ML deviance.
    ml_deviance(varpar) -> float
        The ML deviance with the fixed effects profiled out and the variance parameters (sd, cor, sigma)
        held at ``varpar`` (lme4's ``devfun2``).
    ml_deviance_fixed(j, value) -> float
        The ML deviance minimised over everything but the fixed effect ``j``, held at ``value``.
    simulate(n_sim, rng) -> ndarray (nobs, n_sim)
        Responses drawn from the fitted model (new random effects and residuals; lme4's
        ``simulate(use.u = FALSE)``).
    refit(Y, reml) -> list of RefitSummary
        The model re-estimated on each column of ``Y`` (same design, new response).
    refit_result(y, reml) -> LmerResult
        A full fit on one new response (for user statistics).
    ml_deviance_and_gradient(varpar) -> (float, ndarray), optional
        :meth:`ml_deviance` with its gradient (the profile uses finite differences without it).
    profile_varpar(index, value, start) -> (float, ndarray) or None, optional
        The ML deviance minimised over the other variance parameters with ``varpar[index] = value``, and the
        minimising ``varpar``, in the fit's own coordinates (random slopes: over theta); None to leave it to
        the profile's optimisation over ``varpar``.
    estimates() -> ndarray, param_names, fit
        The fit's own parameters (as fitted, REML or ML) in ``param_names`` order, and the fit itself (for
        the statistic of the original data in :func:`~mixeval.uncertainty.bootstrap_fit`).
    profiler() -> profile evaluator, optional
        The model's own evaluator of the profile zeta (``zeta(name, value)``, ``step(i)``, ``reset()``), used
        by :func:`~mixeval.uncertainty.profile_intervals` instead of the linear mixed model's (GLMMs:
        every parameter profiled jointly over all the others).
    wald_intervals(level) -> dict, optional
        The model's own Wald intervals (used by :func:`~mixeval.uncertainty.wald_intervals`).

    Notes
    -----
    Random slopes: ``varpar`` holds lme4's sd's and correlations per term (``Sv``); the deviance maps them
    to theta (the Cholesky factor of the correlation-scaled covariance over sigma, lme4's ``Sv_to_Cv``) and
    evaluates ``log|A(theta)| + r2(theta) / sigma^2 + n log(2 pi sigma^2)``. GLMMs have no sigma
    (``varpar_kinds`` without ``"sigma"``) and, as lme4's ``devfun2`` for GLMMs, their deviance at given
    variance parameters must be minimised over the fixed effects inside ``ml_deviance``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import lmer
    >>> from mixeval.uncertainty import as_fit_model
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(15), 4)
    >>> df = pd.DataFrame({"g": g, "y": rng.normal(size=15)[g] + rng.normal(size=60)})
    >>> fit = lmer("y ~ 1 + (1|g)", df)
    >>> isinstance(as_fit_model(fit), FitModel)
    True
    """

    varpar_names: tuple[str, ...]
    varpar_kinds: tuple[str, ...]
    fixed_names: tuple[str, ...]
    nobs: int

    def ml_estimates(self) -> tuple[np.ndarray, np.ndarray, float]: ...

    def ml_deviance(self, varpar: np.ndarray) -> float: ...

    def ml_deviance_and_gradient(self, varpar: np.ndarray) -> tuple[float, np.ndarray]:
        """:meth:`ml_deviance` and its gradient in ``varpar`` (optional; see the class docstring)."""
        ...

    def ml_deviance_fixed(self, j: int, value: float) -> float: ...

    def simulate(self, n_sim: int, rng: np.random.Generator) -> np.ndarray: ...

    def refit(self, Y: np.ndarray, reml: bool) -> list[RefitSummary]: ...


def _indicator(codes: np.ndarray, n_levels: int) -> sp.csr_matrix:
    """``Z_k'`` of a random intercept: ``n_levels x n`` 0/1 matrix."""
    n = codes.size
    return sp.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(n_levels, n))


class LmmFitModel:
    """:class:`FitModel` of a random-intercept linear mixed model (:class:`mixeval.mixed.LmerResult`).

    Parameters
    ----------
    fit : LmerResult
        A fit with its rows (fits from aggregates have no rows to simulate from and are refused).

    Notes
    -----
    With ``theta_k = sd_k / sigma`` and the penalised residual sum of squares ``r2(theta)`` (fixed effects
    and spherical random effects at their conditional optimum), the ML deviance at given variance
    parameters is ``log|A(theta)| + r2(theta) / sigma^2 + n log(2 pi sigma^2)`` (lme4's ``devfun2``).
    A new response changes only the response column of the sufficient statistics
    (``Z'y``, ``X'y``, ``y'y``); ``Z'Z``, ``Z'X`` and ``X'X`` are reused, so a refit never passes over the
    rows again, and a block of simulated responses gets its statistics from one sparse product.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import lmer
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(15), 4)
    >>> df = pd.DataFrame({"g": g, "y": rng.normal(size=15)[g] + rng.normal(size=60)})
    >>> fit = lmer("y ~ 1 + (1|g)", df)
    >>> LmmFitModel(fit).param_names
    ('sd_(Intercept)|g', 'sigma', '(Intercept)')
    """

    def __init__(self, fit: LmerResult) -> None:
        if not isinstance(fit, LmerResult):
            raise InputError(f"expected a fitted model (mixeval.lmer); got {type(fit).__name__}.")
        if len(np.atleast_1d(fit.theta)) != len(fit.group_names):
            raise InputError("LmmFitModel is for random-intercept fits; this fit has random slopes: use "
                             "as_fit_model(fit), which returns its SlopeFitModel.")
        if fit.design.X is None:
            raise InputError("this fit was made from aggregates (no rows): simulation and refits need the rows; "
                             "fit a pandas DataFrame with mixeval.lmer.")
        self.fit = fit
        self.design = fit.design
        stats = fit.stats
        if getattr(fit, "scaling", None) is not None:  # engines that fit a centred, scaled copy: the data as given
            from ..mixed import compute_stats

            stats = compute_stats(fit.design)
        if getattr(stats, "coef_shift", None) is not None:  # statistics of a centred response: use the response's own
            stats = stats.uncentred()
        self.stats: SufficientStats = stats
        self.reml = fit.reml
        self.nobs = fit.nobs
        self.fixed_names = tuple(fit.fixed_names)
        self.group_names = tuple(fit.group_names)
        self.varpar_names = tuple(f"sd_(Intercept)|{g}" for g in self.group_names) + ("sigma",)
        self.varpar_kinds = ("sd",) * len(self.group_names) + ("sigma",)
        self.param_names = self.varpar_names + self.fixed_names

    # ------------------------------------------------------------------ estimates
    def estimates(self) -> np.ndarray:
        """The fit's own parameters (REML or ML as fitted) in :attr:`param_names` order."""
        return np.concatenate([self.fit.sigma * self.fit.theta, [self.fit.sigma], self.fit.coef])

    @cached_property
    def _ml_fit(self) -> LmerResult:
        return self.fit if not self.reml else self.fit.refit(REML=False)

    def ml_estimates(self) -> tuple[np.ndarray, np.ndarray, float]:
        ml = self._ml_fit
        return np.append(ml.sigma * ml.theta, ml.sigma), ml.coef.copy(), float(ml.criterion)

    # ------------------------------------------------------------------ deviances
    def ml_deviance(self, varpar: np.ndarray) -> float:
        varpar = np.asarray(varpar, dtype=float)
        sigma = float(varpar[-1])
        if not sigma > 0:
            return float("inf")
        return _ml_deviance_at(self.stats, varpar[:-1] / sigma, sigma)

    def stats_with_fixed(self, j: int, value: float) -> SufficientStats:
        """Sufficient statistics of the model with fixed effect ``j`` held at ``value`` (an offset).

        ``W = [X y]`` becomes ``[X_{-j}  y - value x_j] = W T``: every cross-product is transformed by ``T``.
        """
        s = self.stats
        p = s.p
        keep = [i for i in range(p) if i != j]
        t = np.zeros((p + 1, p))
        t[keep, np.arange(p - 1)] = 1.0
        t[p, p - 1] = 1.0
        t[j, p - 1] = -float(value)
        return replace(s, p=p - 1, z0w=s.z0w @ t, zrw=s.zrw @ t, ww=t.T @ s.ww @ t)

    def ml_deviance_and_gradient(self, varpar: np.ndarray) -> tuple[float, np.ndarray]:
        """:meth:`ml_deviance` and its gradient in ``varpar`` (sd_1..sd_k, sigma)."""
        from scipy.linalg import LinAlgError

        varpar = np.asarray(varpar, dtype=float)
        sigma = float(varpar[-1])
        theta = varpar[:-1] / sigma
        try:
            value, g_theta, g_sigma = _ml_deviance_and_gradient(self.stats, theta, sigma)
        except LinAlgError:
            return float("inf"), np.zeros(varpar.size)
        # d = d(theta = sd / sigma, sigma): chain rule
        grad = np.append(g_theta / sigma, g_sigma - float(g_theta @ theta) / sigma)
        return value, grad

    def ml_deviance_fixed(self, j: int, value: float) -> float:
        from ..mixed._optimize import optimize_theta

        stats = self.stats_with_fixed(j, value)
        theta0 = self._ml_fit.theta.copy() if stats.n_terms else None
        return float(optimize_theta(stats, reml=False, theta0=theta0).deviance) if stats.n_terms else \
            float(deviance_parts(stats, np.zeros(0), False).deviance)

    # ------------------------------------------------------------------ simulation and refits
    @cached_property
    def _zt(self) -> list[sp.csr_matrix]:
        return [_indicator(np.asarray(g.codes), g.n_levels) for g in self.design.groups]

    def simulate(self, n_sim: int, rng: np.random.Generator, *, theta: np.ndarray | None = None,
                 sigma: float | None = None, beta: np.ndarray | None = None) -> np.ndarray:
        """``n_sim`` responses from the fitted model (or from given parameters): ``X beta + sum_k Z_k b_k + e``."""
        theta = self.fit.theta if theta is None else np.asarray(theta, dtype=float)
        sigma = self.fit.sigma if sigma is None else float(sigma)
        beta = self.fit.coef if beta is None else np.asarray(beta, dtype=float)
        mean = self.design.X @ beta if beta.size else np.zeros(self.nobs)
        Y = sigma * rng.standard_normal((self.nobs, n_sim))
        for g, th in zip(self.design.groups, theta):
            b = (sigma * th) * rng.standard_normal((g.n_levels, n_sim))
            Y += b[np.asarray(g.codes)]
        Y += mean[:, None]
        return Y

    def stats_for(self, Y: np.ndarray) -> list[SufficientStats]:
        """Sufficient statistics for each column of ``Y`` (the design's cross-products reused)."""
        s = self.stats
        Y = np.asarray(Y, dtype=float)
        if Y.ndim == 1:
            Y = Y[:, None]
        p = s.p
        xty = self.design.X.T @ Y  # (p, B)
        yty = np.einsum("ij,ij->j", Y, Y)
        zy = [zt @ Y for zt in self._zt]  # (q_k, B) each
        z0y = zy[0] if zy else np.zeros((0, Y.shape[1]))
        zry = np.vstack(zy[1:]) if len(zy) > 1 else np.zeros((0, Y.shape[1]))
        out = []
        for b in range(Y.shape[1]):
            ww = s.ww.copy()
            ww[:p, p] = ww[p, :p] = xty[:, b]
            ww[p, p] = yty[b]
            z0w = s.z0w.copy()
            z0w[:, p] = z0y[:, b]
            zrw = s.zrw.copy()
            zrw[:, p] = zry[:, b]
            out.append(_with_response(s, z0w, zrw, ww))
        return out

    @cached_property
    def _dense(self) -> DenseDesign | None:
        """The design for refits with the exact Hessian, when its random effects are few enough (else None)."""
        if not self.group_names or sum(z.shape[0] for z in self._zt) > DENSE_MAX_LEVELS:
            return None
        return DenseDesign(self._zt, self.design.X)

    def refit(self, Y: np.ndarray, reml: bool | None = None) -> list[RefitSummary]:
        """Re-estimate the model on each column of ``Y`` (REML like the fit unless ``reml`` says otherwise).

        Every refit starts at the fit's theta (the simulated responses come from the fit, so their optima
        are near it). Designs with at most :data:`~mixeval.uncertainty._dense.DENSE_MAX_LEVELS` random-effect
        levels take Newton steps with the exact Hessian (:class:`~mixeval.uncertainty._dense.DenseDesign`);
        larger ones the engine's evaluator, which eliminates the largest factor's block.
        """
        reml = self.reml if reml is None else bool(reml)
        with single_threaded_blas():
            if self._dense is not None:
                return [self._summary(*self._dense_refit(s, reml)) for s in self._dense.sums(Y)]
            return [self._summary(*self._engine_refit(stats, reml)) for stats in self.stats_for(Y)]

    def _dense_refit(self, sums: ResponseSums, reml: bool):
        opt = self._dense.optimize(sums, reml, self.fit.theta)
        value, beta, mxx, r2, _, _ = self._dense.solve(opt.theta, sums, reml)
        return opt.theta, value, beta, mxx, r2, reml

    def _engine_refit(self, stats: SufficientStats, reml: bool):
        from ..mixed._optimize import optimize_theta

        start = np.where(self.fit.theta > 0, self.fit.theta, 0.1)
        opt = optimize_theta(stats, reml, theta0=start)
        parts = deviance_parts(stats, opt.theta, reml)
        return opt.theta, parts.deviance, parts.beta, parts.mxx, parts.r2, reml

    def _summary(self, theta, deviance, beta, mxx, r2, reml) -> RefitSummary:
        from ..mixed._optimize import SINGULAR_TOL

        n, p = self.stats.nobs, self.stats.p
        sigma2 = r2 / (n - p if reml else n)
        cov = sigma2 * np.linalg.inv(mxx) if p else np.zeros((0, 0))
        sigma = float(np.sqrt(sigma2))
        variances = {g: float(sigma2 * t * t) for g, t in zip(self.group_names, theta)}
        variances["Residual"] = float(sigma2)
        params = np.concatenate([sigma * theta, [sigma], beta])
        return RefitSummary(params=params, variances=variances, cov_coef=cov, criterion=float(deviance),
                            singular=bool(np.any(theta < SINGULAR_TOL)))

    def refit_result(self, y: np.ndarray, reml: bool | None = None) -> LmerResult:
        """A full :class:`LmerResult` on the new response ``y`` (same design)."""
        reml = self.reml if reml is None else bool(reml)
        stats = self.stats_for(np.asarray(y, dtype=float)[:, None])[0]
        design = replace(self.design, y=np.asarray(y, dtype=float).copy())
        return fit_from_stats(design, stats, reml=reml, data=None, warn=False)


def _with_response(s: SufficientStats, z0w: np.ndarray, zrw: np.ndarray, ww: np.ndarray) -> SufficientStats:
    """A copy of ``s`` with new response columns (the design's blocks are shared)."""
    return replace(s, z0w=z0w, zrw=zrw, ww=ww)


def _ml_deviance_at(stats: SufficientStats, theta: np.ndarray, sigma: float) -> float:
    """``log|A(theta)| + r2(theta) / sigma^2 + n log(2 pi sigma^2)`` (``inf`` where undefined)."""
    from scipy.linalg import LinAlgError

    try:
        parts = deviance_parts(stats, np.abs(theta), False)
    except LinAlgError:
        return float("inf")
    s2 = sigma * sigma
    return float(parts.logdet_a + parts.r2 / s2 + stats.nobs * (_LOG_2PI + np.log(s2)))


def _ml_deviance_and_gradient(stats: SufficientStats, theta: np.ndarray, sigma: float) -> tuple[float, np.ndarray, float]:
    """``d(theta, sigma)`` of :func:`_ml_deviance_at` with its gradients in ``theta`` and in ``sigma``.

    The engine's exact gradient of the profiled ML deviance is ``dlog|A| + n dr2 / r2``; evaluated for two
    values of ``n`` (the statistics' ``nobs`` enters only there) it separates ``dlog|A|`` and ``dr2``, so
    ``dd/dtheta = dlog|A| + dr2 / sigma^2`` and ``dd/dsigma = 2 n / sigma - 2 r2 / sigma^3``.
    """
    from ..mixed._deviance import deviance_and_gradient

    n = stats.nobs
    parts = deviance_parts(stats, np.abs(theta), False)
    _, g1 = deviance_and_gradient(stats, theta, False)
    _, g2 = deviance_and_gradient(replace(stats, nobs=2 * n), theta, False)
    dr2 = (g2 - g1) * parts.r2 / n
    dlogdet = g1 - n * dr2 / parts.r2
    s2 = sigma * sigma
    value = float(parts.logdet_a + parts.r2 / s2 + n * (_LOG_2PI + np.log(s2)))
    return value, dlogdet + dr2 / s2, float(2.0 * n / sigma - 2.0 * parts.r2 / (s2 * sigma))
