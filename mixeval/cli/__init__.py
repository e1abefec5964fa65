"""Command line: ``mixeval COMMAND ...`` (also ``python -m mixeval``).

Each sub-command lives in its own module ``mixeval/cli/cmd_<name>.py`` that
defines ``register(subparsers) -> None``. A command's handler returns the process
exit code. Errors of the user's input (the project's :class:`mixeval.errors.MixevalError`,
also for unreadable files and bad flag values) end the command with a one-line message and
exit code 2; any other exception is a bug and propagates with its traceback.

Start-up is kept short (every scripted call pays it): :data:`COMMANDS` lists each
command's module and one-line help, so ``mixeval --help`` imports no command module
and ``mixeval fit ...`` imports only ``cmd_fit`` (and what its handler needs). A new
``cmd_*`` module must add its commands to :data:`COMMANDS`; a test checks that the
listing matches what the modules register. ``mixeval --help`` lists the commands by task
(:data:`COMMAND_GROUPS`), and each command's ``--help`` ends with examples (:data:`EXAMPLES`).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import warnings
from collections.abc import Sequence

from ..errors import MixevalError, plain_message

__all__ = ["main", "build_parser", "print_json", "COMMANDS", "command_modules"]


def __getattr__(name: str):
    # ``print_json`` lives in ``_io`` (which imports pandas): imported when a command first uses it
    if name == "print_json":
        from ._io import print_json

        return print_json
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: command name -> (module in this package that registers it, one-line help shown by ``mixeval --help``)
COMMANDS: dict[str, tuple[str, str]] = {
    "agreement": ("cmd_agreement", "Krippendorff's alpha, Cohen's kappa, Scott's pi (book Section 3.3.1)"),
    "bootstrap": ("cmd_bootstrap", "paired bootstrap test of mean score differences (book Algorithm 4.1)"),
    "circularity": ("cmd_circularity", "GAM circularity test: are the labels a reconstruction of a rule over a few features?"),
    "fit": ("cmd_fit", "fit a linear mixed model (lme4 formula syntax)"),
    "compare": ("cmd_fit", "likelihood-ratio test of two nested models (refit by ML, as lme4's anova)"),
    "compare-logs": ("cmd_compare_logs", "paired, cluster-robust comparison of the models in harness logs (lm-eval, inspect_ai, HELM)"),
    "meta": ("cmd_meta", "meta-evaluation of metrics: selective answering (DiSCA), local metric accuracy"),
    "metric-ci": ("cmd_metric_ci", "confidence interval when the metric is a model (Goyal et al. 2023)"),
    "permutation": ("cmd_permutation", "paired approximate randomization test of mean score differences (Algorithm 4.2)"),
    "report": ("cmd_report", "one command from an evaluation log to a full report (text + HTML)"),
    "demo": ("cmd_report", "run the report on the bundled simulated MT evaluation (no network)"),
    "reproduce": ("cmd_reproduce", "recompute a table of the book or a paper"),
    "reliability": ("cmd_study", "variance components, phi and a D-study for your CSV"),
    "significance": ("cmd_study", "GLRT of the system effect and pairwise comparisons for your CSV"),
    "confint": ("cmd_confint", "confidence intervals of a mixed model's sd's, sigma and fixed effects "
                             "(thresholds of an ordinal model)"),
    "power": ("cmd_power", "power of a system comparison for more items, raters or seeds (simulation)"),
    "preferences": ("cmd_preferences", "Bradley-Terry leaderboard of pairwise judgments (ties, position bias, judge and prompt effects)"),
}


#: the commands by task, as ``mixeval --help`` lists them (every command of :data:`COMMANDS` once)
COMMAND_GROUPS: dict[str, tuple[str, ...]] = {
    "fitting": ("fit", "compare", "confint"),
    "reliability": ("reliability", "agreement"),
    "significance": ("significance", "power", "compare-logs", "preferences"),
    "resampling": ("bootstrap", "permutation"),
    "validity": ("circularity",),
    "metric models and meta-evaluation": ("metric-ci", "meta"),
    "reports and reproduction": ("report", "demo", "reproduce"),
}

_DEMO = "demo_mt.csv"  # the bundled demo log (mixeval/data/demo_mt.csv): item, system, seed, rater, score
#: examples shown at the end of each command's ``--help`` (tests parse every one)
EXAMPLES: dict[str, tuple[str, ...]] = {
    "fit": (f'mixeval fit {_DEMO} "score ~ system + (1|item) + (1|rater)"',
            f'mixeval fit {_DEMO} "score ~ system + (1|item) + (1|rater)" --ml --json',
            'mixeval fit runs.csv "correct ~ system + (1|item) + (1|seed)" --family binomial'),
    "compare": (f'mixeval compare {_DEMO} "score ~ system + (1|item)" "score ~ 1 + (1|item)"',),
    "confint": (f'mixeval confint {_DEMO} "score ~ system + (1|item) + (1|rater)"',
                f'mixeval confint {_DEMO} "score ~ system + (1|item) + (1|rater)" --method boot --nsim 500 --seed 1'),
    "reliability": (f'mixeval reliability {_DEMO} "score ~ (1|item) + (1|rater) + (1|item:rater)" --n rater=3',
                    f'mixeval reliability {_DEMO} "score ~ (1|item) + (1|rater) + (1|item:rater)" '
                    '--grid rater=1:8 --target 0.8'),
    "agreement": ("mixeval agreement ratings.csv --measurement interval",
                  "mixeval agreement long.csv --unit item --rater rater --value score --measurement ordinal"),
    "significance": (f'mixeval significance {_DEMO} "score ~ system + (1|item) + (1|rater)"',
                     f'mixeval significance {_DEMO} "score ~ system + (1|item) + (1|rater)" --by src_length '
                     '--cuts 15,55 --adjust holm',
                     f'mixeval significance {_DEMO} "score ~ system + (1|item) + (1|rater)" --df kenward-roger',
                     f'mixeval significance {_DEMO} "score ~ system + (1|item) + (1|rater)" --control baseline'),
    "power": (f'mixeval power {_DEMO} "score ~ system + (1|item) + (1|rater)" --n item=100,200 --nsim 200 --seed 1',),
    "bootstrap": ("mixeval bootstrap scores.csv --seed 1",
                  "mixeval bootstrap scores.csv --baseline baseline --ci bca --seed 1"),
    "permutation": ("mixeval permutation scores.csv --seed 1",
                    "mixeval permutation long.csv --item item --system system --score score --seed 1"),
    "circularity": ("mixeval circularity sofa.csv --target label --top 5",
                    "mixeval circularity ir.csv --target relevant --features a,b,c --family binomial --json"),
    "metric-ci": ("mixeval metric-ci --p-control 0.00456 --p-treatment 0.00236 --n 23679 --precision 0.8897 "
                  "--for 0.22769",),
    "meta": ("mixeval meta selective answers.csv --confidence maxprob --correct correct",
             "mixeval meta local pairs.csv --context context --subset system --metric metric --score score "
             "--perturbed perturbed --lower-is-better wer"),
    "report": (f"mixeval report {_DEMO} --score score --system system --item item --facet rater "
               "--facet system:seed --by src_length --cuts 15,55 --out report.html",),
    "demo": ("mixeval demo", "mixeval demo --json --out demo.html"),
    "reproduce": ("mixeval reproduce list", "mixeval reproduce table-4.2 --json"),
    "compare-logs": ("mixeval compare-logs out/ --metric acc --cluster passage --by subject --html report.html",
                     "mixeval compare-logs logs/*.eval --metric match --cluster passage --json --no-mixed"),
    "preferences": ("mixeval preferences votes.csv",
                    "mixeval preferences votes.csv --judge judge --prompt prompt --ties davidson --json",
                    "mixeval preferences votes.csv --judge judge --position random --html leaderboard.html"),
}


def command_listing() -> str:
    """The commands by task with their one-line help (``mixeval --help``; nothing is imported).

    Examples
    --------
    >>> print(command_listing().splitlines()[0])
    fitting:
    """
    width = max(len(name) for name in COMMANDS) + 2
    lines = []
    for group, names in COMMAND_GROUPS.items():
        lines += [""] if lines else []
        lines.append(f"{group}:")
        lines += [f"  {name:<{width}}{COMMANDS[name][1]}" for name in names]
    return "\n".join(lines)


def _epilog(command: str) -> str | None:
    examples = EXAMPLES.get(command)
    return "examples:\n" + "\n".join(f"  {line}" for line in examples) if examples else None


class _HelpFormatter(argparse.HelpFormatter):
    """Wraps paragraphs as argparse does, but keeps indented lines (examples, listings) as they are."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out, paragraph = [], []
        for line in text.splitlines():
            if not line.strip() or line.startswith("  ") or (line.endswith(":") and len(line) < width):
                if paragraph:
                    out.append(super()._fill_text(" ".join(paragraph), width, indent))
                    paragraph = []
                out.append(indent + line)
            else:
                paragraph.append(line)
        if paragraph:
            out.append(super()._fill_text(" ".join(paragraph), width, indent))
        return "\n".join(out)


