"""Generate the API reference pages from the package's ``__all__`` lists (run by ``conf.py`` at build time).

Every public module (no underscore in its dotted name, with an ``__all__``) gets a page listing its names in
an autosummary table; autosummary writes one page per name from its docstring. A name that a module only
re-exports (the object is documented in the module where ``__all__`` first lists it, e.g. ``mixeval.lmer``
is ``mixeval.mixed.lmer``) is listed with a link to that page instead of a second copy. New names appear
by themselves: add them to ``__all__``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types
from pathlib import Path

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


def home_of(modules: list[str]) -> dict[int, str]:
    """Object id -> the module that documents it: the deepest module whose ``__all__`` lists it."""
    home: dict[int, str] = {}
    for module_name in sorted(modules, key=lambda m: (-m.count("."), m)):
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
    out = {}
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in public_names(module_name):
            obj = getattr(module, name)
            qualified = f"{module_name}.{name}"
            out[qualified] = home.get(id(obj), qualified) if _documentable(obj) else qualified
    return out


def _title(text: str, char: str = "=") -> str:
    return f"{text}\n{char * len(text)}\n"


def module_page(module_name: str, entries: dict[str, str]) -> str:
    module = importlib.import_module(module_name)
    own, aliases = [], []
    for name in public_names(module_name):
        target = entries[f"{module_name}.{name}"]
        (own if target == f"{module_name}.{name}" else aliases).append((name, target))
    lines = [_title(f"``{module_name}``"), f".. automodule:: {module_name}", "   :no-members:", "",
             f".. currentmodule:: {module_name}", ""]
    if own:
        lines += [".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
        lines += [f"   {name}" for name, _ in own] + [""]
    if aliases:
        lines += [_title("Also available here", "-"), "These names are documented where they are defined:", ""]
        lines += [f"- ``{module_name}.{name}``: :py:obj:`{target}`" for name, target in aliases] + [""]
    del module
    return "\n".join(lines)


def write_api(outdir: Path) -> list[str]:
    """Write ``<outdir>/<module>.rst`` for every public module and ``index.rst``; returns the modules."""
    outdir.mkdir(parents=True, exist_ok=True)
    modules = public_modules()
    entries = reference_entries(modules)
    for module_name in modules:
        _write_if_changed(outdir / f"{module_name}.rst", module_page(module_name, entries))
    index = [_title("API reference"),
             "Generated from the ``__all__`` of every public module; each entry is the object's docstring with",
             "its runnable example. Names re-exported elsewhere (``mixeval.lmer`` is ``mixeval.mixed.lmer``)",
             "are documented once, where they are defined.", "",
             ".. toctree::", "   :maxdepth: 1", ""] + [f"   {m}" for m in modules] + [""]
    _write_if_changed(outdir / "index.rst", "\n".join(index))
    _remove_stale(outdir, modules, set(entries.values()))
    return modules


def _remove_stale(outdir: Path, modules: list[str], documented: set[str]) -> None:
    """Delete pages of modules and names that are no longer public (autosummary never does)."""
    for page in outdir.glob("*.rst"):
        if page.stem != "index" and page.stem not in modules:
            page.unlink()
    for stub in (outdir / "generated").glob("*.rst"):
        if stub.stem not in documented:
            stub.unlink()


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
