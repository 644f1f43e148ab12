#!/usr/bin/env bash
# render_check.sh REPORT.html [SCREENSHOT.png] [WIDTH,HEIGHT]
#
# Loads a `kforge report --html` page in headless Chromium (Debian's `chromium`
# package) and fails (exit 1) when
#   - the page writes anything to the console (the report has no scripts, so any
#     console line is an error: a Content-Security-Policy refusal, a bad SVG, ...),
#   - the page asks for anything over the network (checked in Chromium's net log:
#     requests made for the file:// page, not the browser's own background traffic),
#   - Chromium fails or writes no screenshot.
# Takes a screenshot of the top WIDTH x HEIGHT pixels (default 1280,2200).
# Exit 2: bad usage or chromium missing (apt-get install -y chromium).
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  echo "usage: $0 REPORT.html [SCREENSHOT.png] [WIDTH,HEIGHT]" >&2
  exit 2
fi
report=$(realpath "$1")
shot=${2:-}
size=${3:-1280,2200}
if [ ! -f "$report" ]; then
  echo "render_check: $1: no such file" >&2
  exit 2
fi
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
  echo "render_check: chromium not found (apt-get install -y chromium)" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -n "$shot" ] || shot="$work/screenshot.png"
rm -f "$shot"

# Root in a container needs --no-sandbox; no network is reachable anyway
# (every host resolves to NOTFOUND), and background services are off.
status=0
timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$work/profile" --no-first-run --disable-extensions \
  --disable-background-networking --disable-component-update --disable-sync \
  --host-resolver-rules="MAP * ~NOTFOUND" \
  --enable-logging=stderr --log-level=0 --log-net-log="$work/net.json" \
  --window-size="$size" --virtual-time-budget=5000 \
  --screenshot="$shot" "file://$report" >"$work/chrome.log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  echo "render_check: chromium exited with $status" >&2
  tail -20 "$work/chrome.log" >&2
  exit 1
fi

failed=0
if grep -E ':CONSOLE(:|\()' "$work/chrome.log" >"$work/console.txt"; then
  echo "render_check: console output from the page:" >&2
  cat "$work/console.txt" >&2
  failed=1
fi

if ! python3 - "$work/net.json" >"$work/requests.txt" <<'PY'
import json, sys
# Chromium may leave the final "]}" off when it exits; close it if needed.
text = open(sys.argv[1]).read().rstrip().rstrip(",")
try:
    log = json.loads(text)
except json.JSONDecodeError:
    log = json.loads(text + "]}")
urls = set()
for event in log.get("events", []):
    params = event.get("params") or {}
    url = params.get("url", "")
    key = params.get("network_isolation_key", "")
    if url and key.startswith("file://") and not url.startswith(("file:", "data:")):
        urls.add(url)
for url in sorted(urls):
    print(url)
sys.exit(1 if urls else 0)
PY
then
  echo "render_check: the page requested:" >&2
  cat "$work/requests.txt" >&2
  failed=1
fi

if [ ! -s "$shot" ]; then
  echo "render_check: no screenshot was written" >&2
  failed=1
fi
if [ "$failed" -ne 0 ]; then
  exit 1
fi
echo "render_check: $1 rendered without console output or network requests; screenshot $shot"
