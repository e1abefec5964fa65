"""The project's seed helpers for the uncertainty commands (one import point across engine versions)."""

from __future__ import annotations

try:  # newer trees keep the paired-test plumbing (and the seed helper) in cli/_paired.py
    from ._paired import SEED_HELP, resolve_seed
except ImportError:  # pragma: no cover - depends on the tree
    from ..resampling._cli import SEED_HELP, resolve_seed

__all__ = ["SEED_HELP", "resolve_seed"]
