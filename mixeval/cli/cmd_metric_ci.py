"""``mixeval metric-ci``: Goyal et al.'s interval for two systems scored by a metric model."""

from __future__ import annotations

import argparse

from ..errors import InputError
from . import print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "metric-ci",
        help="confidence interval when the metric is a model (Goyal et al. 2023)",
        description=(
            "Compare the observed positive rates of two systems (e.g. toxicity) labelled by a metric "
            "model with precision P(true=1|observed=1) and false omission rate P(true=1|observed=0). "
            "Prints the paper's interval (Eq. 14), the uncorrected one (Eqs. 5-8) and the calibrated "
            "interval for the difference in true rates (+ delta method when --confusion is given)."
        ),
    )
    p.add_argument("--p-control", type=float, required=True, help="observed positive rate of the control system")
    p.add_argument("--p-treatment", type=float, required=True, help="observed positive rate of the treatment system")
    p.add_argument("--n", type=int, required=True, help="outputs scored for the control (and treatment) system")
    p.add_argument("--n-treatment", type=int, default=None, help="outputs of the treatment system (default: --n)")
    p.add_argument("--precision", type=float, default=None, help="metric precision P(R=1|O=1)")
    p.add_argument("--for", dest="false_omission_rate", type=float, default=None,
                   help="metric false omission rate P(R=1|O=0)")
    p.add_argument("--confusion", default=None, metavar="TP,FP,FN,TN",
                   help="metric confusion counts on its annotated test set (adds the delta-method interval)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_run)


def _parse_confusion(text: str) -> tuple[int, int, int, int]:
    parts = [s.strip() for s in text.split(",")]
    if len(parts) != 4:
        raise InputError(f"--confusion needs four comma-separated counts TP,FP,FN,TN; got {text!r}.")
    try:
        vals = [int(s) for s in parts]
    except ValueError:
        raise InputError(f"--confusion needs integer counts TP,FP,FN,TN; got {text!r}.") from None
    return vals[0], vals[1], vals[2], vals[3]


def _metric(args: argparse.Namespace):
    from ..metric_model import MetricModel

    if args.confusion is not None:
        m = MetricModel.from_confusion(*_parse_confusion(args.confusion))
        for flag, given, derived in (
            ("--precision", args.precision, m.precision),
            ("--for", args.false_omission_rate, m.false_omission_rate),
        ):
            if given is not None and abs(given - derived) > 5e-4:
                raise InputError(
                    f"{flag} {given} disagrees with the value {derived:.6g} implied by --confusion; "
                    "give one or the other."
                )
        return m
    if args.precision is None or args.false_omission_rate is None:
        raise InputError("give --precision and --for, or --confusion TP,FP,FN,TN.")
    return MetricModel.from_rates(args.precision, args.false_omission_rate)


def _run(args: argparse.Namespace) -> int:
    from ..metric_model import metric_ci
    from ._args import check_level

    check_level(args.level, "--level")
    metric = _metric(args)
    r = metric_ci(args.p_control, args.p_treatment, args.n, args.n_treatment, metric=metric, level=args.level)
    out = {
        "ate": r.ate,
        "var_control": r.var_control,
        "var_treatment": r.var_treatment,
        "ci": [r.confidence_interval.lower, r.confidence_interval.upper],
        "ci_uncorrected": [r.ci_uncorrected.lower, r.ci_uncorrected.upper],
        "var_control_uncorrected": r.var_control_uncorrected,
        "var_treatment_uncorrected": r.var_treatment_uncorrected,
        "statistic": r.statistic,
        "pvalue": r.pvalue,
        "p_true_control": r.p_true_control,
        "p_true_treatment": r.p_true_treatment,
        "ate_corrected": r.ate_corrected,
        "se_corrected": r.se_corrected,
        "ci_corrected": [r.ci_corrected.lower, r.ci_corrected.upper],
        "se_delta": r.se_delta,
        "ci_delta": None if r.ci_delta is None else [r.ci_delta.lower, r.ci_delta.upper],
        "precision": metric.precision,
        "false_omission_rate": metric.false_omission_rate,
        "level": args.level,
    }
    if args.json:
        print_json(out)
    else:
        print(r.summary())
    return 0
