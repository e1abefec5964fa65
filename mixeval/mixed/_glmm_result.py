"""The frozen result of a generalised linear mixed model fit (lme4's ``glmerMod``)."""

from __future__ import annotations

import functools
import html
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConvergenceWarning, InputError, SeparationWarning, SingularFitWarning, caller_stacklevel
from ._base import MixedResult
from ._blas import single_threaded_blas
from ._design import Design
from ._family import Family
from ._glmm import DIVERGED_LOGIT, GlmmFit, _hessian, check_separation, glmm_problem, optimize_glmm, reml_fit
from ._optimize import SINGULAR_TOL, OptimResult
from ._pirls import GlmmProblem, PirlsState, agq_deviance, joint_system, laplace_deviance, pirls, supports_gradient
from ._reterms import ReStructure, theta_to_factors

__all__ = ["GlmerResult", "SeparationWarning", "check_glmer_fit", "fit_glmm", "make_glmer_result"]


@dataclass(frozen=True, eq=False)
class GlmerResult(MixedResult):
    """A fitted generalised linear mixed model, all numbers unrounded.

    Attributes
    ----------
    formula : str
    family : Family
        The response distribution and link (``fit.family.name``: ``"binomial"``, ``"poisson"``,
        ``"negative_binomial"``, ``"beta"``, ``"ordered_beta"``, ``"beta_binomial"``; ``fit.link``).
    nAGQ : int
        1: Laplace; > 1: adaptive Gauss-Hermite quadrature; 0: beta from PIRLS.
    nobs : int
        Number of rows.
    fixed_names : tuple of str
    coef : ndarray
        Fixed effects (link scale).
    cov_coef : ndarray
        Their covariance (lme4's ``vcov``: from the Hessian of the deviance over theta and beta).
    group_names : tuple of str
        Grouping factor of every random-effects term, in lme4's order.
    term_coef_names : tuple of tuple of str
        Coefficient names of every term (``("(Intercept)",)``, ``("(Intercept)", "x")``).
    n_levels : tuple of int
    theta : ndarray
        Relative covariance parameters (lme4's ``getME(fit, "theta")``).
    loglik : float
        lme4's ``logLik``: ``-deviance / 2``.
    criterion : float
        ``-2 loglik`` (the ``deviance`` of lme4's summary table; also :attr:`deviance`).
    deviance_conditional : float
        Sum of the squared deviance residuals at the conditional modes (R's ``deviance(fit)`` for a GLMM; NaN for a
        family without deviance residuals, as glmmTMB's).
    family_par : ndarray
        The family's parameters on the optimiser's scale (:attr:`family_parameters`, :attr:`dispersion`).
    separation : tuple of str
        Fixed effects involved in complete or quasi-complete separation (empty when none).

    Examples
    --------
    >>> from mixeval.mixed import glmer
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=40, systems=("A", "B"), n_raters=2, response="correct")
    >>> fit = glmer("correct ~ system + (1|item)", df, family="binomial")
    >>> fit.family, fit.link, fit.nAGQ, fit.nobs
    (Family('binomial', link='logit'), 'logit', 1, 160)
    >>> fit.fixef.round(4).to_dict()  # log odds of A; log odds ratio of B vs A
    {'(Intercept)': -0.4261, 'systemB': 0.6371}
    >>> fit.varcorr[["group", "variance"]].round(4)  # latent (logit) scale
      group  variance
    0  item    0.2021
    """

    formula: str
    family: Family
    nAGQ: int
    nobs: int
    fixed_names: tuple[str, ...]
    coef: np.ndarray = field(repr=False)
    cov_coef: np.ndarray = field(repr=False)
    cov_coef_rx: np.ndarray = field(repr=False)
    group_names: tuple[str, ...]
    term_coef_names: tuple[tuple[str, ...], ...]
    n_levels: tuple[int, ...]
    theta: np.ndarray = field(repr=False)
    loglik: float
    criterion: float
    deviance_conditional: float
    singular: bool
    converged: bool
    separation: tuple[str, ...]
    n_evaluations: int = field(repr=False)
    u: np.ndarray = field(repr=False)
    random_effects: tuple[np.ndarray, ...] = field(repr=False)
    fitted_link: np.ndarray = field(repr=False)
    fitted: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    weights: np.ndarray = field(repr=False)
    design: Design = field(repr=False, compare=False)
    problem: GlmmProblem = field(repr=False, compare=False)
    data: Any = field(default=None, repr=False, compare=False)
    reml: bool = field(default=False, repr=False)
    cov_params: np.ndarray | None = field(default=None, repr=False)
    """``2 H^{-1}``: asymptotic covariance of (theta, beta, psi) from the deviance's Hessian (None without it)."""
    family_par: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    """The family's parameters on the optimiser's scale (:attr:`family_parameters` reports them; empty for
    binomial and Poisson)."""

    @property
    def _family_par(self) -> np.ndarray:
        return self.family_par

    @property
    def family_parameters_se(self) -> dict[str, float]:
        """Asymptotic standard errors of the family's parameters on the optimiser's scale (a dispersion's logarithm,
        as glmmTMB's ``betadisp``; cutpoints as they are), from :attr:`cov_params`; NaN without it."""
        m = self.family.n_parameters
        if self.cov_params is None or not m:
            return {n: float("nan") for n in self.family.parameter_names}
        se = np.sqrt(np.maximum(np.diag(self.cov_params)[-m:], 0.0))
        return dict(zip(self.family.parameter_names, map(float, se)))

    @property
    def varcorr_se(self) -> pd.DataFrame:
        """:attr:`varcorr` with asymptotic standard errors of the variances (delta method on theta).

        From the inverse Hessian of the deviance over theta (and beta); NaN for components on the boundary
        (theta = 0, where the approximation does not hold) or without a usable Hessian.
        """
        table = self.varcorr
        table["se"] = np.nan
        if self.cov_params is None:
            return table
        k = self.theta.size
        cov_t = self.cov_params[:k, :k]
        terms = self.problem.re.terms

        def variances(theta: np.ndarray) -> np.ndarray:
            return np.concatenate([np.diag(lam @ lam.T) for lam in theta_to_factors(terms, theta)])

        jac = np.empty((len(table), k))
        for j in range(k):
            h = 1e-6 * max(abs(self.theta[j]), 1e-3)
            up, down = self.theta.copy(), self.theta.copy()
            up[j] += h
            down[j] -= h
            jac[:, j] = (variances(up) - variances(down)) / (2 * h)
        var = np.einsum("ij,jk,ik->i", jac, cov_t, jac)
        on_boundary = table.variance.to_numpy() < SINGULAR_TOL**2
        table["se"] = np.where((var >= 0) & ~on_boundary, np.sqrt(np.maximum(var, 0.0)), np.nan)
        return table

    @property
    def approximation(self) -> str:
        return {0: "nAGQ=0", 1: "Laplace"}.get(self.nAGQ, f"AGQ({self.nAGQ})")

    # ----------------------------------------------------------------- the criterion and its curvature
    @property
    def theta_lower(self) -> np.ndarray:
        """Lower bounds of :attr:`theta` (lme4's ``getME(fit, "lower")``: 0 for a relative standard deviation,
        ``-inf`` for an off-diagonal element of a covariance factor)."""
        return np.asarray(self.problem.re.lower, dtype=float).copy()

    def beta_covariance_at(self, theta: np.ndarray) -> np.ndarray:
        """The linearised model's covariance of the fixed effects at covariance parameters ``theta``.

        ``Phi(theta) = (X' (W^-1 + Z Lambda(theta) Lambda(theta)' Z')^-1 X)^-1``: the fixed-effects block of the
        inverse of the penalised system in ``(u, beta)`` with the working weights ``W`` held at the fit's
        conditional modes and family parameters (the observed information of a family with its own
        log-likelihood, as the fit's Laplace approximation; lme4's RX-based ``vcov`` at ``theta``). At the fit's
        ``theta`` it is :attr:`cov_coef_rx`; its slopes in ``theta`` give the GLMM's Satterthwaite df
        (:mod:`mixeval.significance`).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from mixeval.mixed import glmer
        >>> rng = np.random.default_rng(0)
        >>> d = pd.DataFrame({"item": np.repeat(np.arange(30), 4)})
        >>> d["correct"] = (rng.random(120) < 1 / (1 + np.exp(-rng.normal(size=30)[d.item]))).astype(int)
        >>> fit = glmer("correct ~ 1 + (1|item)", d)
        >>> bool(np.allclose(fit.beta_covariance_at(fit.theta), fit.cov_coef_rx))
        True
        """
        state = PirlsState(u=np.asarray(self.u), beta=np.asarray(self.coef), eta=np.asarray(self.fitted_link),
                           mu=np.asarray(self.family.linkinv(self.fitted_link), dtype=float), ldl2=float("nan"),
                           pwrss=float("nan"), iterations=0, converged=True, system=None,
                           psi=self.family_par if self.family_par.size else None)
        return joint_system(self.problem, np.asarray(theta, dtype=float), state).beta_covariance_unscaled()

    @functools.cached_property
    def _criterion_engine(self) -> GlmmFit:
        engine = GlmmFit(self.problem, 1 if self.reml else max(int(self.nAGQ), 1), free_parameters=True)
        engine.u = np.asarray(self.u, dtype=float).copy()
        engine.beta = np.asarray(self.coef, dtype=float).copy()
        return engine

    @property
    def criterion_point(self) -> np.ndarray:
        """The fit's point in the coordinates of :meth:`criterion_at`: ``(theta, beta, psi)`` of a maximum-likelihood
        fit, ``(theta, psi)`` of a restricted one (``psi``: :attr:`family_par`, empty for binomial and Poisson)."""
        parts = [self.theta] + ([] if self.reml else [self.coef]) + [self.family_par]
        return np.concatenate([np.asarray(v, dtype=float) for v in parts])

    def criterion_at(self, x: np.ndarray) -> float:
        """The fit's criterion at the point ``x`` (:attr:`criterion_point`'s coordinates): the Laplace (or adaptive
        Gauss-Hermite) deviance at ``(theta, beta, psi)`` of an ML fit, the restricted Laplace criterion at
        ``(theta, psi)`` of a REML fit (``beta`` integrated out); the conditional modes re-optimised by PIRLS, warm
        started at the last point's. ``inf`` where it is undefined. :meth:`criterion_at` of
        :attr:`criterion_point` is :attr:`criterion`.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from mixeval.mixed import glmer
        >>> rng = np.random.default_rng(0)
        >>> d = pd.DataFrame({"item": np.repeat(np.arange(30), 4)})
        >>> d["correct"] = (rng.random(120) < 1 / (1 + np.exp(-rng.normal(size=30)[d.item]))).astype(int)
        >>> fit = glmer("correct ~ 1 + (1|item)", d)
        >>> bool(np.isclose(fit.criterion_at(fit.criterion_point), fit.criterion))
        True
        """
        engine = self._criterion_engine
        x = np.asarray(x, dtype=float)
        try:
            return float(engine.stage1_reml(x) if self.reml else engine.stage2(x))
        except np.linalg.LinAlgError:
            return float("inf")

    def criterion_hessian(self, *, variance: np.ndarray | tuple = ()) -> np.ndarray:
        """Hessian of :meth:`criterion_at` at :attr:`criterion_point` by finite differences (lme4's ``deriv12``
        stencil, step ``1e-4``).

        ``variance``: indices of scalar ``theta`` entries at the boundary (0) differentiated in the variance
        ``v = theta^2`` instead, by forward differences (step ``1e-3``; the criterion is even in ``theta`` there,
        so its curvature in ``theta`` says nothing, while in ``v`` it is the information about a variance estimated
        at 0). ``2 H^-1`` is the asymptotic covariance of the parameters (:attr:`cov_params` for an ML fit).
        """
        bnd = np.asarray(variance, dtype=int)
        x0 = self.criterion_point
        if bnd.size and np.any(np.abs(x0[bnd]) > 1e-3):
            raise InputError("criterion_hessian(variance=...) takes theta entries at the boundary (0).")
        forward = np.zeros(x0.size, dtype=bool)
        forward[bnd] = True
        z0 = x0.copy()
        z0[bnd] = 0.0

        def f(z: np.ndarray) -> float:
            x = z.copy()
            x[bnd] = np.sqrt(np.maximum(z[bnd], 0.0))
            return self.criterion_at(x)

        u0 = self._criterion_engine.u.copy()
        try:
            return _hessian(f, z0, np.where(forward, 1e-3, 1e-4), forward)
        finally:
            self._criterion_engine.u = u0

    @property
    def term_levels(self) -> tuple[tuple[str, ...], ...]:
        """Labels of the levels of every random term's group, in the order of ``group_names``."""
        return tuple(tuple(t.levels) for t in self.problem.re.terms)

    @property
    def model_terms(self):
        """The random-effects terms with their model matrices (:class:`~._reterms.ReTerm`)."""
        return self.problem.re.terms

    @functools.cached_property
    def model(self):
        """The evaluator of the fit (:class:`~._glmm_model.GlmmFitModel`: PIRLS with the Laplace or quadrature
        deviance), for profiles, the parametric bootstrap and simulation."""
        from ._glmm_model import GlmmFitModel

        return GlmmFitModel(self)

    @property
    def singular_groups(self) -> list[str]:
        out = []
        lower = self.problem.re.lower
        start = 0
        for g, t in zip(self.group_names, self.problem.re.terms):
            sl = slice(start, start + t.n_theta)
            if np.any((lower[sl] == 0) & (self.theta[sl] < SINGULAR_TOL)):
                out.append(g)
            start += t.n_theta
        return out

    @property
    def residuals(self) -> np.ndarray:
        """Response residuals ``y - mu``."""
        return self.y - self.fitted

    def refit(self, *, REML: bool) -> GlmerResult:
        """The same model fitted by maximum likelihood (``REML=False``, lme4's glmer) or by the restricted
        Laplace criterion (``REML=True``)."""
        from .._validation import require_bool

        REML = require_bool(REML, "REML")
        if REML == self.reml:
            return self
        return fit_glmm(self.design, self.family, self.weights, n_agq=1 if REML else max(self.nAGQ, 1),
                        re=self.problem.re, data=self.data, warn=False, reml=bool(REML))

    def refit_response(self, y: np.ndarray, *, reml: bool | None = None) -> GlmerResult:
        """The same model fitted to a new response ``y`` (same design and weights): bootstrap refits."""
        from dataclasses import replace

        reml = self.reml if reml is None else bool(reml)
        design = replace(self.design, y=np.asarray(y, dtype=float).copy())
        return fit_glmm(design, self.family, self.weights, n_agq=1 if reml else max(self.nAGQ, 1),
                        re=self.problem.re, data=None, warn=False, reml=reml)

    # ----------------------------------------------------------------- printing
    def summary(self) -> str:
        """lme4-style text summary."""
        kind = {0: "Adaptive Gauss-Hermite Quadrature (nAGQ = 0)", 1: "Laplace Approximation"}.get(
            self.nAGQ, f"Adaptive Gauss-Hermite Quadrature (nAGQ = {self.nAGQ})")
        if self.reml:
            out = ["Generalized linear mixed model fit by REML (restricted Laplace approximation)",
                   f" Family: {self.family.name}  ( {self.link} )", f"Formula: {self.formula}", "",
                   f"REML criterion at convergence: {self.criterion:.4f}", "", "Random effects (latent scale):"]
        else:
            out = [f"Generalized linear mixed model fit by maximum likelihood ({kind}) [glmerMod]",
                   f" Family: {self.family.name}  ( {self.link} )", f"Formula: {self.formula}", "",
                   "     AIC      BIC   logLik deviance df.resid",
                   f"{self.aic:>8.4f} {self.bic:>8.4f} {self.loglik:>8.4f} {self.deviance:>8.4f} {self.nobs - self.n_params:>8d}",
                   "", "Random effects (latent scale):"]
        vc = self.varcorr
        width = max(6, *(len(g) for g in vc.group)) if len(vc) else 6
        out.append(f" {'Groups':<{width}} {'Name':<12} {'Variance':>12} {'Std.Dev.':>11}")
        for r in vc.itertuples(index=False):
            out.append(f" {r.group:<{width}} {r.name:<12} {r.variance:>12.6g} {r.std:>11.6g}")
        for g, corr in self.correlations.items():
            if len(corr) < 2:
                continue
            out.append(f" correlations of {g}: " + ", ".join(
                f"{a}~{b} {corr.loc[a, b]:.4f}" for i, a in enumerate(corr.index) for b in corr.index[:i]))
        out.append(f"Number of obs: {self.nobs}, groups:  " + ";  ".join(f"{g}, {n}" for g, n in self.ngrps.items()))
        out += ["", "Fixed effects:"]
        out.append(self.coefficients.rename(columns={"estimate": "Estimate", "se": "Std. Error", "z": "z value",
                                                     "pvalue": "Pr(>|z|)"}).to_string(float_format=lambda v: f"{v:.6g}"))
        if self.family.n_parameters:
            se = self.family_parameters_se
            out += ["", f"Family parameters ({self.family.name}; dispersion as glmmTMB's sigma()):"]
            for (name, value), kind in zip(self.family_parameters.items(), self.family.parameter_kinds):
                what = "SE of log" if kind == "dispersion" else "SE"
                out.append(f" {name:<16} {value:>12.6g}   ({what} {se[name]:.4g})")
        if self.separation:
            out += ["", f"warning: complete or quasi-complete separation ({', '.join(self.separation)})"]
        out += self._rank_note()
        if self.singular:
            out += ["", "boundary (singular) fit: a variance component is estimated as zero"]
        if not self.converged:
            out.append("warning: the optimiser did not converge")
        return "\n".join(out)

    def _dict_extra(self) -> dict[str, Any]:
        return {"nAGQ": self.nAGQ, "separation": list(self.separation), "family_parameters": self.family_parameters}

    def _repr_html_(self) -> str:
        head = (f"<p><b>Generalized linear mixed model ({html.escape(self.family.name)}, {html.escape(self.link)}; "
                f"nAGQ = {self.nAGQ})</b>: <code>{html.escape(self.formula)}</code><br>{self.nobs} observations; "
                f"logLik {self.loglik:.4f}" + ("; <b>singular fit</b>" if self.singular else "")
                + ("; <b>separation</b>" if self.separation else "") + "</p>")
        vc = self.varcorr.to_html(index=False, float_format=lambda v: f"{v:.6g}")
        fx = self.coefficients.to_html(float_format=lambda v: f"{v:.6g}")
        fam = ""
        if self.family.n_parameters:
            rows = "".join(f"<tr><td>{html.escape(n)}</td><td>{v:.6g}</td></tr>" for n, v in self.family_parameters.items())
            fam = f"<p>Family parameters (dispersion as glmmTMB's sigma())</p><table>{rows}</table>"
        return head + "<p>Random effects (latent scale)</p>" + vc + "<p>Fixed effects</p>" + fx + fam

