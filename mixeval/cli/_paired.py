"""Shared plumbing of the ``mixeval bootstrap`` and ``mixeval permutation`` commands."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import InputError
from ._io import print_json, read_table
from ._seed import SEED_HELP, resolve_seed

__all__ = ["add_common_arguments", "adjust_method", "run_paired_command", "resolve_seed", "SEED_HELP"]

if TYPE_CHECKING:
    import pandas as pd

N_RESAMPLES = 10_000


def adjust_method(text: str) -> str:
    """``--adjust`` checked when the flags are read (also with two systems, where it is not used)."""
    from .._adjust import ADJUST_METHODS

    aliases = {a for names in ADJUST_METHODS.values() for a in names}
    if text.strip().lower() not in aliases:
        raise argparse.ArgumentTypeError(f"unknown adjustment {text!r}; choose one of {', '.join(ADJUST_METHODS)}")
    return text


def add_common_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="CSV (or .parquet): one row per test item, one score column per system "
                                "(or long format with --item/--system/--score)")
    p.add_argument("--systems", nargs="+", metavar="COL", help="score columns to compare (default: all numeric)")
    p.add_argument("--baseline", metavar="COL", help="compare every system against this one instead of all pairs")
    p.add_argument("--id", metavar="COL", help="wide format: item id column to leave out of the systems")
    p.add_argument("--item", help="long format: item column")
    p.add_argument("--system", help="long format: system column")
    p.add_argument("--score", help="long format: score column")
    p.add_argument("--alternative", choices=["two-sided", "greater", "less"], default="two-sided",
                   help="'greater': first system scores higher (default two-sided)")
    p.add_argument("--n-resamples", type=int, default=None, help=f"number of resamples (default {N_RESAMPLES})")
    p.add_argument("--seed", type=int, default=None, help=SEED_HELP)
    p.add_argument("--adjust", default="holm", type=adjust_method,
                   help="p-value adjustment for >2 systems: holm, bonferroni, hochberg, bh, by, none (default holm)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def check_paired_flags(args: argparse.Namespace) -> None:
    """Flags that would be accepted and not used are refused: ``--id`` names a column of the wide format (in the
    long format ``--item`` does), ``--exact`` enumerates instead of drawing (no ``--n-resamples``, no ``--seed``)."""
    long = [f for f, v in (("--item", args.item), ("--system", args.system), ("--score", args.score)) if v]
    if 0 < len(long) < 3:
        raise InputError(f"a long file (one row per item and system) needs all of --item, --system and --score; got "
                         f"only {' and '.join(long)}.")
    if args.id is not None and long:
        raise InputError(f"--id names the item column of a wide file; with {', '.join(long)} (long format) the items "
                         "are --item. Drop --id.")
    if getattr(args, "exact", False):
        unused = [f for f, v in (("--n-resamples", args.n_resamples), ("--seed", args.seed)) if v is not None]
        if unused:
            raise InputError(f"--exact enumerates every swap pattern (nothing is drawn at random), so "
                             f"{' and '.join(unused)} would not be used; drop {'them' if len(unused) > 1 else 'it'} "
                             "or --exact.")


def wide_table(data: pd.DataFrame, args: argparse.Namespace) -> pd.DataFrame:
    from ..errors import ColumnError
    from ..resampling import wide_scores

    """The scores as one row per item and one column per system, with ``--id`` as the index."""
    if args.id is not None:
        if args.id not in data.columns:
            raise ColumnError(f"--id column {args.id!r} not found; available: {', '.join(map(str, data.columns))}.")
        data = data.set_index(args.id)
    return wide_scores(data, item=args.item, system=args.system, score=args.score, systems=args.systems)


def run_paired_command(args: argparse.Namespace, test: str) -> int:

    from ..resampling import compare_systems, paired_bootstrap_test, permutation_test
    from ._args import check_count, check_level

    check_paired_flags(args)
    if args.n_resamples is None:
        args.n_resamples = N_RESAMPLES
    check_count(args.n_resamples, "--n-resamples")
    if hasattr(args, "level"):
        check_level(args.level, "--level")
    data = read_table(args.path)
    exact = getattr(args, "exact", False)
    seed = None if exact else resolve_seed(args.seed)
    wide = wide_table(data, args)
    names = [str(c) for c in wide.columns]
    level = getattr(args, "level", 0.95)
    if exact and len(wide) > 24:
        raise InputError(f"--exact enumerates 2^n swap patterns; {len(wide)} items are too many (at most 24). "
                         "Drop --exact (the approximate test draws --n-resamples patterns).")
    if len(names) == 2 and args.baseline is None:
        a, b = (wide[c].to_numpy(dtype=float) for c in wide.columns)
        if test == "bootstrap":
            res = paired_bootstrap_test(a, b, alternative=args.alternative, ci=args.ci, level=level,
                                        n_resamples=args.n_resamples, random_state=seed)
        else:
            res = permutation_test(a, b, alternative=args.alternative, exact=exact,
                                   n_resamples=args.n_resamples, random_state=seed)
        out = res.to_dict()
        out["system_a"], out["system_b"] = names
        if seed is not None:
            out["seed"] = seed
        if args.json:
            print_json(out)
        else:
            print(f"{names[0]} vs {names[1]} ({len(wide)} items)")
            print(res.summary())
            if seed is not None:
                print(f"seed: {seed}")
        return 0
    if exact:
        raise InputError("--exact works for one comparison of two systems; for more, drop --exact.")
    table = compare_systems(wide, baseline=args.baseline, test=test, adjust=args.adjust,
                            alternative=args.alternative, level=level, ci=getattr(args, "ci", None),
                            n_resamples=args.n_resamples, random_state=seed)
    if args.json:
        print_json({"comparisons": table.to_dict(orient="records"), "adjust": args.adjust, "test": test,
                    "n_items": len(wide), "n_resamples": args.n_resamples, "seed": seed})
    else:
        from .._format import terminal_width, text_table

        print(text_table(table, width=terminal_width()))
        print(f"seed: {seed}")
    return 0
