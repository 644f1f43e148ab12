import torch
import torch.nn as nn


class Model(nn.Module):
    """Sum over dimension 1 of a (batch, n) matrix, keeping the dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


BATCH = 128
N = 4096


def get_inputs():
    return [torch.randn(BATCH, N)]


def get_init_inputs():
    return [1]
