#!/usr/bin/env bash
# Device run of the integrity corpus (issue 3): every CUDA case of
# tests/integrity through `kforge eval --device cuda --json`, one JSON file per
# case, then a summary that checks each verdict and expected check id (and,
# for legitimate cases, `ok` and accepted). Run from the repo root on the
# device machine, binary at .devcarry/kforge (KFORGE overrides).
#   bash bench/device/issue3_corpus.sh all                # prebuild + run + summary
#   bash bench/device/issue3_corpus.sh prebuild|run|summary [CASE ...]
# `prebuild` compiles the load_inline extensions of the cases in parallel
# (16 cores) into TORCH_EXTENSIONS_DIR, so the evaluations, which run one at a
# time on the GPU, find them built. Writes $OUT/corpus/<case>.json and
# $OUT/corpus_summary.json (OUT defaults to bench/results/issue3).
set -uo pipefail
OUT=${OUT:-bench/results/issue3}
mkdir -p "$OUT/corpus"
export TMPDIR=/dev/shm KFORGE_CACHE_DIR=/dev/shm/kforge-cache TORCH_EXTENSIONS_DIR=/dev/shm/torch-ext
export PYTHONUNBUFFERED=1 MAX_JOBS=16
K=${KFORGE:-.devcarry/kforge}
CORPUS=tests/integrity
# Timing windows stay short: the corpus checks verdicts, not speedups.
SETS=(--set eval.timing.max_seconds=4 --set eval.timing.compile=false
      --set eval.sandbox.run_timeout_floor_s=60)

cuda_cases() {  # the CUDA cases that run end to end (a task and the kernelbench format)
  python3 - "$CORPUS" "$@" <<'PY'
import json, pathlib, sys
root = pathlib.Path(sys.argv[1]); only = set(sys.argv[2:])
for d in sorted(p for p in root.iterdir() if (p / "expect.json").is_file()):
    e = json.loads((d / "expect.json").read_text())
    if e["device"] == "cuda" and e["task"] and e["format"] == "kernelbench" and (not only or d.name in only):
        print(d.name)
PY
}

prebuild() {
  mapfile -t cases < <(cuda_cases "$@")
  python3 - "$CORPUS" "${cases[@]}" <<'PY'
import subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
root, cases = sys.argv[1], sys.argv[2:]
code = ("import importlib.util, sys; s = importlib.util.spec_from_file_location('c', sys.argv[1]); "
        "m = importlib.util.module_from_spec(s); s.loader.exec_module(m)")
def build(case):
    t0 = time.time()
    p = subprocess.run([sys.executable, "-c", code, f"{root}/{case}/candidate.py"],
                       capture_output=True, text=True, timeout=900)
    return case, p.returncode, time.time() - t0, p.stderr[-300:]
with ThreadPoolExecutor(8) as pool:
    for case, rc, s, err in pool.map(build, cases):
        # A hack may fail to import outside kforge; kforge reports it then.
        print(f"prebuild {case}: rc={rc} {s:.0f}s" + (f" {err.strip().splitlines()[-1]}" if rc and err.strip() else ""),
              file=sys.stderr)
PY
}

run() {
  mapfile -t cases < <(cuda_cases "$@")
  for c in "${cases[@]}"; do
    task=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["task"])' "$CORPUS/$c/expect.json")
    echo "== $c" >&2
    t0=$(date +%s)
    $K eval --task "$CORPUS/$task" --candidate "$CORPUS/$c/candidate.py" --device cuda --json \
        "${SETS[@]}" > "$OUT/corpus/$c.json" 2>> "$OUT/corpus_stderr.log" \
      || echo "{\"case\": \"$c\", \"failed\": true}" > "$OUT/corpus/$c.json"
    echo "   $(( $(date +%s) - t0 )) s" >&2
  done
}

summary() {
  python3 - "$CORPUS" "$OUT" <<'PY'
import json, pathlib, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
rows, bad = [], 0
for f in sorted((out / "corpus").glob("*.json")):
    case = f.stem
    e = json.loads((root / case / "expect.json").read_text())
    try:
        r = json.loads(f.read_text())
    except ValueError:
        r = {"failed": True}
    row = {"case": case, "label": e["label"], "class": e["class"],
           "expected_verdict": e["expected_verdict"], "expected_checks": e["expected_checks"]}
    if r.get("failed") or "integrity" not in r:
        row.update(ok=False, why="kforge eval failed (see corpus_stderr.log)")
    else:
        flags = [fl["check"] for fl in r["integrity"]["flags"]]
        row.update(verdict=r["integrity"]["verdict"], flags=flags, correct=r["correct"],
                   accepted=r["accepted"], error=r["error"],
                   speedup_eager=(r["speedup"] or {}).get("eager"),
                   seconds={"compile": r["compile"]["seconds"]})
        if e["label"] == "legit":
            row["ok"] = r["integrity"]["verdict"] == "ok" and r["accepted"]
        else:
            missing = sorted(set(e["expected_checks"]) - set(flags))
            row["missing_checks"] = missing
            # A rejected hack is never accepted; a suspect one may be (kept, shown,
            # left out of headline aggregates).
            row["ok"] = r["integrity"]["verdict"] == e["expected_verdict"] and not missing \
                and not (e["expected_verdict"] == "rejected" and r["accepted"])
    bad += not row["ok"]
    rows.append(row)
    print(f"{'PASS' if row['ok'] else 'FAIL'} {case:32} {row.get('verdict', '-'):9} "
          f"{','.join(row.get('flags', []))}", file=sys.stderr)
summary = {"cases": len(rows), "passed": len(rows) - bad, "failed": bad, "rows": rows}
(out / "corpus_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
print(f"{len(rows) - bad}/{len(rows)} cases as expected", file=sys.stderr)
PY
}

case "${1:-all}" in
  prebuild) shift; prebuild "$@" ;;
  run) shift; run "$@" ;;
  summary) summary ;;
  all) shift || true; prebuild "$@"; run "$@"; summary ;;
  *) echo "usage: $0 all|prebuild|run|summary [CASE ...]" >&2; exit 2 ;;
esac
