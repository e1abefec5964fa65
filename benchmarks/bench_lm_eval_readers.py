"""Ways to read lm-evaluation-harness sample files, measured in one run on the same files.

Each candidate returns, per record, what ``read_lm_eval`` needs: ``doc_id``, the ``doc`` fields, the three
hashes, ``filter``, ``metrics`` and the metric values (``acc``). The heavy fields (``arguments``, ``resps``,
``filtered_resps``, most of every record's bytes) are needed by none.

* ``mixeval``: ``mixeval.logs.read_lm_eval`` as it is now (the projection below, building the long table);
* ``json``: the reader before this study (stdlib ``json.loads`` of each file as one array, every field);
* ``orjson``: ``orjson.loads`` per line, every field;
* ``pyarrow``: ``pyarrow.json.read_json`` per file with an explicit schema of the needed fields only
  (``unexpected_field_behavior="ignore"``; multithreaded);
* ``duckdb``: DuckDB's ``read_json`` over all files with the needed columns only (projection pushdown;
  multithreaded), ``doc`` as JSON text;
* ``projection``: the stdlib decoder on the needed parts of each line only: ``doc_id`` and ``doc`` decoded at
  the start of the line (``raw_decode``), the fields from ``"filter"`` on decoded from the end of the line;
  the heavy middle is never decoded (``orjson`` for the tail where installed).

    nice -n 10 python3 benchmarks/bench_lm_eval_readers.py /tmp/lm_eval_big --models 2 \
        --out benchmarks/results/bench_lm_eval_readers.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def files_of(root: Path, models: int) -> list[Path]:
    dirs = sorted(p for p in root.iterdir() if p.is_dir())[:models]
    return [f for d in dirs for f in sorted(d.glob("samples_*.jsonl"))]


def read_json(files):
    n = 0
    for f in files:
        lines = [x for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]
        recs = json.loads("[" + ",".join(lines) + "]")
        n += sum(1 for r in recs if r["acc"] is not None)
    return n


def read_orjson(files):
    import orjson

    n = 0
    for f in files:
        with open(f, "rb") as fh:
            for line in fh:
                r = orjson.loads(line)
                n += r["acc"] is not None
    return n


def read_pyarrow(files):
    import pyarrow as pa
    import pyarrow.json as pj

    doc = pa.struct([("question", pa.string()), ("subject", pa.string()), ("choices", pa.list_(pa.string())),
                     ("answer", pa.int64())])
    schema = pa.schema([("doc_id", pa.int64()), ("doc", doc), ("filter", pa.string()), ("metrics", pa.list_(pa.string())),
                        ("doc_hash", pa.string()), ("prompt_hash", pa.string()), ("target_hash", pa.string()),
                        ("acc", pa.float64())])
    opts = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    n = 0
    for f in files:
        t = pj.read_json(f, parse_options=opts, read_options=pj.ReadOptions(block_size=1 << 24))
        n += t.num_rows
    return n


def read_duckdb(files):
    import duckdb

    con = duckdb.connect()
    cols = {"doc_id": "BIGINT", "doc": "JSON", "filter": "VARCHAR", "metrics": "VARCHAR[]", "doc_hash": "VARCHAR",
            "prompt_hash": "VARCHAR", "target_hash": "VARCHAR", "acc": "DOUBLE"}
    rel = con.read_json([str(f) for f in files], format="newline_delimited", columns=cols, filename=True,
                        maximum_object_size=1 << 26)
    return rel.to_arrow_table().num_rows


def read_projection(files):
    import orjson

    dec = json.JSONDecoder()
    n = 0
    for f in files:
        text = f.read_text(encoding="utf-8")
        for line in text.splitlines():
            doc_id, end = dec.raw_decode(line, 11)
            start = line.index('"doc": ', end) + 7
            doc, _ = dec.raw_decode(line, start)
            k = line.rfind(', "filter": ')
            tail = orjson.loads("{" + line[k + 2:])
            n += tail["acc"] is not None
    return n


def read_mixeval(files):
    from mixeval.logs import read_lm_eval

    return len(read_lm_eval(files))


CANDIDATES = {"mixeval": read_mixeval, "json": read_json, "orjson": read_orjson, "pyarrow": read_pyarrow, "duckdb": read_duckdb,
              "projection": read_projection}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root")
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=list(CANDIDATES))
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    files = files_of(Path(args.root), args.models)
    size = sum(f.stat().st_size for f in files)
    out = {"files": len(files), "bytes": size}
    for name in args.only:
        t0, c0 = time.perf_counter(), time.process_time()
        n = CANDIDATES[name](files)
        out[name] = {"records": n, "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}
        print(name, out[name], flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
