import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>

// Smooth L1 with beta = 1, both branches, accumulated in double.
torch::Tensor huber_forward(torch::Tensor p, torch::Tensor t) {
    TORCH_CHECK(p.is_contiguous() && t.is_contiguous(), "contiguous inputs");
    TORCH_CHECK(p.scalar_type() == torch::kFloat32 && t.scalar_type() == torch::kFloat32, "fp32");
    const float* a = p.data_ptr<float>();
    const float* b = t.data_ptr<float>();
    const int64_t n = p.numel();
    double acc = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double d = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
        acc += d < 1.0 ? 0.5 * d * d : d - 0.5;
    }
    auto out = torch::empty({}, p.options());
    out.data_ptr<float>()[0] = static_cast<float>(acc / static_cast<double>(n));
    return out;
}
"""
ext = load_inline(name="kf_legit_huber_cpu", cpp_sources=cpp_src, functions=["huber_forward"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return ext.huber_forward(predictions.contiguous(), targets.contiguous())
