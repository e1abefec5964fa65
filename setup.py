"""Build hook for the optional compiled resampling kernels (everything else is in pyproject.toml).

The extension is optional: where no C compiler is available the install still succeeds and
mixeval uses the numpy implementation of the same kernels (`mixeval.resampling.backend()`
says which one runs).
"""

import sys

from setuptools import Extension, setup

flags = ["/O2"] if sys.platform == "win32" else ["-O3", "-std=c99"]

setup(
    ext_modules=[
        Extension(
            "mixeval.resampling._ckernels",
            sources=["mixeval/resampling/_ckernels.c"],
            extra_compile_args=flags,
            optional=True,
        )
    ]
)
