#!/usr/bin/env bash
# Diagnostic (issue 8, session 12): GPU memory of `kforge eval` on a task with
# 6.4 GB inputs and outputs (KernelBench L1 19_ReLU, its reference renamed
# ModelNew as the candidate), with the harness of HARNESS_A and HARNESS_B (two
# directories holding kforge_harness), peak device memory polled by nvidia-smi.
#   OUT=... HARNESS_A=dir HARNESS_B=dir bash bench/device/diag_big_task_memory.sh
set -uo pipefail
OUT=${OUT:-/tmp/diag_big_task_memory}
mkdir -p "$OUT"
export TMPDIR=/dev/shm KFORGE_CACHE_DIR=/dev/shm/kforge-cache PYTHONUNBUFFERED=1
K=$(realpath ${KFORGE:-.devcarry/kforge})
TASK=.devcarry/kernelbench/level1/19_ReLU.py
sed 's/\bModel\b/ModelNew/g' "$TASK" >/dev/shm/19_ReLU_candidate.py
for label in A B; do
  dir_var=HARNESS_$label
  export KFORGE_HARNESS_DIR=${!dir_var}
  (while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits; sleep 0.5; done) \
    >"$OUT/mem_$label.txt" &
  poll=$!
  "$K" eval --task "$TASK" --candidate /dev/shm/19_ReLU_candidate.py --device cuda \
    --no-baseline-cache --json --set eval.timing.max_seconds=5 >"$OUT/eval_$label.json" 2>>"$OUT/eval_$label.log"
  rc=$?
  kill $poll
  peak=$(sort -n "$OUT/mem_$label.txt" | tail -1)
  echo "harness $label ($KFORGE_HARNESS_DIR): rc $rc, peak device memory ${peak} MiB"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" accepted", r.get("accepted"), "error", str(r.get("error"))[:300], "speedup", r.get("speedup"))' "$OUT/eval_$label.json" 2>/dev/null || tail -2 "$OUT/eval_$label.log"
done
