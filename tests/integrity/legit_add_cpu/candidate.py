import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SCALE = 2.0

cpp_src = """
#include <torch/extension.h>

torch::Tensor axpy(torch::Tensor a, torch::Tensor b, double scale) {
    TORCH_CHECK(a.numel() == b.numel(), "size mismatch");
    auto out = torch::empty_like(a);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    const float s = static_cast<float>(scale);
    at::parallel_for(0, a.numel(), 1 << 14, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) po[i] = pa[i] + s * pb[i];
    });
    return out;
}
"""

_ext = None


def _build():
    global _ext
    if _ext is None:
        _ext = load_inline(name="kf_legit_add_cpu", cpp_sources=[cpp_src], functions=["axpy"])
    return _ext


def _launch(a, b, scale):
    return _build().axpy(a, b, scale)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _build()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a = a.contiguous()
        b = b.contiguous()
        n = a.numel() * 1
        if n == 0:
            return torch.empty_like(a)
        return _launch(a, b, SCALE)
