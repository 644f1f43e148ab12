"""Runtime integrity observations made inside the candidate process.

They are observations, not verdicts: kforge maps them to flags. The harness
captures the originals of every timer and sync function before the candidate
is imported, uses only those itself, and reports any that were replaced.
"""
import builtins
import inspect
import os
import threading
import time

import torch

WATCHED = {
    "time.perf_counter": (time, "perf_counter"),
    "time.perf_counter_ns": (time, "perf_counter_ns"),
    "time.time": (time, "time"),
    "time.time_ns": (time, "time_ns"),
    "time.monotonic": (time, "monotonic"),
    "time.monotonic_ns": (time, "monotonic_ns"),
    "time.process_time": (time, "process_time"),
    "time.sleep": (time, "sleep"),
    "torch.cuda.synchronize": (torch.cuda, "synchronize"),
    "torch.cuda.Event": (torch.cuda, "Event"),
    "torch.cuda.current_stream": (torch.cuda, "current_stream"),
    "torch.cuda.Stream": (torch.cuda, "Stream"),
    "torch.cuda.Event.record": (torch.cuda.Event, "record"),
    "torch.cuda.Event.elapsed_time": (torch.cuda.Event, "elapsed_time"),
    "torch.cuda.Event.synchronize": (torch.cuda.Event, "synchronize"),
    "torch.Tensor": (torch, "Tensor"),
    "torch.Tensor.__torch_function__": (torch.Tensor, "__torch_function__"),
    "torch.nn.Module.__call__": (torch.nn.Module, "__call__"),
    "torch.allclose": (torch, "allclose"),
    "torch.equal": (torch, "equal"),
    "torch.save": (torch, "save"),
    "torch.load": (torch, "load"),
    "torch.manual_seed": (torch, "manual_seed"),
    "builtins.print": (builtins, "print"),
    "builtins.isinstance": (builtins, "isinstance"),
    "builtins.type": (builtins, "type"),
    "os.write": (os, "write"),
}


def _static(owner, attr):
    # getattr would build a fresh bound method for classmethods each time;
    # the attribute as stored is what a monkey-patch replaces.
    try:
        return inspect.getattr_static(owner, attr)
    except AttributeError:
        return None


def snapshot():
    return {name: id(_static(owner, attr)) for name, (owner, attr) in WATCHED.items()}


def changed(before):
    now = snapshot()
    return sorted(k for k, v in now.items() if before.get(k) != v)


def thread_counts():
    try:
        native = len(os.listdir("/proc/self/task"))
    except OSError:
        native = -1
    return {"python": threading.active_count(), "native": native}


def output_observations(outputs, inputs, model):
    """Type, ownership and aliasing of each output."""
    from .tensors import overlaps

    obs = []
    params = list(model.parameters()) + list(model.buffers())
    for i, o in enumerate(outputs):
        entry = {"index": i, "type": f"{type(o).__module__}.{type(o).__qualname__}"}
        entry["exact_tensor"] = type(o) is torch.Tensor
        if isinstance(o, torch.Tensor):
            entry["aliases_input"] = any(isinstance(x, torch.Tensor) and overlaps(o, x)
                                         for x in inputs)
            entry["aliases_parameter"] = any(overlaps(o, p) for p in params)
            entry["aliases_other_output"] = any(
                j != i and isinstance(p, torch.Tensor) and overlaps(o, p)
                for j, p in enumerate(outputs))
            entry["requires_grad"] = bool(o.requires_grad)
            try:
                entry["is_view"] = o._base is not None
            except Exception:  # noqa: BLE001
                entry["is_view"] = False
        obs.append(entry)
    return obs


def _storage_ptr(t):
    from .tensors import storage_ptrs

    return storage_ptrs(t)[0]


def input_ptrs(inputs):
    """Storage addresses of the tensor inputs (None for other arguments)."""
    return [_storage_ptr(x) if isinstance(x, torch.Tensor) and x.numel() else None
            for x in inputs]


def fresh_addresses(inputs, seen, attempts=4):
    """Moves any input whose storage sits at an address an earlier trial used.

    A result cache keyed by address must miss on every fresh trial: only the
    deliberate same-address trial may reuse an address. The clashing tensors
    stay alive while their copies are made, so the allocator cannot hand the
    same block straight back. `seen` (a set) gains this trial's addresses.
    """
    out = list(inputs)
    held = []
    for _ in range(attempts):
        clash = [i for i, p in enumerate(input_ptrs(out)) if p is not None and p in seen]
        if not clash:
            break
        held.append(list(out))
        for i in clash:
            out[i] = out[i].clone()
    del held
    seen.update(p for p in input_ptrs(out) if p is not None)
    return out
