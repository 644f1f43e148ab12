import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
#include <vector>

torch::Tensor mse(torch::Tensor p, torch::Tensor t) {
    TORCH_CHECK(p.sizes() == t.sizes(), "shape mismatch");
    auto pc = p.contiguous();
    auto tc = t.contiguous();
    const int64_t n = pc.numel();
    const float* a = pc.data_ptr<float>();
    const float* b = tc.data_ptr<float>();
    const int64_t chunk = 1 << 16;
    const int64_t chunks = (n + chunk - 1) / chunk;
    std::vector<double> partial(chunks, 0.0);
    at::parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            double s = 0.0;
            const int64_t end = std::min(n, (c + 1) * chunk);
            for (int64_t i = c * chunk; i < end; ++i) {
                const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
                s += d * d;
            }
            partial[c] = s;
        }
    });
    double total = 0.0;
    for (double s : partial) total += s;
    auto out = torch::empty({}, pc.options());
    out.data_ptr<float>()[0] = static_cast<float>(total / static_cast<double>(n));
    return out;
}
"""

ext = load_inline(name="kf_legit_mse_cpu", cpp_sources=cpp_src, functions=["mse"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return ext.mse(predictions, targets)
