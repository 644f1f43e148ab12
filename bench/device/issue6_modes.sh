#!/usr/bin/env bash
# The issue-6 three-mode throughput benchmark on the device, longer than one
# device call: `start` runs the given slices one after another in a process
# session of their own (it outlives the call while the machine is held), and
# `wait` waits for them, copying what they wrote to $OUT every time.
#   bash bench/device/issue6_modes.sh start SLICE...
#        SLICE: MODE[:STRIDE:SKIP] (bench/throughput/README.md; default 1:0),
#        e.g. native_farm kernelbench_farm load_inline_sequential:2:0
#   bash bench/device/issue6_modes.sh wait SECONDS
# Needs .devcarry/kforge_throughput and .devcarry/kernelbench (issue6_native.sh).
set -uo pipefail
STATE=${STATE:-/dev/shm/kforge-modes}
OUT=${OUT:-$STATE/out}
case "${1:-}" in
  start)
    shift
    rm -rf "$STATE" /dev/shm/kforge-cache
    mkdir -p "$STATE"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv \
      >"$STATE/env.txt" 2>&1
    .devcarry/kforge --version >>"$STATE/env.txt" 2>&1
    cat >"$STATE/run.sh" <<EOF
cd $PWD
for slice in $*; do
  IFS=: read -r mode stride skip <<<"\$slice"
  STRIDE=\${stride:-1} OUT=$STATE bash bench/device/issue6_native.sh throughput "\$mode" 0 \${skip:-0} \\
    >>"$STATE/progress.txt" 2>&1
  echo "finished \$slice \$(date +%s)" >>"$STATE/progress.txt"
done
echo all-done >>"$STATE/progress.txt"
EOF
    setsid nohup bash "$STATE/run.sh" >/dev/null 2>&1 </dev/null &
    echo "started: $*"
    ;;
  wait)
    limit=${2:?seconds}
    end=$((SECONDS + limit))
    while [ $SECONDS -lt $end ] && ! grep -q all-done "$STATE/progress.txt" 2>/dev/null; do
      sleep 5
    done
    mkdir -p "$OUT"
    tar -C "$STATE" -czf "$OUT/modes.tgz" --exclude=out . 2>/dev/null
    tail -3 "$STATE"/*.log 2>/dev/null | cut -c1-220
    cat "$STATE/progress.txt" 2>/dev/null | grep -v '^\[' | tail -8
    ;;
  *)
    echo "usage: $0 start SLICE... | wait SECONDS" >&2
    exit 2
    ;;
esac
