"""Vectorised, chunked resampling kernels (the only place randomness is drawn).

Two kernels serve every paired test:

* :func:`sign_flip_sums` - for ``R`` random swap patterns ``b in {0,1}^n`` the
  column sums ``sum_i b_i D[i, :]``. Bits come as random bytes; each byte covers
  8 items and is looked up in a per-group table of the 256 possible partial sums,
  so the work per resample is ``n / 8`` table look-ups instead of ``n``
  multiply-adds, and randomness costs one bit per item.
* :func:`bootstrap_sums` - for ``R`` bootstrap resamples (``n`` item indices drawn
  uniformly with replacement) the column sums ``sum_i c_i S[i, :]`` where ``c`` are
  the multinomial resample counts.

Both work in chunks of resamples whose size depends only on the data shape, so
memory stays bounded and identical seeds give identical output.

Backends. The resamples are always those of the numpy streams documented in the two
functions; the optional compiled extension ``_ckernels`` (built at install time where a
C compiler is available) runs the same streams faster: for the permutation test it sums
numpy's random bytes in one pass; for the bootstrap it splits numpy's words into indices,
gathers and sums in one pass, and for a single statistic with ``n**m > 2**32`` it also
draws the words itself, running numpy's SFC64 generator inline and numpy's own
bounded-integer algorithm on it. The compiled loops release the GIL, so chunks run on all
cores. :func:`backend` says which implementation runs; ``MIXEVAL_KERNELS=numpy`` forces
numpy. The two backends draw the same resamples (tested for equality); their sums differ
only in the order of floating-point additions (about 1e-15 relative), which the p-values'
tie tolerance absorbs.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from .._progress import progress
from .._random import as_generator
from .._validation import require_positive_int
from ..errors import InputError

try:  # the optional compiled loops (built by setup.py where a C compiler is available)
    from . import _ckernels
except ImportError:  # pragma: no cover - exercised on installs without a compiler
    _ckernels = None

__all__ = [
    "backend",
    "as_generator",
    "sign_flip_sums",
    "bootstrap_sums",
    "bootstrap_indices",
    "index_digits",
    "spawn_sfc64",
    "chunk_sizes",
]

#: Elements (resamples x items) handled per chunk; bounds the memory of a kernel.
CHUNK_ELEMENTS = 1 << 22
#: Elements per chunk of the bootstrap kernel (one child generator per chunk); small enough that
#: a chunk's indices and gathered values stay in the CPU caches.
BOOTSTRAP_CHUNK_ELEMENTS = 1 << 18
#: Up to this many statistics per item the compiled kernel gathers and sums rows; for more, resample
#: counts times S (BLAS) is faster, and the numpy path runs (the same resamples either way).
COMPILED_MAX_COLUMNS = 6
#: Chunks per call of the fused compiled kernel (fewer calls from Python; the output does not change).
FUSED_GROUP = 4
#: At most this many threads run the bootstrap kernel; below PARALLEL_MIN_ELEMENTS it runs serially.
MAX_WORKERS = 8
PARALLEL_MIN_ELEMENTS = 1 << 22

#: Environment variable that selects the kernels: "numpy" forces the numpy implementation.
BACKEND_VARIABLE = "MIXEVAL_KERNELS"

# _BITS[v, j] = j-th bit of the byte value v (little-endian bit order).
_BITS = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)


def backend() -> str:
    """Which implementation runs the resampling kernels: ``"compiled"`` or ``"numpy"``.

    ``"compiled"`` when the optional C extension was built at install time (it needs a C
    compiler) and the environment variable ``MIXEVAL_KERNELS`` is not ``"numpy"``. Both
    backends draw the same resamples from the same seed; the compiled one is several
    times faster on large problems.

    Examples
    --------
    >>> from mixeval.resampling import backend
    >>> backend() in ("compiled", "numpy")
    True
    """
    if _ckernels is None or os.environ.get(BACKEND_VARIABLE, "").strip().lower() == "numpy":
        return "numpy"
    return "compiled"


def chunk_sizes(n_resamples: int, n_items: int, elements: int = CHUNK_ELEMENTS) -> list[int]:
    """Split ``n_resamples`` into chunks of at most ``elements // n_items`` resamples.

    Examples
    --------
    >>> chunk_sizes(10, 4, elements=12)  # 3 resamples of 4 items per chunk of 12 elements
    [3, 3, 3, 1]
    """
    per = max(1, elements // max(1, n_items))
    full, rest = divmod(n_resamples, per)
    return [per] * full + ([rest] if rest else [])


def _progress_chunks(sizes: list[int], desc: str) -> Iterator[int]:
    return iter(progress(sizes, total=len(sizes), desc=desc))


def sign_flip_tables(D: np.ndarray) -> tuple[np.ndarray, int]:
    """Per-column look-up tables ``T[j, g, v] = sum_k bit_k(v) * D[8 g + k, j]``."""
    n, k = D.shape
    groups = -(-n // 8)
    padded = np.zeros((groups * 8, k))
    padded[:n] = D
    blocks = padded.reshape(groups, 8, k)
    # (k, groups, 256): tables[j, g, v] = sum_b _BITS[v, b] * blocks[g, b, j]
    tables = np.einsum("vb,gbj->jgv", _BITS, blocks, optimize=True)
    return np.ascontiguousarray(tables), groups


def sign_flip_sums(D: np.ndarray, n_resamples: int, rng: np.random.Generator, *, desc: str = "permutation") -> np.ndarray:
    """Column sums of ``D`` over random item subsets (each item kept with probability 1/2).

    Returns an array of shape ``(n_resamples, D.shape[1])`` whose row ``r`` is
    ``sum_i b_ri D[i, :]`` with independent fair bits ``b_ri``.

    Notes
    -----
    The resamples are split into chunks (:func:`chunk_sizes`); chunk by chunk, in order,
    ``rng.integers(0, 256, size=(size, ceil(n / 8)), dtype=uint8)`` gives the bits: bit
    ``b`` (least significant first) of byte ``j`` of row ``r`` is ``b_r,8j+b``. The
    compiled backend sums chunks on worker threads while the next chunk is drawn, so the
    draws, and the output, do not depend on the number of threads.
    """
    n_resamples = require_positive_int(n_resamples, "n_resamples")
    if backend() == "compiled":
        return _sign_flip_sums_compiled(D, n_resamples, rng, desc=desc)
    tables, groups = sign_flip_tables(D)
    k = D.shape[1]
    flat = tables.reshape(k, groups * 256)
    offsets = (np.arange(groups, dtype=np.intp) * 256)[None, :]
    out = np.empty((n_resamples, k))
    start = 0
    for size in _progress_chunks(chunk_sizes(n_resamples, groups * 8), desc):
        draws = rng.integers(0, 256, size=(size, groups), dtype=np.uint8)
        idx = draws.astype(np.intp)
        idx += offsets
        for j in range(k):
            out[start:start + size, j] = np.take(flat[j], idx).sum(axis=1)
        start += size
    return out


def _sign_flip_sums_compiled(D: np.ndarray, n_resamples: int, rng: np.random.Generator, *, desc: str) -> np.ndarray:
    """:func:`sign_flip_sums` with the compiled loop: the same bytes are drawn from ``rng``, chunk
    by chunk in order on this thread, while worker threads sum the chunks already drawn."""
    n, k = D.shape
    groups = -(-n // 8)
    DT = np.zeros((k, groups * 8))
    DT[:, :n] = D.T
    out = np.empty((n_resamples, k))
    sizes = chunk_sizes(n_resamples, groups * 8)
    n_workers = 1 if n_resamples * n < PARALLEL_MIN_ELEMENTS else min(_workers(), len(sizes))
    start = 0
    if n_workers == 1:
        for size in _progress_chunks(sizes, desc):
            draws = rng.integers(0, 256, size=(size, groups), dtype=np.uint8)
            _ckernels.sign_flip_sums(draws, DT, size, out[start:start + size])
            start += size
        return out
    pending: deque[Future] = deque()
    with ThreadPoolExecutor(max_workers=n_workers) as pool:
        for size in _progress_chunks(sizes, desc):
            draws = rng.integers(0, 256, size=(size, groups), dtype=np.uint8)
            pending.append(pool.submit(_ckernels.sign_flip_sums, draws, DT, size, out[start:start + size]))
            start += size
            while len(pending) > 2 * n_workers:  # bounds the memory held by drawn chunks
                pending.popleft().result()
        for future in pending:
            future.result()
    return out


def sign_flip_sums_all(D: np.ndarray, *, desc: str = "exact permutation") -> np.ndarray:
    """Like :func:`sign_flip_sums` but over all ``2**n`` keep/swap patterns (pattern ``r``
    keeps item ``i`` iff bit ``i`` of ``r`` is set); for exact permutation tests."""
    n, k = D.shape
    if n > 24:
        raise InputError(f"exact enumeration needs 2**n patterns; n = {n} items is too many (at most 24).")
    tables, groups = sign_flip_tables(D)
    flat = tables.reshape(k, groups * 256)
    offsets = (np.arange(groups, dtype=np.intp) * 256)[None, :]
    total = 1 << n
    out = np.empty((total, k))
    start = 0
    for size in _progress_chunks(chunk_sizes(total, groups * 8), desc):
        r = np.arange(start, start + size, dtype=np.int64)[:, None]
        idx = ((r >> (8 * np.arange(groups, dtype=np.int64))[None, :]) & 255).astype(np.intp) + offsets
        for j in range(k):
            out[start:start + size, j] = np.take(flat[j], idx).sum(axis=1)
        start += size
    return out


def _workers() -> int:
    """Threads used by the bootstrap kernel (does not affect the results)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - platforms without sched_getaffinity
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cpus))


