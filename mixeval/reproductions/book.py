"""Reproductions of the book's tables (Riezler & Hagmann, Chapters 3 and 4) from its companion data."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from .. import datasets
from ..reliability import dstudy
from ..study import Study
from . import register

ANNOTATION = "score ~ (1|sentence) + (1|rater) + (1|occasion) + (1|rater:sentence) + (1|occasion:rater) + (1|occasion:sentence)"
META = "ter ~ (1|sentence_id) + (1|learning_rate) + (1|seed) + (1|decoder_dropout) + (1|decoder_dropout_hidden) + (1|encoder_dropout)"
LIVER = ("accuracy ~ (1|hidden_size_max) + (1|hidden_number) + (1|learning_rate) + (1|batch_size) + "
         "(1|random_seed) + (1|epochs) + (1|dropout)")
BASE_GRID = '(-0.5:0.5)'


def _load(name: str, data_dir: Path | None) -> pd.DataFrame:
    return datasets.load(name, data_dir=data_dir)


def _study(data: pd.DataFrame, formula: str, item: str) -> Study:
    return Study(data, formula, item=item)


def _variances(data: pd.DataFrame, formula: str, item: str) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # singular fits are expected in these tables (reported as 0)
        return _study(data, formula, item).variance_components()


@register("table-3.1", "variance components, translation marking (REML)")
def table_3_1(data_dir: Path | None) -> pd.DataFrame:
    d = _load("mt_annotation", data_dir)
    return _variances(d[d["mode"] == "Marking"], ANNOTATION, "sentence")


@register("table-3.2", "variance components, translation post-editing (REML)")
def table_3_2(data_dir: Path | None) -> pd.DataFrame:
    d = _load("mt_annotation", data_dir)
    return _variances(d[d["mode"] == "Post Edit"], ANNOTATION, "sentence")


@register("table-3.4", "variance components of the liver SOFA meta-parameter grid (REML)")
def table_3_4(data_dir: Path | None) -> pd.DataFrame:
    d = _load("liver_gridsearch", data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _study(d, LIVER, "hidden_size_max").variance_components()


def _grid(name: str, data_dir: Path | None) -> pd.DataFrame:
    d = _load(name, data_dir)
    return d[d["delta_scheme"] == BASE_GRID].reset_index(drop=True)


@register("table-3.8", "substantial variance check, partial grid (model 3.15)")
def table_3_8(data_dir: Path | None) -> pd.DataFrame:
    return _variances(_grid("mt_grid_partial", data_dir), "ter ~ (1|sentence_id)", "sentence_id")


@register("table-3.9", "variance components, partial meta-parameter grid (model 3.16)")
def table_3_9(data_dir: Path | None) -> pd.DataFrame:
    return _variances(_grid("mt_grid_partial", data_dir), META, "sentence_id")


@register("table-3.10", "substantial variance check, full grid (model 3.15)")
def table_3_10(data_dir: Path | None) -> pd.DataFrame:
    return _variances(_grid("mt_grid_full", data_dir), "ter ~ (1|sentence_id)", "sentence_id")


@register("table-3.11", "variance components, full meta-parameter grid (model 3.16)")
def table_3_11(data_dir: Path | None) -> pd.DataFrame:
    return _variances(_grid("mt_grid_full", data_dir), META, "sentence_id")


@register("figure-3.3", "D-study: phi over raters x instantiations, Marking and Post Edit")
def figure_3_3(data_dir: Path | None) -> pd.DataFrame:
    d = _load("mt_annotation", data_dir)
    out = []
    for mode in ("Marking", "Post Edit"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = _study(d[d["mode"] == mode], ANNOTATION, "sentence").fit
        grid = dstudy(fit, "sentence", {"rater": range(1, 13), "occasion": range(1, 6)})
        out.append(grid.assign(mode=mode))
    table = pd.concat(out, ignore_index=True)
    return table[["mode", "rater", "occasion", "phi", "phi_relative"]].rename(columns={"occasion": "instantiation"})


def _ter_study(data_dir: Path | None) -> Study:
    return Study(_load("mt_ter", data_dir), "ter ~ system + (1|sentence_id)")


@register("table-4.1", "GLRTs of the system effect: seed-averaged linear model and LMEM (ML)")
def table_4_1(data_dir: Path | None) -> pd.DataFrame:
    study = _ter_study(data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        averaged = study.glrt_averaged("replication")
        lmm = study.glrt()
    rows = [("lm on seed-averaged TER: ter ~ system vs ter ~ 1", averaged),
            ("LMEM: ter ~ system + (1|sentence_id) vs ter ~ 1 + (1|sentence_id)", lmm)]
    return pd.DataFrame([{"model": m, "statistic": r.statistic, "df": r.df, "pvalue": r.pvalue} for m, r in rows])


def _contrast_rows(table: pd.DataFrame, by: str | None) -> pd.DataFrame:
    cols = ["contrast", "estimate", "se", "z", "pvalue"]
    out = table.rename(columns=str.lower)
    if by:
        out = out.rename(columns={by: "by"})
        cols = ["by", *cols]
    return out[cols].reset_index(drop=True)


@register("table-4.2", "pairwise system contrasts, emmeans with Tukey adjustment (asymptotic)")
def table_4_2(data_dir: Path | None) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _ter_study(data_dir).pairwise(adjust="tukey")
    return _contrast_rows(res.table, None)


@register("table-4.3", "system contrasts conditional on source length (> 15, > 55), Tukey within class")
def table_4_3(data_dir: Path | None) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, pairs, _ = _ter_study(data_dir).conditional("src_length", (15, 55), ("short", "typical", "very long"))
    return _contrast_rows(pairs.table, "src_length_class")


@register("figure-3.5", "delta_scheme x source-length class: meta-parameter contrasts within each class (Tukey)")
def figure_3_5(data_dir: Path | None) -> pd.DataFrame:
    d = _load("mt_grid_partial", data_dir)
    study = Study(d, "ter ~ delta_scheme + (1|sentence_id)", system="delta_scheme")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, pairs, _ = study.conditional("src_length_class")
    return _contrast_rows(pairs.table, "src_length_class")


__all__ = ["table_3_1", "table_3_2", "table_3_4", "table_3_8", "table_3_9", "table_3_10", "table_3_11",
           "figure_3_3", "figure_3_5", "table_4_1", "table_4_2", "table_4_3"]
