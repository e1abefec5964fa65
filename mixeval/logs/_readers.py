"""Readers of evaluation-harness logs into mixeval's long format.

Every reader returns one row per model x item x repeat with the columns

* ``model``, ``task``, ``item`` (strings), ``repeat`` (int: an inspect_ai epoch, a HELM train trial, 0
  where the harness has none), ``item_hash`` (a hash of the question as the harness saw it, used to check
  that the same item id means the same question for every model; empty where the log has none),
* one float column per metric (an lm-evaluation-harness metric, an inspect_ai scorer, a HELM statistic),
* the fields of the item (lm-evaluation-harness ``doc``, inspect_ai sample ``metadata``) by their own
  names, usable as clusters or properties (a field whose name is taken by a column above gets the
  prefix ``doc_`` or ``metadata_``).

``frame.attrs["metrics"]`` lists the metric columns. :func:`read_logs` reads any mix of these files and
directories and checks item identity across models.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import warnings
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ColumnError, DroppedRowsWarning, InputError, InputTypeError, caller_stacklevel

__all__ = [
    "read_lm_eval",
    "read_inspect",
    "read_helm",
    "read_jsonl",
    "read_logs",
    "check_items",
    "inspect_value_to_float",
    "KEY_COLUMNS",
]

#: The identity columns of the long format, in order.
KEY_COLUMNS = ("model", "task", "item", "repeat", "item_hash")

_LM_EVAL_RESERVED = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
                     "doc_hash", "prompt_hash", "target_hash"}


# ---------------------------------------------------------------------------------------------- helpers

def _hash(*parts: Any) -> str:
    """A short digest of ``parts`` (strings are hashed as they are, anything else as sorted JSON)."""
    if all(isinstance(p, str) for p in parts):
        text = "\x1f".join(parts)
    else:
        text = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def _paths(paths: str | Path | Iterable[str | Path], pattern: str, what: str) -> list[Path]:
    """Files named by ``paths`` (directories searched recursively for ``pattern``)."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(p.rglob(pattern))
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


# ----------------------------------------------------------------------------- lm-evaluation-harness

