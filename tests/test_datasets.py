"""Tests of mixeval.datasets: the book-data loader (offline) and the demo data."""

from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess
import sys
import urllib.error
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixeval import datasets
from mixeval.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["mt_annotation", "mt_ter", "mt_grid_partial", "mt_grid_full", "liver_gridsearch", "liver_sofa_test",
         "ir_test"]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """No test sees the user's environment variables, cache or the network."""
    monkeypatch.delenv("MIXEVAL_DATA", raising=False)
    monkeypatch.delenv("MIXEVAL_DATA_URL", raising=False)
    monkeypatch.setenv("MIXEVAL_CACHE", str(tmp_path / "cache"))

    def no_network(url, timeout=60.0):
        raise AssertionError(f"unexpected network access: {url}")

    monkeypatch.setattr(datasets, "_fetch", no_network)
    datasets._MEMORY.clear()


def _tiny_annotation(score: float) -> pd.DataFrame:
    return pd.DataFrame(
        {"mode": ["Marking", "Post Edit"], "occasion": [0, 1], "sentence": [1, 2], "rater": [3, 4], "score": [score, score]}
    )


# --------------------------------------------------------------------------- catalogue and errors


def test_list_datasets_names_the_seven_book_tables():
    table = datasets.list_datasets()
    assert table["name"].tolist() == NAMES
    assert set(table.columns) >= {"name", "rows", "columns", "description", "book_section", "source"}
    assert dict(zip(table["name"], table["rows"]))["mt_ter"] == 7287
    assert all(s.endswith(".rds") for s in table["source"])


def test_unknown_name_lists_valid_names():
    with pytest.raises(InputError) as info:
        datasets.load("mt_teer")
    message = str(info.value)
    assert "'mt_teer'" in message
    for name in NAMES:
        assert name in message
    with pytest.raises(TypeError, match="name"):
        datasets.load(3)  # type: ignore[arg-type]


def test_missing_everywhere_says_how_to_fix():
    with pytest.raises(InputError) as info:
        datasets.load("mt_ter")
    message = str(info.value)
    assert "MIXEVAL_DATA" in message and "download=True" in message and "cache" in message


def test_data_dir_that_is_not_a_directory_is_an_error(tmp_path):
    with pytest.raises(InputError, match="not a directory"):
        datasets.load("mt_ter", data_dir=tmp_path / "nope")
    with pytest.raises(TypeError, match="data_dir"):
        datasets.load("mt_ter", data_dir=42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="download"):
        datasets.load("mt_ter", data_dir=tmp_path, download="yes")  # type: ignore[arg-type]


def test_file_without_the_expected_columns_is_rejected(tmp_path):
    pd.DataFrame({"x": [1, 2]}).to_csv(tmp_path / "mt_annotation.csv", index=False)
    with pytest.raises(InputError, match="lacks column"):
        datasets.load("mt_annotation", data_dir=tmp_path)


# --------------------------------------------------------------------------- local look-up


@pytest.mark.parametrize("name", ["mt_annotation", "mt_ter", "liver_gridsearch", "ir_test"])
def test_load_from_data_dir_equals_read_csv(bookdata, name):
    got = datasets.load(name, data_dir=bookdata)
    expected = pd.read_csv(bookdata / f"{name}.csv.gz")
    pd.testing.assert_frame_equal(got, expected)
    assert len(got) == dict(zip(NAMES, datasets.list_datasets()["rows"]))[name]


def test_book_tables_have_documented_shapes(bookdata):
    ter = datasets.load("mt_ter", data_dir=bookdata)
    assert ter["sentence_id"].nunique() == 1041
    assert sorted(ter["system"].unique()) == ["Baseline", "Marking", "PostEdit"]
    # grouping columns keep read_csv's types: not converted to categoricals
    assert not any(isinstance(t, pd.CategoricalDtype) for t in ter.dtypes)
    annotation = datasets.load("mt_annotation", data_dir=bookdata)
    assert annotation.groupby("mode").size().to_dict() == {"Marking": 150, "Post Edit": 150}


def test_load_from_environment_variable(bookdata, monkeypatch):
    monkeypatch.setenv("MIXEVAL_DATA", str(bookdata))
    got = datasets.load("mt_annotation")
    pd.testing.assert_frame_equal(got, pd.read_csv(bookdata / "mt_annotation.csv.gz"))
    assert datasets.find_data_dir("mt_annotation") == bookdata


