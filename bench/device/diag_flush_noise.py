"""Diagnostic (issue 6): does the way the L2 is flushed make short programs'
timings noisy? The harness flushes by writing a 2x-L2 buffer (fill_), which
leaves the L2 full of dirty lines that the timed program then writes back.
This times the same short programs with three flushes, interleaved round by
round so drift hits them alike:
  write       fill_ of the flush buffer (the harness today)
  write_read  fill_, then a read-only pass over the buffer (the read evicts
              the dirty lines, so the program starts on clean ones)
  read        a read-only pass only
Optional: "none" (no flush) and "/nosync" variants (argv[2]) show what the
flush and the sync before the program add to the host clock's jitter.
One sample = CALLS x (flush, device sync, event, program, event, device
sync), timed on the host as the harness's sample is, minus the same rounds
with no program. Prints one JSON object: per program and flush, the median
per-call host and event times, p10/p90, and the relative error of the
median from the batch medians' spread."""
import json
import statistics
import sys
import time

import torch

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 600
CALLS = 5
dev = torch.device("cuda")
props = torch.cuda.get_device_properties(dev)
flush = torch.empty(2 * props.L2_cache_size // 4, dtype=torch.int32, device=dev)
sink = torch.empty((), dtype=torch.int64, device=dev)


def flush_write():
    flush.fill_(int(time.perf_counter() * 1e6) & 0x7FFFFFFF)


def flush_write_read():
    flush_write()
    torch.sum(flush, dim=0, dtype=torch.int64, out=sink)


def flush_read():
    torch.sum(flush, dim=0, dtype=torch.int64, out=sink)


x = torch.randn(4096, 16384, device=dev)  # 256 MiB, like L1 88_MinGPTNewGelu
programs = {
    "gelu_tanh": lambda: torch.nn.functional.gelu(x, approximate="tanh"),  # ~0.2 ms
    "relu": lambda: torch.relu(x),
    "noop": lambda: None,
}
def flush_none():
    pass


VARIANTS = {"write": flush_write, "write_read": flush_write_read, "read": flush_read,
            "none": flush_none}
# argv[2]: a comma-separated subset of VARIANTS; a "/nosync" suffix drops the
# device sync between the flush and the program's start event.
chosen = (sys.argv[2] if len(sys.argv) > 2 else "write,write_read,read").split(",")
flushes = {name: VARIANTS[name.split("/")[0]] for name in chosen}
starts = [torch.cuda.Event(enable_timing=True) for _ in range(CALLS)]
ends = [torch.cuda.Event(enable_timing=True) for _ in range(CALLS)]


def sample(fn, fl, presync=True):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for s, e in zip(starts, ends):
        fl()
        if presync:
            torch.cuda.synchronize()
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
    host = (time.perf_counter() - t0) * 1e3
    ev = sum(s.elapsed_time(e) for s, e in zip(starts, ends)) / CALLS
    return host, ev


for name, fn in programs.items():  # warm up kernels and allocator
    for fl in flushes.values():
        sample(fn, fl)

raw = {(p, f): {"host": [], "event": []} for p in programs for f in flushes}
t_start = time.time()
for r in range(ROUNDS):
    for f, fl in flushes.items():
        for p, fn in programs.items():
            h, e = sample(fn, fl, not f.endswith("/nosync"))
            raw[(p, f)]["host"].append(h)
            raw[(p, f)]["event"].append(e)


def q(v, f):
    s = sorted(v)
    return s[min(len(s) - 1, int(f * len(s)))]


def rel_error(v, batches=20):
    """Spread of batch medians / median / sqrt(batches): drift shows here."""
    n = len(v) // batches
    meds = [statistics.median(v[i * n:(i + 1) * n]) for i in range(batches)]
    return statistics.stdev(meds) / statistics.median(meds) / batches ** 0.5


out = {"gpu": props.name, "rounds": ROUNDS, "calls": CALLS, "seconds": time.time() - t_start,
       "flush_bytes": flush.numel() * 4, "programs": {}}
for f in flushes:
    noop = raw[("noop", f)]["host"]
    noop_median = statistics.median(noop)  # kforge subtracts the noop median
    for p in programs:
        if p == "noop":
            out["programs"][f"noop/{f}"] = {"host_ms_per_sample_median": statistics.median(noop),
                                           "p10": q(noop, .1), "p90": q(noop, .9)}
            continue
        host = [(h - noop_median) / CALLS for h in raw[(p, f)]["host"]]
        ev = raw[(p, f)]["event"]
        out["programs"][f"{p}/{f}"] = {
            "host_ms": statistics.median(host), "host_p10": q(host, .1), "host_p90": q(host, .9),
            "host_rel_error": rel_error(host),
            "event_ms": statistics.median(ev), "event_p10": q(ev, .1), "event_p90": q(ev, .9),
            "event_rel_error": rel_error(ev)}
print(json.dumps(out, indent=1))
