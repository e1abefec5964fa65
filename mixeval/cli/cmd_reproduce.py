"""``mixeval reproduce NAME [--data DIR] [--json]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import reproductions
from . import print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reproduce",
        help="recompute a table of the book or a paper",
        description="Recompute a published table. NAME 'list' shows all reproductions.",
    )
    p.add_argument("name", help="e.g. table-3.1, table-4.2, figure-3.3, goyal-table-1; 'list' for all")
    p.add_argument("--data", default=None, help="directory with the book data (default: $MIXEVAL_DATA or ../shared/bookdata)")
    p.add_argument("--json", action="store_true", help='print {"rows": [...]}')
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    if args.name == "list":
        for name, desc in reproductions.available().items():
            print(f"{name:22s} {desc}")
        return 0
    f = reproductions.get(args.name)
    data_dir = Path(args.data) if args.data else reproductions.default_data_dir()
    table = f(data_dir)
    if args.json:
        table = table.rename(columns=str.lower)
        print_json({"rows": table.to_dict(orient="records")})
    else:
        print(table.to_string(index=False))
    return 0