def spawn_sfc64(rng: np.random.Generator, k: int) -> list[np.random.SFC64]:
    """``k`` independent SFC64 bit generators seeded by ``k`` children of ``rng``'s SeedSequence.

    The children are ``rng.bit_generator.seed_seq.spawn(k)`` (what ``rng.spawn(k)`` would seed
    its children with; for an int seed ``s`` turned into ``np.random.default_rng(s)`` they are
    ``np.random.SeedSequence(s).spawn(k)``), each seeding ``np.random.SFC64``: numpy's fast
    256-bit generator (Doty-Humphrey's Small Fast Chaotic PRNG, with a 64-bit counter), which
    the compiled kernel can run inline. A bit generator without a SeedSequence (legacy
    seeding) instead seeds a fresh SeedSequence with four 63-bit integers drawn from ``rng``.
    """
    seq = getattr(rng.bit_generator, "seed_seq", None)
    if not isinstance(seq, np.random.SeedSequence):
        entropy = [int(x) for x in rng.integers(0, 2**63 - 1, size=4, dtype=np.int64)]
        seq = np.random.SeedSequence(entropy)
    return [np.random.SFC64(child) for child in seq.spawn(k)]


def index_digits(n: int) -> int:
    """Indices per random draw: the largest ``m <= 3`` with ``n**m < 2**63`` (at least 1)."""
    for m in (3, 2):
        if n**m < 2**63:
            return m
    return 1


