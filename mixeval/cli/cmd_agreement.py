"""``mixeval agreement``: Krippendorff's alpha, Cohen's kappa and Scott's pi of a ratings table."""

from __future__ import annotations

import argparse
import warnings

from ._warnings import print_warnings

N_RESAMPLES = 2000


def _check_flags(args: argparse.Namespace) -> bool:
    """Refuse flags that would not be used; return whether the ratings are in long format."""
    from ..errors import InputError

    long = [f for f, v in (("--unit", args.unit), ("--rater", args.rater), ("--value", args.value)) if v is not None]
    wide = [f for f, v in (("--id", args.id), ("--raters", args.raters)) if v is not None]
    if 0 < len(long) < 3:
        raise InputError(f"long-format ratings (one row per rating) need all of --unit, --rater and --value; got only "
                         f"{' and '.join(long)}.")
    if long and wide:
        raise InputError(f"{' and '.join(wide)} choose columns of a wide table; with {', '.join(long)} the ratings "
                         f"are in long format (one row per rating). Drop {' and '.join(wide)}.")
    if not (args.level and args.level > 0):
        unused = [f for f, v in (("--n-resamples", args.n_resamples), ("--seed", args.seed)) if v is not None]
        if unused:
            raise InputError(f"--level 0 asks for no interval, so {' and '.join(unused)} (of the bootstrap interval) "
                             "would not be used; drop them or give a --level such as 0.95.")
    return bool(long)


def register(subparsers) -> None:
    from ._paired import SEED_HELP

    p = subparsers.add_parser(
        "agreement", help="Krippendorff's alpha, Cohen's kappa, Scott's pi (book Section 3.3.1)",
        description="Agreement coefficients of a ratings table: wide (one row per unit, one column per rater; "
                    "empty cells = missing) or long (--unit/--rater/--value). kappa and pi need exactly two "
                    "raters (else null). The 0/0 case (no variation at all) gives null with a warning.",
    )
    p.add_argument("path", help="CSV (or .parquet) of ratings")
    p.add_argument("--measurement", choices=["nominal", "ordinal", "interval", "ratio"], default="nominal",
                   help="level of measurement (default nominal)")
    p.add_argument("--raters", nargs="+", metavar="COL", help="wide format: rater columns (default: all columns "
                                                                "except --id)")
    p.add_argument("--id", metavar="COL", help="wide format: unit id column to leave out")
    p.add_argument("--unit", help="long format: unit column")
    p.add_argument("--rater", help="long format: rater column")
    p.add_argument("--value", help="long format: rating column")
    p.add_argument("--level", type=float, default=0.95, help="confidence level of the bootstrap interval "
                                                             "(default 0.95; 0 = no interval)")
    p.add_argument("--n-resamples", type=int, default=None, help=f"bootstrap resamples (default {N_RESAMPLES})")
    p.add_argument("--seed", type=int, default=None, help=SEED_HELP)
    p.add_argument("--if-undefined", choices=["nan", "zero", "raise"], default="nan",
                   help="value when there is no variation at all (0/0); 'zero' is Krippendorff's convention")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:

    from ..agreement import agreement
    from ..cli import print_json
    from ..cli._io import read_table
    from ..errors import ColumnError
    from ._args import check_count, check_level
    from ._paired import resolve_seed

    check_level(args.level, "--level", zero_means="no interval")
    long = _check_flags(args)
    if args.n_resamples is None:
        args.n_resamples = N_RESAMPLES
    check_count(args.n_resamples, "--n-resamples")
    seed = resolve_seed(args.seed)
    data = read_table(args.path)
    if not long:
        if args.id is not None:
            if args.id not in data.columns:
                raise ColumnError(f"--id column {args.id!r} not found; available: {', '.join(data.columns)}.")
            data = data.set_index(args.id)
        if args.raters:
            missing = [c for c in args.raters if c not in data.columns]
            if missing:
                raise ColumnError(f"rater column(s) {missing} not found; available: {', '.join(data.columns)}.")
            data = data[args.raters]
    level = args.level if args.level and args.level > 0 else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = agreement(data, args.measurement, unit=args.unit, rater=args.rater, value=args.value,
                          if_undefined=args.if_undefined, level=level, n_resamples=args.n_resamples,
                          random_state=seed)
    print_warnings(caught)
    by = {row.coefficient: row for row in table.itertuples()}
    if args.json:
        out = {"measurement": args.measurement}
        for name in ("alpha", "kappa", "pi"):
            row = by.get(name)
            out[name] = None if row is None else float(row.value)
            out[f"{name}_ci"] = None if row is None or level is None else [float(row.lower), float(row.upper)]
        alpha = by["alpha"]
        out.update({"observed_disagreement": float(alpha.observed_disagreement),
                    "expected_disagreement": float(alpha.expected_disagreement),
                    "percent_agreement": float(alpha.percent_agreement), "n_units": int(alpha.n_units),
                    "level": level, "n_resamples": args.n_resamples if level else 0,
                    "seed": seed if level else None})
        print_json(out)
    else:
        from .._format import terminal_width, text_table

        print(text_table(table, width=terminal_width()))
        if level:
            print(f"seed: {seed}")
    return 0
