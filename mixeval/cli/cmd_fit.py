"""``mixeval fit DATA.csv "FORMULA" [--ml] [--family NAME] [--json]`` and ``mixeval compare DATA.csv FULL NULL [--json]``.

``--family`` takes every family of the registry (:mod:`mixeval.mixed.families`, checked when the command runs, so
that ``--help`` imports no numeric module); each fit goes through :func:`mixeval.fit`, the one door behind lmer,
glmer and clmm.
"""

from __future__ import annotations

import argparse
import warnings

from . import print_json
from ._args import add_family_arguments, check_family_flags
from ._io import read_table
from ._warnings import print_warnings, warning_texts


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fit", help="fit a linear mixed model (lme4 formula syntax)",
                       description='Fit e.g. "score ~ system + (1|item) + (1|rater)" by REML (default) or ML; '
                                   "--family fits a GLMM (negative binomial, beta, ordered beta, beta-binomial as "
                                   "glmmTMB) or an ordinal model.")
    p.add_argument("data", help="CSV (or .csv.gz / .parquet) in long format")
    p.add_argument("formula", help='lme4-style formula, e.g. "score ~ system + (1|item)"')
    p.add_argument("--ml", action="store_true", help="maximum likelihood instead of REML")
    p.add_argument("--json", action="store_true", help="print one JSON object (with 'dispersion' in glmmTMB's "
                                                       "sigma() parameterisation)")
    add_family_arguments(p, nagq=True, random_thresholds=True)
    p.set_defaults(handler=_fit)

    c = sub.add_parser("compare", help="likelihood-ratio test of two nested models (refit by ML, as lme4's anova)")
    c.add_argument("data", help="CSV (or .csv.gz / .parquet) in long format")
    c.add_argument("full", help="the larger model's formula")
    c.add_argument("null", help="the nested (smaller) model's formula")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    add_family_arguments(c, nagq=True)
    c.set_defaults(handler=_compare)


def fit_model(formula: str, data, args: argparse.Namespace, *, reml: bool):
    """The family's fit through :func:`mixeval.fit` (the family named by ``--family``, from the registry); every flag
    is used or refused (``--nagq`` by lmer, ``--weights`` by a family without them: :func:`check_family_flags`).
    ``reml`` applies to a Gaussian model (GLMMs are fitted by maximum likelihood, as glmer and glmmTMB)."""
    from .._lmer import fit

    family = check_family_flags(args)
    options = {}
    if getattr(args, "random_thresholds", None) is not None:
        options["random_thresholds"] = args.random_thresholds
    return fit(formula, data, family=family, REML=reml if family.engine == "lmer" else None,
               nAGQ=getattr(args, "nagq", 1), weights=getattr(args, "weights", None), **options)


def _fit(args: argparse.Namespace) -> int:
    check_family_flags(args)
    data = read_table(args.data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = fit_model(args.formula, data, args, reml=not args.ml)
    if args.json:
        out = fit.to_dict()
        out["warnings"] = warning_texts(caught)
        print_json(out)
    else:
        print_warnings(caught)
        print(fit.summary())
    return 0


def _compare(args: argparse.Namespace) -> int:
    from ..mixed import compare

    check_family_flags(args)
    data = read_table(args.data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compare(fit_model(args.full, data, args, reml=False), fit_model(args.null, data, args, reml=False))
    if args.json:
        print_json({"statistic": res.statistic, "df": res.df, "pvalue": res.pvalue,
                    "formula_full": res.details["formula_full"], "formula_null": res.details["formula_null"],
                    "loglik_full": res.details["loglik_full"], "loglik_null": res.details["loglik_null"]})
    else:
        # compare() orders the two fits by their number of parameters: label them by its order, not the flags'
        print(f"Likelihood-ratio test (ML fits)\n  full: {res.details['formula_full']}\n  null: {res.details['formula_null']}\n"
              f"  Chisq = {res.statistic:.6g}, Df = {res.df:g}, Pr(>Chisq) = {res.pvalue:.6g}")
    return 0
