import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float relu6_scale(float v, float b, float scale) {
  return fminf(fmaxf(v + b, 0.0f), 6.0f) * scale;
}

// Four floats per thread per step; a grid-stride loop covers the tensor
// whatever the grid size.
__global__ void fused_vec4_kernel(const float4* __restrict__ x, const float4* __restrict__ bias,
                                  float4* __restrict__ out, int64_t n4, int64_t cols4,
                                  float scale) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4; i += stride) {
    const float4 v = x[i];
    const float4 b = bias[i % cols4];
    float4 r;
    r.x = relu6_scale(v.x, b.x, scale);
    r.y = relu6_scale(v.y, b.y, scale);
    r.z = relu6_scale(v.z, b.z, scale);
    r.w = relu6_scale(v.w, b.w, scale);
    out[i] = r;
  }
}

torch::Tensor fused_bias_relu6_scale(torch::Tensor x, torch::Tensor bias, double scale,
                                     int64_t max_blocks) {
  auto xc = x.contiguous();
  auto bc = bias.contiguous();
  auto out = torch::empty_like(xc);
  const int64_t cols = xc.size(-1);
  TORCH_CHECK(cols % 4 == 0, "the last dimension must be a multiple of 4");
  const int64_t n4 = xc.numel() / 4;
  const int threads = 256;
  int64_t blocks = (n4 + threads - 1) / threads;
  if (max_blocks > 0 && blocks > max_blocks) blocks = max_blocks;
  fused_vec4_kernel<<<blocks, threads>>>(reinterpret_cast<const float4*>(xc.data_ptr<float>()),
                                         reinterpret_cast<const float4*>(bc.data_ptr<float>()),
                                         reinterpret_cast<float4*>(out.data_ptr<float>()), n4,
                                         cols / 4, static_cast<float>(scale));
  return out;
}
"""
cpp_source = ("torch::Tensor fused_bias_relu6_scale(torch::Tensor x, torch::Tensor bias, "
              "double scale, int64_t max_blocks);")

fused = load_inline(name="demo_fused_bias_relu6_scale_vec4", cpp_sources=[cpp_source],
                    cuda_sources=[cuda_source], functions=["fused_bias_relu6_scale"],
                    verbose=False)


class ModelNew(nn.Module):
    def __init__(self, features, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)
        self.scale = scale
        self.max_blocks = 0  # one thread per float4

    def forward(self, x):
        return fused.fused_bias_relu6_scale(x, self.bias, self.scale, self.max_blocks)
