"""The reference itself as a candidate (policy `any`): its speedup must be ~1."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)
        self.scale = scale

    def forward(self, x):
        y = x + self.bias
        y = torch.relu(y)
        y = torch.clamp(y, max=6.0)
        return y * self.scale
