#!/usr/bin/env bash
# Device run for issue 8: `kforge baseline` over KernelBench levels, resumable
# across calls and sessions. The database travels: it is read from
# .devcarry/issue8_baselines.db when present and written back to
# $OUT/issue8_baselines.db after every call (carry it in again next time).
#   bash bench/device/issue8_baseline.sh LEVEL [SECONDS]
# SECONDS (default 520) bounds the measuring; a task cut off by it is simply
# measured next time (every finished task is already in the database).
set -uo pipefail
LEVEL=${1:?level1|level2|level3}
BUDGET=${2:-520}
OUT=${OUT:-bench/results/issue8}
mkdir -p "$OUT"
K=${KFORGE:-.devcarry/kforge}
DB=/dev/shm/issue8_baselines.db
[ -f .devcarry/issue8_baselines.db ] && cp .devcarry/issue8_baselines.db "$DB"
export TMPDIR=/dev/shm KFORGE_CACHE_DIR=/dev/shm/kforge-cache TORCH_EXTENSIONS_DIR=/dev/shm/torch-ext
export TORCHINDUCTOR_CACHE_DIR=/dev/shm/inductor-cache PYTHONUNBUFFERED=1
timeout -s INT "$BUDGET" "$K" baseline --suite ".devcarry/kernelbench/$LEVEL" --db "$DB" \
    --compile-cap 300 --json >"$OUT/baseline_${LEVEL}_run.json" 2>>"$OUT/stderr.log"
echo "baseline rc $?" >&2
# What the database holds for the level now (measures nothing).
"$K" baseline --suite ".devcarry/kernelbench/$LEVEL" --db "$DB" --stored-only --json \
    >"$OUT/baseline_${LEVEL}.json" 2>>"$OUT/stderr.log"
cp "$DB" "$OUT/issue8_baselines.db"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["summary"])' "$OUT/baseline_${LEVEL}.json"
