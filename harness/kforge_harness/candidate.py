"""The untrusted candidate process. It builds `ModelNew` with the seeded
initialisation order KernelBench uses, reads each trial's inputs from a file,
runs the candidate, writes the outputs to a file, and answers the sample
protocol for timing. It never sees a reference output, and it holds neither
the timer (kforge's clock spans each sample) nor the database."""
import os
import sys
import time

# Imported (and the originals of the timers captured) before any candidate code.
import torch

from . import runtime_checks
from .channel import Channel, serve
from .common import DTYPES, build_model
from .device import Device, ProcessPinning
from .native import NativeLoadError, NativeModel, warm_meta_dispatch
from .task_loader import TaskError, describe_exception, import_file, load_task
from .tensors import fingerprint, load_tensors, save_tensors, to_list
from .timing import SampleServer

_perf_counter = time.perf_counter
_POISON = {"nan": float("nan"), "big": 3.0e38, "neg": -7.77e30}
# A bound on the blocks one poisoning takes (each a full output's size).
_POISON_MAX_BLOCKS = 256


class CandidateError(Exception):
    """The candidate itself failed (not the task): a failed evaluation."""


class CandidateHost:
    def __init__(self, channel):
        self.ch = channel
        self.identity = runtime_checks.snapshot()
        self.device = None
        self.model = None
        self.trials = {}
        self.retained = []   # (trial, outputs, fingerprints) for the later-mutation check
        self.threads_after = []
        self.server = None
        self.pinning = ProcessPinning()
        self.dtype = None
        self.seen_input_ptrs = set()  # every fresh trial's inputs get unseen addresses

    def cmd_warm(self, msg):
        """A process started ahead of its candidate does here what every load
        begins with: the CUDA context, and the lazy imports of PyTorch's meta
        dispatch (torch._dynamo, which rebinds torch.manual_seed). Trusted
        code, before anything of a candidate is imported: the identity
        snapshot is taken again afterwards, so only what the candidate
        replaces is seen."""
        self.device = Device(msg["device"], msg.get("index", 0))
        if self.device.kind == "cuda":
            torch.empty(1, device=self.device.torch_device)
            self.device.sync()
        torch.relu(torch.empty(1, device="meta"))
        self.identity = runtime_checks.snapshot()
        return {"ok": True}

    def cmd_load(self, msg):
        # The build's environment (TORCH_EXTENSIONS_DIR of a build done ahead,
        # TORCH_CUDA_ARCH_LIST): a process started ahead of its candidate
        # learns it here, before anything of the candidate is imported.
        for key, value in (msg.get("env") or {}).items():
            os.environ[key] = value
        if self.device is None or (self.device.kind, self.device.index) != (
                msg["device"], msg.get("index", 0)):
            self.device = Device(msg["device"], msg.get("index", 0))
        self.server = SampleServer(self.ch, self.device)
        self.dtype = DTYPES.get(msg.get("dtype") or "", None)
        torch.set_grad_enabled(False)
        task = load_task(msg["task_path"])
        t0 = _perf_counter()
        if msg.get("format") == "native":
            self.model = self._load_native(msg, task)
            compile_seconds = _perf_counter() - t0
        else:
            try:
                module = import_file(msg["candidate_path"], "kforge_candidate")
            except TaskError as exc:
                raise CandidateError(str(exc)) from None
            compile_seconds = _perf_counter() - t0
            cls = getattr(module, "ModelNew", None)
            if cls is None:
                raise CandidateError("the candidate defines no 'ModelNew'")
            try:
                self.model = build_model(cls, task, msg["seed"], self.device.torch_device,
                                         self.dtype, "ModelNew")
            except TaskError as exc:
                raise CandidateError(str(exc)) from None
        self.device.sync()
        return {"ok": True, "compile_seconds": compile_seconds,
                "identity_changed": runtime_checks.changed(self.identity),
                "threads": runtime_checks.thread_counts()}

    def _load_native(self, msg, task):
        """kforge built the object (nvcc, outside this process); the weights are
        the reference Model's, built with the same seeded order."""
        if self.device.kind != "cuda":
            raise CandidateError("native candidates run on cuda devices only")
        reference = build_model(task.Model, task, msg["seed"], self.device.torch_device,
                                self.dtype, "Model")
        # The output shapes come from running the reference on meta tensors,
        # and PyTorch's first meta op imports torch._dynamo, which rebinds
        # torch.manual_seed. Done here, by trusted code, before the object is
        # loaded; the identity snapshot is taken again afterwards so that
        # only what the candidate replaces is seen.
        warm_meta_dispatch(task, reference)
        self.identity = runtime_checks.snapshot()
        try:
            return NativeModel(msg["native_library"], reference)
        except NativeLoadError as exc:
            raise CandidateError(str(exc)) from None

    def _poison_allocator(self, kind, nbytes):
        """Leave every cached free block the outputs could be placed in full of
        a poison value, so an output the candidate never wrote shows up."""
        if kind is None or nbytes <= 0 or self.device.kind != "cuda":
            return
        dev = self.device.torch_device
        n = (nbytes + 3) // 4
        reserved = torch.cuda.memory_reserved(dev)
        blocks = []
        # The caching allocator hands out the best-fitting free block, so
        # taking blocks of the output size until it must reserve new memory
        # takes every cached block an output of that size could land in
        # (one block is not enough: on an H100 a freed input of the same size
        # fit better than the poisoned block, and the output held input values).
        try:
            while len(blocks) < _POISON_MAX_BLOCKS:
                blocks.append(torch.empty(n, dtype=torch.float32, device=dev))
                if torch.cuda.memory_reserved(dev) > reserved:
                    break
        except torch.cuda.OutOfMemoryError:
            pass  # the device is full: what was taken is all there is to poison
        for b in blocks:
            b.fill_(_POISON[kind])
        self.device.sync()
        del blocks

    def cmd_run(self, msg):
        k = msg["trial"]
        if self.device.kind == "cuda":
            # Every trial's inputs must land at addresses no earlier trial used
            # (fresh_addresses), so the blocks freed by earlier trials, all at
            # such addresses, are of no use here; kept in the allocator's cache
            # they added one input-sized block per trial (the candidate process
            # held 43 GiB on the H100 after the trials of L1 19_ReLU, 6 GiB
            # inputs, and the reference process then ran out of memory). It
            # also returns the block the last poisoning reserved.
            torch.cuda.empty_cache()
        loaded = load_tensors(msg["input_file"], self.device.torch_device)
        reuse = msg.get("reuse_buffers_of")
        if reuse is not None and reuse in self.trials:
            # New values at the same addresses: defeats caching keyed by pointer.
            inputs = self.trials[reuse]["inputs"]
            for dst, src in zip(inputs, loaded):
                if isinstance(dst, torch.Tensor):
                    dst.copy_(src)
            del loaded
        else:
            inputs = runtime_checks.fresh_addresses(loaded, self.seen_input_ptrs)
            del loaded
        if msg.get("shift_allocator"):
            self._shift = torch.empty(4099, dtype=torch.uint8, device=self.device.torch_device)
        before = [fingerprint(x) for x in inputs]
        threads_before = runtime_checks.thread_counts()
        # Last before the call: fingerprinting allocates temporaries of the
        # inputs' size, which would take the poisoned blocks and overwrite them.
        self._poison_allocator(msg.get("poison"), msg.get("poison_bytes", 0))
        t0 = _perf_counter()
        try:
            with torch.no_grad():
                out = self.model(*inputs)
            self.device.sync()
        except Exception as exc:  # noqa: BLE001 - the candidate failed
            short, tb = describe_exception(exc)
            return {"ok": False, "kind": "candidate_error", "error": short, "traceback": tb}
        seconds = _perf_counter() - t0
        outputs = to_list(out)
        obs = runtime_checks.output_observations(outputs, inputs, self.model)
        after = [fingerprint(x) for x in inputs]
        threads_after = runtime_checks.thread_counts()
        self.threads_after.append(threads_after)
        plain = [o for o in outputs]
        fps = [fingerprint(o) for o in plain]
        if msg.get("retain", True):
            self.retained.append((k, plain, fps))
        if msg.get("keep_inputs", True):
            self.trials[k] = {"inputs": inputs}
        # Untyped copies only: a subclass's overrides cannot run on the far side.
        save_tensors(msg["out_file"], [o.as_subclass(torch.Tensor) if isinstance(o, torch.Tensor)
                                       else o for o in outputs])
        return {"ok": True, "seconds": seconds, "outputs": obs,
                "inputs_changed": [i for i, (a, b) in enumerate(zip(before, after)) if a != b],
                "threads_before": threads_before, "threads_after": threads_after,
                "identity_changed": runtime_checks.changed(self.identity),
                "fingerprints": fps, "input_ptrs": runtime_checks.input_ptrs(inputs)}

    def cmd_setup_timing(self, msg):
        inputs = self.trials[msg["trial"]]["inputs"]
        model = self.model
        self.server.register("candidate", lambda: model(*inputs))
        self.server.set_inputs(inputs)
        return {"ok": True}

    def cmd_relocate(self, msg):
        return {"ok": True, "moved": self.server.relocate(msg["seed"])}

    def cmd_pin(self, msg):
        return {"ok": True, "cpus": self.pinning.apply(msg.get("cpus"))}

    def cmd_dump_timed(self, msg):
        out = self.server.last_outputs.get("candidate")
        if out is None:
            return {"ok": False, "kind": "internal", "error": "no timed output to dump"}
        outputs = to_list(out)
        save_tensors(msg["out_file"], [o.as_subclass(torch.Tensor) if isinstance(o, torch.Tensor)
                                       else o for o in outputs])
        return {"ok": True}

    def cmd_rerun_timed(self, msg):
        """After the timing window: new values into the timed inputs (same
        addresses), one more call of the timed program, its output to a file.
        A program that stopped computing once it was being timed replays an
        answer that no longer fits its inputs."""
        inputs = self.trials[msg["trial"]]["inputs"]
        for dst, src in zip(inputs, load_tensors(msg["input_file"], self.device.torch_device)):
            if isinstance(dst, torch.Tensor):
                dst.copy_(src)
        self.device.sync()
        try:
            with torch.no_grad():
                out = self.server.programs["candidate"]()
            self.device.sync()
        except Exception as exc:  # noqa: BLE001 - the candidate failed
            short, tb = describe_exception(exc)
            return {"ok": False, "kind": "candidate_error", "error": short, "traceback": tb}
        save_tensors(msg["out_file"], [o.as_subclass(torch.Tensor) if isinstance(o, torch.Tensor)
                                       else o for o in to_list(out)])
        return {"ok": True}

    def cmd_final_checks(self, msg):
        mutated = []
        for k, outs, fps in self.retained:
            now = [fingerprint(o) for o in outs]
            if now != fps:
                mutated.append(k)
        return {"ok": True, "outputs_mutated_later": mutated,
                "identity_changed": runtime_checks.changed(self.identity),
                "threads": runtime_checks.thread_counts()}


def failure_reply(exc):
    """The reply to a command that raised: the task's fault or the candidate's."""
    if isinstance(exc, TaskError):
        return {"ok": False, "kind": "bad_task", "error": str(exc)}
    if isinstance(exc, CandidateError):
        return {"ok": False, "kind": "candidate_error", "error": str(exc)}
    short, tb = describe_exception(exc)
    return {"ok": False, "kind": "candidate_error", "error": short, "traceback": tb}


def main():
    channel = Channel()
    return serve(channel, CandidateHost(channel), failure_reply)


if __name__ == "__main__":
    sys.exit(main())
