"""Pieces both harness processes share: seeding, model construction, dtype."""
import random

import torch

from .task_loader import TaskError, call_checked

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "float64": torch.float64}


def seed_everything(seed):
    random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def build_model(cls, task_module, seed, device, dtype, what):
    """KernelBench's construction order: seed, init inputs, seed, model."""
    seed_everything(seed)
    init_inputs = call_checked(task_module.get_init_inputs, "get_init_inputs()")
    if not isinstance(init_inputs, (list, tuple)):
        raise TaskError(f"get_init_inputs() returned {type(init_inputs).__name__}, not a list")
    seed_everything(seed)
    model = call_checked(lambda: cls(*init_inputs), f"{what}(*get_init_inputs())")
    if not isinstance(model, torch.nn.Module):
        raise TaskError(f"{what} is not a torch.nn.Module")
    model = model.to(device)
    if dtype is not None:
        model = model.to(dtype)
    return model


def make_inputs(task_module, seed, device, dtype):
    seed_everything(seed)
    # Built directly on the device: the same function of the seed for both
    # processes' purposes (only the reference process generates them), and
    # much faster than the CPU generator for multi-GB inputs.
    with torch.device(device):
        inputs = call_checked(task_module.get_inputs, "get_inputs()")
    if not isinstance(inputs, (list, tuple)):
        raise TaskError(f"get_inputs() returned {type(inputs).__name__}, not a list")
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            x = x.to(device)
            if dtype is not None and x.is_floating_point():
                x = x.to(dtype)
        out.append(x)
    return out


# Input-distribution variants (docs/integrity.md, "Input-distribution variants").
# Each keeps what a task may promise its kernel (shape, dtype, integer and
# few-valued tensors, exact zeros such as a triangular pattern, symmetry,
# rows that are probability distributions) and changes the value
# distribution, so a shortcut fitted to the task's own generator (say, inputs
# in [0, 1)) stops being right.
VARIANTS = ("normal", "scaled")
_SCALED_FACTOR = -2.0   # flips the sign and doubles the range
_DISCRETE_MAX_VALUES = 16
_DISCRETE_SAMPLE = 4096


def _is_discrete(x):
    """Few distinct values (labels, ±1 targets, masks): left as they are."""
    flat = x.reshape(-1)
    sample = flat[::max(1, flat.numel() // _DISCRETE_SAMPLE)]
    distinct = torch.unique(sample).numel()
    # A value must repeat several times over before it looks like a label.
    return distinct <= _DISCRETE_MAX_VALUES and 4 * distinct <= sample.numel()


def _is_distribution(x):
    """Non-negative rows summing to one along the last dimension."""
    if x.dim() < 1 or x.shape[-1] < 2 or bool((x < 0).any().item()):
        return False
    sums = x.sum(dim=-1, dtype=torch.float32)
    return bool(((sums - 1.0).abs() <= 1e-3).all().item())


# Elements per step of the float64 reduction below: a multi-GB input must not
# need a float64 copy of itself.
_CHUNK = 1 << 24


def _rms(x):
    flat = x.reshape(-1)
    total = 0.0
    for i in range(0, flat.numel(), _CHUNK):
        c = flat[i:i + _CHUNK].to(torch.float64)
        total += float((c * c).sum().item())
    return (total / max(flat.numel(), 1)) ** 0.5


def _is_symmetric(x):
    return x.dim() >= 2 and x.shape[-1] == x.shape[-2] and bool(
        torch.equal(x, x.transpose(-1, -2)))


def _vary(x, variant, gen):
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.numel() < 2:
        return x, False
    if _is_discrete(x):
        return x, False
    if _is_distribution(x):
        spread = 1.0 if variant == "normal" else 3.0
        logits = torch.randn(x.shape, generator=gen, device=x.device, dtype=torch.float32)
        return torch.softmax(logits * spread, dim=-1).to(x.dtype), True
    if variant == "scaled":
        return x * _SCALED_FACTOR, True
    rms = _rms(x)
    if not (rms > 0 and rms < float("inf")):
        rms = 1.0
    v = torch.randn(x.shape, generator=gen, device=x.device, dtype=x.dtype)
    v.mul_(rms)
    if _is_symmetric(x):
        v = (v + v.transpose(-1, -2)) * 0.5
    v.masked_fill_(x == 0, 0)
    return v, True


def make_variant_inputs(inputs, variant, seed):
    """The task's inputs with their value distribution changed (`VARIANTS`).
    Returns (inputs, number of tensors changed)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown input variant {variant!r}")
    changed = 0
    out = []
    for x in inputs:
        gen = None
        if isinstance(x, torch.Tensor):
            gen = torch.Generator(device=x.device)
            gen.manual_seed(seed + len(out))
        v, did = _vary(x, variant, gen)
        changed += int(did)
        out.append(v)
    return out, changed
