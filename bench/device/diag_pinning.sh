#!/usr/bin/env bash
# Diagnostic (issues 8 and 6, session 15): does binding every harness thread
# to one CPU for the timing window (eval.timing.pin_cpus, on by default) slow
# or jitter the host's launch path? Level 3's launch-bound tasks measure up to
# 2.4x the published H100 times, and the windows of short programs stay open
# for launch jitter (issue 6). Three parts, one call (~6 minutes):
#   1. diag_launch_bound.py: KernelBench-style timing outside kforge, free and
#      bound to one CPU, plus the bare launch cost and the CPU model;
#   2. `kforge baseline --force` of 9_ResNet18 with pin_cpus true and false;
#   3. diag_window_noise.sh with KEY=eval.timing.pin_cpus: `kforge eval` of a
#      near-best issue-6 fixture (window capped at 15 s), pinned and not, twice.
#   OUT=... bash bench/device/diag_pinning.sh
set -uo pipefail
OUT=${OUT:-/tmp/diag_pinning}
mkdir -p "$OUT"
export TMPDIR=/dev/shm KFORGE_CACHE_DIR=/dev/shm/kforge-cache PYTHONUNBUFFERED=1
export TORCHINDUCTOR_CACHE_DIR=/dev/shm/inductor-cache KFORGE_HARNESS_DIR=$PWD/harness
K=$(realpath ${KFORGE:-.devcarry/kforge})
L3=.devcarry/kernelbench/level3

python3 bench/device/diag_launch_bound.py "$L3" 9_ResNet18 10_ResNet101 16_DenseNet201 \
  35_LSTM 1_MLP >"$OUT/launch_bound.json" 2>>"$OUT/launch_bound.log"
echo "diag_launch_bound rc $?"

for pin in true false; do
  "$K" baseline --suite "$L3/9_ResNet18.py" --db "/dev/shm/pin_$pin.db" --force --json \
    --compile-jobs 0 --set eval.timing.pin_cpus=$pin \
    >"$OUT/baseline_resnet18_pin_$pin.json" 2>>"$OUT/baseline.log"
  echo "baseline pin_cpus=$pin rc $?"
done

KEY=eval.timing.pin_cpus OUT="$OUT" bash bench/device/diag_window_noise.sh

python3 - "$OUT" <<'PY'
import json, pathlib, sqlite3, sys
out = pathlib.Path(sys.argv[1])
lb_file = out / "launch_bound.json"
lb = json.loads(lb_file.read_text() or "{}") if lb_file.exists() else {}
print("host", lb.get("host"), "launch_us", lb.get("launch_us"))
for name, row in lb.get("tasks", {}).items():
    print(name, {k: (round(v["event_mean_ms"], 3), round(v["host_median_ms"], 3)) for k, v in row.items()})
for pin in ("true", "false"):
    db = pathlib.Path(f"/dev/shm/pin_{pin}.db")
    if not db.exists():
        continue
    for (text,) in sqlite3.connect(db).execute("select baseline_json from baselines"):
        r = json.loads(text)
        print(f"baseline pin_cpus={pin}", r["task"],
              {k: (round(r[k]["median"], 3), round(r[k]["rel_stddev"], 3))
               for k in ("eager_ms", "compile_ms") if isinstance(r.get(k), dict)})
PY