def make_glmer_result(design: Design, problem: GlmmProblem, theta: np.ndarray, beta: np.ndarray, state: PirlsState,
                      deviance: float, cov: np.ndarray, cov_rx: np.ndarray, opt: OptimResult, n_agq: int,
                      separation: list[str], data: Any, cov_params: np.ndarray | None = None, *,
                      reml: bool = False, family_par: np.ndarray | None = None) -> GlmerResult:
    """Assemble the frozen result at the optimum (lme4's ``mkMerMod``); the result's problem holds the family's
    parameters ``family_par`` (evaluations of the fit that do not estimate them use these)."""
    re = problem.re
    lams = theta_to_factors(re.terms, theta)
    b, start = [], 0
    for t, lam in zip(re.terms, lams):
        uk = state.u[start:start + t.n_levels * t.n_coef].reshape(t.n_levels, t.n_coef)
        b.append(uk @ lam.T)
        start += t.n_levels * t.n_coef
    lower = re.lower
    singular = bool(np.any((lower == 0) & (np.asarray(theta) < SINGULAR_TOL)))
    fam = problem.family
    psi = np.zeros(0) if family_par is None else np.asarray(family_par, dtype=float).copy()
    if psi.size:
        problem = replace(problem, family_par=psi)
    conditional = (float(np.sum(fam.dev_resid(problem.y, state.mu, problem.weights))) if fam.exponential
                   else float("nan"))
    return GlmerResult(
        formula=design.parsed.formula, family=fam, nAGQ=int(n_agq), nobs=problem.nobs,
        fixed_names=design.fixed_names, coef=np.asarray(beta, dtype=float).copy(), cov_coef=cov, cov_coef_rx=cov_rx,
        group_names=tuple(t.group for t in re.terms), term_coef_names=tuple(t.coef_names for t in re.terms),
        n_levels=tuple(t.n_levels for t in re.terms), theta=np.asarray(theta, dtype=float).copy(),
        loglik=-0.5 * deviance, criterion=float(deviance),
        deviance_conditional=conditional,
        singular=singular, converged=bool(opt.converged), separation=tuple(separation),
        n_evaluations=opt.n_evaluations, u=state.u.copy(), random_effects=tuple(b),
        fitted_link=state.eta.copy(), fitted=np.asarray(fam.mean(state.eta, psi), dtype=float) if psi.size else
        state.mu.copy(), y=problem.y, weights=problem.weights, design=design, problem=problem, data=data,
        cov_params=cov_params, reml=bool(reml), family_par=psi,
    )


