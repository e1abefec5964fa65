"""``Study``: evaluation scores, a formula and roles -> reliability and significance answers.

A Study holds a long-format DataFrame of evaluation scores and an lme4-style
formula naming the score, the systems (fixed effects) and the facets (random
effects), e.g. ``ter ~ system + (1|sentence_id) + (1|seed)``. It validates the
data once, fits lazily (REML for variance components, ML for likelihood-ratio
tests) and answers the book's questions through small methods that return
DataFrames or frozen results.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from . import reliability as _rel
from ._binning import bin_property
from ._format import terminal_width, text_table
from ._margin import check_margin
from ._results import TestResult
from ._validation import require_columns, require_dataframe
from .errors import InputError, MixevalWarning, caller_stacklevel
from .formula import ParsedFormula, parse_formula
from .mixed import Family, MixedResult, build_design, compare, fit_design, get_family
from .mixed.engine import complete_rows

if TYPE_CHECKING:
    from .mixed import ClmmResult

__all__ = ["Study", "bin_property", "check_property", "check_system"]


def _is_aggregate_source(data: Any) -> bool:
    from .scale import is_aggregate_source

    return is_aggregate_source(data)


def _fixed_terms(fixed: str) -> list[list[str]]:
    """Terms of a fixed-effects formula as lists of their variables (R's term labels split at ``:``)."""
    return [list(t) for t in parse_formula(f"y ~ {fixed}").fixed_terms]


def drop_fixed_effect(fixed: str, effect: str) -> str:
    """The fixed part without every term involving ``effect`` (keeps an intercept and the offsets).

    Examples
    --------
    >>> drop_fixed_effect("system * cls", "system")
    '1 + cls'
    >>> drop_fixed_effect("system", "system")
    '1'
    """
    return parse_formula(f"y ~ {fixed}").fixed_without(effect)


def _group_expr(term) -> str:
    """A random term's grouping factor as formula text (non-syntactic column names in backticks)."""
    import re

    return ":".join(f if re.fullmatch(r"[A-Za-z_.][A-Za-z0-9_.]*", f) else f"`{f}`" for f in term.factors)


def _is_numeric_property(values: pd.Series) -> bool:
    """A numeric (not logical) column: conditional comparisons use its slopes rather than classes."""
    return pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)


def _numeric_cuts(cuts: Any) -> list[float]:
    """``cuts`` as a list of finite numbers, or an InputError naming ``cuts``."""
    values: list[Any] = [cuts] if isinstance(cuts, (str, bytes)) or np.isscalar(cuts) else list(cuts)
    out = []
    for value in values:
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise InputError(f"`cuts` must be numbers (cut points of the property, e.g. (15, 55)); got {value!r}.") from None
        if not np.isfinite(number):
            raise InputError(f"`cuts` must be finite numbers; got {value!r}.")
        out.append(number)
    if not out:
        raise InputError("`cuts` is empty; give at least one cut point, e.g. (15, 55), or cuts=None.")
    return out


def _resolve_df(df: str | None, family: Family) -> str | None:
    """``df`` of a Study checked against its family's engine: the canonical method, or None (the default, chosen per
    fit by :func:`mixeval.significance._ddf.default_df`: emmeans' rule)."""
    from .significance.engine import canonical_df

    if df is None:
        return None
    method = canonical_df(df)
    if family.engine == "clmm" and method not in ("asymptotic", "satterthwaite"):
        raise InputError(f"df={df!r}: ordinal models give asymptotic (z) intervals and tests, as emmeans for clmm, "
                         "or t ones on Satterthwaite df; use df='asymptotic' (or leave df out) or df='satterthwaite'.")
    if family.engine != "lmer" and method == "kenward-roger":
        raise InputError(f"df={df!r} (Kenward-Roger) applies to Gaussian (lmer) fits; a Study with family="
                         f"{family.name!r} offers df='asymptotic' (z tests, the default, as emmeans for glmer fits), "
                         "df='satterthwaite' (the linearised model's, SAS GLIMMIX's) or df='satterthwaite-upper' "
                         "(experimental).")
    return method


def _df_for(df: str | None, family: Family, fit: MixedResult) -> tuple[str, str | None]:
    """The df method of a table of ``fit`` and, when ``df`` was left out, why emmeans' rule chose it.

    Gaussian Studies follow emmeans' ``lmer.df`` rule: Kenward-Roger up to 3,000 observations, then
    Satterthwaite up to 3,000 (lmerTest.limit), else z; GLMMs and ordinal Studies z
    (:func:`mixeval.significance._ddf.default_df`)."""
    from .significance import default_df

    method = _resolve_df(df, family)
    if method is not None:
        return method, None
    return default_df(fit)


def _check_margin(delta: Any, side: Any) -> None:
    """``delta``/``side`` of a margin test checked before any fit (:func:`mixeval._margin.check_margin`)."""
    if delta is not None or side is not None:
        check_margin(delta, side)


#: The scales a margin of a non-Gaussian Study can be on, per family kind and argument.
_MARGIN_SCALES = {
    ("glmm", "scale"): "scale='difference' (differences of response-scale means: accuracy points, counts), "
                       "scale='ratio' or 'link' (delta a log odds or log rate ratio)",
    ("glmm", "type"): "type='response' (probabilities or rates) or type='link' (log odds or log rate)",
    ("ordinal", "scale"): "scale='latent' (the latent scale's units) or one of the probability modes ('prob', "
                          "'cum.prob', 'exc.prob', 'mean.class')",
    ("ordinal", "type"): "type='latent' (the latent scale's units) or one of the probability modes ('prob', "
                         "'cum.prob', 'exc.prob', 'mean.class')",
}


def _margin_text(**values: Any) -> str | None:
    """``"delta=0.02"``-like words for the given margin arguments, or None when none is given."""
    given = [f"{k}={v!r}" for k, v in values.items() if v is not None]
    return ", ".join(given) or None


def _require_margin_scale(family: Family, value: Any, argument: str, margin: Any) -> None:
    """A margin (``delta=``, or ``null=`` of means) of a binomial, Poisson or ordinal Study means nothing until its
    scale is named: 0.02 is two accuracy points on the response scale and a tiny odds ratio on the link scale. Refused
    when ``argument`` (``scale``/``type``) is left to its default."""
    if family.engine == "lmer" or value is not None or margin is None:
        return
    kind = "ordinal" if family.engine == "clmm" else "glmm"
    raise InputError(f"a margin ({margin}) of a {family.name} Study is on a scale you must name: give "
                     f"{_MARGIN_SCALES[kind, argument]}.")


def _reml_option(reml: Any, family: Family) -> bool:
    """``reml`` of a Study: REML for Gaussian fits (lme4's lmer), maximum likelihood for GLMMs (lme4's glmer)
    and ordinal models (ordinal's clmm); ``reml=True`` where the family's table has no restricted criterion is
    refused."""
    if reml is None:
        return family.engine == "lmer"
    if not isinstance(reml, (bool, np.bool_)):
        raise InputError(f"reml= must be True or False; got {reml!r}.")
    if reml and not family.support.allows("reml"):
        raise InputError(f"reml=True: family={family.name!r} has no restricted (REML) criterion; it is fitted by "
                         "maximum likelihood (reml=False, the default).")
    return bool(reml)


