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
    return {m: (out / f"{m}.rst").read_text() for m in modules} | {"index": (out / "index.rst").read_text()}


def _autosummary_names(page: str) -> set[str]:
    block = re.search(r"\.\. autosummary::\n(?:   :.*\n)*\n((?:   \S.*\n)+)", page)
    return {line.strip() for line in block.group(1).splitlines()} if block else set()


def test_every_public_subpackage_has_a_page(pages):
    subpackages = [n for n in mixeval.__all__ if isinstance(getattr(mixeval, n), types.ModuleType)]
    for name in ["mixeval", *(f"mixeval.{n}" for n in subpackages)]:
        assert name in pages, name
        assert f"   {name}\n" in pages["index"]


def test_every_public_name_is_documented_once(pages):
    documented = {f"{m}.{n}" for m, page in pages.items() if m != "index" for n in _autosummary_names(page)}
    for module_name in apigen.public_modules():
        module = importlib.import_module(module_name)
        for name in module.__all__:
            if name.startswith("__") or isinstance(getattr(module, name), types.ModuleType):
                continue
            qualified = f"{module_name}.{name}"
            target = apigen.reference_entries()[qualified]
            assert target in documented, f"{qualified} has no reference entry (expected {target})"
            if target != qualified:  # a re-export links to the one entry
                assert f":py:obj:`{target}`" in pages[module_name], qualified


def test_re_exports_point_to_the_same_object():
    for public, target in apigen.reference_entries().items():
        if public != target:
            a_mod, _, a = public.rpartition(".")
            b_mod, _, b = target.rpartition(".")
            assert getattr(importlib.import_module(a_mod), a) is getattr(importlib.import_module(b_mod), b)


def test_top_level_names_are_reachable(pages):
    entries = apigen.reference_entries()
    assert entries["mixeval.Study"] == "mixeval.study.Study"    # a re-export: documented once, where defined
    assert "Study" not in _autosummary_names(pages["mixeval"])
    assert ":py:obj:`mixeval.study.Study`" in pages["mixeval"]


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