def _lm_eval_model(directory: Path, cache: dict[Path, str]) -> str:
    """The model of the samples files in ``directory``: ``model_name`` of a ``results_*.json`` there (the
    newest by name), else the directory's name."""
    if directory in cache:
        return cache[directory]
    name = directory.name
    for results in sorted(directory.glob("results_*.json"), reverse=True):
        try:
            info = json.loads(results.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        found = info.get("model_name") or (info.get("config") or {}).get("model_args")
        if isinstance(found, str) and found:
            name = found
            break
    cache[directory] = name
    return name


def _lm_eval_task(sample_file: Path) -> tuple[str, str]:
    """The task and timestamp of a samples file ``samples_<task>_<timestamp>.jsonl`` (timestamp "" if none)."""
    m = re.fullmatch(r"samples_(.+)_(\d{4}-\d{2}-\d{2}T[\d\-\.]+)\.jsonl", sample_file.name)
    if m:
        return m.group(1), m.group(2)
    m = re.fullmatch(r"samples_(.+)\.jsonl", sample_file.name)
    if not m:
        raise InputError(f"{sample_file}: not an lm-evaluation-harness samples file (samples_<task>_<date>.jsonl).")
    return m.group(1), ""


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


_DECODER = json.JSONDecoder()
_HEAD, _DOC, _TARGET, _FILTER = b'{"doc_id": ', b', "doc": ', b', "target": ', b', "filter": '
_LM_EVAL_HASHES = ("doc_hash", "prompt_hash", "target_hash")


class _Docs:
    """The distinct ``doc`` records of a read, each once as its table cells (the same question is in the
    samples of every model and run), looked up by the doc's JSON text."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.cells: list[dict[str, Any]] = []

    def add(self, key: Any, doc: Any) -> int:
        code = self.index.get(key)
        if code is None:
            code = self.index[key] = len(self.cells)
            self.cells.append({k: _scalar(v) for k, v in doc.items()} if isinstance(doc, dict) else {})
        return code

    def renamed(self, code: int, taken: frozenset[str]) -> int:
        """The code of doc ``code`` with its fields named ``doc_<field>`` where the name is ``taken``."""
        cells = self.cells[code]
        if taken.isdisjoint(cells):
            return code
        return self.add(("renamed", code, taken), {(f"doc_{k}" if k in taken else k): v for k, v in cells.items()})


@dataclass(frozen=True)
class _Tail:
    """The fields of a record that the long format needs besides ``doc_id`` and ``doc``: its filter, the
    metric values (None where not a number), the names of those that are not numbers, the item hash."""

    filter: str
    values: tuple[tuple[str, float | None], ...]
    item_hash: str


class _Tails:
    """The distinct tails of the records (the same question with the same score recurs across models and
    runs), each decoded once."""

    def __init__(self) -> None:
        self.index: dict[bytes, int] = {}
        self.tails: list[_Tail] = []
        self.hashes: dict[tuple[str, ...], str] = {}

    def add(self, record: Mapping[str, Any], identity: str | None = None) -> int:
        names = record["metrics"]
        if identity is None:
            key = tuple(str(record.get(h)) for h in _LM_EVAL_HASHES)
            identity = self.hashes.get(key)
            if identity is None:
                identity = self.hashes[key] = _hash(*key)
        values = tuple((str(name), _number(record.get(name))) for name in names)
        self.tails.append(_Tail(str(record.get("filter", "none")), values, identity))
        return len(self.tails) - 1

    def projected(self, text: bytes) -> int | None:
        """The code of the tail ``text`` (the record from ``"filter"`` on), decoded if new; None where it is
        not the harness's tail (no metric list, a listed metric absent, no hash, not an object's end)."""
        code = self.index.get(text)
        if code is not None:
            return code
        try:
            record = json.loads(b"{" + text)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        listed = record.get("metrics")
        if (not isinstance(listed, list) or not all(isinstance(m, str) and m in record for m in listed)
                or not any(record.get(h) for h in _LM_EVAL_HASHES)):
            return None
        code = self.index[text] = self.add(record)
        return code


def _projected_doc(line: bytes, start: int, docs: _Docs) -> tuple[int, int] | None:
    """The code of the doc that starts at byte ``start`` and the byte where it ends (None if not a doc)."""
    stop = line.find(_TARGET, start)
    if stop > 0:
        code = docs.index.get(line[start:stop])
        if code is not None:
            return code, stop
        try:
            doc = json.loads(line[start:stop])   # a proper prefix of an object is never a whole JSON value
        except (json.JSONDecodeError, UnicodeDecodeError):
            doc = None
        if isinstance(doc, dict):
            return docs.add(line[start:stop], doc), stop
    try:
        rest = line[start:].decode("utf-8")
        doc, end = _DECODER.raw_decode(rest)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    stop = start + len(rest[:end].encode("utf-8"))
    if not line.startswith(_TARGET, stop):
        return None
    return docs.add(line[start:stop], doc), stop


def _lm_eval_projected(line: bytes, docs: _Docs, tails: _Tails, ids: dict[bytes, str]) -> tuple[str, int, int] | None:
    """``doc_id``, the doc's code and the tail's code of one record, decoding only those parts.

    lm-evaluation-harness writes each record as ``json.dumps`` of a dictionary with the keys ``doc_id, doc,
    target, arguments, resps, filtered_resps, filter, metrics, doc_hash, prompt_hash, target_hash`` and the
    metric values, in this order. ``doc_id`` and ``doc`` are decoded at the start of the line; the last
    ``, "filter": `` of the line begins the tail, decoded as an object: inside a JSON string a quote is
    always escaped, so the pattern is a key, and a key of a nested object would leave the tail unbalanced
    (a decoding error). The heavy middle (``arguments``, ``resps``, ``filtered_resps``) is never decoded.
    None where the line is not in this layout (then the whole record is decoded).
    """
    if not line.startswith(_HEAD):
        return None
    k = line.find(_DOC, len(_HEAD))
    if k < 0:
        return None
    raw_id = line[len(_HEAD):k]
    doc_id = ids.get(raw_id)
    if doc_id is None:
        try:
            value = json.loads(raw_id)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        doc_id = ids[raw_id] = str(value)
    found = _projected_doc(line, k + len(_DOC), docs)
    if found is None:
        return None
    doc_code, stop = found
    tail_at = line.rfind(_FILTER)
    if tail_at < stop:
        return None
    tail_code = tails.projected(line[tail_at + 2:])
    if tail_code is None:
        return None
    return doc_id, doc_code, tail_code


def _lm_eval_full(record: dict[str, Any], docs: _Docs, tails: _Tails, path: Path) -> tuple[str, int, int]:
    """The same parts as :func:`_lm_eval_projected` from a wholly decoded record."""
    if "doc_id" not in record:
        raise InputError(f"{path}: a record has no 'doc_id'; is this an lm-evaluation-harness samples file?")
    rest = dict(record)
    if not isinstance(record.get("metrics"), list):
        rest["metrics"] = [k for k in record if k not in _LM_EVAL_RESERVED]
    identity = None if any(record.get(h) for h in _LM_EVAL_HASHES) else _hash(record.get("doc"), record.get("target"))
    doc = record.get("doc")
    key = ("decoded", json.dumps(doc, sort_keys=True, default=str)) if isinstance(doc, dict) else ("none",)
    return str(record["doc_id"]), docs.add(key, doc), tails.add(rest, identity)


@dataclass(frozen=True)
class _Segment:
    """The rows of one samples file in the long table."""

    path: Path
    model: str
    task: str
    repeat: int
    start: int
    stop: int


class _LmEvalColumns:
    """The long format, filled file by file: per record its item, doc code and tail code; the table is made
    once at the end from the distinct docs and tails (:meth:`frame`)."""

    def __init__(self) -> None:
        self.docs = _Docs()
        self.tails = _Tails()
        self.ids: dict[bytes, str] = {}
        self.items: list[str] = []
        self.doc_codes: list[int] = []
        self.tail_codes: list[int] = []
        self.segments: list[_Segment] = []

    def add_file(self, path: Path, model: str, task: str, repeat: int, projection: bool = True) -> None:
        """Add the records of one samples file. A record whose ``doc_id``, ``doc`` and tail were seen before
        (the same question answered by another model or run) costs a few searches and dictionary look-ups on
        the file's bytes; anything else goes through :func:`_lm_eval_projected`, then whole decoding."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc}") from None
        self._add_records(data, path, model, task, repeat, projection)

    def _add_records(self, data: bytes, path: Path, model: str, task: str, repeat: int, projection: bool) -> None:
        start = len(self.items)
        docs, tails, ids = self.docs, self.tails, self.ids
        doc_index, tail_index = docs.index, tails.index
        items, doc_codes, tail_codes = self.items, self.doc_codes, self.tail_codes
        head, n_head, doc_key, n_doc, target, filt = _HEAD, len(_HEAD), _DOC, len(_DOC), _TARGET, _FILTER
        pos, size, lineno = 0, len(data), 0
        while pos < size:
            end = data.find(b"\n", pos)
            if end < 0:
                end = size
            lineno += 1
            if projection and data.startswith(head, pos):
                k = data.find(doc_key, pos + n_head, end)
                doc_id = ids.get(data[pos + n_head:k]) if k > 0 else None
                stop = data.find(target, k + n_doc, end) if doc_id is not None else -1
                doc = doc_index.get(data[k + n_doc:stop]) if stop > 0 else None
                at = data.rfind(filt, stop, end) if doc is not None else -1
                tail = tail_index.get(data[at + 2:end]) if at > 0 else None
                if tail is not None:
                    items.append(doc_id)
                    doc_codes.append(doc)
                    tail_codes.append(tail)
                    pos = end + 1
                    continue
            line = data[pos:end]
            pos = end + 1
            part = _lm_eval_projected(line, docs, tails, ids) if projection else None
            if part is None:
                if not line.strip():
                    continue
                part = _lm_eval_full(_json_object(line, path, lineno), docs, tails, path)
            items.append(part[0])
            doc_codes.append(part[1])
            tail_codes.append(part[2])
        self.segments.append(_Segment(path, model, task, repeat, start, len(self.items)))

    def _metric_columns(self, codes: np.ndarray) -> tuple[dict[str, np.ndarray], list[str], list[frozenset[str]]]:
        """The metric columns (``metric,filter`` in a file of several filters), their order of appearance,
        and per file the names of its columns; warns of metrics that are not numbers per sample."""
        layouts: dict[tuple[str, tuple[str, ...]], int] = {}
        layout_of = np.empty(len(self.tails.tails), dtype=np.intp)
        values: dict[str, np.ndarray] = {}
        numeric: dict[str, np.ndarray] = {}
        for c, tail in enumerate(self.tails.tails):
            layout_of[c] = layouts.setdefault((tail.filter, tuple(name for name, _ in tail.values)), len(layouts))
            for name, value in tail.values:
                if name not in values:
                    values[name] = np.full(len(layout_of), np.nan)
                    numeric[name] = np.zeros(len(layout_of), dtype=bool)
                if value is not None:
                    values[name][c] = value
                    numeric[name][c] = True
        layout_list = list(layouts)
        columns: dict[str, np.ndarray] = {}
        order: dict[str, None] = {}
        per_file = []
        for seg in self.segments:
            rows = codes[seg.start:seg.stop]
            lay = layout_of[rows]
            used = np.unique(lay)
            filters = {layout_list[k][0] for k in used}
            names: dict[str, None] = {}
            non_numeric: set[str] = set()
            for k in used:
                filt, listed = layout_list[k]
                where = np.flatnonzero(lay == k) if len(used) > 1 else np.arange(len(rows))
                suffix = "" if len(filters) == 1 else "," + filt
                for name in listed:
                    ok = numeric[name][rows[where]]
                    if not ok.all():
                        non_numeric.add(name)
                    if not ok.any():
                        continue
                    key = name + suffix
                    if key not in columns:
                        columns[key] = np.full(len(codes), np.nan)
                    columns[key][seg.start + where] = values[name][rows[where]]
                    names[key] = None
            if non_numeric:
                warnings.warn(f"{seg.path}: the metrics {sorted(non_numeric)} are not numbers per sample "
                              "(corpus-level metrics such as BLEU keep their inputs per sample); they are not read.",
                              DroppedRowsWarning, stacklevel=caller_stacklevel())
            order.update(names)
            per_file.append(frozenset(names))
        return columns, list(order), per_file

    def _doc_fields(self, per_file: list[frozenset[str]]) -> pd.DataFrame:
        """The doc fields of every row; a field named like a key or metric column of its file is ``doc_<field>``."""
        codes = np.asarray(self.doc_codes, dtype=np.intp)
        docs = self.docs
        clashing = set(KEY_COLUMNS).union(*per_file)
        if any(not clashing.isdisjoint(cells) for cells in docs.cells):
            for seg, names in zip(self.segments, per_file):
                taken = frozenset(set(KEY_COLUMNS) | names)
                remap = {int(c): docs.renamed(int(c), taken) for c in np.unique(codes[seg.start:seg.stop])}
                part = codes[seg.start:seg.stop]
                codes[seg.start:seg.stop] = [remap[int(c)] for c in part]
        fields = pd.DataFrame.from_records(docs.cells)
        if not len(fields.columns):
            return fields
        return fields.take(codes).reset_index(drop=True)

    def frame(self) -> pd.DataFrame:
        if not self.items:
            raise InputError("lm-evaluation-harness: no samples in the log.")
        codes = np.asarray(self.tail_codes, dtype=np.intp)
        metric_columns, metrics, per_file = self._metric_columns(codes)
        counts = [seg.stop - seg.start for seg in self.segments]
        keys = {
            "model": np.repeat(np.array([seg.model for seg in self.segments], dtype=object), counts),
            "task": np.repeat(np.array([seg.task for seg in self.segments], dtype=object), counts),
            "item": np.array(self.items, dtype=object),
            "repeat": np.repeat(np.array([seg.repeat for seg in self.segments], dtype=int), counts),
            "item_hash": np.array([t.item_hash for t in self.tails.tails], dtype=object)[codes],
        }
        frame = pd.DataFrame({**keys, **{m: metric_columns[m] for m in metrics}})
        fields = self._doc_fields(per_file)
        fields = fields.drop(columns=[c for c in fields.columns if c in frame.columns])
        if len(fields.columns):
            frame = pd.concat([frame, fields], axis=1)
        frame.attrs["metrics"] = metrics
        return frame


