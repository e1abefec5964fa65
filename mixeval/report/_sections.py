"""Ready-made report sections from tidy results: data summary, variance components and reliability,
omnibus test with pairwise comparisons, conditional comparisons.

Each builder takes DataFrames / TestResults (whatever produced them) and returns a
:class:`~mixeval.report.Section` with tables, figures and the summary lines of the text report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .. import plots
from .._format import format_number, format_pvalue
from .._results import TestResult
from .._validation import require_columns, require_dataframe
from ..errors import InputError, InputTypeError
from ._blocks import Block, Figure, Note, Paragraph, Section, Table
from ._checks import check_evaluation_log

__all__ = ["data_section", "variance_section", "comparison_section", "conditional_section", "trend_section",
           "result_table"]

_P_COLUMNS = ("p.value", "pvalue", "p_value", "p", "p_adj", "p.adj", "padj", "Pr(>Chisq)")


def _pvalue_column(frame: pd.DataFrame, given: str | None) -> str | None:
    if given is not None:
        require_columns(frame, [given], "pairwise")
        return given
    lower = {str(c).lower(): c for c in frame.columns}
    for name in _P_COLUMNS:
        if name.lower() in lower:
            return lower[name.lower()]
    return None


def _p_text(p: float) -> str:
    """``p = 0.0123`` style, ``p < 2.2e-16`` below double precision's resolution (as R prints it)."""
    return "p " + format_pvalue(p, relation=True)


def data_section(
    data: pd.DataFrame,
    *,
    score: str,
    system: str,
    item: str,
    facets: Sequence[str] = (),
    title: str = "Data",
) -> Section:
    """Summary of an evaluation log: design (levels per role), score per system, box plots.

    Parameters
    ----------
    data : DataFrame
        Long format, one row per observation (checked by ``check_evaluation_log``).
    score, system, item : str
        Column names of the numeric score, the system label and the test item.
    facets : sequence of str
        Further grouping columns (raters, seeds, meta-parameters, ...).
    title : str
        Section title.

    Returns
    -------
    Section
        Tables "design" (column, role, levels, example values) and "score per system"
        (n, mean, sd, median, min, max), the box-plot figure, and summary lines.

    Notes
    -----
    ``sd`` is the sample standard deviation (divisor n - 1). The design is called balanced
    when every item has the same number of scores for every system.

    Examples
    --------
    >>> from mixeval import datasets
    >>> s = data_section(datasets.load_demo(), score="score", system="system", item="item",
    ...                  facets=["seed", "rater"])
    >>> s.summary[0]
    '7,200 rows: 200 items x 3 systems; facets: seed (3 levels), rater (4 levels)'
    """
    facets = [facets] if isinstance(facets, str) else list(facets)
    check_evaluation_log(data, score=score, system=system, item=item, facets=facets)
    roles = [("score", score), ("system", system), ("item", item)] + [("facet", f) for f in facets]
    design = pd.DataFrame(
        {
            "column": [c for _, c in roles],
            "role": [r for r, _ in roles],
            "levels": [np.nan if r == "score" else float(data[c].nunique()) for r, c in roles],
            "values": [
                f"{format_number(data[c].min())} .. {format_number(data[c].max())}" if r == "score"
                else ", ".join(map(str, pd.unique(data[c])[:4])) + (", ..." if data[c].nunique() > 4 else "")
                for r, c in roles
            ],
        }
    )
    design["levels"] = design["levels"].astype("Int64")
    grouped = data.groupby(system, sort=False, observed=True)[score]
    per_system = pd.DataFrame(
        {
            "n": grouped.size(),
            "mean": grouped.mean(),
            "sd": grouped.std(ddof=1),
            "median": grouped.median(),
            "min": grouped.min(),
            "max": grouped.max(),
        }
    )
    per_system.index.name = system
    cells = data.groupby([item, system], sort=False, observed=True).size()
    n_items, n_systems = data[item].nunique(), data[system].nunique()
    balanced = len(cells) == n_items * n_systems and cells.nunique() == 1
    facet_text = ", ".join(f"{f} ({data[f].nunique()} levels)" for f in facets)
    summary = [
        f"{len(data):,} rows: {n_items} items x {n_systems} systems" + (f"; facets: {facet_text}" if facets else ""),
        "mean " + score + " per system: "
        + ", ".join(f"{k} {format_number(v)}" for k, v in per_system["mean"].items()),
    ]
    blocks: list[Block] = [
        Table(design, "Design: the columns used and their levels"),
        Table(per_system, f"{score} per {system}"),
        Figure.from_matplotlib(plots.plot_system_boxplots(data, score, system),
                               f"Distribution of {score} per {system} (diamond: mean)"),
    ]
    if not balanced:
        blocks.append(Note(
            f"unbalanced design: items have {cells.min()} to {cells.max()} scores per system"
            + ("" if len(cells) == n_items * n_systems else " and some item-system pairs have none")
            + "; model-based comparisons handle this, raw means may mislead."
        ))
    return Section(title, tuple(blocks), summary=tuple(summary))


