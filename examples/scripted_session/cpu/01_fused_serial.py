import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <algorithm>

torch::Tensor fused_bias_relu6_scale(torch::Tensor x, torch::Tensor bias, double scale) {
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  const int64_t rows = xc.size(0), cols = xc.size(1);
  const float* __restrict__ xp = xc.data_ptr<float>();
  const float* __restrict__ bp = bias.data_ptr<float>();
  float* __restrict__ op = out.data_ptr<float>();
  const float s = static_cast<float>(scale);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      float y = std::min(std::max(xp[r * cols + c] + bp[c], 0.0f), 6.0f);
      op[r * cols + c] = y * s;
    }
  }
  return out;
}
"""

fused = load_inline(name="demo_fused_serial", cpp_sources=[cpp_source],
                    functions=["fused_bias_relu6_scale"], extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, features, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)
        self.scale = scale

    def forward(self, x):
        return fused.fused_bias_relu6_scale(x, self.bias, self.scale)
