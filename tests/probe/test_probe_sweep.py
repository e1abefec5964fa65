"""Issue 38's sweep: every probe of :mod:`probe_table` is GOOD (ran, or refused naming the column, argument or
fix with exit code 2), never ROUGH (a misleading message) nor BAD (a traceback, a wrong number, data dropped or an
input accepted that should be refused).

Run ``python3 tests/probe/test_probe_sweep.py`` for the table of classes (and the count of each).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from probe_harness import classify, run, write_inputs
from probe_logs import write_logs
from probe_table import ISSUE_38, OTHER_BRANCH, PROBES


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("probe")
    return {**write_inputs(root), **write_logs(root)}


def _params():
    for probe in PROBES:
        marks = [pytest.mark.xfail(strict=True, reason=f"fixed on branch {OTHER_BRANCH[probe.id]}")] \
            if probe.id in OTHER_BRANCH else []
        yield pytest.param(probe, id=probe.id, marks=marks)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("probe", _params())
def test_probe_is_good(probe, inputs):
    kind, why = classify(probe, run(probe, inputs), inputs)
    assert kind == "GOOD", f"{kind}: {why}"


def test_probe_ids_are_unique_and_the_issue_is_covered():
    ids = [p.id for p in PROBES]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    assert len(ids) >= 290
    missing = {case: [i for i in held if i not in ids] for case, held in ISSUE_38.items()}
    assert not {k: v for k, v in missing.items() if v}
    assert set(OTHER_BRANCH) <= set(ids)


def test_the_probes_cover_every_command():
    from mixeval.cli import COMMANDS

    used = {p.argv[0] for p in PROBES if p.argv}
    assert set(COMMANDS) <= used, set(COMMANDS) - used


if __name__ == "__main__":  # the sweep's table: python3 tests/probe/test_probe_sweep.py [tmpdir]
    import tempfile
    import warnings

    warnings.simplefilter("ignore")
    root = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
    files = {**write_inputs(root), **write_logs(root)}
    counts: Counter = Counter()
    for probe in PROBES:
        kind, why = classify(probe, run(probe, files), files)
        counts[kind] += 1
        other = f" [{OTHER_BRANCH[probe.id]}]" if probe.id in OTHER_BRANCH else ""
        if kind != "GOOD" or "-v" in sys.argv:
            print(f"{kind:5} {probe.id}{other}: {why}")
    print(dict(counts), "of", len(PROBES))
