#!/usr/bin/env bash
# Device run for issue 8: `kforge bench` over a few KernelBench tasks on every GPU of the
# machine, then `kforge report` as HTML (for the screenshots). There is no LLM on the
# device: the fake server (tests/fixtures/fake_llm_server.py, a test fixture) plays a
# scripted model that answers each task with its own reference renamed `ModelNew`
# ("when": "Task `NAME`"), so every run has one honest candidate, accepted under
# `--policy any` with a speedup near 1. It exercises the bench (workers per GPU,
# metrics, report), not a model.
#   bash bench/device/issue8_bench.sh LEVEL NAME...
# (KB=examples DEVICE=cpu bash bench/device/issue8_bench.sh tasks row_softmax: the same on this host)
set -uo pipefail
LEVEL=${1:?level1|level2|level3}
shift
OUT=${OUT:-bench/results/issue8}
mkdir -p "$OUT"
K=${KFORGE:-.devcarry/kforge}
KB=${KB:-.devcarry/kernelbench}
DEVICE=${DEVICE:-cuda}
export TMPDIR=/dev/shm KFORGE_CACHE_DIR=/dev/shm/kforge-cache TORCH_EXTENSIONS_DIR=/dev/shm/torch-ext
export TORCHINDUCTOR_CACHE_DIR=/dev/shm/inductor-cache PYTHONUNBUFFERED=1
SUITE=/dev/shm/bench_suite
rm -rf "$SUITE" && mkdir -p "$SUITE"
REPLIES=/dev/shm/bench_replies.jsonl
: > "$REPLIES"
for name in "$@"; do
  cp "$KB/$LEVEL/$name.py" "$SUITE/"
  python3 - "$KB/$LEVEL/$name.py" "$name" >> "$REPLIES" <<'PY'
import json, re, sys
source = re.sub(r"\bModel\b", "ModelNew", open(sys.argv[1]).read())
# (KernelBench files may lack a final newline; the fence must start a line.)
text = f"The reference itself, as a baseline candidate.\n\n```python\n{source.rstrip()}\n```\n"
print(json.dumps({"when": f"Task `{sys.argv[2]}`", "text": text}))
PY
done
python3 tests/fixtures/fake_llm_server.py --port 0 --replies "$REPLIES" > /dev/shm/fake_port &
SERVER=$!
sleep 2
PORT=$(head -1 /dev/shm/fake_port)
"$K" bench --suite "$SUITE" --device "$DEVICE" --policy any --iterations 1 \
    --llm "openai:scripted@http://127.0.0.1:$PORT/v1" --db "$OUT/bench.db" --json \
    >"$OUT/bench.json" 2>>"$OUT/bench_stderr.log"
echo "bench rc $?" >&2
kill $SERVER
BENCH=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bench_id"])' "$OUT/bench.json")
"$K" report "$BENCH" --db "$OUT/bench.db" --html "$OUT/bench.html" 2>>"$OUT/bench_stderr.log"
"$K" report "$BENCH" --db "$OUT/bench.db" 2>>"$OUT/bench_stderr.log" | tee "$OUT/bench_report.txt"
