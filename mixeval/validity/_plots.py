"""Feature-shape plots (book Figures 2.8-2.10, 2.15, 2.19): with and without the circular set."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ._circularity import CircularityResult
from ._gam import GAMResult

if TYPE_CHECKING:
    from ._bias import DatasetBiasResult

__all__ = ["plot_correlations", "plot_shape", "plot_shapes", "step_function"]


def step_function(thresholds: Sequence[float], values: Sequence[float]) -> Callable[[np.ndarray], np.ndarray]:
    """A right-closed step function: ``values[i]`` on ``(thresholds[i-1], thresholds[i]]``.

    ``len(values) == len(thresholds) + 1``. The liver SOFA rule of Table 2.6 is
    ``step_function([1.2, 1.9, 5.9, 11.9], [0, 1, 2, 3, 4])``.

    Examples
    --------
    >>> f = step_function([1.2, 1.9], [0, 1, 2])
    >>> f(np.array([1.0, 1.2, 1.5, 3.0])).tolist()
    [0.0, 0.0, 1.0, 2.0]
    """
    t = np.asarray(thresholds, dtype=float)
    v = np.asarray(values, dtype=float)
    if v.size != t.size + 1 or np.any(np.diff(t) <= 0):
        raise InputError("step_function needs increasing thresholds and one more value than thresholds.")

    def f(x: np.ndarray) -> np.ndarray:
        return v[np.searchsorted(t, np.asarray(x, dtype=float), side="left")]

    return f


def _as_step(step: Any) -> Callable[[np.ndarray], np.ndarray] | None:
    if step is None or callable(step):
        return step
    if isinstance(step, Mapping) and {"thresholds", "values"} <= set(step):
        return step_function(step["thresholds"], step["values"])
    raise InputError("`step` must be a function of x or a dict with 'thresholds' and 'values'.")


def plot_shape(
    model: GAMResult,
    feature: str,
    *,
    ax: Any = None,
    step: Any = None,
    rug: bool = True,
    grid: int = 300,
    color: str = "C0",
    title: str | None = None,
) -> Any:
    """Plot one feature shape ``f_k(x_k)`` with a +-2 standard error band and a rug of the data.

    Parameters
    ----------
    model : GAMResult
    feature : str
    ax : matplotlib Axes, optional
    step : callable or dict, optional
        The theoretical labelling rule (e.g. :func:`step_function`), drawn dashed and centred over
        the data like the shape (the shapes sum to zero over the data).
    rug : bool
        Draw the observed values along the x axis.
    grid : int
        Number of grid points.
    color : str
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np, pandas as pd, matplotlib
    >>> matplotlib.use("Agg")
    >>> from mixeval.validity import fit_gam
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.uniform(0, 3, 400)}); df["y"] = np.sin(df["x"]) + rng.normal(0, .2, 400)
    >>> fig = plot_shape(fit_gam(df, "y", ["x"]), "x")
    """
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(5, 3))
    else:
        fig = ax.figure
    shape = model.shape(feature, grid=grid)
    term = model.term(feature)
    values = model.feature_values(feature)
    if term.kind == "smooth":
        x = shape["x"].to_numpy(dtype=float)
        ax.plot(x, shape["f"], color=color, lw=1.5)
        ax.fill_between(x, shape["f"] - 2 * shape["se"], shape["f"] + 2 * shape["se"], color=color, alpha=0.2, lw=0)
        rule = _as_step(step)
        if rule is not None:
            xv = np.asarray(values, dtype=float)
            centre = float(np.mean(rule(xv)))
            ax.plot(x, rule(x) - centre, ls="--", color="k", lw=1, label="rule")
        if rug:
            u = np.unique(np.asarray(values, dtype=float))
            if u.size > 2000:
                u = np.quantile(u, np.linspace(0, 1, 2000))
            ax.plot(u, np.zeros_like(u), "|", color="0.3", ms=6, transform=ax.get_xaxis_transform())
    else:
        pos = np.arange(len(shape))
        ax.errorbar(pos, shape["f"], yerr=2 * shape["se"], fmt="o", color=color)
        ax.set_xticks(pos)
        ax.set_xticklabels([str(v) for v in shape["x"]])
    ax.axhline(0, color="0.6", lw=0.5)
    ax.set_xlabel(feature)
    ax.set_ylabel(f"f({feature})")
    if title is not None:
        ax.set_title(title, fontsize=9)
    return fig


def plot_shapes(
    result: CircularityResult,
    *,
    features: Sequence[str] | None = None,
    step: Mapping[str, Any] | None = None,
    rug: bool = True,
    figsize: tuple[float, float] | None = None,
) -> Any:
    """Feature shapes without (left) and with (right) the selected set, side by side.

    Rows are the candidates (selected set first). The left column is the GAM on the candidates
    outside the selected set, the right column the GAM on all candidates; each row shares its
    y axis so that nullification is visible. The right panel's title gives the D^2 the feature
    adds to the selected set and its sd ratio; the figure title the decisive numbers of the verdict
    (D^2, determinism, what the others add relative to what they explain alone).

    Parameters
    ----------
    result : CircularityResult
    features : sequence of str, optional
        Rows to draw (default: every candidate).
    step : dict, optional
        ``{feature: rule}`` theoretical step functions (callable or
        ``{"thresholds": [...], "values": [...]}``).
    rug : bool
    figsize : (float, float), optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np, pandas as pd, matplotlib
    >>> matplotlib.use("Agg")
    >>> from mixeval.validity import circularity_test
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame(rng.normal(size=(2000, 2)), columns=["a", "b"]); df["b"] += df["a"]
    >>> df["y"] = np.digitize(df["a"], [0.0]).astype(float)
    >>> fig = plot_shapes(circularity_test(df, "y", k=20))
    """
    import matplotlib.pyplot as plt

    rows = list(features) if features is not None else list(result.best) + [c for c in result.candidates if c not in result.best]
    unknown = [f for f in rows if f not in result.candidates]
    if unknown:
        raise InputError(f"{unknown} are not candidates of this circularity test: {list(result.candidates)}.")
    step = dict(step or {})
    full = result.full_model
    reduced = result.reduced_model
    fig, axes = plt.subplots(len(rows), 2, figsize=figsize or (9, 2.3 * len(rows)), squeeze=False)
    for r, f in enumerate(rows):
        left, right = axes[r]
        if reduced is not None and f in reduced.features:
            plot_shape(reduced, f, ax=left, rug=rug, color="C1", step=None)
            left.set_title(f"without {{{', '.join(result.best)}}}: D^2 = {reduced.d2:.3f}", fontsize=9)
        else:
            left.axis("off")
            left.text(0.5, 0.5, f"{f}: in the selected set", ha="center", va="center", transform=left.transAxes,
                      fontsize=9, color="0.4")
        title = f"all candidates: D^2 = {full.d2:.3f}"
        if f in result.nullification:
            title += f"; adds D^2 {result.gain[f]:.4f}, sd ratio {result.nullification[f]:.3f}"
        plot_shape(full, f, ax=right, rug=rug, color="C0", step=step.get(f))
        right.set_title(title, fontsize=9)
        if left.axison:
            lo = min(left.get_ylim()[0], right.get_ylim()[0])
            hi = max(left.get_ylim()[1], right.get_ylim()[1])
            left.set_ylim(lo, hi)
            right.set_ylim(lo, hi)
    verdict = "circular: {" + ", ".join(result.circular) + "}" if result.is_circular else "no circular set"
    numbers = f"{{{', '.join(result.best)}}}: D^2 = {result.d2:.3f}, determinism = {result.determinism:.3f}"
    if result.nullification:
        numbers += (f"; others add D^2 {result.added:.4f} of {result.explained_alone:.3f} they explain alone "
                    f"(ratio {result.added_ratio:.3f})")
    fig.suptitle(f"{result.target}: {verdict}\n{numbers}", fontsize=10)
    fig.tight_layout()
    return fig


def plot_correlations(result: DatasetBiasResult, *, ax: Any = None, labels: tuple[str, str] = ("in-domain", "out-of-domain")) -> Any:
    """Feature-label correlations in both domains with Fisher-z intervals (book Figures 2.2-2.5).

    Parameters
    ----------
    result : DatasetBiasResult
    ax : matplotlib Axes, optional
    labels : (str, str)
        Legend names of the two domains.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np, pandas as pd, matplotlib
    >>> matplotlib.use("Agg")
    >>> from mixeval.validity import dataset_bias_test
    >>> rng = np.random.default_rng(0)
    >>> a = pd.DataFrame({"f": rng.normal(size=300)}); a["y"] = (a["f"] > 0) * 1
    >>> b = pd.DataFrame({"f": rng.normal(size=300)}); b["y"] = (b["f"] < 0) * 1
    >>> fig = plot_correlations(dataset_bias_test(a, b, "y"))
    """
    import matplotlib.pyplot as plt

    table = result.table
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.2 * len(table) + 2, 3.2))
    else:
        fig = ax.figure
    pos = np.arange(len(table))
    width = 0.38
    for off, col, key, name in ((-width / 2, "C0", "in", labels[0]), (width / 2, "C3", "out", labels[1])):
        r = table[f"r_{key}"].to_numpy()
        ci = np.array([result.tests[f].details[f"ci_{key}"] for f in table["feature"]])
        ax.bar(pos + off, r, width, color=col, alpha=0.8, label=name)
        ax.errorbar(pos + off, r, yerr=np.vstack([r - ci[:, 0], ci[:, 1] - r]), fmt="none", ecolor="k", lw=1)
    for p_, biased in zip(pos, table["biased"]):
        if biased:
            ax.annotate("bias", (p_, 1.0), xycoords=("data", "axes fraction"), ha="center", va="bottom",
                        fontsize=8, color="C3")
    ax.axhline(0, color="0.5", lw=0.5)
    ax.set_xticks(pos)
    ax.set_xticklabels(table["feature"], rotation=30, ha="right")
    ax.set_ylabel("correlation with label")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
