"""Confidence interval of the best score under a computational budget (book Algorithm 3.1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import special

from .._progress import progress
from .._results import Result
from .._validation import as_1d_float, require_level, require_positive_int
from ..errors import InputError, InputTypeError
from ._engine import as_generator, chunk_sizes

__all__ = ["expected_max", "budget_ci", "BudgetResult", "plot_budget"]


def _budgets(budgets: object, M: int) -> np.ndarray:
    if budgets is None:
        return np.arange(1, M + 1)
    arr = np.unique(np.asarray(budgets))
    if arr.size == 0 or not np.issubdtype(arr.dtype, np.integer) or arr.min() < 1:
        raise InputError(f"`budgets` must be positive integers; got {budgets!r}.")
    return arr.astype(int)


def expected_max(scores: object, budgets: object = None) -> pd.DataFrame:
    """Exact mean and standard deviation of the maximum of ``B`` draws with replacement.

    Parameters
    ----------
    scores : array_like
        The evaluation scores ``u_1..u_M`` of ``M`` trained configurations.
    budgets : sequence of int, optional
        Budgets ``B`` (number of configurations tried); default ``1..M``.

    Returns
    -------
    pandas.DataFrame
        Columns ``budget``, ``mean``, ``sd``.

    Notes
    -----
    With the scores sorted, :math:`u_{(1)} \\le \\dots \\le u_{(M)}`, the maximum of
    ``B`` independent uniform draws from the ``M`` scores equals :math:`u_{(i)}` with
    probability :math:`(i/M)^B - ((i-1)/M)^B` (ties are handled by the sum), so

    .. math:: E[\\max] = \\sum_{i=1}^M u_{(i)} \\big[(i/M)^B - ((i-1)/M)^B\\big]

    (Dodge et al. 2019), and the standard deviation follows from the same
    probabilities applied to :math:`u_{(i)}^2`. This is the quantity Algorithm 3.1
    estimates by resampling.

    Examples
    --------
    >>> from mixeval.resampling import expected_max
    >>> expected_max([1.0, 2.0], budgets=[1, 2]).round(4).to_dict("list")
    {'budget': [1, 2], 'mean': [1.5, 1.75], 'sd': [0.5, 0.433]}
    """
    u = np.sort(as_1d_float(scores, "scores"))
    M = u.size
    B = _budgets(budgets, M)
    i = np.arange(1, M + 1)
    prob = (i[None, :] / M) ** B[:, None] - ((i[None, :] - 1) / M) ** B[:, None]
    mean = prob @ u
    second = prob @ u**2
    sd = np.sqrt(np.maximum(second - mean**2, 0.0))
    return pd.DataFrame({"budget": B, "mean": mean, "sd": sd})


@dataclass(frozen=True, eq=False)
class BudgetResult(Result):
    """Result of :func:`budget_ci`: one row per budget in :attr:`table`.

    Examples
    --------
    >>> import numpy as np
    >>> res = budget_ci(np.random.default_rng(0).beta(5, 2, size=50), budgets=[1, 5], n_resamples=500, random_state=1)
    >>> res.table["budget"].tolist(), res.level, res.n_resamples
    ([1, 5], 0.95, 500)
    >>> bool((res.table["mean"].diff().dropna() > 0).all())  # the expected best of more runs is higher
    True
    """

    _dict_exclude: ClassVar[tuple[str, ...]] = ("scores",)  # the input, not the result

    table: pd.DataFrame
    level: float
    method: str
    n_resamples: int
    scores: np.ndarray = field(repr=False)

    def summary(self) -> str:
        """The table as text (numbers rounded only here)."""
        return f"Expected maximum under a budget ({self.method} CI, level {self.level:g})\n" + \
            self.table.to_string(index=False, float_format=lambda v: f"{v:.4g}")

    def _repr_html_(self) -> str:
        return self.table.to_html(index=False, float_format=lambda v: f"{v:.4g}")

    def plot(self, ax=None, label: str | None = None):
        """Plot mean and interval per budget; see :func:`plot_budget`."""
        return plot_budget({label or "score": self}, ax=ax)


def budget_ci(
    scores: object,
    *,
    budgets: Sequence[int] | None = None,
    level: float = 0.95,
    method: str = "normal",
    n_resamples: int = 10_000,
    random_state: object = None,
) -> BudgetResult:
    """Confidence interval for the best score found with a budget of ``B`` configurations.

    Book Algorithm 3.1: for every budget ``B``, draw ``B`` scores with replacement
    from the ``M`` observed configuration scores, ``K = n_resamples`` times, keep
    each sample's maximum, and summarise the ``K`` maxima.

    Parameters
    ----------
    scores : array_like
        One evaluation score per trained meta-parameter configuration.
    budgets : sequence of int, optional
        Budgets to evaluate; default ``1..M``. Budgets above ``M`` are allowed (draws
        are with replacement) but tell you nothing new.
    level : float
        Confidence level.
    method : {"normal", "percentile"}
        ``"normal"`` (the book's step 4): mean +- z * sd of the maxima (Eq. 3.2);
        ``"percentile"``: quantiles of the maxima.
    n_resamples : int, keyword-only
        ``K``.
    random_state : None, int or numpy.random.Generator, keyword-only

    Returns
    -------
    BudgetResult
        ``table`` with columns ``budget, mean, sd, low, high, exact_mean, exact_sd``;
        the ``exact_*`` columns are the closed form of :func:`expected_max`.

    Notes
    -----
    All budgets share the same draws: resample ``r`` draws ``max(budgets)`` indices
    and the maximum for budget ``B`` is the running maximum over its first ``B``
    draws; each budget's maxima are still an exact sample of Algorithm 3.1.
    As the book warns (Section 3.3.2), the expected maximum is a parameter on the
    boundary of its space, so the interval's coverage is not guaranteed.

    Examples
    --------
    >>> import numpy as np
    >>> from mixeval.resampling import budget_ci
    >>> u = np.random.default_rng(0).beta(5, 2, size=50)
    >>> res = budget_ci(u, budgets=[1, 5, 20], n_resamples=2000, random_state=1)
    >>> res.table["budget"].tolist()
    [1, 5, 20]
    >>> bool((res.table["mean"] - res.table["exact_mean"]).abs().max() < 0.01)
    True
    """
    u = as_1d_float(scores, "scores")
    M = u.size
    B = _budgets(budgets, M)
    n_resamples = require_positive_int(n_resamples, "n_resamples", minimum=2)
    level = require_level(level)
    if method not in ("normal", "percentile"):
        raise InputError(f"`method` must be 'normal' or 'percentile'; got {method!r}.")
    rng = as_generator(random_state)
    u_sorted = np.sort(u)
    bmax = int(B.max())
    maxima = np.empty((n_resamples, B.size))
    start = 0
    for size in progress(chunk_sizes(n_resamples, bmax), desc="budget bootstrap"):
        idx = rng.integers(0, M, size=(size, bmax))
        run = np.maximum.accumulate(idx, axis=1)[:, B - 1]  # index into sorted scores = max
        maxima[start:start + size] = u_sorted[run]
        start += size
    mean = maxima.mean(axis=0)
    sd = maxima.std(axis=0, ddof=1)
    if method == "normal":
        q = special.ndtri((1 + level) / 2)
        low, high = mean - q * sd, mean + q * sd
    else:
        low, high = np.quantile(maxima, [(1 - level) / 2, (1 + level) / 2], axis=0)
    exact = expected_max(u, B)
    table = pd.DataFrame({"budget": B, "mean": mean, "sd": sd, "low": low, "high": high,
                          "exact_mean": exact["mean"].to_numpy(), "exact_sd": exact["sd"].to_numpy()})
    return BudgetResult(table=table, level=level, method=method, n_resamples=n_resamples, scores=u.copy())


def plot_budget(results: BudgetResult | Mapping[str, BudgetResult], ax=None, *, exact: bool = False):
    """Mean and confidence interval of the best score per budget (book Figure 3.1 style).

    Parameters
    ----------
    results : BudgetResult or mapping of label -> BudgetResult
        One or several metrics (e.g. F1, precision, recall), one panel line each.
    ax : matplotlib Axes, optional
        Axes to draw into; a new figure is made otherwise.
    exact : bool
        Also draw the closed-form expected maximum as a line.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from mixeval.resampling import budget_ci, plot_budget
    >>> u = np.random.default_rng(0).beta(5, 2, size=30)
    >>> fig = plot_budget({"F1": budget_ci(u, n_resamples=500, random_state=0)})
    >>> len(fig.axes)
    1
    """
    import matplotlib.pyplot as plt

    if isinstance(results, BudgetResult):
        results = {"score": results}
    if not isinstance(results, Mapping) or not results:
        raise InputTypeError("`results` must be a BudgetResult or a non-empty mapping of label -> BudgetResult.")
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4))
    else:
        fig = ax.figure
    n = len(results)
    for j, (label, res) in enumerate(results.items()):
        if not isinstance(res, BudgetResult):
            raise InputTypeError(f"results[{label!r}] is a {type(res).__name__}, not a BudgetResult.")
        t = res.table
        offset = (j - (n - 1) / 2) * 0.08  # dodge overlapping error bars
        line = ax.errorbar(t["budget"] + offset, t["mean"], yerr=[t["mean"] - t["low"], t["high"] - t["mean"]],
                           fmt="o", ms=3, capsize=2, label=f"{label} ({100 * res.level:g}% CI)")
        if exact:
            ax.plot(t["budget"], t["exact_mean"], "-", lw=1, color=line[0].get_color(), alpha=0.6)
    ax.set_xlabel("budget (configurations tried)")
    ax.set_ylabel("expected best score")
    ax.legend(frameon=False)
    return fig
