"""``mixeval power``: power of a system comparison for changed designs, by simulation from a fitted study."""

from __future__ import annotations

import argparse
import warnings

from ._warnings import print_warnings, warning_texts


def _sizes(items: list[str]) -> dict[str, list[int]]:
    from ..errors import InputError

    out = {}
    for item in items:
        key, sep, values = item.partition("=")
        try:
            sizes = [int(v) for v in values.split(",") if v.strip()]
        except ValueError:
            sizes = []
        if not sep or not key or not sizes:
            raise InputError(f"--n must look like FACET=N1,N2,... (e.g. item=100,200,400); got {item!r}.")
        smallest = 1 if key == "replicates" else 2
        if min(sizes) < smallest:
            what = ("rows per cell" if key == "replicates"
                    else "levels of a random factor (one level has no variance to simulate)")
            raise InputError(f"--n {item}: {min(sizes)} is too few {what}; give --n {key}={smallest} or more.")
        out[key] = sizes
    return out


def _pair(text: str | None, test: str, delta: float | None) -> tuple[str, str] | None:
    """``--pair A,B``: two different systems, used by the test (``--test pairwise``) or by ``--delta``."""
    from ..errors import InputError

    if text is None:
        return None
    parts = [s.strip() for s in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise InputError(f"--pair must name two systems, e.g. A,B; got {text!r}.")
    if parts[0] == parts[1]:
        raise InputError(f"--pair {text}: a system compared with itself has no difference; name two different "
                         "systems, e.g. A,B.")
    if test == "glrt" and delta is None:
        raise InputError(f"--pair {text} with --test glrt and no --delta is not used: the GLRT tests all systems at "
                         "once at their fitted means. Add --test pairwise (the power of this pair's contrast) or "
                         "--delta D (the GLRT's power when this pair differs by D), or drop --pair.")
    return parts[0], parts[1]


def register(sub: argparse._SubParsersAction) -> None:
    from ._args import add_family_arguments
    from ._seed import SEED_HELP

    p = sub.add_parser("power", help="power of a system comparison for more items, raters or seeds (simulation)",
                       description="Simulate the study's fitted model (variance components, system effects) on "
                                   "balanced designs of the sizes given with --n, refit and test each simulated "
                                   "data set, and report the share of rejections with its Monte-Carlo standard "
                                   "error.")
    p.add_argument("data", help="CSV (or .parquet), one row per observation")
    p.add_argument("formula", help='e.g. "ter ~ system + (1|sentence_id)"')
    p.add_argument("--n", nargs="+", required=True, metavar="FACET=N1,N2",
                   help="sizes to try, e.g. item=100,200,400 (item: the test items' factor) rater=3,5")
    p.add_argument("--delta", type=float, help="difference of the means of the compared pair to detect "
                                                "(default: as fitted)")
    p.add_argument("--pair", help="two different systems, e.g. Marking,PostEdit: those --test pairwise compares, or "
                                  "those whose difference --delta sets (default: first two levels)")
    p.add_argument("--test", choices=["glrt", "pairwise"], default="glrt",
                   help="the test whose power is simulated: the GLRT of the system effect (default) or the --pair contrast")
    add_family_arguments(p)
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the test (default 0.05)")
    p.add_argument("--item", help="the test items' factor (default: the random factor with most levels)")
    p.add_argument("--system", help="the compared factor (default: first categorical fixed effect)")
    p.add_argument("--nsim", type=int, default=500, help="simulations per design (default 500)")
    p.add_argument("--seed", type=int, default=None, help=SEED_HELP)
    p.add_argument("--target", type=float, default=0.8, help="power for the smallest-design answer (default 0.8)")
    p.add_argument("--json", action="store_true", help='print {"rows": [{"item": 100, "power": p, "se": s}, ...]}')
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from ..study import Study
    from . import print_json
    from ._args import check_count, check_family_flags, check_finite, check_level
    from ._io import read_table
    from ._seed import resolve_seed

    check_family_flags(args)
    check_level(args.alpha, "--alpha")
    check_level(args.target, "--target")
    check_count(args.nsim, "--nsim")
    check_finite(args.delta, "--delta")
    seed = resolve_seed(args.seed)
    sizes = _sizes(args.n)
    pair = _pair(args.pair, args.test, args.delta)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        family = None if args.family == "gaussian" else args.family
        study = Study(read_table(args.data), args.formula, item=args.item, system=args.system, family=family,
                      weights=args.weights, **({"link": args.link} if family else {}))
        alias = {}
        if "item" in sizes and study.item != "item":
            alias[study.item] = "item"
            sizes[study.item] = sizes.pop("item")
        result = study.power(n=sizes, delta=args.delta, pair=pair, alpha=args.alpha, test=args.test,
                             n_resamples=args.nsim, random_state=seed, progress=None if not args.json else False)
    table = result.table.rename(columns=alias)
    best = result.smallest(args.target)
    out = {"rows": table.to_dict(orient="records"), "test": result.tests[0], "alpha": result.alpha,
           "nsim": result.n_resamples, "seed": seed, "effect": result.effect, "family": result.family, "item": study.item,
           "smallest": None if best is None else {alias.get(k, k): v for k, v in best.to_dict().items()},
           "target": args.target, "warnings": warning_texts(caught)}
    if args.json:
        print_json(out)
        return 0
    print_warnings(caught)
    print(result.summary())
    print(f"\nsmallest design with power >= {args.target}: {out['smallest'] if best is not None else 'none in the grid'}")
    print(f"seed: {seed}")
    return 0
