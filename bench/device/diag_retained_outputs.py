"""Does holding earlier outputs slow a kernel? (issue 2, L1 9)

L1 9_Tall_skinny (A 32768x32 @ B 32x32768, a 4 GiB output) came out 2.2% slower
in CUDA-event time in the candidate process than in the reference process. The
candidate process keeps every trial's output (five of 4 GiB here) for the
later-mutation check; the reference process does not. This times the matmul
the way the harness does (L2 flushed, device synchronised, events around one
call, the previous output kept alive as the timed server keeps it) with 0, 2
and 5 retained 4 GiB outputs, then again after freeing them, in one process.
Usage: python3 bench/device/diag_retained_outputs.py [SAMPLES]
"""
import statistics
import sys
import time

import torch

samples = int(sys.argv[1]) if len(sys.argv) > 1 else 60
dev = torch.device("cuda")
l2 = torch.cuda.get_device_properties(dev).L2_cache_size
flush = torch.empty(2 * l2 // 4, dtype=torch.int32, device=dev)
A = torch.rand(32768, 32, device=dev)
B = torch.rand(32, 32768, device=dev)


def median_ms():
    out, last = [], None
    for _ in range(samples):
        flush.fill_(int(time.perf_counter() * 1e6) & 0x7FFFFFFF)
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        y = A @ B
        e.record()
        torch.cuda.synchronize()
        last = y  # the timed server keeps the last output alive
        out.append(s.elapsed_time(e))
    del last
    return statistics.median(out), statistics.pstdev(out) / statistics.mean(out)


retained = []
for want in (0, 2, 5):
    while len(retained) < want:
        retained.append(A @ B)
    torch.cuda.synchronize()
    m, rs = median_ms()
    print(f"retained {len(retained)} x 4 GiB: median {m:.4f} ms (rel_std {rs:.3f}), "
          f"allocated {torch.cuda.memory_allocated() / 2**30:.1f} GiB, "
          f"reserved {torch.cuda.memory_reserved() / 2**30:.1f} GiB", flush=True)
retained.clear()
m, rs = median_ms()
print(f"after freeing: median {m:.4f} ms (rel_std {rs:.3f})")
torch.cuda.empty_cache()
m, rs = median_ms()
print(f"after empty_cache: median {m:.4f} ms (rel_std {rs:.3f})")