def variance_section(
    varcorr: pd.DataFrame,
    *,
    component: str | None = None,
    variance: str | None = None,
    phi: float | Mapping[str, float] | None = None,
    dstudy: pd.DataFrame | None = None,
    dstudy_x: str | None = None,
    dstudy_trace: str | None = None,
    dstudy_y: str = "phi",
    threshold: float | None = 0.8,
    singular: bool = False,
    formula: str | None = None,
    reference: Mapping[str, float] | None = None,
    title: str = "Variance components and reliability",
) -> Section:
    """Variance-component table and chart, reliability coefficient(s) and D-study curves.

    Parameters
    ----------
    varcorr : DataFrame
        One row per component (names and variances; columns detected as in
        :func:`mixeval.plots.plot_variance_components`). A ``percent`` column is added if absent.
    phi : float or mapping, optional
        The reliability coefficient, or several (label -> value), e.g. ``{"phi": .., "relative": ..}``.
    dstudy : DataFrame, optional
        D-study grid (e.g. ``n_rater``, ``n_seed``, ``phi``); needs ``dstudy_x``.
    singular : bool
        Add a warning that a variance was estimated at zero (a boundary fit).
    formula : str, optional
        The model, shown as a paragraph.
    reference : mapping, optional
        Known variances by component name (e.g. the simulation truth of the demo data), shown as
        column ``true variance`` beside the estimates; every name must be a component.

    Returns
    -------
    Section

    Notes
    -----
    percent_k = 100 variance_k / sum_j variance_j. The summary names the largest component and
    the coefficient(s); the D-study summary names the smallest design reaching ``threshold``
    (fewest observations per item, i.e. the smallest product of the facet sizes).

    Examples
    --------
    >>> import pandas as pd
    >>> vc = pd.DataFrame({"group": ["sentence_id", "Residual"], "variance": [0.09046723, 0.01968357]})
    >>> variance_section(vc).summary[0]
    'largest component: sentence_id, 82.13% of the total variance'
    """
    varcorr = require_dataframe(varcorr, "varcorr")
    fig = plots.plot_variance_components(varcorr, component=component, variance=variance)
    component = component or plots._detect(varcorr, ("component", "grp", "group", "effect", "term"), "component")
    variance = variance or plots._detect(varcorr, ("variance", "vcov", "var"), "variance")
    table = varcorr.copy()
    values = table[variance].to_numpy(dtype=float)
    percent = 100.0 * values / values.sum()
    if "percent" not in table.columns:
        table["percent"] = percent
    if reference is not None:
        unknown = [k for k in reference if k not in set(table[component].astype(str))]
        if unknown:
            raise InputError(f"`reference` names {unknown!r}, which are not components; components: "
                             f"{', '.join(map(str, table[component]))}.")
        table["true variance"] = [float(reference[c]) if c in reference else np.nan
                                  for c in table[component].astype(str)]
    top = int(np.argmax(values))
    summary = [f"largest component: {table[component].iloc[top]}, {format_number(percent[top])}% of the total variance"]
    blocks: list[Block] = []
    if formula:
        blocks.append(Paragraph(f"Model: {formula}"))
    blocks += [Table(table, "Variance components"), Figure.from_matplotlib(fig, "Percent of the total variance")]
    zero = [str(c) for c, v in zip(table[component], values) if v == 0.0]
    if singular or zero:
        blocks.append(Note(
            "singular fit: " + (f"variance of {', '.join(zero)} estimated at 0" if zero else "a variance is at 0")
            + " (boundary estimate; normal in these studies, the component adds no variation here).",
            "warning",
        ))
    if phi is not None:
        coefficients = {"phi": phi} if not isinstance(phi, Mapping) else dict(phi)
        for label, value in coefficients.items():
            summary.append(f"reliability {label} = {format_number(float(value))}")
        blocks.append(Table(pd.DataFrame({"coefficient": list(coefficients),
                                          "value": [float(v) for v in coefficients.values()]}),
                            "Reliability coefficients"))
    if dstudy is not None:
        if dstudy_x is None:
            raise InputError("`dstudy_x` must name the facet-size column of `dstudy` (e.g. 'n_rater').")
        fig = plots.plot_dstudy(dstudy, dstudy_x, dstudy_trace, y=dstudy_y, threshold=threshold)
        blocks.append(Figure.from_matplotlib(fig, f"D-study: {dstudy_y} against {dstudy_x}"))
        blocks.append(Table(dstudy, "D-study grid", max_text_rows=0))
        if threshold is not None:
            sizes = [c for c in (dstudy_x, dstudy_trace) if c is not None]
            ok = dstudy[dstudy[dstudy_y] >= threshold]
            if len(ok):
                cost = ok[sizes].prod(axis=1)
                best = ok.loc[cost.idxmin()]
                design = ", ".join(f"{c} = {best[c]:g}" for c in sizes)
                summary.append(f"smallest design with {dstudy_y} >= {threshold:g}: {design} "
                               f"({dstudy_y} = {format_number(best[dstudy_y], 3)})")
            else:
                summary.append(f"no design in the D-study grid reaches {dstudy_y} >= {threshold:g}")
    return Section(title, tuple(blocks), summary=tuple(summary))


