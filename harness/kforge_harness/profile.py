"""The program the profile step runs under Nsight Compute (issue 9).

    ncu --profile-from-start off ... python3 -m kforge_harness.profile \
        --task TASK.py [--candidate CANDIDATE.py | --native KERNEL.so] [--device cuda] [--seed N]

Builds the task's `Model` (or the candidate's `ModelNew`, or a native
candidate's object through the C ABI with the reference's weights) with the same seeded
construction an evaluation uses, makes one input set, runs one warm-up call
outside the profiled range (module loading, autotuning, allocator growth),
then exactly one call inside `cudaProfilerStart`/`Stop`, so ncu sees the
kernels of one forward pass and nothing else. It holds no reference output and
no timer: what it prints is only for the log.
"""
import argparse
import sys

import torch

from .common import DTYPES, build_model, make_inputs
from .native import NativeLoadError, NativeModel, warm_meta_dispatch
from .task_loader import TaskError, describe_exception, import_file, load_task


def native_model(task, args):
    """The native object with the seeded reference's weights, as an evaluation loads it."""
    if torch.device(args.device).type != "cuda":
        raise TaskError("native candidates run on cuda devices only")
    dtype = DTYPES[args.dtype] if args.dtype else None
    reference = build_model(task.Model, task, args.seed, args.device, dtype, "Model")
    warm_meta_dispatch(task, reference)
    try:
        return NativeModel(args.native, reference)
    except NativeLoadError as exc:
        raise TaskError(str(exc)) from None


def main(argv=None):
    ap = argparse.ArgumentParser(prog="kforge_harness.profile")
    ap.add_argument("--task", required=True)
    ap.add_argument("--candidate")
    ap.add_argument("--native", help="a native candidate's built object (kernel.so)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default=None, choices=sorted(DTYPES))
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args(argv)
    dtype = DTYPES[args.dtype] if args.dtype else None
    try:
        task = load_task(args.task)
        cls, what = task.Model, "Model"
        if args.candidate:
            cand = import_file(args.candidate, "kforge_candidate")
            cls = getattr(cand, "ModelNew", None)
            if cls is None:
                raise TaskError(f"{args.candidate}: defines no ModelNew")
            what = "ModelNew"
        if args.native:
            model = native_model(task, args)
        else:
            model = build_model(cls, task, args.seed, args.device, dtype, what)
        inputs = make_inputs(task, args.seed, args.device, dtype)
        cuda = torch.device(args.device).type == "cuda"
        with torch.no_grad():
            model(*inputs)
            if cuda:
                torch.cuda.synchronize()
                torch.cuda.profiler.start()
            model(*inputs)
            if cuda:
                torch.cuda.synchronize()
                torch.cuda.profiler.stop()
    except TaskError as e:
        print(f"profile: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - the program's own failure, reported
        print(f"profile: the program failed: {describe_exception(e)[0]}", file=sys.stderr)
        return 1
    print("profile: one call profiled", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
