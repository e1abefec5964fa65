"""Profile-likelihood intervals (lme4's ``confint(method = "profile")``).

For a parameter ``psi`` the profile zeta is ``zeta(v) = sign(v - psi_hat) sqrt(d(v) - d_hat)``, where
``d(v)`` is the ML deviance minimised over every other parameter with ``psi = v`` and ``d_hat`` the
minimum ML deviance (lme4 profiles the ML fit, also for a REML fit: ``devfun2`` calls ``refitML``).
The interval at level ``1 - alpha`` is ``{v : |zeta(v)| <= z_{1 - alpha/2}}``; its ends are found by
bracketing and Brent's method on ``zeta`` (lme4 interpolates ``zeta`` by splines on a grid). A standard
deviation whose zeta at 0 does not reach the critical value gets the lower end 0.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from ._optimize import finite_difference_gradient, minimize_deviance
from ._protocol import FitModel

__all__ = ["JointProfiler", "joint_profile_deviance", "profile_zeta", "profile_interval", "profile_intervals"]


def _transform(kinds: tuple[str, ...]):
    """Maps between the optimiser's coordinates (sd >= 0, atanh(cor), log(sigma)) and the parameters."""
    kinds_arr = np.array(kinds)
    sd = kinds_arr == "sd"
    cor = kinds_arr == "cor"
    sig = kinds_arr == "sigma"

    def to_par(x: np.ndarray) -> np.ndarray:
        p = np.empty_like(x)
        p[sd] = np.abs(x[sd])
        p[cor] = np.tanh(x[cor])
        p[sig] = np.exp(x[sig])
        return p

    def to_x(p: np.ndarray) -> np.ndarray:
        x = np.empty_like(p)
        x[sd] = p[sd]
        x[cor] = np.arctanh(np.clip(p[cor], -1 + 1e-12, 1 - 1e-12))
        x[sig] = np.log(p[sig])
        return x

    lower = np.where(sd, 0.0, -np.inf)
    return to_par, to_x, lower


def _jacobian(kinds: tuple[str, ...]):
    """Derivative of each parameter with respect to its optimiser coordinate (diagonal)."""
    kinds_arr = np.array(kinds)

    def jac(x: np.ndarray) -> np.ndarray:
        d = np.ones_like(x)
        d[kinds_arr == "sd"] = np.sign(x[kinds_arr == "sd"]) + (x[kinds_arr == "sd"] == 0)
        c = kinds_arr == "cor"
        d[c] = 1.0 - np.tanh(x[c]) ** 2
        s = kinds_arr == "sigma"
        d[s] = np.exp(x[s])
        return d

    return jac


def _varpar_profile(model: FitModel, index: int, value: float, start: np.ndarray) -> tuple[float, np.ndarray]:
    """ML deviance minimised over the other variance parameters with parameter ``index`` at ``value``."""
    kinds = tuple(model.varpar_kinds)
    others = [i for i in range(len(kinds)) if i != index]
    to_par, to_x, lower = _transform(tuple(kinds[i] for i in others))

    def full(x: np.ndarray) -> np.ndarray:
        par = np.empty(len(kinds))
        par[others] = to_par(x)
        par[index] = value
        return par

    analytic = model.ml_deviance_and_gradient
    if analytic is not None:
        sub = tuple(kinds[i] for i in others)
        jac = _jacobian(sub)

        def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
            dev, grad = analytic(full(x))
            return dev, grad[others] * jac(x)
    else:
        fg = finite_difference_gradient(lambda x: model.ml_deviance(full(x)))
    x0 = to_x(np.asarray(start, dtype=float)[others])
    res = minimize_deviance(fg, x0, lower)
    par = np.empty(len(kinds))
    par[others] = to_par(res.theta)
    par[index] = value
    return float(res.deviance), par


