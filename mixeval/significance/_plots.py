"""Interaction plot of estimated marginal means (the book's Figure 4.7)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..errors import InputError
from ._emmeans import emmeans

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ..mixed import MixedResult
    from ._pairwise import PairwiseResult

__all__ = ["plot_emmeans", "plot_contrasts", "plot_trends"]


def plot_emmeans(fit: MixedResult, specs: str, by: str, *, interval: str = "ci", level: float = 0.95,
                 ax: Axes | None = None) -> Figure:
    """Marginal means of ``specs`` (one line each) across the levels of ``by`` (horizontal axis).

    Parameters
    ----------
    fit : LmerResult
        A model with ``specs`` and ``by`` among its factors, typically ``score ~ system * cls + (1|item)``.
    specs : str
        The factor drawn as lines (e.g. the system).
    by : str
        The factor on the horizontal axis (e.g. the length class).
    interval : {"ci", "se"}, default "ci"
        Bars of ``+- z_{(1+level)/2} se`` (unadjusted asymptotic confidence intervals) or ``+- se``.
    level : float, default 0.95
        Confidence level for ``interval="ci"``.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    The means are :func:`emmeans` ``(fit, specs, by=by)``; drawing uses
    :func:`mixeval.plots.plot_interaction`.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(40), 2)
    >>> df = pd.DataFrame({"item": g, "system": np.tile(["A", "B"], 40), "cls": np.where(g < 20, "short", "long")})
    >>> df["score"] = rng.normal(size=40)[g] + rng.normal(size=80)
    >>> fig = plot_emmeans(lmer("score ~ system * cls + (1|item)", df), "system", by="cls")
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['A', 'B']
    """
    from ..plots import plot_interaction

    if not isinstance(specs, str) or not isinstance(by, str):
        raise InputError("`specs` and `by` must each name one factor of the model.")
    if interval not in ("ci", "se"):
        raise InputError(f"interval={interval!r}; use 'ci' (confidence intervals) or 'se' (standard errors).")
    means = emmeans(fit, specs, by=by, level=level)
    if interval == "ci":
        bar = f"{100 * level:g}% CI"
        means[bar] = sps.norm.ppf(0.5 + level / 2) * means["se"].to_numpy()
    else:
        bar = "se"
    order_x = list(pd.unique(means[by]))
    order_trace = list(pd.unique(means[specs]))
    fig = plot_interaction(means, x=by, trace=specs, y="emmean", se=bar, x_order=order_x, trace_order=order_trace,
                           ax=ax)
    fig.axes[0].set_title(f"Estimated marginal means of {specs} by {by}")
    return fig




def plot_contrasts(result: PairwiseResult, *, ax: Axes | None = None) -> Figure:
    """Forest plot of pairwise contrasts: estimates with their (adjusted) confidence intervals.

    Parameters
    ----------
    result : PairwiseResult
        Output of :func:`pairwise`; with ``by`` groups the labels read ``"A - B | short"``.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    One horizontal bar ``[lower, upper]`` per contrast (first contrast on top) and a dashed
    line at 0; the intervals are adjusted as ``result.ci_method`` says.

    Examples
    --------
    >>> from mixeval.mixed import lmer
    >>> from mixeval.significance import pairwise
    >>> from mixeval.datasets import toy_scores
    >>> df = toy_scores(n_items=30)
    >>> fig = plot_contrasts(pairwise(lmer("score ~ system + (1|item)", df), "system"))
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['A - B', 'A - C', 'B - C']
    """
    from ..plots import _axes

    table = getattr(result, "table", None)
    if not isinstance(table, pd.DataFrame) or not {"contrast", "estimate", "lower", "upper"} <= set(table.columns):
        raise InputError("`result` must be a PairwiseResult from mixeval.significance.pairwise().")
    by = list(getattr(result, "by", ()))
    labels = [str(row["contrast"]) + ("" if not by else " | " + " ".join(str(row[b]) for b in by))
              for _, row in table.iterrows()]
    fig, ax = _axes(ax, (6.0, 0.45 * len(table) + 1.2))
    y = np.arange(len(table))[::-1]
    est = table["estimate"].to_numpy(dtype=float)
    ax.errorbar(est, y, xerr=[est - table["lower"].to_numpy(dtype=float), table["upper"].to_numpy(dtype=float) - est],
                fmt="o", capsize=3)
    ax.axvline(0.0, linestyle="--", color="grey", linewidth=1)
    ax.set_yticks(y, labels)
    level = getattr(result, "level", 0.95)
    method = getattr(result, "ci_method", "")
    ax.set_xlabel(f"estimate with {100 * level:g}% CI" + (f" ({method}-adjusted)" if method not in ("", "none") else ""))
    return fig


def plot_trends(fit: MixedResult, specs: str, var: str, *, level: float = 0.95, n_points: int = 50,
                data: pd.DataFrame | None = None, show_data: bool = False, ax: Axes | None = None) -> Figure:
    """The fitted line of each level of ``specs`` along the numeric covariate ``var``, with confidence bands.

    Parameters
    ----------
    fit : LmerResult
        A model with a ``specs`` x ``var`` interaction, typically ``score ~ system * var + (1|item)``.
    specs : str
        The factor drawn as lines (e.g. the system).
    var : str
        The numeric covariate on the horizontal axis (e.g. source length).
    level : float, default 0.95
        Confidence level of the pointwise (asymptotic) bands.
    n_points : int, default 50
        Points per line over the fitted range of ``var``.
    data : DataFrame, optional
        The fitted rows, only needed when the fit does not hold them.
    show_data : bool, default False
        Also scatter the observed scores (small, transparent points).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    Each line is the reference-grid marginal mean of one level of ``specs`` with ``var`` set to each
    value (other factors averaged with equal weights, other covariates at their means), i.e. the
    trends of :func:`emtrends` drawn as lines; the bands are ``estimate +- z_{(1+level)/2} se``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.mixed import lmer
    >>> rng = np.random.default_rng(0)
    >>> item = np.repeat(np.arange(40), 2)
    >>> df = pd.DataFrame({"item": item, "system": np.tile(["A", "B"], 40), "length": rng.integers(5, 60, 40)[item]})
    >>> df["score"] = rng.normal(size=40)[item] + 0.01 * df.length + rng.normal(size=80)
    >>> fig = plot_trends(lmer("score ~ system * length + (1|item)", df), "system", "length")
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['A', 'B']
    """
    from ..plots import _axes
    from ._trends import trend_lines

    if not isinstance(specs, str) or not isinstance(var, str):
        raise InputError("`specs` and `var` must each name one variable of the model (a factor and a numeric covariate).")
    lines = trend_lines(fit, specs, var, level=level, n_points=n_points, data=data)
    fig, ax = _axes(ax, (6.4, 4.2))
    if show_data:
        source = data if data is not None else getattr(fit, "data", None)
        response = getattr(getattr(getattr(fit, "design", None), "parsed", None), "response", None)
        if isinstance(source, pd.DataFrame) and response in source.columns:
            for _, rows in source.groupby(specs, observed=True, sort=False):
                ax.scatter(rows[var], rows[response], s=4, alpha=0.15)
            ax.set_prop_cycle(None)
    for level_name, rows in lines.groupby(specs, observed=True, sort=False):
        line, = ax.plot(rows[var], rows["estimate"], label=str(level_name))
        ax.fill_between(rows[var], rows["lower"], rows["upper"], color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xlabel(var)
    ax.set_ylabel(f"estimated marginal mean ({100 * level:g}% CI)")
    ax.set_title(f"Trends of {specs} along {var}")
    ax.legend(title=specs)
    return fig
