"""Figures of a :class:`~mixeval.logs.LogComparison`: each pair's interval three ways, the leaderboard."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ._result import LogComparison

__all__ = ["plot_pair_intervals", "plot_leaderboard"]

_WAYS = (("naive", "lower_naive", "upper_naive", "tab:gray"), ("cluster CR2", "lower", "upper", "tab:blue"),
         ("mixed model", "lower_mixed", "upper_mixed", "tab:orange"))


def plot_pair_intervals(result: LogComparison, *, max_pairs: int = 30):
    """Each pair's difference with its naive, CR2 and (when fitted) mixed-model interval, side by side.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.logs import compare_logs
    >>> rng = np.random.default_rng(0)
    >>> d = pd.DataFrame({"model": np.repeat(["A", "B"], 40), "item": np.tile(np.arange(40), 2),
    ...                   "s": rng.normal(size=80)})
    >>> fig = plot_pair_intervals(compare_logs(d, metric="s", mixed=False))
    >>> len(fig.axes)
    1
    """
    import matplotlib.pyplot as plt

    pairs = result.pairs.head(max_pairs)
    ways = [w for w in _WAYS if w[1] in pairs.columns]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(pairs) * len(ways) + 1.2))
    y = np.arange(len(pairs))[::-1] * (len(ways) + 1)
    for k, (label, lo, hi, colour) in enumerate(ways):
        pos = y - k
        ax.hlines(pos, pairs[lo], pairs[hi], color=colour, lw=2, label=label)
        centre = pairs["mixed_estimate"] if lo == "lower_mixed" else pairs["estimate"]
        ax.plot(centre, pos, "o", color=colour, ms=4)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(y - (len(ways) - 1) / 2)
    ax.set_yticklabels([f"{a} - {b}" for a, b in zip(pairs["model_a"], pairs["model_b"])])
    ax.set_xlabel(f"difference in {result.metric} ({100 * result.level:g}% intervals)")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    return fig


def plot_leaderboard(result: LogComparison):
    """Model means with CR2 intervals, labelled with their simultaneous rank sets.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mixeval.logs import compare_logs
    >>> rng = np.random.default_rng(0)
    >>> d = pd.DataFrame({"model": np.repeat(list("ABC"), 30), "item": np.tile(np.arange(30), 3),
    ...                   "passage": np.tile(np.arange(30) // 3, 3), "s": rng.normal(size=90)})
    >>> res = compare_logs(d, metric="s", cluster="passage", mixed=False)
    >>> [t.get_text().split()[0] for t in plot_leaderboard(res).axes[0].get_yticklabels()] == list(res.leaderboard["model"])
    True
    """
    import matplotlib.pyplot as plt

    board = result.leaderboard
    fig, ax = plt.subplots(figsize=(6, 0.4 * len(board) + 1.2))
    y = np.arange(len(board))[::-1]
    ax.hlines(y, board["lower"], board["upper"], color="tab:blue", lw=2)
    ax.plot(board["estimate"], y, "o", color="tab:blue")
    ax.set_yticks(y)
    ax.set_yticklabels([f"{m}  (ranks {lo}-{hi})" if lo != hi else f"{m}  (rank {lo})"
                        for m, lo, hi in zip(board["model"], board["rank_lower"], board["rank_upper"])])
    ax.set_xlabel(f"mean {result.metric} on {result.n_common_items} shared items")
    fig.tight_layout()
    return fig
