"""From a long-format log to the item x model table the comparisons use (vectorised group sums)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import ColumnError, DroppedRowsWarning, InputError, InputTypeError, caller_stacklevel
from ._stats import cluster_indicator

__all__ = ["ItemTable", "choose_metric", "item_table"]


@dataclass(frozen=True)
class ItemTable:
    """Item means of one metric: ``means[i, m]`` (NaN where model ``m`` has no result on item ``i``),
    ``repeats[i, m]`` how many repeats were averaged, ``within_ss[i, m]`` their sum of squares about the
    item mean; ``clusters`` the item x cluster indicator (the identity without a cluster column),
    ``cluster_labels``/``by_codes``/``by_labels`` the cluster and class of each item."""

    models: tuple[str, ...]
    items: pd.DataFrame               # task, item (one row per item, in the order of the rows of `means`)
    means: np.ndarray
    repeats: np.ndarray
    within_ss: np.ndarray
    clusters: sp.csr_matrix
    cluster_labels: np.ndarray | None
    by_codes: np.ndarray | None
    by_labels: tuple[Any, ...]
    binary: bool

    @property
    def present(self) -> np.ndarray:
        return self.repeats > 0


def choose_metric(data: pd.DataFrame, metric: str | None) -> str:
    """The metric column: ``metric`` if given (checked), else the only metric the reader found."""
    listed = list(data.attrs.get("metrics") or [])
    if metric is None:
        if len(listed) == 1:
            return listed[0]
        if listed:
            raise InputError(f"the logs have several metrics {listed}; choose one with metric= (CLI: --metric).")
        raise InputError("name the score column with metric= (CLI: --metric); the table does not say which "
                         "columns are metrics.")
    if not isinstance(metric, str):
        raise InputTypeError(f"metric must be a column name (str); got {type(metric).__name__}.")
    if metric not in data.columns:
        hint = f"the metrics in the logs are {listed}" if listed else f"the columns are {list(data.columns)}"
        raise ColumnError(f"unknown metric {metric!r}; {hint}.")
    if not (pd.api.types.is_numeric_dtype(data[metric]) or pd.api.types.is_bool_dtype(data[metric])):
        raise InputTypeError(f"metric {metric!r} is not numeric (dtype {data[metric].dtype}).")
    return metric


def _require_columns(data: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise ColumnError(f"{what}: no column {missing[0]!r} in the logs; the columns are {list(data.columns)}.")


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _item_level(codes: np.ndarray, item_codes: np.ndarray, n_items: int, column: str, labels: Sequence[Any] | pd.Index,
                item_keys: pd.DataFrame) -> np.ndarray:
    """The one value of ``codes`` per item; an error naming an item where it varies."""
    lo = np.full(n_items, np.iinfo(np.int64).max)
    hi = np.full(n_items, -1)
    np.minimum.at(lo, item_codes, codes)
    np.maximum.at(hi, item_codes, codes)
    bad = np.flatnonzero(lo != hi)
    if bad.size:
        i = bad[0]
        raise InputError(f"column {column!r} must be a property of the item, the same for every model and repeat; "
                         f"item {item_keys.iloc[i].to_dict()} has the values {_plain(labels[lo[i]])!r} and {_plain(labels[hi[i]])!r} "
                         f"({bad.size} such items).")
    return lo


def _item_codes(data: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame]:
    """Integer codes of the items, an item being a (task, item) pair, and the table of the items' labels."""
    keys = ["task", "item"] if "task" in data.columns else ["item"]
    combined = np.zeros(len(data), dtype=np.int64)
    uniques = []
    for key in keys:
        codes, labels = pd.factorize(data[key], sort=False)
        if (codes < 0).any():
            raise InputError(f"column {key!r} has missing values; every row needs a {key}.")
        combined = combined * len(labels) + codes
        uniques.append(labels)
    item_codes, first = pd.factorize(combined, sort=False)
    items, rest = {}, first
    for key, labels in zip(reversed(keys), reversed(uniques)):
        items[key] = np.asarray(labels)[rest % len(labels)].astype(str)
        rest = rest // len(labels)
    return item_codes, pd.DataFrame({k: items[k] for k in keys})


