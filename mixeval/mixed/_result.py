"""Stage 5 (lme4's ``mkMerMod``): the frozen result of a linear mixed model fit."""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.linalg import cho_solve, cholesky

from ..errors import ConvergenceWarning, SingularFitWarning
from ._blas import single_threaded_blas
from ._design import Design
from ._deviance import DevianceParts, deviance_parts, solve_random_effects
from ._optimize import SINGULAR_TOL, OptimResult, optimize_theta
from ._stats import SufficientStats

__all__ = ["LmerResult", "make_result", "fit_from_stats", "check_fit"]


@dataclass(frozen=True)
class LmerResult:
    """A fitted linear mixed-effects model (lme4's ``merMod``), all numbers unrounded.

    Attributes
    ----------
    formula : str
        The formula as given.
    reml : bool
        True for a REML fit, False for maximum likelihood.
    nobs : int
        Number of observations.
    fixed_names : tuple of str
        Fixed-effect coefficient names, as R names them (``(Intercept)``, ``systemMarking``).
    coef : ndarray
        Fixed-effect estimates (see :attr:`fixef` for a Series).
    cov_coef : ndarray
        Covariance matrix of the fixed-effect estimates, ``sigma^2 (X' V^{-1} X)^{-1}``.
    group_names : tuple of str
        Random-effect groups as lme4 names them (``item``, ``rater:item``), largest first.
    n_levels : tuple of int
        Levels per group.
    theta : ndarray
        Relative standard deviations ``sigma_k / sigma``.
    sigma2 : float
        Residual variance.
    loglik : float
        Log-likelihood (the REML log-likelihood for a REML fit, as lme4's ``logLik``).
    criterion : float
        ``-2 loglik``: the REML criterion (REML) or the deviance (ML).
    singular : bool
        Some variance component is (numerically) zero: a boundary fit.
    converged : bool
        The optimiser met its convergence criterion.
    """

    formula: str
    reml: bool
    nobs: int
    fixed_names: tuple[str, ...]
    coef: np.ndarray = field(repr=False)
    cov_coef: np.ndarray = field(repr=False)
    group_names: tuple[str, ...]
    n_levels: tuple[int, ...]
    theta: np.ndarray = field(repr=False)
    sigma2: float
    loglik: float
    criterion: float
    singular: bool
    converged: bool
    n_evaluations: int = field(repr=False)
    random_effects: tuple[np.ndarray, ...] = field(repr=False)
    fitted: np.ndarray | None = field(repr=False)
    residuals: np.ndarray | None = field(repr=False)
    design: Design = field(repr=False, compare=False)
    stats: SufficientStats = field(repr=False, compare=False)
    data: Any = field(default=None, repr=False, compare=False)

    # ----------------------------------------------------------------- tables
    @property
    def fixef(self) -> pd.Series:
        """Fixed-effect estimates indexed by coefficient name."""
        return pd.Series(self.coef, index=list(self.fixed_names), name="estimate")

    @property
    def vcov(self) -> pd.DataFrame:
        """Covariance matrix of the fixed effects."""
        names = list(self.fixed_names)
        return pd.DataFrame(self.cov_coef, index=names, columns=names)

    @property
    def coefficients(self) -> pd.DataFrame:
        """Fixed effects: estimate, standard error, t value (lme4's summary table)."""
        se = np.sqrt(np.diag(self.cov_coef))
        return pd.DataFrame(
            {"estimate": self.coef, "se": se, "t": self.coef / se},
            index=pd.Index(self.fixed_names, name="term"),
        )

    @property
    def variances(self) -> dict[str, float]:
        """Variance of every random-effect group and ``"Residual"``."""
        out = {g: float(self.sigma2 * t * t) for g, t in zip(self.group_names, self.theta)}
        out["Residual"] = float(self.sigma2)
        return out

    @property
    def varcorr(self) -> pd.DataFrame:
        """Variance components (lme4's ``VarCorr``): group, variance, std, percent of the total."""
        v = self.variances
        total = sum(v.values())
        return pd.DataFrame(
            {
                "group": list(v),
                "variance": list(v.values()),
                "std": [float(np.sqrt(x)) for x in v.values()],
                "percent": [100.0 * x / total for x in v.values()],
            }
        )

    def varcomp_cov(self) -> pd.DataFrame:
        """Asymptotic covariance of the variance estimates (inverse observed information).

        Computed once per fit (see :attr:`_varcomp_cov_frame`); a copy is returned.
        """
        return self._varcomp_cov_frame.copy()

    @functools.cached_property
    def _varcomp_cov_frame(self) -> pd.DataFrame:
        """Asymptotic covariance of the variance estimates (inverse observed information).

        Notes
        -----
        The unprofiled criterion ``-2 l(v)`` in the variance parametrisation
        ``v = (sigma2 theta_1^2, ..., sigma2 theta_k^2, sigma2)`` is
        ``log|A| [+ log|M_XX|] + r2(theta) / sigma2 + m log(2 pi sigma2)`` (``m = n - p`` for REML,
        ``n`` for ML); its Hessian ``H`` at the estimate is found by central differences and the
        covariance is ``2 H^{-1}``. Components estimated at 0 lie on the boundary, where this
        approximation does not hold: they are left out (their row and column are NaN).
        """
        names = [*self.group_names, "Residual"]
        v_hat = np.array([self.variances[g] for g in names])
        free = v_hat > 0
        m = self.nobs - (len(self.fixed_names) if self.reml else 0)

        def crit(v: np.ndarray) -> float:
            s2 = v[-1]
            theta = np.sqrt(np.maximum(v[:-1], 0.0) / s2)
            parts = deviance_parts(self.stats, theta, self.reml)
            base = parts.logdet_a + (parts.logdet_mxx if self.reml else 0.0)
            return base + parts.r2 / s2 + m * np.log(2 * np.pi * s2)

        idx = np.flatnonzero(free)
        with single_threaded_blas():
            h = self._information(crit, v_hat, idx)
        cov = np.full((len(names), len(names)), np.nan)
        try:
            cov[np.ix_(idx, idx)] = 2.0 * np.linalg.inv(h)
        except np.linalg.LinAlgError:
            pass
        return pd.DataFrame(cov, index=names, columns=names)

    @staticmethod
    def _information(crit, v_hat: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Central-difference Hessian of ``crit`` over the coordinates ``idx``."""
        h = np.empty((idx.size, idx.size))
        steps = 1e-4 * v_hat[idx]
        for a, i in enumerate(idx):
            for b, j in enumerate(idx[: a + 1]):
                def f(di: float, dj: float) -> float:
                    v = v_hat.copy()
                    v[i] += di
                    v[j] += dj
                    return crit(v)

                hi, hj = steps[a], steps[b]
                value = (f(hi, hj) - f(hi, -hj) - f(-hi, hj) + f(-hi, -hj)) / (4 * hi * hj)
                h[a, b] = h[b, a] = value
        return h

    def _cov_coef_at(self, v: np.ndarray) -> np.ndarray:
        """Covariance of the fixed effects at variance parameters ``v = (v_1..v_k, sigma2)``."""
        from ._deviance import deviance_parts

        theta = np.sqrt(np.maximum(v[:-1], 0.0) / v[-1])
        parts = deviance_parts(self.stats, theta, self.reml)
        return v[-1] * np.linalg.inv(parts.mxx)

    def satterthwaite_df(self, contrast: np.ndarray) -> float:
        """Satterthwaite degrees of freedom of ``L' beta`` (lmerTest's ``ddf = "Satterthwaite"``).

        Notes
        -----
        ``df = 2 (L' C L)^2 / (g' A g)`` with ``C(psi)`` the covariance of the fixed effects as a function
        of the variance parameters ``psi``, ``g`` its gradient (central differences) in the direction ``L``,
        and ``A`` the asymptotic covariance of ``psi`` (:meth:`varcomp_cov`). Components estimated at 0 are
        held fixed.
        """
        L = np.asarray(contrast, dtype=float)
        if L.shape != (len(self.fixed_names),):
            raise ValueError(f"the contrast needs {len(self.fixed_names)} entries, one per fixed effect; got {L.shape}.")
        names = [*self.group_names, "Residual"]
        v_hat = np.array([self.variances[g] for g in names])
        cov_psi = self.varcomp_cov().to_numpy()
        free = np.flatnonzero(v_hat > 0)
        f0 = float(L @ self.cov_coef @ L)
        grad = np.empty(free.size)
        with single_threaded_blas():
            for a, i in enumerate(free):
                h = 1e-4 * v_hat[i]
                up, down = v_hat.copy(), v_hat.copy()
                up[i] += h
                down[i] -= h
                grad[a] = (L @ self._cov_coef_at(up) @ L - L @ self._cov_coef_at(down) @ L) / (2 * h)
        denom = float(grad @ cov_psi[np.ix_(free, free)] @ grad)
        return float(2 * f0 * f0 / denom) if denom > 0 else float("inf")

    def coef_tests(self) -> pd.DataFrame:
        """Fixed effects with Satterthwaite t-tests (lmerTest's ``summary``): estimate, se, df, t, pvalue."""
        from scipy import stats as sps

        table = self.coefficients.copy()
        eye = np.eye(len(self.fixed_names))
        table["df"] = [self.satterthwaite_df(eye[j]) for j in range(len(self.fixed_names))]
        table["pvalue"] = 2 * sps.t.sf(np.abs(table["t"]), table["df"])
        return table[["estimate", "se", "df", "t", "pvalue"]]

    @property
    def varcorr_se(self) -> pd.DataFrame:
        """Variance components with asymptotic standard errors (NaN on the boundary or if unidentified)."""
        cov = self.varcomp_cov()
        table = self.varcorr
        table["se"] = [float(np.sqrt(cov.loc[g, g])) if np.isfinite(cov.loc[g, g]) and cov.loc[g, g] >= 0 else np.nan
                       for g in table.group]
        return table

    @property
    def ranef(self) -> dict[str, pd.Series]:
        """Conditional modes (BLUPs) of the random effects per group, indexed by level."""
        return {
            g.name: pd.Series(b, index=pd.Index(g.labels, name=g.name), name="(Intercept)")
            for g, b in zip(self.design.groups, self.random_effects)
        }

    @property
    def ngrps(self) -> dict[str, int]:
        """Number of levels of each random-effect group."""
        return dict(zip(self.group_names, self.n_levels))

    @property
    def n_params(self) -> int:
        """Number of estimated parameters: fixed effects, variance components, residual variance."""
        return len(self.fixed_names) + len(self.group_names) + 1

    @property
    def aic(self) -> float:
        return -2.0 * self.loglik + 2.0 * self.n_params

    @property
    def bic(self) -> float:
        return -2.0 * self.loglik + np.log(self.nobs) * self.n_params

    @property
    def sigma(self) -> float:
        """Residual standard deviation."""
        return float(np.sqrt(self.sigma2))

    @property
    def confounded(self) -> list[tuple[str, str]]:
        """Pairs of groups with identical partitions of the rows (only their summed variance is identified)."""
        from ._design import confounded_pairs

        precomputed = getattr(self.design, "confounded_pairs", None)  # designs without rows (mixeval.scale)
        if precomputed is not None:
            return list(precomputed)
        return confounded_pairs(self.design.groups)

    # ----------------------------------------------------------------- refits
    def refit(self, *, REML: bool) -> "LmerResult":
        """The same model re-estimated by REML or ML (re-uses the sufficient statistics)."""
        if REML == self.reml:
            return self
        return fit_from_stats(self.design, self.stats, reml=REML, data=self.data, warn=False)

    # ----------------------------------------------------------------- printing
    def summary(self) -> str:
        """lme4-style text summary."""
        from ._printing import format_summary

        return format_summary(self)

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        from ._printing import format_html

        return format_html(self)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``mixeval fit --json``."""
        return {
            "nobs": self.nobs,
            "reml": self.reml,
            "loglik": self.loglik,
            "criterion": self.criterion,
            "varcorr": self.variances,
            "fixef": {k: float(v) for k, v in zip(self.fixed_names, self.coef)},
            "singular": self.singular,
            "converged": self.converged,
        }


def make_result(design: Design, stats: SufficientStats, opt: OptimResult, parts: DevianceParts, data: Any) -> LmerResult:
    """Assemble the frozen result from the optimum (lme4's ``mkMerMod``)."""
    n, p = stats.nobs, stats.p
    reml = parts.reml
    sigma2 = parts.r2 / (n - p if reml else n)
    if p:
        chol = cholesky(parts.mxx, lower=True, check_finite=False)
        cov = sigma2 * cho_solve((chol, True), np.eye(p), check_finite=False)
    else:
        cov = np.zeros((0, 0))
    theta = opt.theta
    # A design without rows (X is None: fits from aggregates, mixeval.scale) has no fitted values or
    # residuals; its random effects are still computed per level.
    has_rows = design.X is not None
    fitted = (design.X @ parts.beta if p else np.zeros(n)) if has_rows else None
    blups: list[np.ndarray] = []
    if stats.n_terms:
        u0, ur = solve_random_effects(stats, parts)
        b = [theta[0] * u0]
        offset = 0
        for k, nl in enumerate(stats.n_levels[1:], start=1):
            b.append(theta[k] * ur[offset : offset + nl])
            offset += nl
        if has_rows:
            for g, bk in zip(design.groups, b):
                fitted = fitted + bk[g.codes]
        blups = b
    return LmerResult(
        formula=design.parsed.formula,
        reml=reml,
        nobs=n,
        fixed_names=design.fixed_names,
        coef=parts.beta.copy(),
        cov_coef=cov,
        group_names=tuple(g.name for g in design.groups),
        n_levels=tuple(g.n_levels for g in design.groups),
        theta=theta.copy(),
        sigma2=float(sigma2),
        loglik=-0.5 * parts.deviance,
        criterion=parts.deviance,
        singular=bool(np.any(theta < SINGULAR_TOL)),
        converged=opt.converged,
        n_evaluations=opt.n_evaluations,
        random_effects=tuple(blups),
        fitted=fitted,
        residuals=design.y - fitted if has_rows else None,
        design=design,
        stats=stats,
        data=data,
    )


def fit_from_stats(design: Design, stats: SufficientStats, *, reml: bool, data: Any = None, warn: bool = True) -> LmerResult:
    """Optimise, check and assemble a fit from precomputed sufficient statistics."""
    with single_threaded_blas():
        opt = optimize_theta(stats, reml)
        parts = deviance_parts(stats, opt.theta, reml)
        result = make_result(design, stats, opt, parts, data)
    if warn:
        check_fit(result)
    return result


def check_fit(result: LmerResult) -> None:
    """Warn on singular (boundary) fits and on non-convergence (lme4's ``checkConv``)."""
    if result.singular:
        zero = [g for g, t in zip(result.group_names, result.theta) if t < SINGULAR_TOL]
        warnings.warn(
            f"boundary (singular) fit: the variance of {', '.join(repr(z) for z in zero)} is estimated as "
            "(numerically) zero. This is a valid estimate, not a failure; the component can be dropped "
            "without changing the fit.",
            SingularFitWarning,
            stacklevel=3,
        )
    if not result.converged:
        warnings.warn(
            "the optimiser did not meet its convergence criterion (projected gradient of the deviance "
            "not ~0); treat the estimates with care and check the model specification.",
            ConvergenceWarning,
            stacklevel=3,
        )
