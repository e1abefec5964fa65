"""``mixeval reliability`` and ``mixeval significance``: a Study on a user's CSV, for scripted studies."""

from __future__ import annotations

import argparse
import math
import warnings
from typing import TYPE_CHECKING

from ..errors import InputError
from . import print_json
from ._args import (
    add_family_arguments,
    check_count,
    check_family_flags,
    check_level,
    facet_ranges,
    facet_sizes,
    number_list,
)
from ._io import read_table
from ._warnings import print_warnings, warning_texts

if TYPE_CHECKING:
    from ..study import Study


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("reliability", help="variance components, phi and a D-study for your CSV",
                       description="Variance components (REML), reliability phi (Definition 3.2) and its relative "
                                   "version, a D-study over facet sizes and the cheapest design reaching --target.")
    r.add_argument("data", help="CSV (or .csv.gz / .parquet) in long format, one row per score")
    r.add_argument("formula", help='e.g. "score ~ (1|item) + (1|rater) + (1|rater:item)"')
    r.add_argument("--item", help="the objects of measurement (default: the random factor with most levels)")
    r.add_argument("--n", nargs="*", metavar="FACET=K", help="facet sample sizes for phi, e.g. rater=2 occasion=3")
    r.add_argument("--grid", nargs="*", metavar="FACET=LO:HI", help="D-study grid, e.g. rater=1:12 occasion=1:5")
    r.add_argument("--target", type=float, default=0.8, help="target phi for the cheapest design (default 0.8)")
    r.add_argument("--kind", choices=["absolute", "relative"], default="absolute",
                   help="absolute phi (every facet is error, default) or the relative coefficient (interactions with the item only)")
    r.add_argument("--ci", action="store_true", help="parametric-bootstrap intervals for phi and every D-study cell")
    r.add_argument("--level", type=float, default=None, help="confidence level of --ci (default 0.95)")
    r.add_argument("--confidence", type=float, help="cheapest design on the lower confidence bound at this level "
                                                    "(e.g. 0.9; implies --ci)")
    r.add_argument("--nsim", type=int, default=None, help="bootstrap refits for --ci or --confidence (default 1000)")
    r.add_argument("--seed", type=int, default=None, help="random seed of --ci or --confidence (default: fresh, "
                                                          "printed)")
    r.add_argument("--scale", choices=["observed", "latent"], default=None,
                   help="with a --family other than gaussian: phi of the mean observed score (observed, the default) "
                        "or of the latent propensity on the link scale (latent); both are printed, this one is used "
                        "for --ci, the D-study and the cheapest design")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    _family_arguments(r)
    r.set_defaults(handler=_reliability)

    s = sub.add_parser("significance", help="GLRT of the system effect and pairwise comparisons for your CSV",
                       description="GLRT of the system effect (ML fits) and all pairwise contrasts of estimated "
                                   "marginal means, optionally conditional on a data property: classes of it "
                                   "(Table 4.3), or, for a numeric property without --cuts, the slope of each "
                                   "system and the pairwise slope contrasts.")
    s.add_argument("data", help="CSV (or .csv.gz / .parquet) in long format, one row per score")
    s.add_argument("formula", help='e.g. "ter ~ system + (1|sentence_id)"')
    s.add_argument("--system", help="the compared factor (default: first categorical fixed effect)")
    s.add_argument("--adjust", default=None,
                   choices=["tukey", "holm", "bonferroni", "BH", "none", "dunnettx", "mvt", "sidak"],
                   help="multiplicity adjustment (default: tukey for all pairs, as emmeans' pairs; dunnettx with "
                        "--control, as emmeans' trt.vs.ctrl; mvt: exact simultaneous)")
    s.add_argument("--control", metavar="LEVEL",
                   help="compare every system with LEVEL (a baseline: emmeans' trt.vs.ctrl, Dunnett's adjustment) "
                        "instead of all pairs; link scale with --family")
    s.add_argument("--df", default=None,
                   choices=["asymptotic", "satterthwaite", "kenward-roger", "satterthwaite-upper"],
                   help="degrees of freedom of the contrasts (default: emmeans' rule, Kenward-Roger for Gaussian "
                        "models of up to 3,000 rows, else Satterthwaite or z, and z with --family; warns when a "
                        "component from few levels may dominate): asymptotic z (the book's), lmerTest's "
                        "Satterthwaite (the linearised model's with --family), pbkrtest's Kenward-Roger or, "
                        "experimental, Satterthwaite with the variance components at their upper bounds "
                        "(balanced crossed designs only)")
    s.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals (default 0.95)")
    margin = s.add_mutually_exclusive_group()
    margin.add_argument("--equivalence", type=float, default=None, metavar="DELTA",
                        help="test every contrast for equivalence within +-DELTA (two one-sided tests, emmeans' "
                             "test(pairs, delta, side = 'equivalence')), on the contrasts' scale: the score's units, "
                             "or with --family the --scale given (needed)")
    margin.add_argument("--noninferiority", type=float, default=None, metavar="DELTA",
                        help="test that the first system of each contrast (each system with --control) is not worse "
                             "than the second by DELTA or more (emmeans' side '>'; '<' with --lower-is-better)")
    s.add_argument("--lower-is-better", action="store_true",
                   help="with --noninferiority: the score is an error, so 'worse' is larger (H0: difference >= DELTA)")
    s.add_argument("--by", help="a data property to condition on (Table 4.3); numeric without --cuts: slopes")
    s.add_argument("--cuts", help="cut points to bin a numeric --by property, e.g. 15,55")
    s.add_argument("--labels", help="class labels for the bins, e.g. short,typical,'very long'")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    _family_arguments(s)
    s.add_argument("--scale", choices=[*_GLMM_SCALES, *_ORDINAL_SCALES], default=None,
                   help="with a GLMM --family: pairwise ratios on the family's ratio scale (default: odds ratios for a "
                        "logit link, rate ratios for a log link), differences of the response-scale means (accuracy, "
                        "proportions, rates; the default where the family has no ratio scale, e.g. ordered_beta), or "
                        "the link scale; with --family ordinal: latent (default), prob, cum.prob, exc.prob or "
                        "mean.class (emmeans' ordinal modes)")
    s.set_defaults(handler=_significance)


