"""The frozen result of a generalised linear mixed model fit (lme4's ``glmerMod``)."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from .._results import Result, to_plain
from ..errors import InputError, SeparationWarning
from ._design import Design
from ._fixef import FixedEffectTables
from ._family import DISTRIBUTION_VARIANCE, Family
from ._optimize import SINGULAR_TOL, OptimResult
from ._pirls import GlmmProblem, PirlsState
from ._reterms import theta_to_factors

__all__ = ["GlmerResult", "SeparationWarning", "make_glmer_result"]


@dataclass(frozen=True, eq=False)
class GlmerResult(FixedEffectTables, Result):
    """A fitted generalised linear mixed model, all numbers unrounded.

    Attributes
    ----------
    formula : str
    family, link : str
        ``"binomial"`` / ``"poisson"`` and ``"logit"`` / ``"probit"`` / ``"log"``.
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
    deviance : float
        ``-2 loglik`` (the ``deviance`` of lme4's summary table).
    deviance_conditional : float
        Sum of the squared deviance residuals at the conditional modes (R's ``deviance(fit)`` for a GLMM).
    separation : tuple of str
        Fixed effects involved in complete or quasi-complete separation (empty when none).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import glmer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(40), 4), "system": np.tile(["A", "B"], 80)})
    >>> eta = rng.normal(size=40)[df.item] + 0.5 * (df.system == "B")
    >>> df["correct"] = (rng.random(160) < 1 / (1 + np.exp(-eta))).astype(int)
    >>> fit = glmer("correct ~ system + (1|item)", df, family="binomial")
    >>> fit.family, fit.link, fit.nAGQ, fit.nobs
    ('binomial', 'logit', 1, 160)
    >>> fit.fixef.round(4).to_dict()  # log odds of A; log odds ratio of B vs A
    {'(Intercept)': -0.465, 'systemB': 0.6176}
    >>> fit.varcorr[["group", "variance"]].round(4)  # latent (logit) scale
      group  variance
    0  item    0.0626
    """

    formula: str
    family: str
    link: str
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
    deviance: float
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
    refitter: Any = field(default=None, repr=False, compare=False)
    """``reml -> GlmerResult``: the same model fitted again (set by the fitting function)."""
    cov_params: np.ndarray | None = field(default=None, repr=False)
    """``2 H^{-1}``: asymptotic covariance of (theta, beta) from the deviance's Hessian (None without it)."""

    # ----------------------------------------------------------------- family
    @property
    def family_object(self) -> Family:
        return self.problem.family

    @property
    def distribution_variance(self) -> float:
        """Variance of the latent residual: pi^2/3 (logit), 1 (probit) (Nakagawa & Schielzeth 2010).

        For a Poisson model with log link there is no constant latent residual variance; NaN.
        """
        return DISTRIBUTION_VARIANCE.get(self.link, float("nan"))

    # ----------------------------------------------------------------- tables
    @property
    def coefficients(self) -> pd.DataFrame:
        """Fixed effects with Wald z tests (lme4's summary table): estimate, se, z, pvalue."""
        se = np.sqrt(np.diag(self.cov_coef))
        z = self.coef / se
        return pd.DataFrame({"estimate": self.coef, "se": se, "z": z, "pvalue": 2 * sps.norm.sf(np.abs(z))},
                            index=pd.Index(self.fixed_names, name="term"))

    def covariances(self) -> list[np.ndarray]:
        """Covariance matrix of one level's random effects, per term (latent scale)."""
        return [lam @ lam.T for lam in theta_to_factors(self.problem.re.terms, self.theta)]

    @property
    def varcorr(self) -> pd.DataFrame:
        """Variance components on the latent (link) scale: group, name, variance, std (no residual row)."""
        rows = []
        for g, names, cov in zip(self.group_names, self.term_coef_names, self.covariances()):
            for j, nm in enumerate(names):
                rows.append({"group": g, "name": nm, "variance": float(cov[j, j]), "std": float(np.sqrt(cov[j, j]))})
        return pd.DataFrame(rows, columns=["group", "name", "variance", "std"])

    @property
    def correlations(self) -> dict[str, pd.DataFrame]:
        """Correlation matrices of the vector-valued terms."""
        out = {}
        for g, names, cov in zip(self.group_names, self.term_coef_names, self.covariances()):
            if len(names) > 1:
                sd = np.sqrt(np.diag(cov))
                with np.errstate(invalid="ignore", divide="ignore"):
                    corr = cov / np.outer(sd, sd)
                out[g] = pd.DataFrame(corr, index=list(names), columns=list(names))
        return out

    @property
    def variances(self) -> dict[str, float]:
        """Variance of every scalar random-effects term (``group`` or ``group.coef`` for vector terms)."""
        vc = self.varcorr
        out = {}
        for g, nm, v in zip(vc.group, vc.name, vc.variance):
            key = g if sum(1 for gg in vc.group if gg == g) == 1 and nm == "(Intercept)" else f"{g}.{nm}"
            out[key] = float(v)
        return out

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
    def ranef(self) -> dict[str, pd.DataFrame | pd.Series]:
        """Conditional modes of the random effects per group (a Series for intercepts, else a DataFrame)."""
        out = {}
        for t, b in zip(self.problem.re.terms, self.random_effects):
            idx = pd.Index(t.levels, name=t.group)
            if t.n_coef == 1:
                out[t.group] = pd.Series(b[:, 0], index=idx, name=t.coef_names[0])
            else:
                out[t.group] = pd.DataFrame(b, index=idx, columns=list(t.coef_names))
        return out

    @property
    def residuals(self) -> np.ndarray:
        """Response residuals ``y - mu``."""
        return self.y - self.fitted

    @property
    def ngrps(self) -> dict[str, int]:
        return dict(zip(self.group_names, self.n_levels))

    @property
    def n_params(self) -> int:
        """Fixed effects plus covariance parameters (no dispersion for binomial and Poisson)."""
        return len(self.fixed_names) + int(self.theta.size)

    @property
    def aic(self) -> float:
        return -2.0 * self.loglik + 2.0 * self.n_params

    @property
    def bic(self) -> float:
        return -2.0 * self.loglik + np.log(self.nobs) * self.n_params

    def refit(self, REML: bool = False) -> "GlmerResult":
        """The same model fitted by maximum likelihood (``REML=False``, lme4's glmer) or by the restricted
        Laplace criterion (``REML=True``); used by :func:`~mixeval.compare` to test REML fits."""
        if bool(REML) == self.reml:
            return self
        if self.refitter is None:
            raise InputError("this GlmerResult was not made by mixeval.glmer and cannot be refitted.")
        return self.refitter(bool(REML))

    def predict(self, newdata: pd.DataFrame | None = None, *, type: str = "link", re: bool = True) -> np.ndarray:
        """Predictions on the link or response scale; for ``newdata``, fixed effects only (``re.form = NA``)."""
        if type not in ("link", "response"):
            raise InputError(f"`type` must be 'link' or 'response'; got {type!r}.")
        if newdata is None:
            eta = self.fitted_link if re else self.design.X @ self.coef
        else:
            from formulaic import model_matrix

            X = np.asarray(model_matrix(self.design.fixed_spec, newdata), dtype=float)
            eta = X @ self.coef
        if type == "link":
            return np.asarray(eta, dtype=float)
        return self.family_object.linkinv(np.asarray(eta, dtype=float))

    # ----------------------------------------------------------------- printing
    def summary(self) -> str:
        """lme4-style text summary."""
        kind = {0: "Adaptive Gauss-Hermite Quadrature (nAGQ = 0)", 1: "Laplace Approximation"}.get(
            self.nAGQ, f"Adaptive Gauss-Hermite Quadrature (nAGQ = {self.nAGQ})")
        if self.reml:
            out = ["Generalized linear mixed model fit by REML (restricted Laplace approximation)",
                   f" Family: {self.family}  ( {self.link} )", f"Formula: {self.formula}", "",
                   f"REML criterion at convergence: {self.deviance:.4f}", "", "Random effects (latent scale):"]
        else:
            out = [f"Generalized linear mixed model fit by maximum likelihood ({kind}) [glmerMod]",
                   f" Family: {self.family}  ( {self.link} )", f"Formula: {self.formula}", "",
                   "     AIC      BIC   logLik deviance df.resid",
                   f"{self.aic:>8.4f} {self.bic:>8.4f} {self.loglik:>8.4f} {self.deviance:>8.4f} {self.nobs - self.n_params:>8d}",
                   "", "Random effects (latent scale):"]
        vc = self.varcorr
        width = max(6, *(len(g) for g in vc.group)) if len(vc) else 6
        out.append(f" {'Groups':<{width}} {'Name':<12} {'Variance':>12} {'Std.Dev.':>11}")
        for r in vc.itertuples(index=False):
            out.append(f" {r.group:<{width}} {r.name:<12} {r.variance:>12.6g} {r.std:>11.6g}")
        for g, corr in self.correlations.items():
            out.append(f" correlations of {g}: " + ", ".join(
                f"{a}~{b} {corr.loc[a, b]:.4f}" for i, a in enumerate(corr.index) for b in corr.index[:i]))
        out.append(f"Number of obs: {self.nobs}, groups:  " + ";  ".join(f"{g}, {n}" for g, n in self.ngrps.items()))
        out += ["", "Fixed effects:"]
        out.append(self.coefficients.rename(columns={"estimate": "Estimate", "se": "Std. Error", "z": "z value",
                                                     "pvalue": "Pr(>|z|)"}).to_string(float_format=lambda v: f"{v:.6g}"))
        if self.separation:
            out += ["", f"warning: complete or quasi-complete separation ({', '.join(self.separation)})"]
        if self.singular:
            out += ["", "boundary (singular) fit: a variance component is estimated as zero"]
        if not self.converged:
            out.append("warning: the optimiser did not converge")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        head = (f"<p><b>Generalized linear mixed model ({html.escape(self.family)}, {html.escape(self.link)}; "
                f"nAGQ = {self.nAGQ})</b>: <code>{html.escape(self.formula)}</code><br>{self.nobs} observations; "
                f"logLik {self.loglik:.4f}" + ("; <b>singular fit</b>" if self.singular else "")
                + ("; <b>separation</b>" if self.separation else "") + "</p>")
        vc = self.varcorr.to_html(index=False, float_format=lambda v: f"{v:.6g}")
        fx = self.coefficients.to_html(float_format=lambda v: f"{v:.6g}")
        return head + "<p>Random effects (latent scale)</p>" + vc + "<p>Fixed effects</p>" + fx

    def to_dict(self) -> dict[str, Any]:
        """The JSON object that ``mixeval fit --family FAMILY --json`` prints (plain, JSON-safe Python; numbers unrounded)."""
        return to_plain({
            "nobs": self.nobs,
            "family": self.family,
            "link": self.link,
            "nAGQ": self.nAGQ,
            "reml": self.reml,
            "loglik": self.loglik,
            "deviance": self.deviance,
            "criterion": self.deviance,
            "aic": self.aic,
            "bic": self.bic,
            "varcorr": self.variances,
            "fixef": {k: float(v) for k, v in zip(self.fixed_names, self.coef)},
            "se": {k: float(v) for k, v in zip(self.fixed_names, np.sqrt(np.diag(self.cov_coef)))},
            "singular": self.singular,
            "converged": self.converged,
            "separation": list(self.separation),
        })


