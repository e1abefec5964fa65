"""BLAS threads while the engine works: one for small dense systems, the configured number for large ones."""

from __future__ import annotations

import contextlib
import functools

from threadpoolctl import ThreadpoolController

__all__ = ["single_threaded_blas", "blas_threads_for", "limit_threads_per_process", "THREADED_ROWS"]

#: dense factorisations of at least this many rows (tens of milliseconds and more) run on the BLAS's own thread
#: count; below, one thread. On an idle 2-core machine two threads factor and invert 768-3,000 rows 1.5-1.7x
#: faster, and below ~500 rows the gain is small against what thread
#: oversubscription costs under load (a factorisation several times its single-threaded time); the many
#: small systems of refits and profiles stay on one thread, and parallel-refit workers are capped at one
THREADED_ROWS = 1024


@functools.lru_cache(maxsize=1)
def _state() -> tuple[ThreadpoolController, int]:
    """The controller of the loaded BLAS libraries (inspected once) and their thread count at that moment,
    before the engine limits it (what ``OPENBLAS_NUM_THREADS`` etc. set)."""
    controller = ThreadpoolController()
    counts = [lib.num_threads for lib in controller.select(user_api="blas").lib_controllers]
    return controller, max(counts, default=1)


_MAX_THREADS: list[int | None] = [None]


def limit_threads_per_process(n: int) -> None:
    """Cap the threads of the large factorisations in this process (worker processes of parallel refits
    call it with 1: the processes already use the cores)."""
    _MAX_THREADS[0] = int(n)


def _controller() -> ThreadpoolController:
    return _state()[0]


def _configured_threads() -> int:
    cap = _MAX_THREADS[0]
    return _state()[1] if cap is None else min(cap, _state()[1])


def single_threaded_blas():
    """Context manager: BLAS on one thread. The engine's dense systems are mostly small (tens to a few hundred
    rows), where multi-threaded BLAS only adds overhead, and under load thread oversubscription makes a
    200 x 200 Cholesky factorisation 100 times slower.

    Examples
    --------
    >>> import numpy as np
    >>> with single_threaded_blas():
    ...     factor = np.linalg.cholesky(4.0 * np.eye(3))
    >>> float(factor[0, 0])
    2.0
    """
    return _controller().limit(limits=1, user_api="blas")


def blas_threads_for(rows: int):
    """Context manager for one dense factorisation of ``rows`` rows: the configured BLAS threads when
    ``rows >= THREADED_ROWS`` (an ``O(rows^3)`` factorisation of seconds, where threads pay on an idle
    machine), otherwise nothing changes.

    Set the BLAS's own variable (``OPENBLAS_NUM_THREADS=1``) to keep every factorisation on one thread,
    e.g. when many fits run in parallel processes.
    """
    threads = _configured_threads()
    if rows < THREADED_ROWS or threads <= 1:
        return contextlib.nullcontext()
    return _controller().limit(limits=threads, user_api="blas")