#: ``--scale`` of the significance command per family.
_GLMM_SCALES = ("ratio", "difference", "link")
_ORDINAL_SCALES = ("latent", "prob", "cum.prob", "exc.prob", "mean.class")


def _family_arguments(p: argparse.ArgumentParser) -> None:
    add_family_arguments(p)
    p.add_argument("--levels", default=None, metavar="A,B,...",
                   help="with --family ordinal: the rating categories in increasing order, for ratings that are not "
                        "numbers (e.g. bad,ok,good)")
    p.add_argument("--reml", action=argparse.BooleanOptionalAction, default=None,
                   help="fit criterion: REML (default for Gaussian models, lme4's lmer) or ML (--no-reml); with "
                        "--family the Laplace ML fit is the default (lme4's glmer), --reml the restricted Laplace "
                        "(glmmTMB's REML = TRUE)")


def _family_kwargs(args: argparse.Namespace) -> dict:
    """Study's ``family``, ``weights``, ``reml`` (and ``levels``) from the flags, the family from the registry."""
    family = check_family_flags(args)
    if args.levels is not None and family.engine != "clmm":
        raise InputError(f"--levels {args.levels} orders the categories of ordinal ratings; add --family ordinal, or "
                         "drop --levels.")
    extra = {"levels": [v.strip() for v in args.levels.split(",")]} if args.levels is not None else {}
    return {"family": family, "weights": args.weights, "reml": args.reml, **extra}


def _check_resampling_flags(args: argparse.Namespace) -> None:
    """``--nsim``, ``--seed`` (bootstrap draws: --ci or --confidence) and ``--level`` (intervals: --ci, or the
    D-study's with --confidence and --grid) are refused where nothing uses them."""
    draws = args.ci or args.confidence is not None
    unused = [flag for flag, value in (("--nsim", args.nsim), ("--seed", args.seed)) if value is not None and not draws]
    if args.level is not None and not (args.ci or (args.confidence is not None and args.grid)):
        unused.append("--level")
    if unused:
        raise InputError(f"{' and '.join(unused)} set{'s' if len(unused) == 1 else ''} the bootstrap intervals, "
                         "which this command computes only with --ci (or the cheapest design's bound with "
                         "--confidence); add --ci, or drop " + ", ".join(unused) + ".")


def _design_text(n: dict) -> str:
    return ", ".join(f"{k} = {v:g}" for k, v in n.items()) if n else "one level of each facet"


