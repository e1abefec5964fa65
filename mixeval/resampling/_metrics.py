"""Corpus-level metrics computed from column sums of per-item sufficient statistics.

A corpus metric here is a function ``metric(sums) -> values`` taking an array of
shape ``(R, k)`` (``R`` sets of column sums of an ``n x k`` per-item statistics
matrix) and returning ``R`` metric values. Resampling a corpus metric then only
needs weighted column sums, which the kernels in :mod:`._engine` vectorise.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import InputError, InputTypeError

__all__ = ["f1_from_counts", "precision_from_counts", "recall_from_counts", "accuracy_from_counts",
           "bleu_from_counts", "METRICS", "resolve_metric"]

Metric = Callable[[np.ndarray], np.ndarray]


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def f1_from_counts(sums: np.ndarray) -> np.ndarray:
    """Corpus F1 from summed ``(tp, fp, fn)`` counts: ``2 tp / (2 tp + fp + fn)`` (0 when undefined).

    Examples
    --------
    >>> import numpy as np
    >>> f1_from_counts(np.array([[8.0, 2.0, 2.0]])).tolist()
    [0.8]
    """
    sums = np.atleast_2d(sums)
    tp, fp, fn = sums[:, 0], sums[:, 1], sums[:, 2]
    return _ratio(2 * tp, 2 * tp + fp + fn)


def precision_from_counts(sums: np.ndarray) -> np.ndarray:
    """Corpus precision from summed ``(tp, fp)`` counts (extra columns are ignored).

    Examples
    --------
    >>> import numpy as np
    >>> precision_from_counts(np.array([[8.0, 2.0, 4.0], [0.0, 0.0, 3.0]])).tolist()   # 0 when undefined
    [0.8, 0.0]
    """
    sums = np.atleast_2d(sums)
    return _ratio(sums[:, 0], sums[:, 0] + sums[:, 1])


def recall_from_counts(sums: np.ndarray) -> np.ndarray:
    """Corpus recall from summed ``(tp, fp, fn)`` counts (``tp / (tp + fn)``).

    Examples
    --------
    >>> import numpy as np
    >>> recall_from_counts(np.array([[8.0, 2.0, 2.0]])).tolist()
    [0.8]
    """
    sums = np.atleast_2d(sums)
    return _ratio(sums[:, 0], sums[:, 0] + sums[:, 2])


def accuracy_from_counts(sums: np.ndarray) -> np.ndarray:
    """Corpus accuracy from summed ``(correct, total)`` counts.

    Examples
    --------
    >>> import numpy as np
    >>> accuracy_from_counts(np.array([[45.0, 50.0]])).tolist()
    [0.9]
    """
    sums = np.atleast_2d(sums)
    return _ratio(sums[:, 0], sums[:, 1])


def bleu_from_counts(sums: np.ndarray, max_order: int = 4) -> np.ndarray:
    """Corpus BLEU (0-100) from summed sacreBLEU statistics.

    Columns, in sacreBLEU's order: ``hyp_len, ref_len, correct_1..correct_N,
    total_1..total_N`` with ``N = max_order``.

    Notes
    -----
    :math:`\\mathrm{BLEU} = \\mathrm{BP} \\cdot \\exp(\\frac1N \\sum_n \\log p_n)` with
    :math:`p_n = \\mathrm{correct}_n / \\mathrm{total}_n` and brevity penalty
    :math:`\\mathrm{BP} = \\min(1, \\exp(1 - r / c))` (0 for an empty hypothesis).
    Zero n-gram matches use sacreBLEU's default ``"exp"`` smoothing: the ``j``-th
    order with no match gets :math:`p_n = 1 / (2^j \\mathrm{total}_n)`. Orders with
    ``total_n = 0`` give BLEU 0 (sacreBLEU lowers the effective order only for
    sentence-level BLEU).

    Examples
    --------
    >>> import numpy as np
    >>> s = np.array([[10, 10, 10, 9, 8, 7, 10, 9, 8, 7]], dtype=float)
    >>> bleu_from_counts(s).round(6).tolist()
    [100.0]
    """
    sums = np.atleast_2d(np.asarray(sums, dtype=float))
    if sums.shape[1] != 2 + 2 * max_order:
        raise InputError(
            f"BLEU needs {2 + 2 * max_order} statistics per item (hyp_len, ref_len, correct_1..{max_order}, "
            f"total_1..{max_order}); got {sums.shape[1]} columns."
        )
    hyp, ref = sums[:, 0], sums[:, 1]
    correct = sums[:, 2:2 + max_order]
    total = sums[:, 2 + max_order:]
    log_p = np.zeros(len(sums))
    smooth = np.ones(len(sums))
    valid = np.ones(len(sums), dtype=bool)
    for order in range(max_order):
        c, t = correct[:, order], total[:, order]
        valid &= t > 0
        zero = c == 0
        smooth = np.where(zero, smooth * 2.0, smooth)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(zero, 1.0 / (smooth * np.where(t > 0, t, 1.0)), c / np.where(t > 0, t, 1.0))
            log_p += np.log(np.where(t > 0, p, 1.0))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        bp = np.where(hyp < ref, np.exp(1.0 - ref / np.where(hyp > 0, hyp, 1.0)), 1.0)
    bp = np.where(hyp > 0, bp, 0.0)
    return np.where(valid, 100.0 * bp * np.exp(log_p / max_order), 0.0)


METRICS: dict[str, tuple[Metric, int | None]] = {
    "f1": (f1_from_counts, 3),
    "precision": (precision_from_counts, 2),
    "recall": (recall_from_counts, 3),
    "accuracy": (accuracy_from_counts, 2),
    "bleu": (bleu_from_counts, 10),
}


def resolve_metric(metric: object) -> tuple[Metric, str, int | None]:
    """Return ``(function, name, required number of columns or None)`` for ``metric``."""
    if isinstance(metric, str):
        try:
            fn, k = METRICS[metric.lower()]
        except KeyError:
            raise InputError(
                f"unknown metric {metric!r}; use one of {', '.join(map(repr, METRICS))}, "
                "or pass a function mapping column sums of shape (R, k) to R values."
            ) from None
        return fn, metric.lower(), k
    if callable(metric):
        return metric, getattr(metric, "__name__", "metric"), None
    raise InputTypeError(f"`metric` must be a name such as 'f1' or a callable; got {type(metric).__name__}.")
