"""Does where an output lands in GPU memory change a kernel's time? (issue 2, L1 9)

diag_retained_outputs.py showed the same 4 GiB-output matmul 1.4% slower when
its output came from a segment the allocator reserved later in the process
(and after empty_cache), and fast again when it reused the first segments.
The reference and candidate processes have different allocation histories
(the candidate's allocator poisoning reserves extra blocks), so their timed
outputs can land in different places. This runs each history in its own
process, several times in alternation, then times the matmul the harness way.
  clean:   flush, A, B, one kept output, time
  messy:   as clean, plus six 4 GiB blocks taken and freed (like poisoning), time
  clean+ec, messy+ec: the same, with torch.cuda.empty_cache() before timing
  xs:clean, xs:messy: clean and messy under expandable_segments:True
Usage: python3 bench/device/diag_placement.py [ROUNDS] [SAMPLES]
       (a child runs: diag_placement.py --child SCENARIO SAMPLES)
"""
import os
import statistics
import subprocess
import sys
import time


def child(scenario, samples):
    import torch
    dev = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.int32, device=dev)
    A = torch.rand(32768, 32, device=dev)
    B = torch.rand(32, 32768, device=dev)
    kept = A @ B  # the trial-0 output both processes keep
    if scenario.startswith("messy"):
        taken = [torch.empty_like(kept) for _ in range(6)]
        for t in taken:
            t.fill_(1.0)
        del taken
    if scenario.endswith("+ec"):
        torch.cuda.empty_cache()
    torch.cuda.synchronize()
    times, last = [], None
    for _ in range(samples):
        flush.fill_(int(time.perf_counter() * 1e6) & 0x7FFFFFFF)
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        y = A @ B
        e.record()
        torch.cuda.synchronize()
        last = y
        times.append(s.elapsed_time(e))
    del last
    print(statistics.median(times[5:]))


def main():
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]))
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    samples = sys.argv[2] if len(sys.argv) > 2 else "60"
    results = {}
    for r in range(rounds):
        for sc in ("clean", "messy", "clean+ec", "messy+ec", "xs:clean", "xs:messy"):
            env = dict(os.environ)
            if sc.startswith("xs:"):
                env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
            out = subprocess.run([sys.executable, __file__, "--child", sc[3:] if sc.startswith("xs:") else sc,
                                  samples], capture_output=True, text=True, check=True,
                                 env=env).stdout
            results.setdefault(sc, []).append(float(out.strip()))
            print(f"round {r} {sc:9s} median {results[sc][-1]:.4f} ms", flush=True)
    base = statistics.median(results["clean"])
    for sc, v in results.items():
        print(f"{sc:9s} medians {' '.join(f'{x:.4f}' for x in v)}  "
              f"median/clean {statistics.median(v) / base:.4f}")


if __name__ == "__main__":
    main()
