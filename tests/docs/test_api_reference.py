"""The API reference lists every public name: the pages docs/_ext/apigen.py writes from ``__all__``.

(The built site is checked too: ``docs/check_site.py`` finds every public name in ``objects.inv``.)
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import types
from pathlib import Path

import pytest

import mixeval

DOCS = Path(__file__).resolve().parents[2] / "docs"
_spec = importlib.util.spec_from_file_location("apigen", DOCS / "_ext" / "apigen.py")
apigen = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = apigen
_spec.loader.exec_module(apigen)


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("api")
    modules = apigen.write_api(out)
    return {m: (out / f"{m}.rst").read_text() for m in [*modules, "index", "internals", "modules"]}


def _autosummary_names(page: str) -> list[str]:
    """The entries of every autosummary table of a page, fully qualified (the pages set ``currentmodule mixeval``)."""
    blocks = re.findall(r"\.\. autosummary::\n(?:   :.*\n)*\n((?:   \S.*\n)+)", page)
    return [f"mixeval.{line.strip()}" for block in blocks for line in block.splitlines()]


def test_every_public_subpackage_has_a_page(pages):
    subpackages = [n for n in mixeval.__all__ if isinstance(getattr(mixeval, n), types.ModuleType)]
    for name in ["mixeval", *(f"mixeval.{n}" for n in subpackages)]:
        assert name in pages, name
        assert f"   {name}\n" in pages["modules"]
        assert f".. automodule:: {name}\n" in pages[name]


def test_the_index_lists_every_public_name_once(pages):
    listed = _autosummary_names(pages["index"]) + _autosummary_names(pages["internals"])
    duplicates = sorted({n for n in listed if listed.count(n) > 1})
    assert not duplicates, duplicates
    assert set(listed) == set(apigen.documented_names())
    for module_name in apigen.public_modules():  # the module pages only link; they generate no second page
        assert ".. autosummary::" not in pages[module_name]
        for name in apigen.public_names(module_name):
            target = apigen.reference_entries()[f"{module_name}.{name}"]
            assert f":py:obj:`{module_name}.{name} <{target}>`" in pages[module_name], (module_name, name)


def test_internals_are_outside_the_index_by_task(pages):
    index = set(_autosummary_names(pages["index"]))
    for internal in ("mixeval.mixed.optimize_theta", "mixeval.cli.build_parser", "mixeval.mixed.build_design"):
        assert internal not in index and internal in _autosummary_names(pages["internals"])
    assert "mixeval.significance.emmeans" in index and "mixeval.study.Study" in index


def test_engine_modules_document_only_what_no_other_module_lists(pages):
    entries = apigen.reference_entries()
    assert entries["mixeval.mixed.engine.confint"] == "mixeval.uncertainty.confint"  # where users meet it
    assert entries["mixeval.mixed.engine.ReStructure"] == "mixeval.mixed.engine.ReStructure"
    assert entries["mixeval.significance.engine.footer"] == "mixeval.significance.engine.footer"
    assert "mixeval.mixed.engine.ReStructure" in _autosummary_names(pages["internals"])
    assert "mixeval.uncertainty.confint" in _autosummary_names(pages["index"])
    for module in ("mixeval.mixed.engine", "mixeval.resampling.engine", "mixeval.significance.engine"):
        assert module in pages and f"   {module}\n" in pages["modules"]


def test_a_public_name_missing_from_the_grouping_fails_the_build(monkeypatch, tmp_path):
    groups = dict(apigen.api_groups.GROUPS)
    title, sentence, names = groups["significance"]
    groups["significance"] = (title, sentence, [n for n in names if n != "significance.emtrends"])
    groups["data"] = (*groups["data"][:2], [*groups["data"][2], "datasets.no_such_name"])
    monkeypatch.setattr(apigen.api_groups, "GROUPS", groups)
    problems = "\n".join(apigen.grouping_problems())
    assert "mixeval.significance.emtrends is public but in no group" in problems
    assert "mixeval.datasets.no_such_name is in docs/_ext/api_groups.py but is not" in problems
    with pytest.raises(ValueError, match="emtrends"):
        apigen.write_api(tmp_path)


def test_re_exports_and_wrappers_point_to_the_same_object():
    for public, target in apigen.reference_entries().items():
        if public != target:
            a_mod, _, a = public.rpartition(".")
            b_mod, _, b = target.rpartition(".")
            obj, documented = getattr(importlib.import_module(a_mod), a), getattr(importlib.import_module(b_mod), b)
            assert obj is documented or obj is getattr(documented, "__wrapped__", None), public


def test_top_level_names_are_reachable(pages):
    entries = apigen.reference_entries()
    assert entries["mixeval.Study"] == "mixeval.study.Study"    # a re-export: documented once, where defined
    assert entries["mixeval.mixed.lmer"] == "mixeval.lmer"      # wrapped by mixeval.lmer: documented there
    assert ":py:obj:`mixeval.Study <mixeval.study.Study>`" in pages["mixeval"]


# Public names whose docstring has no runnable example yet (2026-11-23, 3 names). The list may only shrink: a new
# public name must come with an Examples section, and a name that gains one must leave the list.
WITHOUT_EXAMPLE = frozenset("""
mixeval.formula.ParsedFormula mixeval.formula.RandomTerm mixeval.meta.Perturbation
""".split())


def _has_example(qualified: str) -> bool:
    import inspect

    module_name, _, name = qualified.rpartition(".")
    return ">>>" in (inspect.getdoc(getattr(importlib.import_module(module_name), name)) or "")


def test_public_names_have_examples():
    documented = sorted({t for t in apigen.reference_entries().values()
                         if callable(getattr(importlib.import_module(t.rpartition(".")[0]), t.rpartition(".")[2]))})
    missing = {name for name in documented if not _has_example(name)}
    new = sorted(missing - WITHOUT_EXAMPLE)
    assert not new, f"public names without a runnable Examples section: {new}"
    done = sorted(WITHOUT_EXAMPLE - missing)
    assert not done, f"these now have examples (or are gone): remove them from WITHOUT_EXAMPLE: {done}"