def fit_glmm(design: Design, family: Family, weights: np.ndarray, *, n_agq: int = 1, re: ReStructure | None = None,
             data: Any = None, warn: bool = True, reml: bool = False, covariance: str = "hessian") -> GlmerResult:
    """Fit a GLMM from a validated design (optionally with a hand-built random-effects structure).

    ``covariance`` of the fixed effects: ``"hessian"`` (lme4's default: the inverse Hessian of the deviance in
    ``(theta, beta)`` at the optimum, ``2 (k + p)`` PIRLS runs) or ``"rx"`` (lme4's ``calc.derivs = FALSE``:
    ``(R_X' R_X)^{-1}`` from the penalised system at the optimum, one factorisation; it ignores the
    uncertainty of ``theta`` and the curvature of ``log|L|^2``, a difference of order ``1 / n``).

    Examples
    --------
    The stages of :func:`~mixeval.mixed.glmer`, called one by one:

    >>> import numpy as np
    >>> from mixeval.datasets import toy_scores
    >>> from mixeval.mixed import build_design, get_family, glmer
    >>> df = toy_scores(response="correct")
    >>> fit = fit_glmm(build_design("correct ~ system + (1|item)", df), get_family("binomial"), np.ones(len(df)))
    >>> round(fit.loglik, 6) == round(glmer("correct ~ system + (1|item)", df, family="binomial").loglik, 6)
    True
    """
    if covariance not in ("hessian", "rx"):
        raise InputError(f"covariance={covariance!r}: choose 'hessian' or 'rx'.")
    problem = glmm_problem(design, family, weights, re)
    if n_agq > 1 and not (len(problem.re.terms) == 1 and problem.re.terms[0].n_coef == 1):
        raise InputError(
            f"nAGQ={n_agq} (adaptive Gauss-Hermite quadrature) needs a single scalar random-effects term such "
            "as (1|item); use nAGQ=1 (Laplace) for crossed, nested or vector-valued random effects."
        )
    if reml and n_agq != 1:
        raise InputError(f"REML=True integrates the fixed effects with the random effects by the Laplace "
                         f"approximation; it takes nAGQ=1 (got nAGQ={n_agq}).")
    if n_agq > 1 and not family.support.quadrature:
        raise InputError(f"nAGQ={n_agq}: adaptive Gauss-Hermite quadrature is not available for family="
                         f"{family.name!r} (glmmTMB fits it by the Laplace approximation too); use nAGQ=1.")
    separated = check_separation(problem, design.fixed_names)
    check_diverged = problem.family.name == "binomial" and not separated and problem.p > 0
    with single_threaded_blas():
        fit = GlmmFit(problem, n_agq, free_parameters=True)
        if reml:
            theta, beta, opt, state, dev, cov, cov_params = reml_fit(fit)
            unsc = cov
        else:
            theta, beta, opt = optimize_glmm(fit)
            x = np.concatenate([theta, beta, fit.psi])
            state = pirls(problem, theta, beta, fit.u, joint=False, psi=fit.psi if fit.n_psi else None)
            dev = agq_deviance(problem, state, theta, n_agq) if n_agq > 1 else laplace_deviance(problem, state)
            unsc = joint_system(problem, theta, state).beta_covariance_unscaled() if problem.p else np.zeros((0, 0))
            cov, cov_params = unsc, None
            if n_agq >= 1 and problem.p and covariance == "hessian":
                try:
                    analytic = n_agq == 1 and supports_gradient(problem)
                    h = fit.stage2_hessian(x) if analytic else _hessian(fit.stage2, x)
                    full = 2 * np.linalg.inv(h)
                    full = 0.5 * (full + full.T)
                    cand = full[fit.n_theta:fit.n_theta + problem.p, fit.n_theta:fit.n_theta + problem.p]
                    if np.all(np.isfinite(cand)) and np.min(np.linalg.eigvalsh(cand)) > 0:
                        cov, cov_params = cand, full
                except np.linalg.LinAlgError:
                    pass
    if check_diverged:
        # estimates that ran off (|beta| > 15 on the link scale: odds ratios beyond 3e6) signal separation
        # where the LP was not run or did not see it
        separated = [n for n, b in zip(design.fixed_names, beta) if abs(b) > DIVERGED_LOGIT and n != "(Intercept)"]
    result = make_glmer_result(design, problem, theta, beta, state, dev, cov, unsc, opt, n_agq, separated, data,
                               cov_params, reml=reml, family_par=fit.psi if fit.n_psi else None)
    if warn:
        check_glmer_fit(result)
    return result


def check_glmer_fit(result: GlmerResult) -> None:
    """Warn on separation, singular (boundary) fits and non-convergence."""
    if result.separation:
        warnings.warn(
            f"complete or quasi-complete separation: the response is perfectly predicted by the fixed effect(s) "
            f"{', '.join(result.separation)} on some rows (e.g. a system with every answer correct or every answer "
            "wrong), so their maximum-likelihood estimates are infinite and the reported values, standard errors "
            "and Wald tests are meaningless. Merge or drop the affected levels, or compare them by a test that "
            "does not rely on the estimate (the likelihood-ratio test of mixeval.compare remains usable).",
            SeparationWarning,
            stacklevel=caller_stacklevel(),
        )
    if result.singular:
        warnings.warn(
            f"boundary (singular) fit: a variance of {', '.join(repr(g) for g in result.singular_groups)} is "
            "estimated as (numerically) zero. This is a valid estimate, not a failure.",
            SingularFitWarning,
            stacklevel=caller_stacklevel(),
        )
    if not result.converged:
        warnings.warn(
            "the optimiser did not meet its convergence criterion; treat the estimates with care.",
            ConvergenceWarning,
            stacklevel=caller_stacklevel(),
        )
