"""The sample protocol. The timer lives in the kforge process, not here: for
each sample kforge sends `arm PROGRAM` (we flush the cache and synchronise the
whole device, untimed), then `go`; we run the program once, synchronise the
whole device and answer `done EVENT_MS`. kforge's clock spans go→done, so any
work on any stream falls inside it. The CUDA-event time of the current stream,
reported alongside, lets kforge see work that escaped onto other streams.

`noop` is a program that does nothing: kforge times it to learn (and subtract)
the fixed round-trip cost of the handshake.
"""
import torch

# Captured before any candidate code is imported.
_Event = torch.cuda.Event


class SampleServer:
    def __init__(self, channel, device):
        self.channel = channel
        self.device = device
        self.programs = {"noop": lambda: None}
        self.last_outputs = {}

    def register(self, name, fn):
        self.programs[name] = fn

    def handle_arm(self, name):
        """Answers one arm/go pair. Returns False if the program is unknown."""
        fn = self.programs.get(name)
        if fn is None:
            self.channel.send({"ok": False, "error": f"unknown program {name}"})
            return True
        cuda = self.device.kind == "cuda"
        if name != "noop":
            self.device.flush_cache()
        else:
            self.device.sync()
        if cuda:
            start = _Event(enable_timing=True)
            end = _Event(enable_timing=True)
        self.channel.write_line("armed")
        line = self.channel.read_line()
        if line != "go":
            raise RuntimeError(f"protocol: expected 'go', got {line!r}")
        if cuda:
            start.record()
            out = fn()
            end.record()
            self.device.sync()
            ev_ms = start.elapsed_time(end)
        else:
            out = fn()
            ev_ms = -1.0
        self.channel.write_line(f"done {ev_ms!r}")
        if out is not None:
            self.last_outputs[name] = out
        return True
