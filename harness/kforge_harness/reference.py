"""The clean reference process. It builds `Model`, makes the inputs for each
trial, computes and keeps the reference outputs, compares candidate outputs
(read from files) against them, and runs the eager and torch.compile programs
for timing. Candidate code never runs here."""
import math
import os
import sys
import time
import traceback

import torch

from . import compare, runtime_checks
from .channel import Channel, serve
from .common import DTYPES, build_model, make_inputs, make_variant_inputs
from .device import Device, ProcessPinning
from .task_loader import TaskError, describe_exception, load_task
from .tensors import fingerprint, load_tensors, save_tensors, to_list
from .timing import SampleServer


def _stop_compile_workers():
    """Ends inductor's compile-worker pool once compiling is done. Its threads
    and processes would otherwise stay beside the eager program timed in this
    process, which the candidate's process never has (on an H100, L1 12 as its
    own candidate came out 1-4% faster than the reference in four runs with
    the compile program in the window, 0.98-1.00 in two without it)."""
    try:
        from torch._inductor.async_compile import shutdown_compile_workers
        shutdown_compile_workers()
    except Exception:  # noqa: BLE001 - a torch without it
        pass


class Reference:
    """With `reuse` (kforge keeps this process for a task's later candidates),
    every trial's and variant's reply and outputs are kept, under a byte cap,
    and answered again without running the model; the torch.compile program
    is built once. A cached answer is only given for the same seed and
    tolerances, so it is exactly what a fresh computation would return."""

    def __init__(self, channel):
        self.ch = channel
        self.device = None
        self.task = None
        self.model = None
        self.dtype = None
        self.trials = {}   # trial -> {"inputs": [...], "outputs": [...]}
        self.server = None
        self.pinning = ProcessPinning()
        self.compiled = None
        self.compiled_trial = None
        self.compile_reply = None
        self.reuse = False
        self.cache_max_bytes = 0
        self.cached_bytes = 0
        self.cached = {}        # trial -> (key, reply): answers given again
        self.seeds = {}         # trial -> seed, to make its inputs again
        self.timing_started = False  # the timed programs may have touched kept inputs

    # -- commands ---------------------------------------------------------
    def cmd_load(self, msg):
        self.device = Device(msg["device"], msg.get("index", 0))
        self.server = SampleServer(self.ch, self.device)
        self.dtype = DTYPES.get(msg.get("dtype") or "", None)
        torch.set_grad_enabled(False)
        self.task = load_task(msg["path"])
        self.reuse = bool(msg.get("reuse", False))
        self.cache_max_bytes = int(msg.get("cache_max_bytes", 0))
        self.model = build_model(self.task.Model, self.task, msg["seed"], self.device.torch_device,
                                 self.dtype, "Model")
        n_params = sum(p.numel() for p in self.model.parameters())
        return {"ok": True, "device": self.device.info(), "parameters": n_params}

    def _cache_key(self, msg, *fields):
        return tuple(msg.get(f) for f in ("seed", "atol", "rtol") + fields)

    def _fresh_inputs(self, k):
        """Trial k's inputs as they were made: the kept list, unless the timing
        window has run on it (a model may change its inputs in place)."""
        trial = self.trials.get(k, {})
        if "variant_of" in trial:
            base, variant, seed = trial["variant_of"]
            return make_variant_inputs(self._fresh_inputs(base), variant, seed)[0]
        kept = trial.get("inputs")
        if kept is not None and not self.timing_started:
            return kept
        return make_inputs(self.task, self.seeds[k], self.device.torch_device, self.dtype)

    def _remember(self, k, key, reply, outputs):
        """Keeps a reusable answer while the kept outputs fit under the cap."""
        if not self.reuse:
            return False
        nbytes = sum(o.numel() * o.element_size() for o in outputs)
        if k not in self.cached and self.cached_bytes + nbytes > self.cache_max_bytes:
            return False
        if k not in self.cached:
            self.cached_bytes += nbytes
        self.cached[k] = (key, dict(reply))
        return True

    def _forget(self, k):
        entry = self.cached.pop(k, None)
        if entry is not None and k in self.trials:
            self.cached_bytes -= sum(o.numel() * o.element_size()
                                     for o in self.trials[k]["outputs"])

    def _answer_again(self, k, key, msg):
        """The kept reply for trial k, when it was computed for the same key;
        the input file is written again if kforge asks for it."""
        entry = self.cached.get(k)
        if entry is None or entry[0] != key or k not in self.trials:
            return None
        if msg.get("input_file"):
            save_tensors(msg["input_file"], self._fresh_inputs(k))
        return dict(entry[1], cached=True)

    def cmd_trial(self, msg):
        k = msg["trial"]
        key = self._cache_key(msg)
        again = self._answer_again(k, key, msg)
        if again is not None:
            return again
        self._forget(k)
        self.seeds[k] = msg["seed"]
        inputs = make_inputs(self.task, msg["seed"], self.device.torch_device, self.dtype)
        t0 = time.perf_counter()
        with torch.no_grad():
            out = self.model(*inputs)
        self.device.sync()
        seconds = time.perf_counter() - t0
        outputs = to_list(out)
        for i, o in enumerate(outputs):
            if not isinstance(o, torch.Tensor):
                raise TaskError(f"Model.forward output {i} is {type(o).__name__}, not a tensor")
        if msg.get("input_file"):
            save_tensors(msg["input_file"], inputs)
        atol, rtol = msg["atol"], msg["rtol"]
        profile = [compare.output_profile(o, atol, rtol) for o in outputs]
        same_as_first = None
        if k != 0 and 0 in self.trials:
            st = compare.compare_lists(self.trials[0]["outputs"], outputs, atol, rtol)
            same_as_first = st.get("count_ok", False) and all(
                o.get("shape_ok") and o.get("mismatched", 1) == 0 for o in st["outputs"])
        keep = msg.get("keep", k == 0)
        self.trials[k] = {"inputs": inputs if keep else None, "outputs": outputs}
        reply = {"ok": True, "seconds": seconds,
                "outputs": [{"shape": list(o.shape), "dtype": str(o.dtype),
                             "bytes": o.numel() * o.element_size()} for o in outputs],
                "inputs": [{"shape": list(x.shape), "dtype": str(x.dtype),
                            "bytes": x.numel() * x.element_size(), "fingerprint": fingerprint(x)}
                           if isinstance(x, torch.Tensor) else {"value": repr(x)[:80]}
                           for x in inputs],
                "profile": profile, "same_as_first": same_as_first}
        self._remember(k, key, reply, outputs)
        return reply

    def _load_candidate_file(self, path):
        """The candidate's outputs, or None with the reason when the file it
        wrote is not a valid one: a hostile or broken candidate fails its own
        comparison, never the task's reference process."""
        try:
            return load_tensors(path, self.device.torch_device), None
        except (ValueError, OSError) as exc:
            return None, {"ok": True, "count_ok": False, "outputs": [],
                          "detail": f"the candidate's output file is unusable: {exc}"}

    def cmd_compare(self, msg):
        refs = self.trials[msg["trial"]]["outputs"]
        cands, unusable = self._load_candidate_file(msg["file"])
        if unusable:
            return unusable
        return {"ok": True, **compare.compare_lists(refs, cands, msg["atol"], msg["rtol"])}

    def cmd_compare_pair(self, msg):
        a, unusable = self._load_candidate_file(msg["file_a"])
        if unusable:
            return unusable
        b, unusable = self._load_candidate_file(msg["file_b"])
        if unusable:
            return unusable
        return {"ok": True, **compare.compare_lists(a, b, msg["atol"], msg["rtol"])}

    def cmd_variant(self, msg):
        """Reference outputs on an input-distribution variant of a kept
        trial's inputs. Measures only: kforge decides whether the variant is
        usable (finite, not degenerate, different from the base answer)."""
        k = msg["trial"]
        key = self._cache_key(msg, "variant", "base_trial")
        again = self._answer_again(k, key, msg)
        if again is not None:
            return again
        self._forget(k)
        base = self.trials[msg["base_trial"]]
        inputs, changed = make_variant_inputs(self._fresh_inputs(msg["base_trial"]),
                                              msg["variant"], msg["seed"])
        reply = {"ok": True, "changed_inputs": changed, "outputs": [], "profile": [],
                 "same_as_base": None}
        if not changed:
            return reply
        with torch.no_grad():
            outputs = to_list(self.model(*inputs))
        self.device.sync()
        atol, rtol = msg["atol"], msg["rtol"]
        reply["profile"] = [compare.output_profile(o, atol, rtol) for o in outputs]
        reply["base_profile"] = [compare.output_profile(o, atol, rtol) for o in base["outputs"]]
        st = compare.compare_lists(base["outputs"], outputs, atol, rtol)
        reply["same_as_base"] = st.get("count_ok", False) and all(
            o.get("shape_ok") and o.get("mismatched", 1) == 0 for o in st["outputs"])
        self.trials[k] = {"inputs": None, "outputs": outputs}
        if msg.get("input_file"):
            save_tensors(msg["input_file"], inputs)
        self.seeds[k] = msg["seed"]
        if self._remember(k, key, reply, outputs):
            # Made again from the base trial's inputs when the file is asked for.
            self.trials[k]["variant_of"] = (msg["base_trial"], msg["variant"], msg["seed"])
        return reply

    def cmd_unload(self, msg):
        """Forgets the task, so the process can load another (kforge tasks scan)."""
        self.trials = {}
        self.cached = {}
        self.cached_bytes = 0
        self.seeds = {}
        self.timing_started = False
        self.model = None
        self.compiled = None
        self.compiled_trial = None
        self.compile_reply = None
        self.task = None
        if self.device is not None and self.device.kind == "cuda":
            torch.cuda.empty_cache()
        return {"ok": True}

    def cmd_drop(self, msg):
        if msg["trial"] in self.cached:
            return {"ok": True, "kept": True}  # answered again for the next candidate
        self.trials.pop(msg["trial"], None)
        if self.device.kind == "cuda":
            torch.cuda.empty_cache()
        return {"ok": True}

    def _first_calls(self, compiled, inputs):
        """Two calls on `inputs`: the build (or, for a program built on other
        inputs, its guards) happens here, not in the window's warm-up."""
        with torch.no_grad():
            for _ in range(2):
                compiled(*inputs)
        self.device.sync()

    def _build_compiled(self, inputs):
        """torch.compile's program for the model, built and run twice on
        `inputs`; the reply part kforge records (`seconds` is the build)."""
        t0 = time.perf_counter()
        try:
            compiled = torch.compile(self.model)
            self._first_calls(compiled, inputs)
            self.compiled = compiled
            reply = {"ok": True, "seconds": time.perf_counter() - t0}
            _stop_compile_workers()
        except Exception as exc:  # noqa: BLE001 - inductor may be unavailable here
            short, _ = describe_exception(exc)
            reply = {"ok": False, "error": short, "seconds": time.perf_counter() - t0}
        return reply

    def cmd_compile_ahead(self, msg):
        """Builds the torch.compile program before any trial, on inputs made
        with trial 0's seed: kforge sends this without waiting, so the build
        overlaps the candidate's build and load; setup_timing then binds the
        program to the timed inputs (same shapes: no second build)."""
        if self.compile_reply is None:
            try:
                inputs = make_inputs(self.task, msg["seed"], self.device.torch_device, self.dtype)
            except Exception as exc:  # noqa: BLE001 - as a failed build: the trials decide
                self.compile_reply = {"ok": False, "error": describe_exception(exc)[0],
                                      "seconds": 0.0}
            else:
                self.compile_reply = self._build_compiled(inputs)
                del inputs
            self.compiled_trial = None  # built, bound to no trial yet
            if self.device.kind == "cuda":
                torch.cuda.empty_cache()
        return {"ok": True, "compile": self.compile_reply}

    def cmd_setup_timing(self, msg):
        k = msg["trial"]
        inputs = self.trials[k]["inputs"]
        model = self.model
        self.server.register("eager", lambda: model(*inputs))
        self.server.set_inputs(inputs)
        self.timing_started = True
        reply = {"ok": True, "compile": None}
        ahead = self.compile_reply is not None and self.compiled_trial is None
        if msg.get("compile") and self.compile_reply is not None and (
                ahead or self.compiled_trial == k):
            # Built ahead of this window, or for an earlier candidate of this
            # task: the same program.
            if self.compiled is not None:
                compiled = self.compiled
                if ahead:
                    self._first_calls(compiled, inputs)
                self.server.register("compile", lambda: compiled(*inputs))
            reply["compile"] = dict(self.compile_reply, reused=not ahead, ahead=ahead)
            if ahead and not self.reuse:
                self.compile_reply = None  # this window's only
            else:
                self.compiled_trial = k
        elif msg.get("compile"):
            reply["compile"] = self._build_compiled(inputs)
            if self.compiled is not None and reply["compile"]["ok"]:
                compiled = self.compiled
                self.server.register("compile", lambda: compiled(*inputs))
            if self.reuse:
                self.compiled_trial = k
                self.compile_reply = dict(reply["compile"])
        reply["threads"] = runtime_checks.thread_counts()
        return reply

    def cmd_sol(self, msg):
        k = msg["trial"]
        inputs = self.trials[k]["inputs"]
        outputs = self.trials[k]["outputs"]
        in_bytes = sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))
        param_bytes = sum(p.numel() * p.element_size() for p in self.model.parameters())
        buf_bytes = sum(b.numel() * b.element_size() for b in self.model.buffers())
        out_bytes = sum(o.numel() * o.element_size() for o in outputs)
        flops = None
        try:
            from torch.utils.flop_counter import FlopCounterMode
            counter = FlopCounterMode(display=False)
            with counter, torch.no_grad():
                self.model(*inputs)
            flops = int(counter.get_total_flops())
        except Exception:  # noqa: BLE001 - ops the counter does not know
            flops = None
        dtype = outputs[0].dtype if outputs and outputs[0].is_floating_point() else torch.float32
        ceilings = self.device.measure_ceilings(dtype if msg.get("matmul_in_task_dtype", True)
                                                else torch.float32)
        return {"ok": True, "bytes": in_bytes + param_bytes + buf_bytes + out_bytes,
                "input_bytes": in_bytes, "param_bytes": param_bytes + buf_bytes,
                "output_bytes": out_bytes, "flops": flops, **ceilings}

    def cmd_relocate(self, msg):
        return {"ok": True, "moved": self.server.relocate(msg["seed"])}

    def cmd_pin(self, msg):
        return {"ok": True, "cpus": self.pinning.apply(msg.get("cpus"))}

    def cmd_arm(self, msg):
        self.server.handle_arm(msg["program"])
        return None


def failure_reply(exc):
    """The reply to a command that raised: the task's fault, no room, or ours."""
    if isinstance(exc, TaskError):
        return {"ok": False, "kind": "bad_task", "error": str(exc)}
    if isinstance(exc, torch.cuda.OutOfMemoryError):
        return {"ok": False, "kind": "oom", "error": describe_exception(exc)[0]}
    short, tb = describe_exception(exc)
    return {"ok": False, "kind": "internal", "error": short, "traceback": tb}


def main():
    channel = Channel()
    return serve(channel, Reference(channel), failure_reply)


if __name__ == "__main__":
    sys.exit(main())
