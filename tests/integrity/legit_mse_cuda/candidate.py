import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int kThreads = 256;
constexpr int kBlocks = 512;

__device__ float block_sum(float v) {
    __shared__ float smem[kThreads / 32];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    if (threadIdx.x % 32 == 0) smem[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x < kThreads / 32 ? smem[threadIdx.x] : 0.0f;
    if (threadIdx.x < 32)
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    return v;
}

// Pass 1: each block writes the sum of squared differences of its grid-stride slice.
__global__ void sq_diff_partial(const float* __restrict__ a, const float* __restrict__ b,
                                float* __restrict__ partial, int64_t n) {
    float s = 0.0f;
    for (int64_t i = blockIdx.x * (int64_t)kThreads + threadIdx.x; i < n;
         i += (int64_t)kThreads * gridDim.x) {
        const float d = a[i] - b[i];
        s += d * d;
    }
    s = block_sum(s);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// Pass 2: one block adds the partials and divides by n (deterministic, no atomics).
__global__ void finish_mean(const float* __restrict__ partial, float* __restrict__ out,
                            int count, int64_t n) {
    float s = 0.0f;
    for (int i = threadIdx.x; i < count; i += kThreads) s += partial[i];
    s = block_sum(s);
    if (threadIdx.x == 0) out[0] = s / (float)n;
}

torch::Tensor mse(torch::Tensor p, torch::Tensor t) {
    TORCH_CHECK(p.is_cuda() && t.is_cuda() && p.numel() == t.numel(), "CUDA, same size");
    auto pc = p.contiguous();
    auto tc = t.contiguous();
    const int64_t n = pc.numel();
    auto partial = torch::empty({kBlocks}, pc.options());
    auto out = torch::empty({}, pc.options());
    auto stream = at::cuda::getCurrentCUDAStream();
    sq_diff_partial<<<kBlocks, kThreads, 0, stream>>>(pc.data_ptr<float>(), tc.data_ptr<float>(),
                                                     partial.data_ptr<float>(), n);
    finish_mean<<<1, kThreads, 0, stream>>>(partial.data_ptr<float>(), out.data_ptr<float>(),
                                            kBlocks, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

ext = load_inline(name="kf_legit_mse_cuda",
                  cpp_sources="torch::Tensor mse(torch::Tensor p, torch::Tensor t);",
                  cuda_sources=cuda_src, functions=["mse"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return ext.mse(predictions, targets)
