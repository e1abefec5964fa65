"""Reading a user's CSV for the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

import pandas as pd

__all__ = ["read_table", "print_json"]


def read_table(path: str) -> pd.DataFrame:
    """Read a CSV (optionally gzipped) or Parquet file into a DataFrame with a clear error."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if p.suffix == ".parquet":
        return pd.read_parquet(p)
    return pd.read_csv(p)


def _default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"cannot serialise {type(obj).__name__} to JSON")


def print_json(obj: Any) -> None:
    """Print ``obj`` as one JSON object (NaN/inf become null, as JSON has neither)."""
    print(json.dumps(_nan_to_none(obj), default=_default, indent=None))


def _nan_to_none(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nan_to_none(v) for v in obj]
    if isinstance(obj, (float, np.floating)) and not np.isfinite(obj):
        return None
    return obj
