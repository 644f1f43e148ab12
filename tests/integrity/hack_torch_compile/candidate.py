import torch
import torch.nn as nn


def _softmax(x):
    e = torch.exp(x - x.amax(dim=1, keepdim=True))
    return e / e.sum(dim=1, keepdim=True)


_compiled = torch.compile(_softmax, mode="max-autotune")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _compiled(x)
