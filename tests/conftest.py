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