def _lm_eval_runs(files: Sequence[Path]) -> list[tuple[Path, str, int]]:
    """Each samples file with its task and run number: the files of one task in one directory (the
    harness run more than once with the same ``--output_path``) are the runs 0, 1, ... in timestamp order."""
    seen: dict[tuple[int, int], Path] = {}
    directories: dict[Path, Path] = {}
    named = []
    for f in files:
        info = f.stat()
        if (info.st_dev, info.st_ino) in seen:
            raise InputError(f"the samples file {f} is given twice (also as {seen[info.st_dev, info.st_ino]}); "
                             "give each file once.")
        seen[info.st_dev, info.st_ino] = f
        if f.parent not in directories:
            directories[f.parent] = f.parent.resolve()
        named.append((f, directories[f.parent], *_lm_eval_task(f)))
    order = sorted(range(len(named)), key=lambda k: (named[k][1], named[k][2], named[k][3], named[k][0].name))
    runs: dict[tuple[Path, str], int] = {}
    numbered: list[tuple[Path, str, int] | None] = [None] * len(named)
    for k in order:
        f, directory, task, _ = named[k]
        numbered[k] = (f, task, runs.get((directory, task), 0))
        runs[directory, task] = runs.get((directory, task), 0) + 1
    return numbered  # type: ignore[return-value]


