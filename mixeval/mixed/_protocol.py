"""The protocol every fitted mixed model offers the layers above the fit (profile, bootstrap, power, df).

A fit's evaluator is chosen once, when the fit is made: :class:`~._lmm_model.LmmFitModel` for linear mixed
models with random intercepts (the count-class path), :class:`~._slopes_model.SlopeFitModel` for those with
random slopes (the general evaluator), :class:`~._glmm_model.GlmmFitModel` for GLMMs (PIRLS with the Laplace
or quadrature deviance). Every result exposes its evaluator as ``fit.model`` (:class:`~._base.MixedResult`);
nothing above the engine looks inside a fit for anything else.

Parameter names and order are lme4's ``confint(..., oldNames = FALSE)``: the standard deviations
``"sd_(Intercept)|group"`` (and correlations ``"cor_x.(Intercept)|group"``) term by term, then
``"sigma"`` (Gaussian fits), then the fixed effects.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import InputError

__all__ = ["FitModel", "FitModelBase", "FittedModel", "RefitSummary", "as_fit_model", "fixed_effect_wald",
           "require_fitted"]


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
    >>> import numpy as np
    >>> from mixeval import lmer
    >>> from mixeval.uncertainty import as_fit_model
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> fit = lmer("score ~ 1 + (1|item)", df)
    >>> model = as_fit_model(fit)
    >>> r = model.refit(model.simulate(1, np.random.default_rng(1)))[0]
    >>> sorted(r.variances)
    ['Residual', 'item']
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
    refit(Y, reml, *, hessian=False) -> list of RefitSummary
        The model re-estimated on each column of ``Y`` (same design, new response), each search started at the
        model's parameters. ``hessian=True``: every refit's ``cov_coef`` from the Hessian of its deviance (the fit's
        own ``vcov``: lme4's default for GLMMs, clmm's), not the cheaper RX-based covariance of a GLMM refit (or
        none, NaN, for a clmm refit); a linear mixed model's covariance is exact either way.
    at(params) -> FitModel
        The same model and design with its parameters set to ``params`` (:attr:`param_names` order):
        ``simulate`` draws from them and ``refit`` starts from them (simr's ``fixef<-``, ``VarCorr<-`` and
        ``sigma<-``: the assumed model of a power simulation).
    refit_result(y, reml) -> LmerResult
        A full fit on one new response (for user statistics).
    ml_deviance_and_gradient(varpar) -> (float, ndarray), or None
        :meth:`ml_deviance` with its gradient (None: the profile uses finite differences).
    profile_varpar(index, value, start) -> (float, ndarray) or None
        The ML deviance minimised over the other variance parameters with ``varpar[index] = value``, and the
        minimising ``varpar``, in the fit's own coordinates (random slopes: over theta); None to leave it to
        the profile's optimisation over ``varpar``.
    estimates() -> ndarray, param_names, fit
        The fit's own parameters (as fitted, REML or ML) in ``param_names`` order, and the fit itself (for
        the statistic of the original data in :func:`~mixeval.uncertainty.bootstrap_fit`).
    profiler() -> profile evaluator or None
        The model's own evaluator of the profile zeta (``zeta(name, value)``, ``step(i)``, ``reset()``), used
        by :func:`~mixeval.uncertainty.profile_intervals` instead of the linear mixed model's (GLMMs:
        every parameter profiled jointly over all the others).
    wald_intervals(level) -> dict
        Wald intervals of every parameter (used by :func:`~mixeval.uncertainty.wald_intervals`): the fixed effects
        from ``vcov``, the sd's by the delta method on the variances' asymptotic covariance.

    Notes
    -----
    Random slopes: ``varpar`` holds lme4's sd's and correlations per term (``Sv``); the deviance maps them
    to theta (the Cholesky factor of the correlation-scaled covariance over sigma, lme4's ``Sv_to_Cv``) and
    evaluates ``log|A(theta)| + r2(theta) / sigma^2 + n log(2 pi sigma^2)``. GLMMs have no sigma
    (``varpar_kinds`` without ``"sigma"``) and, as lme4's ``devfun2`` for GLMMs, their deviance at given
    variance parameters must be minimised over the fixed effects inside ``ml_deviance``.

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.uncertainty import as_fit_model
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> fit = lmer("score ~ 1 + (1|item)", df)
    >>> isinstance(as_fit_model(fit), FitModel)
    True
    """

    varpar_names: tuple[str, ...]
    varpar_kinds: tuple[str, ...]
    fixed_names: tuple[str, ...]
    param_names: tuple[str, ...]
    nobs: int

    def ml_estimates(self) -> tuple[np.ndarray, np.ndarray, float]: ...

    def ml_deviance(self, varpar: np.ndarray) -> float: ...

    def ml_deviance_and_gradient(self, varpar: np.ndarray) -> tuple[float, np.ndarray]:
        """:meth:`ml_deviance` and its gradient in ``varpar`` (optional; see the class docstring)."""
        ...

    def ml_deviance_fixed(self, j: int, value: float) -> float: ...

    def simulate(self, n_sim: int, rng: np.random.Generator) -> np.ndarray: ...

    def refit(self, Y: np.ndarray, reml: bool) -> list[RefitSummary]: ...

    def at(self, params: np.ndarray) -> FitModel: ...

    def wald_intervals(self, level: float = 0.95) -> dict[str, tuple[float, float]]: ...




