"""Random rater thresholds: each rater's thresholds shifted and spread by a random pair (ordinal ratings).

``P(Y_i <= j | b, c, s) = F(theta_j + s_r d_j - x_i' beta - z_i' b - c_r)`` for row ``i`` rated by rater ``r``:
``c_r`` shifts all of the rater's thresholds alike (the random intercept ``(1|rater)`` of :func:`~._clmm.clmm`),
``s_r`` spreads them along a fixed centred contrast ``d`` (:func:`spread_contrast`), and ``(c_r, s_r) ~ N(0,
Sigma)`` with an unstructured ``2 x 2`` ``Sigma = Lambda Lambda'``. A row's upper and lower arguments get different
offsets (``s_r d_{y_i}`` and ``s_r d_{y_i - 1}``), so the Laplace approximation here works with two linear
predictors per row. Stages: :func:`random_threshold_problem` (the formula's :class:`~._clmm.ClmmProblem` and
the rater's two-coefficient term for each argument), :class:`RandomThresholdDeviance` (the Laplace deviance at
``x = (theta, alpha, beta)``: Newton's method on the modes with the penalised system of :mod:`._pirls`),
:func:`fit_random_thresholds` (started at the fit without spreads; L-BFGS-B on forward-difference
gradients). :func:`~mixeval.mixed.clmm` (``random_thresholds=``) and :func:`~mixeval.mixed.threshold_spread_test`
(the boundary-corrected likelihood-ratio test of ``Var(s_r) = 0``) call it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.linalg import LinAlgError

from .._results import Result
from ..errors import ConvergenceWarning, InputError
from ._optimize import OptimResult, finite_difference_gradient, minimize_deviance
from ._ordinal import row_derivatives
from ._pirls import STEP_TOL, _System
from ._reterms import ReStructure, ReTerm, theta_to_factors

if TYPE_CHECKING:
    from ._clmm import ClmmProblem

__all__ = ["spread_contrast", "RandomThresholdProblem", "RandomThresholdDeviance", "random_threshold_problem",
           "fit_random_thresholds", "RandomThresholdsResult", "random_thresholds_fit"]


def spread_contrast(n_thresholds: int) -> np.ndarray:
    """The centred threshold contrast ``d``: ``-1`` at the first threshold, ``+1`` at the last, equally spaced.

    Examples
    --------
    >>> spread_contrast(4).round(4).tolist()
    [-1.0, -0.3333, 0.3333, 1.0]
    """
    m = int(n_thresholds)
    if m < 2:
        raise InputError("a spread of the thresholds needs a scale with 3 or more observed categories (2 or more "
                         f"thresholds); this one has {m + 1}.")
    return np.linspace(-1.0, 1.0, m)


@dataclass(frozen=True)
class RandomThresholdProblem:
    """A CLMM whose rater term carries a random threshold spread.

    Attributes
    ----------
    base : ClmmProblem
        The formula's model (its random-effects terms include the rater's intercept ``(1|rater)``).
    rater : int
        Index of the rater's term in ``base.re.terms``.
    re_upper, re_lower : ReStructure
        ``base.re`` with the rater's term widened to the coefficients ``(1, -d_j)`` at each row's upper and lower
        threshold ``j`` (0 at the open ends).
    contrast : ndarray
        ``d`` (:func:`spread_contrast`).
    """

    base: ClmmProblem = field(repr=False)
    rater: int
    re_upper: ReStructure = field(repr=False)
    re_lower: ReStructure = field(repr=False)
    contrast: np.ndarray = field(repr=False)

    @property
    def n_theta(self) -> int:
        return self.re_upper.n_theta


def random_threshold_problem(base: ClmmProblem, factor: str, *, contrast: np.ndarray | None = None
                             ) -> RandomThresholdProblem:
    """Widen the scalar term ``(1|factor)`` of ``base`` to a shift and a spread of that factor's thresholds
    (along ``contrast``, by default :func:`spread_contrast`)."""
    terms = base.re.terms
    hits = [k for k, t in enumerate(terms) if t.group == factor]
    if any(t.is_multiple_membership for t in terms):
        raise InputError("random_thresholds cannot be combined with a multiple-membership random-effects term.")
    if not hits or not terms[hits[0]].is_intercept:
        raise InputError(f"random_thresholds={factor!r} widens the formula's random intercept (1|{factor}) by a "
                         f"random spread of each {factor}'s thresholds; add (1|{factor}) to the formula (and no other "
                         f"{factor} term).")
    if base.family.threshold != "flexible":
        raise InputError("random threshold spreads are defined for flexible thresholds (threshold='flexible').")
    k = hits[0]
    m = base.n_categories - 1
    d = spread_contrast(m) if contrast is None else np.asarray(contrast, dtype=float)
    if d.shape != (m,):
        raise InputError(f"contrast= needs one value per threshold ({m}); got shape {d.shape}.")
    y = base.y
    d_up = np.where(y < m, d[np.minimum(y, m - 1)], 0.0)
    d_lo = np.where(y > 0, d[np.maximum(y - 1, 0)], 0.0)
    rater = terms[k]

    def widened(dj: np.ndarray) -> ReStructure:
        term = ReTerm(rater.group, ("(Intercept)", "spread"), rater.codes, rater.levels,
                      np.column_stack([np.ones(base.nobs), -dj]))
        return ReStructure(terms=tuple(term if i == k else t for i, t in enumerate(terms)), nobs=base.nobs)

    return RandomThresholdProblem(base, k, widened(d_up), widened(d_lo), d)


class _Layout:
    """The view of the penalised system :class:`~._pirls._System` needs: one block term first, the rest dense."""

    p = 0

    def __init__(self, q_block: int, q: int):
        self.q_block, self.q = q_block, q

    def block_term(self) -> int:
        return 0 if self.q_block else -1

    def term_slices(self) -> list[slice]:
        return [slice(0, self.q_block), slice(self.q_block, self.q)] if self.q_block else [slice(0, self.q)]


@dataclass(frozen=True)
class _Slots:
    """Each row's random-effects columns (``n x s``, one per term and coefficient) and its loadings on them in the
    upper and lower argument at a given ``theta`` (``G_a``, ``G_b`` row by row); the first ``p_b`` slots are those
    of the block term."""

    cols: np.ndarray
    va: np.ndarray
    vb: np.ndarray
    q_block: int
    p_block: int
    q: int


class RandomThresholdDeviance:
    """The Laplace deviance of a :class:`RandomThresholdProblem` at ``x = (theta, alpha, beta)``.

    ``theta`` follows lme4's layout of the widened terms (the rater's ``Lambda`` as ``(L11, L21, L22)``). The
    modes are carried from one evaluation to the next (warm starts).

    Notes
    -----
    With ``a = U alpha - X beta - G_a u`` and ``b = L alpha - X beta - G_b u`` (``G = Z Lambda`` of the widened
    terms for either argument) and ``l_i = log(F(a_i) - F(b_i))``, the modes minimise
    ``-sum l + ||u||^2 / 2`` (gradient ``G_a' l_a + G_b' l_b + u``, Hessian ``A = G_a' W_aa G_a + G_a' W_ab G_b +
    G_b' W_ab G_a + G_b' W_bb G_b + I`` with ``W = -`` the second derivatives of ``l``, positive semi-definite as
    ``log(F(a) - F(b))`` is jointly concave for a log-concave density), and the deviance is
    ``-2 sum l + ||u||^2 + log|A|`` at the modes. ``A`` is assembled by weighted counts over each row's columns
    (the term with the most levels block-diagonally, the others in a dense Schur complement).
    """

    def __init__(self, problem: RandomThresholdProblem):
        self.problem = problem
        self.k = problem.n_theta
        self.u = np.zeros(problem.re_upper.q)
        terms = problem.re_upper.terms
        self.block = max(range(len(terms)), key=lambda i: terms[i].n_levels)
        self.order = [self.block] + [i for i in range(len(terms)) if i != self.block]
        self._slots: tuple[bytes, _Slots] | None = None

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k, m = self.k, self.problem.base.n_alpha
        return x[:k], x[k:k + m], x[k + m:]

    def slots(self, theta: np.ndarray) -> _Slots:
        """Columns and loadings of every row at ``theta`` (remembered for the last ``theta``)."""
        key = theta.tobytes()
        if self._slots is not None and self._slots[0] == key:
            return self._slots[1]
        up, lo = self.problem.re_upper.terms, self.problem.re_lower.terms
        lams = theta_to_factors(up, theta)
        cols, va, vb = [], [], []
        start = 0
        for i in self.order:
            p = up[i].n_coef
            cols.append(start + up[i].codes[:, None] * p + np.arange(p)[None, :])
            va.append(up[i].X @ lams[i])
            vb.append(lo[i].X @ lams[i])
            start += up[i].n_levels * p
        b = up[self.block]
        out = _Slots(np.hstack(cols), np.hstack(va), np.hstack(vb), b.n_levels * b.n_coef, b.n_coef, start)
        self._slots = (key, out)
        return out

    @staticmethod
    def _eta(values: np.ndarray, cols: np.ndarray, u: np.ndarray) -> np.ndarray:
        return np.einsum("ij,ij->i", values, u[cols])

    def _rows(self, base_a, base_b, sl: _Slots, u: np.ndarray):
        return row_derivatives(self.problem.base.family.link, base_a - self._eta(sl.va, sl.cols, u),
                               base_b - self._eta(sl.vb, sl.cols, u))

    def _system(self, sl: _Slots, rows) -> _System:
        waa, wab, wbb = -rows.laa, -rows.lab, -rows.lbb
        qb, pb, q = sl.q_block, sl.p_block, sl.q
        m = q - qb
        n_lev = qb // pb
        blocks = np.zeros((n_lev, pb, pb))
        c = np.zeros((qb, m))
        d = np.eye(m)
        s = sl.cols.shape[1]
        for i in range(s):
            for j in range(i, s):
                w = (waa * sl.va[:, i] * sl.va[:, j] + wab * (sl.va[:, i] * sl.vb[:, j] + sl.vb[:, i] * sl.va[:, j])
                     + wbb * sl.vb[:, i] * sl.vb[:, j])
                ci, cj = sl.cols[:, i], sl.cols[:, j]
                if j < pb:  # both in the block term: each row is in one of its levels
                    blocks[:, i, j] += np.bincount(ci // pb, weights=w, minlength=n_lev)
                    if i != j:
                        blocks[:, j, i] = blocks[:, i, j]
                elif i < pb:
                    c += np.bincount(ci * m + (cj - qb), weights=w, minlength=qb * m).reshape(qb, m)
                else:
                    t = np.bincount((ci - qb) * m + (cj - qb), weights=w, minlength=m * m).reshape(m, m)
                    d += t if i == j else t + t.T
        d = 0.5 * (d + d.T) if s > pb else d
        blocks += np.eye(pb)[None, :, :]
        return _System(_Layout(qb, q), False, blocks, c, d)  # type: ignore[arg-type]

    def modes(self, x: np.ndarray, *, maxit: int = 100):
        """``(u, rows, system)`` at the conditional modes (Newton steps with step halving); raises ``LinAlgError``
        where a row's probability is not positive (thresholds out of order)."""
        theta, alpha, beta = self.split(np.asarray(x, dtype=float))
        base = self.problem.base
        offset = base.X @ beta if base.p else np.zeros(base.nobs)
        base_a, base_b = base.arguments(alpha, offset)
        sl = self.slots(theta)
        u = self.u.copy()
        rows = self._rows(base_a, base_b, sl, u)
        pen = -2.0 * float(np.sum(rows.l)) + float(u @ u)
        if not np.isfinite(pen):
            u = np.zeros_like(u)
            rows = self._rows(base_a, base_b, sl, u)
            pen = -2.0 * float(np.sum(rows.l))
            if not np.isfinite(pen):
                raise LinAlgError("thresholds out of order")
        for _ in range(maxit):
            system = self._system(sl, rows)
            grad = np.zeros(sl.q)
            for i in range(sl.cols.shape[1]):
                grad += np.bincount(sl.cols[:, i], weights=sl.va[:, i] * rows.la + sl.vb[:, i] * rows.lb,
                                    minlength=sl.q)
            du, _ = system.solve(-(grad + u), None)
            if float(np.max(np.abs(du), initial=0.0)) < STEP_TOL:
                u = u + du
                rows = self._rows(base_a, base_b, sl, u)
                system = self._system(sl, rows)
                break
            step = 1.0
            for _ in range(30):
                u_new = u + step * du
                rows_new = self._rows(base_a, base_b, sl, u_new)
                pen_new = -2.0 * float(np.sum(rows_new.l)) + float(u_new @ u_new)
                if pen_new <= pen + 1e-14 * (1.0 + abs(pen)):
                    break
                step /= 2
            else:
                break
            u, rows, pen = u_new, rows_new, pen_new
        else:
            system = self._system(sl, rows)
        if not np.all(np.isfinite(rows.l)):
            raise LinAlgError("thresholds out of order")
        self.u = u
        return u, rows, system

    def deviance(self, x: np.ndarray) -> float:
        """``-2 log`` of the Laplace approximation of the likelihood."""
        u, rows, system = self.modes(x)
        return -2.0 * float(np.sum(rows.l)) + float(u @ u) + system.ldl2

    def effects(self, x: np.ndarray) -> list[np.ndarray]:
        """Conditional modes ``b = Lambda u`` per term of the widened structure (levels x coefficients)."""
        theta = self.split(np.asarray(x, dtype=float))[0]
        u = self.modes(x)[0]
        terms = self.problem.re_upper.terms
        out: list[np.ndarray] = [np.zeros(0)] * len(terms)
        start = 0
        for i in self.order:
            t = terms[i]
            size = t.n_levels * t.n_coef
            lam = theta_to_factors(terms, theta)[i]
            out[i] = u[start:start + size].reshape(t.n_levels, t.n_coef) @ lam.T
            start += size
        return out


