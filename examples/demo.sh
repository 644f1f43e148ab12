#!/usr/bin/env bash
# make demo: the main job (kforge optimize, strategy greedy) on the bundled example task,
# against a SCRIPTED LLM session: tests/fixtures/fake_llm_server.py on loopback serves the
# hand-written replies of examples/scripted_session/{cpu,cuda}.jsonl, in order. No model
# is called and nothing is spent; the evaluator, the integrity checks, the timing and the
# store are all real. On a GPU the candidates are CUDA (load_inline), else C++ on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
KFORGE=${KFORGE:-build/kforge}
device=cpu
if python3 -c "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  device=cuda
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/kforge-demo-XXXXXX")
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

python3 tests/fixtures/fake_llm_server.py --port 0 \
  --replies "examples/scripted_session/$device.jsonl" > "$work/port" 2> "$work/server.log" &
server_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(head -1 "$work/port")

cat <<MSG
kforge demo on $device: a SCRIPTED session. The "model" is a local fake server replaying
4 hand-written answers (examples/scripted_session/$device.jsonl); everything else is real.
With a real model the same command takes e.g. --llm openai:gpt-4o or --llm anthropic:MODEL.

MSG
# The candidates of one session share their builds (a compile error is still compiled).
export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-$work/torch-ext}
"$KFORGE" optimize --task examples/tasks/fused_bias_relu6_scale.py \
  --llm "openai:scripted-demo@http://127.0.0.1:$port/v1" --strategy greedy --iterations 4 \
  --device "$device" --db "$work/demo.db" --set run.max_in_flight=1 \
  --set eval.timing.max_seconds=3
run_id=$("$KFORGE" runs --db "$work/demo.db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["run_id"])')
echo
"$KFORGE" show "$run_id" --db "$work/demo.db"
echo
"$KFORGE" best "$run_id" --db "$work/demo.db" --out "$work/best" > /dev/null
echo "model_new.py (the best candidate as a drop-in module), first lines:"
head -5 "$work/best/model_new.py"
echo
echo "(scripted session: the replies were written by hand, not by a model)"
