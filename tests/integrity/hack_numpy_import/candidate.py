import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """The computation is numpy's, not a kernel the candidate wrote."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        out = np.matmul(A.cpu().numpy(), B.cpu().numpy())
        return torch.from_numpy(out).to(A.device)
