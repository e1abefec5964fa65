"""Reading a user's CSV for the command line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["read_table"]


def read_table(path: str) -> pd.DataFrame:
    """Read a CSV (optionally gzipped) or Parquet file into a DataFrame with a clear error."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if p.suffix == ".parquet":
        return pd.read_parquet(p)
    return pd.read_csv(p)