def profile_zeta(model: FitModel, name: str, values: np.ndarray) -> np.ndarray:
    """The signed square root of the deviance increase, ``zeta``, of parameter ``name`` at ``values``.

    Examples
    --------
    >>> import numpy as np
    >>> from mixeval import lmer
    >>> from mixeval.uncertainty import as_fit_model
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=12, systems=("A",), n_raters=5)
    >>> m = as_fit_model(lmer("score ~ 1 + (1|item)", df))
    >>> z = profile_zeta(m, "sigma", np.array([0.8, 1.5]))
    >>> bool(z[0] < 0 < z[1])
    True
    """
    from ._blas import single_threaded_blas

    with single_threaded_blas():
        profiler = _profiler_for(model)
        return np.array([profiler.zeta(name, float(v)) for v in np.atleast_1d(values)])


def _feasible_start(model: FitModel, start: np.ndarray, index: int, value: float) -> np.ndarray:
    """``start`` with parameter ``index`` at ``value`` and the other correlations shrunk toward 0 until the
    deviance is defined (with three or more coefficients in a term, a correlation moved alone can leave its
    correlation matrix indefinite)."""
    start[index] = value
    cor = np.array(model.varpar_kinds) == "cor"
    cor[index] = False
    if cor.any():
        for _ in range(60):
            if np.isfinite(model.ml_deviance(start)):
                break
            start[cor] *= 0.5
    return start


class _Profiler:
    """Evaluates zeta of one fit, warm-starting each constrained optimisation from the last optimum."""

    def __init__(self, model: FitModel) -> None:
        self.model = model
        varpar, beta, dev = model.ml_estimates()
        self.varpar_hat, self.beta_hat, self.dev_hat = varpar, beta, dev
        self.names = tuple(model.varpar_names) + tuple(model.fixed_names)
        self.n_var = len(model.varpar_names)
        self.estimate = np.concatenate([varpar, beta])
        self._start = varpar.copy()

    def reset(self) -> None:
        """Start the next profile from the estimates (not from the last constrained optimum)."""
        self._start = self.varpar_hat.copy()

    def step(self, i: int) -> float:
        """The first bracketing step of parameter ``i``."""
        return _scale(self, i)

    def zeta(self, name: str, value: float) -> float:
        i = self.names.index(name)
        if i < self.n_var:
            start = _feasible_start(self.model, self._start.copy(), i, value)
            # keep the other standard deviations off 0 so the optimiser can move them
            start = np.where(start > 0, start, np.where(np.array(self.model.varpar_kinds) == "sd",
                                                         1e-3 * self.varpar_hat[-1], start))
            found = self.model.profile_varpar(i, value, start)  # a FitModel's own constrained optimisation, or None
            dev, par = found if found is not None else _varpar_profile(self.model, i, value, start)
            if np.isfinite(dev):
                self._start = par
        else:
            dev = self.model.ml_deviance_fixed(i - self.n_var, value)
        inc = max(dev - self.dev_hat, 0.0)
        return float(np.sign(value - self.estimate[i]) * np.sqrt(inc))


