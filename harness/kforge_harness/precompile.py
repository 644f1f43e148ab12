"""Builds a task's torch.compile program ahead of its timing (issue 8).

    python3 -m kforge_harness.precompile --task TASK.py --device cuda \
        --model-seed N --input-seed M [--index I] [--dtype D]

`kforge baseline` runs several of these at once, on the host's cores, for the
tasks it is about to time; each builds the reference `Model` with the seeded
construction the reference process uses, makes trial 0's inputs and calls the
inductor-compiled model once, which leaves the generated code in inductor's
on-disk caches (FX graph cache, Triton and C++ kernel caches). The reference
process then compiles the same graph for the same shapes and finds it built.
Nothing here is timed or compared; it prints one JSON line.
"""
import argparse
import json
import sys
import time

import torch

from .common import DTYPES, build_model, make_inputs
from .device import Device
from .task_loader import TaskError, describe_exception, load_task


def main(argv=None):
    ap = argparse.ArgumentParser(prog="kforge_harness.precompile")
    ap.add_argument("--task", required=True)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--index", type=int, default=0)
    ap.add_argument("--dtype", default=None, choices=sorted(DTYPES))
    ap.add_argument("--model-seed", type=int, required=True)
    ap.add_argument("--input-seed", type=int, required=True)
    args = ap.parse_args(argv)
    dtype = DTYPES[args.dtype] if args.dtype else None
    t0 = time.perf_counter()
    try:
        device = Device(args.device, args.index)
        torch.set_grad_enabled(False)
        task = load_task(args.task)
        model = build_model(task.Model, task, args.model_seed, device.torch_device, dtype, "Model")
        inputs = make_inputs(task, args.input_seed, device.torch_device, dtype)
        compiled = torch.compile(model)
        compiled(*inputs)
        device.sync()
    except (TaskError, Exception) as exc:  # noqa: BLE001 - reported; the timing run will see it too
        short, _ = describe_exception(exc)
        print(json.dumps({"ok": False, "error": short, "seconds": time.perf_counter() - t0}))
        return 1
    print(json.dumps({"ok": True, "seconds": time.perf_counter() - t0}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
