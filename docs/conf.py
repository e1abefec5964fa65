"""Sphinx configuration of the mixeval documentation.

Build (from the repository root; offline, warnings are errors)::

    python3 -m pip install -e ".[docs]"
    python3 -m sphinx -W --keep-going -b html docs docs/_build/html             # pages executed once, then cached
    python3 -m sphinx -j auto -W --keep-going -b html docs docs/_build/html     # parallel (as CI): no cache

At build time this file (1) writes the API reference from the package's ``__all__`` lists
(``_ext/apigen.py`` -> ``api/``), (2) puts the "Coming from R" table and examples, rendered from
their records (``coming_from_r.py``), into that page, and (3) copies the committed, executed notebooks into
``_generated/notebooks`` so that myst-nb renders them with their outputs (they are not executed); the
MyST-notebook pages (Getting Started, guides, "Coming from R") are executed (see ``nb_execution_mode``).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS))
# The kernel that executes the pages imports the package of this checkout, as the build does.
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])

# Warnings on the executed pages are shown as the reader would want them: the class and the message, wrapped, with
# no file path of the machine that built the site and no source line (Python's default prints both). The kernel
# runs this at start-up (an IPython profile of the build's own, so the reader's profile is not touched).
WARNING_FORMAT = """import sys, textwrap, warnings


def _show_warning(message, category, filename, lineno, file=None, line=None):
    text = f"{category.__name__}: {message}"
    print("\\n".join(textwrap.fill(part, 100) for part in text.splitlines()), file=sys.stderr)


warnings.showwarning = _show_warning
"""
_IPYTHON = DOCS / "_build" / ".ipython"
(_IPYTHON / "profile_default" / "startup").mkdir(parents=True, exist_ok=True)
(_IPYTHON / "profile_default" / "startup" / "00-mixeval-docs-warnings.py").write_text(WARNING_FORMAT)
os.environ["IPYTHONDIR"] = str(_IPYTHON)

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import mixeval  # noqa: E402

import apigen  # noqa: E402
import coming_from_r  # noqa: E402

project = "mixeval"
author = "the mixeval authors"
copyright = "2026, the mixeval authors"
release = mixeval.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "mathjax_offline",             # _ext: sphinx-mathjax-offline (MathJax 3 in _static, no network), parallel-safe
    "numpydoc",
    "myst_nb",
]

# ----------------------------------------------------------------------------- generated sources
GENERATED = DOCS / "_generated"
GENERATED.mkdir(exist_ok=True)
apigen.write_api(DOCS / "api")
(GENERATED / "notebooks").mkdir(exist_ok=True)
for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
    target = GENERATED / "notebooks" / nb.name
    if not target.exists() or target.read_bytes() != nb.read_bytes():
        shutil.copyfile(nb, target)

# ----------------------------------------------------------------------------- sources
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "_ext", "**.ipynb_checkpoints", "_generated/*.md"]
master_doc = "index"
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# Pages written as MyST notebooks (front matter ``file_format: mystnb``: Getting Started, the guides, "Coming
# from R") are executed at build time, so every example shows its output; the results are cached in
# ``_build/.jupyter_cache`` (an unchanged page is not run again). The chapter notebooks are committed executed
# and never run here.
nb_execution_mode = "cache"          # a parallel build (sphinx -j N) executes every page instead: _parallel_safe
nb_execution_excludepatterns = ["_generated/notebooks/*"]
nb_execution_raise_on_error = True  # an example that fails fails the build
nb_execution_show_tb = True
nb_execution_timeout = 600
nb_execution_in_temp = True         # files an example writes go to a temporary directory
nb_merge_streams = True
suppress_warnings = ["mystnb.unknown_mime_type"]

# ----------------------------------------------------------------------------- API
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": False, "show-inheritance": True}
autodoc_typehints = "none"          # numpydoc's Parameters sections carry the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# A summary is the docstring's first sentence; "book Eq. 3.4" and "Def. 2.1" do not end one.
from sphinx.ext import autosummary as _autosummary  # noqa: E402

_autosummary.WELL_KNOWN_ABBREVIATIONS = (*_autosummary.WELL_KNOWN_ABBREVIATIONS, " Eq.", " Def.", " Alg.",
                                         " Sec.", " Fig.", " Tab.", " cf.")


def _constant_docs(app, what, name, obj, options, lines) -> None:
    """A public constant documented where it is re-exported gets the ``#:`` comment of its definition (autodoc
    would show the docstring of its type, "Built-in immutable sequence.")."""
    if what == "data" and name.startswith("mixeval."):
        doc = apigen.attribute_doc(name)
        if doc:
            lines[:] = [*doc, ""]


# ----------------------------------------------------------------------------- HTML
html_theme = "pydata_sphinx_theme"
html_title = f"mixeval {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
    "header_links_before_dropdown": 6,  # Getting started ... API reference in the top bar, the rest under "More"
}
html_sidebars = {"**": ["sidebar-nav-bs"],  # pages without sub-pages: no empty "Section Navigation"
                 **{page: [] for page in ("index", "getting_started", "coming_from_r", "which_test", "performance",
                                          "changelog", "contributing", "faq", "citing", "api/index")}}
html_show_sourcelink = False

# ----------------------------------------------------------------------------- method notes
# Pages other contributors drop into docs/ (e.g. a note on a default and its simulation) are listed on the
# "Method notes" page automatically, so that no page is left outside the table of contents.
SITE_PAGES = {"index", "getting_started", "coming_from_r", "which_test", "notebooks", "changelog", "contributing",
              "method_notes", "spark", "faq", "citing", "architecture", "performance"}


def method_note_pages() -> list[str]:
    return sorted(p.stem for p in DOCS.glob("*.md") if p.stem not in SITE_PAGES)


def _add_method_notes(app, docname: str, source: list[str]) -> None:
    if docname == "method_notes":
        entries = "\n".join(["spark", *method_note_pages()])
        source[0] += f"\n\n```{{toctree}}\n:maxdepth: 1\n:hidden:\n\n{entries}\n```\n"
        source[0] += "".join(f"\n- [{name.replace('_', ' ')}]({name}.md)" for name in method_note_pages()) + "\n"


ROWS_MARKER = "<!-- coming-from-r-rows: conf.py replaces this line with coming_from_r.render() -->"


def _add_coming_from_r_rows(app, docname: str, source: list[str]) -> None:
    if docname == "coming_from_r":
        if ROWS_MARKER not in source[0]:
            raise ValueError(f"coming_from_r.md lost its marker line {ROWS_MARKER!r}")
        source[0] = source[0].replace(ROWS_MARKER, coming_from_r.render())
        for path in [DOCS / "coming_from_r.py", *sorted((DOCS / "r_output").glob("*"))]:
            app.env.note_dependency(str(path))  # a changed row or R output rebuilds the page


def _parallel_safe(app, config) -> None:
    """``sphinx -j N`` (N > 1; CI builds with ``-j auto``): execute the pages without the jupyter-cache database,
    whose SQLite file the parallel readers would write at once ("database is locked"); a fresh build has no
    cache to reuse anyway."""
    if app.parallel > 1 and config.nb_execution_mode == "cache":
        config.nb_execution_mode = "force"


def setup(app):
    app.connect("config-inited", _parallel_safe)
    app.connect("autodoc-process-docstring", _constant_docs)
    app.connect("source-read", _add_method_notes)
    app.connect("source-read", _add_coming_from_r_rows)
