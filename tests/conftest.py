"""Shared test fixtures: where the book data is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from scipy.stats import norm

ROOT = Path(__file__).resolve().parents[1]
BOOKDATA = Path(os.environ.get("MIXEVAL_DATA", ROOT.parent / "shared" / "bookdata"))


@pytest.fixture(scope="session")
def bookdata() -> Path:
    """Directory of the book data; in CI its absence is a failure, elsewhere a skip."""
    if not BOOKDATA.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"book data not found at {BOOKDATA}")
        pytest.skip(f"book data not found at {BOOKDATA}")
    return BOOKDATA


# ---------------------------------------------------------------- lme4 reference fixtures
import json  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

LME4_FIXTURES = ROOT / "tests" / "mixed" / "fixtures"


class Lme4Fixtures:
    """The R reference values of ``tests/mixed/fixtures/lme4_fixtures.json`` and their data."""

    def __init__(self, bookdata: Path):
        self.raw = json.loads((LME4_FIXTURES / "lme4_fixtures.json").read_text())
        self.bookdata = bookdata
        self._cache: dict[tuple, pd.DataFrame] = {}

    def fits(self) -> list[dict]:
        return self.raw["fits"]

    def fit(self, name: str) -> dict:
        return next(f for f in self.raw["fits"] if f["name"] == name)

    def section(self, key: str, name: str) -> dict:
        return next(f for f in self.raw[key] if f["name"] == name)

    def data(self, case: dict) -> pd.DataFrame:
        """The rows a case was fitted to: file, subset, preprocessing (as the R script did)."""
        key = (case["data"], case.get("subset"), case.get("preprocess"))
        if key not in self._cache:
            source, _, rel = case["data"].partition("/")
            path = (self.bookdata if source == "bookdata" else LME4_FIXTURES / source) / rel
            df = pd.read_csv(path)
            if case.get("subset"):
                df = df.query(case["subset"]).reset_index(drop=True)
            pp = case.get("preprocess")
            if pp == "mean_over_replication":
                df = df.groupby(["sentence_id", "system"], as_index=False).ter.mean()
            elif pp == "src_length_class_15_55":
                df = df.assign(cls=np.array(["short", "typical", "very long"])[
                    (df.src_length > 15).astype(int) + (df.src_length > 55).astype(int)])
            elif pp is not None:
                raise ValueError(f"unknown preprocess {pp!r}")
            self._cache[key] = df
        return self._cache[key]


@pytest.fixture(scope="session")
def lme4_fixtures(bookdata: Path) -> Lme4Fixtures:
    return Lme4Fixtures(bookdata)


# ---------------------------------------------------------------- notebooks
class NotebookRun:
    """One notebook's outputs: freshly executed from its ``.py`` source, or as committed.

    ``values`` are the ``label = value`` lines the notebook printed or, for a notebook tested with a probe,
    the lines the probe printed from the notebook's variables (the committed run carries the fresh run's, and
    ``stale`` lists where its outputs differ from the fresh run's).
    """

    def __init__(self, build, nb, probe_text: str | None = None, stale: list[str] | None = None):
        self.nb = nb
        self.text = build.text_output(nb)
        self.values = build.printed_values(probe_text if probe_text is not None else self.text)
        self.images = build.image_count(nb)
        self.errors = build.errors(nb)
        self.stale = stale or []

    def __getitem__(self, label: str) -> float:
        assert label in self.values, f"the notebook did not print {label!r}"
        return float(self.values[label])

    def raw(self, label: str) -> str:
        assert label in self.values, f"the notebook did not print {label!r}"
        return self.values[label]


@pytest.fixture(scope="session")
def notebook_build():
    """``notebooks/build.py`` as a module (sources, execution, committed notebooks)."""
    import importlib.util

    for name in ("jupytext", "nbclient", "nbformat"):
        pytest.importorskip(name)
    spec = importlib.util.spec_from_file_location("notebook_build", ROOT / "notebooks" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def notebook_runner(notebook_build):
    """``run(request, name)`` for a fixture parametrised by ``("executed", "committed")``.

    ``needs_data=False`` for a notebook that does not read the book data (it then runs without them).

    "executed" runs the notebook's ``.py`` source in a fresh kernel on the book data; "committed" reads the
    outputs of the committed ``.ipynb``, so the same assertions check what a reader of the repository sees.
    With ``probe`` (code printing ``label = value`` lines from the notebook's variables, run after its last cell
    in the same kernel), the values come from the probe: the executed run's, once per session, also for the
    committed run, whose ``stale`` lists the cells that show other text or numbers than the fresh run.
    """
    fresh: dict[str, NotebookRun] = {}

    def run(request, name: str, *, needs_data: bool = True, probe: str | None = None) -> NotebookRun:
        if probe is None and request.param == "committed":
            return NotebookRun(notebook_build, notebook_build.committed(name))
        data = request.getfixturevalue("bookdata") if needs_data else None
        nb = notebook_build.from_source(notebook_build.source_path(name))
        if probe is None:
            return NotebookRun(notebook_build, notebook_build.execute(nb, data=data))
        if name not in fresh:
            executed, probe_text = notebook_build.execute_probed(nb, probe, data=data)
            fresh[name] = NotebookRun(notebook_build, executed, probe_text)
        if request.param == "executed":
            return fresh[name]
        committed = notebook_build.committed(name)
        stale = notebook_build.output_differences(committed, fresh[name].nb)
        return NotebookRun(notebook_build, committed, "\n".join(f"{k} = {v}" for k, v in fresh[name].values.items()),
                           stale)

    return run


@pytest.fixture
def within_bootmer_error():
    """``check(boot, ref, n_ours)``: every percentile end of ``boot.interval(0.95)`` within 4 standard errors of
    bootMer's (``ref["intervals"]`` from ``ref["nsim"]`` draws with sd's ``ref["sd"]``), the standard error of a
    2.5% / 97.5% sample quantile (normal approximation) of the two runs combined."""

    def check(boot, ref: dict, n_ours: int) -> None:
        iv = boot.interval(0.95)
        c = np.sqrt(0.025 * 0.975) / norm.pdf(norm.ppf(0.975))
        for param, (lo_r, hi_r) in ref["intervals"].items():
            sd = max(ref["sd"][param], boot.se[param])
            tol = 4 * c * sd * np.sqrt(1 / ref["nsim"] + 1 / n_ours)
            assert abs(iv.loc[param, "lower"] - lo_r) <= tol, (param, iv.loc[param].tolist(), (lo_r, hi_r), tol)
            assert abs(iv.loc[param, "upper"] - hi_r) <= tol, (param, iv.loc[param].tolist(), (lo_r, hi_r), tol)

    return check


# ---------------------------------------------------------------- Spark
@pytest.fixture(scope="session")
def spark_session():
    """A local one-core Spark session; skips (with the reason) without ``pyspark`` or a Java runtime."""
    import shutil
    import warnings

    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'mixeval[spark]')")
    if shutil.which("java") is None:
        pytest.skip("Spark needs a Java runtime (java not on PATH)")
    from pyspark.sql import SparkSession

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = (
            SparkSession.builder.master("local[1]").appName("mixeval-tests")
            .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
            .config("spark.driver.memory", "1g").config("spark.default.parallelism", "1")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true").getOrCreate()
        )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
