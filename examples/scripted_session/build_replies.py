#!/usr/bin/env python3
"""Builds the scripted LLM sessions of `make demo` from the candidate files beside it.

A scripted session is a JSON-lines file of model replies that
tests/fixtures/fake_llm_server.py serves in order: each reply is a short
analysis and the candidate in one fenced python block, the way a model would
answer kforge's prompt. They were written by hand, not by a model: the demo
shows the optimize loop, the evaluator and the store working end to end,
offline and for free, and says so.

    python3 examples/scripted_session/build_replies.py   # rewrites cpu.jsonl and cuda.jsonl
"""
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent

# (file, analysis) in the order the scripted "model" answers.
SESSIONS = {
    "cpu": [
        ("cpu/01_fused_serial.py",
         "Eager PyTorch makes four passes over the tensor (add, relu, clamp, multiply), each "
         "writing a temporary. One fused C++ loop reads x once and writes the output once."),
        ("cpu/02_fused_parallel.py",
         "The fused loop is correct but runs on one core. Split the rows across the cores "
         "with at::parallel_for."),
        ("cpu/03_vectorized_typo.py",
         "Process four columns per step so the compiler can keep the row in registers."),
        ("cpu/04_fused_parallel_rows.py",
         "The unrolled version did not compile. Keep the parallel fused loop and give each "
         "task a larger block of rows to cut scheduling overhead."),
    ],
    "cuda": [
        ("cuda/01_fused_kernel.py",
         "Eager PyTorch launches four kernels (add, relu, clamp, multiply), each reading and "
         "writing the whole tensor. One fused kernel reads x once and writes the output once."),
        ("cuda/02_fused_wrong_index.py",
         "The fused kernel works. Pass the row length in from Python so the kernel does not "
         "depend on the tensor's layout."),
        ("cuda/03_fused_float4.py",
         "The last attempt passed the number of rows as the row length, so the bias was read "
         "at the wrong column. Use the last dimension, and load four floats at a time (float4) "
         "to cut memory transactions."),
        ("cuda/04_fused_float4_grid.py",
         "float4 loads help. Use a grid-stride loop with a fixed number of blocks per SM so "
         "each thread handles several vectors."),
    ],
}


def reply(path, analysis):
    source = (HERE / path).read_text()
    return f"{analysis}\n\n```python\n{source}```\n"


def main():
    for name, items in SESSIONS.items():
        out = HERE / f"{name}.jsonl"
        with out.open("w") as f:
            for path, analysis in items:
                f.write(json.dumps(reply(path, analysis)) + "\n")
        print(f"wrote {out} ({len(items)} replies)")


if __name__ == "__main__":
    main()
