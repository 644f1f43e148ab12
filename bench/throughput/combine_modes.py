#!/usr/bin/env python3
"""Combines kforge_throughput outputs into the issue-6 summary.

    combine_modes.py --out throughput-h100.json FILE.json...

Each FILE is one slice of one mode (kforge_throughput's --out). Slices of a
mode are joined: their candidates are summed, and so are their wall times,
less the reference set-up that every slice but the first paid again (the
first candidate's `reference` phase and its torch.compile build: in one
uninterrupted run they are paid once). A mode must cover the same candidates
as the others, and each candidate's verdict class must be the same in every
mode; both are checked and reported, never assumed.
"""
import argparse
import json
import statistics
import sys

MODES = ["load_inline_sequential", "kernelbench_farm", "native_farm"]


def fail(message):
    print(f"combine_modes.py: {message}", file=sys.stderr)
    sys.exit(2)


def load(paths):
    by_mode = {}
    for path in paths:
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            fail(f"{path}: {e}")
        if data.get("mode") not in MODES:
            fail(f"{path}: not a kforge_throughput output")
        by_mode.setdefault(data["mode"], []).append((path, data))
    return by_mode


def setup_seconds(row):
    phases = row.get("phase_seconds", {})
    return phases.get("reference", 0.0) + (row.get("torch_compile_seconds") or 0.0)


def combine(slices):
    # Slices in manifest order of their first candidate (skip).
    slices.sort(key=lambda s: s[1].get("skip", 0))
    rows, wall, repeated_setup, incomplete = [], 0.0, 0.0, []
    for i, (path, data) in enumerate(slices):
        if not data.get("complete"):
            incomplete.append(path)
        rows.extend(data["results"])
        wall += data["wall_seconds"]
        if i > 0 and data["results"]:
            repeated_setup += setup_seconds(data["results"][0])
    seconds = wall - repeated_setup
    per_class = {}
    for r in rows:
        per_class.setdefault(r["verdict"], []).append(r["seconds"])
    return {
        "candidates": len(rows),
        "wall_seconds_measured": wall,
        "repeated_setup_seconds_removed": repeated_setup,
        "wall_seconds": seconds,
        "candidates_per_hour": len(rows) * 3600.0 / seconds if seconds > 0 else 0.0,
        "slices": [{"file": p, "skip": d.get("skip"), "stride": d.get("stride"),
                    "candidates": d["candidates"], "wall_seconds": d["wall_seconds"],
                    "complete": d.get("complete")} for p, d in slices],
        "incomplete_slices": incomplete,
        "verdict_mismatches_vs_manifest": sum(d["verdict_mismatches_vs_manifest"]
                                              for _, d in slices),
        "seconds_per_candidate": {
            cls: {"count": len(v), "median": statistics.median(v), "max": max(v)}
            for cls, v in sorted(per_class.items())},
        "timing_stopped_by": {k: sum(1 for r in rows if r.get("timing_stopped_by") == k)
                              for k in sorted({r.get("timing_stopped_by") for r in rows
                                               if r.get("timing_stopped_by")})},
        "results": rows,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    by_mode = load(a.files)
    modes = {m: combine(s) for m, s in by_mode.items()}
    verdicts = {m: {r["id"]: r["verdict"] for r in c["results"]} for m, c in modes.items()}
    ids = set().union(*[set(v) for v in verdicts.values()])
    # A candidate is compared across the modes that measured it; one that a
    # mode did not measure is listed, not counted as agreeing.
    differing = sorted(i for i in ids
                       if len({verdicts[m][i] for m in verdicts if i in verdicts[m]}) != 1)
    compared = sorted(i for i in ids if sum(i in v for v in verdicts.values()) > 1)
    summary = {
        "modes": {m: {k: v for k, v in c.items() if k != "results"} for m, c in modes.items()},
        "candidates_compared": len(compared),
        "not_measured": {m: sorted(ids - set(v)) for m, v in verdicts.items() if ids - set(v)},
        "verdicts_identical_across_modes": not differing,
        "verdict_differences": {i: {m: verdicts[m].get(i) for m in verdicts} for i in differing},
        "per_candidate": {m: [{k: r.get(k) for k in ("id", "verdict", "seconds",
                                                      "compile_seconds", "compile_cached",
                                                      "timing_window_seconds",
                                                      "timing_stopped_by", "speedup_eager")}
                              for r in c["results"]] for m, c in modes.items()},
    }
    base = modes.get("load_inline_sequential", {}).get("candidates_per_hour")
    if base:
        summary["ratios_vs_load_inline_sequential"] = {
            m: c["candidates_per_hour"] / base for m, c in modes.items()}
    with open(a.out, "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    for m, c in modes.items():
        print(f"{m}: {c['candidates']} candidates, {c['wall_seconds']:.1f} s, "
              f"{c['candidates_per_hour']:.1f} per hour")
    if "ratios_vs_load_inline_sequential" in summary:
        print("ratios:", json.dumps(summary["ratios_vs_load_inline_sequential"]))
    print(f"verdicts identical across modes: {not differing} "
          f"({len(compared)} candidates measured in more than one mode)")


if __name__ == "__main__":
    main()
