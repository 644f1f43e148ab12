#!/usr/bin/env bash
# Device run for issue 10: `kforge optimize --strategy agent` on the GPU. The
# fake LLM server (tests/fixtures/fake_llm_server.py) plays a tool-using model
# over two episodes on KernelBench level-1 88_MinGPTNewGelu in the native
# format, with kernels from the throughput fixtures:
#   episode 1: writes a kernel that does not compile, compiles (fails), writes
#     a correct one, compiles, verifies, profiles, submits;
#   episode 2 (its workspace starts from episode 1's accepted candidate): reads
#     it, writes a wrong kernel, verifies (fails), writes a vectorised one,
#     verifies, profiles, submits.
# Every check is a real evaluation on the H100 (nvcc, harness, timing window).
# From the repo root on the device, with .devcarry/kforge; writes to $OUT.
set -uo pipefail
OUT=${OUT:-bench/results/issue10/agent}
mkdir -p "$OUT"
export TMPDIR=/dev/shm KFORGE_CACHE_DIR=/dev/shm/kforge-cache PYTHONUNBUFFERED=1
export KFORGE_HARNESS_DIR=$PWD/harness
K=$(realpath ${KFORGE:-.devcarry/kforge})
TASK=.devcarry/kernelbench/level1/88_MinGPTNewGelu.py
FIX=bench/throughput/fixtures/88_MinGPTNewGelu
$K --version >"$OUT/version.txt"
python3 - "$FIX" "$OUT/replies.jsonl" <<'PY'
import json, sys
fix, out = sys.argv[1], sys.argv[2]
src = lambda name: open(f"{fix}/{name}.cu").read()
def turn(text, *calls):
    return {"text": text, "tool_calls": [
        {"id": f"call_{i}", "name": n, "arguments": json.dumps(a)} for i, (n, a) in enumerate(calls)]}
write = lambda name: ("write_file", {"path": "kernel.cu", "content": src(name)})
episodes = [
    turn("Plan: one thread per element.", write("28_ce_missing_semicolon"), ("compile", {})),
    turn("Fix the syntax error.", write("01_scalar_b256"), ("compile", {})),
    turn("", ("verify", {})),
    turn("", ("profile", {})),
    turn("Verified and timed; submitting.", ("submit", {})),
    turn("Start from the current best.", ("read_file", {"path": "kernel.cu"})),
    turn("Try a cheaper polynomial.", write("22_x_squared"), ("verify", {})),
    turn("That was wrong; vectorise the correct one instead.", write("07_float4_vectorized"),
         ("verify", {}), ("profile", {})),
    turn("Submitting the vectorised kernel.", ("submit", {})),
]
with open(out, "w") as f:
    for t in episodes:
        f.write(json.dumps(t) + "\n")
PY
python3 tests/fixtures/fake_llm_server.py --port 0 --replies "$OUT/replies.jsonl" >"$OUT/llm_port.txt" &
LLM=$!
for _ in $(seq 100); do [ -s "$OUT/llm_port.txt" ] && break; sleep 0.1; done
PORT=$(head -1 "$OUT/llm_port.txt")
DB=/dev/shm/issue10_agent.db
rm -f "$DB"
start=$(date +%s)
$K optimize --task "$TASK" --device cuda --db "$DB" --iterations 2 --strategy agent \
  --llm "openai:scripted@http://127.0.0.1:$PORT/v1" --set run.candidate_format=native \
  --json >"$OUT/optimize.json" 2>"$OUT/optimize.log"
echo "optimize rc $? in $(( $(date +%s) - start )) s"
RUN=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$OUT/optimize.json")
$K show "$RUN" --db "$DB" --json >"$OUT/show.json"
$K export "$RUN" --db "$DB" --format rft >"$OUT/export_rft.jsonl" 2>"$OUT/export_rft.log"
$K export "$RUN" --db "$DB" --format sft >"$OUT/export_sft.jsonl" 2>"$OUT/export_sft.log"
curl -s "http://127.0.0.1:$PORT/_requests" >"$OUT/llm_requests.json" 2>/dev/null ||
  python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$PORT/_requests').read().decode())" >"$OUT/llm_requests.json"
kill $LLM
cp "$DB" "$OUT/issue10_agent.db"
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
show = json.load(open(f"{out}/show.json"))
print("status", show["status"], "evaluations", [(e["iteration"], e["accepted"], e["speedup"]) for e in show["evaluations"]])
for e in show["events"]:
    if e["type"] == "agent_episode":
        d = e["detail"]
        print("episode", d["end"], "candidate", d["candidate_id"], "tools", d["tool_counts"],
              "invalid", d["invalid_tool_calls"], "repeated", d["repeated_tool_calls"])
        for t in d["turns"]:
            for s in t["steps"]:
                print("   ", s["tool"], "->", s["result"].splitlines()[0][:60], "|",
                      (s["result"].splitlines() + [""])[1][:110])
print("rft records", sum(1 for _ in open(f"{out}/export_rft.jsonl")))
PY
