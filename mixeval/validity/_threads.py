"""Run small dense linear algebra on one BLAS thread.

Fitting many GAMs means thousands of operations on matrices of a few dozen rows. OpenBLAS
threads gain nothing on such sizes and, on a busy machine, make each call 50-100 times
slower while the threads wait for one another. :func:`single_blas_thread` limits every
OpenBLAS library loaded in the process (numpy's and scipy's copies) to one thread for the
duration of a block, using ``threadpoolctl`` when it is installed and ``ctypes`` otherwise.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator

__all__ = ["single_blas_thread"]

_SETTERS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_",
            "scipy_openblas_set_num_threads")
_GETTERS = ("openblas_get_num_threads", "scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
            "scipy_openblas_get_num_threads")
_libs: list[tuple[object, object]] | None = None


def _openblas_libs() -> list[tuple[object, object]]:
    global _libs
    if _libs is not None:
        return _libs
    found: list[tuple[object, object]] = []
    paths: set[str] = set()
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 6 and "openblas" in parts[-1].lower() and ".so" in parts[-1]:
                    paths.add(parts[-1])
    except OSError:
        paths = set()
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        setter = next((getattr(lib, s) for s in _SETTERS if hasattr(lib, s)), None)
        getter = next((getattr(lib, g) for g in _GETTERS if hasattr(lib, g)), None)
        if setter is not None and getter is not None:
            found.append((setter, getter))
    _libs = found
    return found


@contextlib.contextmanager
def single_blas_thread() -> Iterator[None]:
    """Context manager: BLAS on one thread inside the block, previous settings restored after."""
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-not-found]
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        with threadpool_limits(limits=1, user_api="blas"):
            yield
        return
    import numpy  # noqa: F401  (make sure numpy's and scipy's BLAS are loaded before scanning)
    import scipy.linalg  # noqa: F401

    libs = _openblas_libs()
    previous = []
    for setter, getter in libs:
        try:
            previous.append(int(getter()))
            setter(1)
        except Exception:  # pragma: no cover - exotic builds
            previous.append(None)
    try:
        yield
    finally:
        for (setter, _), n in zip(libs, previous):
            if n is not None:
                setter(n)
