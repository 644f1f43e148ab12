#!/usr/bin/env bash
# Device runs for issue 6 (native candidates, compile farm, throughput). From
# the repo root on the device, with .devcarry/kforge and .devcarry/kforge_throughput
# (stripped builds of build/kforge and build/bench/throughput/kforge_throughput).
#   bash bench/device/issue6_native.sh pytest        GPU scenario tests of native eval
#   bash bench/device/issue6_native.sh throughput MODE [LIMIT] [SKIP]
#        MODE: load_inline_sequential | kernelbench_farm | native_farm
#        (bench/throughput/README.md); LIMIT/SKIP take a slice of the 32 (0: all);
#        MAXT=S in the environment caps each timing window at S seconds;
#        STRIDE=N takes every Nth candidate from SKIP on
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
    skip=${4:-0}
    name=throughput_${mode}
    if [ "$skip" != 0 ] || [ "$limit" != 0 ]; then name=${name}_s${skip}_l${limit}; fi
    if [ -n "${MAXT:-}" ]; then name=${name}_t${MAXT}; fi
    if [ -n "${STRIDE:-}" ]; then name=${name}_stride${STRIDE}; fi
    .devcarry/kforge_throughput --task "$TASK" --fixtures "$FIX" --mode "$mode" \
      --skip "$skip" --limit "$limit" ${MAXT:+--max-timing-seconds $MAXT} ${STRIDE:+--stride $STRIDE} \
      --out "$OUT/$name.json" 2>>"$OUT/$name.log"
    echo "rc $?"; tail -5 "$OUT/$name.log"
    ;;
esac
