"""The ``compare-logs`` command: ``mixeval compare-logs LOGS [--metric M] [--cluster COL] [--by COL] [--json]
[--html OUT]`` compares every pair of models in evaluation-harness logs."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

from . import print_json
from ._args import check_finite, check_level, check_output_file


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare-logs",
        help="paired, cluster-robust comparison of the models in harness logs (lm-eval, inspect_ai, HELM)",
        description=(
            "Read evaluation logs (lm-evaluation-harness samples_*.jsonl, inspect_ai .eval/.json, HELM "
            "per_instance_stats.json, or a long-format CSV/Parquet with columns model, item[, task, repeat]) "
            "and compare every pair of models on their shared items: the paired mean difference (repeats "
            "averaged within item) with CR2 t tests and intervals (Bell-McCaffrey df) beside the naive, CR1 and "
            "mixed-model standard errors, McNemar's test for 0/1 scores (clustered with --cluster), p-values "
            "adjusted across pairs, a leaderboard with simultaneous rank sets, and the items needed to detect a "
            "stated difference."),
    )
    p.add_argument("logs", nargs="+", help="log files or directories (searched recursively)")
    p.add_argument("--metric", help="metric column or inspect_ai scorer (needed when the logs have several)")
    p.add_argument("--cluster", help="item field grouping the items (e.g. a passage id): cluster-robust SEs")
    p.add_argument("--by", help="item field (e.g. subject): the pairs within each class, adjusted across classes "
                                "and pairs, and a CR2 HTZ test of whether the difference varies with it")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--adjust", default="holm", help="p-value adjustment across pairs: holm (default), bh, bonferroni, "
                                                    "hochberg, by, none")
    p.add_argument("--no-mixed", dest="mixed", action="store_false",
                   help="leave out the REML mixed model of each pair's item-level differences (clusters as a random "
                        "effect, Satterthwaite df; fitted for all pairs at once)")
    p.add_argument("--glmm", action="store_true",
                   help="also fit the logistic mixed model (glmer) of each pair's 0/1 rows: the log odds ratio "
                        "(one fit per pair; slow on large logs)")
    p.add_argument("--power", type=float, default=0.8, help="power of the design numbers mdd and n_needed "
                                                            "(default 0.8)")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level of the design numbers (default 0.05)")
    p.add_argument("--effect", type=float, default=None,
                   help="the difference n_needed plans for, stated in advance (default: 0.02 for a 0-1 metric, "
                        "else 0.2 standard deviations of the item scores)")
    p.add_argument("--equivalence", type=float, default=None, metavar="DELTA",
                   help="test every pair for equivalence within +-DELTA (TOST, CR2 SE and df) and mark the models "
                        "equivalent to the best")
    p.add_argument("--noninferiority", type=float, default=None, metavar="DELTA",
                   help="test, per pair and direction, that one model is not worse than the other by DELTA or more")
    p.add_argument("--lower-is-better", dest="higher_is_better", action="store_false",
                   help="the metric is an error (ranks and non-inferiority: lower is better)")
    p.add_argument("--ranks", choices=("bonferroni", "max-t"), default="bonferroni",
                   help="simultaneous tests behind the rank sets: bonferroni (default; holds its level with few "
                        "clusters) or max-t (multivariate t, integrated numerically)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the max-t integration (with --ranks max-t; default 0)")
    p.add_argument("--drop-mismatched", action="store_true",
                   help="leave out (with a warning) items whose question differs between models instead of failing")
    p.add_argument("--drop-errored", action="store_true",
                   help="leave out (with a warning) inspect_ai samples that ended in an error instead of failing")
    p.add_argument("--json", action="store_true", help="print one JSON object (pairs, leaderboard, ...)")
    p.add_argument("--html", default=None, metavar="OUT", help="write the HTML report to OUT")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from ..errors import InputError
    from ..logs import compare_logs

    check_level(args.level, "--level")
    check_level(args.power, "--power")
    check_level(args.alpha, "--alpha")
    for flag, value in (("--effect", args.effect), ("--equivalence", args.equivalence),
                        ("--noninferiority", args.noninferiority)):
        check_finite(value, flag)
        if value is not None and value <= 0:
            raise InputError(f"{flag} must be a positive number on the metric's scale (e.g. {flag} 0.02); got {value}.")
    if args.seed is not None and args.ranks != "max-t":
        raise InputError("--seed seeds the max-t integration; add --ranks max-t, or leave --seed out (the "
                         "Bonferroni rank sets draw nothing).")
    if args.html is not None:
        check_output_file(args.html, "--html")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")       # compare_logs keeps them in result.warnings, printed below
        result = compare_logs(args.logs, metric=args.metric, cluster=args.cluster, by=args.by, level=args.level,
                              adjust=args.adjust, mixed=args.mixed, glmm=args.glmm, power=args.power, alpha=args.alpha,
                              effect=args.effect, equivalence=args.equivalence, noninferiority=args.noninferiority,
                              higher_is_better=args.higher_is_better, ranks=args.ranks, random_state=args.seed,
                              on_mismatch="drop" if args.drop_mismatched else "error",
                              on_error="drop" if args.drop_errored else "error")
    path = None
    if args.html is not None:
        facts = {"data": " ".join(args.logs), "command": getattr(args, "command_line", "")}
        path = result.to_report().with_facts({k: v for k, v in facts.items() if v}).save(args.html)
    if args.json:
        out = result.to_dict()
        if path is not None:
            out["html"] = str(path)
        print_json(out)
        return 0
    print(result.summary())
    if path is not None:
        print(f"\nHTML report written to {Path(path).resolve()}")
    return 0