def _drop_empty_classes(data: pd.DataFrame, prop: str, cls: str) -> pd.DataFrame:
    """Warn about (and leave out) classes no row falls into; fewer than two non-empty classes is an error."""
    counts = data[cls].value_counts(sort=False)
    empty = [str(c) for c, n in counts.items() if n == 0]
    if not empty:
        return data
    kept = [str(c) for c, n in counts.items() if n > 0]
    values = pd.to_numeric(data[prop], errors="coerce")
    where = f"{prop!r} ranges from {values.min():g} to {values.max():g}"
    if len(kept) < 2:
        raise InputError(f"the cuts put every row in one class ({', '.join(kept)}); the classes "
                         f"{', '.join(repr(c) for c in empty)} are empty ({where}). Choose cuts inside the data's range.")
    warnings.warn(f"the classes {', '.join(repr(c) for c in empty)} of {prop!r} are empty ({where}); "
                  "they are left out of the conditional comparison.", MixevalWarning, stacklevel=caller_stacklevel())
    out = data.copy()
    out[cls] = out[cls].cat.remove_unused_categories()
    return out


def _study_family(family: Any, link: Any, weights: Any) -> Family:
    """The Study's :class:`~mixeval.mixed.Family` (``None``: Gaussian, linear mixed models) from a name of the
    registry or a Family, with ``link``; ``weights=`` refused where the family's table has no weights."""
    fam = get_family("gaussian" if family is None else family, link)
    if weights is not None and fam.support.weights == "none":
        raise InputError(f"weights= is not available for family={fam.name!r} ({fam.engine}: one row per "
                         "observation; repeat the rows instead).")
    return fam


def _with_proportion(parsed: ParsedFormula, data: pd.DataFrame, family: Family) -> pd.DataFrame:
    """``data`` with the proportion successes / trials of a ``cbind(successes, failures)`` response as a column named
    as R prints the response (the score that the report and the averaged test read); refused for a family whose
    ``weights=`` are not trials."""
    if family.support.weights != "trials":
        from .mixed.families import REGISTRY

        trials = ", ".join(name for name, cls in REGISTRY.items() if cls.support.weights == "trials")
        raise InputError(f"{parsed.response} is a response of successes out of trials; family={family.name!r} takes "
                         f"one response column. Use a family of proportions out of trials ({trials}).")
    from .formula import response_values

    return data.assign(**{parsed.response: response_values(parsed, data)[0]})


def _rating_codes(data: pd.DataFrame, response: str, levels: list | None) -> tuple[pd.DataFrame, list | None]:
    """``data`` with the ratings as their positions 1..J on the scale (a copy; for validating the design of an
    ordinal Study), and ``levels`` as the column's values (numbers for a numeric column): numbers as they are, an
    ordered Categorical by its categories, strings by ``levels``."""
    require_columns(data, [response])
    values = data[response]
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    categories = levels
    if categories is None and isinstance(values.dtype, pd.CategoricalDtype) and values.cat.ordered:
        categories = list(values.cat.categories)
    if categories is None:
        if numeric:
            return data, None
        shown = ", ".join(repr(v) for v in pd.unique(values.dropna())[:5])
        raise InputError(f"the ratings in {response!r} are not numbers ({shown}, ...); give their order on the scale "
                         "with levels=, e.g. Study(df, formula, family='ordinal', levels=['bad', 'ok', 'good']) "
                         "(--levels bad,ok,good on the command line), or make the column an ordered pandas "
                         "Categorical.")
    if numeric:
        try:
            categories = [int(float(v)) if float(v).is_integer() else float(v) for v in categories]
        except (TypeError, ValueError):
            raise InputError(f"levels= {categories!r} are not numbers, but the ratings in {response!r} are.") from None
    if len(set(map(str, categories))) != len(categories):
        raise InputError(f"levels= repeats a category: {categories!r}.")
    codes = pd.Index(categories).get_indexer(values.astype(float if numeric else object))
    unknown = values.notna().to_numpy() & (codes < 0)
    if unknown.any():
        odd = ", ".join(repr(v) for v in pd.unique(values[unknown])[:5])
        raise InputError(f"{response!r} has ratings that are not in levels= ({odd}); levels= must list every category "
                         f"on the scale in increasing order; got {categories!r}.")
    out = data.copy()
    out[response] = np.where(values.notna(), codes + 1.0, np.nan)
    return out, (categories if levels is not None else None)


def _ordinal_marginal(marginal: Any, mode: str) -> dict[str, bool]:
    """``marginal=`` of an ordinal Study's means and contrasts: population-averaged probability modes."""
    if not isinstance(marginal, (bool, np.bool_)):
        raise InputError(f"marginal= must be True or False; got {marginal!r}.")
    if marginal and mode == "latent":
        raise InputError("marginal=True averages the probabilities over the random effects; the latent mode is a "
                         "linear predictor, the same for a typical and an average item: use a probability mode "
                         "(prob, cum.prob, exc.prob, mean.class).")
    return {"marginal": bool(marginal)}


def _scale(value: Any, allowed: tuple[str, ...], argument: str) -> str:
    if value is None:
        return allowed[0]
    if value not in allowed:
        raise InputError(f"{argument}={value!r} is not one of {list(allowed)}.")
    return value


def check_system(parsed: ParsedFormula, system: str, data: pd.DataFrame | None = None) -> None:
    """The compared factor must be a categorical variable of the fixed part of the formula: a random grouping
    factor's levels are random effects (there is no fixed difference of systems to test), a column outside the
    formula is not in the model at all, and a column of numbers enters it as a slope, not as one mean per system.

    Examples
    --------
    >>> check_system(parse_formula("score ~ system + (1|item) + (1|rater)"), "rater")
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: the compared factor 'rater' (system= / --system) is a random grouping factor of 'score ~
    system + (1|item) + (1|rater)': the system must be a fixed effect, whose levels' difference is tested; name a fixed
    factor of the formula ('system').
    """
    from formulaic import Formula

    fixed = sorted(str(v) for v in Formula(parsed.fixed).required_variables)
    if system in fixed:
        if data is not None and system in data.columns and _numeric_codes(data[system]):
            raise InputError(numeric_system_message(data[system]))
        return
    others = "".join(f" + ({t.lhs}|{t.name})" for t in parsed.random if system not in t.factors)
    fix = (f"name a fixed factor of the formula ({', '.join(map(repr, fixed))})" if fixed else
           f"put it in the fixed part: '{parsed.response} ~ {system}{others}'")
    where = "a random grouping factor" if system in parsed.columns else "not a fixed effect"
    raise InputError(f"the compared factor {system!r} (system= / --system) is {where} of {parsed.formula!r}: the "
                     f"system must be a fixed effect, whose levels' difference is tested; {fix}.")


