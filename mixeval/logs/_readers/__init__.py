"""Readers of evaluation-harness logs into mixeval's long format.

Every reader returns one row per model x item x repeat with the columns

* ``model``, ``task``, ``item`` (strings), ``repeat`` (int: an inspect_ai epoch, a HELM train trial, 0
  where the harness has none), ``item_hash`` (a hash of the question as the harness saw it, used to check
  that the same item id means the same question for every model; empty where the log has none),
* one float column per metric (an lm-evaluation-harness metric, an inspect_ai scorer, a HELM statistic),
* the fields of the item (lm-evaluation-harness ``doc``, inspect_ai sample ``metadata``) by their own
  names, usable as clusters or properties (a field whose name is taken by a column above gets the
  prefix ``doc_`` or ``metadata_``).

``frame.attrs["metrics"]`` lists the metric columns. :func:`read_logs` reads any mix of these files and
directories and checks item identity across models.
"""


from __future__ import annotations

from ._any import read_logs
from ._common import KEY_COLUMNS, check_items
from ._helm import read_helm
from ._inspect import inspect_value_to_float, read_inspect
from ._jsonl import read_jsonl
from ._lm_eval import read_lm_eval

__all__ = [
    "read_lm_eval",
    "read_inspect",
    "read_helm",
    "read_jsonl",
    "read_logs",
    "check_items",
    "inspect_value_to_float",
    "KEY_COLUMNS",
]
