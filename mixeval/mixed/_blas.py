"""BLAS on one thread while the engine works (its dense systems are small)."""

from __future__ import annotations

import functools

from threadpoolctl import ThreadpoolController

__all__ = ["single_threaded_blas"]


@functools.lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    return ThreadpoolController()  # inspects the loaded BLAS libraries once


def single_threaded_blas():
    """Context manager: BLAS on one thread. The engine's dense systems are small (tens to a few hundred
    rows), where multi-threaded BLAS only adds overhead, and under load thread oversubscription makes a
    200 x 200 Cholesky factorisation 100 times slower."""
    return _controller().limit(limits=1, user_api="blas")