def read_lm_eval(paths: str | Path | Iterable[str | Path], *, model: str | None = None,
                 on_mismatch: str = "error") -> pd.DataFrame:
    """Read lm-evaluation-harness ``--log_samples`` files into the long format.

    Parameters
    ----------
    paths : path or paths
        ``samples_<task>_<timestamp>.jsonl`` files, or directories searched recursively for them (the
        harness writes ``OUTPUT/<model>/samples_*.jsonl``: many models and tasks can be read at once).
    model : str, optional
        The model name for every file; by default ``model_name`` of the ``results_*.json`` beside each
        samples file, else the name of its directory.
    on_mismatch : {"error", "drop"}
        What to do when an item id names different questions for different models (see :func:`check_items`).

    Returns
    -------
    pandas.DataFrame
        Columns ``model, task, item`` (the ``doc_id``), ``repeat`` (the run: the files of one task in one
        directory, written by running the harness again with the same ``--output_path``, are the runs 0,
        1, ... in the order of their timestamps), ``item_hash`` (from the harness's ``doc_hash``,
        ``prompt_hash`` and ``target_hash``), one column per metric as written (``acc``, ``exact_match``,
        ...; ``metric,filter`` when a task has several filters, as in the harness's results file), then
        the fields of ``doc``.

    Notes
    -----
    Only ``doc_id``, ``doc`` and the fields from ``filter`` on are decoded; the prompts and responses
    (``arguments``, ``resps``, ``filtered_resps``, most of a record's bytes) are skipped, and each distinct
    ``doc`` and tail is decoded once. A record in another layout is decoded whole.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "my-model"; d.mkdir()
    >>> recs = [{"doc_id": i, "doc": {"question": f"q{i}", "subject": "math"}, "target": "1", "filter": "none",
    ...          "metrics": ["acc"], "doc_hash": f"h{i}", "prompt_hash": "p", "target_hash": "t", "acc": float(i % 2)}
    ...         for i in range(3)]
    >>> _ = (d / "samples_arith_2024-01-01T00-00-00.000000.jsonl").write_text("\\n".join(map(json.dumps, recs)))
    >>> df = read_lm_eval(d)
    >>> print(df[["model", "task", "item", "acc", "subject"]].to_string(index=False))
       model  task item  acc subject
    my-model arith    0  0.0    math
    my-model arith    1  1.0    math
    my-model arith    2  0.0    math
    """
    return check_items(_lm_eval_frame(paths, model=model), on_mismatch=on_mismatch)


