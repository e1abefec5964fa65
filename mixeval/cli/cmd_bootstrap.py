"""``mixeval bootstrap``: paired bootstrap test (shift method, book Algorithm 4.1)."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    from ._paired import add_common_arguments

    p = subparsers.add_parser(
        "bootstrap", help="paired bootstrap test of mean score differences (book Algorithm 4.1)",
        description="Paired bootstrap test with the shift method on a CSV with one row per test item and one "
                    "score column per system. Two systems: one test; more: all pairs (or against --baseline) "
                    "with adjusted p-values. p-values are (c + 1) / (R + 1), never 0.",
    )
    add_common_arguments(p)
    p.add_argument("--ci", choices=["percentile", "bca"], default="percentile", help="interval method")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from ._paired import run_paired_command

    return run_paired_command(args, "bootstrap")
