"""Example task: softmax over the last dimension of a (rows, cols) matrix."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


rows = 256
cols = 1024


def get_inputs():
    return [torch.randn(rows, cols) * 3.0]


def get_init_inputs():
    return []