@dataclass(frozen=True, eq=False)
class RandomThresholdsResult(Result):
    """A cumulative link mixed model with random threshold shifts and spreads per rater.

    Attributes
    ----------
    formula, factor, link : str
    loglik : float
        Laplace log-likelihood.
    thresholds : pandas.Series
        ``theta_j`` (the average rater's thresholds), named ``"1|2"``, ...
    fixef : pandas.Series
        ``beta`` (``ordinal``'s sign: a positive effect moves ratings up).
    contrast : pandas.Series
        ``d_j``, the fixed pattern along which a rater's spread moves the thresholds.
    components : dict
        Variances of the formula's other random-effects terms ({group: variance} for intercepts).
    rater_covariance : pandas.DataFrame
        ``Sigma``: covariance of the rater's shift and spread (index and columns ``shift``, ``spread``).
    rater_effects : pandas.DataFrame
        Conditional modes of each rater's ``shift`` (``c_r``) and ``spread`` (``s_r``).
    theta : numpy.ndarray
        The relative covariance factors' parameters (lme4's layout; the rater's as ``L11, L21, L22``).
    nobs, n_params, n_evaluations : int
    converged : bool

    Notes
    -----
    ``P(Y_i <= j | rater r) = F(theta_j + s_r d_j - x_i' beta - z_i' b - c_r)``, ``(c_r, s_r) ~ N(0, Sigma)``,
    ``Sigma`` unstructured, ``d = (-1, ..., 1)`` equally spaced (:func:`spread_contrast`): a rater with
    ``s_r > 0`` keeps to the middle of the scale, one with ``s_r < 0`` uses its ends. Only ``s_r d`` is identified:
    the model with the contrast ``k d`` and spreads ``s_r / k`` is the same model (``Sigma``'s spread row and column
    scaled by ``1 / k``), so the scale of ``d`` is a convention, here that the outer thresholds move by ``+-s_r``;
    and shifting ``d`` by a constant ``k`` maps ``(c_r, s_r)`` to ``(c_r - k s_r, s_r)``, a linear map of the
    random pair that an unstructured ``Sigma`` absorbs. Neither choice changes the likelihood, the estimates of
    ``theta`` and ``beta`` or the spread test; centring makes ``c_r`` the rater's shift at the middle of the scale.
    With ``Var(s_r) = 0`` the model is :func:`~mixeval.clmm`'s with ``(1|rater)`` (the same deviance at the same
    point). A normal spread gives some probability to spreads so negative that a rater's thresholds cross
    (``s_r < -(theta_{j+1} - theta_j) / (d_{j+1} - d_j)``), where the model has no probabilities; the Laplace
    approximation uses the integrand near each rater's mode only, so the model is meant for spread standard
    deviations well below that bound (three standard deviations or more from it). ``ordinal::clmm`` cannot fit this model (its nominal effects are fixed and clmm has none); the
    reference is direct numerical integration of the likelihood and the fit without spreads.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import clmm
    >>> rng = np.random.default_rng(4)
    >>> df = pd.DataFrame({"rater": np.repeat(np.arange(15), 30), "item": np.tile(np.arange(30), 15)})
    >>> spread = rng.normal(0, 0.8, 15)[df.rater][:, None] * np.linspace(-1, 1, 4)
    >>> latent = rng.normal(0, 1, 30)[df.item] + rng.logistic(size=450)
    >>> df["rating"] = (latent[:, None] > np.array([-2, -0.7, 0.7, 2]) + spread).sum(axis=1) + 1
    >>> fit = clmm("rating ~ 1 + (1|item) + (1|rater)", df, random_thresholds="rater")
    >>> list(fit.rater_covariance.columns), list(fit.contrast.round(3))
    (['shift', 'spread'], [-1.0, -0.333, 0.333, 1.0])
    """

    formula: str
    factor: str
    link: str
    loglik: float
    thresholds: pd.Series
    fixef: pd.Series
    contrast: pd.Series
    components: dict
    rater_covariance: pd.DataFrame
    rater_effects: pd.DataFrame = field(repr=False)
    theta: np.ndarray = field(repr=False)
    nobs: int = 0
    n_params: int = 0
    n_evaluations: int = 0
    converged: bool = True

    @property
    def spread_sd(self) -> float:
        """``sigma_s``: standard deviation of the raters' threshold spreads."""
        return float(np.sqrt(self.rater_covariance.loc["spread", "spread"]))

    def summary(self) -> str:
        cov = self.rater_covariance
        sd = np.sqrt(np.diag(cov.to_numpy()))
        corr = cov.iloc[0, 1] / (sd[0] * sd[1]) if sd[0] > 0 and sd[1] > 0 else float("nan")
        lines = [f"Cumulative link mixed model with random {self.factor} thresholds (Laplace, {self.link})",
                 f"formula: {self.formula}; {self.nobs} ratings; logLik {self.loglik:.4f}; {self.n_params} parameters",
                 f"{self.factor}: shift sd {sd[0]:.4f}, spread sd {sd[1]:.4f}, correlation {corr:.3f}",
                 "other variances: " + (", ".join(f"{g} {v:.4f}" for g, v in self.components.items()) or "none"),
                 "thresholds: " + ", ".join(f"{k} {v:.4f}" for k, v in self.thresholds.items()),
                 "spread contrast: " + ", ".join(f"{k} {v:+.3f}" for k, v in self.contrast.items()),
                 "fixed effects: " + (", ".join(f"{k} {v:.4f}" for k, v in self.fixef.items()) or "none")]
        if not self.converged:
            lines.append("the optimiser did not meet its convergence criterion")
        return "\n".join(lines)


