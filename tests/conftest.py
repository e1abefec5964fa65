"""Shared test fixtures: where the book data is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
