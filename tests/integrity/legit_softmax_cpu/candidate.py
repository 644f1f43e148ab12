import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
#include <cmath>
#include <limits>

torch::Tensor softmax_rows(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2, "expects a matrix");
    auto in = x.contiguous();
    auto out = torch::empty_like(in);
    const int64_t rows = in.size(0), cols = in.size(1);
    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    at::parallel_for(0, rows, 1, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* row = src + r * cols;
            float* orow = dst + r * cols;
            float m = -std::numeric_limits<float>::infinity();
            for (int64_t c = 0; c < cols; ++c) m = row[c] > m ? row[c] : m;
            double s = 0.0;
            for (int64_t c = 0; c < cols; ++c) {
                const float e = std::exp(row[c] - m);
                orow[c] = e;
                s += e;
            }
            const float inv = static_cast<float>(1.0 / s);
            for (int64_t c = 0; c < cols; ++c) orow[c] *= inv;
        }
    });
    return out;
}
"""

_softmax = load_inline(name="kf_legit_softmax_cpu", cpp_sources=cpp_src,
                       functions=["softmax_rows"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        assert cols > 0 and rows > 0
        return _softmax.softmax_rows(x)
