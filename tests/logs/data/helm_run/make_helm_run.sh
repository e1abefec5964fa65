#!/usr/bin/env bash
# HELM's own output for the tests: crfm-helm (tested with 0.5.16) runs its built-in `simple1` scenario on its
# built-in `simple/model1` (a client that answers from the prompt's words), offline, 2 instances, 2 train
# trials (the repeats). Run from the repository root in an environment with `pip install crfm-helm`:
#     bash tests/logs/data/helm_run/make_helm_run.sh
# (simple1 runs 10 test instances whatever --max-eval-instances says.) The run directory's run_spec.json,
# per_instance_stats.json, stats.json (HELM's aggregates, which the test compares with) and scenario_state.json
# (the instances: read_helm takes the item hash from them) are copied here without indentation.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
(cd "$work" && helm-run --run-entries simple1:model=simple/model1 --suite test --max-eval-instances 2 \
    --num-train-trials 2 -o "$work/benchmark_output" > "$work/helm-run.log" 2>&1)
run="$work/benchmark_output/runs/test/simple1:model=simple_model1"
dest="$here/simple1"  # HELM names the run simple1:model=simple_model1; no colon in the repository
rm -rf "$dest" && mkdir -p "$dest"
for f in run_spec.json per_instance_stats.json stats.json scenario_state.json; do  # the same JSON, unindented
    python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], "w"), separators=(",", ":"))' \
        "$run/$f" "$dest/$f"
done
rm -rf "$work"
