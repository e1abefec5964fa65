"""What a fitted GLMM (:func:`mixeval.glmer`) offers the uncertainty tools: lme4's ``profile.glmerMod``,
``bootMer`` and Wald intervals for binomial and Poisson models.

Parameters, named and ordered as lme4's ``confint(..., oldNames = FALSE)`` of a ``glmerMod``: the random
effects' standard deviations and correlations term by term (``"sd_(Intercept)|item"``,
``"cor_x.(Intercept)|g"``), then the fixed effects. There is no ``sigma`` (binomial and Poisson have no
dispersion parameter).

Stages, each callable alone: :func:`varpar_from_theta` / :func:`theta_from_varpar` (lme4's ``Cv_to_Sv`` and
back), :meth:`GlmmFitModel.profile_deviance` (the deviance with one parameter held, every other one
re-optimised), :meth:`GlmmFitModel.simulate` (responses from the fitted model with new random effects) and
:meth:`GlmmFitModel.refit` (the engine's two-stage fit on a new response).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.stats import norm

from ..errors import InputError
from ._batch_laplace import BatchLaplace, supports_batch
from ._blas import single_threaded_blas
from ._glmm import GlmmFit, _hessian
from ._optimize import (
    SINGULAR_TOL,
    finite_difference_gradient,
    finite_difference_hessian,
    minimize_deviance,
)
from ._pirls import (
    agq_deviance,
    joint_system,
    laplace_deviance,
    pirls,
    supports_beta_gradient,
    supports_gradient,
)
from ._profile import JointProfiler, joint_profile_deviance
from ._protocol import FitModelBase, RefitSummary, fixed_effect_wald, require_fitted
from ._reterms import ReTerm, _tril_template, theta_to_factors

__all__ = ["GlmmFitModel", "theta_from_varpar", "varpar_from_theta", "varpar_layout", "profile_start_hessian"]


def varpar_layout(terms: tuple[ReTerm, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Names and kinds (``"sd"``/``"cor"``) of the variance parameters, in theta's order per term.

    Each term contributes the lower triangle of its sd/correlation matrix column-wise (lme4's order:
    for ``(1 + x | g)``: ``sd_(Intercept)|g``, ``cor_x.(Intercept)|g``, ``sd_x|g``).

    Examples
    --------
    >>> import numpy as np
    >>> t = ReTerm("g", ("(Intercept)", "x"), np.zeros(2, int), ("a",), np.ones((2, 2)))
    >>> varpar_layout((t,))
    (('sd_(Intercept)|g', 'cor_x.(Intercept)|g', 'sd_x|g'), ('sd', 'cor', 'sd'))
    """
    from ._slopes_model import term_layout

    names, kinds = (), ()
    for t in terms:
        n, k = term_layout(t.group, tuple(t.coef_names))
        names, kinds = names + n, kinds + k
    return names, kinds


def varpar_from_theta(terms: tuple[ReTerm, ...], theta: np.ndarray) -> np.ndarray:
    """Standard deviations and correlations of the random effects at ``theta`` (lme4's ``Cv_to_Sv``).

    Notes
    -----
    Per term ``Sigma = Lambda Lambda'``; ``sd_i = sqrt(Sigma_ii)``, ``cor_ij = Sigma_ij / (sd_i sd_j)``
    (0 where an sd is 0).

    Examples
    --------
    >>> import numpy as np
    >>> t = ReTerm("g", ("(Intercept)", "x"), np.zeros(2, int), ("a",), np.ones((2, 2)))
    >>> varpar_from_theta((t,), np.array([3.0, 2.4, 3.2])).round(6).tolist()  # sd 3, cor 0.6, sd 4
    [3.0, 0.6, 4.0]
    """
    out = []
    for t, lam in zip(terms, theta_to_factors(terms, theta)):
        cov = lam @ lam.T
        sd = np.sqrt(np.maximum(np.diag(cov), 0.0))
        rows, cols = _tril_template(t.n_coef)
        for i, j in zip(rows, cols):
            if i == j:
                out.append(sd[i])
            else:
                d = sd[i] * sd[j]
                out.append(cov[i, j] / d if d > 0 else 0.0)
    return np.asarray(out, dtype=float)


