"""Reproductions of the book's circularity analyses (Chapter 2, Section 2.4.3) from its companion data."""

from __future__ import annotations

import json
import warnings
from importlib import resources
from pathlib import Path

import pandas as pd

from .. import datasets
from ..errors import InputError
from ..validity import circularity_test
from . import default_data_dir, register

IR_FEATURES = ["score_neural", "score_tfIdf", "cited_inventor", "cited_examiner", "cited_family"]
LIVER_LABELS = ["target", "sofa_circ", "sofa_nocirc"]
_SHORT = {"score_neural": "neural", "score_tfIdf": "tf-Idf", "cited_inventor": "inventor",
          "cited_examiner": "examiner", "cited_family": "family"}


def load_ir(data_dir: Path | None) -> pd.DataFrame:
    """The IR test split (``ir_test.csv.gz``: 500 queries, 106,690 query-document pairs) with ``relevant = relevance > 0``."""
    folders = [Path(data_dir)] if data_dir else []
    default = default_data_dir()
    if default is not None:
        folders.append(default)
    for folder in folders:
        path = folder / "ir_test.csv.gz"
        if path.is_file():
            d = pd.read_csv(path)
            d["relevant"] = (d["relevance"] > 0).astype(int)
            return d
    raise InputError("ir_test.csv.gz not found; pass --data DIR (the book data folder) or set MIXEVAL_DATA.")


def mgcv_reference() -> dict:
    """mgcv's D^2 and edf of the 31 models on the IR test split (``tests/validity/fixtures/make_ir_table_2_5.R``)."""
    return json.loads(resources.files("mixeval").joinpath("data/mgcv_table_2_5.json").read_text())


def ir_search(data: pd.DataFrame, family: str = "gaussian"):
    """The circularity test of book Table 2.5: all subsets of the five IR features."""
    target = "relevance" if family == "gaussian" else "relevant"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # separation (binomial) and exact fits are the point here
        return circularity_test(data, target, IR_FEATURES, family=family, top=None, show_progress=False)


def _table(result, family: str, top: int = 5) -> pd.DataFrame:
    ref = {frozenset(m["features"] if isinstance(m["features"], list) else [m["features"]]): m
           for m in mgcv_reference().get(family, [])}
    missing = {"d2": float("nan"), "edf": float("nan")}
    rows = []
    for rank, r in enumerate(result.models.head(top).itertuples(index=False), start=1):
        m = ref.get(frozenset(r.features), missing)
        rows.append({"rank": rank, "features": "{" + ", ".join(_SHORT[f] for f in r.features) + "}",
                     "d2": r.d2, "edf": r.edf, "d2_mgcv": m["d2"], "edf_mgcv": m["edf"]})
    return pd.DataFrame(rows)


@register("table-2.5", "top five models of the circularity search on the IR test split, D^2 and edf beside mgcv's")
def table_2_5(data_dir: Path | None) -> pd.DataFrame:
    """Book Table 2.5 on the public test split (the book used the 1,500-query training split).

    Expected differences: the book reports D^2 = 100% for every model with the three citation
    features (so here) and 95% for ``{examiner, family, neural, tf-Idf}`` (here about 94.6%);
    its complexities (5, 6.33, 7.95, 11.1, 22) count edf on other data and, for the models whose
    fit is exact, depend on an arbitrary smoothing parameter (any penalty fits exactly), so they
    are not reproducible: here the three factors give edf 4 (intercept + 3), as mgcv. Against mgcv on
    the same data D^2 agrees to 1.1e-5 over all 31 models; edf agrees for the factor-only models and
    differs by up to 2.8 where GCV is flat in the tf-Idf smoothing parameter (same D^2, different
    stopping point of the two optimisers) or where the fit is exact (any penalty fits).
    """
    return _table(ir_search(load_ir(data_dir), "gaussian"), "gaussian")


@register("table-2.5-binomial", "the Table 2.5 search with the binomial family on binary relevance (> 0), beside mgcv")
def table_2_5_binomial(data_dir: Path | None) -> pd.DataFrame:
    return _table(ir_search(load_ir(data_dir), "binomial"), "binomial")


@register("liver-circularity", "circularity verdicts on the liver SOFA test split: gold, sofa_circ, sofa_nocirc")
def liver_circularity(data_dir: Path | None) -> pd.DataFrame:
    """The verdicts of book Section 2.4.3 (gold labels, Figures 2.9-2.10; teachers, Figure 2.19)."""
    d = datasets.load("liver_sofa_test", data_dir=data_dir)
    rows = []
    for label in LIVER_LABELS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = circularity_test(d, label, exclude=[x for x in LIVER_LABELS if x != label], show_progress=False)
        rows.append({"label": label, "circular": ", ".join(r.circular) or "-", "best": ", ".join(r.best),
                     "d2": r.d2, "edf": r.edf, "determinism": r.determinism, "added_ratio": r.added_ratio,
                     "k_bili": r.k.get("bili", 0), "candidates": ", ".join(r.candidates)})
    return pd.DataFrame(rows)


__all__ = ["table_2_5", "table_2_5_binomial", "liver_circularity", "load_ir", "ir_search", "mgcv_reference"]