def fit_random_thresholds(problem: RandomThresholdProblem, x_null: np.ndarray, *, spread_start: float = 0.1):
    """Minimise the Laplace deviance from the fit without spreads (``x_null`` in :class:`~._clmm.ClmmDeviance`'s
    layout); returns ``(x, OptimResult, deviance object)``.

    The deviance has no exact gradient here, so it is minimised by L-BFGS-B with forward-difference gradients
    (``k + 1`` evaluations per gradient; the package's Newton optimiser would difference a differenced gradient for
    its Hessians, ``(2k + 1)`` evaluations per row), then polished by :func:`~._optimize.minimize_deviance` when
    L-BFGS-B reports a failure. The deviance is even in the rater factor's second column (``L21, L22`` jointly),
    so that column starts at ``(0, spread_start)``; a fit ending above the fit without spreads is replaced by that
    point, which the model contains.
    """
    from scipy.optimize import minimize

    base = problem.base
    k0 = base.re.n_theta
    r_start = sum(t.n_theta for t in base.re.terms[:problem.rater])
    theta0 = np.asarray(x_null[:k0], dtype=float)
    rest = np.asarray(x_null[k0:], dtype=float)
    dev = RandomThresholdDeviance(problem)
    lower = np.concatenate([problem.re_upper.lower, np.full(rest.size, -np.inf)])
    n_evals = [0]

    def deviance(x: np.ndarray) -> float:
        n_evals[0] += 1
        try:
            value = dev.deviance(np.maximum(x, lower))
        except LinAlgError:
            return 1e300
        return value if np.isfinite(value) else 1e300

    def at(l21: float, l22: float) -> np.ndarray:
        return np.concatenate([theta0[:r_start], [theta0[r_start], l21, l22], theta0[r_start + 1:], rest])

    bounds = [(lo if np.isfinite(lo) else None, None) for lo in lower]
    res = minimize(deviance, at(0.0, spread_start), method="L-BFGS-B", bounds=bounds,
                   options={"ftol": 1e-13, "gtol": 1e-6, "maxfun": 20_000})
    x, value, converged = np.maximum(res.x, lower), float(res.fun), bool(res.success)
    message = str(res.message)
    if not converged:
        opt = minimize_deviance(finite_difference_gradient(dev.deviance), x, lower, fun=dev.deviance,
                                factors=tuple(t.n_coef for t in problem.re_upper.terms))
        n_evals[0] += opt.n_evaluations
        x, value, converged, message = opt.theta, opt.deviance, opt.converged, opt.message
    null_point = at(0.0, 0.0)
    null_dev = deviance(null_point)
    if not value <= null_dev:
        x, value = null_point, null_dev
    dev.deviance(x)  # leave the modes at the optimum
    return x, OptimResult(theta=x, deviance=value, converged=converged, n_evaluations=n_evals[0],
                          message=message, gradient=np.zeros(0)), dev