class _Commands(argparse._SubParsersAction):
    """Sub-commands that take their examples from :data:`EXAMPLES` and are listed by :func:`command_listing`."""

    def add_parser(self, name, **kwargs):
        kwargs.setdefault("epilog", _epilog(name))
        kwargs.setdefault("formatter_class", _HelpFormatter)
        kwargs.pop("help", None)  # listed by task in the top-level epilog instead of argparse's flat list
        return super().add_parser(name, **kwargs)


def command_modules() -> list[str]:
    """Names of the ``cmd_*`` modules of this package (found on disk, nothing imported).

    Examples
    --------
    >>> command_modules()[:3]
    ['cmd_agreement', 'cmd_bootstrap', 'cmd_circularity']
    >>> sorted({module for module, _ in COMMANDS.values()}) == command_modules()  # every module is listed
    True
    """
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("cmd_"))


def _requested_command(argv: Sequence[str]) -> str | None:
    """The sub-command named on the command line (the first argument that is not an option), if any."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser.

    Without ``argv``, every ``cmd_*`` module is imported and registers its sub-commands (the full
    parser). With ``argv`` (what :func:`main` passes), only the module of the command named there is
    imported; the other commands are listed by name and help (:data:`COMMANDS`) without importing them.

    Examples
    --------
    >>> args = build_parser().parse_args(["reproduce", "goyal-table-1"])
    >>> args.command, args.name, args.json
    ('reproduce', 'goyal-table-1', False)
    >>> "reliability" in build_parser(["fit"]).format_help()  # listed, though only cmd_fit was imported
    True
    """
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="mixeval",
        description="Model-based statistics for ML/NLP evaluations (validity, reliability, significance).",
        epilog=command_listing() + "\n\n'mixeval COMMAND --help' shows a command's options and examples.",
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mixeval {__version__}")
    parser.register("action", "parsers", _Commands)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help="one of the commands below")
    sub.required = True
    if argv is None:
        for name in command_modules():
            importlib.import_module(f"{__name__}.{name}").register(sub)
        return parser
    command = _requested_command(argv)
    if command in COMMANDS:
        importlib.import_module(f"{__name__}.{COMMANDS[command][0]}").register(sub)
    for name, (_, help_) in COMMANDS.items():
        if name not in sub.choices:
            sub.add_parser(name, help=help_)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mixeval`` command.

    Examples
    --------
    The exit code is returned (the console script passes it to ``sys.exit``); an error of the input prints one
    line to stderr and returns 2.

    >>> code = main(["reproduce", "goyal-table-1", "--json"])
    {"rows": [{"dataset": "BOLD", "n": 23679, ...}]}
    >>> code
    0
    >>> main(["reproduce", "no-such-table"])  # stderr: mixeval reproduce: error: unknown reproduction ...
    2
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _warning_printer()
        try:
            return int(args.handler(args) or 0)
        except MixevalError as exc:  # bad input (files, flags, data): one line; anything else is a bug
            print(f"mixeval {args.command}: error: {exc}", file=sys.stderr)
            return 2


def _warning_printer():
    """``warnings.showwarning`` for a command: each warning once, as one line ``warning: ...`` on stderr (no
    source line: the user ran a command, not our code). Commands that collect warnings print them themselves."""
    seen: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = plain_message(str(message))
        if text not in seen:
            seen.add(text)
            print(f"warning: {text}", file=sys.stderr)

    return show
