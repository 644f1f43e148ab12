import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>

// Sum over dim 1 of a 2-D tensor, keepdim=True; accumulates in double.
torch::Tensor sum_dim1(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2, "expects a matrix");
    auto in = x.contiguous();
    const int64_t rows = in.size(0), cols = in.size(1);
    auto out = torch::empty({rows, 1}, in.options());
    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    at::parallel_for(0, rows, 4, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            double acc = 0.0;
            const float* row = src + r * cols;
            for (int64_t c = 0; c < cols; ++c) acc += row[c];
            dst[r] = static_cast<float>(acc);
        }
    });
    return out;
}
"""

ext = load_inline(name="kf_legit_sum_dim_cpu", cpp_sources=cpp_src, functions=["sum_dim1"])


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        if dim != 1:
            raise ValueError("this kernel reduces dimension 1 only")
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.sum_dim1(x)