def test_lookup_order_argument_then_env_then_cache(tmp_path, monkeypatch):
    arg, env, cache = tmp_path / "arg", tmp_path / "env", Path(datasets.cache_dir())
    for folder, score in ((arg, 1.0), (env, 2.0), (cache, 3.0)):
        folder.mkdir(parents=True)
        _tiny_annotation(score).to_csv(folder / "mt_annotation.csv", index=False)
    monkeypatch.setenv("MIXEVAL_DATA", str(env))
    assert datasets.load("mt_annotation", data_dir=arg)["score"].iloc[0] == 1.0
    assert datasets.load("mt_annotation")["score"].iloc[0] == 2.0
    monkeypatch.delenv("MIXEVAL_DATA")
    assert datasets.load("mt_annotation")["score"].iloc[0] == 3.0
    # an argument folder without the file falls through to the next place
    empty = tmp_path / "empty"
    empty.mkdir()
    assert datasets.load("mt_annotation", data_dir=empty)["score"].iloc[0] == 3.0


def test_gzipped_file_preferred_and_read(tmp_path):
    _tiny_annotation(5.0).to_csv(tmp_path / "mt_annotation.csv.gz", index=False, compression="gzip")
    _tiny_annotation(6.0).to_csv(tmp_path / "mt_annotation.csv", index=False)
    assert datasets.load("mt_annotation", data_dir=tmp_path)["score"].iloc[0] == 5.0


def test_cache_dir_default_and_env(monkeypatch, tmp_path):
    monkeypatch.delenv("MIXEVAL_CACHE")
    assert datasets.cache_dir() == Path.home() / ".cache" / "mixeval"
    monkeypatch.setenv("MIXEVAL_CACHE", str(tmp_path / "c"))
    assert datasets.cache_dir() == tmp_path / "c"


def test_memory_cache_returns_independent_copies_and_notices_changes(tmp_path):
    path = tmp_path / "mt_annotation.csv"
    _tiny_annotation(1.0).to_csv(path, index=False)
    first = datasets.load("mt_annotation", data_dir=tmp_path)
    first.loc[0, "score"] = -99.0  # the caller's copy; must not leak into the cache
    second = datasets.load("mt_annotation", data_dir=tmp_path)
    assert second["score"].iloc[0] == 1.0
    assert len(datasets._MEMORY) == 1
    # a changed file (different size) is read again
    pd.concat([_tiny_annotation(7.0)] * 3).to_csv(path, index=False)
    third = datasets.load("mt_annotation", data_dir=tmp_path)
    assert len(third) == 6 and third["score"].iloc[0] == 7.0


# --------------------------------------------------------------------------- download (offline)

def _factor_columns(csv_path: Path) -> list[str]:
    """Columns that R's write.csv quoted in the local copy: the original's factors (and strings)."""
    import csv

    with gzip.open(csv_path, "rt", newline="") as handle:
        header = next(csv.reader(handle))
        first = handle.readline()
    fields = next(csv.reader([first], quoting=csv.QUOTE_NONE))
    return [name for name, raw in zip(header, fields) if raw.startswith('"')]


def _as_original_rds(csv_path: Path, factors: list[str] | None, out: Path) -> bytes:
    """Write the local CSV copy as an R .rds the way the original stores it (factors as factors)."""
    pyreadr = pytest.importorskip("pyreadr", reason="pyreadr (extra 'download') is needed to write .rds files")
    frame = pd.read_csv(csv_path)
    for column in factors if factors is not None else _factor_columns(csv_path):
        frame[column] = pd.Categorical(frame[column].astype(str))
    # the original has an extra column order and could hold extra columns: shuffle and add one
    frame = frame[list(reversed(frame.columns))].assign(extra=1.0)
    pyreadr.write_rds(str(out), frame)
    return out.read_bytes()


def test_factor_columns_are_the_quoted_ones(bookdata):
    assert _factor_columns(bookdata / "mt_ter.csv.gz") == ["sentence_id", "system", "replication"]
    assert _factor_columns(bookdata / "mt_annotation.csv.gz") == ["mode", "occasion", "sentence", "rater"]


