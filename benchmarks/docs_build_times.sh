#!/usr/bin/env bash
# Clean documentation builds, parallel (-j 2) then serial (-j 1), one after the other, each timed (wall, CPU);
# outputs under /tmp. Run from anywhere: bash benchmarks/docs_build_times.sh > benchmarks/results/docs_build_times.txt
cd "$(dirname "$0")/.."
for j in 2 1; do
  rm -rf /tmp/mixeval_docs_t$j
  echo "j=$j start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "j=$j wall %e s, user %U s, sys %S s (this process and its waited-for children)" nice -n 5 python3 -m sphinx -j $j -W --keep-going -q -b html -d /tmp/mixeval_docs_t$j/doctrees docs /tmp/mixeval_docs_t$j/html 2>&1 | grep -v "Kernel is running"
  echo "j=$j end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
