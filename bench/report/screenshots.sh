#!/usr/bin/env bash
# screenshots.sh DB RUN_ID [BENCH_ID] [OUT_DIR]
#
# Regenerates the report screenshots of docs/img/ from a kforge database:
#   report-run.png         the top of RUN_ID's HTML report
#   report-candidate.png   RUN_ID's best candidate section (the page with every
#                          other part hidden by one added CSS rule, diff unfolded)
#   report-bench.png       the top of BENCH_ID's report (when given)
# Each page goes through render_check.sh (no console output, no network).
# KFORGE_BIN picks the binary (default build/kforge).
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 4 ]; then
  echo "usage: $0 DB RUN_ID [BENCH_ID] [OUT_DIR]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
kforge=${KFORGE_BIN:-$root/build/kforge}
db=$1
run=$2
bench=${3:-}
out=${4:-$root/docs/img}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$kforge" report "$run" --db "$db" --html "$work/run.html" >/dev/null
"$here/render_check.sh" "$work/run.html" "$out/report-run.png" 1280,2000

best=$("$kforge" report "$run" --db "$db" --json |
  python3 -c 'import json,sys; b=json.load(sys.stdin)["best"]; print(b["candidate_id"] if b else "")')
if [ -n "$best" ]; then
  # Only the best candidate's section, with its diff unfolded.
  id="c-$(printf '%s' "$best" | tr -c 'A-Za-z0-9_-' '_')"
  sed -e "s#</style>#header,.cards,h2,.panel,.grid2,.scroll,main>p.note,section.candidate{display:none} section\#$id{display:block}</style>#" \
      -e 's#<details><summary>Diff#<details open><summary>Diff#g' "$work/run.html" >"$work/candidate.html"
  "$here/render_check.sh" "$work/candidate.html" "$out/report-candidate.png" 1280,1500
fi

if [ -n "$bench" ]; then
  "$kforge" report "$bench" --db "$db" --html "$work/bench.html" >/dev/null
  "$here/render_check.sh" "$work/bench.html" "$out/report-bench.png" 1280,2000
fi