@pytest.mark.parametrize("name", ["mt_annotation", "mt_ter", "mt_grid_partial", "liver_gridsearch", "ir_test"])
def test_download_converts_and_caches(bookdata, tmp_path, monkeypatch, name):
    payload = _as_original_rds(bookdata / f"{name}.csv.gz", None, tmp_path / "orig.rds")
    urls: list[str] = []

    def fake_fetch(url, timeout=60.0):
        urls.append(url)
        return payload

    monkeypatch.setattr(datasets, "_fetch", fake_fetch)
    got = datasets.load(name, download=True)
    spec = datasets._SPECS[name]
    assert urls == [f"https://raw.githubusercontent.com/StatNLP/empirical_methods/HEAD/{spec.source_path}"]
    expected = pd.read_csv(bookdata / f"{name}.csv.gz")
    pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=1e-12)
    cached = datasets.cache_dir() / f"{name}.csv.gz"
    assert cached.is_file()
    with gzip.open(cached, "rt") as handle:
        assert handle.readline().strip() == ",".join(spec.columns)
    # second call: served from the cache, no network
    monkeypatch.setattr(datasets, "_fetch", lambda url, timeout=60.0: pytest.fail("fetched twice"))
    datasets._MEMORY.clear()
    pd.testing.assert_frame_equal(datasets.load(name, download=True), got)
    assert not list(datasets.cache_dir().glob("tmp*")), "temporary files left in the cache"


def test_download_base_url_can_be_overridden(bookdata, tmp_path, monkeypatch):
    payload = _as_original_rds(bookdata / "mt_annotation.csv.gz", None, tmp_path / "o.rds")
    urls: list[str] = []
    monkeypatch.setattr(datasets, "_fetch", lambda url, timeout=60.0: urls.append(url) or payload)
    monkeypatch.setenv("MIXEVAL_DATA_URL", "https://mirror.example/em")
    datasets.load("mt_annotation", download=True)
    assert urls == ["https://mirror.example/em/kreutzer_et_al_example/data/data_annotation.rds"]


def test_download_without_pyreadr_names_the_extra(monkeypatch):
    monkeypatch.setattr(datasets, "_fetch", lambda url, timeout=60.0: b"not used")
    monkeypatch.setitem(sys.modules, "pyreadr", None)  # makes `import pyreadr` fail
    with pytest.raises(ImportError, match=r"pyreadr.*mixeval\[download\]"):
        datasets.load("mt_ter", download=True)
    assert not (datasets.cache_dir() / "mt_ter.csv.gz").exists()


def test_download_failure_is_a_clear_error(monkeypatch):
    def offline(url, timeout=60.0):
        raise urllib.error.URLError("no route to host")

    monkeypatch.setattr(datasets, "_fetch", offline)
    with pytest.raises(InputError, match="could not download.*MIXEVAL_DATA"):
        datasets.load("mt_ter", download=True)


def test_conversion_keeps_factor_labels_and_missing_values():
    spec = datasets._SPECS["mt_annotation"]
    frame = pd.DataFrame(
        {
            "score": [0.5, 0.25, 0.75],
            "mode": pd.Categorical(["Marking", None, "Post Edit"]),
            "occasion": pd.Categorical(["0", "1", "2"]),
            "sentence": [1, 2, 3],
            "rater": pd.Categorical(["10", "2", "10"], categories=["2", "10"]),
        }
    )
    out = datasets._to_book_columns(frame, spec)
    assert out.columns.tolist() == list(spec.columns)
    assert out["rater"].tolist() == ["10", "2", "10"]
    assert out["mode"].isna().tolist() == [False, True, False]
    assert frame["mode"].dtype == "category"  # input untouched
    with pytest.raises(InputError, match="lacks column"):
        datasets._to_book_columns(frame.drop(columns="rater"), spec)


# --------------------------------------------------------------------------- demo data


