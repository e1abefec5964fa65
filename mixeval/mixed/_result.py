"""Stage 5 (lme4's ``mkMerMod``): the frozen result of a linear mixed model fit."""

from __future__ import annotations

import dataclasses
import functools
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.linalg import LinAlgError, cho_solve, cholesky

from ..errors import ConvergenceWarning, InputError, SingularFitWarning, caller_stacklevel
from ._base import MixedResult
from ._blas import single_threaded_blas
from ._design import Design, net_of_offset
from ._deviance import DevianceParts, deviance_and_gradient, deviance_parts, solve_random_effects
from ._family import GAUSSIAN, Family
from ._general import (
    BlockStats,
    GeneralParts,
    _Dim,
    compute_block_stats,
    general_deviance_parts,
    general_random_effects,
    gradient_polish,
    optimize_general,
)
from ._optimize import SINGULAR_TOL, OptimResult, optimize_theta
from ._reterms import ReStructure, _tril_template, build_restructure, theta_to_factors
from ._satterthwaite import satterthwaite_df
from ._scaling import Scaling, identity_scaling, map_factor, standardize
from ._stats import SufficientStats, compute_stats

__all__ = ["LmerResult", "make_result", "fit_from_stats", "fit_design", "design_stats", "check_fit"]


@dataclass(frozen=True, eq=False)
class LmerResult(MixedResult):
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
        lme4's theta: per term the lower triangle (column-wise) of the relative covariance factor
        ``Lambda_k``; for random intercepts the relative standard deviations ``sigma_k / sigma``.
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
    scaling : Scaling or None
        The map between the data as given and the centred, scaled copy the optimiser saw
        (:mod:`mixeval.mixed._scaling`); ``stats`` belong to the scaled copy.
    family : Family
        The Gaussian family (``fit.family.name == "gaussian"``, identity link).
    weights : ndarray or None
        Prior weights of a weighted fit (``lmer(..., weights=)``).

    Examples
    --------
    Balanced one-way data: the REML group variance is ``(MSB - MSW) / 2 = (10.1667 - 1) / 2``.

    >>> import pandas as pd
    >>> from mixeval.mixed import lmer
    >>> fit = lmer("y ~ 1 + (1|g)", pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")}))
    >>> fit.reml, fit.nobs, fit.fixed_names
    (True, 6, ('(Intercept)',))
    >>> fit.varcorr.round(4)
          group         name  variance     std  percent
    0         g  (Intercept)    4.5833  2.1409  82.0896
    1  Residual                 1.0000  1.0000  17.9104
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
    stats: SufficientStats | BlockStats = field(repr=False, compare=False)
    data: Any = field(default=None, repr=False, compare=False)
    scaling: Scaling | None = field(default=None, repr=False, compare=False)
    family: Family = field(default=GAUSSIAN, repr=False)
    weights: np.ndarray | None = field(default=None, repr=False)

    # ----------------------------------------------------------------- structure
    @property
    def term_coef_names(self) -> tuple[tuple[str, ...], ...]:
        """Coefficient names of every random term (``("(Intercept)", "x")``), in the order of ``group_names``."""
        return tuple(tuple(getattr(g, "coef_names", ("(Intercept)",))) for g in self.design.groups)

    @property
    def term_labels(self) -> tuple[str, ...]:
        """Every random term as lme4 writes it (``"(1 | item)"``, ``"(1 + x | subject)"``)."""
        return tuple(g.label if hasattr(g, "label") else f"(1 | {g.name})" for g in self.design.groups)

    @property
    def _general(self) -> bool:
        """The fit was made by the general evaluator (random slopes or prior weights), not the count-class path."""
        return isinstance(self.stats, BlockStats)

    @property
    def term_levels(self) -> tuple[tuple[str, ...], ...]:
        """Labels of the levels of every random term's group, in the order of ``group_names``."""
        return tuple(tuple(g.labels) for g in self.design.groups)

    @functools.cached_property
    def model_terms(self):
        """The random-effects terms with their model matrices (:class:`~._reterms.ReTerm`), lme4's ``mkReTrms``."""
        return build_restructure(self.design).terms

    @property
    def scale2(self) -> float:
        """The residual variance: the scale of the random effects (``b ~ N(0, sigma^2 Lambda Lambda')``)."""
        return float(self.sigma2)

    @functools.cached_property
    def model(self):
        """The evaluator chosen when the model was fitted (:class:`~._protocol.FitModel`): the random-intercept
        (count-class) model, or the general slope model."""
        from ._lmm_model import LmmFitModel
        from ._slopes_model import SlopeFitModel

        if self.weights is not None:
            raise InputError("confidence intervals (profile, bootstrap, Wald), simulation and power are not available "
                             "for weighted lmer fits yet; fit.coefficients has the Wald standard errors of the fixed "
                             "effects and fit.varcorr_se those of the variances.")
        return SlopeFitModel(self) if isinstance(self.stats, BlockStats) else LmmFitModel(self)

    def fit_statistics(self, design: Design, stats: SufficientStats | BlockStats, *, reml: bool) -> LmerResult:
        """The same model fitted to the statistics ``stats`` of ``design`` (a new response: bootstrap refits),
        with this fit's scaling."""
        return fit_from_stats(design, stats, reml=reml, data=None, warn=False,
                              scaling=self.scaling if isinstance(stats, BlockStats) else None)

    def _scaling(self) -> Scaling:
        if self.scaling is not None:
            return self.scaling
        return identity_scaling(len(self.fixed_names), tuple(len(c) for c in self.term_coef_names))

    def scaled_theta(self, theta: np.ndarray) -> np.ndarray:
        """lme4's theta of the data as given, mapped to the centred and scaled problem ``stats`` belong to
        (``Lambda_k* = T_k^{-1} Lambda_k`` re-factorised; the identity for random intercepts)."""
        theta = np.asarray(theta, dtype=float)
        dims = [len(c) for c in self.term_coef_names]
        out = []
        for Tk, lam in zip(self._scaling().term_T, theta_to_factors(tuple(_Dim(d) for d in dims), theta)):
            lam_s = map_factor(np.linalg.inv(Tk), lam)
            rows, cols = _tril_template(lam.shape[0])
            out.append(lam_s[rows, cols])
        return np.concatenate(out) if out else np.zeros(0)

    def criterion_at(self, theta: np.ndarray) -> float:
        """The profiled criterion (REML criterion or ML deviance, ``-2`` log-likelihood) of the data as given at
        lme4's ``theta`` (in the layout of :attr:`theta`); what lme4's ``devfun`` returns.

        Profile intervals and likelihood checks call this; it evaluates the intercept path or the general
        evaluator on the scaled statistics and adds the Jacobian of the scaling (:mod:`._scaling`).
        """
        from ._deviance import deviance_parts
        from ._general import general_deviance_parts

        th = self.scaled_theta(theta)
        if self._general:
            dev = general_deviance_parts(self.stats, th, self.reml).deviance
        else:
            dev = deviance_parts(self.stats, np.abs(th), self.reml).deviance
        weights = 0.0 if self.weights is None else float(np.sum(np.log(self.weights)))
        return float(self._scaling().criterion(dev, self.nobs, len(self.fixed_names), self.reml)) - weights

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
        if self._general:
            return self._varcomp_cov_slopes()
        y_scale2 = self._scaling().y_scale ** 2
        names = [*self.group_names, "Residual"]
        v_hat = np.array([self.variances[g] for g in names])
        free = v_hat > 0
        m = self.nobs - (len(self.fixed_names) if self.reml else 0)

        def crit(v: np.ndarray) -> float:
            s2 = v[-1]
            theta = np.sqrt(np.maximum(v[:-1], 0.0) / s2)
            parts = deviance_parts(self.stats, theta, self.reml)
            base = parts.logdet_a + (parts.logdet_mxx if self.reml else 0.0)
            return base + y_scale2 * parts.r2 / s2 + m * np.log(2 * np.pi * s2)

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
        """Central-difference Hessian of ``crit`` over the coordinates ``idx`` (steps ``1e-4 v``)."""
        return _central_hessian(crit, v_hat, idx, 1e-4 * v_hat[idx])

    def _cov_coef_at(self, v: np.ndarray) -> np.ndarray:
        """Covariance of the fixed effects at variance parameters ``v = (v_1..v_k, sigma2)``."""
        from ._deviance import deviance_parts

        theta = np.sqrt(np.maximum(v[:-1], 0.0) / v[-1])
        parts = deviance_parts(self.stats, theta, self.reml)
        T = self._scaling().T
        return v[-1] * (T @ np.linalg.inv(parts.mxx) @ T.T)

    def _require_intercepts(self, what: str) -> None:
        if self._general:
            raise InputError(
                f"{what} is not available for models with random slopes yet (fitted: {', '.join(self.term_labels)}); "
                "use the likelihood-ratio test (mixeval.mixed.compare) of nested ML fits, or fit the random "
                "intercepts alone."
            )

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
            raise InputError(f"the contrast needs {len(self.fixed_names)} entries, one per fixed effect; got {L.shape}.")
        if self._general:
            return self._satterthwaite_theta(L)
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
        return float(satterthwaite_df(np.array([f0]), grad[None, :], cov_psi[np.ix_(free, free)])[0])

    def _varpar_functions(self):
        """The unprofiled criterion ``D(theta, sigma)`` and ``C(theta, sigma)`` (covariance of the fixed effects)
        of the data as given, over lmerTest's variance parameters ``(theta, sigma)``."""
        sc = self._scaling()
        m = self.nobs - (len(self.fixed_names) if self.reml else 0)

        def parts_at(theta: np.ndarray):
            th = self.scaled_theta(theta)
            return general_deviance_parts(self.stats, th, self.reml)

        def crit(vp: np.ndarray) -> float:
            parts = parts_at(vp[:-1])
            s2 = vp[-1] ** 2
            base = parts.logdet_a + (parts.logdet_mxx if self.reml else 0.0)
            return base + sc.y_scale**2 * parts.r2 / s2 + m * np.log(2 * np.pi * s2)

        def cov(vp: np.ndarray) -> np.ndarray:
            parts = parts_at(vp[:-1])
            return vp[-1] ** 2 * (sc.T @ np.linalg.inv(parts.mxx) @ sc.T.T)

        return crit, cov

    @functools.cached_property
    def _varpar_covariance(self):
        """``(varpar, steps, A)``: lmerTest's variance parameters ``(theta, sigma)``, the difference steps, and
        their asymptotic covariance ``A = 2 H^{-1}`` (None if ``H`` is singular); ``H`` is the central-difference
        Hessian of the unprofiled criterion. As lmerTest, boundary parameters stay in (the criterion is even
        in a zero diagonal element of ``Lambda_k``)."""
        crit, _ = self._varpar_functions()
        vp = np.append(self.theta, self.sigma)
        steps = 1e-4 * np.maximum(np.abs(vp), 1e-2 * max(1.0, float(np.max(np.abs(self.theta)))))
        steps[-1] = 1e-4 * vp[-1]
        with single_threaded_blas():
            h = _central_hessian(crit, vp, np.arange(vp.size), steps)
        try:
            return vp, steps, 2.0 * np.linalg.inv(h)
        except np.linalg.LinAlgError:
            return vp, steps, None

    def _varcomp_cov_slopes(self) -> pd.DataFrame:
        """Asymptotic covariance of every variance and covariance (named as :meth:`varcorr_frame`) by the delta
        method from :attr:`_varpar_covariance`: ``J A J'`` with ``J`` the Jacobian of the components
        ``sigma^2 Lambda_k Lambda_k'`` and ``sigma^2`` with respect to ``(theta, sigma)``."""
        names = list(self.components)
        vp, steps, a_mat = self._varpar_covariance
        if a_mat is None:
            return pd.DataFrame(np.nan, index=names, columns=names)
        dims = [len(c) for c in self.term_coef_names]

        def comps(v: np.ndarray) -> np.ndarray:
            out = []
            for lam in theta_to_factors(tuple(_Dim(d) for d in dims), v[:-1]):
                cov = v[-1] ** 2 * lam @ lam.T
                d = cov.shape[0]
                out += [cov[i, i] for i in range(d)] + [cov[i, j] for i in range(d) for j in range(i + 1, d)]
            return np.array(out + [v[-1] ** 2])

        jac = np.empty((len(names), vp.size))
        for i in range(vp.size):
            up, down = vp.copy(), vp.copy()
            up[i] += steps[i]
            down[i] -= steps[i]
            jac[:, i] = (comps(up) - comps(down)) / (2 * steps[i])
        return pd.DataFrame(jac @ a_mat @ jac.T, index=names, columns=names)

    def _satterthwaite_theta(self, L: np.ndarray) -> float:
        """Satterthwaite's df as lmerTest computes it, over ``varpar = (theta, sigma)``: ``A = 2 H^{-1}`` with
        ``H`` the Hessian of the unprofiled criterion, ``g`` the gradient of ``L' C L`` (central differences).
        As lmerTest, parameters on the boundary (a zero diagonal element of ``Lambda_k``) stay in ``H``: the
        criterion is even in them, so its derivatives exist there."""
        _, cov = self._varpar_functions()
        vp, steps, a_mat = self._varpar_covariance
        if a_mat is None:
            return float("nan")
        with single_threaded_blas():
            grad = np.empty(vp.size)
            for i in range(vp.size):
                up, down = vp.copy(), vp.copy()
                up[i] += steps[i]
                down[i] -= steps[i]
                grad[i] = (L @ cov(up) @ L - L @ cov(down) @ L) / (2 * steps[i])
        return float(satterthwaite_df(np.array([L @ self.cov_coef @ L]), grad[None, :], a_mat)[0])

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
        if self._general:  # rows named as in varcorr_frame (variances only)
            frame = self.varcorr_frame()
            keys = list(frame[frame.var2.isna()].name)
        else:
            keys = list(table.group)
        table["se"] = [float(np.sqrt(cov.loc[g, g])) if np.isfinite(cov.loc[g, g]) and cov.loc[g, g] >= 0 else np.nan
                       for g in keys]
        return table

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
    def _draw(self, nsim: int, rng: np.random.Generator) -> np.ndarray:
        """Responses of the model, offset included (the evaluator draws them net of it, as it fits them)."""
        Y = super()._draw(nsim, rng)
        return Y if self.design.offset is None else Y + self.design.offset[:, None]

    def refit(self, *, REML: bool) -> LmerResult:
        """The same model re-estimated by REML or ML (re-uses the sufficient statistics)."""
        from .._validation import require_bool

        REML = require_bool(REML, "REML")
        if REML == self.reml:
            return self
        return fit_from_stats(self.design, self.stats, reml=REML, data=self.data, warn=False, scaling=self.scaling,
                              weights=self.weights)

    # ----------------------------------------------------------------- printing
    def summary(self) -> str:
        """lme4-style text summary."""
        from ._printing import format_summary

        return format_summary(self)

    def _repr_html_(self) -> str:
        from ._printing import format_html

        return format_html(self)



def singular_terms(terms_dims: tuple[int, ...], theta: np.ndarray) -> list[int]:
    """Indices of the terms whose relative covariance factor has a diagonal element below :data:`SINGULAR_TOL`
    (lme4's ``isSingular``: a variance at 0, or a correlation at +-1)."""
    out, start = [], 0
    for k, d in enumerate(terms_dims):
        rows, cols = _tril_template(d)
        diag = theta[start:start + len(rows)][rows == cols]
        if np.any(diag < SINGULAR_TOL):
            out.append(k)
        start += len(rows)
    return out


def make_result(design: Design, stats: SufficientStats | BlockStats, opt: OptimResult,
                parts: DevianceParts | GeneralParts, data: Any, scaling: Scaling | None = None, *,
                weights: np.ndarray | None = None) -> LmerResult:
    """Assemble the frozen result from the optimum (lme4's ``mkMerMod``).

    ``stats``, ``opt`` and ``parts`` belong to the (possibly centred and scaled) problem the optimiser saw;
    ``scaling`` maps them back to the data as given (:mod:`._scaling`); ``design`` is the design as given.

    Examples
    --------
    The stages of :func:`~mixeval.mixed.lmer` one by one (here without the centring and scaling of
    :func:`fit_design`):

    >>> import pandas as pd
    >>> from mixeval.mixed import build_design, compute_stats, deviance_parts, optimize_theta
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> d = build_design("y ~ 1 + (1|g)", df)
    >>> s = compute_stats(d)
    >>> opt = optimize_theta(s, reml=False)
    >>> fit = make_result(d, s, opt, deviance_parts(s, opt.theta, reml=False), df)
    >>> round(float(fit.loglik), 4), fit.varcorr.variance.round(4).tolist()
    (-11.3841, [2.8889, 1.0])
    """
    n, p = stats.nobs, stats.p
    reml = parts.reml
    dims = tuple(len(getattr(g, "coef_names", ("(Intercept)",))) for g in design.groups)
    sc = scaling if scaling is not None else identity_scaling(p, dims)
    sigma2 = sc.y_scale**2 * parts.r2 / (n - p if reml else n)
    sigma2_scaled = parts.r2 / (n - p if reml else n)
    if p:
        chol = cholesky(parts.mxx, lower=True, check_finite=False)
        cov = sc.cov_beta(sigma2_scaled * cho_solve((chol, True), np.eye(p), check_finite=False))
    else:
        cov = np.zeros((0, 0))
    beta = sc.beta(parts.beta) if p else parts.beta.copy()
    # theta of the data as given: Lambda_k Lambda_k' = T_k Lambda_k* Lambda_k*' T_k'
    factors = theta_to_factors(tuple(_Dim(d) for d in dims), opt.theta)
    theta_parts = []
    for Tk, lam in zip(sc.term_T, factors):
        lam_raw = map_factor(Tk, lam)
        rows, cols = _tril_template(lam.shape[0])
        theta_parts.append(lam_raw[rows, cols])
    theta = np.concatenate(theta_parts) if theta_parts else np.zeros(0)
    # A design without rows (X is None: fits from aggregates, mixeval.scale) has no fitted values or
    # residuals; its random effects are still computed per level.
    has_rows = design.X is not None
    fitted = (design.X @ beta if p else np.zeros(n)) if has_rows else None
    blups: list[np.ndarray] = []
    if isinstance(stats, BlockStats):
        for g, Tk, b in zip(design.groups, sc.term_T, general_random_effects(stats, parts)):
            b = sc.y_scale * (b @ Tk.T)
            if getattr(g, "X", None) is None:
                b = b[:, 0]
            blups.append(b)
    elif stats.n_terms:
        u0, ur = solve_random_effects(stats, parts)
        b = [opt.theta[0] * u0]
        offset = 0
        for k, nl in enumerate(stats.n_levels[1:], start=1):
            b.append(opt.theta[k] * ur[offset : offset + nl])
            offset += nl
        blups = [sc.y_scale * bk for bk in b]
    if has_rows:
        for g, bk in zip(design.groups, blups):
            if bk.ndim == 1:
                fitted = fitted + bk[g.codes]
            else:
                fitted = fitted + np.einsum("ij,ij->i", g.X, bk[g.codes])
    criterion = sc.criterion(parts.deviance, n, p, reml)
    if weights is not None:  # the density of y, not of W^(1/2) y: -2 log|W^(1/2)|
        criterion -= float(np.sum(np.log(weights)))
    return LmerResult(
        formula=design.parsed.formula,
        reml=reml,
        nobs=n,
        fixed_names=design.fixed_names,
        coef=beta,
        cov_coef=cov,
        group_names=tuple(g.name for g in design.groups),
        n_levels=tuple(g.n_levels for g in design.groups),
        theta=theta,
        sigma2=float(sigma2),
        loglik=-0.5 * criterion,
        criterion=criterion,
        singular=bool(singular_terms(dims, theta)),
        converged=opt.converged,
        n_evaluations=opt.n_evaluations,
        random_effects=tuple(blups),
        # with an offset, design.y is the response net of it (net_of_offset): fitted values add it back
        fitted=fitted if not has_rows or design.offset is None else fitted + design.offset,
        residuals=design.y - fitted if has_rows else None,
        design=design,
        stats=stats,
        data=data,
        scaling=scaling,
        weights=None if weights is None else np.asarray(weights, dtype=float),
    )


def design_stats(design: Design) -> SufficientStats | BlockStats:
    """The statistics a fit of ``design`` needs: random-intercept sums, or per-level blocks for slopes."""
    if design.has_slopes:
        return compute_block_stats(build_restructure(design), design.X, design.y)
    return compute_stats(design)


def weighted_block_stats(design: Design, weights: np.ndarray) -> BlockStats:
    """Per-level statistics of the rows scaled by ``sqrt(w)`` (a weighted model is the unweighted model of
    ``W^(1/2) y = W^(1/2) X beta + W^(1/2) Z b + e``): the general evaluator fits it, random intercepts
    included."""
    sw = np.sqrt(np.asarray(weights, dtype=float))
    re = build_restructure(design)
    re_w = ReStructure(terms=tuple(dataclasses.replace(t, X=t.X * sw[:, None]) for t in re.terms), nobs=re.nobs)
    return compute_block_stats(re_w, np.asarray(design.X, dtype=float) * sw[:, None], np.asarray(design.y) * sw)


def fit_design(design: Design, *, reml: bool, data: Any = None, warn: bool = True,
               weights: np.ndarray | None = None) -> LmerResult:
    """Fit a validated design: centre and scale (:func:`~._scaling.standardize`), form the statistics,
    optimise, map back to the data as given.

    Examples
    --------
    The stage after :func:`~mixeval.mixed.build_design`; :func:`~mixeval.mixed.lmer` is the two chained.
    Balanced one-way data with three groups of two: by ML the residual variance is the within-group mean
    square (3/3 = 1) and the group variance ``((a-1)/a MSB - MSW)/n = (6.778 - 1)/2 = 2.889``.

    >>> import pandas as pd
    >>> from mixeval.mixed import build_design, lmer
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> fit = fit_design(build_design("y ~ 1 + (1|g)", df), reml=False)
    >>> fit.varcorr.variance.round(4).tolist()
    [2.8889, 1.0]
    >>> bool(fit.loglik == lmer("y ~ 1 + (1|g)", df, REML=False).loglik)
    True
    """
    design = net_of_offset(design)  # y - offset = X beta + Z b + e
    scaled, scaling = standardize(design)
    stats = design_stats(scaled) if weights is None else weighted_block_stats(scaled, weights)
    return fit_from_stats(design, stats, reml=reml, data=data, warn=warn, scaling=scaling, weights=weights)


def _central_hessian(crit, x: np.ndarray, idx: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Hessian of ``crit`` at ``x`` over the coordinates ``idx`` by four-point central differences
    (``steps[a]`` for coordinate ``idx[a]``), symmetric by construction."""
    h = np.empty((idx.size, idx.size))
    for a, i in enumerate(idx):
        for b, j in enumerate(idx[: a + 1]):
            def f(di: float, dj: float, i: int = i, j: int = j) -> float:
                v = x.copy()
                v[i] += di
                v[j] += dj
                return crit(v)

            hi, hj = steps[a], steps[b]
            h[a, b] = h[b, a] = (f(hi, hj) - f(hi, -hj) - f(-hi, hj) + f(-hi, -hj)) / (4 * hi * hj)
    return h


def fit_from_stats(design: Design, stats: SufficientStats | BlockStats, *, reml: bool, data: Any = None,
                   warn: bool = True, scaling: Scaling | None = None, weights: np.ndarray | None = None) -> LmerResult:
    """Optimise, check and assemble a fit from precomputed statistics.

    ``stats`` may belong to a centred and scaled copy of ``design`` (then ``scaling`` maps back,
    :func:`fit_design`); random-intercept statistics go to the intercept path, per-level blocks
    (:class:`~._general.BlockStats`) to the general evaluator.

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.mixed import build_design, compute_stats
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
    >>> d = build_design("y ~ 1 + (1|g)", df)
    >>> fit = fit_from_stats(d, compute_stats(d), reml=False)  # statistics of the data as given: no scaling
    >>> round(float(fit.loglik), 4), fit.varcorr.variance.round(4).tolist()
    (-11.3841, [2.8889, 1.0])
    """
    with single_threaded_blas():
        if isinstance(stats, BlockStats):
            opt = optimize_general(stats, reml)
            parts = _at_optimum(lambda: general_deviance_parts(stats, opt.theta, reml), design, _yy(stats, scaling))
        else:
            opt = optimize_theta(stats, reml)
            at_theta = opt.parts  # the optimiser's evaluation at its theta, unless the polish moves it
            if stats.n_terms and np.isfinite(opt.deviance):
                calls = [0]

                def counted(t: np.ndarray) -> tuple[float, np.ndarray]:
                    calls[0] += 1
                    return deviance_and_gradient(stats, np.abs(t), reml)

                try:
                    theta, dev, grad = gradient_polish(counted, opt.theta, np.zeros(stats.n_terms), hessian=opt.hessian,
                                                       start=(opt.deviance, opt.gradient))
                    if not np.array_equal(theta, opt.theta):
                        at_theta = None
                    opt = dataclasses.replace(opt, theta=theta, deviance=dev, gradient=grad,
                                              n_evaluations=opt.n_evaluations + calls[0])
                except LinAlgError:  # undefined at the optimum (exact fit): _at_optimum says so
                    pass
            parts = _at_optimum(lambda: at_theta if at_theta is not None else deviance_parts(stats, opt.theta, reml),
                                design, _yy(stats, scaling))
        result = make_result(design, stats, opt, parts, data, scaling, weights=weights)
    if warn:
        check_fit(result)
    return result


def _yy(stats, scaling: Scaling | None) -> float:
    """The scale of the response's sum of squares for the exact-fit check: ``n`` for the centred, scaled
    response of :func:`fit_design` (unit variance); 0 (no check) for statistics of the raw response, whose
    ``y'y`` includes its mean."""
    return float(stats.nobs) if scaling is not None and scaling.c.any() else 0.0


def _at_optimum(evaluate, design: Design, yy: float):
    """The deviance parts at the optimum; a model that reproduces the response exactly is an InputError."""
    try:
        parts = evaluate()
        if not parts.r2 > 1e-12 * yy:  # R^2 = 1 to rounding
            raise LinAlgError("the penalised residual sum of squares is zero to rounding")
        return parts
    except (LinAlgError, np.linalg.LinAlgError) as exc:
        raise InputError(
            f"{design.parsed.formula!r}: the model reproduces the response exactly (no residual variance left) or "
            f"its fixed effects are not estimable ({exc}). Check for a response that is a function of the fixed "
            "effects, or fewer observations than parameters."
        ) from None


def check_fit(result: LmerResult) -> None:
    """Warn on singular (boundary) fits and on non-convergence (lme4's ``checkConv``)."""
    if result.singular:
        dims = tuple(len(c) for c in result.term_coef_names)
        terms = singular_terms(dims, result.theta)
        scalar = [result.group_names[k] for k in terms if dims[k] == 1]
        vector = [result.term_labels[k] for k in terms if dims[k] > 1]
        what = []
        if scalar:
            what.append(f"the variance of {', '.join(repr(z) for z in scalar)} is estimated as (numerically) zero")
        if vector:
            what.append(f"the covariance matrix of {', '.join(vector)} is singular (a variance at 0 or a "
                        "correlation at +-1; see fit.correlations)")
        warnings.warn(
            f"boundary (singular) fit: {'; '.join(what)}. This is a valid estimate, not a failure; "
            + ("the component can be dropped without changing the fit." if not vector else
               "the random-effects structure can be simplified (drop a slope, or fit uncorrelated effects "
               "(1 + x || g)) without changing the fit much."),
            SingularFitWarning,
            stacklevel=caller_stacklevel(),
        )
    if not result.converged:
        warnings.warn(
            "the optimiser did not meet its convergence criterion (projected gradient of the deviance "
            "not ~0); treat the estimates with care and check the model specification.",
            ConvergenceWarning,
            stacklevel=caller_stacklevel(),
        )
