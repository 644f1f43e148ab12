import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean squared error between predictions and targets."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


BATCH = 256
DIM = 4096


def get_inputs():
    # Uniform [0, 1) like KernelBench's loss tasks: a closed form (1/6) is close.
    return [torch.rand(BATCH, DIM), torch.rand(BATCH, DIM)]


def get_init_inputs():
    return []
