"""Timing helper shared by the benchmark scripts (run as ``python3 benchmarks/<script>.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best wall-clock seconds of ``repeat`` calls of ``fn`` and the last call's result."""
    best, out = float("inf"), None
    for _ in range(max(1, int(repeat))):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out
