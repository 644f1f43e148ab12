import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void fused_bias_relu6_scale_kernel(const float* __restrict__ x,
                                              const float* __restrict__ bias,
                                              float* __restrict__ out, int64_t n, int64_t cols,
                                              float scale) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float y = x[i] + bias[i % cols];
    y = fminf(fmaxf(y, 0.0f), 6.0f);
    out[i] = y * scale;
  }
}

torch::Tensor fused_bias_relu6_scale(torch::Tensor x, torch::Tensor bias, double scale,
                                     int64_t cols) {
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  const int64_t n = xc.numel();
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  fused_bias_relu6_scale_kernel<<<blocks, threads>>>(xc.data_ptr<float>(), bias.data_ptr<float>(),
                                                     out.data_ptr<float>(), n, cols,
                                                     static_cast<float>(scale));
  return out;
}
"""
cpp_source = ("torch::Tensor fused_bias_relu6_scale(torch::Tensor x, torch::Tensor bias, "
              "double scale, int64_t cols);")

fused = load_inline(name="demo_fused_bias_relu6_scale", cpp_sources=[cpp_source],
                    cuda_sources=[cuda_source], functions=["fused_bias_relu6_scale"],
                    verbose=False)


class ModelNew(nn.Module):
    def __init__(self, features, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)
        self.scale = scale

    def forward(self, x):
        return fused.fused_bias_relu6_scale(x, self.bias, self.scale, x.size(0))