def _semidefinite_cholesky(c: np.ndarray, tol: float = 1e-10) -> np.ndarray | None:
    """The lower-triangular ``L`` with ``L L' = c`` of a positive semi-definite ``c`` (a zero column where a pivot
    is 0, as at a correlation of +-1, a boundary fit's estimate); None if ``c`` is not positive semi-definite.

    Examples
    --------
    >>> _semidefinite_cholesky(np.array([[1.0, -1.0], [-1.0, 1.0]])).tolist()
    [[1.0, 0.0], [-1.0, 0.0]]
    >>> _semidefinite_cholesky(np.array([[1.0, 1.5], [1.5, 1.0]])) is None
    True
    """
    n = c.shape[0]
    L = np.zeros_like(c, dtype=float)
    for j in range(n):
        d = c[j, j] - L[j, :j] @ L[j, :j]
        if d < -tol:
            return None
        L[j, j] = np.sqrt(max(d, 0.0))
        for i in range(j + 1, n):
            r = c[i, j] - L[i, :j] @ L[j, :j]
            if L[j, j] > tol:
                L[i, j] = r / L[j, j]
            elif abs(r) > np.sqrt(tol):
                return None
    return L


def theta_from_varpar(terms: tuple[ReTerm, ...], varpar: np.ndarray) -> np.ndarray:
    """``theta`` of standard deviations and correlations (lme4's ``Sv_to_Cv``); NaN if a correlation matrix is not positive definite.

    Notes
    -----
    ``Lambda = diag(sd) chol(C)``: lower triangular, ``Lambda Lambda' = diag(sd) C diag(sd)``, and defined also
    where an sd is 0.

    Examples
    --------
    >>> import numpy as np
    >>> t = ReTerm("g", ("(Intercept)", "x"), np.zeros(2, int), ("a",), np.ones((2, 2)))
    >>> theta_from_varpar((t,), np.array([3.0, 0.6, 4.0])).round(6).tolist()
    [3.0, 2.4, 3.2]
    """
    varpar = np.asarray(varpar, dtype=float)
    out, start = [], 0
    for t in terms:
        rows, cols = _tril_template(t.n_coef)
        vals = varpar[start:start + t.n_theta]
        start += t.n_theta
        if t.n_coef == 1:
            out.append(vals)
            continue
        sd = np.abs(vals[rows == cols])
        c = np.eye(t.n_coef)
        off = rows != cols
        c[rows[off], cols[off]] = vals[off]
        c[cols[off], rows[off]] = vals[off]
        lc = _semidefinite_cholesky(c)
        if lc is None:
            out.append(np.full(t.n_theta, np.nan))
            continue
        lam = sd[:, None] * lc
        out.append(lam[rows, cols])
    return np.concatenate(out) if out else np.zeros(0)


def profile_start_hessian(terms: tuple[ReTerm, ...], kinds: tuple[str, ...], estimates: np.ndarray,
                          hessian: np.ndarray) -> np.ndarray | None:
    """The Hessian of a deviance at its optimum in the profile's coordinates (sd's, ``atanh`` of correlations, then
    the fixed parameters unchanged), from its Hessian ``hessian`` over the engine's ``(theta, fixed)``.

    Notes
    -----
    ``H_z = J' H_x J`` with ``J = d x / d z`` (``x = (theta, fixed)``, ``theta`` from the sd's and correlations by
    :func:`theta_from_varpar`, ``J`` by central differences); the gradient vanishes at the optimum, so there is no
    second-order term. ``H_x`` itself for scalar terms (there ``z = x``). None where a correlation is at +-1 or the
    result is not finite.

    Examples
    --------
    >>> t = ReTerm("g", ("(Intercept)", "x"), np.zeros(2, int), ("a",), np.ones((2, 2)))
    >>> est = np.array([3.0, 0.6, 4.0, 1.5])                    # sd, cor, sd, one fixed effect
    >>> h = profile_start_hessian((t,), ("sd", "cor", "sd", "fixed"), est, np.eye(4))
    >>> h.shape, bool(np.allclose(h, h.T))
    ((4, 4), True)
    """
    if all(t.n_coef == 1 for t in terms):
        return hessian if np.all(np.isfinite(hessian)) else None
    n_var = sum(t.n_theta for t in terms)
    cor = np.zeros(estimates.size, dtype=bool)
    cor[:n_var] = np.asarray(kinds[:n_var]) == "cor"
    z0 = np.array(estimates, dtype=float)
    if np.any(np.abs(z0[cor]) >= 1.0 - 1e-8):
        return None
    z0[cor] = np.arctanh(z0[cor])

    def to_x(z: np.ndarray) -> np.ndarray:
        par = z.copy()
        par[cor] = np.tanh(z[cor])
        return np.concatenate([theta_from_varpar(terms, par[:n_var]), par[n_var:]])

    jac = np.empty((hessian.shape[0], z0.size))
    for i in range(z0.size):
        step = 1e-6 * max(abs(z0[i]), 1e-2)
        up, down = z0.copy(), z0.copy()
        up[i] += step
        down[i] -= step
        jac[:, i] = (to_x(up) - to_x(down)) / (2.0 * step)
    h = jac.T @ hessian @ jac
    return h if np.all(np.isfinite(h)) else None


