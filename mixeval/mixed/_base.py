"""The one result type of every fitted mixed model (lme4's ``merMod``).

:class:`MixedResult` holds what every family shares, written once: the fixed-effect tables, the
variance components in lme4's ``as.data.frame(VarCorr)`` layout, the information criteria, predictions,
simulation, confidence intervals and the parametric bootstrap through the model's evaluator
(``fit.model``, the :class:`~._protocol.FitModel` chosen when the fit was made), pickling and equality.
What differs between families is on the :class:`~._family.Family` object (link, inverse link, latent
residual variance, how a response is drawn), not in an ``if``. The subclasses (:class:`~._result.LmerResult`,
:class:`~._glmm_result.GlmerResult`, and the ordinal fit) only add how they were fitted and printed.

A subclass is a frozen dataclass with at least the fields ``formula``, ``family``, ``reml``, ``nobs``,
``fixed_names``, ``coef``, ``cov_coef``, ``group_names``, ``n_levels``, ``theta``, ``loglik``, ``criterion``,
``singular``, ``converged``, ``random_effects``, ``design``, and the members ``term_coef_names``,
``term_levels``, ``scale2`` (the residual variance of a Gaussian fit, 1 otherwise), ``model`` and
``refit``.
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from .._results import Result, to_plain
from .._validation import require_positive_int
from ..errors import InputError
from ._general import _Dim
from ._reterms import theta_to_factors

if TYPE_CHECKING:
    from ._design import Design
    from ._family import Family
    from ._protocol import FitModel

__all__ = ["MixedResult"]


class MixedResult(Result):
    """Base of every fitted mixed model: the same members with the same signatures for every family.

    Every result has these members:

    - ``fixef``, ``vcov``, ``coefficients``: the fixed effects (link scale), their covariance and the Wald table
    - ``varcorr_frame()``, ``varcorr``, ``components``, ``variances``, ``covariances``, ``correlations``,
      ``ranef``: the random effects
    - ``loglik``, ``deviance``, ``criterion``, ``aic``, ``bic``, ``n_params``, ``ngrps``, ``nobs``: the fit
    - ``predict(newdata=None, *, type="response", re=None)``, ``simulate(nsim=1, *, random_state=None)``
    - ``refit(*, REML)``, ``confint(*, method="profile", level=0.95, ...)``,
      ``bootstrap(statistic, *, n_resamples, ...)``
    - ``summary()``, ``_repr_html_()``, ``to_dict()``

    Notes
    -----
    The random effects of term ``k`` are ``b_k ~ N(0, s^2 Lambda_k Lambda_k')`` with ``s^2`` the residual
    variance of a Gaussian fit and 1 for the other families (:attr:`scale2`), so the components are
    ``s^2 Lambda_k Lambda_k'`` for every family. A pickled result unpickles equal to itself (``==`` compares the
    numbers); the evaluator ``model`` and other cached members are rebuilt on demand.

    Examples
    --------
    >>> import pickle
    >>> import numpy as np, pandas as pd
    >>> from mixeval import glmer, lmer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(40), 4), "system": np.tile(["A", "B"], 80)})
    >>> eta = rng.normal(size=40)[df.item] + 0.5 * (df.system == "B")
    >>> df["correct"] = (rng.random(160) < 1 / (1 + np.exp(-eta))).astype(int)
    >>> df["score"] = eta + rng.normal(size=160)
    >>> fits = [lmer("score ~ system + (1|item)", df), glmer("correct ~ system + (1|item)", df, family="binomial")]
    >>> [(str(f.family), isinstance(f, MixedResult), pickle.loads(pickle.dumps(f)) == f) for f in fits]
    [('gaussian', True, True), ('binomial', True, True)]
    """

    if TYPE_CHECKING:
        # The members every subclass defines (fields or properties; see the module docstring), declared for the
        # type checker only: a dataclass subclass must not inherit them as fields.
        @property
        def formula(self) -> str: ...
        @property
        def family(self) -> Family: ...
        @property
        def reml(self) -> bool: ...
        @property
        def nobs(self) -> int: ...
        @property
        def fixed_names(self) -> tuple[str, ...]: ...
        @property
        def coef(self) -> np.ndarray: ...
        @property
        def cov_coef(self) -> np.ndarray: ...
        @property
        def group_names(self) -> tuple[str, ...]: ...
        @property
        def n_levels(self) -> tuple[int, ...]: ...
        @property
        def theta(self) -> np.ndarray: ...
        @property
        def loglik(self) -> float: ...
        @property
        def criterion(self) -> float: ...
        @property
        def singular(self) -> bool: ...
        @property
        def converged(self) -> bool: ...
        @property
        def random_effects(self) -> tuple[np.ndarray, ...]: ...
        @property
        def design(self) -> Design: ...
        @property
        def data(self) -> Any: ...
        @property
        def term_coef_names(self) -> tuple[tuple[str, ...], ...]: ...
        @property
        def term_levels(self) -> tuple[tuple[str, ...], ...]: ...
        @property
        def model_terms(self) -> Any: ...
        @property
        def model(self) -> FitModel: ...
        def refit(self, *, REML: bool) -> MixedResult: ...

    # ----------------------------------------------------------------- pickling
    def __getstate__(self) -> dict[str, Any]:
        """The fields only: cached members (the evaluator, covariance tables) are rebuilt after unpickling."""
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    def __setstate__(self, state: dict[str, Any]) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)

    # ----------------------------------------------------------------- family
    @property
    def link(self) -> str:
        """The link function's name (``"identity"`` for a linear mixed model)."""
        return self.family.link

    @property
    def approximation(self) -> str:
        """How the likelihood is evaluated: ``"exact"`` (Gaussian), ``"Laplace"``, ``"AGQ(n)"`` (adaptive
        Gauss-Hermite quadrature with n nodes) or ``"nAGQ=0"``; fits compare by LRT only when they agree."""
        return "exact"

    @property
    def scale2(self) -> float:
        """The scale of the random effects: the residual variance of a Gaussian fit, 1 for the other families."""
        return 1.0

    @property
    def _family_par(self) -> np.ndarray:
        """The family's estimated parameters on the optimiser's scale (none for lmer, binomial, Poisson)."""
        return np.zeros(0)

    @property
    def family_parameters(self) -> dict[str, float]:
        """The family's estimated parameters beyond the mean by name, on their reported scale (empty for lmer,
        binomial, Poisson and ordinal fits; see :attr:`~.families.Family.parameter_names`)."""
        return self.family.parameter_values(self._family_par)

    def response_mean(self, eta: np.ndarray) -> np.ndarray:
        """``E[y | eta]`` at the fitted family parameters (:meth:`~.families.Family.mean`): the inverse link, or for
        an ordered beta model the mean with its exact 0s and 1s; what a response-scale mean integrates over the
        random effects."""
        return np.asarray(self.family.mean(eta, self._family_par), dtype=float)

    @property
    def dispersion(self) -> float:
        """The dispersion in glmmTMB's ``sigma()`` parameterisation: the residual SD of a Gaussian fit, the
        negative binomial's theta (``Var = mu + mu^2 / theta``), the beta families' precision phi, 1 where the
        family fixes it (binomial, Poisson, ordinal)."""
        if self.family.estimates_scale:
            return float(np.sqrt(self.scale2))
        return float(self.family.dispersion(self._family_par))

    @property
    def distribution_variance(self) -> float:
        """Variance of the latent residual on the link scale (pi^2/3 logit, 1 probit; the estimated residual
        variance of a Gaussian fit; NaN for Poisson), as used for variance shares and reliability."""
        return float(self.family.latent_variance)

    @property
    def latent_components(self) -> dict[str, float]:
        """``{group: variance}`` with ``"Residual"``: the components on the scale where they add up (the response
        scale of a Gaussian fit, the latent link scale of a GLMM with the family's latent residual variance,
        :meth:`~._family.Family.latent_residual_variance`); the input of :mod:`mixeval.reliability`."""
        comps = dict(self.variances)
        if "Residual" not in comps:
            comps["Residual"] = self.family.latent_residual_variance(self._fixed_predictor(), sum(comps.values()),
                                                                     self._family_par)
        return comps

    def _fixed_predictor(self) -> np.ndarray:
        """``X beta`` of the rows (zeros without rows or fixed effects): the fixed part of the linear predictor."""
        if self.design.X is None or not len(self.coef):
            return np.zeros(1)
        return self.design.X @ self.coef

    # ----------------------------------------------------------------- fixed effects
    @property
    def fixef(self) -> pd.Series:
        """Fixed-effect estimates indexed by coefficient name (on the link scale for a GLMM)."""
        return pd.Series(self.coef, index=list(self.fixed_names), name="estimate")

    @property
    def dropped_columns(self) -> tuple[str, ...]:
        """Columns of a rank-deficient fixed-effects matrix that the fit dropped (lme4's ``col.dropped``), in the
        matrix's order; empty when it has full rank. As in lme4, :attr:`fixef`, :attr:`vcov`, :attr:`coefficients`
        and ``to_dict()["fixef"]`` omit them (``fixef(fit, add.dropped = TRUE)`` gives them as NA:
        ``fit.fixef.reindex(fit.design.fixed_spec.all_column_names)``); ``summary()`` names them."""
        return tuple(getattr(getattr(self.design, "fixed_spec", None), "dropped_names", ()))

    def _rank_note(self) -> list[str]:
        """The lines ``summary()`` shows for dropped columns (lme4's ``fit warnings``)."""
        if not self.dropped_columns:
            return []
        from ..formula import rank_message

        return ["", "fit warnings:", rank_message(self.dropped_columns)]

    @property
    def vcov(self) -> pd.DataFrame:
        """Covariance matrix of the fixed effects."""
        names = list(self.fixed_names)
        return pd.DataFrame(self.cov_coef, index=names, columns=names)

    @property
    def coefficients(self) -> pd.DataFrame:
        """Fixed effects: ``estimate``, ``se`` and the Wald statistic (``t`` for a Gaussian fit, as lme4's summary,
        which gives no p-value; ``z`` with its ``pvalue`` for the other families, as glmer's)."""
        se = np.sqrt(np.diag(self.cov_coef))
        stat = self.coef / se
        index = pd.Index(self.fixed_names, name="term")
        if self.family.estimates_scale:
            return pd.DataFrame({"estimate": self.coef, "se": se, "t": stat}, index=index)
        return pd.DataFrame({"estimate": self.coef, "se": se, "z": stat, "pvalue": 2 * sps.norm.sf(np.abs(stat))},
                            index=index)

    # ----------------------------------------------------------------- random effects
    def _factors(self) -> list[np.ndarray]:
        dims = [len(c) for c in self.term_coef_names]
        return theta_to_factors(tuple(_Dim(d) for d in dims), self.theta)

    def varcorr_frame(self) -> pd.DataFrame:
        """lme4's ``as.data.frame(VarCorr(fit))``: grp, var1, var2, vcov, sdcor, and the ``name`` of each
        component (``"subject"``, ``"subject.x"``, ``"subject.(Intercept).x"``, ``"Residual"``).

        Per term the variances come first, then the covariances (pairs of the lower triangle, row-wise as
        lme4); ``sdcor`` holds standard deviations and correlations. A Gaussian fit's residual row is last;
        the other families have none (their latent residual variance is :attr:`distribution_variance`).

        Examples
        --------
        >>> import pandas as pd
        >>> from mixeval.mixed import lmer
        >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
        >>> list(lmer("y ~ 1 + (1|g)", df).varcorr_frame().name)
        ['g', 'Residual']
        """
        rows = []
        for g, names, lam in zip(self.group_names, self.term_coef_names, self._factors()):
            cov = self.scale2 * lam @ lam.T
            sd = np.sqrt(np.diag(cov))
            for i, nm in enumerate(names):
                key = g if nm == "(Intercept)" else f"{g}.{nm}"
                rows.append((key, g, nm, None, float(cov[i, i]), float(sd[i])))
            for i in range(len(names)):
                for j in range(i + 1, len(names)):
                    corr = float(cov[i, j] / (sd[i] * sd[j])) if sd[i] > 0 and sd[j] > 0 else float("nan")
                    rows.append((f"{g}.{names[i]}.{names[j]}", g, names[i], names[j], float(cov[i, j]), corr))
        if self.family.estimates_scale:
            rows.append(("Residual", "Residual", None, None, float(self.scale2), float(np.sqrt(self.scale2))))
        frame = pd.DataFrame(rows, columns=["name", "grp", "var1", "var2", "vcov", "sdcor"])
        dup = frame.name.duplicated(keep=False)
        if dup.any():  # e.g. (1|g) + (1 + x|g): number the repeats
            frame.loc[dup, "name"] = [f"{n}#{k}" for k, n in enumerate(frame.name[dup])]
        return frame

    @property
    def components(self) -> dict[str, float]:
        """Every variance and covariance under its ``as.data.frame(VarCorr)`` name (``mixeval fit --json``)."""
        frame = self.varcorr_frame()
        return {str(k): float(v) for k, v in zip(frame.name, frame.vcov)}

    @property
    def variances(self) -> dict[str, float]:
        """Every variance (no covariances) under its name, with ``"Residual"`` for a Gaussian fit."""
        frame = self.varcorr_frame()
        frame = frame[frame.var2.isna()]
        return {str(k): float(v) for k, v in zip(frame.name, frame.vcov)}

    @property
    def has_slopes(self) -> bool:
        """Some random term has coefficients other than a single intercept."""
        return any(len(c) != 1 or c[0] != "(Intercept)" for c in self.term_coef_names)

    @property
    def varcorr(self) -> pd.DataFrame:
        """Variance components (lme4's ``VarCorr``): ``group``, ``name``, ``variance``, ``std``, ``percent``.

        ``percent`` is the share of the total variance of a model with random intercepts only (for a GLMM on the
        latent scale, with the distribution variance as the residual: see :mod:`mixeval.reliability`); NaN with
        random slopes, whose variances are in units of the response per unit of the covariate.
        """
        frame = self.varcorr_frame()
        frame = frame[frame.var2.isna()]
        table = pd.DataFrame({
            "group": list(frame.grp),
            "name": [("" if pd.isna(n) else n) for n in frame.var1],
            "variance": list(frame.vcov),
            "std": list(frame.sdcor),
        })
        total = float(table.variance.sum())
        if not self.family.estimates_scale:
            total += self.distribution_variance
        table["percent"] = np.nan if self.has_slopes or not np.isfinite(total) else 100.0 * table.variance / total
        return table.reset_index(drop=True)

    @property
    def covariances(self) -> dict[str, pd.DataFrame]:
        """Covariance matrix of one level's random effects per term (``s^2 Lambda_k Lambda_k'``), keyed by the
        term's label."""
        return {label: pd.DataFrame(self.scale2 * lam @ lam.T, index=list(names), columns=list(names))
                for label, names, lam in zip(self.term_labels, self.term_coef_names, self._factors())}

    @property
    def correlations(self) -> dict[str, pd.DataFrame]:
        """Correlation matrix of one level's random effects per term (NaN where a variance is 0)."""
        out = {}
        for label, cov in self.covariances.items():
            sd = np.sqrt(np.diag(cov.to_numpy()))
            with np.errstate(invalid="ignore", divide="ignore"):
                corr = cov.to_numpy() / np.outer(sd, sd)
            out[label] = pd.DataFrame(corr, index=cov.index, columns=cov.columns)
        return out

    @property
    def term_labels(self) -> tuple[str, ...]:
        """Every random term as lme4 writes it (``"(1 | item)"``, ``"(1 + x | subject)"``)."""
        out = []
        for g, names in zip(self.group_names, self.term_coef_names):
            lhs = " + ".join("1" if n == "(Intercept)" else n for n in names)
            out.append(f"({lhs if '(Intercept)' in names else '0 + ' + lhs} | {g})")
        return tuple(out)

    @property
    def ranef(self) -> dict[str, pd.Series | pd.DataFrame]:
        """Conditional modes of the random effects per group, indexed by level: a Series for a group with a random
        intercept only; a DataFrame with one column per coefficient (lme4's ``ranef``) otherwise, the columns of
        all the group's terms side by side (e.g. the two terms of ``(1 + x || g)``)."""
        out: dict[str, pd.Series | pd.DataFrame] = {}
        for g, names, levels, b in zip(self.group_names, self.term_coef_names, self.term_levels, self.random_effects):
            index = pd.Index(levels, name=g)
            b = np.asarray(b).reshape(len(levels), -1)
            if names == ("(Intercept)",) and g not in out:
                out[g] = pd.Series(b[:, 0], index=index, name="(Intercept)")
                continue
            frame = pd.DataFrame(b, index=index, columns=list(names))
            prev = out.get(g)
            if prev is not None:
                prev = prev.to_frame() if isinstance(prev, pd.Series) else prev
                frame = pd.concat([prev, frame.reindex(prev.index)], axis=1)
            out[g] = frame
        return out

    @property
    def ngrps(self) -> dict[str, int]:
        """Number of levels of each random-effect group."""
        return dict(zip(self.group_names, self.n_levels))

    # ----------------------------------------------------------------- likelihood
    @property
    def deviance(self) -> float:
        """``-2 loglik``: the REML criterion of a REML fit, the (Laplace or quadrature) deviance otherwise."""
        return float(self.criterion)

    @property
    def n_params(self) -> int:
        """Estimated parameters: fixed effects, covariance parameters, the residual variance of a Gaussian fit and
        the family's own parameters (a dispersion, cutpoints)."""
        return (len(self.fixed_names) + int(np.size(self.theta)) + int(self.family.estimates_scale)
                + int(np.size(self._family_par)))

    @property
    def aic(self) -> float:
        return -2.0 * self.loglik + 2.0 * self.n_params

    @property
    def bic(self) -> float:
        return -2.0 * self.loglik + np.log(self.nobs) * self.n_params

    # ----------------------------------------------------------------- predictions and simulation
    def _rows_required(self, what: str) -> None:
        if self.design.X is None:
            raise InputError(f"{what} needs the rows of the data; this fit was made from aggregates (DuckDB, Spark, "
                             "Parquet). Fit a pandas DataFrame to get it.")

    def _location_effects(self) -> list[tuple[Any, np.ndarray]]:
        """``(term, b)`` of every random-effects term of the linear predictor, ``b`` its conditional modes as levels
        x coefficients."""
        return [(t, np.asarray(b).reshape(t.n_levels, -1)) for t, b in zip(self.model_terms, self.random_effects)]

    def _linear_predictor(self, re: bool) -> np.ndarray:
        eta = self.design.X @ self.coef if len(self.coef) else np.zeros(self.nobs)
        offset = getattr(self.design, "offset", None)
        if offset is not None:  # the formula's offset() terms: part of every prediction, as R's predict
            eta = eta + offset
        if re:
            for t, b in self._location_effects():
                eta = eta + np.einsum("ij,ij->i", t.X, b[t.codes])
        return eta

    def predict(self, newdata: pd.DataFrame | None = None, *, type: str = "response", re: bool | None = None,
                allow_new_levels: bool = False) -> np.ndarray:
        """Predictions on the ``"response"`` scale (accuracy, counts) or the ``"link"`` scale (lme4's ``predict``).

        Parameters
        ----------
        newdata : DataFrame, optional
            New rows (the fitted rows when omitted). Their factor levels must be levels of the fit.
        type : {"response", "link"}
        re : bool, optional
            Include the conditional modes of the random effects (the default, lme4's ``re.form = NULL``) or give
            population-level predictions (``re=False``, lme4's ``re.form = NA``).
        allow_new_levels : bool
            With ``newdata``: a grouping level the fit never saw gets random effect 0 (lme4's
            ``allow.new.levels = TRUE``); by default such a level is an error naming it.

        Notes
        -----
        ``eta = x' beta + sum_k x_k' b_k[level]`` for each row, with ``x_k`` the row of the ``k``-th random term's
        model matrix (1 for an intercept) and ``b_k`` its conditional modes; the response scale applies the
        inverse link (the family's mean ``E[y | eta]``, :meth:`~.families.Family.mean`, which for an ordered beta
        model also counts the exact 0s and 1s).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> import mixeval
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"g": np.repeat(list("abcdef"), 5), "x": np.tile(np.arange(5.0), 6)})
        >>> df["y"] = df["x"] + np.repeat(rng.normal(0, 2, 6), 5) + rng.normal(0, 0.5, 30)
        >>> fit = mixeval.lmer("y ~ x + (1|g)", df)
        >>> new = pd.DataFrame({"g": ["a", "zz"], "x": [1.0, 1.0]})
        >>> bool(np.allclose(fit.predict(new, allow_new_levels=True)[1], fit.predict(new, re=False)[1]))
        True
        """
        if type not in ("link", "response"):
            raise InputError(f"`type` must be 'link' or 'response'; got {type!r}.")
        re = True if re is None else bool(re)
        eta = self._link_predictor(newdata, re, allow_new_levels)
        return eta if type == "link" else self.response_mean(eta)

    def _link_predictor(self, newdata: pd.DataFrame | None, re: bool, allow_new_levels: bool) -> np.ndarray:
        """The linear predictor of the fitted rows or of ``newdata`` (see :meth:`predict`)."""
        if newdata is None:
            if allow_new_levels:
                raise InputError("allow_new_levels applies to newdata only; the fitted rows have no new levels.")
            self._rows_required("predict()")
            return np.asarray(self._linear_predictor(re), dtype=float)
        self._require_formula_terms()
        eta = self._fixed_predictor_new(newdata)
        return eta + self._random_predictor_new(newdata, allow_new_levels) if re else eta

    def _require_formula_terms(self) -> None:
        """New rows are predicted through the formula: its fixed-effects coding and one grouping factor per
        random-effects term (a fit built from a design matrix, e.g. a Bradley-Terry model's difference design with
        multiple-membership terms, has neither)."""
        groups = getattr(self.design, "groups", ())
        terms = self.model_terms
        if (getattr(self.design, "fixed_spec", None) is None or len(groups) != len(terms)
                or any(getattr(t, "is_multiple_membership", False) for t in terms)):
            raise InputError("predict(newdata) needs a model fitted from a formula; this fit was built from a design "
                             "matrix (e.g. the engine fit of a Bradley-Terry model): predict its fitted rows "
                             "(newdata=None), or use the model's own prediction (PreferenceResult.win_probabilities).")

    def _fixed_predictor_new(self, newdata: pd.DataFrame) -> np.ndarray:
        """``X_new beta`` under the fit's fixed-effects coding, plus the new rows' offset."""
        from ._design import new_model_matrix, new_offset

        X = new_model_matrix(self.design.fixed_spec, newdata, what="the fixed effects")
        eta = X @ self.coef if len(self.coef) else np.zeros(len(newdata))
        offset = new_offset(self.design.fixed_spec, newdata)
        return eta if offset is None else eta + offset

    def _random_predictor_new(self, newdata: pd.DataFrame, allow_new_levels: bool) -> np.ndarray:
        """``sum_k x_k' b_k[level]`` of new rows; a new level contributes 0 (with ``allow_new_levels``)."""
        from ._design import new_level_codes, new_model_matrix

        out = np.zeros(len(newdata))
        groups = getattr(self.design, "groups", ())
        for g, (_t, b) in zip(groups, self._location_effects()):
            codes = new_level_codes(g, newdata, allow_new_levels=allow_new_levels)
            known = codes >= 0
            B = np.asarray(b, dtype=float)[np.where(known, codes, 0)]
            Xk = np.ones((len(newdata), 1)) if g.X is None else new_model_matrix(
                g.spec, newdata, what=f"the random term {g.term.label}")
            out += np.where(known, np.einsum("ij,ij->i", Xk, B), 0.0)
        return out

    def simulate(self, nsim: int = 1, *, random_state: Any = None) -> np.ndarray:
        """``nsim`` responses drawn from the fitted model with new random effects (lme4's
        ``simulate(fit, use.u = FALSE)``), one column each: an array of shape ``(nobs, nsim)``."""
        from .._random import as_generator

        return self._draw(require_positive_int(nsim, "nsim"), as_generator(random_state))

    def _draw(self, nsim: int, rng: np.random.Generator) -> np.ndarray:
        """``nsim`` responses by the fit's evaluator (a family without one draws its own)."""
        self._rows_required("simulate()")
        return self.model.simulate(nsim, rng)

    # ----------------------------------------------------------------- intervals and the bootstrap
    def confint(self, *, method: str = "profile", level: float = 0.95, df: str = "asymptotic", **kwargs: Any):
        """Confidence intervals of the standard deviations, correlations, sigma and fixed effects (lme4's
        ``confint(fit, method = "profile" | "boot" | "Wald")``; ``df="satterthwaite"`` gives Wald t intervals where
        the fit's evaluator offers Satterthwaite df; see :func:`mixeval.uncertainty.confint`)."""
        from ._confint import confint

        return confint(self, method=method, level=level, df=df, **kwargs)

    def bootstrap(self, statistic=None, *, n_resamples: int = 1000, random_state: Any = None, **kwargs: Any):
        """Parametric bootstrap of the fit (lme4's ``bootMer``; see :func:`mixeval.uncertainty.bootstrap_fit`)."""
        from ._bootstrap import bootstrap_fit

        return bootstrap_fit(self, statistic, n_resamples=n_resamples, random_state=random_state, **kwargs)

    # ----------------------------------------------------------------- printing
    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``mixeval fit --json`` (plain, JSON-safe Python; numbers unrounded); the same keys
        for every family."""
        return to_plain({
            "nobs": self.nobs,
            "family": self.family.name,
            "link": self.family.link,
            "reml": self.reml,
            "loglik": self.loglik,
            "deviance": self.deviance,
            "criterion": self.criterion,
            "aic": self.aic,
            "bic": self.bic,
            "varcorr": self.components,
            "fixef": {k: float(v) for k, v in zip(self.fixed_names, self.coef)},
            "se": {k: float(v) for k, v in zip(self.fixed_names, np.sqrt(np.diag(self.cov_coef)))},
            "singular": self.singular,
            "converged": self.converged,
            "dispersion": self.dispersion,
            "dropped_columns": list(self.dropped_columns),
            **self._dict_extra(),
        })

    def _dict_extra(self) -> dict[str, Any]:
        return {}
