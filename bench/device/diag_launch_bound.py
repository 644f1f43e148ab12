"""Diagnostic (issue 8): why are level-3 baselines up to ~2x the published
H100 times when level 1 and 2 are within a few percent? The slow ones are
launch-bound (ResNet, DenseNet, MobileNet, LSTM/GRU: many short kernels), so
the host's launch rate sets their time. This separates the machine from
kforge: each task is timed outside kforge the way KernelBench times it (cold
L2, CUDA events around one forward, device sync, 100 trials, mean and median),
once with the process free to run anywhere and once with every thread bound to
one CPU, as kforge's timing window binds its harness processes.

    python3 bench/device/diag_launch_bound.py DIR TASK [TASK ...]

DIR holds the task files (e.g. .devcarry/kernelbench/level3). Prints one JSON
object: the host (CPU model, clock, affinity), the bare launch cost (µs per
async launch of a tiny kernel, free and bound), and per task the times of
both runs."""
import importlib.util
import json
import os
import statistics
import sys
import time

import torch

TRIALS = 100
WARMUP = 10
LAUNCHES = 20000


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return {}
    info = {}
    for line in lines:
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "model name" and "model" not in info:
            info["model"] = value
        elif key == "cpu MHz":
            info.setdefault("mhz", []).append(float(value))
    if "mhz" in info:
        info["mhz"] = {"min": min(info["mhz"]), "max": max(info["mhz"])}
    return info


def bind_all_threads(cpus):
    """Binds every thread of this process (as kforge's `pin` does); None restores."""
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass


def launch_us():
    """Host µs per async launch of a tiny kernel (the launch path alone)."""
    y = torch.zeros(1, device="cuda")
    for _ in range(1000):
        y.add_(1)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(LAUNCHES):
        y.add_(1)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / LAUNCHES * 1e6


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def to_cuda(x):
    return x.cuda() if isinstance(x, torch.Tensor) else x


def time_task(model, inputs, flush):
    """KernelBench's protocol: per trial flush L2, sync, event, forward,
    event, sync. Returns event ms and host ms (sync to sync) per trial."""
    with torch.no_grad():
        for _ in range(WARMUP):
            model(*inputs)
        torch.cuda.synchronize()
        ev, host = [], []
        for _ in range(TRIALS):
            flush.zero_()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            h0 = time.perf_counter()
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize()
            host.append((time.perf_counter() - h0) * 1e3)
            ev.append(start.elapsed_time(end))
    def spread(xs):  # p10 and p90: how noisy each way is
        q = statistics.quantiles(xs, n=10)
        return [q[0], q[-1]]

    return {"event_mean_ms": statistics.fmean(ev), "event_median_ms": statistics.median(ev),
            "event_p10_p90_ms": spread(ev), "host_median_ms": statistics.median(host),
            "host_p10_p90_ms": spread(host)}


def main():
    folder, names = sys.argv[1], sys.argv[2:]
    allowed = sorted(os.sched_getaffinity(0))
    one = {max(c for c in allowed if c != 0)} if len(allowed) > 1 else set(allowed)
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(2 * props.L2_cache_size // 4, dtype=torch.int32, device="cuda")
    out = {"host": {**cpu_model(), "allowed_cpus": len(allowed), "bound_cpu": sorted(one)},
           "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           "gpu": props.name}
    out["launch_us"] = {"free": launch_us()}
    bind_all_threads(one)
    out["launch_us"]["bound"] = launch_us()
    bind_all_threads(set(allowed))
    tasks = {}
    for name in names:
        mod = load(os.path.join(folder, name + ".py"))
        torch.manual_seed(0)
        model = mod.Model(*mod.get_init_inputs()).cuda()
        inputs = [to_cuda(x) for x in mod.get_inputs()]
        row = {"free": time_task(model, inputs, flush)}
        bind_all_threads(one)
        row["bound"] = time_task(model, inputs, flush)
        bind_all_threads(set(allowed))
        tasks[name] = row
        print(name, json.dumps(row), file=sys.stderr, flush=True)
        del model, inputs
        torch.cuda.empty_cache()
    out["tasks"] = tasks
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