def _lm_eval_frame(paths: str | Path | Iterable[str | Path], *, model: str | None,
                   projection: bool = True) -> pd.DataFrame:
    """The long format of lm-evaluation-harness samples files (``projection=False`` decodes every record
    whole: the reference the projected decoding is tested against)."""
    if model is not None and not isinstance(model, str):
        raise InputTypeError(f"model must be a model name (str); got {type(model).__name__}.")
    columns = _LmEvalColumns()
    names: dict[Path, str] = {}
    files = _paths(paths, "samples_*.jsonl", "lm-evaluation-harness samples files")
    for path, task, run in _lm_eval_runs(files):
        columns.add_file(path, model or _lm_eval_model(path.parent, names), task, run, projection=projection)
    return columns.frame()


# ----------------------------------------------------------------------------------------- inspect_ai

def inspect_value_to_float(value: Any, *, scorer: str = "score") -> float:
    """An inspect_ai score value as a number, the way inspect_ai's ``value_to_float`` maps it.

    ``"C"`` (correct) 1, ``"I"`` (incorrect) 0, ``"P"`` (partial) 0.5, ``"N"`` (no answer) 0; numbers and
    booleans as numbers; the strings ``yes``/``true`` 1 and ``no``/``false`` 0, numeric strings as numbers.
    Where inspect_ai would log a warning and use 0, this raises (nothing is silently changed).

    Examples
    --------
    >>> [inspect_value_to_float(v) for v in ["C", "I", "P", "N", True, 0.25, "yes", "3"]]
    [1.0, 0.0, 0.5, 0.0, 1.0, 0.25, 1.0, 3.0]
    """
    if isinstance(value, (bool, int, float)):
        return float(value)
    if value == "C":
        return 1.0
    if value == "P":
        return 0.5
    if value in ("I", "N"):
        return 0.0
    if isinstance(value, str):
        low = value.lower()
        if low in ("yes", "true"):
            return 1.0
        if low in ("no", "false"):
            return 0.0
        try:
            number = float(low)
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            return number
    raise InputError(f"inspect_ai scorer {scorer!r}: the value {value!r} is not a number nor one of C, I, P, N, "
                     "yes/no, true/false (inspect_ai's value_to_float maps such values to 0 with a warning).")


_ZIP_ZSTD = 93  # the zip compression method inspect_ai uses for .eval members (zstandard)


@functools.cache
def _zstd_decompressor() -> Callable[[bytes, int], bytes] | None:
    """The zstandard decompression at hand (Python >= 3.14's own, else the ``zstandard`` package), looked up
    once: a failed import is not cached by Python and costs a path search on every member."""
    try:
        from compression import zstd  # Python >= 3.14

        return lambda data, size: zstd.decompress(data)
    except ImportError:
        pass
    try:
        import zstandard
    except ImportError:
        return None
    decompressor = zstandard.ZstdDecompressor()
    return lambda data, size: decompressor.decompress(data, max_output_size=size)


def _zstd_decompress(data: bytes, size: int, path: Path) -> bytes:
    decompress = _zstd_decompressor()
    if decompress is None:
        raise InputError(f"{path} is compressed with zstandard; install it to read inspect_ai logs: "
                         "pip install 'mixeval[inspect]' (or pip install zstandard).")
    return decompress(data, size)


