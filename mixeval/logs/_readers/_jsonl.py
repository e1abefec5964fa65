"""Any JSONL of per-item results, with a column mapping."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ...errors import ColumnError, InputError, InputTypeError
from ._common import _frame, _hash, _number, _paths, _read_jsonl_records, _scalar, check_items

__all__ = ["read_jsonl"]


def _get(record: Mapping[str, Any], key: str, path: Path, lineno: int) -> Any:
    value: Any = record
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise ColumnError(f"{path}, record {lineno}: no field {key!r}; the record's keys are {sorted(record)}.")
        value = value[part]
    return value


def read_jsonl(paths: str | Path | Iterable[str | Path], *, item: str, metrics: Sequence[str],
               model: str | None = None, model_name: str | None = None, task: str | None = None,
               repeat: str | None = None, fields: Sequence[str] = (), on_mismatch: str = "error") -> pd.DataFrame:
    """Read any JSONL of per-item results with a column mapping.

    Parameters
    ----------
    paths : path or paths
        JSONL files (one JSON object a line), or directories searched recursively for ``*.jsonl``.
    item, model, task, repeat : str
        The record keys (dotted for nested objects, e.g. ``"doc.id"``) holding each column; give ``model``
        or ``model_name`` (one name for every record of the files).
    metrics : sequence of str
        Keys of numeric metrics (booleans count as 0/1); each becomes a column named by its key.
    fields : sequence of str
        Further keys kept as columns (properties, clusters), named by their keys.
    on_mismatch : {"error", "drop"}
        See :func:`check_items` (the item hash here is of the ``fields`` values).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "run.jsonl"
    >>> _ = p.write_text("\\n".join(json.dumps({"m": m, "q": q, "ok": q == "b" or m == "x"}) for m in "xy" for q in "ab"))
    >>> print(read_jsonl(p, item="q", metrics=["ok"], model="m")[["model", "item", "ok"]].to_string(index=False))
    model item  ok
        x    a 1.0
        x    b 1.0
        y    a 0.0
        y    b 1.0
    """
    if (model is None) == (model_name is None):
        raise InputError("read_jsonl: give `model` (the key holding the model) or `model_name` (one name), not both.")
    if not metrics or isinstance(metrics, str):
        raise InputTypeError("read_jsonl: `metrics` must be a non-empty list of keys, e.g. metrics=['acc'].")
    rows = []
    for path in _paths(paths, "*.jsonl", "JSONL files"):
        for lineno, rec in enumerate(_read_jsonl_records(path), 1):
            values = {f: _scalar(_get(rec, f, path, lineno)) for f in fields}
            row = {"model": model_name if model is None else str(_get(rec, model, path, lineno)),
                   "task": "" if task is None else str(_get(rec, task, path, lineno)),
                   "item": str(_get(rec, item, path, lineno)),
                   "repeat": 0 if repeat is None else int(_get(rec, repeat, path, lineno)),
                   "item_hash": _hash(values) if fields else ""}
            for m in metrics:
                v = _number(_get(rec, m, path, lineno))
                if v is None:
                    raise InputError(f"{path}, record {lineno}: metric {m!r} is not a number.")
                row[m] = v
            row.update(values)
            rows.append(row)
    return check_items(_frame(rows, metrics, "JSONL"), on_mismatch=on_mismatch)
