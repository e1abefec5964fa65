"""Stage 1 of local metric accuracy: score each output and its perturbed version with every metric."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._random import as_generator
from .._validation import require_columns, require_dataframe, require_no_missing
from ..errors import InputError, InputTypeError
from ._perturb import DropWords, Perturbation

__all__ = ["score_pairs", "Metric"]

Metric = Callable[[Any, Any], float]


def score_pairs(
    data: pd.DataFrame,
    metrics: Mapping[str, Metric],
    *,
    context: str,
    output: str,
    subset: str,
    context_id: str | None = None,
    perturbation: Perturbation | None = None,
    random_state: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """Perturb every output once and score the pair (output, perturbed output) with each metric.

    Parameters
    ----------
    data : DataFrame
        One row per system output ``y``.
    metrics : mapping name -> callable ``metric(context, output) -> float``
        The metrics to meta-evaluate, e.g. ``{"wer": word_error_rate}``.
    context : str
        Column passed as the metric's first argument (e.g. the reference).
    output : str
        Column with the system outputs ``y``.
    subset : str
        Column naming the subset of outputs ``Q`` each output belongs to.
    context_id : str, optional
        Column identifying the evaluation context ``x`` (the unit of averaging and
        resampling); defaults to ``context``.
    perturbation : callable ``(output, rng) -> output``, default ``DropWords(0.2)``
        The degrading perturbation; see :class:`DropWords`, :class:`RandomTranspositions`.
    random_state : int, numpy Generator or None
        Seed of the perturbations (rows are perturbed in order, one shared stream).

    Returns
    -------
    DataFrame
        Long format, one row per (output, metric): ``row`` (index label in ``data``),
        ``context``, ``subset``, ``metric``, ``score`` (``metric(x, y)``), ``perturbed``
        (``metric(x, y')``) -- ready for :func:`local_accuracy`. All metrics judge the
        same perturbed output ``y'``.

    Examples
    --------
    >>> from mixeval.meta import example_translations, word_error_rate
    >>> pairs = score_pairs(example_translations(), {"wer": word_error_rate},
    ...                     context="reference", output="hypothesis", subset="system",
    ...                     context_id="context", random_state=0)
    >>> pairs.columns.tolist()
    ['row', 'context', 'subset', 'metric', 'score', 'perturbed']
    """
    require_dataframe(data)
    if not isinstance(metrics, Mapping) or not metrics:
        raise InputTypeError("`metrics` must be a non-empty mapping of name -> callable metric(context, output).")
    for name, f in metrics.items():
        if not callable(f):
            raise InputTypeError(f"metric {name!r} must be callable as metric(context, output) -> float; got {f!r}.")
    cid = context if context_id is None else context_id
    cols = list(dict.fromkeys([context, output, subset, cid]))
    require_columns(data, cols)
    require_no_missing(data, cols)
    pert = DropWords() if perturbation is None else perturbation
    if not callable(pert):
        raise InputTypeError(f"`perturbation` must be a callable (output, rng) -> output; got {pert!r}.")
    rng = as_generator(random_state)
    ctx_values = data[context].tolist()
    outputs = data[output].tolist()
    perturbed_outputs = [pert(o, rng) for o in outputs]
    frames = []
    for name, f in metrics.items():
        s = np.array([_call_metric(f, name, c, o) for c, o in zip(ctx_values, outputs)], dtype=float)
        sp = np.array([_call_metric(f, name, c, o) for c, o in zip(ctx_values, perturbed_outputs)], dtype=float)
        frames.append(
            pd.DataFrame(
                {
                    "row": data.index.to_numpy(),
                    "context": data[cid].to_numpy(),
                    "subset": data[subset].to_numpy(),
                    "metric": name,
                    "score": s,
                    "perturbed": sp,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def _call_metric(f: Metric, name: str, c: Any, o: Any) -> float:
    value = f(c, o)
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputTypeError(f"metric {name!r} must return a number; it returned {value!r}.") from None
    if not math.isfinite(v):
        raise InputError(f"metric {name!r} returned {v} for output {o!r}; metrics must return finite numbers.")
    return v
