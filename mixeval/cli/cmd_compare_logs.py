"""The ``compare-logs`` command: ``mixeval compare-logs LOGS [--metric M] [--cluster COL] [--by COL] [--json]
[--html OUT]`` compares every pair of models in evaluation-harness logs."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

from . import print_json
from ._args import check_output_file
from ._warnings import print_warnings, warning_texts


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare-logs",
        help="paired, cluster-robust comparison of the models in harness logs (lm-eval, inspect_ai, HELM)",
        description=(
            "Read evaluation logs (lm-evaluation-harness samples_*.jsonl, inspect_ai .eval/.json, HELM "
            "per_instance_stats.json, or a long-format CSV/Parquet with columns model, item[, task, repeat]) "
            "and compare every pair of models on their shared items: the paired mean difference (repeats "
            "averaged within item) with naive, cluster-robust (CR1, CR2) and mixed-model standard errors, "
            "McNemar's test for 0/1 scores, p-values adjusted across pairs, a leaderboard with simultaneous "
            "rank sets and the items needed for 80%% power."),
        epilog="example: mixeval compare-logs out/ --metric acc --cluster passage --by subject --html report.html",
    )
    p.add_argument("logs", nargs="+", help="log files or directories (searched recursively)")
    p.add_argument("--metric", help="metric column or inspect_ai scorer (needed when the logs have several)")
    p.add_argument("--cluster", help="item field grouping the items (e.g. a passage id): cluster-robust SEs")
    p.add_argument("--by", help="item field (e.g. subject): the pairs within each class and a test of the difference")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--adjust", default="holm", help="p-value adjustment across pairs: holm (default), bh, bonferroni, "
                                                    "hochberg, by, none")
    p.add_argument("--no-mixed", dest="mixed", action="store_false",
                   help="leave out se_mixed (the REML mixed model of each pair's item-level differences with the "
                        "clusters as a random effect, fitted for all pairs at once)")
    p.add_argument("--glmm", action="store_true",
                   help="also fit the logistic mixed model (glmer) of each pair's 0/1 rows: the log odds ratio "
                        "(one fit per pair; slow on large logs)")
    p.add_argument("--power", type=float, default=0.8, help="power for the items-needed numbers (default 0.8)")
    p.add_argument("--effect", type=float, default=None, help="also give the items needed to detect this difference")
    p.add_argument("--lower-is-better", dest="higher_is_better", action="store_false",
                   help="the metric is an error (ranks: lower is better)")
    p.add_argument("--drop-mismatched", action="store_true",
                   help="leave out (with a warning) items whose question differs between models instead of failing")
    p.add_argument("--seed", type=int, default=0, help="seed of the rank-set simulation (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object (pairs, leaderboard, ...)")
    p.add_argument("--html", default=None, metavar="OUT", help="write the HTML report to OUT")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from ..logs import compare_logs

    if args.html is not None:
        check_output_file(args.html, "--html")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = compare_logs(args.logs, metric=args.metric, cluster=args.cluster, by=args.by, level=args.level,
                              adjust=args.adjust, mixed=args.mixed, glmm=args.glmm, power=args.power, effect=args.effect,
                              higher_is_better=args.higher_is_better, random_state=args.seed,
                              on_mismatch="drop" if args.drop_mismatched else "error")
    warned = warning_texts(caught)
    path = None
    if args.html is not None:
        facts = {"data": " ".join(args.logs), "command": getattr(args, "command_line", "")}
        path = result.to_report().with_facts({k: v for k, v in facts.items() if v}).save(args.html)
    if args.json:
        out = result.to_dict()
        out["warnings"] = warned
        if path is not None:
            out["html"] = str(path)
        print_json(out)
        return 0
    print_warnings(caught)
    print(result.summary())
    if path is not None:
        print(f"\nHTML report written to {Path(path).resolve()}")
    return 0
