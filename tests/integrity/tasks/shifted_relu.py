import torch
import torch.nn as nn


class Model(nn.Module):
    """relu(x - 10) on standard-normal inputs: (almost) always zero, a degenerate
    task on which a candidate returning zeros passes a naive correctness check."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x - 10.0)


N = 1 << 16


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
