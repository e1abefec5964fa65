"""What a fitted cumulative link mixed model (:func:`mixeval.clmm`) offers the uncertainty tools: profile,
parametric-bootstrap and Wald intervals through the one :class:`~._protocol.FitModel` protocol.

Parameters, named as lme4's ``confint(..., oldNames = FALSE)`` and ``ordinal``: the random effects' standard
deviations and correlations term by term (``"sd_(Intercept)|rater"``, on the latent scale, whose residual is the
standard logistic or normal), then the threshold parameters (``"1|2", "2|3", ...`` for flexible thresholds;
``ordinal``'s ``threshold.1, spacing`` or ``central, spacing.1`` otherwise), then the location effects. In the
protocol's terms the threshold parameters and the location effects together are the "fixed" parameters: the
profile holds one of them and re-optimises everything else.

Stages, each callable alone: :meth:`ClmmFitModel.deviance` (the fit's Laplace or quadrature deviance at
``(sd's, thresholds, effects)``, :class:`~._clmm.ClmmDeviance`), :meth:`ClmmFitModel.profile_deviance` (one
parameter held, all the others re-optimised), :meth:`ClmmFitModel.simulate` (ratings drawn from the fit by its
family, :meth:`~._ordinal.Ordinal.simulate`) and :meth:`ClmmFitModel.refit` (the engine's optimiser on new
ratings, started at the fit's estimates).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

import numpy as np
from scipy.linalg import LinAlgError
from scipy.stats import norm

from ..errors import InputError
from ._blas import single_threaded_blas
from ._glmm_model import profile_start_hessian, theta_from_varpar, varpar_from_theta, varpar_layout
from ._optimize import SINGULAR_TOL, finite_difference_gradient, minimize_deviance
from ._profile import JointProfiler, joint_profile_deviance
from ._protocol import FitModelBase, RefitSummary
from ._reterms import _tril_template

__all__ = ["ClmmFitModel", "full_scale_index"]


def full_scale_index(kept: np.ndarray, n_levels: int) -> np.ndarray:
    """For every threshold of a scale of ``n_levels`` categories, the estimated threshold it equals, given the
    indices ``kept`` of the categories whose thresholds were estimated: -1 for ``-inf`` (below the lowest kept
    category), -2 for ``+inf`` (at or above the highest).

    Examples
    --------
    >>> full_scale_index(np.array([0, 1, 3, 4]), 5).tolist()   # category 2 unused: thresholds 2|3 and 3|4 coincide
    [0, 1, 1, 2]
    >>> full_scale_index(np.array([1, 2, 3]), 5).tolist()      # categories 0 and 4 unused
    [-1, 0, 1, -2]
    """
    kept = np.asarray(kept)
    out = np.empty(n_levels - 1, dtype=np.int64)
    for j in range(n_levels - 1):
        below = np.flatnonzero(kept <= j)
        if below.size == 0:
            out[j] = -1
        elif below[-1] == kept.size - 1:
            out[j] = -2
        else:
            out[j] = below[-1]
    return out


class ClmmFitModel(FitModelBase):
    """:class:`~mixeval.uncertainty.FitModel` of a cumulative link mixed model (:class:`~mixeval.mixed.ClmmResult`).

    Parameters
    ----------
    fit : ClmmResult
        A fit of :func:`mixeval.clmm`.

    Notes
    -----
    The deviance is the fit's own criterion ``D(theta, alpha, beta)`` (Laplace, or adaptive Gauss-Hermite for
    ``nAGQ > 1``) as a function of the standard deviations and correlations (mapped to ``theta`` by lme4's
    ``Sv_to_Cv``), the threshold parameters ``alpha`` and the location effects ``beta``. The profile of any
    parameter ``psi`` holds it at ``v`` and minimises ``D`` over every other parameter (each search started from
    the last optimum, with the Hessian of the fit, ``2 cov_params^-1``); ``zeta(v) = sign(v - psi_hat)
    sqrt(D(v) - D_hat)`` (``ordinal``'s ``profile.clm`` and ``profile.clmm2``), and the interval at level ``1 - a``
    is ``{v : |zeta(v)| <= z_{1 - a/2}}``. A flexible threshold held beyond its neighbours pushes them along
    (the thresholds stay ordered).

    The parametric bootstrap draws ratings with new random effects, ``Y* = j`` where
    ``theta_{j-1} < x' beta + z' b* + e* <= theta_j`` (``b* ~ N(0, Lambda Lambda')``, ``e*`` standard logistic or
    normal), and refits each by the engine's optimiser from the fit's estimates. A simulated data set in which a
    category of a flexible-threshold fit goes unused has that category's thresholds at their limits (coinciding
    neighbours, or ``-inf``/``+inf`` at an end of the scale), as a fit of it reports them.

    Wald intervals: thresholds and effects ``estimate -/+ z se`` (the Hessian of the deviance, as clmm's
    ``vcov``); standard deviations by the delta method on ``log(sd)`` (``se(log sd) = se(variance) /
    (2 variance)``), so the interval stays positive; NaN for correlations and for a standard deviation at 0.

    Examples
    --------
    >>> from mixeval import clmm
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=10, systems=("A", "B"), n_raters=10, response="rating")
    >>> ClmmFitModel(clmm("rating ~ system + (1|rater)", df)).param_names
    ('sd_(Intercept)|rater', '1|2', '2|3', '3|4', '4|5', 'systemB')
    """

    reml = False

    def __init__(self, fit) -> None:
        if type(fit).__name__ != "ClmmResult":
            raise InputError(f"expected a fitted model of mixeval.clmm; got {type(fit).__name__}.")
        self.fit = fit
        self.problem = fit.problem
        self.terms = fit.problem.re.terms
        self.n_agq = max(int(fit.nAGQ), 1)
        self.nobs = int(fit.nobs)
        self.threshold_names = tuple(fit.alpha_names)
        self.effect_names = tuple(fit.fixed_names)
        self.fixed_names = self.threshold_names + self.effect_names
        self.group_names = tuple(fit.group_names)
        self.varpar_names, self.varpar_kinds = varpar_layout(self.terms)
        self.param_names = self.varpar_names + self.fixed_names
        self.n_var = len(self.varpar_names)
        self.n_theta = int(fit.theta.size)
        self._dev = self.problem.evaluator(self.n_agq)
        self._dev.u = np.array(fit.u, dtype=float)
        if self._scalar and self._dev.analytic:  # the protocol's optional gradient: None where there is none
            self.ml_deviance_and_gradient = self._ml_deviance_and_gradient
        self._truth = (self._x_hat, fit)

    def _set_parameters(self, params: np.ndarray) -> None:
        """The engine's ``(theta, alpha, beta)`` of ``params`` (:meth:`~._protocol.FitModelBase.at`): simulations
        draw ratings from them, refits start there."""
        kinds = np.asarray(self.varpar_kinds)
        varpar = params[: self.n_var]
        x = self._to_x(params)
        m = int(self.fit.threshold_matrix.shape[1])
        thresholds = self.fit.threshold_matrix @ params[self.n_var:self.n_var + m]
        if x is None or np.any(varpar[kinds == "sd"] < 0) or np.any(np.diff(thresholds) <= 0):
            raise InputError(f"at(): {dict(zip(self.param_names, params.tolist()))} are not valid parameters "
                             "(sd >= 0, correlations forming a correlation matrix, thresholds increasing).")
        k, a = self.n_theta, self.fit.alpha.size
        sim = replace(self.fit, theta=x[:k], alpha=x[k:k + a], coef=x[k + a:])
        self._truth = (x, sim)

    # ------------------------------------------------------------------ parameters
    @property
    def _x_hat(self) -> np.ndarray:
        """The engine's coordinates ``(theta, alpha, beta)`` at the fit."""
        return np.concatenate([self.fit.theta, self.fit.alpha, self.fit.coef])

    def estimates(self) -> np.ndarray:
        """The fit's parameters in :attr:`param_names` order (sd's and correlations, thresholds, effects)."""
        return np.concatenate([varpar_from_theta(self.terms, self.fit.theta), self.fit.alpha, self.fit.coef])

    def ml_estimates(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(varpar, (alpha, beta), deviance)`` of the fit (a clmm fit is a maximum-likelihood fit)."""
        return (varpar_from_theta(self.terms, self.fit.theta), np.concatenate([self.fit.alpha, self.fit.coef]),
                float(self.fit.criterion))

    @cached_property
    def _se(self) -> np.ndarray:
        """Wald standard errors over ``(theta, alpha, beta)`` (NaN without a usable Hessian)."""
        cov = self.fit.cov_params
        if cov is None:
            return np.full(self._x_hat.size, np.nan)
        return np.sqrt(np.clip(np.diag(cov), 0.0, None))

    def step(self, i: int) -> float:
        """About one standard error of parameter ``i`` (the profile's first bracketing step)."""
        value = self.estimates()[i]
        if i >= self.n_var:
            se = float(self._se[self.n_theta + i - self.n_var])
            return se if np.isfinite(se) and se > 0 else max(abs(value), 1.0) * 0.1
        if self.varpar_kinds[i] == "cor":
            return 0.2
        return max(0.25 * value, 0.05)

    # ------------------------------------------------------------------ deviances
    def _to_x(self, par: np.ndarray) -> np.ndarray | None:
        theta = theta_from_varpar(self.terms, par[: self.n_var])
        if not np.all(np.isfinite(theta)):
            return None
        return np.concatenate([theta, par[self.n_var:]])

    def deviance(self, par: np.ndarray) -> float:
        """The fit's criterion at ``par`` = (sd's and correlations, thresholds, effects); ``inf`` where it is
        undefined (a correlation matrix not positive definite, thresholds out of order)."""
        x = self._to_x(np.asarray(par, dtype=float))
        if x is None:
            return float("inf")
        try:
            return float(self._dev.deviance(x))
        except (LinAlgError, np.linalg.LinAlgError):
            return float("inf")

    @cached_property
    def _scalar(self) -> bool:
        """Every random-effects term scalar: the variance parameters are ``theta`` itself."""
        return all(t.n_coef == 1 for t in self.terms)

    @cached_property
    def _start_hessian(self) -> np.ndarray | None:
        """The Hessian of the deviance at the fit in the profile's coordinates (sd's, ``atanh`` of correlations,
        thresholds, effects) from ``2 cov_params^-1`` (:func:`~._glmm_model.profile_start_hessian`); None without a
        usable ``cov_params`` (the optimiser then forms its own)."""
        cov = self.fit.cov_params
        if cov is None:
            return None
        try:
            h = 2.0 * np.linalg.inv(cov)
        except np.linalg.LinAlgError:
            return None
        kinds = tuple(self.varpar_kinds) + ("fixed",) * len(self.fixed_names)
        return profile_start_hessian(self.terms, kinds, self.estimates(), h)

    def _ordered_start(self, start: np.ndarray, index: int) -> np.ndarray:
        """``start`` with flexible thresholds pushed apart around a held one (the deviance needs them in order)."""
        m = int(self.fit.threshold_matrix.shape[1])
        j = index - self.n_var
        if self.fit.family.threshold != "flexible" or not 0 <= j < m:
            return start
        a = start[self.n_var:self.n_var + m]
        gap = 1e-2
        for k in range(j + 1, m):
            a[k] = max(a[k], a[k - 1] + gap)
        for k in range(j - 1, -1, -1):
            a[k] = min(a[k], a[k + 1] - gap)
        return start

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
        start = np.array(start, dtype=float)
        start[index] = value
        start = self._ordered_start(start, index)
        # par = (theta, alpha, beta) with scalar terms: the engine's gradient
        gradient = self._dev.deviance_and_gradient if (self._scalar and self._dev.analytic) else None
        with single_threaded_blas():
            return joint_profile_deviance(kinds, index, value, start, deviance=self.deviance,
                                          deviance_and_gradient=gradient, hessian=self._start_hessian)

    def ml_deviance(self, varpar: np.ndarray) -> float:
        """The deviance at the variance parameters ``varpar``, minimised over the thresholds and effects."""
        return self._profiled(varpar)[0]

    def _ml_deviance_and_gradient(self, varpar: np.ndarray) -> tuple[float, np.ndarray]:
        """:meth:`ml_deviance` and its gradient in ``varpar`` (scalar terms: ``theta`` itself), the partial
        derivative of the deviance in ``theta`` at the minimising thresholds and effects (the envelope theorem)."""
        value, z = self._profiled(varpar)
        if not np.isfinite(value):
            return value, np.full(self.n_theta, np.nan)
        return value, self._dev.deviance_and_gradient(np.concatenate([np.asarray(varpar, dtype=float), z]))[1][
            : self.n_theta]

    def _profiled(self, varpar: np.ndarray) -> tuple[float, np.ndarray]:
        """The deviance minimised over ``(alpha, beta)`` at ``varpar``, and the minimiser."""
        varpar = np.asarray(varpar, dtype=float)
        theta = theta_from_varpar(self.terms, varpar)
        z0 = np.concatenate([self.fit.alpha, self.fit.coef])
        if not np.all(np.isfinite(theta)) or np.any(theta[self.problem.re.lower == 0] < 0):
            return float("inf"), z0
        k = self.n_theta

        def fg(z: np.ndarray) -> tuple[float, np.ndarray]:
            if self._dev.analytic:
                d, g = self._dev.deviance_and_gradient(np.concatenate([theta, z]))
                return d, g[k:]
            return finite_difference_gradient(lambda w: self._dev.deviance(np.concatenate([theta, w])))(z)

        with single_threaded_blas():
            res = minimize_deviance(fg, z0, np.full(z0.size, -np.inf))
        return float(res.deviance), res.theta

    def ml_deviance_fixed(self, j: int, value: float) -> float:
        """The deviance with threshold parameter or effect ``j`` (of :attr:`fixed_names`) held at ``value``."""
        return self.profile_deviance(self.n_var + j, value, self.estimates())[0]

    def profiler(self) -> JointProfiler:
        """The profile evaluator (:func:`mixeval.uncertainty.profile_intervals` uses it)."""
        return JointProfiler(self)

    # ------------------------------------------------------------------ simulation and refits
    def simulate(self, n_sim: int, rng: np.random.Generator) -> np.ndarray:
        """``n_sim`` rating vectors as category indices into ``fit.levels`` (``(nobs, n_sim)``), new random
        effects for each (lme4's ``simulate(use.u = FALSE)``), at the fitted parameters or those of :meth:`at`."""
        return self._truth[1]._simulate_codes(int(n_sim), rng)

    @cached_property
    def _variance_keys(self) -> list[tuple[str, int]]:
        """``(key, position in varpar)`` of every variance, keyed as :attr:`ClmmResult.variances`."""
        sd_pos = [k for k, kind in enumerate(self.varpar_kinds) if kind == "sd"]
        return list(zip(self.fit.variances, sd_pos))

    def _refit_one(self, codes: np.ndarray, hessian: bool = False) -> tuple[np.ndarray, float, np.ndarray]:
        """The model on new category indices (the fit's refitter, with standard errors only with ``hessian``),
        started at the model's parameters (the fit's estimates, or those of :meth:`at`) when the same categories
        are used: ``(theta, alpha, beta)`` in the fit's threshold parameters, the deviance and the covariance of the
        location effects (NaN without ``hessian``)."""
        fit = self.fit
        codes = np.asarray(codes, dtype=np.int64)
        flexible = fit.family.threshold == "flexible"
        same = not flexible or np.array_equal(np.unique(codes), np.asarray(fit.kept))
        new = fit.refitter(new_y=codes, x0=self._truth[0] if same else None, hessian=hessian)
        cov = np.asarray(new.cov_coef, dtype=float)
        if same:
            return np.concatenate([new.theta, new.alpha, new.coef]), float(new.criterion), cov
        # fewer categories used: the scale's thresholds of the new fit (coinciding around an empty category,
        # -inf/+inf beyond an empty end one), the fit's threshold "a|b" being the scale's threshold above a
        mapped = new.threshold_values[np.asarray(fit.kept)[:-1]]
        return np.concatenate([new.theta, mapped, new.coef]), float(new.criterion), cov

    def refit(self, Y: np.ndarray, reml: bool | None = None, *, hessian: bool = False) -> list[RefitSummary]:
        """The model re-estimated on each column of ``Y`` (category indices, as :meth:`simulate` draws them).

        ``reml`` must be None or False (clmm has no restricted likelihood). A refit's ``cov_coef`` is NaN (its
        Hessian is not formed: the bootstrap uses the refits' estimates) unless ``hessian`` (clmm's ``vcov``, the
        inverse Hessian over every parameter); ``variances`` hold the random-effect variances on the latent scale (no
        ``"Residual"``: the family's, :attr:`ClmmResult.distribution_variance`).
        """
        _refuse_reml(reml)
        Y = np.asarray(Y)
        if Y.ndim == 1:
            Y = Y[:, None]
        lower = self.problem.re.lower
        p = len(self.effect_names)
        out = []
        with single_threaded_blas():
            for b in range(Y.shape[1]):
                x, dev, cov = self._refit_one(Y[:, b], hessian)
                theta = x[: self.n_theta]
                varpar = varpar_from_theta(self.terms, theta)
                variances = {key: float(varpar[k] ** 2) for key, k in self._variance_keys}
                out.append(RefitSummary(params=np.concatenate([varpar, x[self.n_theta:]]), variances=variances,
                                        cov_coef=cov if hessian else np.full((p, p), np.nan), criterion=dev,
                                        singular=bool(np.any((lower == 0) & (theta < SINGULAR_TOL)))))
        return out

    def refit_result(self, y: np.ndarray, reml: bool | None = None):
        """A full :class:`~mixeval.mixed.ClmmResult` on new category indices ``y`` (for a user's statistic)."""
        _refuse_reml(reml)
        return self.fit.refit_response(np.asarray(self.fit.levels, dtype=object)[np.asarray(y, dtype=np.int64)])

    # ------------------------------------------------------------------ Wald
    def satterthwaite_df(self):
        """Satterthwaite df of each threshold parameter and effect (:func:`~._clmm_ddf.clmm_satterthwaite_df`)."""
        from ._clmm_ddf import clmm_satterthwaite_df

        return clmm_satterthwaite_df(self.fit)

    def wald_intervals(self, level: float = 0.95) -> dict[str, tuple[float, float]]:
        """Wald intervals (see the class Notes): thresholds and effects ``-/+ z se``; sd's on the log scale."""
        z = float(norm.ppf(0.5 + level / 2.0))
        out: dict[str, tuple[float, float]] = {}
        table = self.fit.varcorr_se
        se_var = {(g, n): s for g, n, s in zip(table.group, table.name, table.se)}
        est = self.estimates()
        pos = 0
        for t in self.terms:
            rows, cols = _tril_template(t.n_coef)
            for i, j in zip(rows, cols):
                sd = float(est[pos])
                s = se_var.get((t.group, t.coef_names[i]), np.nan) if i == j else np.nan
                if i == j and sd > 0 and np.isfinite(s):
                    half = z * float(s) / (2.0 * sd * sd)
                    out[self.varpar_names[pos]] = (sd * np.exp(-half), sd * np.exp(half))
                else:
                    out[self.varpar_names[pos]] = (float("nan"), float("nan"))
                pos += 1
        for name, value, se in zip(self.fixed_names, est[self.n_var:], self._se[self.n_theta:]):
            out[name] = (float(value - z * se), float(value + z * se))
        return out


def _refuse_reml(reml) -> None:
    """None or False: clmm has no restricted likelihood."""
    if reml is None or (isinstance(reml, (bool, np.bool_)) and not reml):
        return
    if isinstance(reml, (bool, np.bool_)):
        raise InputError("reml=True: cumulative link mixed models are fitted by maximum likelihood only "
                         "(ordinal::clmm has no restricted likelihood); leave reml unset.")
    raise InputError(f"reml must be None or False for an ordinal fit; got {reml!r}.")
