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
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .._progress import progress
from .._validation import require_positive_int

__all__ = ["as_generator", "sign_flip_sums", "bootstrap_sums", "chunk_sizes"]

#: Elements (resamples x items) handled per chunk; bounds the memory of a kernel.
CHUNK_ELEMENTS = 1 << 22

# _BITS[v, j] = j-th bit of the byte value v (little-endian bit order).
_BITS = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)


def as_generator(random_state: object) -> np.random.Generator:
    """Return a numpy Generator from ``None``, an int seed, a SeedSequence or a Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (int, np.integer, np.random.SeedSequence)):
        if isinstance(random_state, bool):
            raise TypeError("`random_state` must be None, an int seed or a numpy Generator; got a bool.")
        if isinstance(random_state, (int, np.integer)) and random_state < 0:
            raise ValueError(f"`random_state` must be a non-negative int seed; got {random_state}.")
        return np.random.default_rng(random_state)
    raise TypeError(
        "`random_state` must be None, an int seed or a numpy.random.Generator; "
        f"got {type(random_state).__name__}."
    )


def chunk_sizes(n_resamples: int, n_items: int, elements: int = CHUNK_ELEMENTS) -> list[int]:
    """Split ``n_resamples`` into chunks of at most ``elements // n_items`` resamples."""
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
    """
    n_resamples = require_positive_int(n_resamples, "n_resamples")
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


def sign_flip_sums_all(D: np.ndarray, *, desc: str = "exact permutation") -> np.ndarray:
    """Like :func:`sign_flip_sums` but over all ``2**n`` keep/swap patterns (pattern ``r``
    keeps item ``i`` iff bit ``i`` of ``r`` is set); for exact permutation tests."""
    n, k = D.shape
    if n > 24:
        raise ValueError(f"exact enumeration needs 2**n patterns; n = {n} items is too many (at most 24).")
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


def bootstrap_sums(S: np.ndarray, n_resamples: int, rng: np.random.Generator, *, desc: str = "bootstrap") -> np.ndarray:
    """Column sums of ``S`` over bootstrap resamples of its rows.

    Returns shape ``(n_resamples, S.shape[1])``; row ``r`` is ``sum_m S[I_rm, :]`` for
    ``n`` indices ``I_rm`` drawn uniformly with replacement from ``0..n-1``.
    """
    n_resamples = require_positive_int(n_resamples, "n_resamples")
    n, k = S.shape
    out = np.empty((n_resamples, k))
    cols = [np.ascontiguousarray(S[:, j]) for j in range(k)]
    start = 0
    for size in _progress_chunks(chunk_sizes(n_resamples, n), desc):
        idx = rng.integers(0, n, size=(size, n))
        if k <= 2:
            for j in range(k):
                out[start:start + size, j] = np.take(cols[j], idx).sum(axis=1)
        else:
            idx += (np.arange(size, dtype=idx.dtype) * n)[:, None]
            counts = np.bincount(idx.ravel(), minlength=size * n).reshape(size, n)
            out[start:start + size] = counts.astype(np.float64) @ S
        start += size
    return out


def bootstrap_counts(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """A ``(size, n)`` float matrix of multinomial bootstrap counts (rows sum to ``n``)."""
    idx = rng.integers(0, n, size=(size, n))
    idx += (np.arange(size, dtype=idx.dtype) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)
