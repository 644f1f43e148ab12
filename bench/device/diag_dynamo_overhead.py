"""Does torch.compile in a process slow that process's eager calls? (issue 2)

L1 12 (a 0.07 ms broadcast multiply) as its own candidate came out 1.5-4%
faster than the reference in host-clock time over six runs, while GPU event
times agreed. The reference process also compiles the model with inductor to
time torch.compile; the candidate process never does. This measures the host
cost of launching the eager program (no synchronisation, many calls) before
and after torch.compile has run in the process, and the synchronised time of
one call, on the same tensors.
Usage: python3 bench/device/diag_dynamo_overhead.py
"""
import statistics
import time

import torch

dev = torch.device("cuda")
A = torch.rand(4096, device=dev)
B = torch.rand(4096, 4096, device=dev)


class Model(torch.nn.Module):
    def forward(self, a, b):
        return a.unsqueeze(1) * b


torch.set_grad_enabled(False)
model = Model()


def launch_us(n=2000):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        model(A, B)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def synced_us(n=2000):
    out = []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        model(A, B)
        torch.cuda.synchronize()
        out.append(time.perf_counter() - t0)
    return statistics.median(out) * 1e6


for phase in ("before torch.compile", "after torch.compile"):
    if phase.startswith("after"):
        compiled = torch.compile(model)
        for _ in range(3):
            compiled(A, B)
        torch.cuda.synchronize()
    launch = statistics.median(launch_us() for _ in range(5))
    synced = statistics.median(synced_us() for _ in range(3))
    print(f"{phase}: host launch {launch:.2f} us/call, synchronised call {synced:.2f} us", flush=True)
