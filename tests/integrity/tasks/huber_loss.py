import torch
import torch.nn as nn


class Model(nn.Module):
    """Smooth L1 (Huber) loss, beta = 1, mean over all elements."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.smooth_l1_loss(predictions, targets)


BATCH = 256
DIM = 4096


def get_inputs():
    # Uniform [0, 1) like KernelBench's 96_HuberLoss: |p - t| < 1 always, so
    # the linear branch of the loss is never taken.
    return [torch.rand(BATCH, DIM), torch.rand(BATCH, DIM)]


def get_init_inputs():
    return []
