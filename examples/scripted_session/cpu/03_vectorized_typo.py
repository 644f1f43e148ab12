import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>

torch::Tensor fused_bias_relu6_scale(torch::Tensor x, torch::Tensor bias, double scale) {
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  const int64_t rows = xc.size(0), cols = xc.size(1);
  const float* __restrict__ xp = xc.data_ptr<float>();
  const float* __restrict__ bp = bias.data_ptr<float>();
  float* __restrict__ op = out.data_ptr<float>();
  const float s = static_cast<float>(scale);
  at::parallel_for(0, rows, 8, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* __restrict__ xr = xp + r * cols;
      float* __restrict__ orow = op + r * cols;
      for (int64_t c = 0; c + 4 <= cols; c += 4) {
        for (int k = 0; k < 4; ++k) {
          float y = std::min(std::max(xr[c + k] + bp[c + k], 0.0f), 6.0f);
          orow[c + k] = y * s
        }
      }
    }
  });
  return out;
}
"""

fused = load_inline(name="demo_fused_unrolled", cpp_sources=[cpp_source],
                    functions=["fused_bias_relu6_scale"], extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, features, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)
        self.scale = scale

    def forward(self, x):
        return fused.fused_bias_relu6_scale(x, self.bias, self.scale)
