"""``read_logs``: any mix of harness logs and long-format tables, files and directories."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import ColumnError, InputError
from ._common import check_items, check_sources
from ._helm import read_helm
from ._inspect import looks_like_inspect_json, read_inspect
from ._lm_eval import read_lm_eval

__all__ = ["read_logs"]


def _kind(path: Path) -> str:
    name = path.name
    if name.startswith("samples_") and name.endswith(".jsonl"):
        return "lm_eval"
    if name == "per_instance_stats.json":
        return "helm"
    if path.suffix == ".eval":
        return "inspect"
    if path.suffix == ".json":
        return "inspect"   # a file given by name; in directories only the .json files that are inspect_ai logs
    if path.suffix in (".csv", ".parquet") or name.endswith(".csv.gz"):
        return "table"
    raise InputError(f"{path}: unknown log format; give lm-evaluation-harness samples_*.jsonl, inspect_ai "
                     ".eval/.json, HELM per_instance_stats.json or a long-format .csv/.parquet (for other "
                     "JSONL use mixeval.datasets.read_jsonl with a column mapping).")


def _discover(raw: str | Path) -> list[Path]:
    p = Path(raw)
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise InputError(f"no such file or directory: {p}")
    found = sorted([*p.rglob("samples_*.jsonl"), *p.rglob("*.eval"), *p.rglob("per_instance_stats.json"),
                    *(f for f in p.rglob("*.json") if looks_like_inspect_json(f))])
    if not found:
        raise InputError(f"{p}: no evaluation logs found (samples_*.jsonl, inspect_ai *.eval or .json logs, "
                         "per_instance_stats.json).")
    return found


def _read_table(path: Path) -> pd.DataFrame:
    if path.suffix == ".parquet":
        frame = pd.read_parquet(path)
    else:   # the ids as written: "1" and "1.0" are different ids (a float column would make both "1.0")
        frame = pd.read_csv(path, dtype={"model": str, "task": str, "item": str})
    missing = [c for c in ("model", "item") if c not in frame]
    if missing:
        raise ColumnError(f"{path}: a long-format table needs the columns model and item (missing {missing}); "
                          f"its columns are {list(frame.columns)}.")
    for col in ("model", "item", "task"):
        blank = (frame[col].isna() | (frame[col].astype(str).str.strip() == "")).to_numpy() if col in frame else None
        if blank is not None and blank.any():
            lines = (np.flatnonzero(blank)[:5] + 2).tolist()
            raise InputError(f"{path}: column {col!r} is empty in {int(blank.sum())} rows (file lines {lines}); every "
                             f"row needs its {col}. Fill them, or remove those rows.")
    frame = frame.copy()
    for col, default in (("task", ""), ("repeat", 0), ("item_hash", "")):
        if col not in frame:
            frame[col] = default
    frame["item_hash"] = frame["item_hash"].fillna("").astype(str)
    for col in ("model", "task", "item"):
        frame[col] = frame[col].astype(str)
    return frame


def read_logs(paths: str | Path | Iterable[str | Path], *, on_mismatch: str = "error",
              on_error: str = "error") -> pd.DataFrame:
    """Read evaluation logs of any supported harness (mixed freely) into one long-format frame.

    Parameters
    ----------
    paths : path or paths
        Files or directories: lm-evaluation-harness ``samples_*.jsonl``, inspect_ai ``.eval``/``.json``,
        HELM ``per_instance_stats.json`` (with ``run_spec.json`` beside it), or a long-format ``.csv`` /
        ``.parquet`` with columns ``model``, ``item`` (and optionally ``task``, ``repeat``).
    on_mismatch : {"error", "drop"}
        See :func:`check_items`.
    on_error : {"error", "drop"}
        inspect_ai samples that ended in an error: see :func:`read_inspect`.

    Returns
    -------
    pandas.DataFrame
        The long format described in :mod:`mixeval.logs`; ``attrs["metrics"]`` lists the metric columns
        of the harness logs (empty for tables).

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "long.csv"
    >>> pd.DataFrame({"model": ["a", "a", "b", "b"], "item": [1, 2, 1, 2], "acc": [1, 0, 1, 1]}).to_csv(p, index=False)
    >>> df = read_logs(p)
    >>> list(df.columns), len(df)
    (['model', 'item', 'acc', 'task', 'repeat', 'item_hash'], 4)
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files = [f for raw in paths for f in _discover(raw)]
    if not files:
        raise InputError("no log files given.")
    by_kind: dict[str, list[Path]] = {}
    for f in files:
        by_kind.setdefault(_kind(f), []).append(f)
    if on_error not in ("error", "drop"):
        raise InputError(f"on_error must be 'error' or 'drop'; got {on_error!r}.")
    readers = {"lm_eval": read_lm_eval, "inspect": functools.partial(read_inspect, on_error=on_error),
               "helm": read_helm}
    frames, metrics, sources = [], [], []
    for kind, group in by_kind.items():
        if kind == "table":
            for f in group:
                frames.append(_read_table(f))
                sources.extend([str(f)] * len(frames[-1]))
            continue
        frame = readers[kind](group, on_mismatch=on_mismatch)
        metrics.extend(frame.attrs["metrics"])
        frames.append(frame)
        sources.extend([f"the {kind} logs"] * len(frame))
    out = pd.concat(frames, ignore_index=True, sort=False) if len(frames) > 1 else frames[0]
    check_sources(out, sources)
    out = check_items(out, on_mismatch=on_mismatch)
    out.attrs["metrics"] = list(dict.fromkeys(metrics))
    return out
