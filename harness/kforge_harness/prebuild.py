"""Builds a KernelBench candidate's `load_inline` extensions ahead of its
evaluation (the compile farm), by importing the candidate file — the untrusted
code runs here as it would in the candidate process, in the same sandbox.

kforge starts it with TORCH_EXTENSIONS_DIR pointing at the candidate's entry of
the extension cache and TORCH_CUDA_ARCH_LIST set, exactly as the candidate
process of the evaluation will have them, so that process finds the build up
to date and only loads it; and with no GPU visible (CUDA_VISIBLE_DEVICES=""):
builds run while other candidates are timed, and must not touch the device.

    python -m kforge_harness.prebuild CANDIDATE.py

Prints one JSON line: {"ok": bool, "build_error": bool, "error": str|null}.
`build_error` says the extension did not compile; any other failure (say, the
module wants a GPU at import) is left for the evaluation to meet and report."""
import json
import sys
import time

from .task_loader import TaskError, import_file

# torch.utils.cpp_extension's message when ninja or the compiler fails.
_BUILD_FAILED = "Error building extension"


def main():
    if len(sys.argv) != 2:
        print("usage: python -m kforge_harness.prebuild CANDIDATE.py", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    reply = {"ok": True, "build_error": False, "error": None}
    try:
        import_file(sys.argv[1], "kforge_candidate")
    except TaskError as exc:
        text = str(exc)
        reply = {"ok": False, "build_error": _BUILD_FAILED in text, "error": text}
    reply["seconds"] = time.perf_counter() - t0
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