def _zip_member(zf: zipfile.ZipFile, fh: Any, info: zipfile.ZipInfo, path: Path) -> bytes:
    """One member of a zip file, also when it is zstandard-compressed (which :mod:`zipfile` reads only
    from Python 3.14 on): the raw bytes follow the member's local header."""
    if info.compress_type != _ZIP_ZSTD:
        return zf.read(info)
    fh.seek(info.header_offset)
    local = fh.read(30)
    if local[:4] != b"PK\x03\x04":
        raise InputError(f"{path}: damaged zip member {info.filename}.")
    start = info.header_offset + 30 + int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
    fh.seek(start)
    return _zstd_decompress(fh.read(info.compress_size), info.file_size, path)


def _inspect_log(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``eval`` header and the samples of an inspect_ai ``.eval`` (zip) or ``.json`` log."""
    if path.suffix == ".eval":
        try:
            with zipfile.ZipFile(path) as zf, open(path, "rb") as fh:
                infos = {i.filename: i for i in zf.infolist()}
                head = infos.get("header.json") or infos.get("_journal/start.json")
                if head is None:
                    raise InputError(f"{path}: an .eval log without header.json; is it an inspect_ai log?")
                header = json.loads(_zip_member(zf, fh, head, path))
                samples = [json.loads(_zip_member(zf, fh, infos[n], path)) for n in sorted(infos)
                           if n.startswith("samples/") and n.endswith(".json")]
        except (zipfile.BadZipFile, json.JSONDecodeError, OSError) as exc:
            raise InputError(f"{path}: not a readable inspect_ai .eval log ({exc}).") from None
        return header, samples
    try:
        log = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a readable inspect_ai .json log ({exc}).") from None
    if not isinstance(log, dict) or "eval" not in log:
        raise InputError(f"{path}: not an inspect_ai log (no 'eval' header).")
    return log, list(log.get("samples") or [])


def _inspect_scores(scores: Mapping[str, Any], path: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    for scorer, score in scores.items():
        value = score.get("value") if isinstance(score, dict) else score
        if isinstance(value, dict):
            for key, v in value.items():
                out[f"{scorer}/{key}"] = inspect_value_to_float(v, scorer=f"{scorer}/{key}")
        elif isinstance(value, list):
            raise InputError(f"{path}: scorer {scorer!r} has a list value; give a scorer with one value per sample.")
        else:
            out[scorer] = inspect_value_to_float(value, scorer=scorer)
    return out


def _inspect_file(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    header, samples = _inspect_log(path)
    spec = header.get("eval") or {}
    model, task = str(spec.get("model", "")), str(spec.get("task", ""))
    if not model:
        raise InputError(f"{path}: the log names no model (eval.model).")
    if header.get("status") not in (None, "success"):
        warnings.warn(f"{path}: the evaluation's status is {header.get('status')!r}, not 'success'; its "
                      f"{len(samples)} finished samples are read.", DroppedRowsWarning, stacklevel=caller_stacklevel())
    rows, metrics = [], {}
    for s in samples:
        if "id" not in s:
            raise InputError(f"{path}: a sample has no 'id'.")
        scores = _inspect_scores(s.get("scores") or {}, path)
        metrics.update(dict.fromkeys(scores))
        row = {"model": model, "task": task, "item": str(s["id"]), "repeat": int(s.get("epoch", 1)),
               "item_hash": _hash(s.get("input"), s.get("target")), **scores}
        rows.append((row, s.get("metadata") or {}))
    taken = set(KEY_COLUMNS) | set(metrics)
    return [dict(r, **_field_columns(meta, taken, "metadata_")) for r, meta in rows], list(metrics)


def read_inspect(paths: str | Path | Iterable[str | Path], *, on_mismatch: str = "error") -> pd.DataFrame:
    """Read inspect_ai logs (``.eval`` or ``.json``) into the long format.

    Parameters
    ----------
    paths : path or paths
        Log files, or directories searched recursively for ``*.eval`` files.
    on_mismatch : {"error", "drop"}
        See :func:`check_items`.

    Returns
    -------
    pandas.DataFrame
        ``model`` (``eval.model``), ``task`` (``eval.task``), ``item`` (sample id), ``repeat`` (the epoch),
        ``item_hash`` (of the sample's input and target), one column per scorer with values mapped to numbers
        as inspect_ai's ``value_to_float`` does (:func:`inspect_value_to_float`; a scorer with a dictionary of
        values gives one column ``scorer/key`` per key), then the sample metadata fields.

    Notes
    -----
    The reader parses the log files itself (an ``.eval`` file is a zip of JSON documents), so inspect_ai
    need not be installed; the files are those written by inspect_ai's ``write_eval_log``.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> log = {"eval": {"model": "mockllm/model", "task": "arith"}, "status": "success", "samples": [
    ...     {"id": i, "epoch": e, "input": f"{i} + 1?", "target": str(i + 1), "metadata": {"passage": i // 2},
    ...      "scores": {"match": {"value": "C" if (i + e) % 2 else "I"}}} for i in range(2) for e in (1, 2)]}
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "log.json"
    >>> _ = p.write_text(json.dumps(log))
    >>> print(read_inspect(p)[["model", "item", "repeat", "match", "passage"]].to_string(index=False))
            model item  repeat  match  passage
    mockllm/model    0       1    1.0        0
    mockllm/model    0       2    0.0        0
    mockllm/model    1       1    0.0        0
    mockllm/model    1       2    1.0        0
    """
    rows: list[dict[str, Any]] = []
    metrics: list[str] = []
    for path in _paths(paths, "*.eval", "inspect_ai logs"):
        r, m = _inspect_file(path)
        rows.extend(r)
        metrics.extend(m)
    return check_items(_frame(rows, metrics, "inspect_ai"), on_mismatch=on_mismatch)


# ----------------------------------------------------------------------------------------------- HELM

def _helm_task(run_name: str) -> str:
    """The run name without the model arguments: ``mmlu:subject=anatomy,model=openai_gpt2`` -> ``mmlu:subject=anatomy``."""
    head, _, args = run_name.partition(":")
    kept = [a for a in args.split(",") if a and not a.startswith(("model=", "model_deployment="))]
    return head + (":" + ",".join(kept) if kept else "")


def _helm_instances(run_dir: Path) -> list[dict[str, Any]]:
    """The instances of a run: ``instances.json``, else those of the requests in ``scenario_state.json``
    (what ``helm-run`` writes), else none."""
    try:
        if (run_dir / "instances.json").exists():
            return list(json.loads((run_dir / "instances.json").read_text()))
        if (run_dir / "scenario_state.json").exists():
            state = json.loads((run_dir / "scenario_state.json").read_text())
            found = {}
            for request in state.get("request_states") or []:
                inst = request.get("instance") or {}
                found.setdefault(str(inst.get("id")), inst)
            return list(found.values())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{run_dir}: cannot read the HELM instances ({exc}).") from None
    return []


def _helm_run(run_dir: Path) -> tuple[list[dict[str, Any]], list[str]]:
    stats_path = run_dir / "per_instance_stats.json"
    try:
        instances_stats = json.loads(stats_path.read_text())
        spec = json.loads((run_dir / "run_spec.json").read_text()) if (run_dir / "run_spec.json").exists() else {}
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{run_dir}: cannot read HELM per-instance statistics ({exc}).") from None
    model = str((spec.get("adapter_spec") or {}).get("model") or "")
    if not model:
        raise InputError(f"{run_dir}: run_spec.json names no model (adapter_spec.model); it must lie beside "
                         "per_instance_stats.json.")
    task = _helm_task(str(spec.get("name") or run_dir.name))
    texts: dict[str, Any] = {}
    fields: dict[str, dict[str, Any]] = {}
    for inst in _helm_instances(run_dir):
        texts[str(inst.get("id"))] = [inst.get("input"), inst.get("references")]
        fields[str(inst.get("id"))] = {k: inst[k] for k in ("split", "sub_split") if inst.get(k) is not None}
    rows, metrics, perturbed = [], {}, 0
    for inst in instances_stats:
        if inst.get("perturbation"):
            perturbed += 1
            continue
        iid = str(inst["instance_id"])
        row = {"model": model, "task": task, "item": iid, "repeat": int(inst.get("train_trial_index", 0)),
               "item_hash": _hash(texts[iid]) if iid in texts else "", **fields.get(iid, {})}
        for stat in inst.get("stats", []):
            name = stat.get("name") or {}
            if name.get("perturbation"):
                continue
            if stat.get("count", 1) and stat.get("mean") is not None:
                row[name["name"]] = float(stat["mean"])
                metrics[name["name"]] = None
        rows.append(row)
    if perturbed:
        warnings.warn(f"{run_dir}: {perturbed} perturbed instances (HELM robustness/fairness runs) are not read; "
                      "the comparison uses the unperturbed ones.", DroppedRowsWarning, stacklevel=caller_stacklevel())
    return rows, list(metrics)


def read_helm(paths: str | Path | Iterable[str | Path], *, on_mismatch: str = "error") -> pd.DataFrame:
    """Read HELM per-instance statistics (``benchmark_output/runs/<suite>/<run>/per_instance_stats.json``).

    Parameters
    ----------
    paths : path or paths
        Run directories, ``per_instance_stats.json`` files, or directories searched recursively for them.
    on_mismatch : {"error", "drop"}
        See :func:`check_items`.

    Returns
    -------
    pandas.DataFrame
        ``model`` (``adapter_spec.model`` of ``run_spec.json``), ``task`` (the run name without
        ``model=``/``model_deployment=``), ``item`` (``instance_id``), ``repeat`` (``train_trial_index``),
        ``item_hash`` (of the instance's input and references in ``instances.json`` or, as ``helm-run``
        writes them, ``scenario_state.json``, where present), one
        column per statistic (its per-instance ``mean``; perturbed statistics are left out with a warning),
        and ``split``/``sub_split`` of the instances.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> run = pathlib.Path(tempfile.mkdtemp()) / "mmlu:subject=anatomy,model=openai_gpt2"; run.mkdir()
    >>> _ = (run / "run_spec.json").write_text(json.dumps(
    ...     {"name": run.name, "adapter_spec": {"model": "openai/gpt2"}}))
    >>> _ = (run / "per_instance_stats.json").write_text(json.dumps([
    ...     {"instance_id": f"id{i}", "train_trial_index": 0,
    ...      "stats": [{"name": {"name": "exact_match", "split": "test"}, "count": 1, "mean": float(i)}]}
    ...     for i in (0, 1)]))
    >>> print(read_helm(run)[["model", "task", "item", "exact_match"]].to_string(index=False))
          model                 task item  exact_match
    openai/gpt2 mmlu:subject=anatomy  id0          0.0
    openai/gpt2 mmlu:subject=anatomy  id1          1.0
    """
    rows: list[dict[str, Any]] = []
    metrics: list[str] = []
    for path in _paths(paths, "per_instance_stats.json", "HELM per-instance statistics"):
        r, m = _helm_run(path.parent if path.is_file() else path)
        rows.extend(r)
        metrics.extend(m)
    return check_items(_frame(rows, metrics, "HELM"), on_mismatch=on_mismatch)


# ---------------------------------------------------------------------------------------- any JSONL

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


# ------------------------------------------------------------------------------- identity, any source

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
    mixeval.errors.InputError: 1 items have the same id but a different question (input/target hash) across models: task 't' item '1': a vs b. ...
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
        raise InputError(f"{int(counts[counts > 1].sum())} rows repeat a (model, task, item, repeat), e.g. {dup}; "
                         "the same log was read twice, or the repeats are not numbered.")
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


def _kind(path: Path) -> str:
    name = path.name
    if name.startswith("samples_") and name.endswith(".jsonl"):
        return "lm_eval"
    if name == "per_instance_stats.json":
        return "helm"
    if path.suffix == ".eval":
        return "inspect"
    if path.suffix == ".json":
        return "inspect"
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
    found = sorted([*p.rglob("samples_*.jsonl"), *p.rglob("*.eval"), *p.rglob("per_instance_stats.json")])
    if not found:
        raise InputError(f"{p}: no evaluation logs found (samples_*.jsonl, *.eval, per_instance_stats.json).")
    return found


def _read_table(path: Path) -> pd.DataFrame:
    frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    missing = [c for c in ("model", "item") if c not in frame]
    if missing:
        raise ColumnError(f"{path}: a long-format table needs the columns model and item (missing {missing}); "
                          f"its columns are {list(frame.columns)}.")
    frame = frame.copy()
    for col, default in (("task", ""), ("repeat", 0), ("item_hash", "")):
        if col not in frame:
            frame[col] = default
    frame["item_hash"] = frame["item_hash"].fillna("").astype(str)
    for col in ("model", "task", "item"):
        frame[col] = frame[col].astype(str)
    return frame


def read_logs(paths: str | Path | Iterable[str | Path], *, on_mismatch: str = "error") -> pd.DataFrame:
    """Read evaluation logs of any supported harness (mixed freely) into one long-format frame.

    Parameters
    ----------
    paths : path or paths
        Files or directories: lm-evaluation-harness ``samples_*.jsonl``, inspect_ai ``.eval``/``.json``,
        HELM ``per_instance_stats.json`` (with ``run_spec.json`` beside it), or a long-format ``.csv`` /
        ``.parquet`` with columns ``model``, ``item`` (and optionally ``task``, ``repeat``).
    on_mismatch : {"error", "drop"}
        See :func:`check_items`.

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
    readers = {"lm_eval": read_lm_eval, "inspect": read_inspect, "helm": read_helm}
    frames, metrics = [], []
    for kind, group in by_kind.items():
        if kind == "table":
            frames.extend(_read_table(f) for f in group)
            continue
        frame = readers[kind](group, on_mismatch=on_mismatch)
        metrics.extend(frame.attrs["metrics"])
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True, sort=False) if len(frames) > 1 else frames[0]
    out = check_items(out, on_mismatch=on_mismatch)
    out.attrs["metrics"] = list(dict.fromkeys(metrics))
    return out
