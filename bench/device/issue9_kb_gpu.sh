#!/usr/bin/env bash
# Device run for issue 9: `kforge profile` itself on the H100, and the
# knowledge base inside a GPU run (kb.profile=ncu) against the scripted fake
# LLM server: the reference and each new best profiled with ncu between
# evaluations, the technique named by each reply updated in the sm_90 base.
#   bash bench/device/issue9_kb_gpu.sh
# From the repo root on the device, with .devcarry/kforge; writes to $OUT
# (default bench/results/issue9/kb_gpu).
set -uo pipefail
OUT=${OUT:-bench/results/issue9/kb_gpu}
mkdir -p "$OUT"
export TMPDIR=/dev/shm KFORGE_CACHE_DIR=/dev/shm/kforge-cache PYTHONUNBUFFERED=1
export KFORGE_HARNESS_DIR=$PWD/harness KFORGE_PROMPTS_DIR=$PWD/prompts
K=$(realpath .devcarry/kforge)
TASK=.devcarry/kernelbench/level1/88_MinGPTNewGelu.py
FIX=bench/throughput/fixtures/88_MinGPTNewGelu
DB=$OUT/kforge.db
rm -f "$DB"
$K --version > "$OUT/version.txt"
ncu --version >> "$OUT/version.txt"

echo "== kforge profile: reference, then a fixture candidate $(date +%T)"
$K profile --task "$TASK" --json > "$OUT/profile_reference.json" 2> "$OUT/profile_reference.log"
echo "rc $?"
$K profile --task "$TASK" --candidate "$FIX/07_float4_vectorized.py" --json \
  > "$OUT/profile_candidate.json" 2> "$OUT/profile_candidate.log"
echo "rc $?"

echo "== optimize with the knowledge base, kb.profile=ncu $(date +%T)"
python3 - "$FIX" > "$OUT/replies.jsonl" <<'PY'
import json, sys
fix = sys.argv[1]
def code(technique, name):
    src = open(f"{fix}/{name}.py").read()
    return {"text": f"Eight elementwise passes over DRAM are the cost.\nTechnique: {technique}\n\n"
                    f"```python\n{src}```\n"}
stages = [
    {"schema": "kb_policy_evaluation", "text": json.dumps(
        {"verdict": "better", "expected": "1.2x", "achieved": "several times faster",
         "evidence": "one fused pass instead of eight"})},
    {"schema": "kb_perf_gap_analysis", "text": json.dumps(
        {"explanation": "the reference made eight passes over memory", "causes": ["traffic"],
         "state_after": "memory_bound"})},
    {"schema": "kb_parameter_update", "text": json.dumps(
        {"notes": "one fused elementwise pass reaches DRAM speed", "description": "",
         "new_state": None, "new_techniques": []})},
]
for r in [code("kernel_fusion", "01_scalar_b256"), code("vectorized_access", "07_float4_vectorized")] + stages * 2:
    print(json.dumps(r))
PY
python3 tests/fixtures/fake_llm_server.py --port 0 --replies "$OUT/replies.jsonl" > "$OUT/fake_port" &
SERVER=$!
for _ in $(seq 50); do [ -s "$OUT/fake_port" ] && break; sleep 0.1; done
PORT=$(head -1 "$OUT/fake_port")
$K optimize --task "$TASK" --device cuda --db "$DB" --iterations 2 --strategy greedy \
  --llm "openai:scripted@http://127.0.0.1:$PORT/v1" --set kb.profile=ncu \
  --set run.max_in_flight=1 --json > "$OUT/optimize.json" 2> "$OUT/optimize.log"
echo "optimize rc $?"
kill $SERVER
RUN=$(python3 -c "import json;print(json.load(open('$OUT/optimize.json'))['run_id'])")
$K show "$RUN" --db "$DB" --json > "$OUT/show.json"
$K kb show --arch sm_90 --db "$DB" --json > "$OUT/kb_sm_90.json"
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
show = json.load(open(f"{out}/show.json"))
for e in show["evaluations"]:
    print("eval", e["candidate_id"], e["accepted"], e["verdict"], e["speedup"])
for e in show["events"]:
    if e["type"].startswith("kb"):
        print("event", e["type"], json.dumps(e["detail"])[:300])
kb = json.load(open(f"{out}/kb_sm_90.json"))
for o in kb["optimizations"]:
    if o["attempts"] > 2:
        print("kb", o["state"], o["technique"], o["attempts"], o["successes"], round(o["predicted_gain"], 3))
PY
