"""The seed helpers of the uncertainty commands (defined with the paired-test plumbing in :mod:`._paired`)."""

from __future__ import annotations

from ._paired import SEED_HELP, resolve_seed

__all__ = ["SEED_HELP", "resolve_seed"]
