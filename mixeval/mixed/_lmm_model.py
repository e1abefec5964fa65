"""The evaluator of a linear mixed model with random intercepts (the count-class path): the
:class:`~._protocol.FitModel` behind ``fit.model`` of such an :class:`~._result.LmerResult`."""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.stats import norm

from ..errors import InputError
from ._blas import single_threaded_blas
from ._dense import DENSE_MAX_LEVELS, DenseDesign, ResponseSums
from ._deviance import deviance_parts
from ._protocol import FitModelBase, RefitSummary, fixed_effect_wald, require_fitted
from ._stats import SufficientStats

__all__ = ["LmmFitModel"]

_LOG_2PI = float(np.log(2.0 * np.pi))


def _indicator(codes: np.ndarray, n_levels: int) -> sp.csr_matrix:
    """``Z_k'`` of a random intercept: ``n_levels x n`` 0/1 matrix."""
    n = codes.size
    return sp.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(n_levels, n))


class LmmFitModel(FitModelBase):
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
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> fit = lmer("score ~ 1 + (1|item)", df)
    >>> LmmFitModel(fit).param_names
    ('sd_(Intercept)|item', 'sigma', '(Intercept)')
    """

    def __init__(self, fit) -> None:
        require_fitted(fit, gaussian=True, entry="mixeval.lmer")
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
            from ._stats import compute_stats

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
        self._truth = (np.asarray(fit.theta, dtype=float), float(fit.sigma), np.asarray(fit.coef, dtype=float))

    def _set_parameters(self, params: np.ndarray) -> None:
        """``theta = sd / sigma``, ``sigma`` and ``beta`` of ``params`` (:meth:`~._protocol.FitModelBase.at`)."""
        k = len(self.group_names)
        sigma = float(params[k])
        if not sigma > 0 or np.any(params[:k] < 0):
            raise InputError(f"at(): standard deviations must be >= 0 and sigma > 0; got {params[:k + 1].tolist()}.")
        self._truth = (params[:k] / sigma, sigma, params[k + 1:].copy())

    # ------------------------------------------------------------------ estimates
    def estimates(self) -> np.ndarray:
        """The fit's own parameters (REML or ML as fitted) in :attr:`param_names` order."""
        return np.concatenate([self.fit.sigma * self.fit.theta, [self.fit.sigma], self.fit.coef])

    @cached_property
    def _ml_fit(self):
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
        from ._optimize import optimize_theta

        stats = self.stats_with_fixed(j, value)
        theta0 = self._ml_fit.theta.copy() if stats.n_terms else None
        return float(optimize_theta(stats, reml=False, theta0=theta0).deviance) if stats.n_terms else \
            float(deviance_parts(stats, np.zeros(0), False).deviance)

    def wald_intervals(self, level: float = 0.95) -> dict[str, tuple[float, float]]:
        """Wald intervals: sd's by the delta method on the variances' asymptotic covariance
        (``se(sd) = se(variance) / (2 sd)``; NaN on the boundary), fixed effects ``beta -/+ z se``."""
        z = float(norm.ppf(0.5 + level / 2.0))
        fit, out = self.fit, {}
        cov = fit.varcomp_cov()
        for name, group in zip(self.varpar_names, [*fit.group_names, "Residual"]):
            var = fit.variances[group]
            sd = float(np.sqrt(var))
            cvv = cov.loc[group, group]
            if var > 0 and np.isfinite(cvv) and cvv >= 0:
                se = float(np.sqrt(cvv)) / (2.0 * sd)
                out[name] = (max(sd - z * se, 0.0), sd + z * se)
            else:
                out[name] = (float("nan"), float("nan"))
        return out | fixed_effect_wald(fit, z)

    # ------------------------------------------------------------------ simulation and refits
    @cached_property
    def _zt(self) -> list[sp.csr_matrix]:
        return [_indicator(np.asarray(g.codes), g.n_levels) for g in self.design.groups]

    def simulate(self, n_sim: int, rng: np.random.Generator, *, theta: np.ndarray | None = None,
                 sigma: float | None = None, beta: np.ndarray | None = None) -> np.ndarray:
        """``n_sim`` responses from the model's parameters (the fit's, or those set by :meth:`at`; or from given ones):
        ``X beta + sum_k Z_k b_k + e``."""
        theta = self._truth[0] if theta is None else np.asarray(theta, dtype=float)
        sigma = self._truth[1] if sigma is None else float(sigma)
        beta = self._truth[2] if beta is None else np.asarray(beta, dtype=float)
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

    def refit(self, Y: np.ndarray, reml: bool | None = None, *, hessian: bool = False) -> list[RefitSummary]:
        """Re-estimate the model on each column of ``Y`` (REML like the fit unless ``reml`` says otherwise; the
        covariance of the fixed effects is exact, ``hessian`` changes nothing).

        Every refit starts at the model's theta (the fit's, or that of :meth:`at`; the simulated responses come from
        the fit, so their optima are near it). Designs with at most :data:`~mixeval.uncertainty._dense.DENSE_MAX_LEVELS` random-effect
        levels take Newton steps with the exact Hessian (:class:`~mixeval.uncertainty._dense.DenseDesign`);
        larger ones the engine's evaluator, which eliminates the largest factor's block.
        """
        reml = self.reml if reml is None else bool(reml)
        with single_threaded_blas():
            if self._dense is not None:
                return [self._summary(*self._dense_refit(s, reml)) for s in self._dense.sums(Y)]
            return [self._summary(*self._engine_refit(stats, reml)) for stats in self.stats_for(Y)]

    def _dense_refit(self, sums: ResponseSums, reml: bool):
        opt = self._dense.optimize(sums, reml, self._truth[0])
        value, beta, mxx, r2, _, _ = self._dense.solve(opt.theta, sums, reml)
        return opt.theta, value, beta, mxx, r2, reml

    def _engine_refit(self, stats: SufficientStats, reml: bool):
        from ._optimize import optimize_theta

        start = np.where(self._truth[0] > 0, self._truth[0], 0.1)
        opt = optimize_theta(stats, reml, theta0=start)
        parts = deviance_parts(stats, opt.theta, reml)
        return opt.theta, parts.deviance, parts.beta, parts.mxx, parts.r2, reml

    def _summary(self, theta, deviance, beta, mxx, r2, reml) -> RefitSummary:
        from ._optimize import SINGULAR_TOL

        n, p = self.stats.nobs, self.stats.p
        sigma2 = r2 / (n - p if reml else n)
        cov = sigma2 * np.linalg.inv(mxx) if p else np.zeros((0, 0))
        sigma = float(np.sqrt(sigma2))
        variances = {g: float(sigma2 * t * t) for g, t in zip(self.group_names, theta)}
        variances["Residual"] = float(sigma2)
        params = np.concatenate([sigma * theta, [sigma], beta])
        return RefitSummary(params=params, variances=variances, cov_coef=cov, criterion=float(deviance),
                            singular=bool(np.any(theta < SINGULAR_TOL)))

    def refit_result(self, y: np.ndarray, reml: bool | None = None):
        """A full :class:`LmerResult` on the new response ``y`` (same design)."""
        reml = self.reml if reml is None else bool(reml)
        stats = self.stats_for(np.asarray(y, dtype=float)[:, None])[0]
        design = replace(self.design, y=np.asarray(y, dtype=float).copy())
        return self.fit.fit_statistics(design, stats, reml=reml)


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
    from ._deviance import deviance_and_gradient

    n = stats.nobs
    parts = deviance_parts(stats, np.abs(theta), False)
    _, g1 = deviance_and_gradient(stats, theta, False)
    _, g2 = deviance_and_gradient(replace(stats, nobs=2 * n), theta, False)
    dr2 = (g2 - g1) * parts.r2 / n
    dlogdet = g1 - n * dr2 / parts.r2
    s2 = sigma * sigma
    value = float(parts.logdet_a + parts.r2 / s2 + n * (_LOG_2PI + np.log(s2)))
    return value, dlogdet + dr2 / s2, float(2.0 * n / sigma - 2.0 * parts.r2 / (s2 * sigma))