def make_glmer_result(design: Design, problem: GlmmProblem, theta: np.ndarray, beta: np.ndarray, state: PirlsState,
                      deviance: float, cov: np.ndarray, cov_rx: np.ndarray, opt: OptimResult, n_agq: int,
                      separation: list[str], data: Any, cov_params: np.ndarray | None = None, *,
                      reml: bool = False, refitter: Any = None) -> GlmerResult:
    """Assemble the frozen result at the optimum (lme4's ``mkMerMod``)."""
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
    return GlmerResult(
        formula=design.parsed.formula, family=fam.name, link=fam.link, nAGQ=int(n_agq), nobs=problem.nobs,
        fixed_names=design.fixed_names, coef=np.asarray(beta, dtype=float).copy(), cov_coef=cov, cov_coef_rx=cov_rx,
        group_names=tuple(t.group for t in re.terms), term_coef_names=tuple(t.coef_names for t in re.terms),
        n_levels=tuple(t.n_levels for t in re.terms), theta=np.asarray(theta, dtype=float).copy(),
        loglik=-0.5 * deviance, deviance=float(deviance),
        deviance_conditional=float(np.sum(fam.dev_resid(problem.y, state.mu, problem.weights))),
        singular=singular, converged=bool(opt.converged), separation=tuple(separation),
        n_evaluations=opt.n_evaluations, u=state.u.copy(), random_effects=tuple(b),
        fitted_link=state.eta.copy(), fitted=state.mu.copy(), y=problem.y, weights=problem.weights,
        design=design, problem=problem, data=data, cov_params=cov_params, reml=bool(reml), refitter=refitter,
    )