def result_table(result: TestResult, label: str = "") -> pd.DataFrame:
    """One-row DataFrame of a TestResult: test, statistic, df, p-value (unrounded).

    Examples
    --------
    >>> from mixeval.resampling import paired_t_test
    >>> result_table(paired_t_test([1.0, 2.0, 3.0, 4.0], [0.5, 1.6, 2.4, 3.1]), "t-test").round(4)
         test  statistic   df  p.value
    0  t-test     5.5549  3.0   0.0115
    """
    if not isinstance(result, TestResult):
        raise InputTypeError(f"expected a mixeval TestResult; got {type(result).__name__}.")
    return pd.DataFrame(
        {
            "test": [label or result.method or "test"],
            "statistic": [float(result.statistic)],
            "df": [np.nan if result.df is None else float(result.df)],
            "p.value": [float(result.pvalue)],
        }
    )




def _chi2_text(test: TestResult) -> str:
    """``chi2 = 381.1, df = 4, p < 2.2e-16`` for a summary line."""
    return (f"chi2 = {format_number(test.statistic)}" + (f", df = {test.df:g}" if test.df is not None else "")
            + f", {_p_text(test.pvalue)}")


def _pairwise_summary(pairwise: pd.DataFrame, pvalue: str | None, alpha: float, where: str = "") -> str | None:
    column = _pvalue_column(pairwise, pvalue)
    if column is None:
        return None
    p = pairwise[column].to_numpy(dtype=float)
    return (f"{int((p < alpha).sum())} of {len(p)} pairwise differences{where} have p < {alpha:g}")


