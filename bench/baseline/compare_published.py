#!/usr/bin/env python3
"""Compare `kforge baseline --json` output with KernelBench's published H100
baselines (../shared/kernelbench/baselines/H100_Modal): per task, our eager and
torch.compile medians over the published means, and the median ratio per level.

    python3 bench/baseline/compare_published.py OUT.json [OUT2.json ...] \
        [--published DIR] [--markdown FILE] [--json FILE]

Several files (one per level, or per device session) are merged; a task's
last measured or stored entry wins. The published numbers are means of CUDA
event times on the current stream (KernelBench's harness); ours are medians of
device-synchronised host time with the handshake subtracted, so a ratio a little
above 1 is expected (see bench/results/issue2/README.md).
"""
import argparse
import json
import statistics
import sys
from pathlib import Path

DEFAULT_PUBLISHED = Path(__file__).resolve().parents[2].parent / "shared" / "kernelbench" / \
    "baselines" / "H100_Modal"
FILES = {"eager": "baseline_time_torch.json",
         "compile": "baseline_time_torch_compile_inductor_default.json"}


def level_of(path):
    for part in Path(path).parts:
        if part.startswith("level") and part[5:].isdigit():
            return "level" + part[5:]
    return None


def load_ours(paths):
    tasks = {}
    for p in paths:
        doc = json.loads(Path(p).read_text())
        for t in doc["tasks"]:
            level = level_of(t["path"])
            if level is None:
                continue
            key = (level, Path(t["path"]).name)
            if t["status"] in ("measured", "stored") or key not in tasks:
                tasks[key] = t
    return tasks


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--published", default=str(DEFAULT_PUBLISHED))
    ap.add_argument("--markdown")
    ap.add_argument("--json", dest="json_out")
    a = ap.parse_args(argv)
    published = {k: json.loads((Path(a.published) / f).read_text()) for k, f in FILES.items()}
    ours = load_ours(a.inputs)
    rows, ratios = [], {}
    for (level, fname), t in sorted(ours.items(), key=lambda kv: (kv[0][0], int(kv[0][1].split("_")[0]))):
        row = {"level": level, "task": fname[:-3], "status": t["status"],
               "reason": t.get("reason"), "degenerate": t.get("degenerate")}
        for kind in ("eager", "compile"):
            pub = published[kind].get(level, {}).get(fname)
            mine = t.get(f"{kind}_ms")
            row[f"{kind}_ms"] = mine
            row[f"published_{kind}_ms"] = pub["mean"] if pub else None
            if mine and pub and pub["mean"] > 0:
                row[f"{kind}_ratio"] = mine / pub["mean"]
                ratios.setdefault((level, kind), []).append(row[f"{kind}_ratio"])
            else:
                row[f"{kind}_ratio"] = None
        rows.append(row)
    summary = {}
    for (level, kind), v in sorted(ratios.items()):
        summary.setdefault(level, {})[kind] = {
            "tasks": len(v), "median_ratio": statistics.median(v),
            "p10": sorted(v)[len(v) // 10], "p90": sorted(v)[(9 * len(v)) // 10],
            "min": min(v), "max": max(v)}
    statuses = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1

    def f(x, spec=".4f"):
        return "-" if x is None else format(x, spec)

    lines = ["| level | task | status | eager ms | published | ratio | compile ms | published | ratio |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        note = r["status"] if r["status"] in ("measured", "stored") or not r.get("reason") else f"{r['status']}: {r['reason']}"
        lines.append(f"| {r['level']} | {r['task']} | {note} | {f(r['eager_ms'])} | "
                     f"{f(r['published_eager_ms'])} | {f(r['eager_ratio'], '.3f')} | "
                     f"{f(r['compile_ms'])} | {f(r['published_compile_ms'])} | "
                     f"{f(r['compile_ratio'], '.3f')} |")
    head = ["| level | baseline | tasks | median ours/published | p10 | p90 | min | max |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for level, kinds in summary.items():
        for kind, s in kinds.items():
            head.append(f"| {level} | {kind} | {s['tasks']} | {s['median_ratio']:.3f} | "
                        f"{s['p10']:.3f} | {s['p90']:.3f} | {s['min']:.3f} | {s['max']:.3f} |")
    text = "\n".join(head) + "\n\n" + "\n".join(lines) + "\n"
    if a.markdown:
        Path(a.markdown).write_text(text)
    else:
        sys.stdout.write(text)
    if a.json_out:
        Path(a.json_out).write_text(json.dumps({"summary": summary, "statuses": statuses,
                                                "tasks": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
