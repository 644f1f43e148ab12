#!/usr/bin/env bash
# Device run for issue 9: the knowledge base in a native-format GPU run
# (run.candidate_format=native, kb.profile=ncu) against the scripted fake LLM
# server: the reference and each new best profiled with ncu between
# evaluations, native candidates from their built object
# (kforge_harness.profile --native), so their states are measured.
#   OUT=... bash bench/device/issue9_kb_native.sh
# From the repo root on the device, with .devcarry/kforge.
set -uo pipefail
OUT=${OUT:-bench/results/issue9/kb_native}
mkdir -p "$OUT"
export TMPDIR=/dev/shm KFORGE_CACHE_DIR=/dev/shm/kforge-cache PYTHONUNBUFFERED=1
export KFORGE_HARNESS_DIR=$PWD/harness KFORGE_PROMPTS_DIR=$PWD/prompts
K=$(realpath ${KFORGE:-.devcarry/kforge})
TASK=.devcarry/kernelbench/level1/88_MinGPTNewGelu.py
FIX=bench/throughput/fixtures/88_MinGPTNewGelu
DB=/dev/shm/issue9_kb_native.db
rm -f "$DB"
$K --version >"$OUT/version.txt"
python3 - "$FIX" >"$OUT/replies.jsonl" <<'PY'
import json, sys
fix = sys.argv[1]
def code(technique, name):
    src = open(f"{fix}/{name}.cu").read()
    return {"text": f"Eight elementwise passes over DRAM are the cost.\nTechnique: {technique}\n\n"
                    f"```cuda\n{src}```\n"}
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
python3 tests/fixtures/fake_llm_server.py --port 0 --replies "$OUT/replies.jsonl" >"$OUT/fake_port" &
SERVER=$!
for _ in $(seq 50); do [ -s "$OUT/fake_port" ] && break; sleep 0.1; done
PORT=$(head -1 "$OUT/fake_port")
start=$(date +%s)
$K optimize --task "$TASK" --device cuda --db "$DB" --iterations 2 --strategy greedy \
  --llm "openai:scripted@http://127.0.0.1:$PORT/v1" --set kb.profile=ncu \
  --set run.candidate_format=native --set run.max_in_flight=1 --json \
  >"$OUT/optimize.json" 2>"$OUT/optimize.log"
echo "optimize rc $? in $(( $(date +%s) - start )) s"
python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$PORT/_requests').read().decode())" >"$OUT/llm_requests.json"
kill $SERVER
RUN=$(python3 -c "import json;print(json.load(open('$OUT/optimize.json'))['run_id'])")
$K show "$RUN" --db "$DB" --json >"$OUT/show.json"
cp "$DB" "$OUT/kforge.db"
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
show = json.load(open(f"{out}/show.json"))
for e in show["evaluations"]:
    print("eval", e["candidate_id"][:8], e["accepted"], e["verdict"], e["speedup"])
for e in show["events"]:
    if e["type"] == "kb_update":
        d = e["detail"]
        step = d.get("step", {})
        print("kb_update", d.get("candidate_id", "")[:8], d.get("technique"), "state", d.get("state"),
              "state_after", d.get("state_after"), "state_refined", d.get("state_refined"))
# What the prompts said of the profiled programs: the second code prompt's parent is
# the first native candidate, profiled from its object.
reqs = json.load(open(f"{out}/llm_requests.json"))["requests"]
for i, r in enumerate(reqs):
    text = json.dumps(r["body"].get("messages", []))
    for key in ("The parent candidate", "The reference program", "profile after", "Profile after"):
        at = text.find(key)
        if at >= 0:
            print(f"request {i}:", text[at:at + 260].replace("\\n", " | "))
            break
PY
grep -i "kb:" "$OUT/optimize.log" | head -20
