"""``mixeval circularity DATA.csv --target COL [--features a,b,c | --top K] [--family F] [--json]``."""

from __future__ import annotations

import argparse

from . import print_json
from ._io import read_table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "circularity",
        help="GAM circularity test: are the labels a reconstruction of a rule over a few features?",
        description=(
            "Fit a GAM to every subset of the candidate features (ordered by |correlation| with the "
            "target), select the subset with maximal deviance explained D^2 and fewest effective df, "
            "and measure how much the other features' shapes are nullified by it (book Def. 2.5)."
        ),
    )
    p.add_argument("data", help="CSV (optionally .gz) or Parquet file, one row per observation")
    p.add_argument("--target", required=True, help="label or prediction column")
    p.add_argument("--features", default=None, help="comma-separated candidate columns (default: all numeric)")
    p.add_argument("--top", type=int, default=5, help="keep the K candidates most correlated with the target (default 5)")
    p.add_argument("--exclude", default="", help="comma-separated columns never used as candidates")
    p.add_argument("--family", choices=["gaussian", "binomial"], default="gaussian")
    p.add_argument("--k", type=int, default=10, help="basis dimension per smooth (default 10, as mgcv)")
    p.add_argument("--method", choices=["GCV", "REML"], default="GCV",
                   help="smoothing parameter selection (default GCV, mgcv's default)")
    p.add_argument("--d2-tolerance", type=float, default=0.01)
    p.add_argument("--d2-threshold", type=float, default=0.9)
    p.add_argument("--nullification-threshold", type=float, default=0.2)
    p.add_argument("--negligible", type=float, default=0.025,
                   help="contributions below this share of the fitted values' sd count as nullified")
    p.add_argument("--json", action="store_true", help='print {"circular", "d2", "models", "nullification", ...}')
    p.set_defaults(handler=_run)


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [t.strip() for t in text.split(",") if t.strip()]


def _run(args: argparse.Namespace) -> int:
    import warnings

    from ..validity import circularity_test

    data = read_table(args.data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = circularity_test(
            data, args.target, _split(args.features), top=args.top, family=args.family, k=args.k, method=args.method,
            exclude=_split(args.exclude), d2_tolerance=args.d2_tolerance, d2_threshold=args.d2_threshold,
            nullification_threshold=args.nullification_threshold, negligible=args.negligible, show_progress=not args.json,
        )
    notes = sorted({str(w.message) for w in caught})
    if args.json:
        out = res.to_dict()
        out["warnings"] = notes
        print_json(out)
    else:
        print(res.summary())
        for n in notes:
            print(f"warning: {n}")
    return 0