class FitModelBase:
    """The defaults of the protocol's optional members; every evaluator of the engine derives from it.

    ``ml_deviance_and_gradient`` is ``None`` where the model has no analytic gradient (the profile then takes
    finite differences); ``profile_varpar`` returns ``None`` to leave a variance parameter's profile to the
    generic optimisation over ``varpar``; ``profiler`` returns ``None`` to use the linear mixed model's;
    ``satterthwaite_df`` returns ``None`` where the evaluator offers no Satterthwaite df for its Wald intervals.
    """

    ml_deviance_and_gradient = None

    def satterthwaite_df(self):
        """Satterthwaite df of the fixed parameters' Wald intervals (a Series by name), or None."""
        return None

    def profile_varpar(self, index: int, value: float, start: np.ndarray) -> tuple[float, np.ndarray] | None:
        return None

    def profiler(self):
        return None

    def at(self, params: np.ndarray):
        """This model with its parameters set to ``params`` (:attr:`param_names` order): :meth:`simulate` draws from
        them and :meth:`refit` starts from them; the design and the fit are shared (nothing is refitted).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from mixeval import lmer
        >>> rng = np.random.default_rng(0)
        >>> g = np.repeat(np.arange(15), 4)
        >>> df = pd.DataFrame({"g": g, "y": rng.normal(size=15)[g] + rng.normal(size=60)})
        >>> model = lmer("y ~ 1 + (1|g)", df).model.at([1.0, 0.5, 10.0])   # sd of g, sigma, intercept
        >>> round(float(model.simulate(2000, np.random.default_rng(1)).mean()), 1)
        10.0
        """
        params = np.asarray(params, dtype=float)
        names = tuple(getattr(self, "param_names", ()))
        if params.shape != (len(names),) or not np.all(np.isfinite(params)):
            raise InputError(f"at() takes {len(names)} finite parameters in the order {list(names)}; got "
                             f"{np.asarray(params).tolist()!r}.")
        new = copy.copy(self)
        new._set_parameters(params)
        return new

    def _set_parameters(self, params: np.ndarray) -> None:
        raise InputError(f"{type(self).__name__} cannot be set to other parameters (at()).")


@runtime_checkable
class FittedModel(Protocol):
    """A fitted mixed model that exposes its evaluator (every :class:`~._base.MixedResult`)."""

    model: FitModel


def as_fit_model(fit) -> FitModel:
    """The evaluator of a fitted mixed model (``fit.model``), or ``fit`` itself when it already is one.

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> type(as_fit_model(lmer("score ~ 1 + (1|item)", df))).__name__
    'LmmFitModel'
    """
    if isinstance(fit, FitModel):
        return fit
    if isinstance(fit, FittedModel):
        return fit.model
    raise InputError(f"expected a fitted mixed model (mixeval.lmer, mixeval.glmer) or a FitModel; got "
                     f"{type(fit).__name__}.")


def fixed_effect_wald(fit, z: float) -> dict[str, tuple[float, float]]:
    """Wald intervals ``beta -/+ z se`` of the fixed effects (``se`` from ``fit.cov_coef``).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> fixed_effect_wald(SimpleNamespace(fixed_names=("b",), coef=np.array([1.0]), cov_coef=np.eye(1)), 2.0)
    {'b': (-1.0, 3.0)}
    """
    se = np.sqrt(np.diag(fit.cov_coef))
    return {name: (float(b - z * s), float(b + z * s)) for name, b, s in zip(fit.fixed_names, fit.coef, se)}


def require_fitted(fit, *, gaussian: bool, entry: str) -> None:
    """An :class:`~mixeval.errors.InputError` unless ``fit`` is a fitted mixed model of the right kind: a Gaussian
    one (``gaussian=True``) or one of another family; ``entry`` names the call that makes it.

    Examples
    --------
    >>> require_fitted({"a": 1}, gaussian=True, entry="mixeval.lmer")
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: expected a fitted model of mixeval.lmer; got dict.
    """
    fitted = hasattr(type(fit), "model") and hasattr(fit, "family")  # a class check: building the model calls this
    if not fitted or bool(fit.family.estimates_scale) != gaussian:
        what = type(fit).__name__ if not fitted else f"a {fit.family.name} fit"
        raise InputError(f"expected a fitted model of {entry}; got {what}.")
