"""Generate the API reference from the package's ``__all__`` lists (run by ``conf.py`` at build time).

The index (``api/index.rst``) lists every documented public name once, grouped by task as
``api_groups.GROUPS`` says, in autosummary tables; each group also has a page of its own (``api/group_<key>.rst``,
the sidebar's entries under "API reference"), whose table makes autosummary write one page per name from its
docstring.
The group of building blocks gets its own page (``api/internals.rst``). Every public module (no underscore in
its dotted name, with an ``__all__``) gets a short page: its docstring and links to its names. A name that a
module only re-exports (``mixeval.Study`` is ``mixeval.study.Study``), or a function that only wraps another
(``mixeval.lmer`` dispatches to ``mixeval.mixed.lmer`` and carries its docstring), is documented once; a
package's ``engine`` module (its building blocks for the other packages) is the home only of the names that no other
public module lists, and those go to the building blocks' page.
A new public name needs one entry in ``api_groups.GROUPS``: the build fails until it has one.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import types
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by file path (tests, check_site.py)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_groups  # noqa: E402

PACKAGE = "mixeval"


def public_modules(package: str = PACKAGE) -> list[str]:
    """Dotted names of the public modules that declare ``__all__`` (the package first)."""
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        module = importlib.import_module(info.name)
        if getattr(module, "__all__", None):
            names.append(info.name)
    return names


def public_names(module_name: str) -> list[str]:
    """The names of ``__all__`` that are documented objects (submodules and ``__version__`` excluded)."""
    module = importlib.import_module(module_name)
    return [n for n in module.__all__
            if not n.startswith("__") and not isinstance(getattr(module, n), types.ModuleType)]


def is_engine_module(module_name: str) -> bool:
    """Whether ``module_name`` is a package's ``engine`` module: the door through which other packages of mixeval
    reach its building blocks (``mixeval.mixed.engine``)."""
    return module_name.rpartition(".")[2] == "engine"


def home_of(modules: list[str]) -> dict[int, str]:
    """Object id -> the module that documents it: the deepest module whose ``__all__`` lists it; an ``engine``
    module only for names no other public module lists (``mixeval.uncertainty.confint``, not
    ``mixeval.mixed.engine.confint``: a name is documented where its users meet it)."""
    home: dict[int, str] = {}
    for module_name in sorted(modules, key=lambda m: (is_engine_module(m), -m.count("."), m)):
        module = importlib.import_module(module_name)
        for name in public_names(module_name):
            obj = getattr(module, name)
            if _documentable(obj):
                home.setdefault(id(obj), f"{module_name}.{name}")
    return home


def _documentable(obj) -> bool:
    return inspect.isclass(obj) or inspect.isfunction(obj) or inspect.isbuiltin(obj) or callable(obj)


def reference_entries(modules: list[str] | None = None) -> dict[str, str]:
    """Every public ``module.name`` -> the fully qualified name its reference page documents."""
    modules = modules or public_modules()
    home = home_of(modules)
    _document_wrappers_once(modules, home)
    out = {}
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in public_names(module_name):
            obj = getattr(module, name)
            qualified = f"{module_name}.{name}"
            out[qualified] = home.get(id(obj), qualified) if _documentable(obj) else qualified
    return out


def _document_wrappers_once(modules: list[str], home: dict[int, str]) -> None:
    """A public function that wraps another public one with its docstring (``functools.wraps``) documents both:
    the wrapped function's entries point to the wrapper, the more general entry point."""
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in public_names(module_name):
            obj = getattr(module, name)
            wrapped = getattr(obj, "__wrapped__", None)
            if wrapped is not None and id(wrapped) in home and inspect.getdoc(obj) == inspect.getdoc(wrapped):
                home[id(wrapped)] = home[id(obj)]


def documented_names(entries: dict[str, str] | None = None) -> list[str]:
    """The names that have a reference page (each once), fully qualified."""
    return sorted(set((entries or reference_entries()).values()))


def attribute_doc(qualified: str) -> list[str]:
    """The ``#:`` comment (or docstring) of a public constant where it is defined, e.g. ``ADJUSTMENTS`` in
    ``mixeval.significance._pairwise`` for ``mixeval.significance.ADJUSTMENTS``; ``[]`` when it has none.

    autodoc reads such comments only in the module it documents the name in, and falls back to the docstring of
    the value's type ("Built-in immutable sequence.") for a re-exported constant.
    """
    from sphinx.pycode import ModuleAnalyzer

    module_name, _, name = qualified.rpartition(".")
    module = importlib.import_module(module_name)
    value = getattr(module, name, None)
    candidates = [module_name]
    if hasattr(module, "__path__"):
        candidates += [info.name for info in pkgutil.walk_packages(module.__path__, module_name + ".")]
    for candidate in candidates:
        try:
            docs = ModuleAnalyzer.for_module(candidate).find_attr_docs()
        except Exception:  # noqa: BLE001 - a module without source (compiled) has no comments to read
            continue
        if ("", name) in docs and getattr(importlib.import_module(candidate), name, None) is value:
            return [line for line in docs[("", name)]]
    return []