def item_table(data: pd.DataFrame, metric: str, *, cluster: str | None = None, by: str | None = None) -> ItemTable:
    """Average the repeats of each model on each item and index items, clusters and classes.

    ``data`` holds ``model``, ``item`` (and optionally ``task``, ``repeat``) and the ``metric`` column;
    an item is a (task, item) pair. Rows without a metric value (NaN: a sample the harness could not score) are
    left out with a :class:`~mixeval.errors.DroppedRowsWarning` naming how many and where: that model then lacks
    the item, and its pairs use the items both models have. Infinite values are an error.
    """
    _require_columns(data, ["model", "item"], "the long format")
    for flag, col in (("cluster", cluster), ("by", by)):
        if col is not None:
            if not isinstance(col, str):
                raise InputTypeError(f"{flag} must be a column name (str); got {type(col).__name__}.")
            _require_columns(data, [col], f"{flag}={col!r}")
    y = data[metric].to_numpy(dtype=float, na_value=np.nan)
    if np.isinf(y).any():
        raise InputError(f"metric {metric!r} has {int(np.isinf(y).sum())} infinite values; a score must be a finite "
                         "number. Remove or fix those rows before comparing.")
    missing = np.isnan(y)
    if missing.any():
        first = data.loc[missing, [c for c in ("model", "task", "item") if c in data.columns]].iloc[0].to_dict()
        warnings.warn(f"metric {metric!r} has no value in {int(missing.sum())} rows (e.g. {first}); those rows are "
                      "left out, and a model without a value on an item is compared on the other items.",
                      DroppedRowsWarning, stacklevel=caller_stacklevel())
        data = data.loc[~missing]
        y = y[~missing]
    blank = (data["model"].isna() | (data["model"].astype(str).str.strip() == "")).to_numpy()
    if blank.any():
        rows = np.flatnonzero(blank)[:5].tolist()
        raise InputError(f"column 'model' is empty in {int(blank.sum())} rows (e.g. rows {rows} of the table); every "
                         "row needs its model. Fill them, or remove those rows.")
    model_codes, models = pd.factorize(data["model"].astype(str), sort=True)
    item_codes, items = _item_codes(data)
    n_items, n_models = len(items), len(models)
    if n_models < 2:
        raise InputError(f"the logs hold one model only ({list(models)}); a comparison needs at least two.")
    cell = item_codes.astype(np.int64) * n_models + model_codes
    size = n_items * n_models
    count = np.bincount(cell, minlength=size).astype(float)
    total = np.bincount(cell, weights=y, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / count
        centred = y - mean[cell]
    within = np.bincount(cell, weights=centred * centred, minlength=size)
    shape = (n_items, n_models)
    cluster_labels = None
    if cluster is not None:
        c_codes, c_labels = pd.factorize(data[cluster], sort=True)
        if (c_codes < 0).any():
            raise InputError(f"cluster column {cluster!r} has missing values; every item needs a cluster.")
        per_item = _item_level(c_codes, item_codes, n_items, cluster, c_labels, items)
        clusters = cluster_indicator(per_item, len(c_labels))
        cluster_labels = np.asarray(c_labels)[per_item]
    else:
        clusters = sp.identity(n_items, format="csr")
    by_codes, by_labels = None, ()
    if by is not None:
        b_codes, b_labels = pd.factorize(data[by], sort=True)
        if (b_codes < 0).any():
            raise InputError(f"--by column {by!r} has missing values; every item needs a class.")
        by_codes = _item_level(b_codes, item_codes, n_items, by, b_labels, items)
        by_labels = tuple(b_labels.tolist())
    binary = bool(np.isin(y, (0.0, 1.0)).all())
    return ItemTable(models=tuple(str(m) for m in models), items=items, means=mean.reshape(shape),
                     repeats=count.reshape(shape), within_ss=within.reshape(shape), clusters=clusters,
                     cluster_labels=cluster_labels, by_codes=by_codes, by_labels=by_labels, binary=binary)
