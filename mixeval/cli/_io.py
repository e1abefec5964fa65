"""Reading a user's table and printing JSON for the command line.

numpy and pandas are imported inside the functions: the parser imports this module, and a command's ``--help``
must not load the numeric stack.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["read_table", "sniff_separator", "sniff_decimal", "print_json"]


SEPARATORS = ",\t;|"
"""The field separators a CSV may use (sniffed from the first lines)."""


def read_table(path: str) -> pd.DataFrame:
    """Read a CSV (comma, tab, semicolon or bar separated; optionally gzipped) or Parquet file.

    Every failure is an :class:`InputError` that names the file: missing, a directory, JSON, not text,
    not parseable, no rows.
    """
    import pandas as pd

    p = _existing_file(path)
    if p.suffix == ".parquet":
        try:
            return _require_rows(pd.read_parquet(p), path)
        except (OSError, ValueError, ImportError) as exc:
            raise InputError(f"cannot read {path} as Parquet: {exc}") from None
    sample = _text_sample(p, path)
    if sample.lstrip().startswith(("{", "[")) or p.suffix == ".json":
        raise InputError(f"{path} looks like JSON; give a CSV or Parquet file (e.g. pandas.read_json({path!r}).to_csv(...)).")
    sep = sniff_separator(sample)
    _require_unique_header(sample, sep, path)
    try:
        data = pd.read_csv(p, sep=sep, decimal=sniff_decimal(sample, sep))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path} as CSV: {str(exc).strip()}") from None
    return _require_rows(data, path)


def _require_unique_header(sample: str, sep: str, path: str) -> None:
    r"""Refuse a header naming a column twice (pandas would rename the second ``y`` to ``y.1`` and the formula's
    ``y`` would silently be the first).

    Examples
    --------
    >>> _require_unique_header("y,x,g,y\n1,2,a,3\n", ",", "scores.csv")
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: scores.csv names the column 'y' twice (columns 1 and 4); give each column a unique name.
    """
    header = next(csv.reader(sample.splitlines()[:1], delimiter=sep), [])
    seen: dict[str, int] = {}
    for position, name in enumerate(header, start=1):
        name = name.strip()
        if name in seen:
            raise InputError(f"{path} names the column {name!r} twice (columns {seen[name]} and {position}); "
                             "give each column a unique name.")
        seen[name] = position


def _existing_file(path: str) -> Path:
    p = Path(path)
    if not p.exists():
        raise InputError(f"no such file: {path}")
    if p.is_dir():
        raise InputError(f"{path} is a directory; give a CSV or Parquet file.")
    return p


def _text_sample(p: Path, path: str, size: int = 64 * 1024) -> str:
    """The first ``size`` bytes of the (decompressed) file as text, or an error saying it is not text."""
    opener = gzip.open if p.suffix == ".gz" else open
    try:
        with opener(p, "rb") as fh:
            raw = fh.read(size)
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None
    if b"\x00" in raw:
        raise InputError(f"{path} is not a text file (CSV) nor .parquet; give a CSV or Parquet file.")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(raw) - 4:  # not just a character cut at the end of the sample
            raise InputError(f"{path} is not UTF-8 text (byte {exc.start}); give a CSV (UTF-8) or Parquet file.") from None
        return raw[: exc.start].decode("utf-8")


def sniff_decimal(sample: str, sep: str) -> str:
    r"""The decimal mark of a CSV sample: ``,`` in a file separated by ``;``, tab or ``|`` whose numbers are written
    ``0,25`` (as spreadsheets in many locales save them) and never ``0.25``; else ``.``.

    Examples
    --------
    >>> sniff_decimal("item;score\n1;0,25\n2;1,5\n", ";"), sniff_decimal("item;score\n1;0.25\n", ";")
    (',', '.')
    """
    if sep == ",":
        return "."
    fields = [f.strip().strip('"') for line in sample.splitlines()[1:50] for f in line.split(sep)]
    comma = any(re.fullmatch(r"[-+]?\d+,\d+", f) for f in fields)
    point = any(re.fullmatch(r"[-+]?\d*\.\d+(e[-+]?\d+)?", f, re.IGNORECASE) for f in fields)
    return "," if comma and not point else "."


def sniff_separator(sample: str) -> str:
    """The field separator of a CSV sample: ``,``, tab, ``;`` or ``|`` (``,`` when it cannot tell)."""
    lines = [line for line in sample.splitlines()[:50] if line.strip()]
    if len(lines) > 1 and not sample.endswith("\n"):
        lines = lines[:-1]  # the last line may be cut
    if not lines:
        return ","
    try:
        return csv.Sniffer().sniff("\n".join(lines), delimiters=SEPARATORS).delimiter
    except csv.Error:
        return ","


def _require_rows(data: pd.DataFrame, path: str) -> pd.DataFrame:
    if len(data) == 0:
        raise InputError(f"{path} has no data rows (only a header, or nothing).")
    return data


def _default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"cannot serialise {type(obj).__name__} to JSON")


def print_json(obj: Any) -> None:
    """Print ``obj`` as one JSON object (NaN/inf become null, as JSON has neither).

    Examples
    --------
    >>> import numpy as np
    >>> print_json({"d2": np.float64(0.5), "edf": float("nan"), "features": ("a", "b"), "n": np.array([1, 2])})
    {"d2": 0.5, "edf": null, "features": ["a", "b"], "n": [1, 2]}
    """
    print(json.dumps(_nan_to_none(obj), default=_default, indent=None))


def _nan_to_none(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nan_to_none(v) for v in obj]
    if _is_float_scalar(obj) and not math.isfinite(float(obj)):
        return None
    return obj


def _is_float_scalar(obj: Any) -> bool:
    """A Python float or a numpy floating-point scalar (float32 is not a ``float``), without importing numpy."""
    if isinstance(obj, float):
        return True
    dtype = getattr(obj, "dtype", None)
    return type(obj).__module__ == "numpy" and getattr(obj, "ndim", None) == 0 and getattr(dtype, "kind", "") == "f"