def _reliability(args: argparse.Namespace) -> int:
    import pandas as pd

    from .._format import terminal_width, text_table
    from ..reliability import resolve_scale as reliability_scale
    from ..study import Study

    family = check_family_flags(args)
    check_level(args.target, "--target")
    _check_resampling_flags(args)
    level = 0.95 if args.level is None else args.level
    nsim = 1000 if args.nsim is None else args.nsim
    check_level(level, "--level")
    check_count(nsim, "--nsim")
    if args.confidence is not None:
        check_level(args.confidence, "--confidence")
    if args.scale is not None and family.engine == "lmer":
        raise InputError(f"--scale {args.scale}: a Gaussian model's observed and latent scales coincide (identity "
                         "link); drop --scale, or add --family (binomial, poisson, beta, ordinal, ...).")
    n = facet_sizes(args.n, "--n")
    grid = facet_ranges(args.grid, "--grid") if args.grid else None
    data = read_table(args.data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study = Study(data, args.formula, item=args.item, **_family_kwargs(args))
        table = study.variance_components()
    scale = reliability_scale(study.fit, args.scale)
    other = "latent" if scale == "observed" else "observed"
    scales = [scale] + ([other] if study.family.engine != "lmer" and study.family.support.allows(other) else [])
    own = study.data_design() if study.data is not None else {}
    coefficients = [{"design": label, "n": sizes, "scale": sc, "phi": study.phi(sizes, scale=sc),
                     "phi_relative": study.phi(sizes, kind="relative", scale=sc)}
                    for label, sizes in (("data", own), ("given" if n else "one of each facet", n))
                    for sc in scales]
    out: dict = {
        "item": study.item,
        "rows": table.to_dict(orient="records"),
        "phi": study.phi(n, scale=scale),
        "phi_relative": study.phi(n, kind="relative", scale=scale),
        "n": n,
        "phi_scale": scale,
        "data_design": own,
        "coefficients": coefficients,
        "warnings": warning_texts(caught),
    }
    if "note" in table.attrs:
        out["scale"] = table.attrs["note"]
    draws = None
    if args.ci or args.confidence is not None:
        from ..uncertainty import component_draws, phi_interval
        from ._seed import resolve_seed

        out["seed"] = resolve_seed(args.seed)
        draws = component_draws(study.fit, n_resamples=nsim, random_state=out["seed"], progress=not args.json)
        for key, kind in (("phi_ci", "absolute"), ("phi_relative_ci", "relative")):
            ci = phi_interval(study.fit, study.item, n, kind=kind, level=level, draws=draws, scale=scale)
            out[key] = [ci.lower, ci.upper]
        out["level"] = level
    if grid:
        dtable = (study.dstudy_intervals(grid, level=level, draws=draws, target=args.target, scale=scale)
                  if draws is not None else study.dstudy(grid, scale=scale))
        out["dstudy"] = dtable.to_dict(orient="records")
        choice = study.cheapest_design(args.target, max_n={k: v.stop - 1 for k, v in grid.items()}, kind=args.kind,
                                       confidence=args.confidence, draws=draws, scale=scale)
        out["design"] = {"n": choice.n, "phi": choice.phi, "cost": choice.cost, "target": args.target,
                         "kind": args.kind, "scale": scale}
        if args.confidence is not None:
            out["design"].update(confidence=args.confidence, phi_lower=choice.phi_lower, p_reach=choice.p_reach)
    if args.json:
        print_json(out)
        return 0
    print_warnings(caught)
    print(study.summary())
    print()
    for row in coefficients:
        where = {"data": "the data's design", "given": "the given design"}.get(row["design"])
        at = f"{where}: {_design_text(row['n'])}" if where and row["n"] else "one level of each facet"
        print(f"phi = {row['phi']:.4f} (absolute), {row['phi_relative']:.4f} (relative) on the {row['scale']} scale "
              f"at {at}")
    if study.family.engine != "lmer":
        from ..reliability import scale_note

        print("; ".join(f"{sc}: {scale_note(study.fit, sc)}" for sc in scales))
    if "phi_ci" in out:
        print(f"{100 * level:g}% intervals at {_design_text(n)}, {scale} scale (parametric bootstrap, {nsim} refits, "
              f"seed {out['seed']}): phi [{out['phi_ci'][0]:.4f}, {out['phi_ci'][1]:.4f}], relative "
              f"[{out['phi_relative_ci'][0]:.4f}, {out['phi_relative_ci'][1]:.4f}]")
    if args.grid:
        print(f"\nD-study ({scale} scale):")
        print(text_table(pd.DataFrame(out["dstudy"]), width=terminal_width()))
        print("\n" + choice.summary())
    return 0


def _check_scale(args: argparse.Namespace, family) -> None:
    """``--scale`` names a scale of the model's family: refused for a Gaussian model (one scale), across engines and,
    for ``ratio``, for a family without a ratio scale (:attr:`~mixeval.mixed.families.Family.ratio_name`)."""
    if args.scale is None:
        return
    if family.engine == "lmer":
        raise InputError(f"--scale {args.scale} needs --family binomial, poisson or ordinal (or another family of the "
                         "registry): a Gaussian model's contrasts are differences of mean scores (one scale); drop "
                         "--scale.")
    allowed = _ORDINAL_SCALES if family.engine == "clmm" else _GLMM_SCALES
    if family.engine == "glmer" and family.ratio_name is None:
        allowed = tuple(a for a in allowed if a != "ratio")
    if args.scale not in allowed:
        raise InputError(f"--scale {args.scale} is not a scale of --family {family.name}"
                         f"{'' if family.link == family.links[0] else ' --link ' + family.link}; use one of "
                         f"{', '.join(allowed)}.")


def _margin_arguments(args: argparse.Namespace) -> dict:
    """``delta``/``side`` of ``--equivalence``/``--noninferiority`` (with ``--lower-is-better``), or ``{}``.

    With ``--family`` the margin's scale must be named by ``--scale`` for all-pairs contrasts (0.02 is two accuracy
    points with ``--scale difference`` and a log odds ratio otherwise); ``--control`` contrasts are on the link scale
    only, and so is their margin."""
    if args.lower_is_better and args.noninferiority is None:
        raise InputError("--lower-is-better sets the direction of --noninferiority (an equivalence test is two-sided); "
                         "add --noninferiority DELTA, or drop --lower-is-better.")
    if args.equivalence is None and args.noninferiority is None:
        return {}
    flag = "--equivalence" if args.equivalence is not None else "--noninferiority"
    delta = args.equivalence if args.equivalence is not None else args.noninferiority
    if not (delta > 0 and math.isfinite(delta)):
        raise InputError(f"{flag} {delta:g}: the margin must be a positive number on the contrasts' scale (e.g. "
                         f"{flag} 0.02 for two points of accuracy with --scale difference).")
    if args.family != "gaussian" and args.scale is None and args.control is None and not args.by:
        _refuse_unscaled_margin(args, flag, delta)
    side = "equivalence" if args.equivalence is not None else ("<" if args.lower_is_better else ">")
    return {"delta": delta, "side": side}


def _refuse_unscaled_margin(args: argparse.Namespace, flag: str, delta: float) -> None:
    raise InputError(f"{flag} {delta:g} with --family {args.family}: name the scale of the margin with --scale ("
                     + ("latent, or a probability mode: prob, cum.prob, exc.prob, mean.class"
                        if args.family == "ordinal" else
                        "difference: accuracy points or counts; ratio or link: a log odds or log rate ratio")
                     + ").")


def _check_by(study: Study, by: str) -> None:
    """``--by`` must be a property that varies and is not one of the model's factors."""
    from ..study import check_property

    check_property(study, by, f"--by {by}")


def _significance(args: argparse.Namespace) -> int:
    from .._format import format_number, format_pvalue, terminal_width, text_table
    from ..study import Study

    family = check_family_flags(args)
    check_level(args.level, "--level")
    cuts = number_list(args.cuts, "--cuts") if args.cuts else None
    if cuts is not None and not args.by:
        raise InputError("--cuts bins the property named by --by; give --by too (e.g. --by src_length --cuts 15,55).")
    if args.labels is not None and cuts is None:
        raise InputError(f"--labels {args.labels} names the classes --cuts makes; give --cuts too (e.g. --by src_length "
                         "--cuts 15,55 --labels short,typical,long), or drop --labels.")
    _check_scale(args, family)
    labels = args.labels.split(",") if args.labels else None
    if args.control is not None:
        if args.by:
            raise InputError("--control compares every system with a baseline over the whole data; drop --by, or "
                             "drop --control for pairwise comparisons within classes of --by.")
        if args.scale is not None:
            raise InputError("--control contrasts are on the link scale (log odds / log rate differences); drop "
                             "--scale.")
        if not family.support.allows("contrast"):
            raise InputError(f"--control needs a family with contrasts (--family {family.name} has none: "
                             f"{dict(family.support.reasons).get('contrast', 'see Study.contrast')}); drop --control.")
    elif args.adjust in ("dunnettx", "mvt", "sidak"):
        raise InputError(f"--adjust {args.adjust} is for --control contrasts; all pairwise contrasts take tukey, "
                         "holm, bonferroni, BH or none.")
    adjust = args.adjust or ("dunnettx" if args.control is not None else "tukey")
    margin = _margin_arguments(args)
    data = read_table(args.data)
    extra = {"scale": args.scale} if family.engine != "lmer" else {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study = Study(data, args.formula, system=args.system, **_family_kwargs(args))
        if args.by:
            _check_by(study, args.by)
            glrt, pairs, cond = study.conditional(args.by, cuts, labels, adjust=adjust, df=args.df, level=args.level,
                                                  **(margin if not extra else {}))
            if pairs.trend is not None and args.scale is not None:
                raise InputError(f"--scale compares means; with a numeric --by {args.by} (no --cuts) the slopes are "
                                 "compared on the link scale (log odds per unit): drop --scale, or give --cuts.")
            if extra and pairs.trend is None:  # classes: the family's scale; a numeric property: link-scale slopes
                if margin and args.scale is None:
                    _refuse_unscaled_margin(args, "--equivalence" if args.equivalence is not None
                                            else "--noninferiority", margin["delta"])
                pairs = cond.pairwise(study.system, by=args.by if cuts is None else f"{args.by}_class",
                                      adjust=adjust, df=args.df, level=args.level, **extra, **margin)
            elif extra and margin:  # link-scale slope contrasts of a GLMM, tested against the margin
                from ..significance import margin_tests

                pairs = margin_tests(pairs, **margin)
        elif args.control is not None:
            glrt, pairs = study.glrt(), study.contrast("trt.vs.ctrl", ref=args.control, adjust=adjust,
                                                       df=args.df, level=args.level, **margin)
        else:
            glrt, pairs = study.glrt(), study.pairwise(adjust=adjust, df=args.df, level=args.level, **extra,
                                                       **margin)
    table = pairs.table
    messages = warning_texts(caught)
    if args.json:
        out = {"glrt": {"statistic": glrt.statistic, "df": glrt.df, "pvalue": glrt.pvalue},
               "rows": table.rename(columns=str.lower).to_dict(orient="records"), "adjust": adjust,
               "df_method": pairs.df_method, "fit_criterion": pairs.fit_criterion, "level": pairs.level,
               "sigma": pairs.sigma, "warnings": messages}
        if margin:
            out.update(null_hypothesis=pairs.null_hypothesis, side=pairs.side, delta=pairs.delta,
                       adjust=pairs.adjust)
        if pairs.trend is not None:
            out["trend"] = pairs.trend
            out["slopes"] = pairs.emmeans.to_dict(orient="records")
        print_json(out)
        return 0
    print_warnings(caught)
    what = f"the {study.system} x {pairs.trend} interaction" if pairs.trend else repr(study.system)
    print(f"GLRT of {what}: Chisq = {format_number(glrt.statistic)}, Df = {glrt.df:g}, "
          f"p {format_pvalue(glrt.pvalue, relation=True)}")
    if pairs.trend is not None:
        print(f"\nSlope of each {study.system} in {pairs.trend} (df: {pairs.df_method}):")
        print(text_table(pairs.emmeans, width=terminal_width()))
        print(f"\nPairwise slope contrasts ({adjust} adjustment, df: {pairs.df_method}):")
    else:
        what = f"Contrasts with {args.control}" if args.control is not None else "Pairwise contrasts"
        print(f"\n{what} ({adjust} adjustment, df: {pairs.df_method}, fit: {pairs.fit_criterion}):")
    print(text_table(table, width=terminal_width()))
    if margin:
        print(f"\nTests: {pairs.null_hypothesis}; p-values adjusted by {pairs.adjust}"
              + (f" ({pairs.test_note})" if pairs.test_note else ""))
    if pairs.effect_size_note is not None:
        print(f"\n{pairs.effect_size_note}")
    return 0
