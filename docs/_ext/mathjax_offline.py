"""``sphinx-mathjax-offline`` (MathJax 3 copied into ``_static``: the site loads nothing from the network), declared
safe for parallel builds (``sphinx -j``): all it does is copy files once the build has finished."""

from __future__ import annotations

import importlib

__all__ = ["setup"]


def setup(app):
    importlib.import_module("sphinx-mathjax-offline").setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
