"""The frozen result of a cumulative link mixed model fit (``ordinal::clmm``'s ``clmm`` object)."""

from __future__ import annotations

import functools
import html
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ._base import MixedResult
from ._design import Design
from ._glmm_result import GlmerResult
from ._optimize import SINGULAR_TOL, OptimResult
from ._ordinal import OrderedResponse, Ordinal
from ._reterms import theta_to_factors

__all__ = ["ClmmResult", "make_clmm_result", "category_probabilities"]


def category_probabilities(family: Ordinal, thresholds: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """``P(Y = j)`` for every row of ``eta`` (rows) and category (columns) from the thresholds, one set for all rows
    or one row of thresholds per row of ``eta`` (``-inf``/``+inf`` thresholds of empty end categories give
    probability 0).

    Examples
    --------
    >>> p = category_probabilities(Ordinal("logit"), np.array([-1.0, 1.0]), np.array([0.0]))
    >>> [round(float(v), 4) for v in p[0]]
    [0.2689, 0.4621, 0.2689]
    """
    eta = np.atleast_1d(np.asarray(eta, dtype=float))
    thresholds = np.asarray(thresholds, dtype=float)
    cum = family.cdf((thresholds if thresholds.ndim == 2 else thresholds[None, :]) - eta[:, None])
    cum = np.column_stack([np.zeros(eta.size), cum, np.ones(eta.size)])
    return np.clip(np.diff(cum, axis=1), 0.0, 1.0)


@dataclass(frozen=True, eq=False)
class ClmmResult(MixedResult):
    """A fitted cumulative link mixed model, all numbers unrounded.

    Attributes
    ----------
    formula : str
    family : Ordinal
        The link and threshold structure (``family.latent_variance`` is the latent residual variance).
    levels : tuple
        The categories of the scale in order (unused ones included).
    nAGQ : int
    nobs : int
    alpha_names : tuple of str
        Threshold parameters (``"1|2", ...`` for flexible thresholds; ``threshold.1, spacing`` /
        ``central, spacing.1, ...`` otherwise; then nominal effects ``"1|2.raterB"``).
    alpha : ndarray
    fixed_names : tuple of str
    coef : ndarray
        Location effects ``beta`` (a positive value moves ratings up; ``ordinal``'s sign).
    theta : ndarray
        Relative covariance parameters (standard deviations of scalar terms; the latent residual scale is fixed).
    cov_params : ndarray or None
        ``2 H^{-1}`` over ``(theta, alpha, beta)`` (None when the Hessian is not usable).
    loglik, criterion : float
        The log-likelihood and ``-2 loglik`` (also :attr:`deviance`).
    spread : str or None
        The grouping factor whose levels spread their thresholds at random (``clmm(..., random_thresholds=)``):
        its term has the coefficients ``(Intercept)`` (the shift ``c_r``) and ``spread`` (``s_r``), and level
        ``r``'s thresholds are ``theta_j + s_r d_j`` (:attr:`spread_contrast`); :attr:`thresholds` are those of
        the average rater (``s_r = 0``).

    Examples
    --------
    >>> from mixeval.mixed import clmm
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=10, systems=("A", "B"), n_raters=10, response="rating")
    >>> fit = clmm("rating ~ system + (1|rater)", df)
    >>> fit.family.link, fit.nobs, list(fit.components), isinstance(fit, MixedResult)
    ('logit', 200, ['rater'], True)
    """

    formula: str
    family: Ordinal
    levels: tuple
    nAGQ: int
    nobs: int
    alpha_names: tuple[str, ...]
    alpha: np.ndarray = field(repr=False)
    fixed_names: tuple[str, ...]
    coef: np.ndarray = field(repr=False)
    cov_params: np.ndarray | None = field(repr=False)
    group_names: tuple[str, ...]
    term_coef_names: tuple[tuple[str, ...], ...]
    n_levels: tuple[int, ...]
    theta: np.ndarray = field(repr=False)
    loglik: float
    criterion: float
    singular: bool
    converged: bool
    n_evaluations: int = field(repr=False)
    u: np.ndarray = field(repr=False)
    random_effects: tuple[np.ndarray, ...] = field(repr=False)
    kept: np.ndarray = field(repr=False)
    """Indices (into ``levels``) of the categories whose thresholds were estimated."""
    threshold_matrix: np.ndarray = field(repr=False)
    """``thresholds = threshold_matrix @ alpha[:n]`` over the estimated categories."""
    y: np.ndarray = field(repr=False)
    """Category index (into ``levels``) of every row."""
    nominal: str | None = None
    spread: str | None = None
    design: Design = field(default=None, repr=False, compare=False)
    problem: Any = field(default=None, repr=False, compare=False)
    data: Any = field(default=None, repr=False, compare=False)
    refitter: Any = field(default=None, repr=False, compare=False)

    # ------------------------------------------------------------------ parameters
    @property
    def reml(self) -> bool:
        """Always False: ordinal fits are maximum-likelihood fits."""
        return False

    @property
    def weights(self) -> None:
        """None: one row per rating (no prior weights)."""
        return None

    @property
    def approximation(self) -> str:
        return "Laplace" if self.nAGQ == 1 else f"AGQ({self.nAGQ})"

    @property
    def n_params(self) -> int:
        """Threshold parameters, location effects and covariance parameters (clmm's ``edf``)."""
        return int(self.alpha.size + self.coef.size + self.theta.size)

    @property
    def term_levels(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(t.levels) for t in self.problem.re.terms)

    @property
    def model_terms(self):
        return self.problem.re.terms

    @functools.cached_property
    def model(self):
        """The evaluator of the fit (:class:`~._clmm_model.ClmmFitModel`: the Laplace or quadrature deviance over
        the sd's, thresholds and effects), for profile and parametric-bootstrap intervals and simulation."""
        from ._clmm_model import ClmmFitModel

        return ClmmFitModel(self)

    singular_groups = GlmerResult.singular_groups

    @property
    def _n_base_alpha(self) -> int:
        return int(self.threshold_matrix.shape[1])

    def _block(self, start: int, stop: int) -> np.ndarray:
        k = stop - start
        if self.cov_params is None:
            return np.full((k, k), np.nan)
        return self.cov_params[start:stop, start:stop]

    @property
    def cov_coef(self) -> np.ndarray:
        """Covariance of the location effects (from the Hessian over every parameter, as clmm's ``vcov``)."""
        s = self.theta.size + self.alpha.size
        return self._block(s, s + self.coef.size)

    @property
    def cov_alpha(self) -> np.ndarray:
        s = self.theta.size
        return self._block(s, s + self.alpha.size)

    @property
    def _estimated_thresholds(self) -> tuple[np.ndarray, np.ndarray]:
        m = self._n_base_alpha
        jac = self.threshold_matrix
        values = jac @ self.alpha[:m]
        cov = jac @ self.cov_alpha[:m, :m] @ jac.T
        return values, np.sqrt(np.clip(np.diag(cov), 0.0, None))

    @property
    def _full_index(self) -> np.ndarray:
        """For every threshold of the scale, the estimated threshold it equals (-1: -inf, -2: +inf)."""
        from ._clmm_model import full_scale_index

        return full_scale_index(self.kept, len(self.levels))

    @property
    def threshold_values(self) -> np.ndarray:
        """Thresholds ``theta_1``, ..., ``theta_{J-1}`` of the whole scale (coinciding around an empty interior
        category, ``-inf``/``+inf`` beyond an empty end category)."""
        est = self._estimated_thresholds[0]
        idx = self._full_index
        return np.where(idx == -1, -np.inf, np.where(idx == -2, np.inf, est[np.maximum(idx, 0)]))

    @property
    def threshold_names(self) -> tuple[str, ...]:
        lv = [str(v) for v in self.levels]
        return tuple(f"{a}|{b}" for a, b in zip(lv[:-1], lv[1:]))

    @property
    def thresholds(self) -> pd.Series:
        """The thresholds, named ``"1|2", "2|3", ...`` as clmm (those of the reference level with nominal effects)."""
        return pd.Series(self.threshold_values, index=list(self.threshold_names), name="threshold")

    @property
    def threshold_table(self) -> pd.DataFrame:
        """Thresholds with Wald standard errors and z values (clmm's ``Threshold coefficients``)."""
        est, se = self._estimated_thresholds
        idx = self._full_index
        se_full = np.where(idx < 0, np.nan, se[np.maximum(idx, 0)])
        values = self.threshold_values
        with np.errstate(invalid="ignore", divide="ignore"):
            z = values / se_full
        return pd.DataFrame({"estimate": values, "se": se_full, "z": z},
                            index=pd.Index(self.threshold_names, name="threshold"))

    @property
    def alpha_table(self) -> pd.DataFrame:
        """Threshold parameters (``alpha``, nominal effects) with Wald standard errors."""
        se = np.sqrt(np.clip(np.diag(self.cov_alpha), 0.0, None))
        return pd.DataFrame({"estimate": self.alpha, "se": se, "z": self.alpha / se},
                            index=pd.Index(self.alpha_names, name="parameter"))

    # ------------------------------------------------------------------ random effects
    #: variances with delta-method standard errors from ``cov_params`` (NaN on the boundary), as for a GLMM
    varcorr_se = GlmerResult.varcorr_se

    # ------------------------------------------------------------------ random threshold spreads
    @property
    def spread_contrast(self) -> pd.Series | None:
        """``d_j`` of every threshold of the scale, the pattern along which a level's spread moves its thresholds
        (``-1`` at the first estimated threshold, ``+1`` at the last, equally spaced; 0 at the infinite threshold
        of an empty end category); None without random threshold spreads."""
        if self.spread is None:
            return None
        idx = self._full_index
        d = np.asarray(self.problem.contrast, dtype=float)
        return pd.Series(np.where(idx >= 0, d[np.maximum(idx, 0)], 0.0), index=list(self.threshold_names), name="d")

    def _location_effects(self) -> list[tuple[Any, np.ndarray]]:
        """``(term, b)`` of every term of the linear predictor (levels x coefficients): a spread term contributes its
        shift only (its spread moves the thresholds, :meth:`_row_thresholds`)."""
        if self.spread is None:
            return super()._location_effects()
        k = self.problem.rater
        return [(t, np.asarray(b).reshape(t.n_levels, -1)[:, :1] if i == k else np.asarray(b).reshape(t.n_levels, -1))
                for i, (t, b) in enumerate(zip(self.problem.base.re.terms, self.random_effects))]

    def _spread_codes(self, newdata: pd.DataFrame | None, allow_new_levels: bool) -> np.ndarray | None:
        """The spread factor's level of every row (-1 for a new level); None without spreads."""
        if self.spread is None:
            return None
        if newdata is None:
            return self.problem.re.terms[self.problem.rater].codes
        from ._design import new_level_codes

        return new_level_codes(self.design.groups[self.problem.rater], newdata, allow_new_levels=allow_new_levels)

    def _row_thresholds(self, codes: np.ndarray | None) -> np.ndarray:
        """The thresholds of the whole scale, one row per row of ``codes`` (``theta_j + s_r d_j`` with ``s_r`` the
        conditional mode of level ``r``'s spread, 0 for a new level ``-1``); the common thresholds for None."""
        thr = self.threshold_values
        if codes is None:
            return thr
        s = np.asarray(self.random_effects[self.problem.rater]).reshape(-1, 2)[:, 1]
        s_row = np.where(codes >= 0, s[np.maximum(codes, 0)], 0.0)
        return thr[None, :] + s_row[:, None] * self.spread_contrast.to_numpy()[None, :]

    # ------------------------------------------------------------------ predictions
    def _linear_predictor(self, re: bool) -> np.ndarray:
        eta = self._fixed_predictor()
        if re and self.problem.re.q:
            for t, b in self._location_effects():
                eta = eta + np.sum(t.X[:, :b.shape[1]] * b[t.codes], axis=1)
        return eta

    def _fixed_predictor_new(self, newdata: pd.DataFrame) -> np.ndarray:
        """``X_new beta`` without the intercept column (the thresholds carry it), plus the new rows' offset."""
        from ._design import new_model_matrix, new_offset

        X = new_model_matrix(self.design.fixed_spec, newdata, what="the fixed effects")
        X = X[:, [i for i, nm in enumerate(self.design.fixed_names) if nm != "(Intercept)"]]
        eta = X @ self.coef if self.coef.size else np.zeros(len(newdata))
        offset = new_offset(self.design.fixed_spec, newdata)
        return eta if offset is None else eta + offset

    def predict(self, newdata: pd.DataFrame | None = None, *, type: str = "prob", re: bool | None = None,
                allow_new_levels: bool = False):
        """Predictions: ``"prob"`` (a DataFrame of category probabilities), ``"cum.prob"`` (``P(Y <= j)``),
        ``"exc.prob"`` (``P(Y >= j)``), ``"mean"`` (expected rating, categories scored by their values or
        1..J), ``"class"`` (most probable category) or ``"latent"`` (``x' beta + z' b``).

        With random threshold spreads (:attr:`spread`) each row's probabilities use its level's thresholds
        ``theta_j + s_r d_j`` when the random effects are included (the average rater's with ``re=False`` or for a
        new level); ``"latent"`` is the location ``x' beta + z' b`` (shifts included, spreads not).

        ``"response"`` is ``"prob"`` and ``"link"`` is ``"latent"`` (the names of the other families). With
        ``re=True`` (the default) the conditional modes are included; a grouping level of ``newdata`` the fit never
        saw is an error unless ``allow_new_levels=True`` (then its random effect is 0), as :meth:`MixedResult.predict`.
        """
        kinds = ("prob", "cum.prob", "exc.prob", "mean", "class", "latent")
        type = {"response": "prob", "link": "latent"}.get(type, type)
        if type not in kinds:
            raise InputError(f"`type` must be one of {list(kinds)} (or 'response', 'link'); got {type!r}.")
        re = True if re is None else bool(re)
        eta = self._link_predictor(newdata, re, allow_new_levels)
        if type == "latent":
            return eta
        thresholds = self._row_thresholds(self._spread_codes(newdata, allow_new_levels) if re else None)
        probs = category_probabilities(self.family, thresholds, eta)
        cols = list(self.levels)
        if type == "prob":
            return pd.DataFrame(probs, columns=cols)
        if type == "cum.prob":
            return pd.DataFrame(np.cumsum(probs, axis=1), columns=cols)
        if type == "exc.prob":
            return pd.DataFrame(np.cumsum(probs[:, ::-1], axis=1)[:, ::-1], columns=cols)
        if type == "mean":
            return probs @ self.scores
        return np.asarray(self.levels, dtype=object)[np.argmax(probs, axis=1)]

    @property
    def scores(self) -> np.ndarray:
        """The value of each category for expected ratings: the category itself when numeric, else 1..J."""
        try:
            return np.asarray(self.levels, dtype=float)
        except (TypeError, ValueError):
            return np.arange(1, len(self.levels) + 1, dtype=float)

    # ------------------------------------------------------------------ refits and simulation
    def refit(self, *, REML: bool | None = False) -> ClmmResult:
        """This fit: ordinal fits are maximum-likelihood fits (``REML=False`` or None); ``REML=True`` is refused,
        as clmm has no restricted likelihood, and a value other than a bool or None is an error."""
        from .._validation import require_bool

        if REML is not None and require_bool(REML, "REML"):
            raise InputError("REML=True: cumulative link mixed models are fitted by maximum likelihood only "
                             "(ordinal::clmm has no restricted likelihood); use REML=False.")
        return self

    def _simulate_codes(self, nsim: int, rng: np.random.Generator) -> np.ndarray:
        """Category indices (into ``levels``) of ``nsim`` new response vectors (new random effects each)."""
        if self.alpha.size > self._n_base_alpha:
            raise InputError("simulate() is not available for models with nominal effects (row-specific thresholds).")
        eta0 = self._fixed_predictor()
        terms = self.problem.re.terms
        lams = theta_to_factors(terms, self.theta)
        spread = self.problem.rater if self.spread is not None else -1
        d = self.spread_contrast.to_numpy() if self.spread is not None else None
        out = np.empty((self.nobs, nsim), dtype=np.int64)
        thr = self.threshold_values
        for s in range(nsim):
            eta, row_thr = eta0.copy(), thr
            for i, (t, lam) in enumerate(zip(terms, lams)):
                b = rng.standard_normal((t.n_levels, t.n_coef)) @ lam.T
                if i == spread:  # the shift moves the location, the spread the level's thresholds
                    eta += b[t.codes, 0]
                    row_thr = thr[None, :] + b[t.codes, 1][:, None] * d[None, :]
                else:
                    eta += np.sum(t.X * b[t.codes], axis=1)
            out[:, s] = self.family.simulate(eta, 1.0, rng, row_thr)
        return out

    def _fixed_predictor(self) -> np.ndarray:
        """``x'beta`` of the rows plus their offset (the location part; the thresholds carry the intercept)."""
        eta = self.problem.X @ self.coef if self.coef.size else np.zeros(self.nobs)
        return eta if self.problem.offset is None else eta + self.problem.offset

    def _draw(self, nsim: int, rng: np.random.Generator) -> np.ndarray:
        """``nsim`` rating vectors (the scale's categories) with new random effects each: the base's
        :meth:`simulate`."""
        return np.asarray(self.levels)[self._simulate_codes(nsim, rng)]

    def refit_response(self, ratings: Any) -> ClmmResult:
        """The same model fitted to new ratings (one per row, in the scale's categories): the parametric bootstrap's refit."""
        lookup = {v: i for i, v in enumerate(self.levels)}
        try:
            codes = np.array([lookup[v] for v in np.asarray(ratings, dtype=object)], dtype=np.int64)
        except KeyError as exc:
            raise InputError(f"refit_response: {exc.args[0]!r} is not a category of the scale {list(self.levels)}.") from exc
        if codes.size != self.nobs:
            raise InputError(f"refit_response needs one rating per row ({self.nobs}); got {codes.size}.")
        return self.refitter(new_y=codes)

    # ------------------------------------------------------------------ printing
    def summary(self) -> str:
        """clmm-style text summary."""
        how = "the Laplace approximation" if self.nAGQ == 1 else f"adaptive Gauss-Hermite quadrature (nAGQ = {self.nAGQ})"
        out = [f"Cumulative Link Mixed Model fitted with {how}", "", f"formula: {self.formula}", "",
               " link  threshold nobs logLik AIC", f" {self.link:<5} {self.family.threshold:<9} {self.nobs} "
               f"{self.loglik:.2f} {self.aic:.2f}", "", "Random effects (latent scale; residual variance "
               f"{self.distribution_variance:.4g}):"]
        if self.group_names:
            vc = self.varcorr
            width = max(6, *(len(g) for g in vc.group))
            out.append(f" {'Groups':<{width}} {'Name':<12} {'Variance':>10} {'Std.Dev.':>10}")
            for r in vc.itertuples(index=False):
                out.append(f" {r.group:<{width}} {r.name:<12} {r.variance:>10.4g} {r.std:>10.4g}")
            for r in self.varcorr_frame().dropna(subset=["var2"]).itertuples(index=False):
                out.append(f" {r.grp:<{width}} correlation of {r.var1} and {r.var2}: {r.sdcor:.3f}")
            out.append("Number of groups:  " + "  ".join(f"{g} {n}" for g, n in self.ngrps.items()))
        if self.spread is not None:
            d = ", ".join(f"{v:+.3g}" for v in self.spread_contrast)
            out.append(f"Random thresholds: level r of {self.spread} has thresholds theta_j + spread_r d_j - "
                       f"(Intercept)_r, d = ({d})")
        out += ["", "Coefficients:"]
        if self.coef.size:
            out.append(self.coefficients.rename(columns={"estimate": "Estimate", "se": "Std. Error", "z": "z value",
                                                         "pvalue": "Pr(>|z|)"}).to_string(float_format=lambda v: f"{v:.4g}"))
        else:
            out.append("(none)")
        out += ["", "Threshold coefficients:"]
        out.append(self.alpha_table.rename(columns={"estimate": "Estimate", "se": "Std. Error", "z": "z value"})
                   .to_string(float_format=lambda v: f"{v:.4g}"))
        out += self._rank_note()
        if self.singular:
            out += ["", "boundary (singular) fit: a variance component is estimated as zero"]
        if not self.converged:
            out.append("warning: the optimiser did not converge")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        head = (f"<p><b>Cumulative link mixed model ({html.escape(self.link)}, {html.escape(self.family.threshold)} "
                f"thresholds)</b>: <code>{html.escape(self.formula)}</code><br>{self.nobs} ratings; logLik "
                f"{self.loglik:.4f}" + ("; <b>singular fit</b>" if self.singular else "")
                + (f"; random thresholds of <code>{html.escape(self.spread)}</code> (spread along d = "
                   + ", ".join(f"{v:+.3g}" for v in self.spread_contrast) + ")" if self.spread is not None else "")
                + "</p>")
        return (head + "<p>Random effects (latent scale)</p>" + self.varcorr.to_html(index=False)
                + "<p>Coefficients</p>" + self.coefficients.to_html(float_format=lambda v: f"{v:.6g}")
                + "<p>Thresholds</p>" + self.threshold_table.to_html(float_format=lambda v: f"{v:.6g}"))

    def _dict_extra(self) -> dict[str, Any]:
        """``mixeval fit --family ordinal --json``: the thresholds (named ``"1|2", ...``), the threshold parameters,
        the threshold structure, nAGQ and the latent residual variance beside the keys of every family."""
        return {"threshold": self.family.threshold, "nAGQ": self.nAGQ,
                "thresholds": dict(zip(self.threshold_names, map(float, self.threshold_values))),
                "alpha": dict(zip(self.alpha_names, map(float, self.alpha))),
                "latent_variance": self.distribution_variance, "random_thresholds": self.spread,
                "spread_contrast": None if self.spread is None else dict(zip(self.threshold_names,
                                                                             map(float, self.spread_contrast)))}


def make_clmm_result(design: Design, response: OrderedResponse, problem, kept: np.ndarray, x: np.ndarray,
                     deviance: float, u: np.ndarray, opt: OptimResult, cov_params, n_agq: int, nominal: str | None,
                     data: Any, refitter: Any, *, spread: str | None = None) -> ClmmResult:
    """Assemble the frozen result at the optimum (``u``: the conditional modes in the terms' order; ``problem`` a
    :class:`~._clmm.ClmmProblem`, or a :class:`~._clmm_thresholds.RandomThresholdProblem` with ``spread`` its
    factor)."""
    from ._ordinal import threshold_jacobian

    re = problem.re
    k, m = re.n_theta, problem.n_alpha
    theta, alpha, beta = x[:k], x[k:k + m], x[k + m:]
    b, start = [], 0
    for t, lam in zip(re.terms, theta_to_factors(re.terms, theta)):
        b.append(u[start:start + t.n_levels * t.n_coef].reshape(t.n_levels, t.n_coef) @ lam.T)
        start += t.n_levels * t.n_coef
    jac, _ = threshold_jacobian(problem.n_categories - 1, problem.family.threshold)
    singular = bool(np.any((re.lower == 0) & (np.asarray(theta) < SINGULAR_TOL)))
    return ClmmResult(
        formula=design.parsed.formula, family=problem.family, levels=tuple(response.levels), nAGQ=int(n_agq),
        nobs=problem.nobs, alpha_names=problem.alpha_names, alpha=np.array(alpha, dtype=float),
        fixed_names=tuple(nm for nm in design.fixed_names if nm != "(Intercept)"), coef=np.array(beta, dtype=float),
        cov_params=cov_params, group_names=tuple(t.group for t in re.terms),
        term_coef_names=tuple(t.coef_names for t in re.terms), n_levels=tuple(t.n_levels for t in re.terms),
        theta=np.array(theta, dtype=float), loglik=-0.5 * float(deviance), criterion=float(deviance),
        singular=singular, converged=bool(opt.converged), n_evaluations=int(opt.n_evaluations),
        u=np.array(u, dtype=float), random_effects=tuple(b), kept=np.asarray(kept), threshold_matrix=jac,
        y=np.asarray(response.codes), nominal=nominal, spread=spread, design=design, problem=problem, data=data, refitter=refitter,
    )
