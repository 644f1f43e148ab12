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