class GlmmFitModel(FitModelBase):
    """:class:`~mixeval.uncertainty.FitModel` of a generalised linear mixed model (:class:`mixeval.mixed.GlmerResult`).

    Parameters
    ----------
    fit : GlmerResult
        A binomial or Poisson fit of :func:`mixeval.glmer`.

    Notes
    -----
    The deviance is the fit's own criterion: the Laplace deviance (``nAGQ = 1``) or the adaptive
    Gauss-Hermite deviance (``nAGQ > 1``) as a function of ``(theta, beta)`` (the engine's stage-2
    criterion, lme4's ``devfun2`` for a GLMM). A fit with ``nAGQ = 0`` (whose fixed effects come from PIRLS,
    not from a likelihood's optimum) is profiled on the Laplace deviance around the Laplace optimum. The
    profile of any parameter (a standard deviation, a correlation or a fixed effect) holds it and minimises
    the deviance over all the others, standard deviations, correlations and fixed effects together, as
    ``profile.merMod`` does for a GLMM. Each constrained search starts from the last one's optimum with the
    Hessian at the fit (``2 cov_params^-1``), updated by BFGS. A restricted (``REML=True``) fit, which has no
    likelihood in the fixed effects, is replaced by the ML fit of the same model: the intervals are lme4's.

    Examples
    --------
    >>> from mixeval import glmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=40, systems=("A", "B"), n_raters=2, response="correct")
    >>> GlmmFitModel(glmer("correct ~ system + (1|item)", df)).param_names
    ('sd_(Intercept)|item', '(Intercept)', 'systemB')
    """

    reml = False

    def __init__(self, fit) -> None:
        require_fitted(fit, gaussian=False, entry="mixeval.glmer")
        if fit.reml:  # profiles and refits are of the Laplace likelihood, as lme4's: the ML fit of the same model
            fit = fit.refit(REML=False)
        self.fit = fit
        self.problem = fit.problem
        self.terms = fit.problem.re.terms
        self.n_agq = max(int(fit.nAGQ), 1)
        self.nobs = int(fit.nobs)
        self.fixed_names = tuple(fit.fixed_names)
        self.group_names = tuple(fit.group_names)
        names, kinds = varpar_layout(self.terms)
        self.family = fit.family
        self.n_sd = len(names)  # sd's and correlations
        self.n_psi = self.family.n_parameters  # the family's parameters (a dispersion, cutpoints)
        self.varpar_names = names + tuple(self.family.parameter_names)
        self.varpar_kinds = kinds + tuple(self.family.parameter_kinds)
        self.param_names = self.varpar_names + self.fixed_names
        self.n_var = len(self.varpar_names)
        self.n_theta = int(fit.theta.size)
        self._engine = GlmmFit(self.problem, self.n_agq, free_parameters=True)
        self._engine.u = fit.u.copy()
        self._engine.beta = fit.coef.copy()
        self._truth = (np.asarray(fit.theta, dtype=float), np.asarray(fit.coef, dtype=float),
                       np.asarray(fit.family_par, dtype=float))

    def _set_parameters(self, params: np.ndarray) -> None:
        """The engine's ``(theta, beta, psi)`` of ``params`` (:meth:`~._protocol.FitModelBase.at`); simulations draw
        from them and refits start there (with the fit's Hessian as the search's first curvature)."""
        kinds = np.asarray(self.varpar_kinds)
        varpar = params[: self.n_var]
        x = self._to_engine(params)
        if x is None or np.any(varpar[kinds == "sd"] < 0) or np.any(np.abs(varpar[kinds == "cor"]) > 1):
            raise InputError(f"at(): {dict(zip(self.varpar_names, varpar.tolist()))} are not valid variance and "
                             "family parameters (sd >= 0, correlations forming a correlation matrix, a dispersion > 0, "
                             "cutpoints in order).")
        k, p = self.n_theta, self.problem.p
        self._truth = (x[:k], x[k:k + p], x[k + p:])
        if self.n_psi:
            self.problem = replace(self.problem, family_par=x[k + p:])
        self.__dict__.pop("_zl", None)

    # ------------------------------------------------------------------ parameters
    def _to_engine(self, par: np.ndarray) -> np.ndarray | None:
        """The engine's point ``(theta, beta, psi)`` of ``par`` = (sd's and correlations, the family's parameters,
        fixed effects); None where it is undefined (a correlation matrix not positive definite, a dispersion
        <= 0, cutpoints out of order)."""
        par = np.asarray(par, dtype=float)
        theta = theta_from_varpar(self.terms, par[: self.n_sd])
        psi = self.family.internal_parameters(par[self.n_sd:self.n_var])
        if not np.all(np.isfinite(theta)) or (self.n_psi and not self.family.valid_parameters(psi)):
            return None
        return np.concatenate([theta, par[self.n_var:], psi])

    def _to_par(self, x: np.ndarray) -> np.ndarray:
        """``par`` of the engine's point ``x`` (the inverse of :meth:`_to_engine`)."""
        k, p = self.n_theta, self.problem.p
        values = list(self.family.parameter_values(x[k + p:]).values())
        return np.concatenate([varpar_from_theta(self.terms, x[:k]), values, x[k:k + p]])

    def _order(self) -> np.ndarray:
        """The engine's coordinates in ``par``'s order: ``(theta, psi, beta)`` from ``(theta, beta, psi)``."""
        k, p, m = self.n_theta, self.problem.p, self.n_psi
        return np.concatenate([np.arange(k), np.arange(k + p, k + p + m), np.arange(k, k + p)])

    def estimates(self) -> np.ndarray:
        """The fit's parameters in :attr:`param_names` order (sd's and correlations, the family's parameters,
        fixed effects)."""
        return self._to_par(np.concatenate([self.fit.theta, self.fit.coef, self.fit.family_par]))

    @cached_property
    def _optimum(self) -> tuple[np.ndarray, float]:
        """The engine's point ``(theta, beta, psi)`` and the deviance the profile starts from (the fit's; for
        ``nAGQ = 0`` the Laplace optimum)."""
        x = np.concatenate([self.fit.theta, self.fit.coef, self.fit.family_par])
        if int(self.fit.nAGQ) >= 1:
            return x, float(self.fit.deviance)
        lower = np.concatenate([self.problem.re.lower, np.full(self.problem.p + self.n_psi, -np.inf)])
        with single_threaded_blas():
            res = minimize_deviance(finite_difference_gradient(self._engine.stage2), x, lower)
        return res.theta.copy(), float(res.deviance)

    def ml_estimates(self) -> tuple[np.ndarray, np.ndarray, float]:
        x, dev = self._optimum
        par = self._to_par(x)
        return par[: self.n_var], par[self.n_var:], dev

    @cached_property
    def _engine_se(self) -> np.ndarray:
        """Standard errors of the engine's coordinates ``(theta, beta, psi)`` from ``cov_params`` (NaN without)."""
        cov = self.fit.cov_params
        size = self.n_theta + self.problem.p + self.n_psi
        if cov is None or cov.shape[0] != size:
            return np.full(size, np.nan)
        return np.sqrt(np.maximum(np.diag(cov), 0.0))

    def step(self, i: int) -> float:
        """About one standard error of parameter ``i`` (the profile's first bracketing step)."""
        est = self.ml_estimates()
        value = np.concatenate([est[0], est[1]])[i]
        if i >= self.n_var:
            se = float(np.sqrt(self.fit.cov_coef[i - self.n_var, i - self.n_var]))
            return se if np.isfinite(se) and se > 0 else max(abs(value), 1.0) * 0.1
        kind = self.varpar_kinds[i]
        if kind == "cor":
            return 0.2
        if i >= self.n_sd:  # the family's parameters: one standard error (a dispersion's from its logarithm's)
            se = float(self._engine_se[self.n_theta + self.problem.p + i - self.n_sd])
            se = se * abs(value) if kind == "dispersion" else se
            return se if np.isfinite(se) and se > 0 else 0.1 * max(abs(value), 1.0)
        return max(0.25 * value, 0.05)

    # ------------------------------------------------------------------ deviances
    def deviance(self, par: np.ndarray) -> float:
        """The fit's criterion at ``par`` = (sd's and correlations, the family's parameters, fixed effects)
        (``inf`` where undefined)."""
        x = self._to_engine(par)
        if x is None:
            return float("inf")
        try:
            return float(self._engine.stage2(x))
        except np.linalg.LinAlgError:
            return float("inf")

    def _deviance_and_gradient(self, par: np.ndarray) -> tuple[float, np.ndarray]:
        """:meth:`deviance` and its gradient in ``par`` (scalar terms: ``par``'s sd's are the engine's theta)."""
        x = self._to_engine(par)
        if x is None:
            return float("inf"), np.zeros(len(par))
        value, grad = self._engine.stage2_and_gradient(x)
        grad = grad[self._order()]
        disp = np.flatnonzero(np.asarray(self.varpar_kinds) == "dispersion")
        grad[disp] = grad[disp] / np.asarray(par, dtype=float)[disp]  # d psi / d value = 1 / value
        return value, grad

    @cached_property
    def _engine_hessian(self) -> np.ndarray | None:
        """``2 cov_params^-1``: the Hessian of the deviance over the engine's point ``(theta, beta, psi)`` at the fit
        (None without it)."""
        cov = self.fit.cov_params
        if cov is None or int(self.fit.nAGQ) == 0:
            return None
        try:
            h = 2.0 * np.linalg.inv(cov)
        except np.linalg.LinAlgError:
            return None
        return h if np.all(np.isfinite(h)) else None

    @cached_property
    def _hessian_theta_beta(self) -> np.ndarray | None:
        """:attr:`_engine_hessian` in ``par``'s order ``(theta, psi, beta)``."""
        h = self._engine_hessian
        return None if h is None else h[np.ix_(self._order(), self._order())]

    @cached_property
    def _start_hessian(self) -> np.ndarray | None:
        """Hessian of the deviance at the optimum in the profile's coordinates (sd's, ``atanh`` of the
        correlations, a dispersion's logarithm, cutpoints, fixed effects); it starts every constrained search (BFGS
        updates it). From ``2 cov_params^-1`` of the fit (:func:`profile_start_hessian`; the engine's coordinates of
        the family's parameters are the profile's), else forward differences of a central-difference gradient
        (once)."""
        varpar, beta, _ = self.ml_estimates()
        kinds = tuple(self.varpar_kinds[: self.n_sd]) + ("fixed",) * (self.n_psi + beta.size)
        if self._hessian_theta_beta is not None:
            internal = np.concatenate([varpar[: self.n_sd], self.family.internal_parameters(varpar[self.n_sd:]), beta])
            h = profile_start_hessian(self.terms, kinds, internal, self._hessian_theta_beta)
            if h is not None:
                return h
        all_kinds = np.array(tuple(self.varpar_kinds) + ("fixed",) * beta.size)
        cor, disp = all_kinds == "cor", all_kinds == "dispersion"
        x = np.concatenate([varpar, beta])
        x[cor] = np.arctanh(np.clip(x[cor], -1 + 1e-10, 1 - 1e-10))
        x[disp] = np.log(x[disp])

        def to_par(z: np.ndarray) -> np.ndarray:
            p = z.copy()
            p[cor] = np.tanh(z[cor])
            p[disp] = np.exp(z[disp])
            return p

        fg = finite_difference_gradient(lambda z: self.deviance(to_par(z)))
        _, grad = fg(x)
        h = finite_difference_hessian(fg, x, grad)
        return h if np.all(np.isfinite(h)) else None

    @cached_property
    def _analytic(self) -> bool:
        """Every term scalar (theta = sd) and the engine's beta gradient applies: use its gradient."""
        return (self.n_agq == 1 and all(t.n_coef == 1 for t in self.terms) and self.problem.p > 0
                and supports_beta_gradient(self.problem))

    def profile_deviance(self, index: int, value: float, start: np.ndarray) -> tuple[float, np.ndarray]:
        """The deviance minimised over every parameter but ``index``, held at ``value``.

        Parameters
        ----------
        index : int
            Position in :attr:`param_names`.
        value : float
        start : ndarray
            Starting values of all parameters (the held one is ignored).

        Returns
        -------
        deviance : float
        par : ndarray
            The optimum (with ``par[index] = value``).
        """
        kinds = tuple(self.varpar_kinds) + ("fixed",) * len(self.fixed_names)
        # scalar terms: the engine's gradient, in par's coordinates
        gradient = self._deviance_and_gradient if self._analytic else None
        return joint_profile_deviance(kinds, index, value, start, deviance=self.deviance,
                                      deviance_and_gradient=gradient, hessian=self._start_hessian)

    def ml_deviance(self, varpar: np.ndarray) -> float:
        """The deviance at the variance parameters ``varpar``, minimised over the fixed effects."""
        varpar = np.asarray(varpar, dtype=float)
        theta = theta_from_varpar(self.terms, varpar[: self.n_sd])
        if not np.all(np.isfinite(theta)) or np.any(theta[self.problem.re.lower == 0] < 0):
            return float("inf")
        p = self.problem.p
        if p == 0:
            return self.deviance(varpar)
        psi = self.family.internal_parameters(varpar[self.n_sd:])
        if self.n_psi and not self.family.valid_parameters(psi):
            return float("inf")
        def f(b: np.ndarray) -> float:
            return self._engine.stage2(np.concatenate([theta, b, psi]))

        res = minimize_deviance(finite_difference_gradient(f), self.ml_estimates()[1], np.full(p, -np.inf))
        return float(res.deviance)

    def ml_deviance_fixed(self, j: int, value: float) -> float:
        x, _ = self._optimum
        return self.profile_deviance(self.n_var + j, value, self._to_par(x))[0]

    def profiler(self) -> JointProfiler:
        """The profile evaluator (:func:`mixeval.uncertainty.profile_intervals` uses it)."""
        return JointProfiler(self)

    # ------------------------------------------------------------------ simulation and refits
    @cached_property
    def _zl(self) -> sp.csr_matrix:
        """``Z Lambda`` at the model's theta (``n x q``)."""
        re = self.problem.re
        return sp.csr_matrix((re.lambdat(self._truth[0]) @ re.Zt).T)

    def simulate(self, n_sim: int, rng: np.random.Generator) -> np.ndarray:
        """``n_sim`` responses from the model with new random effects (lme4's ``simulate(use.u = FALSE)``), at the
        fitted parameters or those set by :meth:`at`.

        ``u ~ N(0, I)``, ``eta = offset + X beta + Z Lambda u``, responses from the family at its parameters
        (:meth:`~.families.Family.simulate`; binomial: successes ``~ Bin(w_i, mu_i)`` divided by the trials ``w_i``,
        0/1 for ``w_i = 1``; Poisson: ``~ Pois(mu_i)``).
        """
        pr = self.problem
        eta = (pr.offset + pr.X @ self._truth[1])[:, None] + self._zl @ rng.standard_normal((pr.re.q, n_sim))
        return pr.family.simulate(eta, pr.weights[:, None], rng, self._truth[2])

    def _refit_one(self, y: np.ndarray, hessian: bool = False
                   ) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, np.ndarray]:
        """The fit's criterion minimised on the response ``y``, started at the model's parameters (the fit's
        estimates, or those of :meth:`at`) and the fit's Hessian (as lme4's ``refit``, which skips the first stage):
        ``theta``, ``beta``, deviance, ``vcov`` (RX-based, or from the Hessian of the deviance with ``hessian``), the
        family's parameters."""
        problem = replace(self.problem, y=np.asarray(y, dtype=float))
        n_agq = int(self.fit.nAGQ)
        engine = GlmmFit(problem, n_agq, free_parameters=True)
        theta_t, beta_t, psi0 = self._truth
        engine.beta = beta_t.copy()
        re = problem.re
        k, m = self.n_theta, self.n_psi
        theta0 = np.where(re.lower == 0, np.maximum(theta_t, 0.1), theta_t)
        if n_agq == 0:  # lme4's nAGQ = 0 criterion: theta (and psi) alone, beta from PIRLS
            opt = minimize_deviance(finite_difference_gradient(engine.stage1), np.concatenate([theta0, psi0]),
                                    np.concatenate([re.lower, np.full(m, -np.inf)]))
            engine.stage1(opt.theta)
            theta, beta, psi = opt.theta[:k], engine.beta.copy(), opt.theta[k:]
        else:
            x0 = np.concatenate([theta0, beta_t, psi0])
            lower = np.concatenate([re.lower, np.full(problem.p + m, -np.inf)])
            analytic = n_agq == 1 and problem.p and supports_beta_gradient(problem)
            fg = engine.stage2_and_gradient if analytic else finite_difference_gradient(engine.stage2)
            h_fit = self._engine_hessian  # the fit's Hessian starts the search (BFGS updates it)
            opt = minimize_deviance(fg, x0, lower, hess=None if h_fit is None else (lambda x: h_fit))
            theta, beta, psi = engine._split2(opt.theta)
            psi = np.zeros(0) if psi is None else psi
        state = pirls(problem, theta, beta, engine.u, joint=False, psi=psi)
        if n_agq > 1:
            dev = agq_deviance(problem, state, theta, n_agq)
        else:
            dev = laplace_deviance(problem, state)
        try:
            cov = joint_system(problem, theta, state).beta_covariance_unscaled() if problem.p else np.zeros((0, 0))
        except np.linalg.LinAlgError:
            cov = np.full((problem.p, problem.p), np.nan)
        if hessian and n_agq >= 1 and problem.p:
            cov = _hessian_covariance(engine, np.concatenate([theta, beta, psi]), k, problem.p, n_agq, cov)
        return np.asarray(theta, dtype=float), np.asarray(beta, dtype=float), float(dev), cov, psi

    @cached_property
    def _variance_keys(self) -> list[tuple[str, int]]:
        """``(key, position in varpar)`` of every variance, keyed as :attr:`GlmerResult.variances`."""
        rows = [(t.group, t.coef_names[i]) for t in self.terms for i in range(t.n_coef)]
        sd_pos = [k for k, kind in enumerate(self.varpar_kinds) if kind == "sd"]
        out = []
        for (g, nm), k in zip(rows, sd_pos):
            alone = sum(1 for gg, _ in rows if gg == g) == 1
            out.append((g if alone and nm == "(Intercept)" else f"{g}.{nm}", k))
        return out

    def refit(self, Y: np.ndarray, reml: bool | None = None, *, hessian: bool = False) -> list[RefitSummary]:
        """The model re-estimated on each column of ``Y`` (the engine's fit; ``reml`` does not apply to a GLMM).

        ``cov_coef`` of a refit is lme4's RX-based ``vcov(use.hessian = FALSE)``, or with ``hessian`` lme4's default
        ``vcov`` (the inverse Hessian of the deviance in ``(theta, beta)``, as the fit's own: ``2 (k + p)`` more
        gradient evaluations per refit); ``variances`` hold the random-effect variances on the link scale (no
        ``"Residual"``). Binomial (logit) and Poisson (log) models with random intercepts refit a block of responses
        together (:class:`~._batch_laplace.BatchLaplace`: the same optima, in a fraction of the time).
        """
        Y = np.asarray(Y, dtype=float)
        if Y.ndim == 1:
            Y = Y[:, None]
        lower = self.problem.re.lower
        out = []
        with single_threaded_blas():
            if supports_batch(self.problem, int(self.fit.nAGQ)):
                return self._batch_refit(Y, hessian)
            for b in range(Y.shape[1]):
                theta, beta, dev, cov, psi = self._refit_one(Y[:, b], hessian)
                varpar = varpar_from_theta(self.terms, theta)
                variances = {key: float(varpar[k] ** 2) for key, k in self._variance_keys}
                values = list(self.family.parameter_values(psi).values())
                out.append(RefitSummary(params=np.concatenate([varpar, values, beta]), variances=variances, cov_coef=cov,
                                        criterion=dev, singular=bool(np.any((lower == 0) & (theta < SINGULAR_TOL)))))
        return out

    def _batch_refit(self, Y: np.ndarray, hessian: bool) -> list[RefitSummary]:
        """:meth:`refit` of a block of responses at once (:class:`~._batch_laplace.BatchLaplace`)."""
        theta_t, beta_t, _ = self._truth
        res = BatchLaplace(self.problem).refit(Y, np.concatenate([theta_t, beta_t]))
        out = []
        for b in range(Y.shape[1]):
            cov = res.cov_hessian[b] if hessian and np.all(np.isfinite(res.cov_hessian[b])) else res.cov_rx[b]
            variances = {key: float(res.theta[b, k] ** 2) for key, k in self._variance_keys}
            out.append(RefitSummary(params=np.concatenate([res.theta[b], res.beta[b]]), variances=variances,
                                    cov_coef=cov, criterion=float(res.deviance[b]), singular=bool(res.singular[b])))
        return out

    def refit_result(self, y: np.ndarray, reml: bool | None = None):
        """A full :class:`~mixeval.mixed.GlmerResult` on the new response ``y`` (same design and weights)."""
        return self.fit.refit_response(y, reml=bool(reml))

    # ------------------------------------------------------------------ Wald
    def wald_intervals(self, level: float = 0.95) -> dict[str, tuple[float, float]]:
        """Wald intervals: fixed effects ``beta -/+ z se`` (lme4's ``vcov``); sd's by the delta method on
        the fit's asymptotic variances (``se(sd) = se(variance) / (2 sd)``, lme4 gives NA); NaN for
        correlations and for sd's on the boundary."""
        z = float(norm.ppf(0.5 + level / 2.0))
        out: dict[str, tuple[float, float]] = {}
        table = self.fit.varcorr_se
        se_var = {(g, n): s for g, n, s in zip(table.group, table.name, table.se)}
        est = self.estimates()
        pos = 0
        for t in self.terms:
            rows, cols = _tril_template(t.n_coef)
            for i, j in zip(rows, cols):
                name = self.varpar_names[pos]
                sd = float(est[pos])
                s = se_var.get((t.group, t.coef_names[i]), np.nan) if i == j else np.nan
                if i == j and sd > 0 and np.isfinite(s):
                    half = z * float(s) / (2.0 * sd)
                    out[name] = (max(sd - half, 0.0), sd + half)
                else:
                    out[name] = (float("nan"), float("nan"))
                pos += 1
        base = self.n_theta + self.problem.p
        for j, (name, kind, value) in enumerate(zip(self.family.parameter_names, self.family.parameter_kinds,
                                                   self.fit.family_par)):
            half = z * float(self._engine_se[base + j])  # a dispersion on its log scale, as glmmTMB's confint
            lo, hi = value - half, value + half
            out[name] = (float(np.exp(lo)), float(np.exp(hi))) if kind == "dispersion" else (float(lo), float(hi))
        out.update(fixed_effect_wald(self.fit, z))
        return out


def _hessian_covariance(engine: GlmmFit, x: np.ndarray, k: int, p: int, n_agq: int, fallback: np.ndarray) -> np.ndarray:
    """The fixed effects' block of ``2 H^-1``, ``H`` the Hessian of the deviance at ``x = (theta, beta, psi)`` (the fit's
    ``vcov``: :func:`~._glmm_result.fit_glmm`), or ``fallback`` where it is not positive definite."""
    try:
        analytic = n_agq == 1 and supports_gradient(engine.problem)
        h = engine.stage2_hessian(x) if analytic else _hessian(engine.stage2, x)
        full = 2.0 * np.linalg.inv(h)
    except np.linalg.LinAlgError:
        return fallback
    cand = 0.5 * (full + full.T)[k:k + p, k:k + p]
    return cand if np.all(np.isfinite(cand)) and np.min(np.linalg.eigvalsh(cand)) > 0 else fallback
