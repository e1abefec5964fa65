"""What every reader shares: the long format's key columns, file discovery, JSON(L) parsing, the frame builder
and the check that an item id names one question for every model."""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...errors import DroppedRowsWarning, InputError, caller_stacklevel

__all__ = ["KEY_COLUMNS", "check_items", "check_sources", "frame_of_files"]

#: The identity columns of the long format, in order.
KEY_COLUMNS = ("model", "task", "item", "repeat", "item_hash")


def _hash(*parts: Any) -> str:
    """A short digest of ``parts`` (strings are hashed as they are, anything else as sorted JSON)."""
    if all(isinstance(p, str) for p in parts):
        text = "\x1f".join(parts)
    else:
        text = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def _paths(paths: str | Path | Iterable[str | Path], pattern: str, what: str,
           keep: Callable[[Path], bool] | None = None) -> list[Path]:
    """Files named by ``paths``: files as given, directories searched recursively for the glob patterns in
    ``pattern`` (comma-separated), keeping the files ``keep`` accepts."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(f for glob in pattern.split(", ") for f in p.rglob(glob) if keep is None or keep(f))
            if not found:
                raise InputError(f"no {what} ({pattern}) under the directory {p}.")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise InputError(f"no such file or directory: {p}")
    if not out:
        raise InputError(f"no {what} given.")
    return out


def _scalar(value: Any) -> Any:
    """A field value as a table cell: scalars as they are, anything else as its JSON text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _field_columns(fields: Mapping[str, Any], taken: set[str], prefix: str) -> dict[str, Any]:
    return {(f"{prefix}{k}" if k in taken else k): _scalar(v) for k, v in fields.items()}


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _frame(rows: list[dict[str, Any]], metrics: Sequence[str], source: str) -> pd.DataFrame:
    if not rows:
        raise InputError(f"{source}: no samples in the log.")
    frame = pd.DataFrame.from_records(rows)
    for col in KEY_COLUMNS:
        if col not in frame:
            frame[col] = ""
    frame["model"] = frame["model"].astype(str)
    frame["task"] = frame["task"].astype(str)
    frame["item"] = frame["item"].astype(str)
    frame["repeat"] = frame["repeat"].astype(int)
    frame["item_hash"] = frame["item_hash"].fillna("").astype(str)
    metrics = list(dict.fromkeys(metrics))
    for m in metrics:
        frame[m] = pd.to_numeric(frame[m], errors="raise").astype(float)
    rest = [c for c in frame.columns if c not in KEY_COLUMNS and c not in metrics]
    frame = frame[list(KEY_COLUMNS) + metrics + rest]
    frame.attrs["metrics"] = metrics
    return frame


def _jsonl_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None


def _json_object(line: str | bytes, path: Path, lineno: int) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}, line {lineno}: not JSON ({exc.msg}).") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read {path}, line {lineno}: {exc}") from None
    if not isinstance(record, dict):
        raise InputError(f"{path}, line {lineno}: a record must be a JSON object.")
    return record


