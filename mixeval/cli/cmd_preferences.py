"""``mixeval preferences``: a Bradley-Terry leaderboard from a log of pairwise judgments."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

from ..errors import InputError
from ._args import check_output_file
from ._warnings import print_warnings, warning_texts

HELP = "Bradley-Terry leaderboard of pairwise judgments (ties, position bias, judge and prompt effects)"


def register(sub: argparse._SubParsersAction) -> None:
    from ._paired import adjust_method
    from ._seed import SEED_HELP

    p = sub.add_parser("preferences", help=HELP,
                       description="Fit abilities (log-odds; Elo = 400/ln(10) * ability + 1000) to a log with one row "
                                   "per vote: the two systems (model_a shown first), the verdict "
                                   "(model_a/model_b/tie or a numeric margin), optionally judge and prompt.")
    p.add_argument("log", help="CSV (or .parquet), one row per vote")
    p.add_argument("--model-a", default="model_a", help="column of the system shown first (default model_a)")
    p.add_argument("--model-b", default="model_b", help="column of the system shown second (default model_b)")
    p.add_argument("--winner", default="winner", help="column of the verdict (default winner)")
    p.add_argument("--judge", help="column of the judge (needed by --position random and system:judge)")
    p.add_argument("--prompt", help="column of the prompt (needed by --random prompt / system:prompt)")
    p.add_argument("--count", help="column with the number of identical votes each row stands for")
    p.add_argument("--ties", choices=["drop", "davidson", "ordinal"], default="drop",
                   help="ties: left out (drop, default), Davidson's tie model, or an ordinal model of the verdict")
    p.add_argument("--position", choices=["none", "fixed", "random"], default="fixed",
                   help="first-position bias: none, fixed, or a fixed mean plus a random deviation per --judge")
    p.add_argument("--random", nargs="+", default=[], choices=["prompt", "system:prompt", "system:judge"],
                   help="further random-effects terms")
    p.add_argument("--covariate", nargs="+", default=[], metavar="NAME=COL_A,COL_B",
                   help="style control: the difference COL_A - COL_B enters the model (e.g. length=len_a,len_b)")
    p.add_argument("--reference", help="the system whose ability is 0 (default: abilities sum to 0)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level of intervals and rank sets")
    p.add_argument("--seed", type=int, default=None, help=SEED_HELP)
    p.add_argument("--html", default=None, metavar="OUT",
                   help="write the leaderboard report (intervals, rank sets, tests, random effects, votes needed, the "
                        "iid bootstrap beside the model) to OUT")
    p.add_argument("--iid-resamples", type=int, default=200,
                   help="resamples of the naive iid vote bootstrap in the --html report (0 leaves it out)")
    margin = p.add_mutually_exclusive_group()
    margin.add_argument("--equivalence", type=float, metavar="DELTA",
                        help="equivalence test (TOST, emmeans' test(delta, side = 'equivalence')) of every pair: are the "
                             "two within DELTA of each other (log-odds; Elo points with --elo)?")
    margin.add_argument("--noninferiority", type=float, metavar="DELTA",
                        help="non-inferiority test of every pair (side '>'): is the first at most DELTA worse?")
    p.add_argument("--elo", action="store_true", help="DELTA and the tested differences in Elo points")
    p.add_argument("--versus", metavar="SYSTEM",
                   help="with --equivalence/--noninferiority: test every system against this one instead of all pairs")
    p.add_argument("--adjust", default="holm", type=adjust_method,
                   help="p-value adjustment of the --equivalence/--noninferiority tests (default holm)")
    p.add_argument("--json", action="store_true",
                   help='print {"abilities": {system: log-odds}, "loglik", "thresholds", "position", "varcorr", ...}')
    p.set_defaults(handler=_run)


def _covariates(items: list[str]) -> dict[str, tuple[str, str]]:
    out = {}
    for item in items:
        name, sep, cols = item.partition("=")
        pair = [c.strip() for c in cols.split(",")]
        if not sep or not name or len(pair) != 2 or not all(pair):
            raise InputError(f"--covariate must look like NAME=COL_A,COL_B (e.g. length=len_a,len_b); got {item!r}.")
        out[name] = (pair[0], pair[1])
    return out


def _run(args: argparse.Namespace) -> int:
    from .._format import terminal_width, text_table
    from ..preferences import bradley_terry
    from . import print_json
    from ._io import read_table
    from ._seed import resolve_seed

    seed = resolve_seed(args.seed)
    delta = args.equivalence if args.equivalence is not None else args.noninferiority
    if delta is None and (args.elo or args.versus is not None or args.adjust != "holm"):
        raise InputError("--elo, --versus and --adjust set the --equivalence / --noninferiority tests; give one of "
                         "them too.")
    if delta is not None and not delta > 0:
        raise InputError(f"the margin DELTA must be a positive number; got {delta:g}.")
    if args.html is not None:
        check_output_file(args.html, "--html")
    elif args.iid_resamples != 200:
        raise InputError("--iid-resamples sets the iid bootstrap of the --html report; give --html OUT too.")
    if args.iid_resamples < 0 or args.iid_resamples == 1:
        raise InputError(f"--iid-resamples must be 0 (no iid section) or at least 2; got {args.iid_resamples}.")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source = args.log if str(args.log).endswith(".parquet") else read_table(args.log)  # Parquet: counted in DuckDB
        fit = bradley_terry(source, model_a=args.model_a, model_b=args.model_b, winner=args.winner,
                            judge=args.judge, prompt=args.prompt, count=args.count,
                            covariates=_covariates(args.covariate), ties=args.ties, position=args.position,
                            random=tuple(args.random), reference=args.reference)
        intervals = fit.intervals(args.level)
        ranks = fit.ranks(args.level, random_state=seed)
        tests = None
        if delta is not None:
            tests = fit.contrasts(delta=delta, side="equivalence" if args.equivalence is not None else ">",
                                  versus=args.versus, adjust=args.adjust, level=args.level,
                                  scale="elo" if args.elo else "log-odds")
        path = None
        if args.html is not None:
            facts = {"data": args.log, "rows": f"{len(source):,}" if not isinstance(source, str) else None,
                     "command": getattr(args, "command_line", None)}
            report = fit.to_report(level=args.level, n_resamples=args.iid_resamples, random_state=seed,
                                   meta={k: v for k, v in facts.items() if v})
            path = report.with_warnings(warning_texts(caught)).save(args.html)
    out = fit.to_dict()
    if path is not None:
        out["html"] = str(path)
    out["intervals"] = {s: {"lower": float(r.lower), "upper": float(r.upper)} for s, r in intervals.iterrows()}
    out["ranks"] = {s: {"rank": int(r["rank"]), "lower": int(r.rank_lower), "upper": int(r.rank_upper)}
                    for s, r in ranks.iterrows()}
    out["level"] = args.level
    out["seed"] = seed
    if tests is not None:
        out["margin_tests"] = {"null": tests.attrs["null"], "adjust": args.adjust, "scale": tests.attrs["scale"],
                               "tests": tests.drop(columns=["level"]).to_dict("records")}
    out["warnings"] = warning_texts(caught)
    if args.json:
        print_json(out)
        return 0
    print_warnings(caught)
    print(fit.summary())
    print()
    print(f"{100 * args.level:g}% simultaneous rank sets (max-t over all pairs)")
    print(text_table(ranks.drop(columns=["level"], errors="ignore"), width=terminal_width()))
    if tests is not None:
        kind = "equivalence (TOST)" if args.equivalence is not None else "non-inferiority"
        print(f"\n{kind} tests, H0: {tests.attrs['null']}; p-values adjusted by {args.adjust}")
        shown = tests[["system", "versus", "estimate", "se", "z", "pvalue", "pvalue_adjusted"]]
        print(text_table(shown, width=terminal_width()))
    print(f"\nrandom seed: {seed} (the max-t rank sets{' and the report' if path else ''}; repeat with --seed {seed})")
    if path is not None:
        print(f"\nHTML report written to {Path(path).resolve()}")
    return 0
