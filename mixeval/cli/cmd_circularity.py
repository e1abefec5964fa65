"""``mixeval circularity DATA.csv --target COL [--features a,b,c | --top K] [--family F] [--json]``."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from contextlib import contextmanager

from . import print_json
from ._io import read_table
from ._warnings import print_warnings, warning_texts


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
    p.add_argument("--family", choices=["gaussian", "binomial"], default="gaussian",
                   help="gaussian for a numeric target (default), binomial for a 0/1 target")
    p.add_argument("--k", type=int, default=10, help="initial basis dimension per smooth (default 10, as mgcv)")
    p.add_argument("--k-max", type=int, default=None,
                   help="largest basis dimension the k-check may reach (default 40, or --k if larger)")
    p.add_argument("--no-k-check", action="store_true", help="keep --k for every smooth (no k-check)")
    p.add_argument("--method", choices=["GCV", "REML"], default="GCV",
                   help="smoothing parameter selection (default GCV, mgcv's default)")
    p.add_argument("--d2-tolerance", type=float, default=0.01,
                   help="subsets within this much of the maximal D^2 count as maximal; the fewest edf wins (default 0.01)")
    p.add_argument("--d2-threshold", type=float, default=0.8, help="D^2 the selected set must reach (default 0.8)")
    p.add_argument("--determinism-threshold", type=float, default=0.95,
                   help="share of the label's variance that must be a function of the set (default 0.95)")
    p.add_argument("--gain-threshold", type=float, default=0.1,
                   help="largest share of what the other candidates explain alone that they may add (default 0.1)")
    p.add_argument("--negligible-gain", type=float, default=0.001, help="an added D^2 this small counts as nothing")
    p.add_argument("--nullification-threshold", type=float, default=0.2, help="sd-ratio view (reported only)")
    p.add_argument("--negligible", type=float, default=0.025, help="sd-share view (reported only)")
    p.add_argument("--json", action="store_true", help='print {"circular", "d2", "models", "nullification", ...}')
    p.set_defaults(handler=_run)


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [t.strip() for t in text.split(",") if t.strip()]


#: arguments of :func:`circularity_test` that are flags of this command under the same name
_FLAGS = ("k", "k_max", "top", "features", "exclude", "family", "method", "d2_tolerance", "d2_threshold",
          "determinism_threshold", "gain_threshold", "negligible_gain", "nullification_threshold", "negligible")


def _flag(match: re.Match) -> str:
    if match.group(0) == "`k_check`=False":
        return "--no-k-check"
    return "--" + match.group(1).replace("_", "-") if match.group(1) in _FLAGS else match.group(0)


@contextmanager
def _in_flag_words() -> Iterator[None]:
    """Refusals of :func:`circularity_test` name its arguments (``k=``, ```d2_threshold```): say ``--k``,
    ``--d2-threshold`` here."""
    from ..errors import InputError

    try:
        yield
    except InputError as exc:
        message = re.sub(r"\b(k|top) ?= ?(\d+)", r"--\1 \2", str(exc))
        message = re.sub(r"`k_check`=False|`(\w+)`", _flag, message)
        if message == str(exc):
            raise
        raise InputError(message) from None


def _run(args: argparse.Namespace) -> int:
    import warnings

    from ..validity import circularity_test
    from ._args import check_count

    check_count(args.k, "--k", minimum=3)
    if args.k_max is not None:
        check_count(args.k_max, "--k-max", minimum=3)
    check_count(args.top, "--top")
    data = read_table(args.data)
    with warnings.catch_warnings(record=True) as caught, _in_flag_words():
        warnings.simplefilter("always")
        res = circularity_test(
            data, args.target, _split(args.features), top=args.top, family=args.family, k=args.k, method=args.method,
            k_check=not args.no_k_check, k_max=args.k_max, exclude=_split(args.exclude),
            d2_tolerance=args.d2_tolerance, d2_threshold=args.d2_threshold,
            determinism_threshold=args.determinism_threshold, gain_threshold=args.gain_threshold,
            negligible_gain=args.negligible_gain, nullification_threshold=args.nullification_threshold,
            negligible=args.negligible, show_progress=not args.json,
        )
    if args.json:
        out = res.to_dict()
        out["warnings"] = warning_texts(caught)
        print_json(out)
    else:
        print_warnings(caught)
        print(res.summary())
    return 0
