"""``mixeval report DATA.csv --score --system --item [--facet ...]`` and ``mixeval demo``: the whole picture."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError, recorded_warnings
from . import print_json
from ._args import add_family_arguments, check_family_flags, check_output_file, number_list
from ._io import read_table

if TYPE_CHECKING:
    from ..study import Study

DEMO_OUT = "mixeval_demo_report.html"
DEMO_FORMULA = "score ~ system * length_class + (1|item) + (1|system:seed) + (1|rater) + (1|item:rater)"


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("report", help="one command from an evaluation log to a full report (text + HTML)",
                       description="Data summary, variance components, reliability phi with a D-study, the GLRT of "
                                   "the system effect, pairwise comparisons and (with --by) comparisons conditional on "
                                   "a data property; printed as text and written as one self-contained HTML file.")
    r.add_argument("data", help="long-format CSV: one row per (item, system, facet levels...) with a score")
    r.add_argument("--score", required=True, help="the score column")
    r.add_argument("--system", required=True, help="the compared systems (fixed effect)")
    r.add_argument("--item", required=True, help="the test items (objects of measurement)")
    r.add_argument("--facet", action="append", default=[],
                   help="a random facet (repeatable): a column, or an interaction such as system:seed")
    r.add_argument("--by", help="a data property for conditional comparisons (e.g. src_length)")
    r.add_argument("--cuts", help="cut points to bin a numeric --by property, e.g. 15,55")
    r.add_argument("--labels", help="labels of the bins, comma separated")
    r.add_argument("--out", default="report.html", help="HTML file to write (default report.html)")
    r.add_argument("--json", action="store_true", help="print the key numbers as JSON instead of the text summary")
    add_family_arguments(r)
    r.set_defaults(handler=_report)

    d = sub.add_parser("demo", help="run the report on the bundled simulated MT evaluation (no network)",
                       description=f"Report on mixeval's demo data (see data/README.md), model: {DEMO_FORMULA}")
    d.add_argument("--out", default=DEMO_OUT,
                   help="HTML file to write (default mixeval_demo_report.html)")
    d.add_argument("--json", action="store_true", help="print the key numbers as JSON instead of the text summary")
    d.add_argument("--write-data", metavar="DIR",
                   help="write the demo data into DIR (demo_mt.csv and the tables and logs the other commands' "
                        "examples read) and stop; '.' for the current folder")
    d.set_defaults(handler=_demo)


def _emit(study: Study, args: argparse.Namespace, by: str | None, cuts, labels, truth=None, data: str = "",
          warned: tuple[str, ...] = ()) -> int:
    from ..report import build_report

    meta = {"data": data, "command": getattr(args, "command_line", "")}
    report = build_report(study, conditional_on=by, cuts=cuts, labels=labels, truth=truth,  # warnings: once each
                          meta={k: v for k, v in meta.items() if v}).with_warnings(warned)
    path = report.save(args.out)
    if args.json:
        vc = study.variance_components()
        glrt = study.glrt()
        from ..reliability import resolve_scale

        own = study.data_design()
        out = {"html": str(path), "phi": study.phi(), "phi_design": "one level of each facet",
               "phi_scale": resolve_scale(study.fit, None), "data_design": own, "phi_data_design": study.phi(own),
               "variance_components": vc.to_dict(orient="records"),
               "glrt": {"statistic": glrt.statistic, "df": glrt.df, "pvalue": glrt.pvalue}}
        if study.family.engine != "lmer":
            out.update({"family": study.family.name, "link": study.fit.link, "scale": vc.attrs.get("note"),
                        "dispersion": study.fit.dispersion, "family_parameters": study.fit.family_parameters,
                        "means": study.emmeans().to_dict(orient="records")})
        print_json(out)
    else:
        print(report.to_text())
        print(f"\nHTML report written to {Path(path).resolve()}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from ..report import check_evaluation_log
    from ..study import Study

    family = check_family_flags(args)
    check_output_file(args.out)
    cuts = number_list(args.cuts, "--cuts") if args.cuts else None
    if cuts is not None and not args.by:
        raise InputError("--cuts bins the property named by --by; give --by too (e.g. --by src_length --cuts 15,55).")
    if args.labels and cuts is None:
        raise InputError("--labels names the classes that --cuts makes; give --cuts too (e.g. --by src_length "
                         "--cuts 15,55 --labels short,typical,long).")
    data = read_table(args.data)
    facet_columns = [c for f in args.facet for c in f.split(":")]
    check_evaluation_log(data, score=args.score, system=args.system, item=args.item,
                         facets=list(dict.fromkeys(c for c in facet_columns if c != args.system)))
    formula = f"{args.score} ~ {args.system} + (1|{args.item})" + "".join(f" + (1|{f})" for f in args.facet)
    with recorded_warnings() as warned:  # the report states them too
        study = Study(data, formula, item=args.item, system=args.system, family=family, weights=args.weights)
    labels = args.labels.split(",") if args.labels else None
    return _emit(study, args, args.by, cuts, labels, data=args.data, warned=tuple(warned))


def _demo(args: argparse.Namespace) -> int:
    from .. import datasets
    from ..study import Study

    if args.write_data is not None:
        extra = [flag for flag, given in (("--json", args.json), ("--out", args.out != DEMO_OUT)) if given]
        if extra:
            raise InputError(f"--write-data writes the demo data and stops; drop {' and '.join(extra)} (or run the "
                             "demo without --write-data).")
        for name, path in datasets.write_demo(args.write_data).items():
            print(f"{path}: {datasets.DEMO_FILES[name]}")
        return 0
    check_output_file(args.out)
    study = Study(datasets.load_demo(), DEMO_FORMULA, item="item", system="system")
    truth = datasets.load_demo_truth()["variance_components"]
    return _emit(study, args, "length_class", None, None, truth=truth, data="the bundled demo (demo_mt.csv)")
