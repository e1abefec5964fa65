"""lm-evaluation-harness ``--log_samples`` files (``samples_<task>_<date>.jsonl``), decoding only the parts the
long format needs."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...errors import DroppedRowsWarning, InputError, InputTypeError, caller_stacklevel
from ._common import KEY_COLUMNS, _hash, _json_object, _number, _paths, _scalar, check_items, check_sources

__all__ = ["read_lm_eval"]

_LM_EVAL_RESERVED = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
                     "doc_hash", "prompt_hash", "target_hash"}


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
        self.kept: np.ndarray | None = None       # the records left after merging filters (None: all)

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
        if len(self.items) == start:
            raise InputError(f"{path}: no samples (an empty file: the run of {model!r} on {task!r} may have failed). "
                             "Rerun it, or leave the file out.")
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
            unread: set[str] = set()
            missing: dict[str, int] = {}
            for k in used:
                filt, listed = layout_list[k]
                where = np.flatnonzero(lay == k) if len(used) > 1 else np.arange(len(rows))
                suffix = "" if len(filters) == 1 else "," + filt
                for name in listed:
                    ok = numeric[name][rows[where]]
                    if not ok.any():
                        unread.add(name)
                        continue
                    key = name + suffix
                    if not ok.all():
                        missing[key] = missing.get(key, 0) + int((~ok).sum())
                    if key not in columns:
                        columns[key] = np.full(len(codes), np.nan)
                    columns[key][seg.start + where] = values[name][rows[where]]
                    names[key] = None
            if unread:
                warnings.warn(f"{seg.path}: the metrics {sorted(unread)} are not numbers per sample "
                              "(corpus-level metrics such as BLEU keep their inputs per sample); they are not read.",
                              DroppedRowsWarning, stacklevel=caller_stacklevel())
            if missing:
                text = ", ".join(f"{key!r} in {count} of {len(rows)}" for key, count in missing.items())
                warnings.warn(f"{seg.path}: some samples have no number for a metric (null): {text}; those values "
                              "are missing (NaN) in the table, the other samples are read. Drop or fill them before "
                              "comparing.", DroppedRowsWarning, stacklevel=caller_stacklevel())
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
        frame = self._merge_filters(frame, codes, metrics)
        frame.attrs["metrics"] = metrics
        return frame

    def sources(self) -> list[str]:
        """The file of every row of :meth:`frame` (after the filters' records are merged)."""
        paths = np.repeat(np.array([str(seg.path) for seg in self.segments], dtype=object),
                          [seg.stop - seg.start for seg in self.segments])
        return list(paths if self.kept is None else paths[self.kept])

    def _merge_filters(self, frame: pd.DataFrame, codes: np.ndarray, metrics: list[str]) -> pd.DataFrame:
        """One row per item and run where a task has several filters: the harness writes one record per doc and
        filter (e.g. gsm8k's ``strict-match`` and ``flexible-extract``), each holding its ``metric,filter``
        columns; their values are put on the item's first record."""
        self.kept = None
        filters = np.array([t.filter for t in self.tails.tails], dtype=object)[codes]
        segment = np.repeat(np.arange(len(self.segments)), [seg.stop - seg.start for seg in self.segments])
        several = np.array([len(set(filters[seg.start:seg.stop])) > 1 for seg in self.segments])
        rows = np.flatnonzero(several[segment])
        if not rows.size:
            return frame
        keys = pd.DataFrame({"s": segment[rows], "i": frame["item"].to_numpy()[rows], "f": filters[rows]})
        if keys.duplicated().any():
            return frame          # a record repeats within a filter: check_items names it
        first = ~keys[["s", "i"]].duplicated().to_numpy()
        columns = [m for m in metrics if "," in m]
        merged = frame.iloc[rows][columns].groupby([keys["s"].to_numpy(), keys["i"].to_numpy()], sort=False).first()
        keep = np.ones(len(frame), dtype=bool)
        keep[rows[~first]] = False
        out = frame.copy()
        out.loc[rows[first], columns] = merged.to_numpy()
        out = out.loc[keep].reset_index(drop=True)
        out.attrs = dict(frame.attrs)
        self.kept = keep
        return out


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
    frame = columns.frame()
    check_sources(frame, columns.sources())
    return frame
