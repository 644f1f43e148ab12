#!/usr/bin/env bash
# Device runs for issue 6 (native candidates, compile farm, throughput). From
# the repo root on the device, with .devcarry/kforge and .devcarry/kforge_throughput
# (stripped builds of build/kforge and build/bench/throughput/kforge_throughput).
#   bash bench/device/issue6_native.sh pytest        GPU scenario tests of native eval
#   bash bench/device/issue6_native.sh throughput MODE [LIMIT]
#        MODE: native_farm | load_inline_sequential (bench/throughput/README.md)
# Writes to $OUT (or bench/results/issue6 when OUT is unset).
set -uo pipefail
OUT=${OUT:-bench/results/issue6}
mkdir -p "$OUT"
export TMPDIR=/dev/shm KFORGE_CACHE_DIR=/dev/shm/kforge-cache PYTHONUNBUFFERED=1
export KFORGE_HARNESS_DIR=$PWD/harness
K=$(realpath ${KFORGE:-.devcarry/kforge})
TASK=.devcarry/kernelbench/level1/88_MinGPTNewGelu.py
FIX=bench/throughput/fixtures/88_MinGPTNewGelu
case "${1:-pytest}" in
  pytest)
    KFORGE_BIN=$K python3 -m pytest -q -p no:cacheprovider tests/scenario/test_native_gpu.py \
      2>&1 | tee "$OUT/native_gpu_pytest.txt" | tail -30
    ;;
  throughput)
    mode=${2:?mode}
    limit=${3:-0}
    .devcarry/kforge_throughput --task "$TASK" --fixtures "$FIX" --mode "$mode" \
      --limit "$limit" --out "$OUT/throughput_${mode}.json" 2>>"$OUT/throughput_${mode}.log"
    echo "rc $?"; tail -5 "$OUT/throughput_${mode}.log"
    ;;
esac
