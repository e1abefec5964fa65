"""``mixeval permutation``: paired approximate randomization test (book Algorithm 4.2)."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    from ._paired import add_common_arguments

    p = subparsers.add_parser(
        "permutation", help="paired approximate randomization test of mean score differences (Algorithm 4.2)",
        description="Approximate randomization (permutation) test on a CSV with one row per test item and one "
                    "score column per system. Two systems: one test; more: all pairs (or against --baseline) "
                    "with adjusted p-values. p-values are (c + 1) / (R + 1), never 0.",
    )
    add_common_arguments(p)
    p.add_argument("--exact", action="store_true", help="enumerate all 2^n swap patterns (two systems, <= 24 items)")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from ._paired import run_paired_command

    return run_paired_command(args, "permutation")
