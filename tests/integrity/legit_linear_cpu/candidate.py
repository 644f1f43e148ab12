import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>

// y[i, o] = b[o] + sum_k x[i, k] * W[o, k]
torch::Tensor linear_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1), "shape mismatch");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    auto bc = b.contiguous();
    const int64_t rows = xc.size(0), in_f = xc.size(1), out_f = wc.size(0);
    auto y = torch::empty({rows, out_f}, xc.options());
    const float* px = xc.data_ptr<float>();
    const float* pw = wc.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* py = y.data_ptr<float>();
    at::parallel_for(0, rows, 4, [&](int64_t r0, int64_t r1) {
        for (int64_t i = r0; i < r1; ++i) {
            const float* xrow = px + i * in_f;
            for (int64_t o = 0; o < out_f; ++o) {
                const float* wrow = pw + o * in_f;
                float acc = 0.0f;
                for (int64_t k = 0; k < in_f; ++k) acc += xrow[k] * wrow[k];
                py[i * out_f + o] = acc + pb[o];
            }
        }
    });
    return y;
}
"""

ext = load_inline(name="kf_legit_linear_cpu", cpp_sources=cpp_src, functions=["linear_forward"])


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        # Same parameters, created the same way as the reference, so the seeded
        # initialisation matches; the forward never calls the layer.
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.linear_forward(x, self.linear.weight, self.linear.bias)
