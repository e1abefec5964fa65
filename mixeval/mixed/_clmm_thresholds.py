"""Random rater thresholds: each rater's thresholds shifted and spread by a random pair (ordinal ratings).

``P(Y_i <= j | b, c, s) = F(theta_j + s_r d_j - x_i' beta - z_i' b - c_r)`` for row ``i`` rated by rater ``r``:
``c_r`` shifts all of the rater's thresholds alike (the random intercept ``(1|rater)`` of :func:`~._clmm_fit.clmm`),
``s_r`` spreads them along a fixed centred contrast ``d`` (:func:`spread_contrast`), and ``(c_r, s_r) ~ N(0,
Sigma)`` with an unstructured ``2 x 2`` ``Sigma = Lambda Lambda'``. A row's upper and lower arguments get different
offsets (``s_r d_{y_i}`` and ``s_r d_{y_i - 1}``), so the Laplace approximation here works with two linear
predictors per row.

Stages, each callable alone, as for every family: :func:`random_threshold_problem` (the formula's
:class:`~._clmm.ClmmProblem` with the rater's term widened to the coefficients ``(1, -d_j)`` of each argument; it
answers for the model as a ``ClmmProblem`` does), :class:`RandomThresholdDeviance` (the Laplace deviance at
``x = (theta, alpha, beta)``: Newton's method on the modes with the penalised system of :mod:`._pirls`; the
fit's evaluator), :func:`fit_random_thresholds` (started at the fit without spreads; L-BFGS-B on finite-difference
gradients) and :func:`fit_spread_model` (the chain, the Hessian and the result). The result is a
:class:`~._clmm_result.ClmmResult` like every ordinal fit (``fit.spread`` names the factor): standard errors,
profile and bootstrap intervals, predictions and simulation through the same members.
:func:`~mixeval.mixed.clmm` (``random_thresholds=``) and :func:`~mixeval.mixed.threshold_spread_test` (the
boundary-corrected likelihood-ratio test of ``Var(s_r) = 0``) call it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.linalg import LinAlgError

from ..errors import InputError, caller_stacklevel
from ._blas import single_threaded_blas
from ._clmm import check_clmm_fit, clmm_problem, covariance_from_hessian, fit_clmm
from ._clmm_result import make_clmm_result
from ._optimize import SINGULAR_TOL, OptimResult, finite_difference_gradient, minimize_deviance
from ._ordinal import OrderedResponse, row_derivatives, warn_empty_categories
from ._pirls import STEP_TOL, _System
from ._reterms import ReStructure, ReTerm, theta_to_factors

if TYPE_CHECKING:
    from ._clmm import ClmmProblem
    from ._clmm_result import ClmmResult
    from ._design import Design
    from ._ordinal import Ordinal

__all__ = ["spread_contrast", "RandomThresholdProblem", "RandomThresholdDeviance", "random_threshold_problem",
           "fit_random_thresholds", "fit_spread_model", "spread_model_of", "spread_null_statistics"]


#: the coefficient names of a rater's widened term: its shift (the formula's intercept) and its spread
SPREAD_COEFS = ("(Intercept)", "spread")


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

    # the members of a ClmmProblem that a ClmmResult and its evaluator read
    @property
    def re(self) -> ReStructure:
        """The random-effects structure with the rater's term widened (coefficients ``(Intercept)``, ``spread``;
        its model matrix that of the upper arguments)."""
        return self.re_upper

    @property
    def factor(self) -> str:
        return self.re_upper.terms[self.rater].group

    @property
    def X(self) -> np.ndarray:
        return self.base.X

    @property
    def y(self) -> np.ndarray:
        return self.base.y

    @property
    def offset(self) -> np.ndarray | None:
        return self.base.offset

    @property
    def family(self):
        return self.base.family

    @property
    def nobs(self) -> int:
        return self.base.nobs

    @property
    def p(self) -> int:
        return self.base.p

    @property
    def n_alpha(self) -> int:
        return self.base.n_alpha

    @property
    def n_categories(self) -> int:
        return self.base.n_categories

    @property
    def alpha_names(self) -> tuple[str, ...]:
        return self.base.alpha_names

    def evaluator(self, n_agq: int = 1) -> RandomThresholdDeviance:
        """The Laplace deviance of the model (there is no quadrature rule for the rater's pair)."""
        if int(n_agq) != 1:
            raise InputError(f"nAGQ={n_agq}: random threshold spreads are fitted by the Laplace approximation "
                             "(nAGQ=1).")
        return RandomThresholdDeviance(self)


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
        term = ReTerm(rater.group, SPREAD_COEFS, rater.codes, rater.levels,
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
    modes are carried from one evaluation to the next (warm starts); :attr:`u` holds them in the terms' order (the
    system orders the term with the most levels first).

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

    #: no exact gradient: optimisers and profiles difference the deviance
    analytic = False

    def __init__(self, problem: RandomThresholdProblem):
        self.problem = problem
        self.k = problem.n_theta
        terms = problem.re_upper.terms
        self.block = max(range(len(terms)), key=lambda i: terms[i].n_levels)
        self.order = [self.block] + [i for i in range(len(terms)) if i != self.block]
        sizes = [t.n_levels * t.n_coef for t in terms]
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self._perm = np.concatenate([np.arange(starts[i], starts[i + 1]) for i in self.order]) if terms else \
            np.zeros(0, dtype=int)
        self._u = np.zeros(problem.re_upper.q)
        self._slots: tuple[bytes, _Slots] | None = None

    @property
    def u(self) -> np.ndarray:
        """The current modes in the terms' order (each term's levels x coefficients, as lme4's ``u``)."""
        out = np.empty_like(self._u)
        out[self._perm] = self._u
        return out

    @u.setter
    def u(self, value: np.ndarray) -> None:
        self._u = np.asarray(value, dtype=float)[self._perm].copy()

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
        if base.offset is not None:  # the formula's offset() terms
            offset = offset + base.offset
        base_a, base_b = base.arguments(alpha, offset)
        sl = self.slots(theta)
        u = self._u.copy()
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
        self._u = u
        return u, rows, system

    def deviance(self, x: np.ndarray) -> float:
        """``-2 log`` of the Laplace approximation of the likelihood."""
        u, rows, system = self.modes(x)
        return -2.0 * float(np.sum(rows.l)) + float(u @ u) + system.ldl2

    def fun_and_grad(self):
        """The deviance with its gradient by central differences."""
        return finite_difference_gradient(self.deviance)

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """The Hessian of the deviance at ``x`` by central second differences of the deviance (lme4's ``deriv12``
        stencil, steps ``1e-4 max(|x|, 0.1)``; forward ones for a covariance factor at its bound 0), every point's
        modes started at those of ``x``."""
        from ._glmm import _hessian

        x = np.asarray(x, dtype=float)
        self.deviance(x)
        u0 = self._u.copy()

        def f(z: np.ndarray) -> float:
            self._u = u0.copy()
            try:
                return self.deviance(z)
            except LinAlgError:
                return float("inf")

        lower = np.concatenate([self.problem.re_upper.lower, np.full(x.size - self.k, -np.inf)])
        at_bound = (lower == 0) & (x < SINGULAR_TOL)
        try:
            return _hessian(f, x, 1e-4 * np.maximum(np.abs(x), 0.1), forward=at_bound)
        finally:
            self._u = u0


def fit_random_thresholds(problem: RandomThresholdProblem, x_null: np.ndarray, *, x0: np.ndarray | None = None,
                          spread_start: float = 0.1):
    """Minimise the Laplace deviance from the fit without spreads (``x_null`` in :class:`~._clmm.ClmmDeviance`'s
    layout) or from ``x0`` (the widened layout); returns ``(x, OptimResult, deviance object)``.

    The deviance has no exact gradient here, so it is minimised by L-BFGS-B with finite-difference gradients
    (``k + 1`` evaluations per gradient; the package's Newton optimiser would difference a differenced gradient for
    its Hessians, ``(2k + 1)`` evaluations per row), then polished by :func:`~._optimize.minimize_deviance` when
    L-BFGS-B reports a failure. The deviance is even in the rater factor's second column (``L21, L22`` jointly),
    so without ``x0`` that column starts at ``(0, spread_start)``; a fit ending above ``x_null`` with no spread
    (a point of the model) is replaced by that point.
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

    start = at(0.0, spread_start) if x0 is None else np.maximum(np.asarray(x0, dtype=float), lower)
    bounds = [(lo if np.isfinite(lo) else None, None) for lo in lower]
    res = minimize(deviance, start, method="L-BFGS-B", bounds=bounds,
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


def _without_spread(problem: RandomThresholdProblem, x: np.ndarray) -> np.ndarray:
    """``x`` of the widened layout with the rater's spread column (``L21, L22``) left out: the null layout."""
    r_start = sum(t.n_theta for t in problem.base.re.terms[:problem.rater])
    return np.delete(np.asarray(x, dtype=float), [r_start + 1, r_start + 2])


def fit_spread_model(design: Design, response: OrderedResponse, family: Ordinal, factor: str, *,
                     data: Any = None, warn: bool = True, x0: np.ndarray | None = None,
                     hessian: bool = True) -> ClmmResult:
    """Fit the model of ``design`` with random threshold spreads of ``factor`` (the stages after the formula, as
    :func:`~._clmm.fit_clmm`): the model without spreads first (unless ``x0``, a start in the widened layout, is
    given), then :func:`fit_random_thresholds`, the Hessian (``hessian=False`` leaves it out: the parametric
    bootstrap's refits) and the :class:`~._clmm_result.ClmmResult`."""
    base, kept = clmm_problem(design, response, family, None)
    problem = random_threshold_problem(base, factor)
    if warn:
        warn_empty_categories(response, family.threshold)
    with single_threaded_blas():
        if x0 is None:
            null = fit_clmm(design, response, family, data=data, warn=False, hessian=False)
            x_null = np.concatenate([null.theta, null.alpha, null.coef])
        else:
            x_null = _without_spread(problem, x0)
        x, opt, dev = fit_random_thresholds(problem, x_null, x0=x0)
        cov_params = covariance_from_hessian(lambda: dev.hessian(x)) if hessian else None
        deviance = dev.deviance(x)
    refitter = partial(_refit_spread, design, response, family, factor, data)
    result = make_clmm_result(design, response, problem, kept, x, deviance, dev.u, opt, cov_params, 1, None, data,
                              refitter, spread=factor)
    if warn:
        check_spread_fit(result, factor)
    return result


def check_spread_fit(result: ClmmResult, factor: str) -> None:
    """:func:`~._clmm.check_clmm_fit` for a fit with random threshold spreads, saying what is on the boundary of the
    spread factor's ``2 x 2`` covariance: the spread's variance at 0 (raters shift but do not spread their
    thresholds), the shift's, or a correlation of +-1 (the spread a multiple of the shift), instead of "a variance
    of the factor is zero" when its shift variance is not."""
    import warnings
    from dataclasses import replace

    from ..errors import SingularFitWarning

    others = [g for g in result.singular_groups if g != factor]
    check_clmm_fit(replace(result, singular=bool(others)) if others != result.singular_groups else result)
    if factor not in result.singular_groups:
        return
    label = result.term_labels[list(result.group_names).index(factor)]
    cov = result.covariances[label].to_numpy(dtype=float)
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    tiny = SINGULAR_TOL * max(1.0, float(np.max(sd)))
    if sd[1] < tiny and sd[0] < tiny:
        what = f"the shift and the spread of the thresholds of {factor!r} are both estimated as 0"
    elif sd[1] < tiny:
        what = (f"the spread of the thresholds of {factor!r} is estimated as 0 (the shift variance is "
                f"{sd[0] ** 2:.3g}): its levels shift the scale but do not spread it")
    elif sd[0] < tiny:
        what = (f"the shift of the thresholds of {factor!r} is estimated as 0 (the spread variance is "
                f"{sd[1] ** 2:.3g})")
    else:
        corr = float(cov[0, 1] / (sd[0] * sd[1]))
        what = (f"the shift and the spread of the thresholds of {factor!r} are perfectly correlated (correlation "
                f"{corr:+.2f}; variances {sd[0] ** 2:.3g} and {sd[1] ** 2:.3g}): their 2 x 2 covariance is singular")
    warnings.warn(f"boundary (singular) fit: {what}. This is a valid estimate, not a failure; "
                  "threshold_spread_test(..., n_resamples=) tests the spread without relying on the boundary "
                  "asymptotics.", SingularFitWarning, stacklevel=caller_stacklevel())


def _refit_spread(design: Design, response: OrderedResponse, family: Ordinal, factor: str, data: Any, *,
                  new_y: np.ndarray, x0: np.ndarray | None = None, hessian: bool = True) -> ClmmResult:
    """The model fitted again to new category codes (a picklable refitter for the result), from ``x0`` if given."""
    resp = OrderedResponse(np.asarray(new_y, dtype=np.int64), response.levels, response.name)
    return fit_spread_model(design, resp, family, factor, data=data, warn=False, x0=x0, hessian=hessian)


def spread_model_of(null: ClmmResult, factor: str) -> ClmmResult:
    """The model of ``null`` (a fit with ``(1|factor)`` and no spreads) with random threshold spreads of ``factor``,
    started from ``null``'s estimates: the alternative of :func:`~._clmm.threshold_spread_test`."""
    if null.spread is not None or null.nominal is not None or null.nAGQ != 1:
        raise InputError("the model under the null has no spreads, no nominal effects and nAGQ=1.")
    response = OrderedResponse(np.asarray(null.y), tuple(null.levels), null.design.parsed.response)
    base = null.problem
    problem = random_threshold_problem(base, factor)
    r_start = sum(t.n_theta for t in base.re.terms[:problem.rater])
    x_null = np.concatenate([null.theta, null.alpha, null.coef])
    x0 = np.insert(x_null, r_start + 1, [0.0, 0.1])
    return fit_spread_model(null.design, response, null.family, factor, data=null.data, warn=False, x0=x0)


def spread_null_statistics(null: ClmmResult, alt: ClmmResult, n_resamples: int,
                           rng: np.random.Generator) -> np.ndarray:
    """The spread test's statistic ``2 (l_1 - l_0)`` on ``n_resamples`` rating sets simulated from ``null`` (the
    model without spreads, new random effects each time), both models refitted (the null from its estimates, the
    alternative from ``alt``'s, no Hessians): the parametric bootstrap's null distribution. A refit that fails is
    NaN."""
    from ._clmm_model import ClmmFitModel

    model = ClmmFitModel(null)
    codes = model.simulate(n_resamples, rng)
    x_alt = np.concatenate([alt.theta, alt.alpha, alt.coef])
    out = np.full(n_resamples, np.nan)
    with single_threaded_blas():
        for b in range(n_resamples):
            try:
                l0 = -0.5 * model.refit(codes[:, b])[0].criterion
                l1 = float(alt.refitter(new_y=codes[:, b], x0=x_alt, hessian=False).loglik)
            except (LinAlgError, ValueError, FloatingPointError):
                continue
            out[b] = max(2.0 * (l1 - l0), 0.0)
    return out