def joint_profile_deviance(kinds: tuple[str, ...], index: int, value: float, start: np.ndarray, *,
                           deviance: Callable[[np.ndarray], float],
                           deviance_and_gradient: Callable[[np.ndarray], tuple[float, np.ndarray]] | None = None,
                           hessian: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """A deviance minimised over every parameter but ``index``, held at ``value`` (a GLMM's or an ordinal fit's
    profile, where the fixed effects are re-optimised with the variance parameters).

    Parameters
    ----------
    kinds : tuple of str
        ``"sd"`` (kept >= 0), ``"cor"`` (optimised as ``atanh``), ``"dispersion"`` (a family's positive parameter,
        optimised as its logarithm) or anything else (free) per parameter.
    index, value
        The held parameter and its value.
    start : ndarray
        Starting values of all parameters (the held one is ignored).
    deviance : callable
        ``par -> deviance`` over all parameters (``inf`` where undefined).
    deviance_and_gradient : callable, optional
        ``par -> (deviance, gradient over all parameters)``, used where there are no correlations (the gradient
        is mapped to the logarithm of a dispersion); finite differences of ``deviance`` otherwise.
    hessian : ndarray, optional
        The Hessian over all parameters at the optimum: its block over the free ones starts the search (BFGS
        updates it).

    Returns
    -------
    deviance : float
    par : ndarray
        The optimum (with ``par[index] = value``).
    """
    kinds_arr = np.asarray(kinds)
    others = np.array([i for i in range(kinds_arr.size) if i != index], dtype=int)
    sub = kinds_arr[others]
    is_cor, is_log = sub == "cor", sub == "dispersion"

    def full(x: np.ndarray) -> np.ndarray:
        par = np.empty(kinds_arr.size)
        par[others] = x
        par[others[is_cor]] = np.tanh(x[is_cor])
        par[others[is_log]] = np.exp(x[is_log])
        par[index] = value
        return par

    if deviance_and_gradient is not None and not is_cor.any():
        def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
            par = full(x)
            d, g = deviance_and_gradient(par)
            g = g[others]
            g[is_log] = g[is_log] * par[others[is_log]]
            return d, g
    else:
        fg = finite_difference_gradient(lambda x: deviance(full(x)))
    x0 = np.asarray(start, dtype=float)[others].copy()
    x0[is_cor] = np.arctanh(np.clip(x0[is_cor], -1 + 1e-10, 1 - 1e-10))
    x0[is_log] = np.log(x0[is_log])
    if others.size == 0:
        par = full(x0)
        return deviance(par), par
    hess = None
    if hessian is not None:
        h_sub = hessian[np.ix_(others, others)]
        hess = lambda x: h_sub  # noqa: E731
    lower = np.where(sub == "sd", 0.0, -np.inf)
    res = minimize_deviance(fg, x0, lower, hess=hess)
    return float(res.deviance), full(np.maximum(res.theta, lower))


class JointProfiler(_Profiler):
    """The profiler of a model whose every parameter is profiled jointly over all the others (GLMMs, ordinal fits).

    The model provides ``profile_deviance(index, value, start) -> (deviance, par)`` (the deviance minimised
    over every parameter but ``index``, held at ``value``, from ``start``) and ``step(i)`` (about one standard
    error of parameter ``i``: the first bracketing step). Each search starts from the previous one's optimum.
    """

    def __init__(self, model: FitModel) -> None:
        super().__init__(model)
        self._full_start = self.estimate.copy()

    def reset(self) -> None:
        self._full_start = self.estimate.copy()

    def step(self, i: int) -> float:
        return self.model.step(i)

    def zeta(self, name: str, value: float) -> float:
        i = self.names.index(name)
        start = self._full_start.copy()
        # keep the free standard deviations off 0 so that the optimiser can move them
        sd = np.zeros(start.size, dtype=bool)
        sd[: self.n_var] = np.array(self.model.varpar_kinds) == "sd"
        start[sd] = np.maximum(start[sd], 1e-3)
        dev, par = self.model.profile_deviance(i, value, start)
        if np.isfinite(dev):
            self._full_start = par
        inc = max(dev - self.dev_hat, 0.0)
        return float(np.sign(value - self.estimate[i]) * np.sqrt(inc))


def _profiler_for(model: FitModel) -> _Profiler:
    """The model's own profiler (``model.profiler()``, e.g. a GLMM's) or the linear mixed model's."""
    own = model.profiler()
    return own if own is not None else _Profiler(model)


def _scale(profiler: _Profiler, i: int) -> float:
    """A first step for bracketing: about one standard error."""
    est = profiler.estimate[i]
    sigma = profiler.varpar_hat[-1]
    kind = profiler.model.varpar_kinds[i] if i < profiler.n_var else "fixed"
    n = max(profiler.model.nobs, 2)
    if kind == "sigma":
        return est / np.sqrt(2.0 * n)
    if kind == "sd":
        return max(0.25 * est, 0.05 * sigma)
    if kind == "cor":
        return 0.2
    return max(abs(est) * 1e-3, sigma / np.sqrt(n))


def _bound(profiler: _Profiler, name: str, side: int, crit: float) -> float:
    """The end of the interval on one side (``side = -1`` lower, ``+1`` upper): the root of ``zeta = side * crit``."""
    i = profiler.names.index(name)
    est = profiler.estimate[i]
    kind = profiler.model.varpar_kinds[i] if i < profiler.n_var else "fixed"
    target = side * crit

    seen: dict[float, float] = {}

    def g(v: float) -> float:
        # each zeta is a constrained optimisation warm-started from the previous one: the bracket's ends are
        # kept as evaluated, so that the root search sees the signs that bracketed it
        v = float(v)
        if v not in seen:
            seen[v] = profiler.zeta(name, v) - target
        return seen[v]

    step = profiler.step(i)
    inner = est
    for _ in range(80):
        outer = est + side * step
        if kind == "sd" and outer <= 0.0:
            if g(0.0) >= 0.0:  # even at 0 the deviance has not risen enough: the interval reaches 0
                return 0.0
            outer = 0.0
            break
        if kind in ("sigma", "dispersion") and outer <= 0.0:
            outer = inner / 2.0
        if kind == "cor" and abs(outer) >= 1.0:
            outer = side * (1.0 - 1e-10)
            if side * g(outer) <= 0.0:
                return float(side)
            break
        if side * g(outer) > 0.0:
            break
        inner = outer
        step = 2.0 * step
    else:
        return float("nan")
    a, b = sorted((inner, outer))
    return float(brentq(g, a, b, xtol=1e-9 * max(abs(est), 1e-8), rtol=1e-10))


def profile_interval(model: FitModel, name: str, level: float = 0.95) -> tuple[float, float]:
    """Profile-likelihood interval of one parameter (lme4 name, e.g. ``"sd_(Intercept)|item"``).

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> fit = lmer("score ~ 1 + (1|item)", df)
    >>> from mixeval.uncertainty import as_fit_model
    >>> lo, hi = profile_interval(as_fit_model(fit), "sigma")
    >>> bool(0 < lo < fit.sigma < hi)
    True
    """
    from ._blas import single_threaded_blas

    crit = float(norm.ppf(0.5 + level / 2.0))
    with single_threaded_blas():
        profiler = _profiler_for(model)
        return _bound(profiler, name, -1, crit), _bound(profiler, name, +1, crit)


def profile_intervals(model: FitModel, level: float = 0.95, *, names: list[str] | None = None,
                      progress: bool | None = None) -> dict[str, tuple[float, float]]:
    """Profile-likelihood intervals of every parameter (variance parameters, sigma, fixed effects).

    Examples
    --------
    >>> from mixeval import lmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=15, systems=("A",), n_raters=4)
    >>> fit = lmer("score ~ 1 + (1|item)", df)
    >>> from mixeval.uncertainty import as_fit_model
    >>> list(profile_intervals(as_fit_model(fit), progress=False))
    ['sd_(Intercept)|item', 'sigma', '(Intercept)']
    """
    from .._progress import progress as bar
    from ._blas import single_threaded_blas

    crit = float(norm.ppf(0.5 + level / 2.0))
    profiler = _profiler_for(model)
    names = list(profiler.names) if names is None else list(names)
    out = {}
    with single_threaded_blas():
        for name in bar(names, total=len(names), desc="profile", enabled=progress):
            profiler.reset()
            lower = _bound(profiler, name, -1, crit)
            profiler.reset()
            upper = _bound(profiler, name, +1, crit)
            out[name] = (lower, upper)
    return out
