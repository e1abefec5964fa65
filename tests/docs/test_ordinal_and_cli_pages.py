"""Issue 41, item 2: ordinal ratings have a guide (executed, in the guides' index), a row of "Which test when" and
an FAQ entry; Study's ``family`` documents every registered family; the command-line cheat-sheets list every
command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mixeval.cli import COMMANDS
from mixeval.mixed.families import family_names
from mixeval.study import Study

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def test_the_ordinal_guide_is_listed_and_covers_its_topics():
    guide = (DOCS / "guides" / "ordinal.md").read_text(encoding="utf-8")
    assert guide.startswith("---\nfile_format: mystnb\n")
    toctree = (DOCS / "guides" / "index.md").read_text(encoding="utf-8")
    assert re.search(r"^ordinal$", toctree, flags=re.M)
    for topic in ("family=\"ordinal\"", "threshold", "latent scale", "marginal=True", "conditional",
                  'scale="latent"', "observed", "nominal_test", "threshold_spread_test", "random_thresholds"):
        assert topic in guide, topic


@pytest.mark.parametrize("page", ["which_test.md", "faq.md"])
def test_which_test_and_the_faq_point_to_the_ordinal_guide(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    assert "guides/ordinal.md" in text and 'family="ordinal"' in text


def test_study_documents_every_family_it_takes():
    doc = Study.__doc__.split("family : ", 1)[1].split("\n    link", 1)[0]
    assert all(f'"{name}"' in doc for name in family_names()), [n for n in family_names() if f'"{n}"' not in doc]


@pytest.mark.parametrize("page", ["docs/guides/report_cli.md", "README.md"])
def test_the_cheat_sheets_list_every_command(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    listed = set(re.findall(r"^\s*mixeval ([a-z-]+)", text, flags=re.M))
    assert set(COMMANDS) - listed == set()
