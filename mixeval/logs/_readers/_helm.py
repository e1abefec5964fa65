"""HELM per-instance statistics (``benchmark_output/runs/<suite>/<run>/per_instance_stats.json``)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ...errors import DroppedRowsWarning, InputError, caller_stacklevel
from ._common import _hash, _paths, check_items, frame_of_files

__all__ = ["read_helm"]


def _helm_task(run_name: str) -> str:
    """The run name without the model arguments: ``mmlu:subject=anatomy,model=openai_gpt2`` -> ``mmlu:subject=anatomy``."""
    head, _, args = run_name.partition(":")
    kept = [a for a in args.split(",") if a and not a.startswith(("model=", "model_deployment="))]
    return head + (":" + ",".join(kept) if kept else "")


def _helm_instances(run_dir: Path) -> list[dict[str, Any]]:
    """The instances of a run: ``instances.json``, else those of the requests in ``scenario_state.json``
    (what ``helm-run`` writes), else none."""
    try:
        if (run_dir / "instances.json").exists():
            return list(json.loads((run_dir / "instances.json").read_text()))
        if (run_dir / "scenario_state.json").exists():
            state = json.loads((run_dir / "scenario_state.json").read_text())
            found: dict[str, Any] = {}
            for request in state.get("request_states") or []:
                inst = request.get("instance") or {}
                found.setdefault(str(inst.get("id")), inst)
            return list(found.values())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{run_dir}: cannot read the HELM instances ({exc}).") from None
    return []


def _helm_run(run_dir: Path) -> tuple[list[dict[str, Any]], list[str]]:
    stats_path = run_dir / "per_instance_stats.json"
    try:
        instances_stats = json.loads(stats_path.read_text())
        spec = json.loads((run_dir / "run_spec.json").read_text()) if (run_dir / "run_spec.json").exists() else {}
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{run_dir}: cannot read HELM per-instance statistics ({exc}).") from None
    model = str((spec.get("adapter_spec") or {}).get("model") or "")
    if not model:
        raise InputError(f"{run_dir}: run_spec.json names no model (adapter_spec.model); it must lie beside "
                         "per_instance_stats.json.")
    task = _helm_task(str(spec.get("name") or run_dir.name))
    texts: dict[str, Any] = {}
    fields: dict[str, dict[str, Any]] = {}
    for inst in _helm_instances(run_dir):
        texts[str(inst.get("id"))] = [inst.get("input"), inst.get("references")]
        fields[str(inst.get("id"))] = {k: inst[k] for k in ("split", "sub_split") if inst.get(k) is not None}
    rows, perturbed = [], 0
    metrics: dict[str, Any] = {}
    for inst in instances_stats:
        if inst.get("perturbation"):
            perturbed += 1
            continue
        iid = str(inst["instance_id"])
        row = {"model": model, "task": task, "item": iid, "repeat": int(inst.get("train_trial_index", 0)),
               "item_hash": _hash(texts[iid]) if iid in texts else "", **fields.get(iid, {})}
        for stat in inst.get("stats", []):
            name = stat.get("name") or {}
            if name.get("perturbation"):
                continue
            if stat.get("count", 1) and stat.get("mean") is not None:
                row[name["name"]] = float(stat["mean"])
                metrics[name["name"]] = None
        rows.append(row)
    if perturbed:
        warnings.warn(f"{run_dir}: {perturbed} perturbed instances (HELM robustness/fairness runs) are not read; "
                      "the comparison uses the unperturbed ones.", DroppedRowsWarning, stacklevel=caller_stacklevel())
    return rows, list(metrics)


def read_helm(paths: str | Path | Iterable[str | Path], *, on_mismatch: str = "error") -> pd.DataFrame:
    """Read HELM per-instance statistics (``benchmark_output/runs/<suite>/<run>/per_instance_stats.json``).

    Parameters
    ----------
    paths : path or paths
        Run directories, ``per_instance_stats.json`` files, or directories searched recursively for them.
    on_mismatch : {"error", "drop"}
        See :func:`check_items`.

    Returns
    -------
    pandas.DataFrame
        ``model`` (``adapter_spec.model`` of ``run_spec.json``), ``task`` (the run name without
        ``model=``/``model_deployment=``), ``item`` (``instance_id``), ``repeat`` (``train_trial_index``),
        ``item_hash`` (of the instance's input and references in ``instances.json`` or, as ``helm-run``
        writes them, ``scenario_state.json``, where present), one
        column per statistic (its per-instance ``mean``; perturbed statistics are left out with a warning),
        and ``split``/``sub_split`` of the instances.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> run = pathlib.Path(tempfile.mkdtemp()) / "mmlu:subject=anatomy,model=openai_gpt2"; run.mkdir()
    >>> _ = (run / "run_spec.json").write_text(json.dumps(
    ...     {"name": run.name, "adapter_spec": {"model": "openai/gpt2"}}))
    >>> _ = (run / "per_instance_stats.json").write_text(json.dumps([
    ...     {"instance_id": f"id{i}", "train_trial_index": 0,
    ...      "stats": [{"name": {"name": "exact_match", "split": "test"}, "count": 1, "mean": float(i)}]}
    ...     for i in (0, 1)]))
    >>> print(read_helm(run)[["model", "task", "item", "exact_match"]].to_string(index=False))
          model                 task item  exact_match
    openai/gpt2 mmlu:subject=anatomy  id0          0.0
    openai/gpt2 mmlu:subject=anatomy  id1          1.0
    """
    runs = [path.parent if path.is_file() else path
            for path in _paths(paths, "per_instance_stats.json", "HELM per-instance statistics")]
    parts = ((str(run), *_helm_run(run)) for run in runs)
    return check_items(frame_of_files(parts, "HELM"), on_mismatch=on_mismatch)