def grouping_problems(entries: dict[str, str] | None = None) -> list[str]:
    """Documented names missing from ``api_groups.GROUPS``, listed twice, or listed but not public."""
    documented = set(documented_names(entries))
    listed = [f"{PACKAGE}.{n}" for _, _, names in api_groups.GROUPS.values() for n in names]
    problems = [f"{n} is public but in no group of docs/_ext/api_groups.py" for n in sorted(documented - set(listed))]
    problems += [f"{n} is in docs/_ext/api_groups.py but is not a documented public name"
                 for n in sorted(set(listed) - documented)]
    problems += [f"{n} is in more than one group of docs/_ext/api_groups.py"
                 for n in sorted({n for n in listed if listed.count(n) > 1})]
    return problems


def _title(text: str, char: str = "=") -> str:
    return f"{text}\n{char * len(text)}\n"


def _group_section(key: str, char: str = "-", toctree: bool = True) -> list[str]:
    """A group's title, sentence and autosummary table (which writes the entries' pages when ``toctree``)."""
    title, sentence, names = api_groups.GROUPS[key]
    options = ["   :toctree: generated"] if toctree else []
    return [_title(title, char), sentence, "", ".. autosummary::", *options, "   :nosignatures:", "",
            *(f"   {name}" for name in names), ""]


def group_pages() -> list[str]:
    """The page names of the groups by task (``api/group_<key>``), in the index's order."""
    return [f"group_{key}" for key in api_groups.GROUPS if key != api_groups.INTERNAL]


def index_page(modules: list[str]) -> str:
    """Every group's table on one page; the sidebar lists the groups (one page each), not ~300 names."""
    lines = [_title("API reference"),
             "Every public function and class, grouped by task; each page is the docstring with its runnable",
             "example. Names are relative to ``mixeval`` (``significance.emmeans`` is ``mixeval.significance.emmeans``;",
             "``mixeval.Study`` is ``mixeval.study.Study``). The :doc:`building blocks <internals>` that these are",
             "made of, and the :doc:`modules <modules>`, have pages of their own.", "",
             ".. currentmodule:: mixeval", ""]
    for key in api_groups.GROUPS:
        if key != api_groups.INTERNAL:
            lines += _group_section(key, toctree=False)
    lines += [".. toctree::", "   :hidden:", "", *(f"   {page}" for page in group_pages()), "   internals",
              "   modules", ""]
    return "\n".join(lines)


def group_page(key: str) -> str:
    """One group by task: its sentence and its names, whose pages it lists in the sidebar."""
    return "\n".join([".. currentmodule:: mixeval", "", *_group_section(key, char="=")])


def internals_page() -> str:
    title, sentence, _ = api_groups.GROUPS[api_groups.INTERNAL]
    lines = [_title(title), ".. currentmodule:: mixeval", ""]
    section = _group_section(api_groups.INTERNAL)
    return "\n".join(lines + section[2:])  # the page title replaces the section title


def module_page(module_name: str, entries: dict[str, str]) -> str:
    """The module's docstring and a link to the one reference entry of each of its public names."""
    lines = [_title(f"``{module_name}``"), f".. automodule:: {module_name}", "   :no-members:", ""]
    names = public_names(module_name)
    if names:
        lines += [_title("Public names", "-")]
        lines += [f"- :py:obj:`{module_name}.{name} <{entries[f'{module_name}.{name}']}>`" for name in names] + [""]
    return "\n".join(lines)


def modules_page(modules: list[str]) -> str:
    return "\n".join([_title("Modules"), "Each public module's description and the names it provides.", "",
                      ".. toctree::", "   :maxdepth: 1", "", *(f"   {m}" for m in modules), ""])


def write_api(outdir: Path) -> list[str]:
    """Write the index by task, the building blocks, and a page per public module; returns the modules."""
    outdir.mkdir(parents=True, exist_ok=True)
    modules = public_modules()
    entries = reference_entries(modules)
    problems = grouping_problems(entries)
    if problems:
        raise ValueError("the API index is incomplete:\n" + "\n".join(problems))
    for module_name in modules:
        _write_if_changed(outdir / f"{module_name}.rst", module_page(module_name, entries))
    _write_if_changed(outdir / "index.rst", index_page(modules))
    for key, page in zip([k for k in api_groups.GROUPS if k != api_groups.INTERNAL], group_pages()):
        _write_if_changed(outdir / f"{page}.rst", group_page(key))
    _write_if_changed(outdir / "internals.rst", internals_page())
    _write_if_changed(outdir / "modules.rst", modules_page(modules))
    _remove_stale(outdir, modules, set(entries.values()))
    return modules


def _remove_stale(outdir: Path, modules: list[str], documented: set[str]) -> None:
    """Delete pages of modules and names that are no longer public (autosummary never does)."""
    for page in outdir.glob("*.rst"):
        if page.stem not in ("index", "internals", "modules", *group_pages()) and page.stem not in modules:
            page.unlink()
    for stub in (outdir / "generated").glob("*.rst"):
        if stub.stem not in documented:
            stub.unlink()


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
