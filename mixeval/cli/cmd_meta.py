"""``mixeval meta selective|local ...``: metric meta-evaluation from the command line."""

from __future__ import annotations

import argparse

from ..errors import InputError
from . import print_json
from ._io import read_table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "meta",
        help="meta-evaluation of metrics: selective answering (DiSCA), local metric accuracy",
        description="Meta-evaluation of evaluation metrics and scores.",
    )
    meta_sub = p.add_subparsers(dest="meta_command", metavar="META_COMMAND", help="selective or local")
    meta_sub.required = True

    s = meta_sub.add_parser(
        "selective",
        help="accuracy-coverage AUC and DiSCA of a selective answerer",
        description=(
            "Accuracy-coverage curve by MaxProb (most confident answers first; tied "
            "confidences enter together), its AUC over coverage in [0, 1], and the DiSCA "
            "score x/a + y/b - z*penalty (Mishra et al.)."
        ),
    )
    s.add_argument("data", help="CSV (or .parquet) file, one row per question")
    s.add_argument("--confidence", required=True, help="column with the MaxProb of each answer, in [0, 1]")
    s.add_argument("--correct", required=True, help="column with 1/0 (True/False): answer correct?")
    s.add_argument("--tolerance", type=float, default=0.9, help="worst admissible accuracy, defines b (default 0.9)")
    s.add_argument(
        "--weights",
        default="1/3,1/3,1/3",
        help="x,y,z weights of DiSCA, summing to 1; fractions allowed (default 1/3,1/3,1/3)",
    )
    s.add_argument("--min-gap", type=float, default=0.001, help="floor of the MaxProb gap c (default 0.001)")
    s.add_argument("--json", action="store_true", help='print {"auc", "a", "b", "n", "disca", ...}')
    s.set_defaults(handler=_run_selective)

    loc = meta_sub.add_parser(
        "local",
        help="local metric accuracy per subset from precomputed scores, with hypothesis tests A and B",
        description=(
            "Local accuracy of each metric per subset of outputs from precomputed scores of "
            "(output, perturbed output) pairs: one row per pair and metric."
        ),
    )
    loc.add_argument("data", help="CSV (or .parquet) file, one row per (pair, metric)")
    loc.add_argument("--context", required=True, help="column identifying the evaluation context x (unit of resampling)")
    loc.add_argument("--subset", required=True, help="column naming the subset of outputs Q")
    loc.add_argument("--metric", required=True, help="column naming the metric")
    loc.add_argument("--score", required=True, help="metric score of the output y")
    loc.add_argument("--perturbed", required=True, help="metric score of the perturbed output y'")
    loc.add_argument("--lower-is-better", default="", help="comma-separated metrics where lower scores are better (e.g. wer)")
    loc.add_argument("--ties", choices=["fail", "half"], default="fail", help="a tied pair counts 0 (fail, default) or 1/2")
    loc.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    loc.add_argument(
        "--ci", choices=["wilson", "t", "bootstrap"], default="wilson",
        help="confidence interval: Wilson with effective sample size (default), t, or bootstrap over contexts",
    )
    loc.add_argument("--n-resamples", type=int, default=1999, help="bootstrap resamples for hypothesis B and --ci bootstrap (default 1999)")
    loc.add_argument("--seed", type=int, default=0, help="random seed of the bootstrap (default 0)")
    loc.add_argument("--json", action="store_true", help='print {"rows": [...], "hypothesis_a": {...}, "hypothesis_b": {...}}')
    loc.set_defaults(handler=_run_local)


def _run_selective(args: argparse.Namespace) -> int:
    from .._validation import require_columns, require_no_missing
    from ..meta import disca

    data = read_table(args.data)
    require_columns(data, [args.confidence, args.correct])
    require_no_missing(data, [args.confidence, args.correct])
    correct = data[args.correct]
    if correct.dtype == object or str(correct.dtype).startswith("str"):
        lowered = correct.astype(str).str.strip().str.lower()
        mapping = {"true": 1, "false": 0, "1": 1, "0": 0}
        if not lowered.isin(list(mapping)).all():
            bad = lowered[~lowered.isin(list(mapping))].head(3).tolist()
            raise InputError(
                f"column {args.correct!r} must hold 1/0 or True/False; found e.g. {bad}."
            )
        correct = lowered.map(mapping)
    result = disca(
        data[args.confidence].to_numpy(),
        correct.to_numpy(),
        tolerance=args.tolerance,
        weights=args.weights,
        min_gap=args.min_gap,
    )
    if args.json:
        print_json(result.to_dict())
    else:
        print(result.summary())
    return 0


def _run_local(args: argparse.Namespace) -> int:
    from ..meta import accuracy_equality_table, accuracy_equality_test, local_accuracy, rank_stability_test
    from ._args import check_count, check_level

    check_level(args.level, "--level")
    check_count(args.n_resamples, "--n-resamples")
    data = read_table(args.data)
    lower = [m.strip() for m in args.lower_is_better.split(",") if m.strip()]
    result = local_accuracy(
        data,
        context=args.context,
        subset=args.subset,
        metric=args.metric,
        score=args.score,
        perturbed=args.perturbed,
        lower_is_better=lower,
        ties=args.ties,
        level=args.level,
        ci=args.ci,
        n_resamples=args.n_resamples,
        random_state=args.seed,
    )
    if len(result.subsets) < 2:
        raise InputError(
            f"column {args.subset!r} has a single subset ({result.subsets[0]!r}); hypotheses A and B "
            "compare at least two subsets."
        )
    tests_a = {m: accuracy_equality_test(result, metric=m) for m in result.metrics}
    table_a = accuracy_equality_table(result, adjust="holm")
    adjusted = dict(zip(table_a["metric"], table_a["pvalue_adjusted"]))
    test_b = None
    if len(result.metrics) >= 2:
        test_b = rank_stability_test(result, n_resamples=args.n_resamples, random_state=args.seed)
    if args.json:
        print_json(
            {
                "rows": result.table.to_dict(orient="records"),
                "hypothesis_a": {m: {**t.to_dict(), "pvalue_holm": adjusted[m]} for m, t in tests_a.items()},
                "hypothesis_b": None if test_b is None else test_b.to_dict(),
            }
        )
    else:
        print(result.table.to_string(index=False))
        print()
        for m, t in tests_a.items():
            print(f"hypothesis A, {m}: {t.summary()}, Holm-adjusted over metrics p = {adjusted[m]:.4g}")
        if test_b is not None:
            print(f"hypothesis B: {test_b.summary()}")
    return 0
