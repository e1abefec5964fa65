"""Parsing flag values, each error naming the flag and showing the expected form."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from ..errors import InputError

__all__ = ["facet_pairs", "facet_sizes", "facet_ranges", "number_list", "check_level", "check_count", "check_finite",
           "check_jobs", "check_family_flags", "add_family_arguments", "check_output_file"]

#: ``--family``'s help: some of the registry's families (the registry, checked when a command runs, is the list).
FAMILY_HELP = ("response distribution, a family of mixeval's registry: gaussian (lmer, the default); binomial (0/1 "
               "scores, or proportions with --weights trials), poisson (counts), negative_binomial (overdispersed "
               "counts), beta (proportions strictly inside (0, 1)), ordered_beta (proportions with exact 0s and 1s), "
               "beta_binomial (k of --weights n trials, e.g. pass@k), fitted by glmer's Laplace approximation as "
               "glmmTMB; ordinal (1-5 / 1-7 ratings: clmm). An unknown NAME lists every family")


def facet_pairs(items: list[str] | None, flag: str, example: str) -> dict[str, str]:
    """``["rater=2", "occasion=3"] -> {"rater": "2", "occasion": "3"}``."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise InputError(f"{flag} must look like FACET=VALUE (e.g. {example}); got {item!r}.")
        out[key] = value
    return out


def facet_sizes(items: list[str] | None, flag: str = "--n") -> dict[str, float]:
    """``--n rater=2 occasion=3``: positive facet sample sizes."""
    out = {}
    for key, value in facet_pairs(items, flag, "rater=2").items():
        try:
            size = float(value)
        except ValueError:
            raise InputError(f"{flag} {key}={value}: the size must be a number (e.g. {key}=2).") from None
        if not size > 0:
            raise InputError(f"{flag} {key}={value}: the size must be positive.")
        out[key] = size
    return out


def facet_ranges(items: list[str] | None, flag: str = "--grid") -> dict[str, range]:
    """``--grid rater=1:12 occasion=5``: ``LO:HI`` (inclusive) or ``HI`` (meaning ``1:HI``) per facet."""
    out = {}
    for key, value in facet_pairs(items, flag, "rater=1:12").items():
        lo, sep, hi = value.partition(":")
        try:
            bounds = (int(lo), int(hi)) if sep else (1, int(lo))
        except ValueError:
            raise InputError(f"{flag} {key}={value}: give whole numbers LO:HI (e.g. {key}=1:12) or HI.") from None
        if not 1 <= bounds[0] <= bounds[1]:
            raise InputError(f"{flag} {key}={value}: need 1 <= LO <= HI (e.g. {key}=1:12).")
        out[key] = range(bounds[0], bounds[1] + 1)
    return out


def number_list(text: str, flag: str) -> list[float]:
    """``"15,55" -> [15.0, 55.0]``."""
    try:
        values = [float(c) for c in text.split(",")]
    except ValueError:
        raise InputError(f"{flag} must be comma-separated numbers (e.g. {flag} 15,55); got {text!r}.") from None
    if not all(math.isfinite(v) for v in values):
        raise InputError(f"{flag} must be finite numbers (e.g. {flag} 15,55); got {text!r}.")
    return values


def check_level(value: float, flag: str, *, zero_means: str | None = None) -> float:
    """A flag that is a probability strictly between 0 and 1 (a confidence level, alpha, a target), checked by
    :func:`mixeval._validation.require_level` (imported when a command runs: ``--help`` stays light).

    ``zero_means``: 0 is also accepted and means this (e.g. ``"no interval"``).

    Examples
    --------
    >>> check_level(0.9, "--level")
    0.9
    >>> check_level(2.0, "--alpha")
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: --alpha must lie strictly between 0 and 1 (e.g. --alpha 0.05); got 2.0.
    """
    from .._validation import require_level

    return require_level(value, flag, zero_means=zero_means)


def check_count(value: int, flag: str, minimum: int = 1) -> int:
    """A flag that counts something (resamples, simulations): a whole number >= ``minimum``, checked by
    :func:`mixeval._validation.require_positive_int`.

    Examples
    --------
    >>> check_count(0, "--nsim")
    Traceback (most recent call last):
    ...
    mixeval.errors.InputError: --nsim must be a whole number >= 1; got 0.
    """
    from .._validation import require_positive_int

    return require_positive_int(value, flag, minimum)