def comparison_section(
    glrt: TestResult,
    *,
    pairwise: pd.DataFrame | None = None,
    pvalue: str | None = None,
    alpha: float = 0.05,
    hypothesis: str | None = None,
    title: str = "Do the systems differ?",
) -> Section:
    """The omnibus generalized likelihood-ratio test and the pairwise comparisons.

    Parameters
    ----------
    glrt : TestResult
        The omnibus test (e.g. from ``mixeval.mixed.compare``).
    pairwise : DataFrame, optional
        Pairwise comparisons; its p-value column is detected (``p.value``, ``pvalue``, ...) or named
        by ``pvalue``.
    alpha : float
        Level used in the summary line (all p-values are shown unrounded in the tables).
    hypothesis : str, optional
        A sentence stating the compared models, shown as a paragraph.

    Returns
    -------
    Section

    Examples
    --------
    >>> from mixeval import TestResult
    >>> r = TestResult(statistic=34.09, pvalue=3.96e-8, df=2, method="GLRT")
    >>> comparison_section(r).summary[0]
    'GLRT: chi2 = 34.09, df = 2, p = 3.96e-08'
    """
    table = result_table(glrt)
    summary = [f"{table['test'].iloc[0]}: chi2 = {format_number(glrt.statistic)}"
               + (f", df = {glrt.df:g}" if glrt.df is not None else "") + f", {_p_text(glrt.pvalue)}"]
    blocks: list[Block] = []
    if hypothesis:
        blocks.append(Paragraph(hypothesis))
    blocks.append(Table(table, "Omnibus test"))
    if pairwise is not None:
        pairwise = require_dataframe(pairwise, "pairwise")
        line = _pairwise_summary(pairwise, pvalue, alpha)
        if line:
            summary.append(line)
        blocks.append(Table(pairwise, "Pairwise comparisons"))
    return Section(title, tuple(blocks), summary=tuple(summary), text_tables=pairwise is not None)


def conditional_section(
    means_table: pd.DataFrame,
    *,
    x: str,
    trace: str,
    y: str,
    se: str | None = None,
    contrasts: pd.DataFrame | None = None,
    glrt: TestResult | None = None,
    interaction: TestResult | None = None,
    pvalue: str | None = None,
    alpha: float = 0.05,
    x_order: Sequence[object] | None = None,
    title: str | None = None,
) -> Section:
    """Comparisons conditional on a data property: interaction plot, cell means, contrasts per class.

    Parameters
    ----------
    means_table : DataFrame
        One row per (x, trace) cell: estimated means ``y`` and optional standard errors ``se``.
    x, trace : str
        The data property (e.g. length class) and the system column.
    contrasts : DataFrame, optional
        Pairwise comparisons within each ``x`` level (must contain column ``x`` for per-class lines).
    glrt : TestResult, optional
        The test of the systems within the classes: every system term, ``trace * x`` against ``x`` alone
        (what ``Study.conditional`` returns).
    interaction : TestResult, optional
        The test of the interaction: ``trace * x`` against ``trace + x`` (does the difference between the
        systems change with ``x``?).

    Returns
    -------
    Section

    Examples
    --------
    >>> import pandas as pd
    >>> m = pd.DataFrame({"cls": ["short", "long"] * 2, "system": list("AABB"),
    ...                   "emmean": [0.3, 0.4, 0.28, 0.45], "SE": [0.01] * 4})
    >>> conditional_section(m, x="cls", trace="system", y="emmean", se="SE").title
    'Comparisons conditional on cls'
    """
    means_table = require_dataframe(means_table, "means_table")
    fig = plots.plot_interaction(means_table, x, trace, y, se, x_order=x_order)
    summary: list[str] = []
    blocks: list[Block] = []
    tests = ((glrt, f"systems within each {x}", f"{trace} * {x} against {x}"),
             (interaction, "interaction", f"{trace} * {x} against {trace} + {x}"))
    for test, what, models in tests:
        if test is not None:
            summary.append(f"test of the {what} ({models}): {_chi2_text(test)}")
            blocks.append(Table(result_table(test, test.method or "likelihood-ratio test"),
                                f"Test of the {what} ({models})"))
    blocks.append(Figure.from_matplotlib(fig, f"Means of {y} per {x} and {trace}" + (" (\u00b1 SE)" if se else "")))
    blocks.append(Table(means_table, f"Means per {x} and {trace}"))
    if contrasts is not None:
        contrasts = require_dataframe(contrasts, "contrasts")
        column = _pvalue_column(contrasts, pvalue)
        if column is not None and x in contrasts.columns:
            for level, part in contrasts.groupby(x, sort=False, observed=True):
                line = _pairwise_summary(part, column, alpha, where=f" for {x} = {level}")
                if line:
                    summary.append(line)
        elif column is not None:
            line = _pairwise_summary(contrasts, column, alpha)
            if line:
                summary.append(line)
        blocks.append(Table(contrasts, f"Pairwise comparisons within each {x}"))
    return Section(title or f"Comparisons conditional on {x}", tuple(blocks), summary=tuple(summary))