def _numeric_codes(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def numeric_system_message(column: pd.Series) -> str:
    """Why a column of numbers cannot be the compared factor, and how to recode it.

    Examples
    --------
    >>> print(numeric_system_message(pd.Series([1, 2, 1, 2], name="system")))
    the compared factor 'system' holds numbers (1, 2), which the formula fits as a slope, not as one mean per system.
    Recode the systems as labels, e.g. data['system'] = 'system' + data['system'].astype(str) (in the CSV: write sys1,
    sys2, ...).
    """
    values = sorted(pd.unique(column.dropna()))
    shown = ", ".join(f"{float(v):g}" for v in values[:5]) + (", ..." if len(values) > 5 else "")
    return (f"the compared factor {column.name!r} holds numbers ({shown}), which the formula fits as a slope, not as "
            f"one mean per system. Recode the systems as labels, e.g. data[{column.name!r}] = {column.name!r} + "
            f"data[{column.name!r}].astype(str) (in the CSV: write sys1, sys2, ...).")


def check_property(study: Study, prop: str, name: str) -> None:
    """A property to condition on must be a column that varies and is not one of the model's factors (the
    compared factor, a random grouping factor); ``name`` is how the caller names it in the message.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "system": list("ABABAB"), "score": [1.0, 2, 2, 4, 3, 5]})
    >>> check_property(Study(df, "score ~ system + (1|item)"), "system", "prop='system'")
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: prop='system' is the compared factor itself; condition on a property of the items (e.g. a
    length or a domain).
    """
    data = study._require_rows(name)
    require_columns(data, [prop])
    if prop == study.system:
        raise InputError(f"{name} is the compared factor itself; condition on a property of the items (e.g. a length "
                         "or a domain).")
    groups = {f for t in study.parsed.random for f in t.factors}
    if prop in groups:
        raise InputError(f"{name} is a grouping factor of the random part of {study.formula!r} (its levels are random "
                         "effects, not a property); condition on a property of the items (e.g. a length or a domain).")
    values = data[prop].dropna().unique()
    if len(values) < 2:
        shown = repr(values[0].item() if hasattr(values[0], "item") else values[0]) if len(values) else "all missing"
        raise InputError(f"{name} has a single value ({shown}); conditioning needs a property that varies.")


class Study:
    """Evaluation scores with a model formula and roles.

    Parameters
    ----------
    data : pandas.DataFrame, or a Parquet path/glob, Arrow table, DuckDB relation, Spark DataFrame
        Long format: one row per (item, system, facet levels...) with a numeric score. Never modified.
        For sources beyond memory the fits use aggregates computed by DuckDB or Spark
        (:mod:`mixeval.scale`); variance components, phi, the D-study, GLRTs and pairwise comparisons work
        as for a DataFrame, while methods that need the rows (``where``, ``conditional``, ``report``, ...)
        say so.
    formula : str
        lme4-style formula, e.g. ``"ter ~ system + (1|sentence_id) + (1|seed)"``.
    item : str, optional
        The objects of measurement (test items). Default: the random-effect factor with the most levels.
    system : str, optional
        The factor compared in significance tests. Default: the first categorical fixed effect, if any.
    metric_model : optional
        A metric-model description (:mod:`mixeval.metric_model`) when the score is a binary judgement by
        an imperfect classifier or LLM judge; enables :meth:`metric_comparisons`.
    drop_missing : bool, default False
        Drop rows with missing values in the formula's columns, warning with their number; by default
        they are an error (nothing is dropped silently).
    family : str or Family, optional
        The response distribution, a name of the registry (:func:`mixeval.mixed.families.family_names`) or a
        :class:`~mixeval.mixed.Family`; ``"gaussian"`` (:func:`mixeval.lmer`) by default. A binary score (correct or not)
        with ``family="binomial"``, counts with ``"poisson"`` or ``"negative_binomial"``, proportions strictly
        inside (0, 1) (per-item ROUGE, chrF) with ``"beta"``, proportions with exact 0s and 1s (F1) with
        ``"ordered_beta"``, k successes of n samples (pass@k) with ``"beta_binomial"`` (``weights=`` the trials or
        ``cbind(successes, failures)``), all by :func:`mixeval.glmer`; ratings with ``"ordinal"``
        (:func:`mixeval.clmm`). Marginal means are then on the response scale by default (the family's
        ``response_label``: prob, rate, proportion), pairwise comparisons on the family's ratio scale (odds ratios
        for a logit link, rate ratios for a log link; differences where the family has none) or with
        ``scale="difference"`` (ordinal Studies: emmeans' ordinal modes, ``scale="latent"``, ``"prob"``,
        ``"mean.class"``, ...); variance components are on the latent scale with the family's residual variance
        (``attrs["note"]`` names it), and phi, the D-study and the cheapest design on the observed scale (the mean
        observed score) by default, on the latent scale with ``scale="latent"``. What a family does not support
        (its :class:`~mixeval.mixed.families.Support` table) is refused by name.
    link, weights :
        The family's link (its default when None); ``weights`` as :func:`mixeval.fit` takes them (the trials of a
        binomial or beta-binomial proportion, precision weights of a Gaussian score, glmmTMB's prior weights).
    reml : bool, optional
        The fit criterion of :attr:`fit`. Gaussian Studies: REML (default, lme4's ``lmer``) or ML. With
        ``family=``: maximum likelihood by the Laplace approximation (default, lme4's ``glmer``; the means
        and contrasts with ``df="asymptotic"`` are then glmer + emmeans' numbers) or ``reml=True``, the
        restricted Laplace criterion (glmmTMB's ``REML = TRUE``), which integrates the fixed effects out and
        shrinks components estimated from few levels (5 seeds) less than ML. Every table of means and
        contrasts names the criterion it came from.
    levels : sequence, optional
        With ``family="ordinal"``: the categories of the rating in increasing order (e.g. ``["bad", "ok",
        "good"]``), for text ratings or a scale with categories nobody used; by default the sorted values.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> item = np.repeat(np.arange(40), 6)
    >>> df = pd.DataFrame({"item": item, "system": np.tile(["A", "B", "C"], 80), "seed": np.tile([1, 1, 1, 2, 2, 2], 40)})
    >>> df["score"] = rng.normal(size=40)[item] + rng.normal(0, 0.5, 240)
    >>> study = Study(df, "score ~ system + (1|item) + (1|seed)")
    >>> study.item, study.system
    ('item', 'system')
    """

    def __init__(self, data: Any, formula: str, *, item: str | None = None, system: str | None = None,
                 metric_model: Any = None, drop_missing: bool = False, family: str | Family | None = None,
                 link: str | None = None, weights: Any = None, reml: bool | None = None,
                 levels: Sequence[Any] | None = None) -> None:
        self.formula = formula
        self.parsed: ParsedFormula = parse_formula(formula)
        self.metric_model = metric_model
        self.family: Family = _study_family(family, link, weights)
        self.link: str = str(self.family.link)
        self.weights = weights
        self.reml = _reml_option(reml, self.family)
        if levels is not None and self.family.engine != "clmm":
            raise InputError("levels= orders the categories of ordinal ratings; it needs family='ordinal'.")
        self.levels = None if levels is None else list(levels)
        if not isinstance(data, pd.DataFrame) and _is_aggregate_source(data):
            # beyond memory: fits from aggregates computed by DuckDB or Spark (mixeval.scale)
            from .scale import as_engine

            if not self.family.support.allows("aggregate_sources"):
                raise InputError(f"family={self.family.name!r} is fitted from the rows, not from aggregates computed "
                                 f"where the data live ({type(data).__name__}); load the rows into a pandas "
                                 "DataFrame and use Study(df, ...) (Gaussian and binomial Studies fit from "
                                 "aggregates).")

            self.data = None
            self.source: Any = as_engine(data)
            self._design = None
            groups = list(zip(self.fit.group_names, self.fit.n_levels))
        else:
            self.data = require_dataframe(data)
            if not self.parsed.response_is_column and self.parsed.binomial_pair is None:
                # a response expression (log(rt)) becomes the study's score column, named as R prints it
                from .formula import response_values

                score = self.parsed.response
                self.data = self.data.assign(**{score: response_values(self.parsed, self.data)[0]})
                self.formula = formula = f"`{score}` ~ {formula.split('~', 1)[1].strip()}"
                self.parsed = parse_formula(formula)
            if self.parsed.binomial_pair is not None:  # cbind(successes, failures): the score is the proportion
                self.data = _with_proportion(self.parsed, self.data, self.family)
            if drop_missing:
                self.data = complete_rows(self.parsed, self.data).reset_index(drop=True)  # warns how many
            self.source = self.data
            if system is not None:  # before the fit, whose warnings would precede the refusal
                require_columns(self.data, [system])
                check_system(self.parsed, system, self.data)
            checked = self.data
            if self.family.engine == "clmm":
                checked, self.levels = _rating_codes(self.data, self.parsed.response, self.levels)
            self._design = build_design(self.parsed, checked)  # validates the data once
            if self.family.engine == "lmer":
                from .mixed.engine import warn_discrete_response

                warn_discrete_response(self._design.y, self.parsed.response)
            groups = [(g.name, g.n_levels) for g in self._design.groups]
        names = [g for g, _ in groups]
        single = [(g, n) for g, n in groups if ":" not in g]
        if item is None:
            if not single:
                raise InputError(f"cannot infer the test items: {formula!r} has no random intercept (1|item); pass item=.")
            item = max(single, key=lambda gn: gn[1])[0]
        elif item not in names:
            raise InputError(f"item={item!r} is not a random effect of {formula!r}; random effects: {', '.join(names)}.")
        self.item = item
        if system is None:
            system = self._infer_system()
        elif self.data is None:
            check_system(self.parsed, system)
        self.system = system

    def _supported(self, method: str, interval: str | None = None) -> None:
        """Refuse a Study method (and an interval method) that the family's :class:`~mixeval.mixed.families.Support`
        table does not list, by name, with the family's reason."""
        support = self.family.support
        for what in (method, interval):
            if what is not None and not support.allows(what):
                raise support.refusal(self.family.name, what)

    def _require_rows(self, what: str) -> pd.DataFrame:
        if self.data is None:
            raise InputError(
                f"{what} needs the rows in memory; this Study fits from aggregates ({self.source!r}). Filter or "
                "aggregate in the query engine, or load the rows into a pandas DataFrame and use Study(df, ...)."
            )
        return self.data

    # ---------------------------------------------------------------- construction helpers
    def _infer_system(self) -> str | None:
        # the data as the model codes them (logicals are factors, as in R); None for an aggregate source
        coded = self.data if self._design is None else self._design.data
        for term in _fixed_terms(self.parsed.fixed):
            for factor in term:
                if coded is None:
                    if factor != "1" and any(n.startswith(factor) and n != factor for n in self.fit.fixed_names):
                        return factor  # a factor: its coefficients are named factor + level
                else:
                    if factor in coded.columns and not pd.api.types.is_numeric_dtype(coded[factor]):
                        return factor
        return None

    def where(self, query: str | None = None, **equals: Any) -> Study:
        """A Study on a subset of the rows, re-validated, with the same formula and roles.

        Parameters
        ----------
        query : str, optional
            A :meth:`pandas.DataFrame.query` expression, e.g. ``"src_length > 15"``.
        **equals
            Column = value filters, e.g. ``mode="Marking"``.
        """
        rows = self._require_rows("Study.where")
        mask = pd.Series(True, index=rows.index)
        if equals:
            require_columns(rows, list(equals))
            for col, value in equals.items():
                mask &= rows[col] == value
        subset = rows[mask]
        if query is not None:
            subset = subset.query(query)
        if subset.empty:
            raise InputError(f"the subset ({query or ''} {equals or ''}) of the study's data is empty.")
        formula, system = self.formula, self.system
        for col in equals:  # a factor the filter fixes to one level leaves the model (R would refuse it)
            if col in self.parsed.fixed_columns(subset.columns) and subset[col].nunique() == 1:
                formula = self._formula_with(drop_fixed_effect(parse_formula(formula).fixed, col))
                system = None if col == system else system  # one system: nothing left to compare
        return Study(subset.reset_index(drop=True), formula, item=self.item, system=system,
                     metric_model=self.metric_model, **self._glmm_kwargs(subset))

    # ---------------------------------------------------------------- fits
    @cached_property
    def fit(self) -> MixedResult:
        """The fit of the study's formula (variance components, marginal means) by the criterion ``reml=``
        chose: REML for Gaussian Studies, the Laplace maximum likelihood (lme4's glmer) with ``family=``, or
        the restricted Laplace criterion with ``family=..., reml=True``."""
        if self.family.engine == "lmer" and self._design is not None:  # the design validated at construction, fitted once
            from .mixed.engine import weights_array

            weights = None if self.weights is None else weights_array(self.weights, self._design.data,
                                                                        self._design.nobs, positive=True)
            return fit_design(self._design, reml=self.reml, data=self._design.data, weights=weights)
        return self._fit_formula(self.formula, reml=self.reml)

    @cached_property
    def fit_ml(self) -> MixedResult:
        """The maximum-likelihood fit (for likelihood-ratio tests of fixed effects); :attr:`fit` when that is ML."""
        if not self.reml:
            return self.fit
        if self.family.engine != "lmer":
            return self._fit_formula(self.formula, reml=False)
        return self.fit.refit(REML=False)

    # ---------------------------------------------------------------- GLMM (family=) helpers
    def _glmm_kwargs(self, data: Any = None) -> dict[str, Any]:
        """``family``/``weights``/``reml`` (and ``levels``) for a Study on (a subset of) the same rows."""
        weights = self.weights
        if weights is not None and not isinstance(weights, str):
            raise InputError("a Study on a subset needs weights= given as a column name, not as values.")
        extra = {"levels": self.levels} if self.levels is not None else {}
        return {"family": self.family, "weights": weights, "reml": self.reml, **extra}

    def _fit_formula(self, formula: str, *, reml: bool):
        """``formula`` fitted with the study's family (REML or ML) on the study's data or source: one call
        (:func:`mixeval._lmer.fit_model`) for every family and source."""
        import warnings

        from ._lmer import fit_model
        from .errors import FamilyWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FamilyWarning)  # said once, when the Study was made
            extra: dict[str, Any] = {"levels": self.levels} if self.levels is not None else {}
            return fit_model(formula, self.source, family=self.family, REML=reml, weights=self.weights, **extra)

    def _formula_with(self, fixed: str, random: Sequence[str] | None = None) -> str:
        """The study's formula with another fixed part, keeping the random terms (all, or those of the groups
        named in ``random``) as written, slopes included."""
        terms = [t for t in self.parsed.random if random is None or t.name in set(random)]
        return f"{self.parsed.response} ~ {fixed}" + "".join(f" + ({t.lhs}|{_group_expr(t)})" for t in terms)

    # ---------------------------------------------------------------- reliability
    def variance_components(self, *, ci: str | None = None, level: float = 0.95, **kwargs: Any) -> pd.DataFrame:
        """Variance-component table (component, variance, percent), as the book's Tables 3.1-3.12.

        With ``family=`` the components are on the latent (link) scale and ``Residual`` is the
        distribution-specific variance (pi^2/3 for the logit link; ``table.attrs["note"]`` says so).
        ``ci="profile" | "boot" | "wald"`` adds the interval of every variance (``lower``, ``upper``; see
        :func:`mixeval.uncertainty.variance_table_ci`; ``kwargs`` go to :func:`mixeval.uncertainty.confint`).
        """
        self._supported("variance_components", ci)
        if ci is not None:
            from .uncertainty import variance_table_ci

            return variance_table_ci(self.fit, method=ci, level=level, **kwargs)
        table = _rel.variance_table(self.fit)
        if self.family.engine != "lmer":
            table.attrs["note"] = _rel.latent_scale_note(self.fit)
        return table

    def phi(self, n: Mapping[str, float] | None = None, *, kind: str = "absolute", scale: str | None = None) -> float:
        """Reliability coefficient phi (Definition 3.2) for facet sample sizes ``n`` (default 1 each).

        ``scale``: binomial, Poisson and ordinal Studies give the coefficient of the mean observed score by
        default (``"observed"``), or of the latent propensity (``"latent"``); the two coincide for Gaussian
        Studies (:func:`mixeval.reliability.phi`). :meth:`data_design` gives the ``n`` of the data's own design.
        """
        self._supported("phi")
        return _rel.phi(self.fit, self.item, n, kind=kind, scale=scale)

    def data_design(self) -> dict[str, int]:
        """The data's own design: the number of levels of each facet per item (per item and system when the Study
        has a system), the median over items; the ``n`` whose phi the study's own averages have.

        Facets are the factors of the random part other than the items and the system; those that are not
        columns of the data (or vary less than once per item) are left out.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> df = pd.DataFrame([(i, r, s) for i in range(20) for r in range(4) for s in range(3)],
        ...                   columns=["item", "rater", "seed"])
        >>> df["score"] = np.random.default_rng(0).normal(size=len(df))
        >>> Study(df, "score ~ (1|item) + (1|rater) + (1|seed)").data_design()
        {'rater': 4, 'seed': 3}
        """
        data = self._require_rows("Study.data_design")
        facets = []
        for term in self.parsed.random:
            for factor in term.factors:
                if factor not in (self.item, self.system) and factor in data.columns and factor not in facets:
                    facets.append(factor)
        keys = [self.item] + ([self.system] if self.system in data.columns else [])
        out = {}
        for facet in facets:
            count = int(round(float(data.groupby(keys, observed=True)[facet].nunique().median())))
            if count >= 1:
                out[facet] = count
        return out

    def reliability(self, n: Mapping[str, float] | None = None, *, rater: str | None = None,
                    occasion: str | None = None, scale: str | None = None) -> pd.DataFrame:
        """Reliability coefficients: phi, the relative coefficient and, given rater/occasion, intra/inter-rater.

        ``scale`` as :meth:`phi`: the table's ``scale`` column names it for every row (intra- and inter-rater
        coefficients are latent-scale ones); ``attrs["note"]`` says what the scale means.
        """
        self._supported("reliability")
        chosen = _rel.resolve_scale(self.fit, scale)
        rows = [
            {"coefficient": "phi (absolute)", "value": self.phi(n, scale=chosen), "scale": chosen},
            {"coefficient": "relative (generalizability)", "value": self.phi(n, kind="relative", scale=chosen),
             "scale": chosen},
        ]
        if rater and occasion:
            rows.append({"coefficient": "intra-rater (3.18)", "scale": "latent",
                         "value": _rel.intra_rater(self.fit, self.item, rater, occasion)})
            rows.append({"coefficient": "inter-rater (3.19)", "scale": "latent",
                         "value": _rel.inter_rater(self.fit, self.item, rater, occasion)})
        table = pd.DataFrame(rows)
        table.attrs["note"] = _rel.scale_note(self.fit, chosen)
        return table

    def dstudy(self, grid: Mapping[str, Sequence[int]], *, scale: str | None = None) -> pd.DataFrame:
        """phi and the relative coefficient over a grid of facet sample sizes (Figure 3.3); ``scale`` as :meth:`phi`
        (``attrs["scale"]`` names it)."""
        self._supported("dstudy")
        return _rel.dstudy(self.fit, self.item, grid, scale=scale)

    def plot_dstudy(self, grid: Mapping[str, Sequence[int]], *, kind: str = "absolute", target: float | None = 0.8,
                    bands: bool = False, level: float = 0.95, scale: str | None = None, **kwargs: Any):
        """Figure 3.3: phi against the first facet's size, one curve per size of the second; ``bands=True``
        shades the parametric-bootstrap interval of every design (``kwargs``: ``n_resamples``, ``random_state``);
        ``scale`` as :meth:`phi`."""
        from .plots import plot_dstudy

        if kwargs and not bands:
            raise InputError(f"{sorted(kwargs)} are options of the bootstrap bands; pass bands=True or drop them.")
        table = (self.dstudy_intervals(grid, level=level, scale=scale, **kwargs) if bands
                 else self.dstudy(grid, scale=scale))
        facets = list(grid)
        column = "phi" if kind == "absolute" else "phi_relative"
        extra: dict[str, Any] = {"lower": f"{column}_lower", "upper": f"{column}_upper"} if bands else {}
        return plot_dstudy(table, x=facets[0], trace=facets[1] if len(facets) > 1 else None, y=column, threshold=target,
                           **extra)

    def cheapest_design(self, target: float = 0.8, *, max_n: Mapping[str, int],
                        cost_per_unit: Mapping[str, float] | None = None, cost_per_observation: float = 0.0,
                        kind: str = "absolute", confidence: float | None = None, scale: str | None = None,
                        bound: str | None = None, **kwargs: Any) -> _rel.DesignChoice:
        """The cheapest facet sample sizes reaching ``target`` (see :func:`mixeval.reliability.cheapest_design`);
        with ``confidence`` (e.g. 0.9), the cheapest whose lower confidence bound (``bound``: studentized or
        basic-logit) reaches it; ``scale`` as :meth:`phi`."""
        self._supported("cheapest_design")
        draws = kwargs.pop("draws", None)
        if confidence is not None and draws is None:
            from .uncertainty import component_draws

            draws = component_draws(self.fit, **kwargs)  # n_resamples=, random_state=, progress=
        elif kwargs:
            raise InputError(f"{sorted(kwargs)} are options of the bootstrap draws, which cheapest_design makes only "
                             "for confidence= without draws=; drop them.")
        return _rel.cheapest_design(self.fit, self.item, target, max_n=max_n, cost_per_unit=cost_per_unit,
                                    cost_per_observation=cost_per_observation, kind=kind, confidence=confidence,
                                    draws=draws, scale=scale, bound=bound)

    # ---------------------------------------------------------------- uncertainty (mixeval.uncertainty)
    def confint(self, *, method: str = "profile", level: float = 0.95, **kwargs: Any):
        """Confidence intervals of the REML fit's parameters (see :func:`mixeval.uncertainty.confint`)."""
        from .uncertainty import confint

        self._supported("confint", method)
        return confint(self.fit, method=method, level=level, **kwargs)

    def phi_interval(self, n: Mapping[str, float] | None = None, *, kind: str = "absolute", level: float = 0.95,
                     **kwargs: Any):
        """phi with its parametric-bootstrap interval, a :class:`~mixeval.ConfidenceInterval` with ``estimate`` and
        ``se`` (see :func:`mixeval.uncertainty.phi_interval`; ``scale=`` as :meth:`phi`)."""
        from .uncertainty import phi_interval

        self._supported("phi_interval")
        return phi_interval(self.fit, self.item, n, kind=kind, level=level, **kwargs)

    def dstudy_intervals(self, grid: Mapping[str, Sequence[int]], *, level: float = 0.95, **kwargs: Any) -> pd.DataFrame:
        """The D-study with an interval for every cell (see :func:`mixeval.uncertainty.dstudy_intervals`; ``scale=``
        as :meth:`phi`)."""
        from .uncertainty import dstudy_intervals

        self._supported("dstudy_intervals")
        return dstudy_intervals(self.fit, self.item, grid, level=level, **kwargs)

    def power(self, *, n: Mapping[str, Sequence[int] | int], delta: float | None = None,
              effect: float | None = None, fixed: Mapping[str, float] | None = None,
              pair: tuple[str, str] | None = None, alpha: float = 0.05, test: str | Sequence[str] = "glrt",
              margin: float | None = None, lower_is_better: bool = False, df: str | None = None,
              n_resamples: int = 500, random_state: Any = None, replicates: int | None = None,
              progress: bool | None = None):
        """Power of the system comparison by simulation from this study's fit with a changed design, for every
        family and random-effects structure: the GLRT, the pairwise Wald test with the Study's df rule, equivalence
        and non-inferiority (see :func:`mixeval.uncertainty.study_power`)."""
        from .uncertainty import study_power

        return study_power(self, n=n, delta=delta, effect=effect, fixed=fixed, pair=pair, alpha=alpha, test=test,
                           margin=margin, lower_is_better=lower_is_better, df=df, n_resamples=n_resamples,
                           random_state=random_state, replicates=replicates, progress=progress)

    # ---------------------------------------------------------------- significance
    def _require_system(self, effect: str | None) -> str:
        effect = effect or self.system
        if effect is None:
            from formulaic import Formula

            data = self.data if self.data is not None else pd.DataFrame()
            numeric = [v for v in sorted(map(str, Formula(self.parsed.fixed).required_variables))
                       if v in data.columns and _numeric_codes(data[v])]
            hint = (f" If {numeric[0]!r} codes the systems: {numeric_system_message(data[numeric[0]])}"
                    if numeric else "")
            raise InputError(f"this study has no system factor: the fixed part of {self.formula!r} has no categorical "
                             "variable to compare; add the systems' column to it (and name it with system= or "
                             f"--system), or pass effect= here.{hint}")
        return effect

    def null_formula(self, effect: str | None = None) -> str:
        """The study's formula without every fixed term involving ``effect`` (the GLRT's null model)."""
        return self._formula_with(drop_fixed_effect(self.parsed.fixed, self._require_system(effect)))

    def glrt(self, effect: str | None = None) -> TestResult:
        """GLRT of ``effect`` (default: the system): ML fits of the formula and of :meth:`null_formula`."""
        self._supported("glrt")
        null = self._fit_formula(self.null_formula(effect), reml=False)
        return compare(self.fit_ml, null)

    def glrt_averaged(self, over: str, effect: str | None = None) -> TestResult:
        """Table 4.1's first test: average the score over ``over`` per (item, effect), then compare linear
        models (:func:`mixeval.significance.glrt_averaged` on the study's columns). Families whose table leaves it
        out refuse it (an ordinal Study: averaging ratings treats them as equally spaced numbers, which the ordinal
        model does not)."""
        from .significance import glrt_averaged

        self._supported("glrt_averaged")
        rows = self._require_rows("Study.glrt_averaged")
        return glrt_averaged(rows, score=self.parsed.response, system=self._require_system(effect),
                             item=self.item, over=over)

    def variance_lrt(self, component: str, *, n_resamples: int | None = None,
                     random_state: Any = None) -> TestResult:
        """Likelihood-ratio test of one variance component on REML fits (``anova(..., refit = FALSE)``).

        ``H0: sigma^2 = 0`` lies on the boundary of the parameter space, so ``pvalue`` is the Self-Liang
        50:50 mixture of chi2(0) and chi2(1) (half the naive chi2(1) p-value that lmerTest's ``ranova`` and
        lme4's ``anova`` print); ``details["pvalue_naive"]`` holds that naive one. For a term with slopes (more
        than one parameter per dropped term) no simple mixture applies and ``pvalue`` is the naive chi-square
        p-value, which is conservative (``details["reference"]`` says which was used). GLMMs and ordinal Studies
        compare ML fits.

        The mixture is asymptotic in the number of levels; for a component from few levels (3 seeds, 4 raters)
        ``n_resamples=`` gives a parametric-bootstrap p-value instead (pbkrtest's ``PBmodcomp``: responses
        simulated from the fit without the component, both models refitted; ``random_state=`` seeds it;
        :func:`mixeval.significance._bootstrap_lrt.bootstrap_lrt`), with the mixture's in
        ``details["pvalue_mixture"]``.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"item": np.repeat(np.arange(30), 4), "rater": np.tile([1, 2, 3, 4], 30)})
        >>> df["score"] = rng.normal(size=30)[df["item"]] + rng.normal(0, 0.5, 4)[df["rater"] - 1] + rng.normal(size=120)
        >>> res = Study(df, "score ~ (1|item) + (1|rater)").variance_lrt("rater")
        >>> bool(res.pvalue == res.details["pvalue_naive"] / 2), res.alternative
        (True, 'greater')
        """
        self._supported("variance_lrt")
        names = [t.name for t in self.parsed.random]
        if component not in names:
            raise InputError(f"{component!r} is not a random effect of {self.formula!r}; random effects: {', '.join(names)}.")
        if random_state is not None and n_resamples is None:
            raise InputError("random_state= seeds the parametric bootstrap of variance_lrt; give n_resamples= too "
                             "(e.g. 200), or drop random_state=.")
        kept = [g for g in names if g != component]
        if self.family.engine != "lmer":
            if not kept:
                raise InputError(f"a GLMM needs a random effect; {component!r} is the only one of {self.formula!r}.")
            full, null = self.fit_ml, self._fit_formula(self._formula_with(self.parsed.fixed, kept), reml=False)
            naive = compare(full, null)
        else:
            full = self.fit if self.reml else self.fit.refit(REML=True)  # REML fits on both sides, whatever reml=
            null = self._fit_formula(self._formula_with(self.parsed.fixed, kept), reml=True)
            naive = compare(full, null, refit=False)
        from dataclasses import replace

        from .mixed.engine import boundary_mixture_pvalue

        details, n_terms = dict(naive.details, pvalue_naive=naive.pvalue), names.count(component)
        if naive.df == n_terms:  # one variance per dropped term: the Self-Liang mixture
            details.update(pvalue_boundary=boundary_mixture_pvalue(naive.statistic, n_terms),
                           reference=f"boundary mixture of chi2(0..{n_terms})")
        else:
            details.pop("pvalue_boundary", None)
            details["reference"] = f"naive chi2({naive.df:g}), conservative: no simple boundary mixture for slopes"
        pvalue = details.get("pvalue_boundary", naive.pvalue)
        if n_resamples is not None:
            from .significance.engine import bootstrap_lrt

            boot = bootstrap_lrt(null, full, naive.statistic, reml=self.family.engine == "lmer", n_resamples=n_resamples,
                                 random_state=random_state)
            details.update(pvalue_mixture=pvalue, **{k: v for k, v in boot.items() if k != "pvalue"})
            finite = int(np.isfinite(boot["null_distribution"]).sum())
            details["reference"] = f"parametric bootstrap ({finite} refits under the null)"
            pvalue = boot["pvalue"]
        return replace(naive, pvalue=pvalue, alternative="greater", details=details,
                       method=f"likelihood-ratio test of var({component}) = 0, {details['reference']}")

    def emmeans(self, specs: str | None = None, *, by: str | None = None, df: str | None = None,
                type: str | None = None, marginal: bool = False, delta: float | None = None,
                side: str | None = None, null: float | None = None, adjust: str | None = None) -> pd.DataFrame:
        """Estimated marginal means of ``specs`` (default: the system); ``df`` as :func:`mixeval.significance.emmeans`.

        ``df`` defaults to emmeans' rule: for Gaussian Studies Kenward-Roger (pbkrtest's) up to 3,000 observations
        (``pbkrtest.limit``; random slopes included), where Kenward-Roger is not available (an ML fit, aggregates)
        Satterthwaite (lmerTest's) up to 3,000 (``lmerTest.limit``), and asymptotic z above; for ``family=``
        Studies z (emmeans' for glmer and clmm fits). ``df="asymptotic"`` gives the book's z intervals (Table 4.2),
        ``"satterthwaite"`` lmerTest's (Gaussian) or the linearised model's (SAS GLIMMIX's) t,
        ``"kenward-roger"`` pbkrtest's (Gaussian; weighted fits with the weighted residual covariance) and
        ``"satterthwaite-upper"`` an experimental method for components from few levels (refused outside the
        balanced, crossed random-intercept designs it was calibrated on). With the default a
        :class:`~mixeval.errors.FewLevelsWarning` says when a component from few levels may carry so much of a
        mean's variance that the intervals undercover.

        With ``family=``: ``type="response"`` (default) or ``type="link"`` (the logit scale). On the response
        scale ``marginal=False`` (default) gives the accuracy of a typical item and seed (random effects at 0;
        emmeans' ``type = "response"``), ``marginal=True`` the marginal (population-averaged) accuracy, the
        mean over items and seeds, with its delta-method z interval
        (:func:`mixeval.significance.emmeans_response`). Ordinal Studies: ``type=`` one of emmeans' modes, the
        probability modes for a typical item and rater (``marginal=False``) or population-averaged
        (``marginal=True``). The table's ``attrs`` name the scale, the fit criterion, the df method and, for the
        default, why it was chosen (``attrs["df_rule"]``; ``attrs["note"]`` in words).

        ``delta``, ``side``, ``null``, ``adjust``: tests of the means on the table's scale (emmeans'
        ``test(emm, null, delta, side, adjust)``; on the response scale its ``regrid``), e.g. ``null=0.25,
        side=">"`` for accuracy above chance, or ``null=0.9, delta=0.02`` for equivalence to 90% within two
        points (:func:`mixeval.significance.margin_tests`).
        """
        from .significance import emmeans, emmeans_response, margin_tests
        from .significance.engine import note_df_rule, warn_few_levels

        self._supported("emmeans")
        _check_margin(delta, side)
        _require_margin_scale(self.family, type, "type", _margin_text(delta=delta, null=null))
        specs = specs or self._require_system(None)
        method, rule = _df_for(df, self.family, self.fit)
        if self.family.engine == "clmm":
            from .significance import ORDINAL_MODES, emmeans_ordinal

            mode = _scale(type, ORDINAL_MODES, "type")
            table = emmeans_ordinal(cast("ClmmResult", self.fit), specs, by=by, mode=mode, df=method, **_ordinal_marginal(marginal, mode))
        else:
            if type is not None and self.family.engine == "lmer":
                raise InputError(f"type={type!r} applies to Studies with family= (a GLMM's response or link scale); a "
                                 "Gaussian Study's means are on the score's own scale (leave type out).")
            response = self.family.engine == "glmer" and _scale(type, ("response", "link"), "type") == "response"
            if marginal and not response:
                raise InputError("marginal=True averages the response-scale means over the random effects; it needs "
                                 "family= and type='response'.")
            table = (emmeans_response(self.fit, specs, by=by, df=method, marginal=marginal) if response
                     else emmeans(self.fit, specs, by=by, df=method))
        if df is None:
            warn_few_levels(self.fit, specs, by, contrasts=False, method=method)
        if not (delta is None and side is None and null is None and adjust is None):
            table = margin_tests(table, delta=delta, side=side, null=null, adjust=adjust, by=by)
        return note_df_rule(table, rule)

    def pairwise(self, specs: str | None = None, *, by: str | None = None, adjust: str = "tukey",
                 level: float = 0.95, df: str | None = None, scale: str | None = None, marginal: bool = False,
                 delta: float | None = None, side: str | None = None):
        """All pairwise contrasts of estimated marginal means (Table 4.2), adjusted for multiplicity.

        ``df``: by default emmeans' rule (Kenward-Roger for Gaussian Studies of up to 3,000 observations, else
        Satterthwaite or z; z with ``family=``; see :meth:`emmeans`, also for the FewLevelsWarning);
        ``"asymptotic"`` (z tests, the book's Table 4.2), ``"satterthwaite"``, ``"kenward-roger"`` (Gaussian fits) or
        ``"satterthwaite-upper"`` (experimental). The result's ``df_method`` names the method and ``df_rule`` why
        the default chose it (both printed with the notes). With ``family=``: ``scale="ratio"`` (default; odds
        ratios for the logit link, rate ratios for the log link), ``"difference"`` (differences of the
        response-scale means: accuracy differences; ``marginal=True`` for differences of the marginal,
        population-averaged, accuracies) or ``"link"``. With the default ``reml`` (the Laplace ML fit) the
        numbers are glmer + emmeans'. Ordinal Studies: ``scale=`` one of emmeans' ordinal modes (``marginal=True``
        for the population-averaged probabilities); a ratio scale is refused.

        ``delta``/``side``: equivalence (TOST, the default with ``delta``), non-inferiority (``side=">"``: H0
        ``estimate <= -delta``, when larger is better) or ``side="<"`` tests on the contrasts' scale, emmeans'
        ``test(pairs, delta, side)``: accuracy points for ``scale="difference"``, log odds (rate) ratios for
        ``scale="ratio"`` (where emmeans tests ratios), the score's units for Gaussian Studies
        (:func:`mixeval.significance.pairwise`).
        """
        from .significance import margin_tests, pairwise, pairwise_differences, pairwise_ratios
        from .significance.engine import note_df_rule, warn_few_levels

        self._supported("pairwise")
        _check_margin(delta, side)
        _require_margin_scale(self.family, scale, "scale", _margin_text(delta=delta))
        specs = specs or self._require_system(None)
        method, rule = _df_for(df, self.family, self.fit)
        if self.family.engine == "clmm":
            from .significance import ORDINAL_MODES, pairwise_ordinal

            mode = _scale(scale, ORDINAL_MODES, "scale")
            result = pairwise_ordinal(cast("ClmmResult", self.fit), specs, by=by, mode=mode, adjust=adjust, level=level, df=method,
                                      **_ordinal_marginal(marginal, mode))
        else:
            chosen = None
            if self.family.engine == "glmer":
                default = "ratio" if self.family.ratio_name else "difference"
                chosen = _scale(scale or default, ("ratio", "difference", "link"), "scale")
            elif scale is not None:
                raise InputError(f"scale={scale!r} applies to Studies with family= (GLMMs, ordinal ratings); a "
                                 "Gaussian Study's contrasts are differences of means on the score's own scale (leave "
                                 "scale out).")
            if marginal and chosen != "difference":
                raise InputError("marginal=True compares the marginal (population-averaged) response-scale means; it "
                                 "needs family= and scale='difference'.")
            if chosen == "ratio":
                result = pairwise_ratios(self.fit, specs, by=by, adjust=adjust, level=level, df=method)
            elif chosen == "difference":
                result = pairwise_differences(self.fit, specs, by=by, adjust=adjust, level=level, df=method,
                                              marginal=marginal)
            else:
                result = pairwise(self.fit, specs, by=by, adjust=adjust, level=level, df=method)
        if df is None:
            warn_few_levels(self.fit, specs, by, contrasts=True, method=method)
        if delta is not None or side is not None:
            result = margin_tests(result, delta=delta, side=side)
        return note_df_rule(result, rule)

    def contrast(self, method: Any = "trt.vs.ctrl", *, ref: str | None = None, specs: str | None = None,
                 by: str | None = None, adjust: str | None = None, level: float = 0.95, df: str | None = None,
                 delta: float | None = None, side: str | None = None):
        """Contrasts of the marginal means of ``specs`` (default: the system) other than all pairs: every system
        against a baseline ``ref`` (Dunnett), consecutive levels, effects, custom weights
        (:func:`mixeval.significance.contrast`; on the link scale for a Study with family=). ``delta``/``side``
        test them against a margin (e.g. ``ref="teacher", delta=0.02, side=">"``: is every student not worse than
        the teacher by more than 0.02?)."""
        from .significance import contrast
        from .significance.engine import note_df_rule

        self._supported("contrast")
        specs = specs or self._require_system(None)
        df_method, rule = _df_for(df, self.family, self.fit)
        return note_df_rule(contrast(self.fit, specs, method, ref=ref, by=by, adjust=adjust, level=level,
                                     df=df_method, delta=delta, side=side), rule)

    def joint_tests(self, *, by: str | None = None, df: str | None = None) -> pd.DataFrame:
        """F tests of every fixed-effect term of the Study's model (:func:`mixeval.significance.joint_tests`;
        ``df="satterthwaite"``: lmerTest's type III ``anova``). By default the df of :meth:`emmeans`'s rule, with
        Satterthwaite in place of Kenward-Roger (whose scaled F is not implemented)."""
        from .significance import joint_tests
        from .significance.engine import note_df_rule

        self._supported("joint_tests")
        method, rule = _df_for(df, self.family, self.fit)
        if df is None and method == "kenward-roger" and rule is not None:
            method, rule = "satterthwaite", rule.replace("the default: emmeans'", "the default: Satterthwaite in place of "
                                                         "Kenward-Roger (whose scaled F is not implemented), emmeans'")
        return note_df_rule(joint_tests(self.fit, by=by, df=method), rule)

    def conditional(self, prop: str, cuts: Sequence[float] | None = None, labels: Sequence[str] | None = None,
                    *, adjust: str = "tukey", df: str | None = None, level: float = 0.95,
                    delta: float | None = None, side: str | None = None) -> tuple[TestResult, Any, Study]:
        """Comparisons conditional on a data property (Table 4.3; slopes for a numeric property).

        Parameters
        ----------
        prop : str
            A column of the data: a categorical property, or a numeric one (binned at ``cuts`` if given).
        cuts, labels : optional
            Cut points (right-closed classes, as :func:`bin_property`) and class labels.
        adjust : str, default "tukey"
            Multiplicity adjustment of the pairwise contrasts (see :func:`mixeval.significance.pairwise`).
        df : {"asymptotic", "satterthwaite", "kenward-roger", "satterthwaite-upper"}, optional
            Degrees of freedom of the contrasts; by default emmeans' rule on the conditional fit (Kenward-Roger for
            Gaussian fits of up to 3,000 observations, z with ``family=``; see :meth:`emmeans`;
            ``"satterthwaite-upper"`` is experimental).
        level : float, default 0.95
            Confidence level of the intervals.
        delta, side : optional
            Test the contrasts (or the slope contrasts) against a margin, as :meth:`pairwise`.

        Returns
        -------
        glrt : TestResult
            Classes (categorical ``prop`` or ``cuts``): the GLRT of every system term of ``system * class``
            against ``class`` alone. Numeric ``prop`` without cuts: the GLRT of the interaction,
            ``system * prop`` against ``system + prop`` (do the systems' slopes differ?).
        pairs : PairwiseResult
            Classes: the pairwise contrasts of systems within each class. Numeric ``prop``: the pairwise
            contrasts of the systems' slopes in ``prop`` (``pairs.trend == prop``; the slopes with their
            intervals are ``pairs.emmeans``, emmeans' ``emtrends``), each with ``effect_size`` =
            estimate / residual SD.
        cond : Study
            The conditional Study (``system * class`` or ``system * prop``), for plots
            (:func:`mixeval.significance.plot_emmeans`, :func:`mixeval.significance.plot_trends`).

        Raises
        ------
        InputError
            Non-numeric ``cuts``, cuts leaving fewer than two non-empty classes, an unknown ``adjust``
            or ``df`` (checked before any fit, whatever the number of contrasts).

        Warns
        -----
        MixevalWarning
            Cuts leaving some classes empty (named in the message); those classes are left out.
        """
        from .significance.engine import canonical_adjust

        self._supported("conditional")
        canonical_adjust(adjust)
        _check_margin(delta, side)
        _resolve_df(df, self.family)  # checked before any fit; None: each table's own default (emmeans' rule)
        system = self._require_system(None)
        rows = self._require_rows("Study.conditional")
        check_property(self, prop, f"prop={prop!r}")
        if cuts is None and _is_numeric_property(rows[prop]):
            if self.family.engine == "clmm":
                raise InputError(f"Study.conditional({prop!r}) with a numeric property compares the systems' slopes "
                                 "(emtrends), which is not available for ordinal fits; pass cuts= to compare the "
                                 "systems within classes of the property instead.")
            from .significance import pairwise_trends

            cond = Study(self.data, self._formula_with(f"{system} * {prop}"), item=self.item, system=system,
                         metric_model=self.metric_model, **self._glmm_kwargs(self.data))
            from .significance.engine import note_df_rule

            null = cond._fit_formula(self._formula_with(f"{system} + {prop}"), reml=False)
            method, rule = _df_for(df, self.family, cond.fit)
            pairs = pairwise_trends(cond.fit, system, prop, adjust=adjust, df=method, level=level)
            if delta is not None or side is not None:
                from .significance import margin_tests

                pairs = margin_tests(pairs, delta=delta, side=side)
            return compare(cond.fit_ml, null), note_df_rule(pairs, rule), cond
        if self.family.engine != "lmer" and delta is not None:
            raise InputError(f"delta={delta!r}: a margin of a {self.family.name} Study's comparisons within classes of "
                             f"{prop!r} is on a scale you must name, which conditional() does not take; call it "
                             "without delta=, then .pairwise(by=..., scale=..., delta=...) on the Study it returns "
                             "(its third value).")
        data, cls = rows, prop
        if cuts is not None:
            cls = f"{prop}_class"
            data = _drop_empty_classes(bin_property(rows, prop, _numeric_cuts(cuts), labels, name=cls), prop, cls)
        cond = Study(data, self._formula_with(f"{system} * {cls}"), item=self.item, system=system,
                     metric_model=self.metric_model, **self._glmm_kwargs(data))
        return cond.glrt(), cond.pairwise(system, by=cls, adjust=adjust, df=df, level=level, delta=delta,
                                          side=side), cond

    # ---------------------------------------------------------------- metric models and validity
    def metric_comparisons(self, *, control: str | None = None, methods: Sequence[str] | None = None,
                           level: float = 0.95, gold: pd.DataFrame | None = None, truth: str = "truth",
                           n_resamples: int = 2000, random_state: Any = None) -> pd.DataFrame:
        """System comparisons corrected for the errors of the metric model (Goyal et al.; beyond).

        The score must be a binary judgement (0/1) by the study's ``metric_model``; observations are paired
        by the study's item factor. See :func:`mixeval.metric_model.metric_comparisons` for the methods and
        the assumption under which each interval is calibrated.
        """
        from .metric_model import metric_comparisons

        self._supported("metric_comparisons")
        rows = self._require_rows("Study.metric_comparisons")
        if self.metric_model is None:
            raise InputError("this study has no metric model: pass metric_model=MetricModel.from_rates(...) "
                             "or .from_confusion(...) to Study.")
        return metric_comparisons(rows, metric=self.metric_model, system=self._require_system(None),
                               score=self.parsed.response, item=self.item, control=control, methods=methods,
                               level=level, gold=gold, truth=truth, n_resamples=n_resamples,
                               random_state=random_state)

    def circularity(self, target: str | None = None, features: list[str] | None = None, **kwargs: Any):
        """The circularity test of Definition 2.5 on this study's data (default target: the score).

        See :func:`mixeval.validity.circularity_test` for the options (``top``, ``family``, thresholds).
        """
        from .validity import circularity_test

        return circularity_test(self._require_rows("Study.circularity"), target or self.parsed.response, features, **kwargs)

    # ---------------------------------------------------------------- report
    def report(self, *, conditional_on: str | None = None, cuts: Sequence[float] | None = None,
               labels: Sequence[str] | None = None, **kwargs: Any):
        """The whole picture as a :class:`mixeval.report.Report` (text, notebook display, one HTML file).

        See :func:`mixeval.report.build_report` for the options.
        """
        from .report import build_report

        self._supported("report")
        self._require_rows("Study.report")
        return build_report(self, conditional_on=conditional_on, cuts=cuts, labels=labels, **kwargs)

    # ---------------------------------------------------------------- display
    def summary(self) -> str:
        """Roles, size and the variance components."""
        lines = [f"Study: {self.formula}", f"  {self._size()}; items: {self.item!r}; system: {self.system!r}"]
        table = self.variance_components()
        lines.append(text_table(table, width=terminal_width()))
        if "note" in table.attrs:
            lines.append(table.attrs["note"])
        return "\n".join(lines)

    def _size(self) -> str:
        return f"{len(self.data)} rows" if self.data is not None else f"{self.fit.nobs} rows (from aggregates)"

    def __repr__(self) -> str:
        fam = f", family={self.family.name!r}" if self.family.engine != "lmer" else ""
        return f"Study({self.formula!r}, {self._size()}, item={self.item!r}, system={self.system!r}{fam})"

    def _repr_html_(self) -> str:
        return (f"<p><b>Study</b> <code>{self.formula}</code>: {self._size()}, items <code>{self.item}</code>, "
                f"system <code>{self.system}</code></p>" + self.variance_components().to_html(index=False))