def test_demo_shape_design_and_truth():
    demo = datasets.load_demo()
    truth = datasets.load_demo_truth()
    assert demo.columns.tolist() == ["item", "system", "seed", "rater", "src_length", "length_class", "score"]
    assert demo.shape == (7200, 7) == (truth["design"]["rows"], 7)
    # fully crossed: item x system x seed x rater, one score each
    assert demo.groupby(["item", "system", "seed", "rater"]).size().eq(1).all()
    assert demo["item"].nunique() == 200 and demo["rater"].nunique() == 4
    assert demo.groupby("system")["seed"].nunique().eq(3).all()
    # src_length is an item property and the class follows the book's cut points
    assert demo.groupby("item")["src_length"].nunique().eq(1).all()
    cls = np.select([demo["src_length"] <= 15, demo["src_length"] <= 55], ["short", "typical"], "very long")
    assert (demo["length_class"].to_numpy() == cls).all()
    counts = demo.drop_duplicates("item")["length_class"].value_counts().to_dict()
    assert counts == truth["design"]["items_per_length_class"]
    assert min(counts.values()) >= 15  # every class has enough items for conditional comparisons
    assert set(truth["variance_components"]) == {"item", "system:seed", "rater", "item:rater", "Residual"}
    assert truth["formula"] == "score ~ system * length_class + (1|item) + (1|system:seed) + (1|rater) + (1|item:rater)"


def test_demo_files_are_small_and_reproducible(tmp_path):
    csv = ROOT / "mixeval" / "data" / "demo_mt.csv"
    assert csv.stat().st_size < 300_000
    subprocess.run([sys.executable, str(ROOT / "data" / "make_demo.py"), "--out-dir", str(tmp_path)], check=True,
                   capture_output=True)
    assert (tmp_path / "demo_mt.csv").read_bytes() == csv.read_bytes()
    assert json.loads((tmp_path / "demo_mt_truth.json").read_text()) == datasets.load_demo_truth()