def check_finite(value: float | None, flag: str) -> float | None:
    """A number flag that must be finite (``nan`` and ``inf`` parse as floats)."""
    if value is not None and not math.isfinite(value):
        raise InputError(f"{flag} must be a finite number; got {value}.")
    return value


def check_jobs(value: int, flag: str = "--jobs") -> int:
    """Worker processes: a positive number, or -1 for all cores."""
    if value == 0 or value < -1:
        raise InputError(f"{flag} must be a positive number of worker processes, or -1 for all cores; got {value}.")
    return value


def add_family_arguments(p: argparse.ArgumentParser, *, nagq: bool = False, random_thresholds: bool = False) -> None:
    """``--family``, ``--link``, ``--weights`` (and ``--nagq``, ``--random-thresholds``): the model family of every
    fitting command, any family of the registry (:mod:`mixeval.mixed.families`), checked by
    :func:`check_family_flags` when the command runs (the registry imports numpy: ``--help`` does not)."""
    p.add_argument("--family", default="gaussian", metavar="NAME", help=FAMILY_HELP)
    p.add_argument("--link", default=None, help="link of a binomial, beta, beta_binomial or ordinal (logit, probit) or "
                                                "poisson, negative_binomial (log) model")
    p.add_argument("--weights", default=None, help="column of prior weights: trials per row of a binomial or "
                                                   "beta_binomial proportion; precision weights of a Gaussian score "
                                                   "(Var(y_i) = sigma^2 / w_i, as lme4's); glmmTMB's weights of the "
                                                   "other families")
    if nagq:
        p.add_argument("--nagq", type=int, default=1,
                       help="glmer's and clmm's nAGQ: 1 Laplace, >1 adaptive Gauss-Hermite (one scalar term)")
    if random_thresholds:
        p.add_argument("--random-thresholds", default=None, metavar="FACTOR",
                       help="with --family ordinal: each level of FACTOR (which has (1|FACTOR) in the formula) also "
                            "spreads its thresholds at random (raters who use the scale differently)")


def check_family_flags(args):
    """The :class:`~mixeval.mixed.Family` that ``--family`` and ``--link`` name (from the registry), with the flags
    that do not apply to it refused: ``--link`` and ``--nagq`` describe a GLMM or CLMM (refused for a Gaussian
    model), ``--random-thresholds`` an ordinal model, ``--weights`` a family that has them."""
    from ..mixed.families import get_family

    name = getattr(args, "family", "gaussian")
    if str(name).lower() == "gaussian":
        if getattr(args, "link", None) not in (None, "identity"):
            raise InputError(f"--link {args.link} needs --family binomial, poisson or ordinal (or another family of "
                             "`mixeval fit --help`; a Gaussian model is fitted with the identity link); add --family, "
                             "or drop --link.")
        if getattr(args, "nagq", 1) != 1:
            raise InputError(f"--nagq {args.nagq} needs --family binomial, poisson or ordinal (or another family of "
                             "`mixeval fit --help`; a Gaussian model has no quadrature); add --family, or drop --nagq.")
    family = get_family(name, getattr(args, "link", None))
    if getattr(args, "random_thresholds", None) is not None and family.engine != "clmm":
        raise InputError(f"--random-thresholds {args.random_thresholds} needs --family ordinal (thresholds belong to "
                         "rating scales); add --family ordinal, or drop --random-thresholds.")
    if getattr(args, "weights", None) is not None and family.support.weights == "none":
        raise InputError(f"--weights is not available with --family {family.name} (one row per observation; repeat "
                         "the rows instead).")
    return family


def check_output_file(out: str, flag: str = "--out") -> Path:
    """A file to write, checked before any fit: its folder must exist and it must not be a folder itself."""
    path = Path(out)
    if path.is_dir():
        raise InputError(f"{flag} {out} is a folder; give the HTML file to write, e.g. {flag} {path / 'report.html'}.")
    if not path.parent.is_dir():
        raise InputError(f"{flag} {out}: the folder {str(path.parent)!r} does not exist; create it or write elsewhere.")
    return path
