"""The :class:`~mixeval.uncertainty.FitModel` of a linear mixed model with random slopes.

A fit from the general evaluator (:mod:`mixeval.mixed._general`: terms such as ``(1 + x | subject)``)
has, per term ``k``, a ``p_k x p_k`` covariance ``Sigma_k = sigma^2 Lambda_k Lambda_k'``. lme4 profiles
it in its standard deviations and correlations (``Sv``, names ``sd_x|g`` and ``cor_x.(Intercept)|g``,
in the positions of the lower triangle of ``Lambda_k`` taken column-wise) and ``sigma``. This module
maps between the two parametrisations (stage functions :func:`term_layout`, :func:`sdcor_to_factor`,
:func:`factor_to_sdcor`) and implements the members of the interface on the block statistics of the
design (:class:`SlopeFitModel`).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, solve_triangular

from ..errors import InputError
from ._blas import single_threaded_blas
from ._general import (
    BlockStats,
    _Dim,
    compute_block_stats,
    general_deviance_and_gradient,
    general_deviance_parts,
    optimize_general,
)
from ._optimize import SINGULAR_TOL, minimize_deviance
from ._protocol import FitModelBase, RefitSummary, fixed_effect_wald, require_fitted
from ._reterms import _tril_template, build_restructure, theta_to_factors
from ._scaling import Scaling, identity_scaling, map_factor

__all__ = ["SlopeFitModel", "term_layout", "sdcor_to_factor", "factor_to_sdcor", "wald_varpar_slopes"]

_LOG_2PI = float(np.log(2.0 * np.pi))


def term_layout(group: str, coef_names: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """lme4's profile names and kinds of one term's parameters, in the order of its theta.

    Position ``(i, j)`` (``i >= j``) of the lower triangle of ``Lambda_k``, taken column-wise, holds the
    standard deviation of coefficient ``i`` when ``i == j``, else the correlation of coefficients ``i`` and
    ``j`` (lme4's ``Cv_to_Sv`` layout, names of ``confint(..., oldNames = FALSE)``).

    Examples
    --------
    >>> term_layout("subject", ("(Intercept)", "x"))
    (('sd_(Intercept)|subject', 'cor_x.(Intercept)|subject', 'sd_x|subject'), ('sd', 'cor', 'sd'))
    """
    rows, cols = _tril_template(len(coef_names))
    names, kinds = [], []
    for i, j in zip(rows, cols):
        if i == j:
            names.append(f"sd_{coef_names[i]}|{group}")
            kinds.append("sd")
        else:
            names.append(f"cor_{coef_names[i]}.{coef_names[j]}|{group}")
            kinds.append("cor")
    return tuple(names), tuple(kinds)


def _unpack(values: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Standard deviations and the correlation matrix from one term's values in theta order."""
    rows, cols = _tril_template(d)
    sd = np.zeros(d)
    corr = np.eye(d)
    for v, i, j in zip(values, rows, cols):
        if i == j:
            sd[i] = v
        else:
            corr[i, j] = corr[j, i] = v
    return sd, corr


def _chol_psd(r: np.ndarray) -> np.ndarray:
    """Cholesky factor of a positive semi-definite matrix (a column with a zero pivot is set to 0).

    Raises ``LinAlgError`` for an indefinite matrix.
    """
    try:
        return np.linalg.cholesky(r)
    except np.linalg.LinAlgError:
        pass
    d = r.shape[0]
    c = np.zeros_like(r)
    tol = 1e-10 * max(1.0, float(np.max(np.abs(np.diag(r)))))
    for j in range(d):
        pivot = r[j, j] - c[j, :j] @ c[j, :j]
        if pivot < -tol:
            raise LinAlgError("the correlation matrix is not positive semi-definite")
        if pivot <= tol:
            resid = r[j + 1:, j] - c[j + 1:, :j] @ c[j, :j]
            if np.any(np.abs(resid) > np.sqrt(tol)):
                raise LinAlgError("the correlation matrix is not positive semi-definite")
            continue
        c[j, j] = np.sqrt(pivot)
        c[j + 1:, j] = (r[j + 1:, j] - c[j + 1:, :j] @ c[j, :j]) / c[j, j]
    return c


def sdcor_to_factor(values: np.ndarray, d: int) -> np.ndarray:
    """The lower-triangular ``L`` (diagonal >= 0) with ``L L' = D R D`` from one term's sd's and correlations.

    ``L = D chol(R)``: defined for any sd >= 0 and a positive semi-definite correlation matrix ``R`` (a
    correlation of +-1, as in a singular fit, gives a zero diagonal element).

    Examples
    --------
    >>> sdcor_to_factor(np.array([2.0, 0.5, 3.0]), 2).round(4)
    array([[2.    , 0.    ],
           [1.5   , 2.5981]])
    """
    sd, corr = _unpack(np.asarray(values, dtype=float), d)
    return np.abs(sd)[:, None] * _chol_psd(corr)


def factor_to_sdcor(lam: np.ndarray) -> np.ndarray:
    """One term's sd's and correlations (theta order) of ``Sigma = L L'`` (a correlation with an sd at 0: 0).

    Examples
    --------
    >>> factor_to_sdcor(np.array([[2.0, 0.0], [1.5, 2.598076211353316]])).round(6)
    array([2. , 0.5, 3. ])
    """
    cov = lam @ lam.T
    sd = np.sqrt(np.maximum(np.diag(cov), 0.0))
    rows, cols = _tril_template(lam.shape[0])
    out = np.empty(rows.size)
    for k, (i, j) in enumerate(zip(rows, cols)):
        if i == j:
            out[k] = sd[i]
        else:
            den = sd[i] * sd[j]
            out[k] = float(np.clip(cov[i, j] / den, -1.0, 1.0)) if den > 0 else 0.0
    return out


def _factor_derivatives(values: np.ndarray, d: int) -> list[np.ndarray]:
    """``dL / dv`` for each of one term's values ``v`` (theta order), ``L = D chol(R)``.

    ``d L / d sd_i = e_i e_i' chol(R)``; ``d L / d rho_ij = D C Phi(C^{-1} (E_ij + E_ji) C^{-T})`` with
    ``C = chol(R)`` and ``Phi`` the lower triangle with half the diagonal (the derivative of a Cholesky factor).
    """
    sd, corr = _unpack(np.asarray(values, dtype=float), d)
    c = np.linalg.cholesky(corr)
    rows, cols = _tril_template(d)
    out = []
    for i, j in zip(rows, cols):
        if i == j:
            dl = np.zeros((d, d))
            dl[i] = c[i] * (1.0 if sd[i] >= 0 else -1.0)
        else:
            e = np.zeros((d, d))
            e[i, j] = e[j, i] = 1.0
            tmp = solve_triangular(c, solve_triangular(c, e, lower=True).T, lower=True).T  # C^{-1} E C^{-T}
            phi = np.tril(tmp)
            phi[np.diag_indices(d)] *= 0.5
            dl = np.abs(sd)[:, None] * (c @ phi)
        out.append(dl)
    return out


class SlopeFitModel(FitModelBase):
    """:class:`~mixeval.uncertainty.FitModel` of a linear mixed model with random slopes (general evaluator).

    Parameters
    ----------
    fit : LmerResult
        A fit with random slopes (``fit.has_slopes``) and its rows.

    Notes
    -----
    The variance parameters are, per term, lme4's ``Sv`` (sd's and correlations in theta positions), then
    ``sigma``. At given ``Sv`` and ``sigma`` the relative factor is ``Lambda_k = D_k chol(R_k) / sigma``
    and the ML deviance (fixed effects profiled, lme4's ``devfun2``) is

    ``d = log|A(theta)| + r2(theta) / sigma^2 + n log(2 pi sigma^2)``.

    Its gradient follows from the evaluator's exact theta gradient at fixed ``sigma`` (:meth:`_theta_pieces`)
    and the chain rule through ``Lambda(Sv, sigma)`` (:func:`_factor_derivatives`; ``dLambda / dsigma =
    -Lambda / sigma``).

    The profile works on the block statistics of the response centred and scaled as the fit's
    (``y* = (y - a) / s``) with the fixed-effect columns scaled as the fit's (``X T``) but the random terms'
    columns as given, so that theta is the data's theta; the ML deviance of the data is the scaled one
    plus ``2 n log s``. A fixed effect ``beta_j = v`` is the linear constraint ``(T' e_j)' beta* = (v - a c_j) / s``
    on the scaled coefficients, imposed by an offset and a basis of the constraint's null space. Refits use the
    fit's own (scaled) statistics with the response columns replaced, and map back as :func:`mixeval.lmer`.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import lmer
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(20), 6)
    >>> x = np.tile([-1.0, 0, 1], 40)
    >>> y = rng.normal(size=20)[g] + (1 + rng.normal(0, 0.5, 20)[g]) * x + rng.normal(size=120)
    >>> fit = lmer("y ~ x + (1 + x|g)", pd.DataFrame({"g": g, "x": x, "y": y}))
    >>> SlopeFitModel(fit).param_names
    ('sd_(Intercept)|g', 'cor_x.(Intercept)|g', 'sd_x|g', 'sigma', '(Intercept)', 'x')
    """

    def __init__(self, fit) -> None:
        require_fitted(fit, gaussian=True, entry="mixeval.lmer")
        if not fit.has_slopes:
            raise InputError("SlopeFitModel is for fits with random slopes; use as_fit_model(fit) for others.")
        if fit.design.X is None:
            raise InputError("this fit was made from aggregates (no rows): simulation and refits need the rows; "
                             "fit a pandas DataFrame with mixeval.lmer.")
        self.fit = fit
        self.design = fit.design
        self.reml = fit.reml
        self.nobs = fit.nobs
        self.fixed_names = tuple(fit.fixed_names)
        self.group_names = tuple(fit.group_names)
        self.coef_names = tuple(fit.term_coef_names)
        self.dims = tuple(len(c) for c in self.coef_names)
        self.scaling: Scaling = fit.scaling if fit.scaling is not None else identity_scaling(len(self.fixed_names),
                                                                                            self.dims)
        names, kinds = [], []
        for g, coefs in zip(self.group_names, self.coef_names):
            nm, kd = term_layout(g, coefs)
            names += nm
            kinds += kd
        self.varpar_names = tuple(names) + ("sigma",)
        self.varpar_kinds = tuple(kinds) + ("sigma",)
        self.param_names = self.varpar_names + self.fixed_names
        if len(set(self.param_names)) != len(self.param_names):
            dup = sorted({n for n in self.param_names if self.param_names.count(n) > 1})
            raise InputError(f"the model has repeated parameter names {dup} (the same coefficient in two terms of one "
                             "group); intervals need distinct names: merge the terms, e.g. (1 + x | g).")
        self._truth = (np.asarray(fit.theta, dtype=float), float(fit.sigma), np.asarray(fit.coef, dtype=float))

    def _set_parameters(self, params: np.ndarray) -> None:
        """lme4's theta, ``sigma`` and ``beta`` of ``params`` (:meth:`~._protocol.FitModelBase.at`)."""
        n_var = len(self.varpar_names)
        varpar = params[:n_var]
        kinds = np.asarray(self.varpar_kinds)
        if not varpar[-1] > 0 or np.any(varpar[kinds == "sd"] < 0) or np.any(np.abs(varpar[kinds == "cor"]) > 1):
            raise InputError("at(): standard deviations must be >= 0, correlations in [-1, 1] and sigma > 0; got "
                             f"{varpar.tolist()}.")
        try:
            theta = self.varpar_to_theta(varpar)
        except (LinAlgError, np.linalg.LinAlgError):
            raise InputError(f"at(): the correlations {varpar[kinds == 'cor'].tolist()} do not form a correlation "
                             "matrix.") from None
        self._truth = (theta, float(varpar[-1]), params[n_var:].copy())

    # ------------------------------------------------------------------ the two parametrisations
    def varpar_to_theta(self, varpar: np.ndarray) -> np.ndarray:
        """lme4's theta (relative factors of the data) at the variance parameters ``(Sv, sigma)``."""
        varpar = np.asarray(varpar, dtype=float)
        sigma = float(varpar[-1])
        out, start = [], 0
        for d in self.dims:
            k = d * (d + 1) // 2
            lam = sdcor_to_factor(varpar[start:start + k], d) / sigma
            rows, cols = _tril_template(d)
            out.append(lam[rows, cols])
            start += k
        return np.concatenate(out)

    def theta_to_varpar(self, theta: np.ndarray, sigma: float) -> np.ndarray:
        """``(Sv, sigma)`` of lme4's theta (of the data) and ``sigma``."""
        lams = theta_to_factors(tuple(_Dim(d) for d in self.dims), np.asarray(theta, dtype=float))
        return np.concatenate([factor_to_sdcor(sigma * lam) for lam in lams] + [[sigma]])

    # ------------------------------------------------------------------ estimates
    def estimates(self) -> np.ndarray:
        """The fit's own parameters (REML or ML as fitted) in :attr:`param_names` order."""
        return np.concatenate([self.theta_to_varpar(self.fit.theta, self.fit.sigma), self.fit.coef])

    @cached_property
    def _profile_stats(self) -> BlockStats:
        """Block statistics of ``[X T, (y - a) / s]`` with the random terms' columns as given."""
        sc = self.scaling
        d = self.design
        scaled = replace(d, X=np.asarray(d.X, dtype=float) @ sc.T, y=(np.asarray(d.y, dtype=float) - sc.y_shift) / sc.y_scale)
        return compute_block_stats(build_restructure(scaled), scaled.X, scaled.y)

    @cached_property
    def _ml(self) -> tuple[np.ndarray, np.ndarray, float]:
        stats = self._profile_stats
        with single_threaded_blas():
            opt = optimize_general(stats, reml=False, theta0=self._start(self.fit.theta))
            parts = general_deviance_parts(stats, opt.theta, False)
        n, s = self.nobs, self.scaling.y_scale
        sigma = s * float(np.sqrt(parts.r2 / n))
        varpar = self.theta_to_varpar(opt.theta, sigma)
        beta = self.scaling.beta(parts.beta)
        return varpar, beta, float(parts.deviance + 2.0 * n * np.log(s))

    def ml_estimates(self) -> tuple[np.ndarray, np.ndarray, float]:
        varpar, beta, dev = self._ml
        return varpar.copy(), beta.copy(), dev

    def _start(self, theta: np.ndarray) -> np.ndarray:
        """A starting theta with no diagonal element at the boundary (the optimiser could not leave it)."""
        theta = np.asarray(theta, dtype=float).copy()
        diag = np.concatenate([(lambda rc: rc[0] == rc[1])(_tril_template(d)) for d in self.dims])
        theta[diag & (theta < 1e-4)] = 0.1
        return theta

    # ------------------------------------------------------------------ deviances
    def ml_deviance(self, varpar: np.ndarray) -> float:
        """The ML deviance (of the data as given) at the variance parameters ``varpar``, beta profiled."""
        varpar = np.asarray(varpar, dtype=float)
        sigma = float(varpar[-1])
        if not (sigma > 0 and np.all(np.isfinite(varpar))):
            return float("inf")
        try:
            theta = self.varpar_to_theta(varpar)
            parts = general_deviance_parts(self._profile_stats, theta, False)
        except (LinAlgError, np.linalg.LinAlgError):
            return float("inf")
        r2 = parts.r2 * self.scaling.y_scale**2
        return float(parts.logdet_a + r2 / sigma**2 + self.nobs * (_LOG_2PI + 2.0 * np.log(sigma)))

    def _theta_pieces(self, theta: np.ndarray, sigma: float) -> tuple[float, float, np.ndarray]:
        """``log|A|``, ``r2`` (of the data) and the theta gradient of ``log|A| + r2 / sigma^2`` at ``theta``.

        The evaluator's profiled gradient is ``dlog|A| + m dr2 / r2`` with ``m`` the statistics' ``nobs``
        (it enters nowhere else); evaluated with ``m = r2 / sigma^2`` (scaled units) it is the gradient at
        fixed ``sigma``: one gradient evaluation after one deviance evaluation.
        """
        stats = self._profile_stats
        s_y = self.scaling.y_scale
        parts = general_deviance_parts(stats, theta, False)
        _, grad = general_deviance_and_gradient(replace(stats, nobs=parts.r2 / (sigma / s_y) ** 2), theta, False)
        return float(parts.logdet_a), float(parts.r2 * s_y**2), grad

    def ml_deviance_and_gradient(self, varpar: np.ndarray) -> tuple[float, np.ndarray]:
        """:meth:`ml_deviance` and its gradient in ``varpar`` (``Sv`` term by term, then ``sigma``)."""
        varpar = np.asarray(varpar, dtype=float)
        sigma = float(varpar[-1])
        if not (sigma > 0 and np.all(np.isfinite(varpar))):
            return float("inf"), np.zeros(varpar.size)
        try:
            theta = self.varpar_to_theta(varpar)
            logdet, r2, g_theta = self._theta_pieces(theta, sigma)
            derivs = [_factor_derivatives(varpar[a:a + d * (d + 1) // 2], d)
                      for a, d in zip(np.cumsum([0] + [d * (d + 1) // 2 for d in self.dims[:-1]]), self.dims)]
        except (LinAlgError, np.linalg.LinAlgError):
            return float("inf"), np.zeros(varpar.size)
        n, s2 = self.nobs, sigma * sigma
        value = float(logdet + r2 / s2 + n * (_LOG_2PI + np.log(s2)))
        grad = np.empty(varpar.size)
        start = 0
        for d, term_derivs in zip(self.dims, derivs):
            k = d * (d + 1) // 2
            rows, cols = _tril_template(d)
            for a, dl in enumerate(term_derivs):
                grad[start + a] = float(g_theta[start:start + k] @ dl[rows, cols]) / sigma
            start += k
        grad[-1] = float(2.0 * n / sigma - 2.0 * r2 / (s2 * sigma) - g_theta @ theta / sigma)
        return value, grad

    def profile_varpar(self, index: int, value: float, start: np.ndarray) -> tuple[float, np.ndarray] | None:
        """The ML deviance minimised over the other parameters with standard deviation or ``sigma`` number
        ``index`` held at ``value``, optimised over theta (an optional :class:`FitModel` member; None for a
        correlation, which the profile optimises in lme4's ``Sv`` coordinates).

        Returns ``(deviance, varpar)`` at the optimum. Over theta, where a variance goes to 0 the correlations
        that lose their meaning are no coordinates and the optimum is a smooth interior or bound point; over
        ``Sv`` they are flat directions with several local optima (a 3 x 3 term on a small design: the
        intervals came out 3% narrower than lme4's, the optimiser stopping short of the minimum).

        Notes
        -----
        ``sigma`` held: the coordinates are theta (``theta_ii >= 0``). ``sd_i`` of term ``k`` held: row ``i``
        of ``Lambda_k`` is ``(v / sigma) w / |w|`` (``w`` free, its last element >= 0; row 0 is the constant
        ``v / sigma``), the other elements of theta free, and ``log sigma``. Gradients by the chain rule from
        the theta gradient at fixed sigma (:meth:`_theta_pieces`) and ``dd/dsigma = 2 n / sigma - 2 r2 / sigma^3``.
        """
        kind = self.varpar_kinds[index]
        if kind == "cor":
            return None
        start = np.asarray(start, dtype=float).copy()
        start[index] = value
        n = self.nobs
        theta0 = self.varpar_to_theta(start)
        diag = np.concatenate([(lambda rc: rc[0] == rc[1])(_tril_template(d)) for d in self.dims])
        theta_lower = np.where(diag, 0.0, -np.inf)

        def deviance(theta: np.ndarray, sigma: float):
            logdet, r2, g = self._theta_pieces(theta, sigma)
            return float(logdet + r2 / sigma**2 + n * (_LOG_2PI + 2.0 * np.log(sigma))), g, r2

        if kind == "sigma":
            sigma = float(value)

            def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
                value_, g, _ = deviance(x, sigma)
                return value_, g

            res = minimize_deviance(fg, np.maximum(theta0, theta_lower), theta_lower)
            par = self.theta_to_varpar(np.maximum(res.theta, theta_lower), sigma)
            return float(res.deviance), par
        # a standard deviation: locate its row in theta
        offset, local = 0, index
        for d in self.dims:
            k = d * (d + 1) // 2
            if local < k:
                break
            offset += k
            local -= k
        rows, cols = _tril_template(d)
        row = int(rows[local])
        in_row = offset + np.flatnonzero(rows == row)  # theta positions of row `row` (its diagonal last)
        free = np.setdiff1d(np.arange(theta0.size), in_row)
        nw = row + 1 if row > 0 else 0
        v = float(abs(value))
        w0 = theta0[in_row].copy() if nw else np.zeros(0)
        if nw and not np.any(w0):
            w0[-1] = 1.0
        x0 = np.concatenate([theta0[free], w0, [np.log(start[-1])]])
        lower = np.concatenate([theta_lower[free], np.where(np.arange(nw) == nw - 1, 0.0, -np.inf),
                                [-np.inf]])

        def unpack(x: np.ndarray):
            theta = np.empty(theta0.size)
            theta[free] = x[:free.size]
            w = x[free.size:free.size + nw]
            sigma = float(np.exp(x[-1]))
            norm_w = float(np.linalg.norm(w)) if nw else 1.0
            u = w / norm_w if nw else np.ones(1)
            theta[in_row] = (v / sigma) * u
            return theta, sigma, u, norm_w

        def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
            theta, sigma, u, norm_w = unpack(x)
            if not np.isfinite(norm_w) or norm_w == 0.0:
                return float("inf"), np.zeros(x.size)
            value_, g, r2 = deviance(theta, sigma)
            g_row = g[in_row]
            grad = np.empty(x.size)
            grad[:free.size] = g[free]
            if nw:
                grad[free.size:free.size + nw] = (v / sigma) * (g_row - u * float(u @ g_row)) / norm_w
            grad[-1] = 2.0 * n - 2.0 * r2 / sigma**2 - (v / sigma) * float(g_row @ u)
            return value_, grad

        res = minimize_deviance(fg, np.maximum(x0, lower), lower)
        theta, sigma, _, _ = unpack(np.maximum(res.theta, lower))
        par = self.theta_to_varpar(theta, sigma)
        par[index] = value
        return float(res.deviance), par

    def stats_with_fixed(self, j: int, value: float) -> BlockStats:
        """Profile statistics of the model with fixed effect ``j`` (of the data) held at ``value``.

        With ``beta = s T beta* + a c`` the constraint is ``w' beta* = r``, ``w = T' e_j``,
        ``r = (value - a c_j) / s``; ``beta* = beta_0 + N gamma`` (``beta_0 = r w / w'w``, ``N`` an orthonormal
        basis of ``w``'s null space) turns ``W = [X y]`` into ``[X N, y - X beta_0] = W t``.
        """
        s = self._profile_stats
        sc = self.scaling
        p = s.p
        w = sc.T[j, :]
        r = (float(value) - sc.y_shift * sc.c[j]) / sc.y_scale
        beta0 = r * w / float(w @ w)
        q, _ = np.linalg.qr(w[:, None], mode="complete")
        t = np.zeros((p + 1, p))
        t[:p, :p - 1] = q[:, 1:]
        t[:p, p - 1] = -beta0
        t[p, p - 1] = 1.0
        return replace(s, p=p - 1, z0w=s.z0w @ t, zrw=s.zrw @ t, ww=t.T @ s.ww @ t)

    def ml_deviance_fixed(self, j: int, value: float) -> float:
        """The ML deviance minimised over theta (and the other fixed effects) with ``beta_j = value``."""
        stats = self.stats_with_fixed(j, value)
        theta0 = self.varpar_to_theta(self._ml[0])
        try:
            opt = optimize_general(stats, reml=False, theta0=self._start(theta0))
        except (LinAlgError, np.linalg.LinAlgError):
            return float("inf")
        return float(opt.deviance + 2.0 * self.nobs * np.log(self.scaling.y_scale))

    # ------------------------------------------------------------------ simulation
    @cached_property
    def _zt(self) -> sp.csr_matrix:
        """``Z'`` of the data as given."""
        return build_restructure(self.design).Zt.tocsr()

    def simulate(self, n_sim: int, rng: np.random.Generator, *, theta: np.ndarray | None = None,
                 sigma: float | None = None, beta: np.ndarray | None = None) -> np.ndarray:
        """``n_sim`` responses ``X beta + Z Lambda u sigma + sigma e`` (``u``, ``e`` standard normal; lme4's
        ``simulate(use.u = FALSE)``), from the model's parameters (the fit's, or those of :meth:`at`) or from given
        theta, sigma and beta."""
        theta = self._truth[0] if theta is None else np.asarray(theta, dtype=float)
        sigma = self._truth[1] if sigma is None else float(sigma)
        beta = self._truth[2] if beta is None else np.asarray(beta, dtype=float)
        mean = self.design.X @ beta if beta.size else np.zeros(self.nobs)
        Y = sigma * rng.standard_normal((self.nobs, n_sim))
        u = rng.standard_normal((self._zt.shape[0], n_sim))
        lamt = build_restructure(self.design).lambdat(theta)
        Y += sigma * np.asarray(self._zt.T @ (lamt.T @ u))
        Y += mean[:, None]
        return Y

    # ------------------------------------------------------------------ refits
    @cached_property
    def _scaled_design(self):
        """The design the fit's statistics belong to: ``[X T, (y - a) / s]``, term columns ``X_k T_k``."""
        sc, d = self.scaling, self.design
        groups = tuple(g if getattr(g, "X", None) is None else replace(g, X=np.asarray(g.X, dtype=float) @ Tk)
                       for g, Tk in zip(d.groups, sc.term_T))
        return replace(d, X=np.asarray(d.X, dtype=float) @ sc.T, groups=groups)

    @cached_property
    def _scaled_zt(self) -> sp.csr_matrix:
        return build_restructure(self._scaled_design).Zt.tocsr()

    def stats_for(self, Y: np.ndarray) -> list[BlockStats]:
        """The fit's (scaled) block statistics with the response replaced by each column of ``Y``."""
        s: BlockStats = self.fit.stats
        sc = self.scaling
        Y = np.asarray(Y, dtype=float)
        if Y.ndim == 1:
            Y = Y[:, None]
        Ys = (Y - sc.y_shift) / sc.y_scale
        p = s.p
        q0 = s.z0w.shape[0]
        xty = self._scaled_design.X.T @ Ys
        yty = np.einsum("ij,ij->j", Ys, Ys)
        zy = np.asarray(self._scaled_zt @ Ys)
        out = []
        for b in range(Ys.shape[1]):
            ww = s.ww.copy()
            ww[:p, p] = ww[p, :p] = xty[:, b]
            ww[p, p] = yty[b]
            z0w = s.z0w.copy()
            z0w[:, p] = zy[:q0, b]
            zrw = s.zrw.copy()
            zrw[:, p] = zy[q0:, b]
            out.append(replace(s, z0w=z0w, zrw=zrw, ww=ww))
        return out

    @cached_property
    def _variance_names(self) -> tuple[str, ...]:
        frame = self.fit.varcorr_frame()
        return tuple(str(k) for k in frame[frame.var2.isna()].name)

    def refit(self, Y: np.ndarray, reml: bool | None = None, *, hessian: bool = False) -> list[RefitSummary]:
        """Re-estimate the model on each column of ``Y`` (REML like the fit unless ``reml`` says otherwise; the
        covariance of the fixed effects is exact, ``hessian`` changes nothing).

        The optimiser starts at the model's theta (the fit's, as ``bootMer``'s refits, or that of :meth:`at`), a
        diagonal element at 0 moved to 0.1.
        """
        reml = self.reml if reml is None else bool(reml)
        sc = self.scaling
        n, p = self.nobs, len(self.fixed_names)
        start = self._start(self.fit.scaled_theta(self._truth[0]))
        dims = tuple(_Dim(d) for d in self.dims)
        out = []
        with single_threaded_blas():
            for stats in self.stats_for(Y):
                opt = optimize_general(stats, reml, theta0=start)
                parts = general_deviance_parts(stats, opt.theta, reml)
                sigma2_s = parts.r2 / (n - p if reml else n)
                sigma = sc.y_scale * float(np.sqrt(sigma2_s))
                lams = [map_factor(Tk, lam) for Tk, lam in zip(sc.term_T, theta_to_factors(dims, opt.theta))]
                sdcor = [factor_to_sdcor(sigma * lam) for lam in lams]
                variances = [float(v) ** 2 for lam, sv in zip(lams, sdcor)
                             for v, (i, j) in zip(sv, zip(*_tril_template(lam.shape[0]))) if i == j]
                cov = sc.cov_beta(sigma2_s * np.linalg.inv(parts.mxx)) if p else np.zeros((0, 0))
                singular = any(np.any(np.diag(lam) < SINGULAR_TOL) for lam in lams)
                params = np.concatenate(sdcor + [[sigma], sc.beta(parts.beta) if p else np.zeros(0)])
                out.append(RefitSummary(params=params,
                                        variances=dict(zip(self._variance_names, variances + [sigma * sigma])),
                                        cov_coef=cov, criterion=float(sc.criterion(parts.deviance, n, p, reml)),
                                        singular=bool(singular)))
        return out

    def wald_intervals(self, level: float = 0.95) -> dict[str, tuple[float, float]]:
        """Wald intervals of the sd's and correlations (:func:`wald_varpar_slopes`) and the fixed effects."""
        from scipy.stats import norm

        z = float(norm.ppf(0.5 + level / 2.0))
        return wald_varpar_slopes(self.fit, z) | fixed_effect_wald(self.fit, z)

    def refit_result(self, y: np.ndarray, reml: bool | None = None):
        """A full :class:`~mixeval.mixed.LmerResult` on the new response ``y`` (same design, same scaling)."""
        reml = self.reml if reml is None else bool(reml)
        y = np.asarray(y, dtype=float)
        stats = self.stats_for(y[:, None])[0]
        return self.fit.fit_statistics(replace(self.design, y=y.copy()), stats, reml=reml)


def wald_varpar_slopes(fit, z: float) -> dict[str, tuple[float, float]]:
    """Wald intervals of a slope fit's sd's, correlations and ``sigma`` (lme4 gives NA for these).

    Delta method on the asymptotic covariance of the variances and covariances (:meth:`LmerResult.varcomp_cov`):
    ``se(sd_i) = se(v_i) / (2 sd_i)`` truncated at 0, and for ``rho = c_ij / sqrt(v_i v_j)`` the gradient
    ``(1 / sqrt(v_i v_j), -rho / (2 v_i), -rho / (2 v_j))`` in ``(c_ij, v_i, v_j)``, the ends clipped to [-1, 1].
    NaN where a variance is 0 and for the correlations of a singular term (a correlation at +-1): the normal
    approximation does not hold on the boundary (use the profile or the bootstrap).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import lmer
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(20), 6)
    >>> x = np.tile([-1.0, 0, 1], 40)
    >>> y = rng.normal(size=20)[g] + (1 + rng.normal(0, 0.5, 20)[g]) * x + rng.normal(size=120)
    >>> fit = lmer("y ~ x + (1 + x|g)", pd.DataFrame({"g": g, "x": x, "y": y}))
    >>> sorted(wald_varpar_slopes(fit, 1.96))
    ['cor_x.(Intercept)|g', 'sd_(Intercept)|g', 'sd_x|g', 'sigma']
    """
    frame = fit.varcorr_frame()
    cov = fit.varcomp_cov()
    out: dict[str, tuple[float, float]] = {}
    nan = (float("nan"), float("nan"))
    lams = theta_to_factors(tuple(_Dim(len(c)) for c in fit.term_coef_names), fit.theta)
    row = 0
    for term, (g, coefs) in enumerate(zip(fit.group_names, fit.term_coef_names)):
        d = len(coefs)
        var_keys = list(frame.name[row:row + d])
        cov_keys = list(frame.name[row + d:row + d * (d + 1) // 2])
        row += d * (d + 1) // 2
        v = np.array([cov.index.get_loc(k) for k in var_keys])
        variances = frame.vcov.to_numpy()[row - d * (d + 1) // 2:row - d * (d + 1) // 2 + d]
        c = cov.to_numpy()
        for i in range(len(var_keys)):
            name = f"sd_{coefs[i]}|{g}"
            var, cvv = float(variances[i]), float(c[v[i], v[i]])
            if var > 0 and np.isfinite(cvv) and cvv >= 0:
                sd, se = np.sqrt(var), np.sqrt(cvv) / (2.0 * np.sqrt(var))
                out[name] = (max(sd - z * se, 0.0), sd + z * se)
            else:
                out[name] = nan
        pairs = [(i, j) for i in range(d) for j in range(i + 1, d)]
        singular = bool(np.any(np.diag(lams[term]) < SINGULAR_TOL))
        for (i, j), key in zip(pairs, cov_keys):
            name = f"cor_{coefs[j]}.{coefs[i]}|{g}"
            vi, vj = float(variances[i]), float(variances[j])
            if singular or not (vi > 0 and vj > 0):
                out[name] = nan
                continue
            k = cov.index.get_loc(key)
            cij = float(frame.vcov[frame.name == key].iloc[0])
            rho = cij / np.sqrt(vi * vj)
            grad = np.array([1.0 / np.sqrt(vi * vj), -rho / (2.0 * vi), -rho / (2.0 * vj)])
            idx = [k, v[i], v[j]]
            var_rho = float(grad @ c[np.ix_(idx, idx)] @ grad)
            if np.isfinite(var_rho) and var_rho >= 0:
                se = np.sqrt(var_rho)
                out[name] = (max(rho - z * se, -1.0), min(rho + z * se, 1.0))
            else:
                out[name] = nan
    cvv = float(cov.loc["Residual", "Residual"])
    if np.isfinite(cvv) and cvv >= 0:
        se = np.sqrt(cvv) / (2.0 * fit.sigma)
        out["sigma"] = (max(fit.sigma - z * se, 0.0), fit.sigma + z * se)
    else:
        out["sigma"] = nan
    return out
