"""``mixeval confint``: confidence intervals of a mixed-model fit (profile likelihood, parametric bootstrap, Wald)."""

from __future__ import annotations

import argparse
import warnings

from ._warnings import print_warnings, warning_texts


def register(sub: argparse._SubParsersAction) -> None:
    from ._args import add_family_arguments
    from ._seed import SEED_HELP

    p = sub.add_parser("confint", help="confidence intervals of a mixed model's sd's, sigma and fixed effects "
                                       "(thresholds of an ordinal model)",
                       description="Confidence intervals of the standard deviations, the residual sd and the fixed "
                                   "effects of an lme4-style model fitted by REML (or, with --family binomial or "
                                   "poisson, of a GLMM fitted as glmer: sd's and fixed effects; with --family "
                                   "ordinal, of a clmm: sd's, thresholds and effects), named as lme4's "
                                   "confint(..., oldNames = FALSE): profile likelihood (default), parametric "
                                   "bootstrap percentiles (bootMer) or Wald.")
    p.add_argument("data", help="CSV (or .parquet), one row per observation")
    p.add_argument("formula", help='e.g. "score ~ (1|sentence) + (1|rater) + (1|rater:sentence)"')
    p.add_argument("--method", choices=["profile", "boot", "wald"], default="profile",
                   help="profile likelihood (default, as lme4), parametric bootstrap or Wald intervals")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--nsim", type=int, default=None, help="bootstrap refits (--method boot; default 500, as lme4)")
    p.add_argument("--seed", type=int, default=None, help=SEED_HELP)
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes for the bootstrap refits (--method boot; default 1, -1: all cores)")
    p.add_argument("--json", action="store_true", help='print {"intervals": {name: [lower, upper]}, ...}')
    add_family_arguments(p, nagq=True, random_thresholds=True)
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from ..errors import InputError
    from ..uncertainty import confint
    from . import print_json
    from ._args import check_count, check_family_flags, check_jobs, check_level
    from ._io import read_table
    from ._seed import resolve_seed
    from .cmd_fit import fit_model

    check_family_flags(args)
    check_level(args.level, "--level")
    boot_flags = [flag for flag, v in (("--nsim", args.nsim), ("--seed", args.seed), ("--jobs", args.jobs))
                  if v is not None]
    if boot_flags and args.method != "boot":
        raise InputError(f"{', '.join(boot_flags)} set the bootstrap; --method {args.method} does not resample. "
                         "Drop them, or give --method boot.")
    if args.nsim is not None:
        check_count(args.nsim, "--nsim")
    if args.jobs is not None:
        check_jobs(args.jobs, "--jobs")
    data = read_table(args.data)
    seed = resolve_seed(args.seed) if args.method == "boot" else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = fit_model(args.formula, data, args, reml=True)
        boot = {"n_resamples": args.nsim or 500, "random_state": seed, "n_jobs": args.jobs or 1} \
            if args.method == "boot" else {}
        result = confint(fit, method=args.method, level=args.level, progress=None if not args.json else False, **boot)
    out = result.to_dict()
    out["warnings"] = warning_texts(caught)
    if seed is not None:
        out["seed"] = seed
    if args.json:
        print_json(out)
        return 0
    print_warnings(caught)
    print(result.summary())
    if seed is not None:
        print(f"seed: {seed}")
    return 0