def trend_section(
    slopes: pd.DataFrame,
    *,
    trace: str,
    var: str,
    slope: str = "trend",
    contrasts: pd.DataFrame | None = None,
    glrt: TestResult | None = None,
    figure: object | None = None,
    pvalue: str | None = None,
    alpha: float = 0.05,
    title: str | None = None,
) -> Section:
    """Comparisons conditional on a numeric data property: each system's slope, slope contrasts, trend lines.

    Parameters
    ----------
    slopes : DataFrame
        One row per system: the slope column ``slope`` (change of the score per unit of ``var``) with
        its interval (e.g. :func:`mixeval.significance.emtrends`).
    trace : str
        The system column.
    var : str
        The numeric property (e.g. source length).
    contrasts : DataFrame, optional
        Pairwise contrasts of the slopes.
    glrt : TestResult, optional
        The test of the interaction (``system * var`` against ``system + var``).
    figure : matplotlib Figure, optional
        The trend lines (e.g. :func:`mixeval.significance.plot_trends`).

    Returns
    -------
    Section

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.DataFrame({"system": ["A", "B"], "trend": [0.004, 0.001], "se": [0.001, 0.001]})
    >>> trend_section(s, trace="system", var="length").summary
    ('slope of the score in length: A 0.004, B 0.001',)
    """
    slopes = require_dataframe(slopes, "slopes")
    require_columns(slopes, [trace, slope], "slopes")
    summary: list[str] = []
    blocks: list[Block] = []
    if glrt is not None:
        summary.append(f"{glrt.method or 'interaction test'} of {trace} x {var}: {_chi2_text(glrt)}")
        blocks.append(Table(result_table(glrt, glrt.method or "interaction test"),
                            f"Test of the interaction ({trace} x {var} against {trace} + {var})"))
    summary.append(f"slope of the score in {var}: "
                   + ", ".join(f"{row[trace]} {format_number(row[slope], 3)}" for _, row in slopes.iterrows()))
    if figure is not None:
        blocks.append(Figure.from_matplotlib(figure, f"Fitted score against {var} per {trace} (pointwise 95% CI)"))
    blocks.append(Table(slopes, f"Slope of each {trace} in {var}"))
    if contrasts is not None:
        contrasts = require_dataframe(contrasts, "contrasts")
        line = _pairwise_summary(contrasts, pvalue, alpha)
        if line:
            summary.append(line.replace("pairwise differences", "pairwise slope differences"))
        blocks.append(Table(contrasts, f"Pairwise differences of the slopes in {var}"))
    return Section(title or f"Comparisons conditional on {var}", tuple(blocks), summary=tuple(summary))
