#!/usr/bin/env bash
# Device run for issue 10: a reward-service session on the GPU. `kforge serve`
# on cuda, 20 submissions for KernelBench level-1 88_MinGPTNewGelu from the
# throughput fixtures (5 kernelbench and 15 native; correct, incorrect and
# not compiling; both policies) sent by 4 concurrent clients, plus bad
# requests that must get 4xx. From the repo root on the device, with
# .devcarry/kforge; writes to $OUT (default bench/results/issue10).
set -uo pipefail
OUT=${OUT:-bench/results/issue10}
mkdir -p "$OUT"
export TMPDIR=/dev/shm KFORGE_CACHE_DIR=/dev/shm/kforge-cache PYTHONUNBUFFERED=1
export KFORGE_HARNESS_DIR=$PWD/harness SERVE_TOKEN=device-run-token
K=$(realpath .devcarry/kforge)
$K --version > "$OUT/version.txt"
$K serve --port 0 --device cuda --token-env SERVE_TOKEN 2> "$OUT/serve.log" &
SERVER=$!
for _ in $(seq 600); do grep -q "listening on" "$OUT/serve.log" && break; sleep 0.1; done
URL=$(grep -o "http://[0-9.:]*" "$OUT/serve.log" | head -1)
echo "server at $URL"
python3 - "$URL" "$OUT" <<'PY'
import concurrent.futures, json, sys, time, urllib.error, urllib.request
url, out = sys.argv[1], sys.argv[2]
task = open(".devcarry/kernelbench/level1/88_MinGPTNewGelu.py").read()
fix = "bench/throughput/fixtures/88_MinGPTNewGelu"
manifest = json.load(open(f"{fix}/manifest.json"))["candidates"]
subs = []
for i, c in enumerate(manifest[::2][:10] + manifest[1::2][-10:]):
    native = i % 4 != 0  # 5 kernelbench (each builds its extension), 15 native
    subs.append({"id": c["id"], "expect": c["expect"], "format": "native" if native else "kernelbench",
                 "policy": "strict" if i % 3 else "any",
                 "source": open(f"{fix}/{c['id']}.{'cu' if native else 'py'}").read()})
HEAD = {"Content-Type": "application/json", "Authorization": "Bearer device-run-token"}
def post(body, headers=HEAD, path="/v1/evaluate"):
    req = urllib.request.Request(url + path, data=body, headers=headers, method="POST")
    t0 = time.time()
    try:
        with urllib.request.urlopen(req, timeout=1800) as r:
            return r.status, json.load(r), time.time() - t0
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}"), time.time() - t0
def submit(s):
    body = json.dumps({"task": task, "candidate": s["source"], "format": s["format"],
                       "policy": s["policy"]}).encode()
    return s, post(body)
rows = []
t0 = time.time()
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    for s, (status, reply, secs) in pool.map(submit, subs):
        verdict = ("compile_error" if not reply.get("compiled") else
                   "correct" if reply.get("correct") else "incorrect") if status == 200 else None
        rows.append({"id": s["id"], "format": s["format"], "policy": s["policy"], "status": status,
                     "expect": s["expect"], "verdict": verdict, "accepted": reply.get("accepted"),
                     "integrity": (reply.get("integrity") or {}).get("verdict"),
                     "speedup": reply.get("speedup"), "reward": reply.get("reward"),
                     "seconds": round(secs, 1), "error": str(reply.get("error"))[:200]})
        json.dump(reply, open(f"{out}/reply_{s['id']}_{s['format']}.json", "w"), indent=1)
        print(rows[-1]["id"], s["format"], status, verdict, rows[-1]["speedup"], rows[-1]["seconds"], flush=True)
wall = time.time() - t0
bad = [("no token", post(b"{}", {"Content-Type": "application/json"})[0]),
       ("malformed json", post(b"{not json", HEAD)[0]),
       ("unknown format", post(json.dumps({"task": task, "candidate": "x", "format": "rust",
                                           "policy": "strict"}).encode(), HEAD)[0]),
       ("unknown path", post(b"{}", HEAD, "/v1/nothing")[0])]
with urllib.request.urlopen(urllib.request.Request(url + "/v1/health", headers=HEAD)) as r:
    health = json.load(r)
summary = {"submissions": len(rows), "answered_200": sum(r["status"] == 200 for r in rows),
           "verdicts_as_manifest": sum(r["verdict"] == r["expect"] for r in rows),
           "wall_seconds": wall, "bad_requests": dict(bad), "health": health, "results": rows}
json.dump(summary, open(f"{out}/serve_session.json", "w"), indent=1)
print(json.dumps({k: v for k, v in summary.items() if k != "results"}))
PY
kill -TERM $SERVER; wait $SERVER; echo "serve exit $?"
