"""Where does the host-clock noise of a short kernel come from? (issue 2, L1 12)

kforge times CALLS rounds of (flush L2, device sync, call, device sync) per
sample with its own clock; for L1 12 (a 0.07 ms kernel) one sample of 12
rounds spreads 20-45% around its median. This times each part of a round with
perf_counter in one process, for the noop and for L1 12's program, and prints
the median and p10/p90 of each part, so the jittery part shows.
Usage: python3 bench/device/diag_round_noise.py [ROUNDS]
"""
import statistics
import sys
import time

import torch

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
dev = torch.device("cuda")
l2 = torch.cuda.get_device_properties(dev).L2_cache_size
flush = torch.empty(2 * l2 // 4, dtype=torch.int32, device=dev)
N, M = 4096, 4096
A = torch.rand(N, device=dev)
B = torch.rand(N, M, device=dev)
prog = {"noop": lambda: None, "diag": lambda: torch.diag(A) @ B,
        "bcast": lambda: A.unsqueeze(1) * B}
pc = time.perf_counter


def q(v):
    v = sorted(v)
    return (f"p10 {v[len(v) // 10] * 1e3:7.4f}  med {statistics.median(v) * 1e3:7.4f}  "
            f"p90 {v[9 * len(v) // 10] * 1e3:7.4f}  mean {statistics.mean(v) * 1e3:7.4f} ms")


for name, fn in prog.items():
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    parts = {"flush+sync": [], "call": [], "sync": [], "round": []}
    last = None
    for _ in range(rounds):
        t0 = pc()
        flush.fill_(int(t0 * 1e6) & 0x7FFFFFFF)
        torch.cuda.synchronize()
        t1 = pc()
        out = fn()
        t2 = pc()
        torch.cuda.synchronize()
        t3 = pc()
        last = out
        parts["flush+sync"].append(t1 - t0)
        parts["call"].append(t2 - t1)
        parts["sync"].append(t3 - t2)
        parts["round"].append(t3 - t0)
    del last
    for k, v in parts.items():
        print(f"{name:6s} {k:11s} {q(v)}", flush=True)
    # 12-round groups, as one kforge sample
    g = [sum(parts["round"][i:i + 12]) for i in range(0, rounds - 11, 12)]
    print(f"{name:6s} 12-round sample: {q(g)}  rel_std {statistics.pstdev(g) / statistics.mean(g):.3f}")
