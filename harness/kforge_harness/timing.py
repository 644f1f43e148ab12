"""The sample protocol. The timer lives in the kforge process, not here: for
each sample kforge sends `arm PROGRAM [CALLS]`, then `go`, and its clock spans
go→done, so any work on any stream falls inside it.

On a GPU one sample is CALLS rounds of: flush L2, synchronise the whole device,
record a start event, run the program, record an end event, synchronise the
whole device. kforge subtracts the same rounds run with `noop` (no program,
in the reference process) and divides by CALLS; several calls per sample spread the fixed handshake cost
and its jitter over short programs. Both synchronisations are device-wide on
purpose: work the program leaves on another stream can neither overlap the
flush nor the next call, so all of it is inside its own call. (Letting the
program launch while the flush still runs would hide its launch latency, but
would also let side-stream work hide behind the flush.) `done EVENT_MS`
reports the mean current-stream event time per call, which lets kforge see
work that escaped onto other streams.

On a CPU the flush runs (synchronously) before `armed`, outside the interval,
and a sample is one call.

Between batches kforge may ask for a new placement (`relocate`): the timed
inputs are copied to other addresses, behind a spacer of random size, and the
flush buffer is allocated anew, so the outputs land elsewhere too. On an H100
the same matmul with a 4 GiB output took 2.62 to 2.95 ms depending only on
where its buffers sat, and a process keeps one placement for its whole life:
two processes timing identical code could differ by that much. Spread over
many placements, each process's median is one over the same distribution.
"""
import gc
import random

import torch

# Captured before any candidate code is imported.
_Event = torch.cuda.Event

# kforge writes `go` right after reading `armed`; spinning this long covers
# that gap without parking the thread in the kernel.
GO_SPIN_SECONDS = 0.05
# A bound on CALLS, so a bad request cannot pin the process for minutes.
MAX_CALLS_PER_SAMPLE = 1024
# The spacer that shifts a relocation's copies: whole 2 MiB pages (the
# allocator's large-block granularity) up to this many, plus a partial one.
SPACER_MAX_PAGES = 128
_PAGE_BYTES = 2 << 20


class SampleServer:
    def __init__(self, channel, device):
        self.channel = channel
        self.device = device
        self.programs = {"noop": lambda: None}
        self.last_outputs = {}
        self._events = []
        self._inputs = None   # the list the programs read their inputs from
        self._spacer = None

    def register(self, name, fn):
        self.programs[name] = fn

    def set_inputs(self, inputs):
        """The timed programs' inputs, as the list they read at every call:
        relocate() replaces its tensors in place. Called once, as the window is
        set up: on a GPU the allocator's cache goes back to the driver here,
        because the reference and the candidate process share the device and
        blocks one of them keeps cached from its trials are memory the other
        cannot have (on the H100, L1 19_ReLU's reference process ran out of
        memory in the window for a 6 GiB output with 5.9 GiB of its own cache
        unused)."""
        self._inputs = inputs
        if self.device.kind == "cuda":
            torch.cuda.empty_cache()

    def relocate(self, seed):
        """New addresses for the inputs, the flush buffer and (through the
        allocator's state) the outputs. Skipped where copying the inputs
        could not fit in free memory; returns whether it moved them."""
        if self.device.kind != "cuda" or self._inputs is None:
            return False
        rng = random.Random(seed)
        dev = self.device.torch_device
        self._spacer = None
        self.last_outputs.clear()
        tensors = [x for x in self._inputs if isinstance(x, torch.Tensor) and x.is_cuda]
        need = sum(x.untyped_storage().nbytes() for x in tensors) + SPACER_MAX_PAGES * _PAGE_BYTES
        free, _ = torch.cuda.mem_get_info(dev)
        if need > free // 2:
            return False
        spacer_bytes = rng.randrange(1, SPACER_MAX_PAGES) * _PAGE_BYTES + rng.randrange(_PAGE_BYTES)
        self._spacer = torch.empty(spacer_bytes, dtype=torch.uint8, device=dev)
        for i, x in enumerate(self._inputs):
            if isinstance(x, torch.Tensor) and x.is_cuda:
                self._inputs[i] = x.clone()  # same strides for dense tensors
        self.device.new_flush_buffer()
        self.device.sync()
        return True

    def _event_pairs(self, calls):
        while len(self._events) < calls:
            self._events.append((_Event(enable_timing=True), _Event(enable_timing=True)))
        return self._events[:calls]

    def _wait_for_go(self, cuda):
        self.channel.write_line("armed")
        # Spin only on a GPU: on a CPU device a spinning harness would steal
        # a core from the program being timed.
        line = (self.channel.read_line_spinning(GO_SPIN_SECONDS) if cuda
                else self.channel.read_line())
        if line != "go":
            raise RuntimeError(f"protocol: expected 'go', got {line!r}")

    def _run_cuda(self, fn, is_noop, calls):
        pairs = self._event_pairs(calls)
        self.device.sync()
        self._wait_for_go(True)
        out = None
        for start, end in pairs:
            self.device.flush_cache()  # flush, then synchronise the device
            start.record()
            if not is_noop:
                out = fn()
            end.record()
            self.device.sync()
        ev_ms = sum(s.elapsed_time(e) for s, e in pairs) / calls
        return out, ev_ms

    def _run_cpu(self, fn, is_noop):
        if not is_noop:
            self.device.flush_cache()
        self._wait_for_go(False)
        return fn(), -1.0

    def handle_arm(self, spec):
        """Answers one arm/go pair; `spec` is `PROGRAM [CALLS]`."""
        parts = spec.split()
        name = parts[0] if parts else ""
        fn = self.programs.get(name)
        calls = 1
        if len(parts) > 1:
            try:
                calls = int(parts[1])
            except ValueError:
                calls = 0
        if fn is None or not 1 <= calls <= MAX_CALLS_PER_SAMPLE:
            self.channel.send({"ok": False, "error": f"bad arm request {spec!r}"})
            return True
        cuda = self.device.kind == "cuda"
        is_noop = name == "noop"
        # No garbage collection inside the measured interval (as timeit does):
        # a collection pass landing in one sample adds noise, not signal.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            if cuda:
                out, ev_ms = self._run_cuda(fn, is_noop, calls)
            else:
                out, ev_ms = self._run_cpu(fn, is_noop)
        finally:
            if gc_was_enabled:
                gc.enable()
        self.channel.write_line(f"done {ev_ms!r}")
        if out is not None:
            self.last_outputs[name] = out
        return True