def _result(formula: str, factor: str, problem: RandomThresholdProblem, x: np.ndarray, opt, dev,
            null) -> RandomThresholdsResult:
    base = problem.base
    theta, alpha, beta = dev.split(x)
    terms = problem.re_upper.terms
    covs = problem.re_upper.covariances(theta)
    components = {t.group: float(c[0, 0]) for i, (t, c) in enumerate(zip(terms, covs)) if i != problem.rater}
    names = ["shift", "spread"]
    eff = dev.effects(x)[problem.rater]
    rater = terms[problem.rater]
    return RandomThresholdsResult(
        formula=formula, factor=factor, link=base.family.link, loglik=-0.5 * float(dev.deviance(x)),
        thresholds=pd.Series(alpha, index=list(null.alpha_names), name="threshold"),
        fixef=pd.Series(beta, index=list(null.fixed_names), name="estimate"),
        contrast=pd.Series(problem.contrast, index=list(null.alpha_names), name="d"),
        components=components,
        rater_covariance=pd.DataFrame(covs[problem.rater], index=names, columns=names),
        rater_effects=pd.DataFrame(eff, index=pd.Index(rater.levels, name=factor), columns=names),
        theta=theta, nobs=base.nobs, n_params=int(x.size), n_evaluations=int(opt.n_evaluations),
        converged=bool(opt.converged))


def _null_point(null) -> np.ndarray:
    """``(theta, alpha, beta)`` of a :class:`~._clmm_result.ClmmResult` in :class:`~._clmm.ClmmDeviance`'s layout."""
    return np.concatenate([np.asarray(null.theta, dtype=float), np.asarray(null.alpha, dtype=float),
                           np.asarray(null.coef, dtype=float)])


def random_thresholds_fit(formula: str, null, factor: str) -> RandomThresholdsResult:
    """The model of ``null`` (a :class:`~._clmm_result.ClmmResult` with ``(1|factor)``) with a random spread of each
    ``factor`` level's thresholds, fitted from ``null``."""
    problem = random_threshold_problem(null.problem, factor)
    x, opt, dev = fit_random_thresholds(problem, _null_point(null))
    result = _result(formula, factor, problem, x, opt, dev, null)
    if not result.converged:
        warnings.warn("the optimiser did not meet its convergence criterion; treat the estimates with care.",
                      ConvergenceWarning, stacklevel=3)
    return result