def _make_demo_module():
    spec = importlib.util.spec_from_file_location("make_demo", ROOT / "data" / "make_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_demo_truth_json_matches_generator_constants():
    gen = _make_demo_module()
    truth = datasets.load_demo_truth()
    assert truth["random_seed"] == gen.SEED
    assert len(truth["cell_means"]) == 9
    for key, mean in truth["cell_means"].items():
        system, cls = key.split("|")
        assert mean == gen.cell_mean(system, cls)
    assert truth["cell_means"]["system_b|very long"] == 60.0 + 8.0 - 10.0 - 9.0


def test_demo_within_class_system_differences_match_truth():
    """Observed differences of cell means agree with the true ones within 3.5 closed-form SEs.

    Within a length class c with n_c items, item, rater and item:rater effects cancel in a
    difference of two systems' means; what remains is the seed effects (3 seeds per system)
    and residuals: Var = 2 s2_seed / 3 + 2 s2_res / (12 n_c).
    """
    demo = datasets.load_demo()
    truth = datasets.load_demo_truth()
    vc = truth["variance_components"]
    means = demo.groupby(["length_class", "system"])["score"].mean()
    z_scores = []
    for cls, n_c in truth["design"]["items_per_length_class"].items():
        se = np.sqrt(2 * vc["system:seed"] / 3 + 2 * vc["Residual"] / (12 * n_c))
        for label, true_diff in truth["pairwise_differences_by_length_class"][cls].items():
            a, b = label.split(" - ")
            z_scores.append((means[(cls, a)] - means[(cls, b)] - true_diff) / se)
    assert len(z_scores) == 9
    assert np.max(np.abs(z_scores)) < 3.5, z_scores


def test_demo_variance_components_inside_lme4_profile_intervals():
    """lme4's fit of the generating formula (fixture made by data/demo_lme4_reference.R) covers the truth.

    Five components are checked at once, so each uses the 99% profile interval (Bonferroni,
    familywise level 95%); the residual SD (true 6, drawn noise SD 5.905) lies outside its 95%
    interval (5.784, 5.988), a plain sampling event.
    """
    reference = json.loads((ROOT / "data" / "demo_lme4_reference.json").read_text())
    truth = datasets.load_demo_truth()["standard_deviations"]
    assert set(reference["variance_components"]) == set(truth)
    for name, true_sd in truth.items():
        low, high = reference["variance_components"][name]["sd_profile_ci99"]["value"]
        assert low <= true_sd <= high, (name, low, true_sd, high)
    for name, value in datasets.load_demo_truth()["fixed_effects"].items():
        est = reference["fixed_effects"][name]
        assert abs(est["estimate"]["value"] - value) < 3.5 * est["se"]["value"], (name, est, value)


def test_write_demo_writes_every_file_the_examples_read_with_its_known_truth(tmp_path):
    """Issue 41, item 6: the harness logs, the circularity table and the meta-evaluation tables of the --help
    examples, each drawn from the model its docstring states."""
    paths = datasets.write_demo(tmp_path)
    assert sorted(paths) == sorted(datasets.DEMO_FILES) and all(p.exists() for p in paths.values())
    logs = datasets.read_lm_eval(paths["demo_logs"])
    assert logs.groupby("model").size().to_dict() == {"model-a": 200, "model-b": 200, "model-c": 200}
    assert logs.groupby("model")["passage"].nunique().eq(40).all()
    # marginal accuracies 0.71, 0.63, 0.61 (200 questions in 40 passages: SE about 0.04)
    accuracy = logs.groupby("model")["acc"].mean()
    assert np.allclose(accuracy.to_numpy(), [0.71, 0.63, 0.61], atol=0.12)
    kidney = pd.read_csv(paths["demo_circularity.csv"])
    creatinine_score = np.digitize(kidney["creatinine"], [1.2, 2.0, 3.5, 5.0])
    urine_score = np.where(kidney["urine"] < 200, 4, np.where(kidney["urine"] < 500, 3, 0))
    assert (kidney["sofa_kidney"] == np.maximum(creatinine_score, urine_score)).all()  # the rule, on the file's values
    assert (kidney["kidney_failure"] == (kidney["sofa_kidney"] >= 3)).all() and kidney["sofa_kidney"].nunique() == 5
    answers = pd.read_csv(paths["demo_answers.csv"])
    assert answers["maxprob"].between(0, 1).all() and set(answers["correct"]) == {0, 1}
    assert answers["correct"].mean() < answers["maxprob"].mean()  # over-confident: 0.62 right at confidence 0.71
    pairs = pd.read_csv(paths["demo_pairs.csv"])
    better = np.where(pairs["metric"] == "wer", pairs["score"] < pairs["perturbed"], pairs["score"] > pairs["perturbed"])
    local = pd.Series(better).groupby([pairs["metric"], pairs["system"]]).mean()
    assert local["bleu", "system_a"] - local["bleu", "system_b"] > 0.1  # truth 0.80 vs 0.50
    assert abs(local["wer", "system_a"] - local["wer", "system_b"]) < 0.15  # truth 0.70 on both
    again = tmp_path / "again"
    datasets.write_demo(again)
    assert all((again / name).read_bytes() == (tmp_path / name).read_bytes()
               for name in datasets.DEMO_FILES if name.endswith(".csv"))


def test_toy_scores_draw_from_the_model_they_document():
    """The shared fixture of the doctests (issue 41): its stated truth is what lme4-style fits recover."""
    from mixeval import clmm, lmer

    scores = datasets.toy_scores(n_items=300, systems=("A", "B", "C"), n_raters=6, random_state=3)
    assert list(scores.columns) == ["item", "system", "rater", "score"] and len(scores) == 300 * 3 * 6
    fit = lmer("score ~ system + (1|item) + (1|rater)", scores)
    assert fit.fixef["systemB"] == pytest.approx(0.2, abs=0.1) and fit.fixef["systemC"] == pytest.approx(0.4, abs=0.1)
    variances = fit.varcorr.set_index("group")["variance"]
    assert variances["item"] == pytest.approx(1.0, rel=0.25) and variances["Residual"] == pytest.approx(1.0, rel=0.1)
    assert 0.02 < variances["rater"] < 1.0  # 0.25 from six raters
    ratings = datasets.toy_scores(n_items=300, systems=("A", "B"), response="rating", random_state=4)
    ordinal = clmm("rating ~ system + (1|item)", ratings)
    assert np.allclose(ordinal.threshold_values, [-1.5, -0.5, 0.5, 1.5], atol=0.3)
    correct = datasets.toy_scores(n_items=5, response="correct")
    assert set(correct["correct"]) <= {0, 1} and "rater" not in correct
    assert datasets.toy_scores().equals(datasets.toy_scores())
    with pytest.raises(InputError, match="`response` must be 'score', 'correct' or 'rating'"):
        datasets.toy_scores(response="ratings")
    with pytest.raises(InputError, match="`n_raters` must be a whole number >= 1"):
        datasets.toy_scores(n_raters=0)
