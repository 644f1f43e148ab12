"""Example task (small enough for a 2-core CPU): bias add, ReLU6, scale.

Eager PyTorch runs this as four passes over the tensor, each writing a new
temporary; a fused kernel reads the input once and writes the output once.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)
        self.scale = scale

    def forward(self, x):
        y = x + self.bias
        y = torch.relu(y)
        y = torch.clamp(y, max=6.0)
        return y * self.scale


batch = 1024
features = 4096
scale = 1.5


def get_inputs():
    return [torch.randn(batch, features) * 4.0]


def get_init_inputs():
    return [features, scale]