def bootstrap_indices(n: int, size: int, gen: np.random.Generator) -> np.ndarray:
    """A ``(size, n)`` matrix of item indices drawn uniformly with replacement from ``0..n-1``.

    Exact and cheaper than ``gen.integers(0, n, size=(size, n))``: with
    ``m = index_digits(n)`` (3 for ``n <= 2,097,151``, 2 up to ``n = 3,037,000,499``),
    each of ``h = ceil(size * n / m)`` draws ``v = gen.integers(0, n**m, size=h,
    dtype=int64)`` is uniform on ``[0, n^m)``, so its ``m`` base-``n`` digits are ``m``
    independent uniform indices. Digit ``j`` (most significant first) of all draws
    forms block ``j`` of a sequence of ``m * h`` indices; its first ``size * n``
    values fill the matrix row by row (one row per resample).
    """
    m = index_digits(n)
    total = size * n
    h = -(-total // m)
    v = gen.integers(0, n**m, size=h, dtype=np.int64)
    if m == 1:
        return v.reshape(size, n)
    idx = np.empty(m * h, dtype=np.int64)
    last = idx[(m - 1) * h:]
    for j in range(m - 1):
        p = n ** (m - 1 - j)
        digit = idx[j * h:(j + 1) * h]
        np.floor_divide(v, p, out=digit)
        np.multiply(digit, p, out=last)
        np.subtract(v, last, out=last if j == m - 2 else v)
    return idx[:total].reshape(size, n)


def _bootstrap_chunk(S: np.ndarray, cols: list[np.ndarray], size: int, gen: np.random.Generator,
                     compiled: bool) -> np.ndarray:
    """Column sums of ``S`` over ``size`` bootstrap resamples with indices from ``gen``
    (``compiled``: with the compiled kernel, for at most ``COMPILED_MAX_COLUMNS`` columns)."""
    n, k = S.shape
    if compiled and k <= COMPILED_MAX_COLUMNS:
        # the draws of bootstrap_indices, split into digits, gathered and summed in one pass
        m = index_digits(n)
        draws = gen.integers(0, n**m, size=-(-size * n // m), dtype=np.int64)
        out = np.empty((size, k))
        _ckernels.bootstrap_sums(draws, S, n, m, size, out)
        return out
    idx = bootstrap_indices(n, size, gen)
    if k <= 2:
        out = np.empty((size, k))
        buf = np.empty((size, n))
        for j in range(k):
            # indices are in range by construction; mode="clip" skips the bounds check
            np.take(cols[j], idx, out=buf, mode="clip")
            out[:, j] = buf.sum(axis=1)
        return out
    idx += (np.arange(size, dtype=np.int64) * n)[:, None]
    counts = np.bincount(idx.ravel(), minlength=size * n).reshape(size, n)
    return counts.astype(np.float64) @ S


def bootstrap_sums(S: np.ndarray, n_resamples: int, rng: np.random.Generator, *, desc: str = "bootstrap",
                   workers: int | None = None) -> np.ndarray:
    """Column sums of ``S`` over bootstrap resamples of its rows.

    Returns shape ``(n_resamples, S.shape[1])``; row ``r`` is ``sum_m S[I_rm, :]`` for
    ``n`` indices ``I_rm`` drawn uniformly with replacement from ``0..n-1``.

    Notes
    -----
    The resamples are split into consecutive chunks of
    ``max(1, BOOTSTRAP_CHUNK_ELEMENTS // n)`` resamples (the last one shorter), a
    partition that depends only on ``n_resamples`` and ``n``. Chunk ``c`` draws its
    indices with :func:`bootstrap_indices` from its own child generator
    ``np.random.Generator(spawn_sfc64(rng, n_chunks)[c])`` (SFC64 seeded by child ``c`` of
    ``rng``'s SeedSequence; for an int seed ``s`` passed through :func:`as_generator`,
    child ``c`` of ``np.random.SeedSequence(s).spawn(n_chunks)``), row ``r`` of the chunk
    being the ``n`` indices of one resample. The chunks are
    computed by up to ``workers`` threads (default: the available CPUs, at most
    ``MAX_WORKERS``; serial below ``PARALLEL_MIN_ELEMENTS`` resampled elements);
    numpy (and the compiled kernel, see :func:`backend`) releases the GIL, and the
    thread count changes only the speed: the output is identical for any number of
    threads. Memory is bounded by ``workers`` chunks of ``BOOTSTRAP_CHUNK_ELEMENTS``
    indices and gathered values. For one statistic the compiled kernel draws chunk
    ``c``'s words itself, from the state of its SFC64, exactly as
    ``integers(0, n**m, dtype=int64)`` does, ``FUSED_GROUP`` chunks per call.
    """
    n_resamples = require_positive_int(n_resamples, "n_resamples")
    S = np.ascontiguousarray(S, dtype=np.float64)
    n, k = S.shape
    cols = [np.ascontiguousarray(S[:, j]) for j in range(k)]
    sizes = chunk_sizes(n_resamples, n, BOOTSTRAP_CHUNK_ELEMENTS)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
    children = spawn_sfc64(rng, len(sizes))
    out = np.empty((n_resamples, k))
    compiled = backend() == "compiled"
    fused = compiled and _fused(n, k)
    tasks = _bootstrap_tasks(sizes, FUSED_GROUP if fused else 1)

    def run(task: tuple[int, int]) -> None:
        first, count = task
        size, start = sizes[first], starts[first]
        if not fused:
            out[start:start + size] = _bootstrap_chunk(S, cols, size, np.random.Generator(children[first]), compiled)
            return
        states = np.array([children[c].state["state"]["state"] for c in range(first, first + count)], dtype=np.uint64)
        _ckernels.bootstrap_sums_sfc64(states, S, n, index_digits(n), size, out[start:start + count * size])

    n_workers = _workers() if workers is None else require_positive_int(workers, "workers")
    if n_workers == 1 or len(tasks) == 1 or n_resamples * n < PARALLEL_MIN_ELEMENTS:
        for task in progress(tasks, total=len(tasks), desc=desc):
            run(task)
        return out
    with ThreadPoolExecutor(max_workers=min(n_workers, len(tasks))) as pool:
        for _ in progress(pool.map(run, tasks), total=len(tasks), desc=desc):
            pass
    return out


def _fused(n: int, k: int) -> bool:
    """Whether the compiled kernel (when it runs) draws the indices itself: one statistic, and
    draws in numpy's 64-bit range (see :func:`bootstrap_sums`)."""
    return k == 1 and hasattr(_ckernels, "bootstrap_sums_sfc64") and n ** index_digits(n) - 1 > 0xFFFFFFFF


def _bootstrap_tasks(sizes: list[int], group: int) -> list[tuple[int, int]]:
    """Units of work as ``(first chunk, number of chunks)``: up to ``group`` consecutive chunks
    of equal size per task."""
    tasks, c = [], 0
    while c < len(sizes):
        count = 1
        while count < group and c + count < len(sizes) and sizes[c + count] == sizes[c]:
            count += 1
        tasks.append((c, count))
        c += count
    return tasks


def bootstrap_counts(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """A ``(size, n)`` float matrix of multinomial bootstrap counts (rows sum to ``n``).

    Examples
    --------
    >>> counts = bootstrap_counts(5, 3, np.random.default_rng(0))
    >>> counts.shape, counts.sum(axis=1).tolist()
    ((3, 5), [5.0, 5.0, 5.0])
    """
    idx = rng.integers(0, n, size=(size, n))
    idx += (np.arange(size, dtype=idx.dtype) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)