def _read_jsonl_records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file (parsed as one JSON array; a bad line is found and named)."""
    lines = [line for line in _jsonl_lines(path) if line.strip()]
    try:
        records = json.loads("[" + ",".join(lines) + "]")
    except json.JSONDecodeError:
        records = None
    if records is None or len(records) != len(lines) or not all(isinstance(r, dict) for r in records):
        records = [_json_object(line, path, lineno) for lineno, line in enumerate(lines, 1)]
    return records


def frame_of_files(parts: Iterable[tuple[str, list[dict[str, Any]], list[str]]], what: str) -> pd.DataFrame:
    """The long format of the rows of several files (``(file, rows, metrics)`` each), refusing rows that two files
    both hold (:func:`check_sources`)."""
    rows: list[dict[str, Any]] = []
    metrics: list[str] = []
    sources: list[str] = []
    for source, r, m in parts:
        rows.extend(r)
        metrics.extend(m)
        sources.extend([source] * len(r))
    frame = _frame(rows, metrics, what)
    check_sources(frame, sources)
    return frame


def check_sources(data: pd.DataFrame, sources: Sequence[str]) -> None:
    """Refuse rows of two different files (``sources``, one per row) that are the same (model, task, item,
    repeat): two runs under one model name, or one run given twice; the message names both files."""
    if not len(data):
        return
    row_key = np.zeros(len(data), dtype=np.int64)
    for col in ("model", "task", "item", "repeat"):
        codes, labels = pd.factorize(data[col], sort=False)
        row_key = _combine(row_key, codes, len(labels))
    row_key, _ = pd.factorize(row_key, sort=False)
    source, _ = pd.factorize(np.asarray(sources, dtype=object), sort=False)
    lo = np.full(row_key.max() + 1, np.iinfo(np.int64).max)
    hi = np.full(row_key.max() + 1, -1)
    np.minimum.at(lo, row_key, source)
    np.maximum.at(hi, row_key, source)
    clash_keys = np.flatnonzero(lo != hi)
    if not clash_keys.size:
        return
    rows = np.flatnonzero(row_key == clash_keys[0])
    first = data.iloc[rows[0]]
    model, task, repeat = first["model"], first["task"], first["repeat"]
    files = list(dict.fromkeys(np.asarray(sources, dtype=object)[rows].tolist()))
    raise InputError(f"{files[0]} and {files[1]} both hold model {model!r} on task {task!r} (repeat {repeat}, "
                     f"{len(clash_keys)} items in common): two runs under the same model name, or one run given twice. "
                     "Give each run its own model name (lm-evaluation-harness: model= or the results file's "
                     "model_name; inspect_ai: --model), or read only one of them.")


def check_items(data: pd.DataFrame, *, on_mismatch: str = "error") -> pd.DataFrame:
    """Check that an item id names the same question for every model, and that no row is duplicated.

    Parameters
    ----------
    data : pandas.DataFrame
        Long format with ``model``, ``task``, ``item``, ``repeat`` and ``item_hash`` columns.
    on_mismatch : {"error", "drop"}
        ``"error"``: raise, naming the items and models; ``"drop"``: leave those items out for every model
        with a :class:`~mixeval.errors.DroppedRowsWarning` naming them.

    Returns
    -------
    pandas.DataFrame
        ``data`` (a new frame without the mismatched items when dropping).

    Examples
    --------
    >>> import pandas as pd
    >>> d = pd.DataFrame({"model": ["a", "b"], "task": "t", "item": "1", "repeat": 0, "item_hash": ["x", "y"]})
    >>> check_items(d)
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: 1 items have the same id but a different question (input/target hash) across models: task
    't' item '1': a vs b. ...
    """
    if on_mismatch not in ("error", "drop"):
        raise InputError(f"on_mismatch must be 'error' or 'drop'; got {on_mismatch!r}.")
    codes = {c: pd.factorize(data[c], sort=False) for c in ("model", "task", "item", "item_hash")}
    item_code, _ = pd.factorize(_combine(codes["task"][0], codes["item"][0], len(codes["item"][1])), sort=False)
    repeat_code, repeats = pd.factorize(data["repeat"], sort=False)
    row_key = _combine(_combine(item_code, codes["model"][0], len(codes["model"][1])), repeat_code, len(repeats))
    _, first, counts = np.unique(row_key, return_index=True, return_counts=True)
    if (counts > 1).any():
        dup = data.iloc[first[counts > 1][:3]][["model", "task", "item", "repeat"]].to_dict(orient="records")
        raise InputError(f"{int(counts[counts > 1].sum())} rows repeat a (model, task, item, repeat), e.g. {dup}: the "
                         "same log given twice, two runs under one model name, or repeats without a 'repeat' number. "
                         "Give each run its own model name, or number the repeats in a 'repeat' column.")
    hash_code, hash_labels = codes["item_hash"]
    hashed = np.asarray(hash_labels != "")[hash_code] if len(hash_labels) else np.zeros(len(data), bool)
    n_items = int(item_code.max()) + 1 if len(item_code) else 0
    lo = np.full(n_items, np.iinfo(np.int64).max)
    hi = np.full(n_items, -1)
    np.minimum.at(lo, item_code[hashed], hash_code[hashed])
    np.maximum.at(hi, item_code[hashed], hash_code[hashed])
    bad_items = np.flatnonzero((hi >= 0) & (lo != hi))
    if bad_items.size == 0:
        return data
    bad_rows = np.isin(item_code, bad_items)
    examples = []
    for item in bad_items[:3]:
        rows = data.loc[(item_code == item) & hashed, ["model", "task", "item", "item_hash"]]
        groups = rows.groupby("item_hash")["model"].apply(lambda s: "/".join(sorted(set(map(str, s)))))
        first_row = rows.iloc[0]
        examples.append(f"task {first_row['task']!r} item {first_row['item']!r}: " + " vs ".join(groups))
    text = (f"{bad_items.size} items have the same id but a different question (input/target hash) across models: "
            + "; ".join(examples))
    if on_mismatch == "error":
        raise InputError(text + ". The logs were made on different data; pass on_mismatch='drop' "
                         "(CLI: --drop-mismatched) to leave these items out for every model.")
    warnings.warn(text + f"; these {bad_items.size} items are left out for every model.", DroppedRowsWarning,
                  stacklevel=caller_stacklevel())
    out = data.loc[~bad_rows].reset_index(drop=True)
    out.attrs = dict(data.attrs)
    return out


def _combine(a: np.ndarray, b: np.ndarray, n_b: int) -> np.ndarray:
    """One int64 code per row for the pair of codes ``(a, b)``, ``b`` in ``0..n_b-1``."""
    return a.astype(np.int64) * max(n_b, 1) + b
