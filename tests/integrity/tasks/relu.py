import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise ReLU."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


N = 1 << 20


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
