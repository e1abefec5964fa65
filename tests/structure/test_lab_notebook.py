"""The library without the lab notebook (issue 41): benchmark scripts, one per claim, with their raw output out of
git; a changelog a user reads; design history in the method notes, not in docstrings."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"


def _tracked(path: str) -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", path], capture_output=True, text=True, cwd=ROOT, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return out.stdout.split()


def test_at_most_ten_raw_benchmark_files_are_committed_and_the_rest_is_ignored():
    committed = _tracked("benchmarks/results")
    assert len(committed) <= 10, committed
    cited = (ROOT / "docs" / "significance_df_and_trends.md").read_text() + (BENCH / "README.md").read_text()
    for path in committed:  # each one is data a page cites
        assert Path(path).name in cited, path
    ignored = subprocess.run(["git", "check-ignore", "-q", "benchmarks/results/new_run.json"], cwd=ROOT)
    assert ignored.returncode == 0


def test_every_benchmark_script_has_its_claim_in_the_readme_and_the_readme_is_short():
    readme = (BENCH / "README.md").read_text()
    scripts = sorted(p.name for p in BENCH.glob("*.py") if p.name.startswith(("bench_", "sim_", "phi_", "z_", "scan_")))
    assert scripts, "no benchmark scripts"
    assert [s for s in scripts if s not in readme] == []
    named = set(re.findall(r"benchmarks/([\w.]+\.(?:py|R))", readme))
    assert [n for n in named if not (BENCH / n).exists()] == []
    assert len(readme.splitlines()) < 100


def test_the_performance_page_names_an_existing_script_per_row():
    page = (ROOT / "docs" / "performance.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| ") and not line.startswith("| task")]
    assert len(rows) >= 20
    for row in rows:
        scripts = re.findall(r"`((?:bench|sim)_\w+\.py)`", row)
        assert scripts, row
        assert all((BENCH / s).exists() for s in scripts), row
    for fact in ("2 cores", "Python 3.11", "lme4 1.1-31", "not"):
        assert fact in page
    assert re.search(r"\d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}", page), "the page dates its figures"


def test_the_unreleased_changelog_is_short_and_names_no_benchmark_paths():
    text = (ROOT / "CHANGELOG.md").read_text()
    unreleased = text.split("## Unreleased", 1)[1].split("\n## ", 1)[0]
    assert len(unreleased.splitlines()) < 150
    assert "benchmarks/" not in unreleased and "results/" not in unreleased


def test_no_docstring_cites_a_benchmark_script():
    cited = [f"{p.relative_to(ROOT)}:{i}" for p in sorted((ROOT / "mixeval").rglob("*.py"))
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1) if "benchmarks/" in line]
    assert cited == []
