"""inspect_ai logs (``.eval`` zip files and ``.json``), parsed without inspect_ai."""

from __future__ import annotations

import functools
import json
import math
import warnings
import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ...errors import DroppedRowsWarning, InputError, caller_stacklevel
from ._common import KEY_COLUMNS, _field_columns, _hash, _paths, check_items, frame_of_files

__all__ = ["read_inspect", "inspect_value_to_float", "inspect_files", "looks_like_inspect_json"]


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
                if "header.json" not in infos:          # written when the evaluation ends
                    header = {**header, "status": header.get("status") or "started"}
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


def _error_text(error: Any) -> str:
    message = error.get("message") if isinstance(error, dict) else error
    text = " ".join(str(message).split())
    return text[:120] + ("..." if len(text) > 120 else "")


def _inspect_file(path: Path, on_error: str) -> tuple[list[dict[str, Any]], list[str]]:
    header, samples = _inspect_log(path)
    spec = header.get("eval") or {}
    model, task = str(spec.get("model", "")), str(spec.get("task", ""))
    if not model:
        raise InputError(f"{path}: the log names no model (eval.model).")
    status = header.get("status")
    if not samples:
        raise InputError(f"{path}: no finished samples (status {status!r}): the evaluation of {model!r} did not "
                         "finish or wrote no samples. Rerun it, or leave the file out.")
    if status not in (None, "success"):
        unfinished = " (it did not finish)" if status == "started" else ""
        warnings.warn(f"{path}: the evaluation's status is {status!r}, not 'success'{unfinished}; its "
                      f"{len(samples)} finished samples of {model!r} are read.", DroppedRowsWarning, stacklevel=caller_stacklevel())
    rows, metrics, errored = [], {}, []
    for s in samples:
        if "id" not in s:
            raise InputError(f"{path}: a sample has no 'id'.")
        if s.get("error"):
            if on_error == "error":
                raise InputError(f"{path}: sample {s['id']!r} (epoch {s.get('epoch', 1)}) of {model!r} ended in an "
                                 f"error ({_error_text(s['error'])}) and has no score. Pass on_error='drop' (CLI: "
                                 "--drop-errored) to leave such samples out, with a warning.")
            errored.append(f"{s['id']!r} (epoch {s.get('epoch', 1)})")
            continue
        scores = _inspect_scores(s.get("scores") or {}, path)
        metrics.update(dict.fromkeys(scores))
        row = {"model": model, "task": task, "item": str(s["id"]), "repeat": int(s.get("epoch", 1)),
               "item_hash": _hash(s.get("input"), s.get("target")), **scores}
        rows.append((row, s.get("metadata") or {}))
    if errored:
        warnings.warn(f"{path}: {len(errored)} samples of {model!r} ended in an error and are left out: "
                      + ", ".join(errored[:5]) + (" ..." if len(errored) > 5 else "") + ".",
                      DroppedRowsWarning, stacklevel=caller_stacklevel())
    taken = set(KEY_COLUMNS) | set(metrics)
    return [dict(r, **_field_columns(meta, taken, "metadata_")) for r, meta in rows], list(metrics)


_NOT_INSPECT = ("results_", "run_spec.json", "per_instance_stats.json", "instances.json", "scenario_state.json",
                "stats.json", "per_instance_stats", "logs.json")


def looks_like_inspect_json(path: Path) -> bool:
    """Whether ``path`` is an inspect_ai ``.json`` log: a JSON object whose first few kilobytes hold its
    ``version``/``status`` and ``eval`` keys (files of other harnesses by their names are not)."""
    if path.suffix != ".json" or path.name.startswith(_NOT_INSPECT) or path.name in _NOT_INSPECT:
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"eval"' in head and (b'"version"' in head or b'"status"' in head)


def inspect_files(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    """The inspect_ai logs named by ``paths``: files as given; in directories (recursively) the ``.eval`` files
    and the ``.json`` files that are inspect_ai logs."""
    return _paths(paths, "*.eval, *.json", "inspect_ai logs",
                  keep=lambda f: f.suffix == ".eval" or looks_like_inspect_json(f))


def read_inspect(paths: str | Path | Iterable[str | Path], *, on_mismatch: str = "error",
                 on_error: str = "error") -> pd.DataFrame:
    """Read inspect_ai logs (``.eval`` or ``.json``) into the long format.

    Parameters
    ----------
    paths : path or paths
        Log files, or directories searched recursively for ``*.eval`` files and ``.json`` logs.
    on_mismatch : {"error", "drop"}
        See :func:`check_items`.
    on_error : {"error", "drop"}
        A sample that ended in an error (inspect_ai's ``sample.error``; it has no score): stop with an error
        naming it, or leave it out with a :class:`~mixeval.errors.DroppedRowsWarning` naming it.

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
    need not be installed; the files are those written by inspect_ai's ``write_eval_log``. A log without
    samples is an error; one that did not finish (status other than ``success``, or an ``.eval`` file without
    its final ``header.json``) is read with a warning.

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
    if on_error not in ("error", "drop"):
        raise InputError(f"on_error must be 'error' or 'drop'; got {on_error!r}.")
    parts = ((str(path), *_inspect_file(path, on_error)) for path in inspect_files(paths))
    return check_items(frame_of_files(parts, "inspect_ai"), on_mismatch=on_mismatch)
