"""Filling a Report from a Study: data, reliability, omnibus and pairwise tests, conditional comparisons."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from .._progress import progress as _progress
from ..errors import InputError, InputTypeError, recorded_warnings
from ._blocks import Note, Section
from ._report import Report
from ._sections import comparison_section, conditional_section, data_section, trend_section, variance_section

__all__ = ["build_report", "default_dstudy_grid", "interaction_test", "reliability_coefficients", "report_call",
           "ADJUSTMENTS", "MEAN_LABEL"]

#: the column name of estimated marginal means in the report's tables (emmeans calls it ``emmean``)
MEAN_LABEL = "estimated marginal mean"
_MEAN_COLUMNS = (MEAN_LABEL, "emmean", "estimate", "mean", "response", "prob", "rate")
_SE_COLUMNS = ("SE", "se", "std_error", "std.error")


def _facets(study: Any) -> list[str]:
    """Grouping columns of the random part other than the item and the system (e.g. rater, seed).

    Facets that interact with the items (``item:rater``) come first: they are the measurement
    facets a D-study varies first.
    """
    out: list[str] = []
    names = [term.name.split(":") for term in study.parsed.random]
    crossed = [f for factors in names if study.item in factors for f in factors]
    for factors in sorted(names, key=lambda fs: study.item not in fs):
        for factor in factors:
            if factor not in (study.item, study.system) and factor in study.data.columns and factor not in out:
                out.append(factor)
    return sorted(out, key=lambda f: f not in crossed)


def default_dstudy_grid(study: Any, facets: Sequence[str] | None = None) -> dict[str, list[int]]:
    """Up to two facets of the study: the first 1..10 conditions, the second 1..3 (Figure 3.3's layout).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import Study
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(20), 4), "rater": np.tile([1, 2, 1, 2], 20),
    ...                    "occasion": np.tile([1, 1, 2, 2], 20)})
    >>> df["score"] = rng.normal(size=20)[df.item] + rng.normal(size=80)
    >>> grid = default_dstudy_grid(Study(df, "score ~ (1|item) + (1|rater) + (1|occasion)", item="item"))
    >>> {k: (v[0], v[-1]) for k, v in grid.items()}
    {'rater': (1, 10), 'occasion': (1, 3)}
    >>> default_dstudy_grid(None, ["rater"])
    {'rater': [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}
    """
    facets = list(facets) if facets is not None else _facets(study)
    sizes = (list(range(1, 11)), [1, 2, 3])
    return {f: s for f, s in zip(facets[:2], sizes)}


#: the p-value adjustments by name, as the report defines them
ADJUSTMENTS = {
    "tukey": "Tukey's method (studentized range) for comparing a family of {n} estimates",
    "holm": "Holm's step-down method over the {n} contrasts",
    "bonferroni": "Bonferroni's method over the {n} contrasts",
    "bh": "Benjamini and Hochberg's false discovery rate over the {n} contrasts",
    "sidak": "Sidak's method over the {n} contrasts",
    "dunnettx": "Dunnett's method (emmeans' dunnettx approximation) for the {n} comparisons with the control",
    "mvt": "the exact simultaneous method (multivariate t) over the {n} contrasts",
    "none": "no adjustment",
}


def _method_note(result: Any) -> Note | None:
    """What the comparisons' columns are and how they were made: fit criterion, df, the p-value adjustment by name,
    the interval, ``effect_size`` (None when the result names neither criterion nor df method)."""
    from ..significance.engine import footer

    criterion, method = getattr(result, "fit_criterion", ""), getattr(result, "df_method", "")
    if not (criterion and method):
        return None
    scale, rule = getattr(result, "scale", ""), getattr(result, "df_rule", "")
    parts = [footer(criterion, method) + (f" ({rule})" if rule else "") + (f"; scale: {scale}" if scale else "") + "."]
    adjust = str(getattr(result, "adjust", "") or "")
    n = getattr(result, "n_per_family", None) or getattr(result, "family_size", None) or "the"
    if adjust:
        named = ADJUSTMENTS.get(adjust.lower(), f"the {adjust} method").format(n=n)
        parts.append(f"pvalue: adjusted by {named}" + ("" if adjust.lower() == "none" else
                                                         "; pvalue_unadjusted: the same test without adjustment") + ".")
    level = getattr(result, "level", None)
    if level:
        ci = str(getattr(result, "ci_method", "") or "")
        parts.append(f"lower, upper: {100 * float(level):g}% confidence interval"
                     + (f", adjusted by {ADJUSTMENTS.get(ci.lower(), ci).format(n=n)}"
                        if ci and ci.lower() not in ("none", "") else "") + ".")
    if getattr(result, "effect_size_note", None):
        parts.append(f"{result.effect_size_note}: the difference in units of that standard deviation "
                     "(a standardised mean difference).")
    return Note(" ".join(parts), "note")


def _interacting(study: Any) -> list[str]:
    """The fixed-effect variables the system interacts with in the study's formula (``system * length_class``)."""
    fixed = study.formula.split("~", 1)[1]
    out: list[str] = []
    for term in fixed.split("+"):
        if "(" in term or ("*" not in term and ":" not in term):
            continue
        factors = [f.strip() for f in term.replace("*", ":").split(":")]
        if study.system in factors:
            out += [f for f in factors if f != study.system and f not in out]
    return out


def _averaging_caveat(study: Any, conditional_on: str | None) -> Note | None:
    """emmeans' "results may be misleading due to involvement in interactions", in words."""
    others = _interacting(study)
    if not others:
        return None
    names = " and ".join(others)
    where = (f" Read them per class under 'Comparisons conditional on {conditional_on}'."
             if conditional_on in others else f" Compare the systems within each level of {names} instead.")
    return Note(f"These means and contrasts average over {names} (equal weights, as emmeans). The model has a "
                f"{study.system} x {names} interaction, so the differences between the systems may change with "
                f"{names}, and their average can hide that." + where, "warning")


def _with_note(section: Section, note: Note | None) -> Section:
    """``section`` with ``note`` appended (unchanged for None)."""
    if note is None:
        return section
    return Section(section.title, section.blocks + (note,), section.summary, section.text_tables)


def _with_warnings(section: Section, texts: Sequence[str]) -> Section:
    """``section`` with a warning note for each of ``texts`` (the warnings raised while it was made)."""
    for text in texts:
        section = _with_note(section, Note(text, "warning"))
    return section


def _as_frame(result: Any, what: str) -> pd.DataFrame:
    """A DataFrame from a comparisons result (a DataFrame, or an object holding one)."""
    if isinstance(result, pd.DataFrame):
        return result
    for attribute in ("contrasts", "table", "frame"):
        value = getattr(result, attribute, None)
        if isinstance(value, pd.DataFrame):
            return value
    to_frame = getattr(result, "to_frame", None)
    if callable(to_frame):
        frame = to_frame()
        if isinstance(frame, pd.DataFrame):
            return frame
    raise InputTypeError(f"cannot show the {what} ({type(result).__name__}) as a table.")


def _pick(frame: pd.DataFrame, candidates: Sequence[str]) -> str | None:
    return next((c for c in candidates if c in frame.columns), None)


def interaction_test(cond: Any, system: str, cls: str) -> Any:
    """GLRT of the interaction: ML fits of ``system * cls`` (the conditional Study) and ``system + cls``.

    The test ``Study.conditional`` returns drops every system term (``system * cls`` against ``cls``); this one
    asks whether the differences between the systems change from class to class.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import Study
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame({"item": np.repeat(np.arange(40), 2), "system": np.tile(["A", "B"], 40)})
    >>> df["cls"] = np.where(df["item"] < 20, "short", "long")
    >>> gap = 0.5 * (df["system"] == "B") * (df["cls"] == "long")
    >>> df["score"] = rng.normal(size=40)[df["item"]] + gap + rng.normal(0, 0.3, size=80)
    >>> glrt, pairs, cond = Study(df, "score ~ system + (1|item)").conditional("cls")
    >>> test = interaction_test(cond, "system", "cls")
    >>> int(glrt.df), int(test.df), bool(test.statistic < glrt.statistic)
    (2, 1, True)
    """
    from ..mixed import compare

    additive = cond._fit_formula(cond._formula_with(f"{system} + {cls}"), reml=False)
    return compare(cond.fit_ml, additive)


def _family_arguments(family: Any) -> list[tuple[str, str]]:
    """``family=`` (and a link other than the family's default) as Study's arguments; none for a Gaussian Study."""
    if family is None or getattr(family, "engine", "lmer") == "lmer":
        return []
    out = [("family", family.name)]
    return out + ([("link", family.link)] if family.link != family.links[0] else [])


def _latent_and_observed(study: Any) -> bool:
    """A Study whose family has a latent scale distinct from the observed one (not Gaussian)."""
    return study.family.engine != "lmer"


def report_call(study: Any, conditional_on: str | None = None, cuts: Sequence[float] | None = None,
                labels: Sequence[str] | None = None) -> str:
    """The Python call that makes the report from the study's data (its provenance).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> study = SimpleNamespace(formula="score ~ system + (1|item)", item="item", system="system", family=None)
    >>> report_call(study, "src_length", [15, 55])
    "build_report(Study(data, 'score ~ system + (1|item)', item='item', system='system'), conditional_on='src_length', cuts=[15, 55])"
    """
    roles = f"item={study.item!r}, system={study.system!r}"
    roles += "".join(f", {name}={value!r}" for name, value in _family_arguments(getattr(study, "family", None)))
    options = "".join(f", {name}={value!r}" for name, value in
                      (("conditional_on", conditional_on), ("cuts", list(cuts) if cuts is not None else None),
                       ("labels", list(labels) if labels is not None else None)) if value is not None)
    return f"build_report(Study(data, {study.formula!r}, {roles}){options})"


def reliability_coefficients(study: Any) -> dict[str, float]:
    """phi and the relative coefficient, each labelled with its scale and design: at the data's own design first
    (:meth:`~mixeval.Study.data_design`), then at one level of each facet; the observed scale first for binomial,
    Poisson and ordinal Studies, then the latent one.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval import Study
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame([(i, r) for i in range(30) for r in range(4)], columns=["item", "rater"])
    >>> df["score"] = rng.normal(size=30)[df.item] + rng.normal(size=120)
    >>> list(reliability_coefficients(Study(df, "score ~ (1|item) + (1|rater)")))[:2]
    ["phi at the data's design (rater = 4)", "relative at the data's design (rater = 4)"]
    """
    from ..reliability import resolve_scale

    lead = resolve_scale(study.fit, None)
    scales = [lead] + (["latent"] if lead == "observed" else [])
    own = study.data_design()
    designs = [(f"the data's design ({', '.join(f'{k} = {v}' for k, v in own.items())})", own)] if own else []
    designs.append(("one level of each facet", {}))
    out = {}
    for scale in scales:
        named = f" ({scale} scale)" if _latent_and_observed(study) else ""
        for label, n in designs:
            out[f"phi{named} at {label}"] = study.phi(n, scale=scale)
            out[f"relative{named} at {label}"] = study.phi(n, kind="relative", scale=scale)
    return out


def recovery_statement(components: pd.DataFrame, truth: Mapping[str, float]) -> str:
    """How far each estimated variance lies from a known true value, in asymptotic standard errors."""
    parts, worst = [], 0.0
    for row in components.to_dict("records"):
        name, variance, se = row["component"], row["variance"], row["se"]
        if name not in truth:
            continue
        z = (variance - truth[name]) / se if se and se > 0 else float("nan")
        worst = max(worst, abs(z)) if z == z else worst
        parts.append(f"{name}: estimate {variance:.4g} vs true {truth[name]:.4g} ({z:+.2f} SE)")
    verdict = ("every true variance lies within 2 standard errors of its estimate" if worst <= 2
               else f"the largest deviation is {worst:.1f} standard errors")
    return "Recovery of the simulated variance components: " + "; ".join(parts) + f". In short, {verdict}."


def build_report(
    study: Any,
    *,
    conditional_on: str | None = None,
    cuts: Sequence[float] | None = None,
    labels: Sequence[str] | None = None,
    dstudy_grid: Mapping[str, Sequence[int]] | None = None,
    title: str | None = None,
    meta: Mapping[str, str] | None = None,
    progress: bool = True,
    truth: Mapping[str, float] | None = None,
) -> Report:
    """The whole picture of an evaluation study as a :class:`Report`.

    Parameters
    ----------
    study : mixeval.study.Study
        The data, formula and roles (it needs a system factor).
    conditional_on : str, optional
        A data property (e.g. ``"src_length"``) for comparisons conditional on its classes.
    cuts, labels : sequence, optional
        Bin a numeric property at ``cuts`` into classes named ``labels`` (as
        ``Study.conditional``); the book uses ``cuts=(15, 55)``.
    dstudy_grid : mapping, optional
        Facet sizes of the D-study (default :func:`default_dstudy_grid`: the first facet 1..10,
        the second 1..3).
    title, meta : optional
        Report title and the facts shown under it. Unless ``meta`` names the ``command`` that made the report
        (the command line does, with the ``data`` file), the Python ``call`` is added (:func:`report_call`);
        the mixeval version and the date are added by :class:`Report`.
    progress : bool, default True
        Show a progress bar over the steps (it appears only when they take over 2 s).
    truth : mapping, optional
        Known variance components (simulated data): shown beside the estimates, with a statement of how
        many standard errors each estimate lies from the truth.

    Returns
    -------
    Report
        Sections: data; variance components and reliability (phi, relative coefficient, D-study);
        the omnibus GLRT of the system with the pairwise comparisons; comparisons conditional on
        ``conditional_on`` if given.

    Notes
    -----
    The GLRT compares ML fits of the study's formula and of the same formula without the system
    terms: ``W = 2 (l_1 - l_0) ~ chi2(k_1 - k_0)``. phi is Definition 3.2 with one condition of each
    facet; the D-study varies the facet sizes.

    Examples
    --------
    >>> from mixeval import datasets
    >>> from mixeval.study import Study
    >>> demo = datasets.load_demo()
    >>> study = Study(demo, "score ~ system * length_class + (1|item) + (1|system:seed) + (1|rater)"
    ...                     " + (1|item:rater)")
    >>> report = build_report(study)  # doctest: +SKIP
    >>> report.save("demo_report.html")  # doctest: +SKIP
    """
    for attribute in ("data", "formula", "item", "system", "parsed", "fit"):
        if not hasattr(study, attribute):
            raise InputTypeError(f"`study` must be a mixeval Study; got {type(study).__name__}.")
    if study.system is None:
        raise InputError("the report compares systems, but the study has no system factor: pass system= to Study.")
    score = study.parsed.response
    facets = _facets(study)
    grid = dict(dstudy_grid) if dstudy_grid is not None else default_dstudy_grid(study, facets)

    def data_part() -> Section:
        return data_section(study.data, score=score, system=study.system, item=study.item, facets=facets)

    def variance_part() -> Section:
        slopes = [t for t in study.parsed.random if t.lhs.replace(" ", "") != "1"]
        if slopes:  # phi has no single value when a facet's variance depends on a covariate
            g = slopes[0].name
            why = (f"Left out: the model has random slopes {', '.join(f'({t.lhs}|{t.name})' for t in slopes)}, so a "
                   "facet's variance depends on the covariate and has no single share of the total; phi, the "
                   "variance table and the D-study need random intercepts only. Report them from an "
                   f"intercept-only model (e.g. (1|{g}) + (1|{g}:{study.system}) in place of "
                   f"({slopes[0].lhs}|{g})).")
            return Section("Variance components and reliability", (Note(why, "warning"),),
                           summary=("left out: the model has random slopes (see the note)",))
        phi = reliability_coefficients(study)
        names = list(grid)
        table = study.dstudy(grid) if grid else None
        components = study.variance_components()
        se = study.fit.varcorr_se.set_index("group")["se"]
        components["se"] = components["component"].map(se)
        section = variance_section(
            components, phi=phi, dstudy=table,
            dstudy_x=names[0] if names else None, dstudy_trace=names[1] if len(names) > 1 else None,
            singular=bool(study.fit.singular), formula=study.formula, reference=truth,
        )
        notes = [components.attrs.get("note")]  # a GLMM (Study(..., family=)): the components' latent scale
        if _latent_and_observed(study):
            from ..reliability import scale_note

            notes += [f"{sc}: {scale_note(study.fit, sc)}" for sc in ("observed", "latent")]
            if table is not None:
                notes.append(f"The D-study is on the {table.attrs['scale']} scale.")
        extra = tuple(Note(text, "note") for text in notes if text)
        if extra:
            section = Section(section.title, section.blocks + extra, section.summary, section.text_tables)
        if truth is None:
            return section
        return Section(section.title, section.blocks + (Note(recovery_statement(components, truth), "note"),),
                       section.summary, section.text_tables)

    def comparison_part() -> Section:
        glrt = study.glrt()
        hypothesis = f"{study.formula}  against  {study.null_formula()}  (maximum-likelihood fits)"
        result = study.pairwise()
        section = comparison_section(glrt, pairwise=_as_frame(result, "pairwise comparisons"), hypothesis=hypothesis)
        return _with_note(_with_note(section, _averaging_caveat(study, conditional_on)), _method_note(result))

    def conditional_part() -> Section:
        glrt, pairwise, cond = study.conditional(str(conditional_on), cuts, labels)
        if getattr(pairwise, "trend", None) is not None:  # a numeric property: slopes (emtrends)
            from ..significance import plot_trends

            return _with_note(trend_section(
                pairwise.emmeans, trace=study.system, var=str(conditional_on),
                contrasts=_as_frame(pairwise, "slope comparisons"), glrt=glrt,
                figure=plot_trends(cond.fit, study.system, str(conditional_on)),
                title=f"Comparisons conditional on {conditional_on}",
            ), _method_note(pairwise))
        cls = str(conditional_on) if cuts is None else f"{conditional_on}_class"
        means = _as_frame(cond.emmeans(study.system, by=cls), "estimated marginal means")
        y = _pick(means, (*_MEAN_COLUMNS, study.family.response_label))  # a GLMM's: the family's label
        if y is None:
            raise InputError(f"cannot find the means among the columns {list(means.columns)}.")
        if y == "emmean":
            means, y = means.rename(columns={y: MEAN_LABEL}), MEAN_LABEL
        overall = study.glrt()
        same = cond.formula == study.formula or (
            glrt.df == overall.df and abs(glrt.statistic - overall.statistic) <= 1e-9 * max(1.0, abs(overall.statistic)))
        section = conditional_section(
            means, x=cls, trace=study.system, y=y, se=_pick(means, _SE_COLUMNS),
            contrasts=_as_frame(pairwise, "conditional comparisons"), glrt=None if same else glrt,
            interaction=interaction_test(cond, study.system, cls),
            title=f"Comparisons conditional on {conditional_on}",
        )
        if same:  # the study's model already has the interaction: its omnibus test is this one
            section = _with_note(section, Note(
                f"The test of the systems within each {cls} ({study.system} * {cls} against {cls}) is the "
                "likelihood-ratio test of 'Do the systems differ?' above: the model already has the interaction.",
                "note"))
        mean_note = Note(f"{MEAN_LABEL}: the model's mean of each {study.system} in each {cls} (emmeans' emmean), "
                         "with the random effects at 0 and other fixed factors averaged with equal weights.", "note")
        return _with_note(_with_note(section, mean_note), _method_note(pairwise))

    steps: list[tuple[str, Callable[[], Section]]] = [
        ("data", data_part), ("variance components", variance_part), ("significance", comparison_part)]
    if conditional_on is not None:
        steps.append((f"conditional on {conditional_on}", conditional_part))
    sections = []
    bar = _progress(steps, total=len(steps), desc="report", enabled=progress)
    for label, make in bar:
        if hasattr(bar, "set_postfix_str"):
            bar.set_postfix_str(label)
        with recorded_warnings() as warned:  # each warning also in the section it arose in
            section = make()
        sections.append(_with_warnings(section, warned))
    given = dict(meta or {})
    facts = {"data": given.pop("data")} if "data" in given else {}
    facts.update({"formula": study.formula, "rows": f"{len(study.data):,}", "items": study.item,
                  "system": study.system})
    facts.update(given)
    if "command" not in facts:  # how to make it again: the call (the command line passes its own)
        facts.setdefault("call", report_call(study, conditional_on, cuts, labels))
    return Report(title or f"Evaluation report: {score} by {study.system}", tuple(sections), facts)
