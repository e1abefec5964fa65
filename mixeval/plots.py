"""Plots for evaluation studies (matplotlib), each taking a tidy DataFrame and returning the Figure.

* :func:`plot_system_boxplots` -- score distribution per system (book Figure 4.5 style),
* :func:`plot_interaction` -- estimated means per class and system with +-SE bars (Figure 4.7 style),
* :func:`plot_dstudy` -- reliability coefficient phi against a facet's size (Figure 3.3 style),
* :func:`plot_variance_components` -- percent of total variance per component.

No function calls ``plt.show()``; pass ``ax=`` to draw into an existing Axes. Without ``ax``,
the Figure is created outside pyplot (it displays in Jupyter, and ``fig.savefig`` writes it).
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ._validation import require_columns, require_dataframe, require_numeric_column
from .errors import InputError, InputTypeError

__all__ = ["plot_system_boxplots", "plot_interaction", "plot_dstudy", "plot_variance_components"]


class _DisplayFigure(Figure):
    """A matplotlib Figure outside pyplot's registry that shows itself in Jupyter (``_repr_png_``).

    Figures made here are not tracked by pyplot, so they never pile up in scripts or loops and
    are not shown twice in notebooks; save one with ``fig.savefig(...)``.
    """

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=100, bbox_inches="tight", facecolor="white")
        return buffer.getvalue()


def _axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is None:
        fig = _DisplayFigure(figsize=figsize, layout="constrained")
        return fig, fig.add_subplot()
    if not isinstance(ax, Axes):
        raise InputTypeError(f"`ax` must be a matplotlib Axes or None; got {type(ax).__name__}.")
    return ax.figure, ax  # type: ignore[return-value]


def _levels(series: pd.Series, order: Sequence[object] | None, argument: str) -> list[object]:
    """Category order: ``order`` if given (checked), else categorical order, else first appearance."""
    present = pd.unique(series)
    if order is not None:
        order = list(order)
        missing = [v for v in present if v not in order]
        if missing:
            raise InputError(f"`{argument}` lacks level(s) {missing!r} that occur in the data; it has {order!r}.")
        return [v for v in order if v in set(present)]
    if isinstance(series.dtype, pd.CategoricalDtype):
        return [c for c in series.cat.categories if c in set(present)]
    return list(present)


def _require_no_missing_groups(data: pd.DataFrame, column: str) -> None:
    n = int(data[column].isna().sum())
    if n:
        raise InputError(f"column {column!r} has {n} missing value(s); remove them first, e.g. "
                         f"data.dropna(subset=[{column!r}]).")


def plot_system_boxplots(
    data: pd.DataFrame,
    score: str,
    system: str,
    *,
    order: Sequence[object] | None = None,
    show_means: bool = True,
    ax: Axes | None = None,
) -> Figure:
    """Box plots of the score per system, with the mean as a marker and n under each box.

    Parameters
    ----------
    data : DataFrame
        Long format, one row per observation.
    score, system : str
        Column names of the numeric score and of the system label.
    order : sequence, optional
        Order of the systems on the x axis (default: categorical order or first appearance).
    show_means : bool, default True
        Mark each system's mean with a white diamond.
    ax : matplotlib Axes, optional
        Draw into this Axes instead of a new figure.

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    Boxes follow matplotlib's default (Tukey): the box spans the quartiles Q1..Q3, the line
    is the median, whiskers reach the most extreme point within 1.5 (Q3 - Q1) of the box.

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.plots import plot_system_boxplots
    >>> df = pd.DataFrame({"system": list("AABB"), "ter": [0.3, 0.4, 0.2, 0.25]})
    >>> fig = plot_system_boxplots(df, score="ter", system="system")
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['A\\n(n=2)', 'B\\n(n=2)']
    """
    data = require_dataframe(data)
    require_columns(data, [score, system])
    values = require_numeric_column(data, score, role="score")
    _require_no_missing_groups(data, system)
    levels = _levels(data[system], order, "order")
    groups = [values[(data[system] == level).to_numpy()] for level in levels]
    fig, ax = _axes(ax, (1.6 + 1.1 * len(levels), 4.0))
    positions = np.arange(1, len(levels) + 1)
    ax.boxplot(groups, positions=positions, widths=0.55, patch_artist=True,
               boxprops={"facecolor": "#cfe2f3", "edgecolor": "#2f4f6f"},
               medianprops={"color": "#1f3b57", "linewidth": 1.6},
               flierprops={"marker": ".", "markersize": 3, "alpha": 0.4})
    if show_means:
        ax.plot(positions, [g.mean() for g in groups], linestyle="none", marker="D", markersize=6,
                markerfacecolor="white", markeredgecolor="black", label="mean", zorder=3)
        ax.legend(loc="best", frameon=False, fontsize="small")
    ax.set_xticks(positions, [f"{level}\n(n={len(g)})" for level, g in zip(levels, groups)])
    ax.set_xlabel(system)
    ax.set_ylabel(score)
    ax.grid(axis="y", alpha=0.3)
    return fig


def plot_interaction(
    means_table: pd.DataFrame,
    x: str,
    trace: str,
    y: str,
    se: str | None = None,
    *,
    x_order: Sequence[object] | None = None,
    trace_order: Sequence[object] | None = None,
    dodge: float = 0.08,
    ax: Axes | None = None,
) -> Figure:
    """Interaction plot: one line per ``trace`` level through its means at each ``x`` level.

    Parameters
    ----------
    means_table : DataFrame
        One row per (x, trace) cell, e.g. emmeans-style estimated marginal means.
    x : str
        Column on the horizontal axis (e.g. the length class).
    trace : str
        Column whose levels become lines (e.g. the system).
    y : str
        Column of the means.
    se : str, optional
        Column of standard errors: drawn as bars ``y - se .. y + se``.
    x_order, trace_order : sequence, optional
        Level orders (default: categorical order or first appearance).
    dodge : float, default 0.08
        Horizontal shift between traces so that error bars do not overlap.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    Like the book's Figure 4.7 (means +- SE per length class and system). Each (x, trace)
    cell must appear at most once; a cell that is absent leaves a gap in its line.

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.plots import plot_interaction
    >>> m = pd.DataFrame({"cls": ["short", "long"] * 2, "system": ["A", "A", "B", "B"],
    ...                   "emmean": [0.30, 0.40, 0.28, 0.45], "SE": [0.01, 0.02, 0.01, 0.02]})
    >>> fig = plot_interaction(m, x="cls", trace="system", y="emmean", se="SE")
    >>> len(fig.axes[0].get_legend().get_texts())
    2
    """
    means_table = require_dataframe(means_table, "means_table")
    columns = [x, trace, y] + ([se] if se is not None else [])
    require_columns(means_table, columns, "means_table")
    y_values = require_numeric_column(means_table, y, role="mean")
    se_values = require_numeric_column(means_table, se, role="standard error") if se is not None else None
    if se_values is not None and (se_values < 0).any():
        raise InputError(f"the standard-error column {se!r} has negative values.")
    for column in (x, trace):
        _require_no_missing_groups(means_table, column)
    if means_table.duplicated([x, trace]).any():
        dup = means_table.loc[means_table.duplicated([x, trace], keep=False), [x, trace]]
        raise InputError(f"`means_table` must have one row per ({x}, {trace}) cell; duplicated: "
                         f"{dup.drop_duplicates().to_records(index=False).tolist()}. Aggregate first.")
    x_levels = _levels(means_table[x], x_order, "x_order")
    traces = _levels(means_table[trace], trace_order, "trace_order")
    fig, ax = _axes(ax, (7.0, 4.0))
    offsets = (np.arange(len(traces)) - (len(traces) - 1) / 2) * dodge
    x_pos = {level: i for i, level in enumerate(x_levels)}
    for k, level in enumerate(traces):
        rows = (means_table[trace] == level).to_numpy()
        cells = {xv: j for j, xv in zip(np.flatnonzero(rows), means_table.loc[rows, x])}
        xs = np.array([x_pos[xv] + offsets[k] for xv in x_levels])
        ys = np.array([y_values[cells[xv]] if xv in cells else np.nan for xv in x_levels])
        line = ax.plot(xs, ys, marker="o", label=str(level), alpha=0.9)[0]
        if se_values is not None:
            errs = np.array([se_values[cells[xv]] if xv in cells else np.nan for xv in x_levels])
            ax.errorbar(xs, ys, yerr=errs, fmt="none", ecolor=line.get_color(), capsize=3, alpha=0.8)
    ax.set_xticks(range(len(x_levels)), [str(v) for v in x_levels])
    ax.set_xlabel(x)
    ax.set_ylabel(y + (f" (\u00b1 {se})" if se is not None else ""))
    ax.legend(title=trace, frameon=False, fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    return fig


def plot_dstudy(
    phi_grid: pd.DataFrame,
    x: str,
    trace: str | None = None,
    *,
    y: str = "phi",
    threshold: float | None = 0.8,
    ax: Axes | None = None,
    lower: str | None = None,
    upper: str | None = None,
) -> Figure:
    """D-study curves: the reliability coefficient against a facet's size, one curve per ``trace`` level.

    Parameters
    ----------
    phi_grid : DataFrame
        One row per design, e.g. columns ``n_rater``, ``n_instantiation``, ``phi``.
    x : str
        Numeric column on the horizontal axis (e.g. the number of raters).
    trace : str, optional
        Column whose values become separate curves (e.g. the number of instantiations).
    y : str, default "phi"
        Column of the coefficient (between 0 and 1).
    threshold : float or None, default 0.8
        Draw a dashed horizontal line at this value (the usual target phi >= 0.8).
    ax : matplotlib Axes, optional
    lower, upper : str, optional
        Columns with the ends of an interval of ``y`` per design (e.g. ``phi_lower``, ``phi_upper`` of
        :func:`mixeval.uncertainty.dstudy_intervals`): drawn as a shaded band around each curve.

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    Like the book's Figure 3.3: phi = s2_item / (s2_item + s2_Delta) of each design, where
    s2_Delta shrinks as facets are averaged over more conditions.

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.plots import plot_dstudy
    >>> g = pd.DataFrame({"n_rater": [1, 2, 3] * 2, "n_occasion": [1] * 3 + [2] * 3,
    ...                   "phi": [0.5, 0.67, 0.75, 0.6, 0.75, 0.82]})
    >>> fig = plot_dstudy(g, x="n_rater", trace="n_occasion")
    >>> len(fig.axes[0].get_lines())  # two curves and the threshold line
    3
    """
    phi_grid = require_dataframe(phi_grid, "phi_grid")
    require_columns(phi_grid, [x, y] + ([trace] if trace is not None else [])
                    + [c for c in (lower, upper) if c is not None], "phi_grid")
    if (lower is None) != (upper is None):
        raise InputError("give both `lower` and `upper` (the interval's columns) or neither.")
    x_values = require_numeric_column(phi_grid, x, role="facet size")
    y_values = require_numeric_column(phi_grid, y, role="coefficient")
    if threshold is not None and not np.isfinite(float(threshold)):
        raise InputError(f"`threshold` must be a finite number or None; got {threshold!r}.")
    fig, ax = _axes(ax, (6.0, 4.0))
    if trace is None:
        groups = [(None, np.ones(len(phi_grid), dtype=bool))]
    else:
        _require_no_missing_groups(phi_grid, trace)
        levels = _levels(phi_grid[trace], None, "trace")
        try:
            levels = sorted(levels)
        except TypeError:
            pass
        groups = [(level, (phi_grid[trace] == level).to_numpy()) for level in levels]
    for level, rows in groups:
        idx = np.flatnonzero(rows)
        idx = idx[np.argsort(x_values[idx], kind="stable")]
        label = None if level is None else f"{trace} = {level}"
        line = ax.plot(x_values[idx], y_values[idx], marker="o", markersize=3, label=label)[0]
        if lower is not None and upper is not None:
            lo = phi_grid[lower].to_numpy(dtype=float)[idx]
            hi = phi_grid[upper].to_numpy(dtype=float)[idx]
            ax.fill_between(x_values[idx], lo, hi, color=line.get_color(), alpha=0.15, linewidth=0)
    if threshold is not None:
        ax.axhline(float(threshold), color="grey", linestyle="--", linewidth=1,
                   label=f"{y} = {float(threshold):g}")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(alpha=0.3)
    if trace is not None or threshold is not None:
        ax.legend(frameon=False, fontsize="small")
    return fig


def plot_variance_components(
    varcorr: pd.DataFrame,
    *,
    component: str | None = None,
    variance: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Horizontal bars of each variance component's percent of the total variance.

    Parameters
    ----------
    varcorr : DataFrame
        One row per component. Column names are detected: ``component``/``grp``/``group``
        for the names and ``variance``/``vcov`` for the variances (or pass them).
    component, variance : str, optional
        Column names, if not detectable.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    percent_k = 100 * variance_k / sum_j variance_j (the percent columns of the book's
    Tables 3.1, 3.2, 3.4, 3.8-3.11). Bars are labelled with the percent; components in
    the table's order, top to bottom.

    Examples
    --------
    >>> import pandas as pd
    >>> from mixeval.plots import plot_variance_components
    >>> vc = pd.DataFrame({"grp": ["sentence_id", "Residual"], "vcov": [0.09046723, 0.01968357]})
    >>> fig = plot_variance_components(vc)
    >>> [round(float(p.get_width()), 2) for p in fig.axes[0].patches]
    [82.13, 17.87]
    """
    varcorr = require_dataframe(varcorr, "varcorr")
    component = component or _detect(varcorr, ("component", "grp", "group", "effect", "term"), "component")
    variance = variance or _detect(varcorr, ("variance", "vcov", "var"), "variance")
    require_columns(varcorr, [component, variance], "varcorr")
    values = require_numeric_column(varcorr, variance, role="variance")
    if (values < 0).any():
        raise InputError(f"the variance column {variance!r} has negative values; variances are >= 0.")
    total = values.sum()
    if total <= 0:
        raise InputError(f"the variances in {variance!r} sum to {total}; nothing to show.")
    percent = 100.0 * values / total
    names = [str(v) for v in varcorr[component]]
    fig, ax = _axes(ax, (6.0, 0.9 + 0.42 * len(names)))
    positions = np.arange(len(names))[::-1]
    bars = ax.barh(positions, percent, color="#6a9fd1", edgecolor="#2f4f6f")
    for bar, p in zip(bars, percent):
        ax.text(bar.get_width() + 1, bar.get_y() + bar.get_height() / 2, f"{p:.1f}%", va="center",
                fontsize="small")
    ax.set_yticks(positions, names)
    ax.set_xlim(0, max(100.0, float(percent.max()) + 12))
    ax.set_xlabel("percent of total variance")
    ax.grid(axis="x", alpha=0.3)
    return fig


def _detect(frame: pd.DataFrame, candidates: Sequence[str], role: str) -> str:
    lower = {str(c).lower(): c for c in frame.columns}
    for name in candidates:
        if name in lower:
            return lower[name]
    raise InputError(
        f"cannot tell which column of `varcorr` holds the {role}; tried {', '.join(candidates)}. "
        f"Pass {role}=... (available columns: {', '.join(map(str, frame.columns))})."
    )
