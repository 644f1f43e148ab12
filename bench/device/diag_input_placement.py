"""Does where the inputs and output sit in GPU memory change a kernel's time?
(issue 2: L1 12's reference ran 9% slower in GPU event time than the same code
in the candidate process, L1 9's 2% slower in another run)

One process, one kernel, several placements: before each placement a spacer
of random size is allocated and the inputs are copied to new addresses, so
inputs and outputs land at other offsets. Prints the event-time median of each
placement (L2 flushed and device synchronised before every call).
Usage: python3 bench/device/diag_input_placement.py [PLACEMENTS] [SAMPLES]
"""
import random
import statistics
import sys
import time

import torch

placements = int(sys.argv[1]) if len(sys.argv) > 1 else 8
samples = int(sys.argv[2]) if len(sys.argv) > 2 else 100
dev = torch.device("cuda")
l2 = torch.cuda.get_device_properties(dev).L2_cache_size
flush = torch.empty(2 * l2 // 4, dtype=torch.int32, device=dev)
rng = random.Random(7)

cases = {
    "l1_12_bcast": ([torch.rand(4096, device=dev), torch.rand(4096, 4096, device=dev)],
                    lambda a, b: a.unsqueeze(1) * b),
    "l1_9_matmul": ([torch.rand(32768, 32, device=dev), torch.rand(32, 32768, device=dev)],
                    lambda a, b: a @ b),
}


def median_ms(fn, inputs):
    times, last = [], None
    for _ in range(samples):
        flush.fill_(int(time.perf_counter() * 1e6) & 0x7FFFFFFF)
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        y = fn(*inputs)
        e.record()
        torch.cuda.synchronize()
        last = y
        times.append(s.elapsed_time(e))
    del last
    return statistics.median(times[3:])


for name, (inputs, fn) in cases.items():
    meds = []
    for p in range(placements):
        spacer = torch.empty(rng.randrange(1, 64) * (2 << 20) + rng.randrange(0, 2 << 20),
                             dtype=torch.uint8, device=dev)
        inputs = [x.clone() for x in inputs]
        m = median_ms(fn, inputs)
        meds.append(m)
        print(f"{name} placement {p}: median {m:.4f} ms  "
              f"in@{inputs[-1].data_ptr() % (1 << 32):#x}", flush=True)
        del spacer
    print(f"{name}: min {min(meds):.4f} max {max(meds):.4f} max/min {max(meds) / min(meds):.4f}")
