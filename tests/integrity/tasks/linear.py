import torch
import torch.nn as nn


class Model(nn.Module):
    """y = x @ W^T + b with an nn.Linear layer."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


BATCH = 128
IN_FEATURES = 256
OUT_FEATURES = 192


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
