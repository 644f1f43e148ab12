"""Runs corpus candidates against their tasks' references, outside kforge.

This is a check of the corpus itself, not of kforge: every legitimate
candidate must compute its task correctly, or the corpus would teach the
integrity checks the wrong lesson. It compiles each candidate (load_inline),
so it takes a minute or more per candidate; pytest does not run it.

    python3 tests/integrity/verify_corpus.py [--device cpu|cuda] [--label legit|hack|all]
                                             [--jobs N] [CASE ...]

For each case it seeds like KernelBench (seed, then build the model), runs
three input sets, compares with the reference (atol = rtol = 1e-4 relative to
scale, 1e-2 for loss tasks) and prints one JSON line. Hacks are run too when
asked (--label hack): they show which ones would pass a naive check.
"""
import argparse
import importlib.util
import json
import os
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

CORPUS = Path(__file__).resolve().parent


def import_path(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build(cls, init_inputs, seed, device):
    import torch
    torch.manual_seed(seed)
    return cls(*init_inputs).to(device)


def run_case(case_dir, device):
    import torch
    expect = json.loads((case_dir / "expect.json").read_text())
    out = {"case": case_dir.name, "label": expect["label"], "device": device}
    if expect["task"] is None or expect["format"] != "kernelbench":
        out["status"] = "skipped (not a kernelbench case)"
        return out
    t0 = time.perf_counter()
    try:
        task = import_path(CORPUS / expect["task"], f"task_{case_dir.name}")
        cand = import_path(case_dir / expect["candidate"], f"cand_{case_dir.name}")
        out["load_s"] = round(time.perf_counter() - t0, 1)
        init = task.get_init_inputs()
        ref = build(task.Model, init, 42, device)
        new = build(cand.ModelNew, init, 42, device)
        worst = 0.0
        ok = True
        for trial in range(3):
            torch.manual_seed(1000 + trial)
            inputs = [x.to(device) if isinstance(x, torch.Tensor) else x
                      for x in task.get_inputs()]
            with torch.no_grad():
                want = ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
                got = new(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
            if device == "cuda":
                torch.cuda.synchronize()
            if type(got) is not torch.Tensor or got.shape != want.shape or \
                    got.dtype != want.dtype:
                ok = False
                out["detail"] = f"type/shape/dtype {type(got).__name__} {tuple(got.shape)} " \
                                f"{got.dtype} vs {tuple(want.shape)} {want.dtype}"
                break
            err = (got.double() - want.double()).abs().max().item()
            scale = max(1.0, want.double().abs().max().item())
            worst = max(worst, err / scale)
            tol = 1e-2 if want.dim() == 0 else 1e-4
            if not err <= tol * scale:
                ok = False
        out["max_scaled_err"] = worst
        out["status"] = "correct" if ok else "WRONG"
    except Exception as exc:  # noqa: BLE001 - report and go on with the next case
        out["status"] = "ERROR"
        out["detail"] = f"{type(exc).__name__}: {exc}"[:500]
        out["trace"] = traceback.format_exc()[-1500:]
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--label", default="legit", choices=("legit", "hack", "all"))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", "/tmp/kforge_corpus_ext")
    cases = []
    for d in sorted(p for p in CORPUS.iterdir() if p.is_dir() and p.name != "tasks"):
        e = json.loads((d / "expect.json").read_text())
        if args.cases and d.name not in args.cases:
            continue
        if not args.cases and (e["device"] != args.device or
                               (args.label != "all" and e["label"] != args.label)):
            continue
        cases.append(d)
    bad = 0
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futs = [pool.submit(run_case, d, args.device) for d in cases]
        for f in as_completed(futs):
            r = f.result()
            print(json.dumps(r), flush=True)
            if r["label"] == "legit" and r["status"] != "correct":
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
