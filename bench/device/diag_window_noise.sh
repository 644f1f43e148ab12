#!/usr/bin/env bash
# Diagnostic (issue 6, session 12): which part of a timing window's noise comes
# from one setting of the window, by default relocating the timed inputs and
# the flush buffer between batches. One near-best native candidate of the
# throughput fixtures, evaluated with the timing window capped at 15 s, with
# the setting on (the default) and off, twice.
#   OUT=... [KEY=eval.timing.relocate] bash bench/device/diag_window_noise.sh
set -uo pipefail
OUT=${OUT:-/tmp/diag_window_noise}
mkdir -p "$OUT"
export TMPDIR=/dev/shm KFORGE_CACHE_DIR=/dev/shm/kforge-cache PYTHONUNBUFFERED=1
export KFORGE_HARNESS_DIR=$PWD/harness
K=$(realpath ${KFORGE:-.devcarry/kforge})
TASK=.devcarry/kernelbench/level1/88_MinGPTNewGelu.py
CAND=bench/throughput/fixtures/88_MinGPTNewGelu/12_unroll4_b256.cu
KEY=${KEY:-eval.timing.relocate}
NAME=${KEY##*.}
for value in true false true false; do
  "$K" eval --task "$TASK" --candidate "$CAND" --device cuda --no-baseline-cache --json \
    --set eval.timing.max_seconds=15 --set "$KEY=$value" \
    >>"$OUT/eval_${NAME}_$value.jsonl" 2>>"$OUT/eval.log"
  echo "$NAME=$value rc $?"
done
python3 - "$OUT" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
for f in sorted(out.glob("eval_*_*.jsonl")):
    for line in f.read_text().splitlines():
        r = json.loads(line)
        w = r.get("extra", {}).get("timing_window", {})
        progs = {k: (v["samples"], round(v["median_ms"], 4), v["rel_error"] and round(v["rel_error"], 4))
                 for k, v in w.get("programs", {}).items()}
        t = r.get("timing", {})
        print(f.stem, w.get("stopped_by"), round(w.get("seconds", 0), 1), progs,
              "placement", r.get("extra", {}).get("cpu_placement"),
              {k: (round(v["median"], 4), round(v["rel_stddev"], 3), round(v["p10"], 4), round(v["p90"], 4))
               for k, v in t.items() if isinstance(v, dict) and "median" in v})
PY
